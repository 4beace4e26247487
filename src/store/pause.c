/*
 * pause.c: SPOOL/paused, the spool's pause: written whole or not at all,
 * removed, and read back.  The file is advisory: it changes no job, so a
 * crash at any step leaves the spool paused or not, never a job harmed.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/pause.h"
#include "store/spool.h"

/* The file's content: "BY TIME\n". */
static int
pause_write(struct spool *sp, const char *by)
{
	char tmp[64], buf[512], when[40];
	int fd, n, saved;

	/* In tmp/, where a crash's leftover is removed after 36 h (row 18). */
	snprintf(tmp, sizeof(tmp), PAUSE_FILE ".%ld", (long)getpid());
	iso_time(now_ms(), when, sizeof(when));
	n = snprintf(buf, sizeof(buf), "%s %s\n", by != NULL && *by != '\0' ?
	    by : "-", when);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* An earlier process of our pid may have left one: ours is new. */
	unlinkat(sp->dir[ST_TMP], tmp, 0);
	fd = openat(sp->dir[ST_TMP], tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1)
		return -1;
	/* fsync before the rename: after a crash the name holds all of it. */
	if (write_all(fd, buf, (size_t)n) == -1 || fsync(fd) == -1) {
		saved = errno;
		close(fd);
		unlinkat(sp->dir[ST_TMP], tmp, 0);
		errno = saved;
		return -1;
	}
	close(fd);
	/* Without NOREPLACE a pause racing a `touch` would still be a pause;
	 * with it, the first one's author stays, as spool_pause promises. */
	if (renameat2(sp->dir[ST_TMP], tmp, sp->root, PAUSE_FILE,
	    RENAME_NOREPLACE) == -1) {
		saved = errno;
		unlinkat(sp->dir[ST_TMP], tmp, 0);
		errno = saved;
		return -1;
	}
	return 0;
}

int
spool_pause(struct spool *sp, bool on, const char *by)
{
	struct stat st;
	int rc;

	if (fstatat(sp->root, PAUSE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (on)
			return 1;
		rc = unlinkat(sp->root, PAUSE_FILE, S_ISDIR(st.st_mode) ?
		    AT_REMOVEDIR : 0);
	} else if (errno != ENOENT)
		return -1;
	else if (!on)
		return 1;
	else
		rc = pause_write(sp, by);
	if (rc == -1)
		return errno == EEXIST || (errno == ENOENT && !on) ? 1 : -1;
	/* The root's entry for it: a pause or a resume outlives a crash. */
	return fsync(sp->root) == -1 ? -1 : 0;
}

/* Its first word, escaped, into by; "" when it has none. */
static void
pause_author(struct spool *sp, char *by, size_t len)
{
	char buf[256], *end;
	ssize_t n = -1;
	int fd;

	by[0] = '\0';
	/* NONBLOCK: a FIFO put there must not hang the owner. */
	fd = openat(sp->root, PAUSE_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd != -1) {
		struct stat st;

		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			n = read_full(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return;
	buf[n] = '\0';
	end = buf + strcspn(buf, " \t\n");
	*end = '\0';
	if (buf[0] != '\0' && strcmp(buf, "-") != 0)
		vis_name(buf, by, len);
}

int
spool_paused(struct spool *sp, char *by, size_t len, msec_t *at)
{
	struct stat st;

	if (fstatat(sp->root, PAUSE_FILE, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : -1;
	if (at != NULL)
		*at = (msec_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000;
	if (by == NULL || len == 0)
		return 1;
	pause_author(sp, by, len);
	if (by[0] == '\0') {
		struct passwd *pw = getpwuid(st.st_uid);

		if (pw != NULL)
			vis_name(pw->pw_name, by, len);
		else
			snprintf(by, len, "uid %ld", (long)st.st_uid);
	}
	return 1;
}
