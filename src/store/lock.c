/*
 * lock.c: one owner per spool, enforced by the kernel.  The owner holds
 * flock(LOCK_EX) on the spool root directory through a close-on-exec
 * descriptor, so the lock dies with the owner and no handler inherits it.
 * owner.pid is for humans and messages; /proc/locks is the truth.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/lock.h"
#include "store/spool.h"

#define PIDFILE		"owner.pid"
#define PIDFILE_TMP	".owner.pid.tmp"

static void
on_alarm(int sig)
{
}

/* flock(LOCK_EX), giving up after ms: SIGALRM interrupts the wait. */
static int
flock_within(int fd, unsigned ms)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { .it_value = { ms / 1000, ms % 1000 * 1000 } };
	struct itimerval off = { 0 };
	int rc, saved;

	sigemptyset(&sa.sa_mask);	/* no SA_RESTART: flock returns EINTR */
	sigaction(SIGALRM, &sa, &old);
	setitimer(ITIMER_REAL, &it, NULL);
	rc = flock(fd, LOCK_EX);
	saved = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	errno = rc == -1 && saved == EINTR ? EWOULDBLOCK : saved;
	return rc;
}

int
lock_take(struct spool *sp)
{
	pid_t holder;

	if (flock(sp->root, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -1;
	/*
	 * An owner killed while it was starting a handler leaves the lock
	 * held for a moment by that child, which shares the lock's open file
	 * until its exec closes it (close-on-exec).  When the holder /proc
	 * names is dead, give such a straggler up to two seconds.
	 */
	holder = lock_owner(sp);
	if (holder == 0 || (holder > 0 && kill(holder, 0) == -1 &&
	    errno == ESRCH))
		return flock_within(sp->root, 2000);
	errno = EWOULDBLOCK;
	return -1;
}

int
lock_wait(struct spool *sp)
{
	while (flock(sp->root, LOCK_EX) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

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

pid_t
lock_parse_pid(const char *data, size_t len)
{
	char buf[32];
	const char *err;
	pid_t pid;

	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, data, len);
	buf[len] = '\0';
	if (len > 0 && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	pid = strtonum(buf, 1, 1 << 30, &err);
	return err ? 0 : pid;
}

pid_t
lock_pidfile(struct spool *sp, msec_t *mtime)
{
	struct stat st;
	char buf[32];
	ssize_t n;
	int fd;

	if (mtime != NULL)
		*mtime = 0;
	fd = openat(sp->root, PIDFILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return 0;
	if (mtime != NULL && fstat(fd, &st) == 0)
		*mtime = (msec_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000;
	n = read_full(fd, buf, sizeof(buf));
	close(fd);
	return n <= 0 ? 0 : lock_parse_pid(buf, n);
}

pid_t
lock_parse_line(const char *line, unsigned dmaj, unsigned dmin,
    unsigned long dino)
{
	unsigned maj, mnr;
	unsigned long ino;
	long pid;
	char type[16], mode[16], kind[16];

	if (strstr(line, "->") != NULL)
		return 0;
	if (sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%lu", type, kind,
	    mode, &pid, &maj, &mnr, &ino) != 7)
		return 0;
	if (strcmp(type, "FLOCK") != 0 || ino != dino || maj != dmaj ||
	    mnr != dmin)
		return 0;
	return pid > 0 && pid <= (1L << 30) ? (pid_t)pid : -1;
}

pid_t
lock_owner(struct spool *sp)
{
	char line[256];
	struct stat st;
	pid_t found = 0;
	FILE *f;

	if (fstat(sp->root, &st) == -1 || (f = fopen("/proc/locks", "re")) == NULL)
		return lock_pidfile(sp, NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		if ((found = lock_parse_line(line, major(st.st_dev),
		    minor(st.st_dev), st.st_ino)) != 0)
			break;
	fclose(f);
	if (found == -1) {
		pid_t p = lock_pidfile(sp, NULL);
		return p > 0 ? p : -1;
	}
	return found;
}
