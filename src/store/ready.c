/*
 * ready.c: is a file in new/ complete, and safe to hand to a handler?
 *
 * Writers that rename into new/ are done by definition.  A writer that
 * creates the file in new/ directly (cp, a shell redirect) may still be
 * writing; one that link()s from tmp/ is done.  inotify cannot tell these
 * apart reliably, so we ask the kernel: a read lease (F_SETLEASE F_RDLCK)
 * is refused with EAGAIN while any process has the file open for writing.
 * Leases need CAP_LEASE or ownership of the file; without either we fall
 * back to what inotify and the inode say (ready_fallback).
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/ready.h"
#include "store/spool.h"

enum ready
ready_fallback(const struct stat *st, unsigned flags, msec_t now)
{
	msec_t mtime = (msec_t)st->st_mtim.tv_sec * 1000 +
	    st->st_mtim.tv_nsec / 1000000;

	if (flags & (RF_MOVED | RF_CLOSED | RF_TMPLINK))
		return READY_YES;
	return now - mtime >= QUIET_MS ? READY_YES : READY_QUIET;
}

/*
 * A job with more than one name could be a hard link to a file outside
 * the spool that its submitter may not read (/etc/shadow, where
 * fs.protected_hardlinks is off), and the handler would read it with the
 * owner's rights.  The one extra name we accept is tmp/NAME, the same
 * inode: a link-then-unlink submission between its two steps.
 */
static enum ready
check_links(struct spool *sp, const char *name, const struct stat *st,
    unsigned *flags)
{
	struct stat t;

	if (st->st_nlink <= 1)
		return READY_YES;
	if (st->st_nlink == 2 &&
	    fstatat(sp->dir[ST_TMP], name, &t, AT_SYMLINK_NOFOLLOW) == 0 &&
	    t.st_dev == st->st_dev && t.st_ino == st->st_ino) {
		*flags |= RF_TMPLINK;
		return READY_YES;
	}
	return READY_LINKED;
}

/*
 * The lease answers "is anyone writing?" and is dropped at once.  It is
 * asked even of a name that arrived by rename: rename_dropped renames a
 * file a direct writer may still be writing (cp into new/ under a name
 * taken in done/), and its IN_MOVED_TO looks like any submitter's mv.
 */
static enum ready
probe_writers(int fd, const struct stat *st, unsigned flags)
{
	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
		fcntl(fd, F_SETLEASE, F_UNLCK);
		return READY_YES;
	}
	if (errno == EAGAIN)
		return READY_WRITER;
	return ready_fallback(st, flags, now_ms());
}

/*
 * fstat, by statx so that the file's birth time comes in the same call
 * (forward's origin key): btime->tv_sec is -1 where the file system keeps
 * none.  0, or -1 with errno.
 */
static int
fd_stat(int fd, struct stat *st, struct timespec *btime)
{
	struct statx sx;

	/* Without statx (an old kernel, a seccomp filter): no birth time. */
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME,
	    &sx) == -1)
		return fstat(fd, st);
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
	st->st_ino = sx.stx_ino;
	st->st_mode = sx.stx_mode;
	st->st_nlink = sx.stx_nlink;
	st->st_uid = sx.stx_uid;
	st->st_gid = sx.stx_gid;
	st->st_size = (off_t)sx.stx_size;
	st->st_mtim.tv_sec = sx.stx_mtime.tv_sec;
	st->st_mtim.tv_nsec = sx.stx_mtime.tv_nsec;
	st->st_ctim.tv_sec = sx.stx_ctime.tv_sec;
	st->st_ctim.tv_nsec = sx.stx_ctime.tv_nsec;
	st->st_atim.tv_sec = sx.stx_atime.tv_sec;
	st->st_atim.tv_nsec = sx.stx_atime.tv_nsec;
	if (btime != NULL && (sx.stx_mask & STATX_BTIME)) {
		btime->tv_sec = sx.stx_btime.tv_sec;
		btime->tv_nsec = sx.stx_btime.tv_nsec;
	}
	return 0;
}

/* fstatat without following: READY_YES for a regular file. */
static enum ready
look(int dir, const char *name, struct stat *st)
{
	if (fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? READY_GONE : READY_ERR;
	return S_ISREG(st->st_mode) ? READY_YES : READY_NOTREG;
}

enum ready
ready_check(struct spool *sp, const char *name, unsigned flags, int *fdp,
    struct stat *st)
{
	return ready_checkb(sp, name, flags, fdp, st, NULL);
}

enum ready
ready_checkb(struct spool *sp, const char *name, unsigned flags, int *fdp,
    struct stat *st, struct timespec *btime)
{
	int dir = sp->dir[ST_NEW], fd;
	enum ready r;

	*fdp = -1;
	if (btime != NULL)
		*btime = (struct timespec){ .tv_sec = -1 };
	/*
	 * Look before opening, so that nothing but a regular file is ever
	 * opened (a device's open can act).  RF_REG: spoolq_admit's look a
	 * moment ago saw one, and this look is saved; to swap a device in
	 * since then takes mknod on this file system, and the fstat below
	 * still refuses it.
	 */
	if ((flags & RF_REG) == 0 && (r = look(dir, name, st)) != READY_YES)
		return r;
	/* O_NONBLOCK: if a FIFO is swapped in after fstatat, do not hang. */
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno == ENOENT)
			return READY_GONE;
		if (errno == EACCES || errno == EPERM)
			return READY_DENIED;
		if (errno != ELOOP)
			return READY_ERR;
		/* A symlink swapped in: look, for the reason's file type. */
		return look(dir, name, st) == READY_YES ? READY_ERR : READY_NOTREG;
	}
	if (fd_stat(fd, st, btime) == -1 || !S_ISREG(st->st_mode)) {
		close(fd);
		return READY_NOTREG;
	}
	if ((r = check_links(sp, name, st, &flags)) != READY_YES ||
	    (r = probe_writers(fd, st, flags)) != READY_YES)
		goto out;
	if (flags & RF_PEEK) {
		/* forward: read here, never a handler's stdin, no lock. */
		*fdp = fd;
		return READY_YES;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
		r = errno == EWOULDBLOCK ? READY_BUSY : READY_ERR;
		goto out;
	}
	*fdp = fd;
	return READY_YES;
out:
	close(fd);
	return r;
}
