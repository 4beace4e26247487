/*
 * recover.c: start-up, after the lock is taken.  Jobs a dead owner left
 * in cur/ go back to new/ (or to failed/ when their attempts are used up),
 * unless the handler that dead owner started is still running: the job
 * file's flock, inherited by that handler, says so, and the job waits.
 * Stale files in tmp/ are removed.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "owner.h"

#define RECHECK_MS	1000

static bool
is_running_here(struct owner *ow, const char *name)
{
	for (int i = 0; i < ow->o->jobs; i++)
		if (ow->slots[i].pid != 0 && strcmp(ow->slots[i].id, name) == 0)
			return true;
	return false;
}

static void
recover_to(struct owner *ow, const char *name, int fd,
    const struct joblog_info *ji)
{
	char vis[1024];
	bool spent = ji->attempts >= ow->o->max_attempts;
	int rc;

	vis_name(name, vis, sizeof(vis));
	joblog_note(&ow->sp, name, "attempt=%d abandoned: its owner died%s",
	    ji->attempts, spent ? "; attempts exhausted" : "");
	if (spent)
		rc = state_finish(&ow->sp, name, ST_FAILED, fd, now_ms());
	else
		rc = state_requeue(&ow->sp, name);
	if (rc == 0) {
		say("job=%s cur->%s attempt=%d recovered from a dead owner",
		    vis, spent ? "failed" : "new", ji->attempts);
		if (!spent)
			owner_admit(ow, name, RF_MOVED);
	} else if (errno != ENOENT) {
		say("job=%s recovery: %s; will retry", vis, strerror(errno));
		queue_add(ow->orphans, name, mono_ms() + RECHECK_MS, 0);
	}
}

/* One job found in cur/ that is not ours. */
void
owner_recover_one(struct owner *ow, const char *name)
{
	struct joblog_info ji;
	struct stat st;
	int fd;

	if (is_running_here(ow, name))
		return;
	fd = openat(ow->sp.dir[ST_CUR], name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		return;
	if (fd != -1 && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	/*
	 * Still locked: the handler an earlier owner started still runs.
	 * Persistent workers do not hold the job's lock; while any worker of
	 * a dead owner lives, every job it could be running waits too.
	 */
	if (fd != -1 && (flock(fd, LOCK_EX | LOCK_NB) == -1 ||
	    (ow->nold > 0 && workers_of_the_dead(ow) > 0))) {
		if (!queue_has(ow->orphans, name)) {
			char vis[1024];
			vis_name(name, vis, sizeof(vis));
			say("job=%s still has a running handler from a previous "
			    "owner; waiting for it to exit", vis);
		}
		queue_add(ow->orphans, name, mono_ms() + RECHECK_MS, 0);
		close(fd);
		return;
	}
	if (joblog_read(&ow->sp, name, &ji) == -1)
		ji.attempts = 0;
	recover_to(ow, name, fd, &ji);
	if (fd != -1)
		close(fd);
}

static int
recover_cb(void *arg, const char *name)
{
	owner_recover_one(arg, name);
	return 0;
}

void
owner_recover(struct owner *ow)
{
	if (spool_scan(&ow->sp, ST_CUR, recover_cb, ow) == -1)
		say("cur/: cannot read: %s", strerror(errno));
}

static int
tmp_cb(void *arg, const char *name)
{
	struct owner *ow = arg;
	struct stat st;
	char vis[1024];

	if (fstatat(ow->sp.dir[ST_TMP], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	if (now_ms() / 1000 - st.st_mtim.tv_sec < STALE_TMP_SECS)
		return 0;
	vis_name(name, vis, sizeof(vis));
	if (unlinkat(ow->sp.dir[ST_TMP], name, S_ISDIR(st.st_mode) ?
	    AT_REMOVEDIR : 0) == 0)
		say("tmp/%s removed: stale (older than 36h)", vis);
	else if (errno != ENOENT)
		say("tmp/%s: %s", vis, strerror(errno));
	return 0;
}

void
owner_clean_tmp(struct owner *ow)
{
	if (spool_scan(&ow->sp, ST_TMP, tmp_cb, ow) == -1)
		say("tmp/: cannot read: %s", strerror(errno));
}
