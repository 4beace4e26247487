/*
 * state.c: the only code that renames a job.  Every transition is one
 * renameat2(RENAME_NOREPLACE) between two state directories, so a job is
 * always in exactly one of them and no transition can overwrite another
 * job.  spool-layout.md lists each transition and its crash windows.
 *
 * A transition that must survive a power loss marks its source and
 * destination directories dirty, and the caller makes it durable with spool_sync()
 * (once per batch: group commit).  The owner's claims, requeues and
 * promotions are not marked: losing one leaves the job in new/, cur/ or
 * defer/, from where it runs again, which at-least-once allows
 * (spool-layout.md, "Durability and fsync").
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"

/*
 * rename(from/a, to/b) without ever replacing b.  There is deliberately
 * no link+unlink fallback for file systems without RENAME_NOREPLACE: a
 * crash between the two would leave a job in two states.  EINVAL there
 * is reported like any other error.
 */
static int
move(struct spool *sp, int from, const char *a, int to, const char *b,
    bool sync)
{
	if (renameat2(sp->dir[from], a, sp->dir[to], b, RENAME_NOREPLACE) == -1)
		return -1;
	/*
	 * Both directories: on a journaling file system one fsync would
	 * commit the whole rename, but without a journal (ext4 made with
	 * ^has_journal, ext2) the removal from the source is only durable
	 * once the source is synced too, or a power loss could leave the
	 * job in both states.  Group commit makes the second fsync cheap.
	 */
	if (sync)
		sp->dirty |= 1u << to | 1u << from;
	return 0;
}

/*
 * Set mtime (the state's timestamp) through fd if we have one.  Returns 0,
 * or -1 with errno set: EPERM where the file is not ours (a group spool's
 * submitter owns it).  A file with another name outside the spool is
 * never written to, and that is not an error.
 */
static int
stamp(struct spool *sp, int st, const char *id, int fd, msec_t when)
{
	struct timespec ts[2] = {
		{ .tv_nsec = UTIME_OMIT },
		{ .tv_sec = when / 1000, .tv_nsec = when % 1000 * 1000000 },
	};
	struct stat s;

	if (fd != -1)
		return futimens(fd, ts);
	if (fstatat(sp->dir[st], id, &s, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	if (!S_ISLNK(s.st_mode) && s.st_nlink > 1)
		return 0;
	return utimensat(sp->dir[st], id, ts, AT_SYMLINK_NOFOLLOW);
}

static int
copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (int)n;
		if (write_all(out, buf, n) == -1)
			return -1;
	}
}

/*
 * Submit: copy src into tmp/ID, fsync it, then rename it to new/ID (or to
 * defer/ID with mtime `at` when at > 0).  The directory fsync is the
 * caller's spool_sync(), once per batch.  On error nothing is left in
 * tmp/ or new/, and *where says which path failed (1 = the input).
 * Returns 0, or -1 with errno set; EEXIST: the ID is taken in new/defer.
 */
int
state_submit(struct spool *sp, int src, const char *id, msec_t at, int *where)
{
	int fd, to = at > 0 ? ST_DEFER : ST_NEW, saved;
	mode_t mode = spool_fmode(sp, ST_NEW);

	*where = ST_TMP;
	fd = openat(sp->dir[ST_TMP], id, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd == -1)
		return -1;
	if (copy_fd(src, fd) == -1) {
		*where = errno == EBADF || errno == EISDIR ? -1 : ST_TMP;
		goto fail;
	}
	/* In tmp/ the file is ours: a failure here is a real error. */
	if ((at > 0 && stamp(sp, ST_TMP, id, fd, at) == -1) ||
	    fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	*where = to;
	if (move(sp, ST_TMP, id, to, id, true) == -1)
		goto fail;
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	unlinkat(sp->dir[ST_TMP], id, 0);
	errno = saved;
	return -1;
}

/*
 * Take back a submission whose directory fsync failed: new/ID (or
 * defer/ID) -> tmp/ID, then unlink it, so a submitter told "failed" does
 * not see its job run.  ENOENT: an owner has already claimed it.
 */
int
state_unsubmit(struct spool *sp, const char *id, int from)
{
	if (move(sp, from, id, ST_TMP, id, false) == -1)
		return -1;
	return unlinkat(sp->dir[ST_TMP], id, 0);
}

/* new -> cur.  ENOENT means another process moved it first: not an error. */
int
state_claim(struct spool *sp, const char *id)
{
	return move(sp, ST_NEW, id, ST_CUR, id, false);
}

/*
 * cur -> done, failed or defer.  `when` becomes the mtime: the time of the
 * transition for done/failed, the next-run time for defer.  fd is the job
 * file if the caller holds it (-1 otherwise).  Returns 0; 1 when the job
 * moved but its mtime could not be set (errno says why; the caller must
 * say so: a deferred job is then due at once); or -1 with errno set,
 * ENOENT meaning the job was cancelled or moved away while it ran.
 */
int
state_finish(struct spool *sp, const char *id, int to, int fd, msec_t when)
{
	int stamped = stamp(sp, ST_CUR, id, fd, when), saved = errno;

	if (move(sp, ST_CUR, id, to, id, to != ST_NEW) == -1)
		return -1;
	errno = saved;
	return stamped == -1 ? 1 : 0;
}

/*
 * new -> done or failed without passing through cur/: forward's claims,
 * which the spool lock alone keeps (queue_spool.c, take_in_place).  The
 * same stamp and durable move as state_finish.
 */
int
state_settle(struct spool *sp, const char *id, int to, int fd, msec_t when)
{
	int stamped = stamp(sp, ST_NEW, id, fd, when), saved = errno;

	if (move(sp, ST_NEW, id, to, id, true) == -1)
		return -1;
	errno = saved;
	return stamped == -1 ? 1 : 0;
}

/* defer -> new, when its time has come. */
int
state_promote(struct spool *sp, const char *id)
{
	return move(sp, ST_DEFER, id, ST_NEW, id, false);
}

/* new -> failed for a file that is not a regular file; never opened. */
int
state_reject(struct spool *sp, const char *id)
{
	/* Best effort: its mtime only ages it for purge and ls. */
	(void)stamp(sp, ST_NEW, id, -1, now_ms());
	return move(sp, ST_NEW, id, ST_FAILED, id, true);
}

/* cur -> new: shutdown interrupted it, or its owner died. */
int
state_requeue(struct spool *sp, const char *id)
{
	return move(sp, ST_CUR, id, ST_NEW, id, false);
}

/*
 * new, defer or cur -> failed.  Tries each, twice, since the job may move
 * between them while we look.  *from gets the state it left.
 * Returns 0, or -1 with errno ENOENT if it is in none of them.
 */
int
state_cancel(struct spool *sp, const char *id, int *from)
{
	static const int order[] = { ST_NEW, ST_DEFER, ST_CUR };

	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < 3; i++) {
			/* Best effort: its mtime only ages it in failed/. */
			(void)stamp(sp, order[i], id, -1, now_ms());
			if (move(sp, order[i], id, ST_FAILED, id, true) == 0) {
				*from = order[i];
				return 0;
			}
			if (errno != ENOENT)
				return -1;
		}
	}
	errno = ENOENT;
	return -1;
}

/* failed -> new; the caller has written the "reset" log line first. */
int
state_retry(struct spool *sp, const char *id)
{
	return move(sp, ST_FAILED, id, ST_NEW, id, true);
}

/*
 * st/name -> st/<derived ID>, written to out: in new/, a dropped file
 * whose name is taken by another job or is not a valid ID; in defer/,
 * done/ or failed/, a file that took the name a running job must move
 * to (a submitter's hard link or drop, an operator's mv).  A move out
 * of new/ is not synced (the file is still queued either way); one in
 * another state is, as the job's own move there will be.
 */
int
state_aside(struct spool *sp, int st, const char *name, char *out, size_t len)
{
	for (int tries = 0; tries < 8; tries++) {
		id_derive(name, out, len);
		if (spool_locate(sp, out, NULL) != ST_NONE)
			continue;
		if (move(sp, st, name, st, out, st != ST_NEW) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/*
 * cur -> to: state_requeue for new/, state_finish otherwise (its returns).
 * The claim found the name free everywhere, so a file at to/id now is
 * not this job: a submitter's hard link or drop into defer/, an
 * operator's mv.  It moves aside first (state_aside), its new name in
 * aside ("" if none did); a few times, for an intruder who comes back.
 */
int
state_leave(struct spool *sp, const char *id, int to, int fd, msec_t when,
    char *aside, size_t len)
{
	int rc = -1;

	aside[0] = '\0';
	for (int tries = 0; tries < 3; tries++) {
		rc = to == ST_NEW ? state_requeue(sp, id) :
		    state_finish(sp, id, to, fd, when);
		if (rc != -1 || errno != EEXIST)
			return rc;
		if (state_aside(sp, to, id, aside, len) == -1 && errno != ENOENT)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* new/name -> new/<derived ID> (state_aside). */
int
state_rename_new(struct spool *sp, const char *name, char *out, size_t len)
{
	return state_aside(sp, ST_NEW, name, out, len);
}
