/*
 * unique.c: a spool's unique keys.  SPOOL/unique/KEY is a regular file of
 * one line, "STATES ID" (STATES waiting, active or kept), or empty: no
 * holder.  Its flock is the one lock of the key.  Whoever takes the key
 * (chute submit, the owner for a job dropped in by hand) holds the flock
 * from its look at the holder until the job is in new/ or defer/.  The
 * owner removes the file of a free key (unique_sweep), under its flock;
 * so everyone who flocks a key's file checks, once it has the lock, that
 * the name still gives that file, and opens it again if not: a file
 * removed and made again never gives two processes two locks.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/id.h"
#include "base/util.h"
#include "store/spool.h"
#include "store/unique.h"

/* close(fd), keeping the errno of what failed before it. */
static void
close_saved(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

bool
unique_key_valid(const char *key, const char **why)
{
	if (!key_valid(key, why))
		return false;
	/* The key is a file's name in unique/: these two are directories. */
	if (strcmp(key, ".") == 0 || strcmp(key, "..") == 0) {
		*why = "a unique key is not . or .. (a key is a file's name"
		    " in SPOOL/unique/)";
		return false;
	}
	return true;
}

/*
 * unique/ with new/'s mode and group: a group's submitters take keys
 * too.  Made by chute init; a spool made before gets it here, from the
 * first keyed submit or owner that needs it.
 */
static int
unique_dir(struct spool *sp)
{
	struct stat s;
	int fd;

	fd = openat(sp->root, UNIQUE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd != -1 || errno != ENOENT)
		return fd;
	if (fstat(sp->dir[ST_NEW], &s) == -1)
		return -1;
	if (mkdirat(sp->root, UNIQUE_DIR, 0700) == -1 && errno != EEXIST)
		return -1;
	/* The umask may have cut the mode; chmod is not cut.  Best effort:
	 * a directory another made first is not ours to change. */
	(void)fchmodat(sp->root, UNIQUE_DIR, s.st_mode & 07777, 0);
	return openat(sp->root, UNIQUE_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
}

/*
 * The key's file, made if need be.  Opened without O_CREAT first: in a
 * sticky group-writable directory, fs.protected_regular=2 refuses an
 * O_CREAT open of another user's file.
 */
static int
key_open(struct spool *sp, const char *key)
{
	mode_t mode = spool_fmode(sp, ST_NEW) & 0040 ? 0660 : 0600;
	int dir, fd;

	if ((dir = unique_dir(sp)) == -1)
		return -1;
	for (int tries = 0; tries < 3; tries++) {
		fd = openat(dir, key, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd != -1 || errno != ENOENT)
			break;
		fd = openat(dir, key, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, mode);
		if (fd != -1) {
			(void)fchmod(fd, mode);	/* past the umask */
			break;
		}
		if (errno != EEXIST)
			break;
	}
	close_saved(dir);
	return fd;
}

/* "STATES ID\n" into h; anything else (empty, torn) names no holder. */
static void
key_read(struct unique_hold *h)
{
	char buf[16 + NAME_MAX + 2], *sp, *nl;
	ssize_t n = pread(h->fd, buf, sizeof(buf) - 1, 0);

	h->id[0] = '\0';
	h->w = UQ_ACTIVE;
	if (n <= 0)
		return;
	buf[n] = '\0';
	if ((nl = strchr(buf, '\n')) == NULL || (sp = strchr(buf, ' ')) == NULL ||
	    sp > nl)
		return;
	*sp = *nl = '\0';
	if (unique_while_parse(buf, &h->w) == -1 || !id_valid(sp + 1))
		return;
	strlcpy(h->id, sp + 1, sizeof(h->id));
}

/* Open and flock the key's file once, and read it: 0, 1 busy, or -1. */
static int
lock_once(struct spool *sp, const char *key, bool wait,
    struct unique_hold *h)
{
	h->id[0] = '\0';
	if ((h->fd = key_open(sp, key)) == -1)
		return -1;
	while (flock(h->fd, LOCK_EX | (wait ? 0 : LOCK_NB)) == -1) {
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK) {
			close(h->fd);
			h->fd = -1;
			return 1;
		}
		close_saved(h->fd);
		h->fd = -1;
		return -1;
	}
	key_read(h);
	return 0;
}

/* Does key's name in unique/ still give fd's file (not removed)? */
static int
still_named(struct spool *sp, const char *key, int fd)
{
	char path[sizeof(UNIQUE_DIR) + NAME_MAX + 1];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/%s", UNIQUE_DIR, key);
	if (fstat(fd, &a) == -1)
		return -1;
	if (fstatat(sp->root, path, &b, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int
unique_lock(struct spool *sp, const char *key, bool wait,
    struct unique_hold *h)
{
	int rc, named;

	/*
	 * A sweep removes a free key's file under its flock: one we opened
	 * before that and flocked after is no longer the key's; open the
	 * name again.  Each turn needs a sweep between our open and our
	 * flock, and a sweep takes a key held by no job, so few are taken.
	 */
	for (int tries = 0; tries < 100; tries++) {
		if ((rc = lock_once(sp, key, wait, h)) != 0)
			return rc;
		if ((named = still_named(sp, key, h->fd)) == 1)
			return 0;
		close_saved(h->fd);
		h->fd = -1;
		if (named == -1)
			return -1;
	}
	errno = EAGAIN;
	return -1;
}

int
unique_sweep(struct spool *sp, int dir, const char *key)
{
	struct unique_hold h;
	int st, rc = 0;

	h.fd = openat(dir, key, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (h.fd == -1)
		return errno == ENOENT ? 0 : -1;
	/* Held by a submitter or owner taking it: theirs, not ours. */
	if (flock(h.fd, LOCK_EX | LOCK_NB) == -1) {
		close_saved(h.fd);
		return errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
	}
	if (still_named(sp, key, h.fd) == 1) {
		key_read(&h);
		/*
		 * Free: no job names it, or the job is out of its states.
		 * Removed under the flock: whoever waits on it finds the name
		 * gone (or another file) once it has it, and opens again.
		 */
		if (!unique_held(sp, &h, &st))
			rc = unlinkat(dir, key, 0) == 0 ? 1 : -1;
	}
	close_saved(h.fd);
	return rc;
}

int
unique_peek(struct spool *sp, const char *key, char *id, size_t len)
{
	struct unique_hold h;
	int dir;

	id[0] = '\0';
	if ((dir = openat(sp->root, UNIQUE_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	h.fd = openat(dir, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close_saved(dir);
	if (h.fd == -1)
		return errno == ENOENT ? 0 : -1;
	key_read(&h);
	close(h.fd);
	strlcpy(id, h.id, len);
	return 0;
}

bool
unique_held(struct spool *sp, const struct unique_hold *h, int *st)
{
	*st = h->id[0] == '\0' ? ST_NONE : spool_locate(sp, h->id, NULL);
	/*
	 * spool_locate looks twice, for a job moving back (defer/ to new/,
	 * cur/ to new/) between its looks; once more for the same reason
	 * before a holder is taken for gone.
	 */
	if (*st == ST_NONE && h->id[0] != '\0')
		*st = spool_locate(sp, h->id, NULL);
	return unique_holds(h->w, *st);
}

static int
key_write(struct unique_hold *h, const char *line)
{
	size_t n = strlen(line);

	/*
	 * Truncate after the write, not before, so that a crash leaves the
	 * new line or the old one in front (a torn tail is cut at the
	 * newline by key_read).  fdatasync: the holder must be on disk no
	 * later than its job in new/, or after a power loss a second
	 * submitter could take the key of a job that is there.
	 */
	if (pwrite(h->fd, line, n, 0) != (ssize_t)n ||
	    ftruncate(h->fd, (off_t)n) == -1 || fdatasync(h->fd) == -1)
		return -1;
	return 0;
}

int
unique_set(struct unique_hold *h, enum unique_while w, const char *id)
{
	char line[16 + NAME_MAX + 2];

	snprintf(line, sizeof(line), "%s %s\n", unique_while_names[w], id);
	if (key_write(h, line) == -1)
		return -1;
	h->w = w;
	strlcpy(h->id, id, sizeof(h->id));
	return 0;
}

int
unique_clear(struct unique_hold *h, const char *id)
{
	if (strcmp(h->id, id) != 0)
		return 0;
	if (key_write(h, "") == -1)
		return -1;
	h->id[0] = '\0';
	return 0;
}

void
unique_unlock(struct unique_hold *h)
{
	if (h->fd != -1)
		close(h->fd);	/* the flock goes with the last descriptor */
	h->fd = -1;
}
