/*
 * lock.c: one owner per spool, enforced by the kernel.  The owner holds
 * flock(LOCK_EX) on SPOOL/owner.lock, a file of the spool's owner's, mode
 * 0600 from its creation, through a close-on-exec descriptor: the lock
 * dies with the owner, no handler inherits it, and no other user can open
 * the file to take it (a submitter of a group spool can open the spool
 * directory, and so hold a flock on it).  The owner also takes the flock
 * on the spool directory when it is free, the lock of earlier releases,
 * so that their owners and readers still see this one.  owner.pid is for
 * humans and messages; /proc/locks is the truth.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <dirent.h>
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
#define LEGACY_POLL_MS	1000	/* --wait-lock on an earlier release's owner */

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

/*
 * Could only the spool's owner's user (and root) have opened this lock
 * file?  A regular file of that user's, or of ours, with no permission
 * for its group or others.
 */
static bool
lock_file_safe(const struct stat *st, const struct stat *dir)
{
	return S_ISREG(st->st_mode) && (st->st_mode & 077) == 0 &&
	    (st->st_uid == dir->st_uid || st->st_uid == geteuid());
}

/* An existing owner.lock, open if it is safe (else EPERM); or -1. */
static int
open_existing(int root, const struct stat *dir)
{
	struct stat st;
	int fd;

	fd = openat(root, LOCK_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (fd == -1) {
		if (errno == ELOOP)
			errno = EPERM;	/* a symlink: not ours to trust */
		return -1;
	}
	if (fstat(fd, &st) == -1 || !lock_file_safe(&st, dir)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int
lock_make(int root)
{
	struct stat dir;
	int fd, saved;

	if (fstat(root, &dir) == -1)
		return -1;
	/*
	 * O_EXCL and 0600 in the one call that makes it: no other user ever
	 * had it open, so no other user can hold its lock.  Not fsynced: a
	 * lock file lost to a power loss is made again by the next owner.
	 */
	fd = openat(root, LOCK_FILE, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd == -1)
		return errno == EEXIST ? open_existing(root, &dir) : -1;
	/* Made by root in another user's spool: it is that user's. */
	if (geteuid() == 0 && dir.st_uid != 0 &&
	    fchown(fd, dir.st_uid, (gid_t)-1) == -1) {
		saved = errno;
		close(fd);
		unlinkat(root, LOCK_FILE, 0);
		errno = saved;
		return -1;
	}
	return fd;
}

/* The pid's real uid, from /proc/PID/status; -1 if it cannot be read. */
static long
proc_uid(pid_t pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Uid: %ld", &uid) == 1)
			break;
	fclose(f);
	return uid;
}

/*
 * Is pid, which holds the flock on the spool directory, an owner of an
 * earlier release (which locks only that)?  Such an owner wrote its pid
 * into owner.pid, which only the spool's owner's user may write, and
 * runs as that user (or as us).  A submitter who holds the directory's
 * flock is neither, whatever pid /proc/locks names for her.
 */
static bool
legacy_owner(struct spool *sp, pid_t pid)
{
	struct stat dir;
	long uid;

	if (pid <= 0 || pid != lock_pidfile(sp, NULL) ||
	    fstat(sp->root, &dir) == -1 || (uid = proc_uid(pid)) == -1)
		return false;
	return uid == (long)dir.st_uid || uid == (long)geteuid();
}

/* Is one of /proc/PID/fd (at proc) the file *file?  Unreadable: no. */
static bool
fds_hold(int proc, const char *pid, const struct stat *file)
{
	char path[NAME_MAX + 4];
	struct dirent *de;
	struct stat st;
	bool found = false;
	DIR *d;
	int fds;

	snprintf(path, sizeof(path), "%s/fd", pid);
	if ((fds = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return false;
	if ((d = fdopendir(fds)) == NULL) {
		close(fds);
		return false;
	}
	/* stat, not lstat: each entry is a link to the open file. */
	while (!found && (de = readdir(d)) != NULL)
		found = de->d_name[0] != '.' &&
		    fstatat(fds, de->d_name, &st, 0) == 0 &&
		    st.st_dev == file->st_dev && st.st_ino == file->st_ino;
	closedir(d);
	return found;
}

/* Is /proc/PID (at proc) another process of dir's owner's or ours? */
static bool
owners_process(int proc, const char *pid, const struct stat *dir)
{
	char self[32];
	struct stat st;

	snprintf(self, sizeof(self), "%ld", (long)getpid());
	/* /proc/PID belongs to the process's user. */
	return pid[0] >= '1' && pid[0] <= '9' && strcmp(pid, self) != 0 &&
	    fstatat(proc, pid, &st, 0) == 0 &&
	    (st.st_uid == dir->st_uid || st.st_uid == geteuid());
}

bool
lock_file_open_by_owner(struct spool *sp, const struct stat *file,
    pid_t *hint)
{
	char pid[32];
	struct dirent *de;
	struct stat dir;
	bool found = false;
	DIR *d;
	int proc;

	if (fstat(sp->root, &dir) == -1 ||
	    (proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return true;		/* cannot tell: as if it were */
	/* The one found last time, most likely still the one. */
	snprintf(pid, sizeof(pid), "%ld", (long)*hint);
	if (*hint > 0 && owners_process(proc, pid, &dir) &&
	    fds_hold(proc, pid, file)) {
		close(proc);
		return true;
	}
	*hint = 0;
	if ((d = fdopendir(proc)) == NULL) {
		close(proc);
		return true;
	}
	while (!found && (de = readdir(d)) != NULL)
		if (owners_process(proc, de->d_name, &dir) &&
		    (found = fds_hold(proc, de->d_name, file)))
			*hint = (pid_t)strtol(de->d_name, NULL, 10);
	closedir(d);
	return found;
}

/*
 * The flock on the spool directory, for earlier releases: 0 when it is
 * ours or held by no owner (a submitter's hold is said, then ignored);
 * -1 with errno EWOULDBLOCK when an earlier release's owner holds it.
 * With wait, wait for that owner instead.
 */
static int
take_dir(struct spool *sp, bool wait)
{
	struct stat st;
	pid_t holder;

	for (;;) {
		if (flock(sp->root, LOCK_EX | LOCK_NB) == 0 ||
		    errno != EWOULDBLOCK)
			return 0;	/* taken, or an error: only a courtesy */
		if (fstat(sp->root, &st) == -1)
			return 0;
		holder = lock_holder(st.st_dev, st.st_ino);
		/* Let go between our two looks: one more try. */
		if (holder == 0 && flock(sp->root, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (!legacy_owner(sp, holder)) {
			char who[48] = "another process";

			if (holder > 0)
				snprintf(who, sizeof(who), "pid %ld", (long)holder);
			say_warn("%s: %s holds a flock on the spool directory and "
			    "is not its owner (the owner's lock is %s/%s): "
			    "ignored", sp->path, who, sp->path, LOCK_FILE);
			return 0;
		}
		if (!wait) {
			errno = EWOULDBLOCK;
			return -1;
		}
		if (flock_within(sp->root, LEGACY_POLL_MS) == 0)
			return 0;
		if (errno != EWOULDBLOCK)
			return -1;
	}
}

/* The lock file, open in sp->lock; 0 or -1 with errno. */
static int
open_lock(struct spool *sp)
{
	if (sp->lock == -1 && (sp->lock = lock_make(sp->root)) == -1)
		return -1;
	return 0;
}

int
lock_take(struct spool *sp)
{
	pid_t holder;

	if (open_lock(sp) == -1)
		return -1;
	if (flock(sp->lock, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK)
			return -1;
		/*
		 * An owner killed while it was starting a handler leaves the
		 * lock held for a moment by that child, which shares the
		 * lock's open file until its exec closes it (close-on-exec).
		 * When the holder /proc names is dead, give such a straggler
		 * up to two seconds.
		 */
		holder = lock_owner(sp);
		if (!(holder == 0 || (holder > 0 && kill(holder, 0) == -1 &&
		    errno == ESRCH))) {
			errno = EWOULDBLOCK;
			return -1;
		}
		if (flock_within(sp->lock, 2000) == -1)
			return -1;
	}
	if (take_dir(sp, false) == 0)
		return 0;
	flock(sp->lock, LOCK_UN);	/* an earlier release's owner runs */
	errno = EWOULDBLOCK;
	return -1;
}

int
lock_wait(struct spool *sp)
{
	if (open_lock(sp) == -1)
		return -1;
	while (flock(sp->lock, LOCK_EX) == -1)
		if (errno != EINTR)
			return -1;
	return take_dir(sp, true);
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

/* Every FLOCK on (dev, ino) in /proc/locks: 0, or -1 if it cannot be read. */
static int
locks_find(dev_t dev, ino_t ino, pid_t *pid)
{
	char line[256];
	FILE *f;

	*pid = 0;
	if ((f = fopen("/proc/locks", "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if ((*pid = lock_parse_line(line, major(dev), minor(dev),
		    (unsigned long)ino)) != 0)
			break;
	fclose(f);
	return 0;
}

pid_t
lock_holder(dev_t dev, ino_t ino)
{
	pid_t pid;

	return locks_find(dev, ino, &pid) == -1 ? -1 : pid;
}

pid_t
lock_owner(struct spool *sp)
{
	struct stat st;
	pid_t found, p;

	if (fstatat(sp->root, LOCK_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (locks_find(st.st_dev, st.st_ino, &found) == -1)
			return lock_pidfile(sp, NULL);
		if (found == -1) {
			p = lock_pidfile(sp, NULL);
			return p > 0 ? p : -1;
		}
		if (found > 0)
			return found;
	}
	/*
	 * No owner of this release: one of an earlier release, which locks
	 * only the directory, is told from a submitter's hold on it.
	 */
	if (fstat(sp->root, &st) == -1 ||
	    locks_find(st.st_dev, st.st_ino, &found) == -1)
		return lock_pidfile(sp, NULL);
	return legacy_owner(sp, found) ? found : 0;
}
