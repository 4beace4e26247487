/*
 * queue_spool_retain.c: the owner applies SPOOL/retention (retain.h): a
 * pass over done/ and failed/, a bounded step per turn of the loop,
 * removes each job whose time there is up, its log first.  No cron: the
 * owner that finished the jobs removes them.  spool-layout.md,
 * "Retention", has the bound and the crash windows.
 */
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/retain.h"
#include "store/after.h"
#include "store/spool.h"
#include "queue/spool/queue_spool.h"

static msec_t
keep_of(const struct spoolq *sq, int st)
{
	return st == ST_DONE ? sq->keep.done : st == ST_FAILED ?
	    sq->keep.failed : KEEP_FOREVER;
}

/* The first terminal state after `after` (ST_NONE: from the first) that
 * keeps its jobs for a while only; ST_NONE when there is none. */
static int
next_state(const struct spoolq *sq, int after)
{
	for (int st = after == ST_NONE ? ST_FIRST : after + 1; st < ST_END;
	    st++)
		if (state_terminal(st) && keep_of(sq, st) != KEEP_FOREVER)
			return st;
	return ST_NONE;
}

/* Between passes: an eighth of the shortest retention, within bounds. */
static msec_t
period(const struct spoolq *sq)
{
	msec_t p = RETAIN_MAX_MS;

	for (int st = next_state(sq, ST_NONE); st != ST_NONE;
	    st = next_state(sq, st))
		if (keep_of(sq, st) / 8 < p)
			p = keep_of(sq, st) / 8;
	return p < RETAIN_MIN_MS ? RETAIN_MIN_MS : p;
}

void
spoolq_retain_look(struct spoolq *sq)
{
	struct retention r;
	char d[32], f[32];

	if (spool_retention(&sq->sp, &r) == -1) {
		if (!sq->keep_bad)
			say_err("%s/" RETAIN_FILE ": %s; every finished job is "
			    "kept until it reads again", sq->sp.path,
			    spool_retention_error(errno));
		sq->keep_bad = true;
		r.done = r.failed = KEEP_FOREVER;
	} else
		sq->keep_bad = false;
	if (r.done == sq->keep.done && r.failed == sq->keep.failed)
		return;
	sq->keep = r;
	keep_format(r.done, d, sizeof(d));
	keep_format(r.failed, f, sizeof(f));
	if (!sq->keep_bad)
		say("%s: retention: done %s, failed %s", sq->sp.path, d, f);
	/* The pass in progress was for the old setting: a new one, now. */
	spoolq_retain_close(sq);
	sq->keep_next = next_state(sq, ST_NONE) == ST_NONE ? INT64_MAX :
	    mono_ms();
}

void
spoolq_retain_close(struct spoolq *sq)
{
	if (sq->keep_dir != NULL)
		closedir(sq->keep_dir);
	sq->keep_dir = NULL;
}

/* Start the pass over state st: true, or false (said; tried later). */
static bool
pass_open(struct spoolq *sq, int st)
{
	int fd = openat(sq->sp.dir[st], ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);

	if (fd == -1 || (sq->keep_dir = fdopendir(fd)) == NULL) {
		say_err("%s/%s/: retention: %s", sq->sp.path, state_names[st],
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return false;
	}
	sq->keep_st = st;
	return true;
}

/*
 * When the job ended: its file's ctime, which the rename into the state
 * changed (and anything after it only makes later), or its mtime if that
 * is later still.  A file system that keeps ctime across a rename gives
 * an earlier time: spool-layout.md says so.
 */
static msec_t
ended_at(const struct stat *st)
{
	msec_t c = (msec_t)st->st_ctim.tv_sec * 1000 + st->st_ctim.tv_nsec /
	    1000000, m = (msec_t)st->st_mtim.tv_sec * 1000 +
	    st->st_mtim.tv_nsec / 1000000;

	return c > m ? c : m;
}

/*
 * Up to RETAIN_CHUNK names of the pass looked at; those past their time
 * into names[] with their inodes: how many.  *end: the state is read.
 */
static int
chunk(struct spoolq *sq, char (*names)[NAME_MAX + 1], ino_t *ino, bool *end)
{
	msec_t keep = keep_of(sq, sq->keep_st), now = now_ms();
	int dfd = sq->sp.dir[sq->keep_st], n = 0;
	struct dirent *de;
	struct stat st;

	*end = false;
	for (int seen = 0; seen < RETAIN_CHUNK; seen++) {
		errno = 0;
		if ((de = readdir(sq->keep_dir)) == NULL) {
			*end = true;
			break;
		}
		if (de->d_name[0] == '.' || fstatat(dfd, de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1 || !S_ISREG(st.st_mode) ||
		    now - ended_at(&st) < keep)
			continue;
		strlcpy(names[n], de->d_name, sizeof(names[n]));
		ino[n++] = st.st_ino;
	}
	return n;
}

/*
 * The logs first, made durable, then the jobs: a crash between leaves a
 * finished job without its log (removed by the next pass), never a log
 * whose job is gone, which a later job of that name would inherit.  Each
 * job is removed only if it is still the file looked at.
 */
static void
remove_chunk(struct spoolq *sq, char (*names)[NAME_MAX + 1], ino_t *ino,
    int n)
{
	int dfd = sq->sp.dir[sq->keep_st];
	struct stat st;

	for (int i = 0; i < n; i++) {
		if (unlinkat(sq->sp.dir[ST_LOG], names[i], 0) == -1 &&
		    errno != ENOENT)
			say_err("%s/log/%s: retention: %s", sq->sp.path,
			    vis_id(names[i]), strerror(errno));
		/* Its dependency list, if it waited: goes with it. */
		if (after_remove(&sq->sp, names[i]) == -1)
			say_err("%s/after/%s: retention: %s", sq->sp.path,
			    vis_id(names[i]), strerror(errno));
	}
	if (spool_fsync_dir(&sq->sp, ST_LOG) == -1) {
		say_err("%s/log/: fsync: %s; its jobs are kept for now",
		    sq->sp.path, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++)
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_ino == ino[i] && unlinkat(dfd, names[i], 0) == -1 &&
		    errno != ENOENT)
			say_err("%s/%s/%s: retention: %s", sq->sp.path,
			    state_names[sq->keep_st], vis_id(names[i]),
			    strerror(errno));
}

void
spoolq_retain_step(struct spoolq *sq, msec_t mono)
{
	static char names[RETAIN_CHUNK][NAME_MAX + 1];
	static ino_t ino[RETAIN_CHUNK];
	int n, st;
	bool end;

	if (sq->keep_dir == NULL) {
		if (mono < sq->keep_next)
			return;
		if ((st = next_state(sq, ST_NONE)) == ST_NONE) {
			sq->keep_next = INT64_MAX;
			return;
		}
		if (!pass_open(sq, st)) {
			sq->keep_next = mono + RETRY_MS;
			return;
		}
	}
	n = chunk(sq, names, ino, &end);
	if (n > 0)
		remove_chunk(sq, names, ino, n);
	if (!end)
		return;
	st = next_state(sq, sq->keep_st);
	spoolq_retain_close(sq);
	if (st != ST_NONE && pass_open(sq, st))
		return;
	sq->keep_next = mono + period(sq);
}

void
spoolq_retain_last(struct spoolq *sq)
{
	msec_t mono = mono_ms();

	if (sq->keep.done != 0 && sq->keep.failed != 0)
		return;
	spoolq_retain_close(sq);
	sq->keep_next = mono;
	/* Bounded: a stop must not wait on a directory of a million. */
	for (int i = 0; i < RETAIN_LAST_STEPS; i++) {
		spoolq_retain_step(sq, mono);
		if (sq->keep_dir == NULL)
			break;
	}
	spoolq_retain_close(sq);
}

msec_t
spoolq_retain_next(struct spoolq *sq, msec_t mono)
{
	return sq->keep_dir != NULL ? mono : sq->keep_next;
}
