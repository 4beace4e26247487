/*
 * after.c: a waiting job's dependency list.  SPOOL/after/ID is a small
 * regular file: "fail" or "run" on its first line (what the job does if
 * one of its jobs fails), then the IDs it waits for, one a line.  It is
 * written before the job enters wait/ and kept after the job leaves it
 * (status says what the job waited for), until the job is purged.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/id.h"
#include "base/util.h"
#include "store/after.h"
#include "store/spool.h"

#define AFTER_MAX	(16u << 20)	/* no list is longer: 64k IDs of 255 */

static void
close_saved(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

/*
 * after/, made with new/'s mode and group in a spool made before it (as
 * unique/ is, store/unique.c): a group's submitters write lists too.
 */
static int
after_dir(struct spool *sp, bool make)
{
	struct stat s;
	int fd;

	fd = openat(sp->root, AFTER_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd != -1 || errno != ENOENT || !make)
		return fd;
	if (fstat(sp->dir[ST_NEW], &s) == -1)
		return -1;
	if (mkdirat(sp->root, AFTER_DIR, 0700) == -1 && errno != EEXIST)
		return -1;
	/* new/'s owner and group (root's submit must not keep the owner
	 * from removing lists), then its mode, which the umask may cut. */
	(void)fchownat(sp->root, AFTER_DIR, s.st_uid, s.st_gid,
	    AT_SYMLINK_NOFOLLOW);
	(void)fchmodat(sp->root, AFTER_DIR, s.st_mode & 07777, 0);
	return openat(sp->root, AFTER_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
}

const char *
after_mode_name(enum after_mode m)
{
	return m == AFTER_RUN ? "run" : "fail";
}

int
after_mode_parse(const char *s)
{
	if (strcmp(s, "fail") == 0)
		return AFTER_FAIL;
	if (strcmp(s, "run") == 0)
		return AFTER_RUN;
	return -1;
}

static int
write_list(int fd, enum after_mode mode, char *const *ids, size_t n)
{
	const char *m = after_mode_name(mode);

	if (write_all(fd, m, strlen(m)) == -1 || write_all(fd, "\n", 1) == -1)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (write_all(fd, ids[i], strlen(ids[i])) == -1 ||
		    write_all(fd, "\n", 1) == -1)
			return -1;
	return 0;
}

int
after_write(struct spool *sp, const char *id, enum after_mode mode,
    char *const *ids, size_t n, const char **where)
{
	char tmp[NAME_MAX + 2];
	int dir, fd;

	*where = "after/";
	if ((dir = after_dir(sp, true)) == -1)
		return -1;
	snprintf(tmp, sizeof(tmp), ".%s", id);
	*where = "after/.ID";
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, spool_fmode(sp, ST_NEW));
	if (fd == -1)
		goto fail;
	/* The list is durable before its job can be seen waiting. */
	if (write_list(fd, mode, ids, n) == -1 || fsync(fd) == -1) {
		close_saved(fd);
		unlinkat(dir, tmp, 0);
		goto fail;
	}
	if (close(fd) == -1 || renameat(dir, tmp, dir, id) == -1) {
		unlinkat(dir, tmp, 0);
		goto fail;
	}
	/* The rename too, before the job's own rename into wait/. */
	*where = "after/";
	if (fsync(dir) == -1)
		goto fail;
	close(dir);
	return 0;
fail:
	close_saved(dir);
	return -1;
}

static int
slurp(int fd, char **buf, size_t *len)
{
	struct stat s;
	ssize_t r;

	if (fstat(fd, &s) == -1)
		return -1;
	if (!S_ISREG(s.st_mode) || (size_t)s.st_size > AFTER_MAX) {
		errno = EBADMSG;
		return -1;
	}
	if ((*buf = malloc((size_t)s.st_size + 1)) == NULL)
		return -1;
	*len = 0;
	while (*len < (size_t)s.st_size) {
		r = read(fd, *buf + *len, (size_t)s.st_size - *len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	(*buf)[*len] = '\0';
	return 0;
}

/* The lines of a->buf into a->ids, each checked. */
static int
parse(struct after *a, size_t len)
{
	char *p = a->buf, *end = a->buf + len, *nl;
	size_t cap = 0;
	int m;

	if ((nl = memchr(p, '\n', len)) == NULL)
		goto bad;
	*nl = '\0';
	if ((m = after_mode_parse(p)) == -1)
		goto bad;
	a->mode = (enum after_mode)m;
	for (p = nl + 1; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			goto bad;
		*nl = '\0';
		if (!id_valid(p))
			goto bad;
		if (a->n == cap) {
			char **v = reallocarray(a->ids, cap ? cap * 2 : 16,
			    sizeof(*v));
			if (v == NULL)
				return -1;
			a->ids = v;
			cap = cap ? cap * 2 : 16;
		}
		a->ids[a->n++] = p;
	}
	return 0;
bad:
	errno = EBADMSG;
	return -1;
}

int
after_read(struct spool *sp, const char *id, struct after *a)
{
	size_t len;
	int dir, fd;

	memset(a, 0, sizeof(*a));
	if ((dir = after_dir(sp, false)) == -1)
		return -1;
	fd = openat(dir, id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close_saved(dir);
	if (fd == -1)
		return -1;
	if (slurp(fd, &a->buf, &len) == -1) {
		close_saved(fd);
		return -1;
	}
	close(fd);
	if (parse(a, len) == -1) {
		after_free(a);
		return -1;
	}
	return 0;
}

void
after_free(struct after *a)
{
	int saved = errno;

	free(a->ids);
	free(a->buf);
	memset(a, 0, sizeof(*a));
	errno = saved;
}

int
after_remove(struct spool *sp, const char *id)
{
	int dir, rc;

	if ((dir = after_dir(sp, false)) == -1)
		return errno == ENOENT ? 0 : -1;
	rc = unlinkat(dir, id, 0);
	close_saved(dir);
	return rc == -1 && errno != ENOENT ? -1 : 0;
}
