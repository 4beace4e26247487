/*
 * queue_spool_recover.c: start-up, after the lock is taken.  Jobs a dead
 * owner left in cur/ go back to new/ (or to failed/ when their attempts
 * are used up), unless the handler that dead owner started is still
 * running: the job file's flock, inherited by that handler, says so, and
 * the job waits.  Stale files in tmp/ are removed.
 *
 * Persistent workers do not hold their job's flock.  Each inherits, as
 * fd 3, a descriptor of SPOOL/.workers.PID on which its owner took a
 * shared flock; the lock lives as long as any worker (or anything it
 * started) does, so a later owner can tell that workers of a dead owner
 * may still be running jobs it found in cur/.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/nameq.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/queue_spool.h"

/* The attempt it was on counts; the outcome table says where it goes. */
static void
recover_to(struct spoolq *sq, const char *name, int fd,
    const struct joblog_info *ji)
{
	struct attempt_end e = { .end = END_ABANDONED, .attempt = ji->attempts,
	    .elapsed = -1 };
	struct outcome out;
	const char *own;
	char vis[1024], aside[NAME_MAX + 1];
	int rc, saved;

	outcome_decide(&e, &sq->c.policy, arc4random_uniform, &out);
	vis_name(name, vis, sizeof(vis));
	/* The owner's own words, where it gave some (queue_conf.recovered). */
	own = out.to == ST_NEW ? sq->c.recovered : NULL;
	if (own != NULL)
		joblog_note(&sq->sp, name, "%s", own);
	else
		joblog_note(&sq->sp, name, "attempt=%d %s", ji->attempts,
		    out.note);
	rc = state_leave(&sq->sp, name, out.to, fd, now_ms(), aside,
	    sizeof(aside)) == -1 ? -1 : 0;
	saved = errno;
	spoolq_said_aside(name, out.to, aside);
	errno = saved;
	if (rc == 0 && own != NULL)
		say("job=%s cur->new %s", vis, own);
	else if (rc == 0)
		say("job=%s cur->%s attempt=%d %s", vis, state_names[out.to],
		    ji->attempts, out.why);
	if (rc == 0) {
		if (out.to == ST_NEW)
			spoolq_admit(sq, name, RF_MOVED);
	} else if (errno != ENOENT) {
		say_warn("job=%s recovery: %s; will retry", vis, strerror(errno));
		nameq_add(sq->orphans, name, mono_ms() + RECHECK_MS, 0);
	}
}

/*
 * Workers of an earlier owner still running?  Each left a locked
 * .workers.PID file; a lock we can take means they are all gone, and the
 * file is removed.  Returns how many such files are still locked.
 */
static int
workers_of_the_dead(struct spoolq *sq)
{
	int alive = 0, j = 0;

	for (int k = 0; k < sq->nold; k++) {
		int fd = openat(sq->sp.root, sq->old[k], O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1) {
			sq->old[k][0] = '\0';
			continue;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			unlinkat(sq->sp.root, sq->old[k], 0);
			sq->old[k][0] = '\0';
		} else
			alive++;
		close(fd);
	}
	/* Compact the list. */
	for (int k = 0; k < sq->nold; k++)
		if (sq->old[k][0] != '\0')
			memmove(sq->old[j++], sq->old[k], sizeof(sq->old[0]));
	sq->nold = j;
	return alive;
}

/*
 * Does a handler an earlier owner started still hold cur/NAME's flock
 * (fd, st: that file)?  Such a handler runs as that owner and has the
 * file open as its stdin.  A flock no process of the owner's user (or
 * ours) has open is no handler's: a submitter of a group spool may open
 * any job file (0640), and her flock on another's job that a dead owner
 * left in cur/ kept it there for good, and --drain with it, said as a
 * handler's.  Such a hold is said, and the job recovered all the same:
 * in new/ a flocked job is never claimed, but said held and not waited
 * for, so that no two handlers run it at once even if this one was.
 */
static bool
handler_holds(struct spoolq *sq, const char *name, int fd,
    const struct stat *st, pid_t *hint)
{
	char vis[1024];

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return false;
	if (lock_file_open_by_owner(&sq->sp, st, hint))
		return true;
	vis_name(name, vis, sizeof(vis));
	say_warn("job=%s cur/%s is flocked (by pid %ld), but no process of the "
	    "owner's user has it open: no handler of an earlier owner; "
	    "recovered all the same", vis, vis,
	    (long)lock_holder(st->st_dev, st->st_ino));
	return false;
}

/* Look at cur/name: true when a handler of an earlier owner still runs it. */
static bool
recover_look(struct spoolq *sq, const char *name, unsigned hint)
{
	pid_t holder = (pid_t)hint;
	struct joblog_info ji;
	struct stat st;
	int fd;

	if (spoolq_holds(sq, name))
		return false;
	fd = openat(sq->sp.dir[ST_CUR], name, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		return false;
	if (fd != -1 && (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	/*
	 * Still locked: the handler an earlier owner started still runs.
	 * Persistent workers do not hold the job's lock; while any worker of
	 * a dead owner lives, every job it could be running waits too.
	 */
	if (fd != -1 && (handler_holds(sq, name, fd, &st, &holder) ||
	    (sq->nold > 0 && workers_of_the_dead(sq) > 0))) {
		if (!nameq_has(sq->orphans, name)) {
			char vis[1024];
			vis_name(name, vis, sizeof(vis));
			say_warn("job=%s still has a running handler from a previous "
			    "owner; waiting for it to exit", vis);
		}
		nameq_add(sq->orphans, name, mono_ms() + RECHECK_MS,
		    (unsigned)holder);
		close(fd);
		return true;
	}
	if (joblog_read(&sq->sp, name, &ji) == -1)
		ji.attempts = 0;
	recover_to(sq, name, fd, &ji);
	if (fd != -1)
		close(fd);
	return false;
}

/*
 * A job found in cur/ whose handler still runs counts as running for its
 * key's limit and the spool's until it leaves cur/ (sq->alive), so that
 * an owner that took over from a killed one starts no more than the
 * limit: the old owner's handlers hold their slots until they are gone.
 */
void
spoolq_recover_one(struct spoolq *sq, const char *name, unsigned hint)
{
	bool was = nameq_take(sq->alive, name, NULL), now;
	char k[KEY_MAX + 1];

	now = recover_look(sq, name, hint);
	if (now && nameq_add(sq->alive, name, 0, 0) == -1)
		now = was;	/* no memory: counted as it was */
	if (now == was)
		return;
	spoolq_name_key(name, k, sizeof(k));
	if (now)
		spoolq_key_run(sq, k, true);
	else
		spoolq_key_done(sq, k);
}


static int
recover_cb(void *arg, const char *name)
{
	spoolq_recover_one(arg, name, 0);
	return 0;
}

void
spoolq_recover(struct spoolq *sq)
{
	if (spool_scan(&sq->sp, ST_CUR, recover_cb, sq) == -1)
		say_err("cur/: cannot read: %s", strerror(errno));
}

static int
tmp_cb(void *arg, const char *name)
{
	struct spoolq *sq = arg;
	struct stat st;
	char vis[1024];

	if (fstatat(sq->sp.dir[ST_TMP], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	if (now_ms() / 1000 - st.st_mtim.tv_sec < STALE_TMP_SECS)
		return 0;
	vis_name(name, vis, sizeof(vis));
	if (unlinkat(sq->sp.dir[ST_TMP], name, S_ISDIR(st.st_mode) ?
	    AT_REMOVEDIR : 0) == 0)
		say("tmp/%s removed: stale (older than %dh)", vis,
		    STALE_TMP_SECS / 3600);
	else if (errno != ENOENT)
		say_err("tmp/%s: %s", vis, strerror(errno));
	return 0;
}

void
spoolq_clean_tmp(struct spoolq *sq)
{
	if (spool_scan(&sq->sp, ST_TMP, tmp_cb, sq) == -1)
		say_err("tmp/: cannot read: %s", strerror(errno));
}

void
spoolq_workers_find_old(struct spoolq *sq)
{
	DIR *d;
	struct dirent *de;
	char mine[64];
	int fd = openat(sq->sp.root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	snprintf(mine, sizeof(mine), ".workers.%ld", (long)getpid());
	while ((de = readdir(d)) != NULL && sq->nold < OLD_MAX)
		if (strncmp(de->d_name, ".workers.", 9) == 0 &&
		    strcmp(de->d_name, mine) != 0 &&
		    strlen(de->d_name) < sizeof(sq->old[0]))
			strlcpy(sq->old[sq->nold++], de->d_name,
			    sizeof(sq->old[0]));
	closedir(d);
	if (workers_of_the_dead(sq) > 0)
		say_warn("workers of a previous owner are still running; jobs "
		    "left in cur/ wait for them to exit");
}

int
spoolq_workers_lock(struct spoolq *sq)
{
	char name[64];

	if (sq->wlock != -1)
		return sq->wlock;
	snprintf(name, sizeof(name), ".workers.%ld", (long)getpid());
	sq->wlock = openat(sq->sp.root, name, O_RDONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (sq->wlock != -1 && flock(sq->wlock, LOCK_SH) == -1) {
		int saved = errno;
		close(sq->wlock);
		unlinkat(sq->sp.root, name, 0);
		sq->wlock = -1;
		errno = saved;
	}
	return sq->wlock;
}

void
spoolq_workers_unlock(struct spoolq *sq)
{
	char name[64];

	if (sq->wlock == -1)
		return;
	snprintf(name, sizeof(name), ".workers.%ld", (long)getpid());
	unlinkat(sq->sp.root, name, 0);
	close(sq->wlock);
	sq->wlock = -1;
}
