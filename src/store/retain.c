/*
 * retain.c: SPOOL/retention, written whole or not at all, and read back.
 * Like SPOOL/paused it moves no job: a crash at any step leaves the old
 * setting or the new one, and the jobs as they were.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/retain.h"
#include "store/spool.h"

/* tmp/retention.PID holds all of buf, fsynced: 0, or -1 with errno. */
static int
retain_tmp(struct spool *sp, const char *tmp, const char *buf, size_t n)
{
	int fd, saved;

	/* An earlier process of our pid may have left one: ours is new. */
	unlinkat(sp->dir[ST_TMP], tmp, 0);
	fd = openat(sp->dir[ST_TMP], tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1)
		return -1;
	/* fsync before the rename: after a crash the name holds all of it. */
	if (write_all(fd, buf, n) == -1 || fsync(fd) == -1) {
		saved = errno;
		close(fd);
		unlinkat(sp->dir[ST_TMP], tmp, 0);
		errno = saved;
		return -1;
	}
	return close(fd);
}

int
spool_retention_set(struct spool *sp, const struct retention *r)
{
	char tmp[64], buf[128], d[32], f[32];
	int n, saved;

	if (r->done == KEEP_FOREVER && r->failed == KEEP_FOREVER) {
		if (unlinkat(sp->root, RETAIN_FILE, 0) == -1 && errno != ENOENT)
			return -1;
	} else {
		keep_format(r->done, d, sizeof(d));
		keep_format(r->failed, f, sizeof(f));
		n = snprintf(buf, sizeof(buf), "done %s\nfailed %s\n", d, f);
		/* In tmp/, where a crash's leftover is removed after 36 h. */
		snprintf(tmp, sizeof(tmp), RETAIN_FILE ".%ld", (long)getpid());
		if (retain_tmp(sp, tmp, buf, (size_t)n) == -1)
			return -1;
		if (renameat(sp->dir[ST_TMP], tmp, sp->root, RETAIN_FILE) ==
		    -1) {
			saved = errno;
			unlinkat(sp->dir[ST_TMP], tmp, 0);
			errno = saved;
			return -1;
		}
	}
	/* The root's entry: the setting outlives a crash. */
	return fsync(sp->root);
}

/* Why the last spool_retention() gave EINVAL. */
static const char *bad_why = "not lines 'done DUR' and 'failed DUR'";

const char *
spool_retention_error(int err)
{
	if (err == EINVAL)
		return bad_why;
	if (err == ELOOP)
		return "a symbolic link, not followed";
	return strerror(err);
}

/* One line "STATE DUR" into r; -1 (EINVAL) for anything else. */
static int
retain_line(char *line, struct retention *r)
{
	char *sp = strchr(line, ' ');
	msec_t v;

	if (sp == NULL || keep_parse(sp + 1, &v) == -1)
		goto bad;
	*sp = '\0';
	if (strcmp(line, "done") == 0)
		r->done = v;
	else if (strcmp(line, "failed") == 0)
		r->failed = v;
	else
		goto bad;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int
spool_retention(struct spool *sp, struct retention *r)
{
	static char why[64];
	char buf[256], *line, *next;
	struct stat st;
	int lineno;
	ssize_t n;
	int fd, saved;

	r->done = r->failed = KEEP_FOREVER;
	/* NONBLOCK: a FIFO put there must not hang the owner. */
	fd = openat(sp->root, RETAIN_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	bad_why = "not lines 'done DUR' and 'failed DUR'";
	if (fstat(fd, &st) == -1)
		n = -1;
	else if (!S_ISREG(st.st_mode))
		n = -1, errno = EINVAL, bad_why = "not a regular file";
	else if ((n = read_full(fd, buf, sizeof(buf))) == (ssize_t)sizeof(buf))
		/* longer than two lines can be */
		n = -1, errno = EINVAL, bad_why = "longer than 255 bytes";
	if (n == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	buf[n] = '\0';
	for (line = buf, lineno = 1; *line != '\0'; line = next, lineno++) {
		if ((next = strchr(line, '\n')) == NULL) {
			errno = EINVAL;		/* a line cut short */
			bad_why = "its last line has no newline";
			return -1;
		}
		*next++ = '\0';
		if (retain_line(line, r) == -1) {
			snprintf(why, sizeof(why), "line %d is not 'done DUR' or "
			    "'failed DUR'", lineno);
			bad_why = why;
			return -1;
		}
	}
	if (line != buf + n) {
		errno = EINVAL;
		bad_why = "it holds a NUL byte";
		return -1;
	}
	return 0;
}
