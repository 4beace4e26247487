/*
 * store_spool_act.c: a spool's jobs acted on (queue/store.h): cancel
 * (one rename to failed/: no owner is needed, one that runs the job
 * learns of it from inotify, IN_MOVED_FROM on cur/, and stops its
 * handler), retry (the attempts reset, then one rename back to new/, or
 * to wait/ for a job with a dependency list),
 * pause and resume (SPOOL/paused), and purge (finished jobs older than a
 * duration, and their logs).
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/after.h"
#include "store/joblog.h"
#include "store/pause.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/store_spool.h"
#include "queue/store.h"

int
spool_cancel_job(struct spool *sp, const char *id, const char *by, char *msg,
    size_t len)
{
	int from, st;

	if (state_cancel(sp, id, &from) == 0) {
		/* Only a cancel that won its rename leaves a note. */
		joblog_note(sp, id, "cancelled by %s in %s/", by,
		    state_names[from]);
		if (spool_sync(sp) == -1) {
			snprintf(msg, len, "%s: fsync: %s", sp->path,
			    strerror(errno));
			return EX_IOERR;
		}
		snprintf(msg, len, "%s %s->failed", id, state_names[from]);
		return 0;
	}
	if (errno != ENOENT) {
		snprintf(msg, len, "%s: cancel: %s", id, strerror(errno));
		return EX_IOERR;
	}
	if ((st = spool_locate(sp, id, NULL)) == ST_NONE)
		snprintf(msg, len, "%s: unknown job", id);
	else
		snprintf(msg, len, "%s: already %s", id, state_names[st]);
	return EXIT_NO;
}

int
spool_retry_job(struct spool *sp, const char *id, const char *by, char *msg,
    size_t len)
{
	int st = spool_locate(sp, id, NULL), saved;

	if (st != ST_FAILED) {
		if (st == ST_NONE)
			snprintf(msg, len, "%s: unknown job", id);
		else
			snprintf(msg, len, "%s: not failed (%s)", id,
			    state_names[st]);
		return EXIT_NO;
	}
	/* The reset goes first: a crash between leaves it failed, reset. */
	if (joblog_note(sp, id, "reset by %s", by) == -1 && errno != ENOENT) {
		snprintf(msg, len, "%s/log/%s: %s", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	/*
	 * A job with a dependency list waits again (failed -> wait): the
	 * owner looks at its jobs afresh, so a job it waited for that still
	 * failed fails it again; retry that one first.
	 */
	struct after a;
	bool waits = after_read(sp, id, &a) == 0;

	if (waits)
		after_free(&a);
	if ((waits ? state_retry_wait(sp, id) : state_retry(sp, id)) == -1) {
		saved = errno;
		snprintf(msg, len, "%s: retry: %s", id, strerror(saved));
		return saved == ENOENT || saved == EEXIST ? EXIT_NO : EX_IOERR;
	}
	if (spool_sync(sp) == -1) {
		snprintf(msg, len, "%s: fsync: %s", sp->path, strerror(errno));
		return EX_IOERR;
	}
	snprintf(msg, len, "%s failed->%s", id, waits ? "wait" : "new");
	return 0;
}

/* ---- purge ---- */

/*
 * The log goes first: a crash between the two leaves a finished job
 * without a log, which the next purge removes; never a log whose job is
 * gone (a later job of the same name would inherit it).
 */
struct purge {
	struct spool	*sp;
	int		 state;
	msec_t		 cutoff;
	size_t		 removed;
	int		 rc;
};

/* One line for a file purge could not look at or remove; goes on. */
static int
fail(struct purge *p, int dir, const char *name)
{
	fprintf(stderr, "chute: %s/%s/%s: %s\n", p->sp->path, state_names[dir],
	    name, strerror(errno));
	p->rc = EX_IOERR;
	return 0;
}

static int
purge_cb(void *arg, const char *name)
{
	struct purge *p = arg;
	struct stat st;

	if (fstatat(p->sp->dir[p->state], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : fail(p, p->state, name);
	if ((msec_t)st.st_mtim.tv_sec * 1000 >= p->cutoff)
		return 0;
	if (unlinkat(p->sp->dir[ST_LOG], name, 0) == -1 && errno != ENOENT)
		return fail(p, ST_LOG, name);
	/* Its dependency list, if it waited: never left to a later job. */
	if (after_remove(p->sp, name) == -1) {
		fprintf(stderr, "chute: %s/after/%s: %s\n", p->sp->path, name,
		    strerror(errno));
		p->rc = EX_IOERR;
		return 0;
	}
	if (unlinkat(p->sp->dir[p->state], name, S_ISDIR(st.st_mode) ?
	    AT_REMOVEDIR : 0) == -1 && errno != ENOENT)
		return fail(p, p->state, name);
	p->removed++;
	return 0;
}

/* fsync a directory purge removed from: a failure is an I/O error too. */
static void
sync_dir(struct purge *p, int dir)
{
	if (spool_fsync_dir(p->sp, dir) == 0)
		return;
	fprintf(stderr, "chute: %s/%s: fsync: %s\n", p->sp->path,
	    state_names[dir], strerror(errno));
	p->rc = EX_IOERR;
}

/*
 * The terminal states (done/, failed/), or only one of them.  log/ is
 * synced first, as its files went first.
 */
static void
purge_states(struct purge *p, int only)
{
	for (int st = ST_FIRST; st < ST_END; st++) {
		if (!state_terminal(st) || (only != ST_NONE && st != only))
			continue;
		p->state = st;
		if (spool_scan(p->sp, st, purge_cb, p) == -1) {
			fprintf(stderr, "chute: %s/%s: %s\n", p->sp->path,
			    state_names[st], strerror(errno));
			p->rc = EX_IOERR;
		}
	}
	sync_dir(p, ST_LOG);
	for (int st = ST_FIRST; st < ST_END; st++)
		if (state_terminal(st) && (only == ST_NONE || st == only))
			sync_dir(p, st);
}

int
spool_purge(struct spool *sp, int only, msec_t age, long long *removed)
{
	struct purge p = { .sp = sp };

	p.cutoff = now_ms() - age;
	purge_states(&p, only);
	*removed = (long long)p.removed;
	return p.rc;
}

/* ---- pause ---- */

int
spool_set_pause(struct spool *sp, const char *path, bool on, const char *by,
    bool *changed, char *msg, size_t len)
{
	int rc;

	if ((rc = spool_pause(sp, on, by)) == -1) {
		snprintf(msg, len, "%s: cannot %s: %s%s", path, on ? "pause" :
		    "resume", strerror(errno), errno == EACCES ||
		    errno == EPERM ? " (the spool's owner may, and root)" : "");
		return EX_IOERR;
	}
	*changed = rc == 0;
	return 0;
}
