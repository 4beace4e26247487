/*
 * lock.c: one owner per spool, enforced by the kernel.  The owner holds
 * flock(LOCK_EX) on the spool root directory through a close-on-exec
 * descriptor, so the lock dies with the owner and no handler inherits it.
 * owner.pid is for humans and messages; /proc/locks is the truth.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

#define PIDFILE		"owner.pid"
#define PIDFILE_TMP	".owner.pid.tmp"

/*
 * Take the spool lock.  With wait, block in the kernel until the owner
 * dies (a warm standby).  Returns 0, or -1 with errno EWOULDBLOCK when
 * another process owns the spool and wait is false.
 */
int
lock_take(struct spool *sp, bool wait)
{
	if (flock(sp->root, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK || !wait)
		return -1;
	fprintf(stderr, "%s: %s: owned by pid %ld; waiting to take over\n",
	    getprogname(), sp->path, (long)lock_owner(sp));
	while (flock(sp->root, LOCK_EX) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* Written after the lock is taken: tmp name, fsync, rename over the old. */
int
lock_write_pid(struct spool *sp)
{
	char buf[32];
	int fd, n;

	fd = openat(sp->root, PIDFILE_TMP, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (write_all(fd, buf, n) == -1 || fsync(fd) == -1) {
		close(fd);
		return -1;
	}
	close(fd);
	return renameat(sp->root, PIDFILE_TMP, sp->root, PIDFILE);
}

static pid_t
pidfile_read(struct spool *sp)
{
	char buf[32];
	const char *err;
	ssize_t n;
	pid_t pid;
	int fd;

	fd = openat(sp->root, PIDFILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return 0;
	n = read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	pid = strtonum(buf, 1, 1 << 30, &err);
	return err ? 0 : pid;
}

/*
 * The pid of the process holding the spool lock, 0 if none, -1 if the
 * lock is held but the holder's pid cannot be told.  /proc/locks lists
 * every flock with device and inode; "->" lines are waiters (standbys).
 */
pid_t
lock_owner(struct spool *sp)
{
	char line[256];
	struct stat st;
	pid_t found = 0;
	FILE *f;

	if (fstat(sp->root, &st) == -1 || (f = fopen("/proc/locks", "re")) == NULL)
		return pidfile_read(sp);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned maj, mnr;
		unsigned long ino;
		long pid;
		char type[16], mode[16], kind[16];

		if (strstr(line, "->") != NULL)
			continue;
		if (sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%lu", type,
		    kind, mode, &pid, &maj, &mnr, &ino) != 7)
			continue;
		if (strcmp(type, "FLOCK") != 0 || ino != st.st_ino ||
		    maj != major(st.st_dev) || mnr != minor(st.st_dev))
			continue;
		found = pid > 0 ? (pid_t)pid : -1;
		break;
	}
	fclose(f);
	if (found == -1) {
		pid_t p = pidfile_read(sp);
		return p > 0 ? p : -1;
	}
	return found;
}
