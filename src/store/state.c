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

#include "base/id.h"
#include "base/util.h"
#include "store/spool.h"
#include "store/state.h"

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

int
state_write_tmp(struct spool *sp, int src, const char *name, msec_t at,
    int *where)
{
	int fd, saved;

	*where = ST_TMP;
	fd = openat(sp->dir[ST_TMP], name, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, spool_fmode(sp, ST_NEW));
	if (fd == -1)
		return -1;
	if (copy_fd(src, fd) == -1) {
		*where = errno == EBADF || errno == EISDIR ? -1 : ST_TMP;
		goto fail;
	}
	/* In tmp/ the file is ours: a failure here is a real error. */
	if ((at > 0 && stamp(sp, ST_TMP, name, fd, at) == -1) ||
	    fsync(fd) == -1 || close(fd) == -1) {
		fd = -1;
		goto fail;
	}
	return 0;
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	unlinkat(sp->dir[ST_TMP], name, 0);
	errno = saved;
	return -1;
}

int
state_place(struct spool *sp, const char *name, msec_t at)
{
	return move(sp, ST_TMP, name, at > 0 ? ST_DEFER : ST_NEW, name, true);
}

/* tmp/tmpname and dir/id trade places: the job is never out of dir. */
static int
exchange(struct spool *sp, const char *tmpname, int dir, const char *id)
{
	if (renameat2(sp->dir[ST_TMP], tmpname, sp->dir[dir], id,
	    RENAME_EXCHANGE) == -1)
		return -1;
	sp->dirty |= 1u << dir | 1u << ST_TMP;
	return 0;
}

int
state_replace(struct spool *sp, const char *tmpname, const char *id, int from,
    msec_t at)
{
	int to = at > 0 ? ST_DEFER : ST_NEW;

	/*
	 * new/ to defer/: the waiting job is deferred first, as it is (its
	 * time set to at, then one rename), and its bytes traded in defer/.
	 * A crash between the steps leaves the old job waiting, in new/
	 * sorted by at or in defer/ until at: never out of both.  A claim
	 * racing us wins (ENOENT: the caller looks again) or finds none.
	 */
	if (from == ST_NEW && to == ST_DEFER) {
		if (stamp(sp, ST_NEW, id, -1, at) == -1 ||
		    move(sp, ST_NEW, id, ST_DEFER, id, true) == -1)
			return -1;
		from = ST_DEFER;
	}
	if (exchange(sp, tmpname, from, id) == -1)
		return -1;
	/*
	 * defer/ to new/: the new bytes are in defer/ under their own time
	 * (their write, past), so they are due now: moved on here, or by the
	 * owner's next look at defer/ (ENOENT: it was first), or after a
	 * crash by the next owner.  Either way the job is due.
	 */
	if (from != to && move(sp, from, id, to, id, true) == -1 &&
	    errno != ENOENT)
		say_warn("%s/defer/%s: left in defer/, due now: %s", sp->path,
		    id, strerror(errno));
	unlinkat(sp->dir[ST_TMP], tmpname, 0);
	return 0;
}

int
state_unsubmit(struct spool *sp, const char *id, int from)
{
	if (move(sp, from, id, ST_TMP, id, false) == -1)
		return -1;
	return unlinkat(sp->dir[ST_TMP], id, 0);
}

int
state_claim(struct spool *sp, const char *id)
{
	return move(sp, ST_NEW, id, ST_CUR, id, false);
}

int
state_finish(struct spool *sp, const char *id, int to, int fd, msec_t when)
{
	int stamped = stamp(sp, ST_CUR, id, fd, when), saved = errno;

	if (move(sp, ST_CUR, id, to, id, to != ST_NEW) == -1)
		return -1;
	errno = saved;
	return stamped == -1 ? 1 : 0;
}

int
state_finish_new(struct spool *sp, const char *id, int to, int fd, msec_t when)
{
	int stamped = stamp(sp, ST_NEW, id, fd, when), saved = errno;

	if (move(sp, ST_NEW, id, to, id, true) == -1)
		return -1;
	errno = saved;
	return stamped == -1 ? 1 : 0;
}

int
state_promote(struct spool *sp, const char *id)
{
	return move(sp, ST_DEFER, id, ST_NEW, id, false);
}

int
state_reject(struct spool *sp, const char *id)
{
	/* Best effort: its mtime only ages it for purge and ls. */
	(void)stamp(sp, ST_NEW, id, -1, now_ms());
	return move(sp, ST_NEW, id, ST_FAILED, id, true);
}

int
state_requeue(struct spool *sp, const char *id)
{
	return move(sp, ST_CUR, id, ST_NEW, id, false);
}

int
state_cancel(struct spool *sp, const char *id, int *from)
{
	int order[ST_NSTATES], n = states_where(JS_TERMINAL, 0, order);

	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < n; i++) {
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

int
state_retry(struct spool *sp, const char *id)
{
	return move(sp, ST_FAILED, id, ST_NEW, id, true);
}

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

int
state_rename_new(struct spool *sp, const char *name, char *out, size_t len)
{
	return state_aside(sp, ST_NEW, name, out, len);
}

int
state_release_tick(struct spool *sp, int dirfd, const char *id)
{
	if (renameat2(dirfd, id, sp->dir[ST_NEW], id, RENAME_NOREPLACE) == -1)
		return -1;
	/* The plan's directory is synced by the caller, after all its moves. */
	sp->dirty |= 1u << ST_NEW;
	return 0;
}
