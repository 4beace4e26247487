/*
 * joblog.c: log/ID, the job's history.  The handler's stdout and stderr are
 * appended to it, and chute appends its own lines, each starting with
 * "@chute " and the UTC time.  The attempt count is not stored anywhere
 * else: it is read back from these lines (see spool-layout.md).
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"

#define MARK	"@chute "

/* Copy the log fd (size bytes) into out.  0, or -1 with errno set. */
static int
copy_log(int fd, int out, off_t size)
{
	char buf[16384];
	off_t off = 0;
	ssize_t n;

	while (off < size) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? 0 : -1;
		if (write_all(out, buf, (size_t)n) == -1)
			return -1;
		off += n;
	}
	return 0;
}

/*
 * log/ID has other names: forward links one file, its batch's line, as
 * the log of every job of the batch (joblog_pool_link), and a backup made
 * of hard links shares logs too.  Before anything is appended, the job
 * gets a copy of its own, written in tmp/ and renamed over log/ID, so
 * that no line meant for one job shows in another's log.  The shared file
 * is flock()ed meanwhile: of two appenders, the second finds log/ID
 * replaced and opens the copy.  Returns 0 (replaced: open log/ID again),
 * or -1 with errno set.
 */
/*
 * The shared log's flock, waited for SHARED_LOCK_MS at most: chute holds
 * it for one copy, but anyone who may read the log (a submitter of a
 * group spool) may take it too and keep it, and the owner must not wait
 * on her.  0, or -1 with errno (EWOULDBLOCK: still held).
 */
static int
lock_shared(int fd)
{
	struct timespec step = { 0, 10 * 1000 * 1000 };

	for (int waited = 0;; waited += 10) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= SHARED_LOCK_MS)
			return -1;
		nanosleep(&step, NULL);
	}
}

static int
own_copy(struct spool *sp, const char *id, int fd, const struct stat *st)
{
	static unsigned seq;
	char tmp[64];
	struct stat now;
	int out, rc = -1, saved;

	if (lock_shared(fd) == -1)
		return -1;
	if (fstatat(sp->dir[ST_LOG], id, &now, AT_SYMLINK_NOFOLLOW) == -1 ||
	    now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		/* Replaced (or removed) meanwhile: open whatever is there now. */
		flock(fd, LOCK_UN);
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "log.%ld.%u", (long)getpid(), seq++);
	out = openat(sp->dir[ST_TMP], tmp, O_RDWR | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, spool_fmode(sp, ST_LOG));
	if (out != -1) {
		/* The rename replaces only our name; the others keep theirs. */
		if (copy_log(fd, out, now.st_size) == 0 && renameat(
		    sp->dir[ST_TMP], tmp, sp->dir[ST_LOG], id) == 0)
			rc = 0;
		saved = errno;
		if (rc == -1)
			unlinkat(sp->dir[ST_TMP], tmp, 0);
		close(out);
		errno = saved;
	}
	saved = errno;
	flock(fd, LOCK_UN);
	errno = saved;
	return rc;
}

int
joblog_open(struct spool *sp, const char *id)
{
	struct stat st;
	int fd;

	for (int tries = 0;; tries++) {
		/* O_RDWR, not O_WRONLY: joblog_vnote reads back the last byte. */
		fd = openat(sp->dir[ST_LOG], id, O_RDWR | O_APPEND | O_CREAT |
		    O_NOFOLLOW | O_CLOEXEC, spool_fmode(sp, ST_LOG));
		if (fd == -1 || fstat(fd, &st) == -1 || st.st_nlink <= 1 ||
		    !S_ISREG(st.st_mode))
			return fd;
		/*
		 * Cannot copy (tmp/ not writable, say), or lost the race
		 * too often, or another process keeps the shared file
		 * locked: append to the shared file rather than lose the
		 * line.
		 */
		if (tries == 3 || own_copy(sp, id, fd, &st) == -1)
			return fd;
		close(fd);
	}
}

/* "@chute TIME text\n" into line[n..size); returns the line's length. */
static size_t __attribute__((format(printf, 4, 0)))
format_line(char *line, size_t size, size_t n, const char *fmt, va_list ap)
{
	char ts[40];

	iso_time(now_ms(), ts, sizeof(ts));
	n += snprintf(line + n, size - n, MARK "%s ", ts);
	vsnprintf(line + n, size - n - 1, fmt, ap);
	strlcat(line, "\n", size);
	return strlen(line);
}

int
joblog_vnote(int fd, off_t *end, bool others, const char *fmt, va_list ap)
{
	char line[1024];
	struct stat st;
	size_t n = 0, len;
	char last = '\n';

	if (end != NULL && *end >= 0 && !others)
		st.st_size = *end;
	else if (fstat(fd, &st) == -1)
		st.st_size = -1;
	else if (st.st_size > 0 && (end == NULL || st.st_size != *end) &&
	    pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
		line[n++] = '\n';
	len = format_line(line, sizeof(line), n, fmt, ap);
	if (write_all(fd, line, len) == -1) {
		if (end != NULL)
			*end = -1;
		return -1;
	}
	if (end != NULL)
		*end = st.st_size >= 0 ? st.st_size + (off_t)len : -1;
	return 0;
}

int
joblog_vmem(char **buf, size_t *len, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n = format_line(line, sizeof(line), 0, fmt, ap);
	char *p;

	if ((p = realloc(*buf, *len + n)) == NULL)
		return -1;
	memcpy(p + *len, line, n);
	*buf = p;
	*len += n;
	return 0;
}

int
joblog_lnote(int fd, off_t *end, bool others, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = joblog_vnote(fd, end, others, fmt, ap);
	va_end(ap);
	return rc;
}

int
joblog_fnote(int fd, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = joblog_vnote(fd, NULL, true, fmt, ap);
	va_end(ap);
	return rc;
}

int
joblog_note(struct spool *sp, const char *id, const char *fmt, ...)
{
	char text[900];
	va_list ap;
	int fd, rc;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if ((fd = joblog_open(sp, id)) == -1)
		return -1;
	rc = joblog_fnote(fd, "%s", text);
	close(fd);
	return rc;
}

/* One "@chute" line, without the marker and the time stamp. */
static void
parse_line(const char *p, size_t len, struct joblog_info *ji)
{
	const char *sp = memchr(p, ' ', len);
	char text[128];
	size_t n;

	if (sp == NULL)
		return;
	n = len - (sp + 1 - p);
	if (n >= sizeof(text))
		n = sizeof(text) - 1;
	memcpy(text, sp + 1, n);
	text[n] = '\0';
	if (strncmp(text, "reset", 5) == 0) {
		ji->attempts = 0;
		ji->last[0] = '\0';
		return;
	}
	if (strncmp(text, "cancelled", 9) == 0) {
		strlcpy(ji->last, "cancelled", sizeof(ji->last));
		return;
	}
	if (strncmp(text, "dependency ", 11) == 0) {	/* wait -> failed */
		strlcpy(ji->last, text, sizeof(ji->last));
		return;
	}
	if (strncmp(text, "rejected", 8) == 0) {
		strlcpy(ji->last, "rejected", sizeof(ji->last));
		return;
	}
	if (strncmp(text, "attempt=", 8) != 0)
		return;
	char *rest = strchr(text, ' ');
	if (rest == NULL)
		return;
	rest++;
	if (strcmp(rest, "start") == 0)
		ji->attempts++;
	else if (strncmp(rest, "interrupted", 11) == 0)
		ji->attempts--;
	else {
		char *t = strstr(rest, " time=");
		if (t)
			*t = '\0';
		strlcpy(ji->last, rest, sizeof(ji->last));
	}
}

void
joblog_parse(const char *buf, size_t len, struct joblog_info *ji)
{
	const char *p = buf, *end = buf + len;

	ji->attempts = 0;
	ji->last[0] = '\0';
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;

		if ((size_t)(eol - p) > sizeof(MARK) - 1 &&
		    memcmp(p, MARK, sizeof(MARK) - 1) == 0)
			parse_line(p + sizeof(MARK) - 1,
			    eol - p - (sizeof(MARK) - 1), ji);
		p = eol + 1;
	}
	if (ji->attempts < 0)
		ji->attempts = 0;
}

int
joblog_fread(int fd, struct joblog_info *ji, off_t *end)
{
	struct stat st;
	void *map;

	if (end != NULL)
		*end = -1;
	ji->attempts = 0;
	ji->last[0] = '\0';
	if (fstat(fd, &st) == -1)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (st.st_size == 0) {
		if (end != NULL)
			*end = 0;
		return 0;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	joblog_parse(map, st.st_size, ji);
	if (end != NULL && ((char *)map)[st.st_size - 1] == '\n')
		*end = st.st_size;
	munmap(map, st.st_size);
	return 0;
}

int
joblog_read(struct spool *sp, const char *id, struct joblog_info *ji)
{
	int fd, rc, saved;

	ji->attempts = 0;
	ji->last[0] = '\0';
	fd = openat(sp->dir[ST_LOG], id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	rc = joblog_fread(fd, ji, NULL);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

/*
 * The log pool.  Creating log/ID allocates an inode, and on ext4 right
 * after many files were removed (a nightly purge) the allocator scans past
 * every recently freed one, far longer than a link, on the path from a job's
 * arrival to its handler's exec.  So a few empty logs are made ahead, kept
 * open, and a claim links one as log/ID, which allocates nothing.  They
 * are unnamed (O_TMPFILE in log/.pool/): making one locks no directory,
 * so the owner's renames never wait for the keeper thread (keeper.c) that
 * makes them after the turn's handlers have started, and a dead owner's
 * spare logs vanish with it.  The counts are under the pool's mutex; each
 * create runs outside it.  log/.pool/ also holds forward's batch lines
 * (joblog_pool_link); only the spool's owner touches it (it holds the
 * spool's lock), and what a dead owner left there is removed by the next.
 */
#define POOL_DIR	".pool"

/* Unlink every entry of the pool directory: a dead owner's spare logs. */
static int
pool_clear(int dir)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if ((fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    unlinkat(dir, de->d_name, 0) == -1 && errno != ENOENT)
			rc = -1;
	closedir(d);
	return rc;
}

int
joblog_pool_open(struct joblog_pool *p, struct spool *sp)
{
	int saved;

	*p = (struct joblog_pool){ .mu = PTHREAD_MUTEX_INITIALIZER, .dir = -1,
	    .want = LOGPOOL_MIN };
	/* In a setgid log/ the pool inherits the group, as its files must. */
	if (mkdirat(sp->dir[ST_LOG], POOL_DIR, 0700) == -1 && errno != EEXIST)
		return -1;
	p->dir = openat(sp->dir[ST_LOG], POOL_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (p->dir == -1)
		return -1;
	if (pool_clear(p->dir) == -1) {
		saved = errno;
		close(p->dir);
		p->dir = -1;
		errno = saved;
		return -1;
	}
	/* A spare log gets its name through /proc (joblog_pool_take). */
	p->linkable = access("/proc/self/fd", X_OK) == 0;
	return 0;
}

void
joblog_pool_want(struct joblog_pool *p, int n)
{
	pthread_mutex_lock(&p->mu);
	if (n > LOGPOOL_MAX)
		n = LOGPOOL_MAX;
	if (n > p->want)
		p->want = n;
	pthread_mutex_unlock(&p->mu);
}

bool
joblog_pool_short(struct joblog_pool *p)
{
	bool s;

	if (p->dir == -1 || !p->linkable)
		return false;
	pthread_mutex_lock(&p->mu);
	s = 2 * p->n <= p->want;
	pthread_mutex_unlock(&p->mu);
	return s;
}

int
joblog_pool_fill(struct joblog_pool *p, struct spool *sp)
{
	int fd, saved;

	if (p->dir == -1 || !p->linkable)
		return 0;
	pthread_mutex_lock(&p->mu);
	while (p->n < p->want) {
		pthread_mutex_unlock(&p->mu);
		/* Outside the lock: the create may wait on the disk. */
		fd = openat(p->dir, ".", O_TMPFILE | O_RDWR | O_APPEND |
		    O_CLOEXEC, spool_fmode(sp, ST_LOG));
		saved = errno;
		pthread_mutex_lock(&p->mu);
		if (fd == -1) {
			pthread_mutex_unlock(&p->mu);
			errno = saved;
			return -1;
		}
		p->fd[p->n++] = fd;
	}
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int
joblog_pool_take(struct joblog_pool *p, struct spool *sp, const char *id)
{
	char proc[32];
	int fd, saved;

	pthread_mutex_lock(&p->mu);
	if (p->dir == -1 || p->n == 0) {
		pthread_mutex_unlock(&p->mu);
		errno = EAGAIN;
		return -1;
	}
	fd = p->fd[--p->n];
	pthread_mutex_unlock(&p->mu);
	/*
	 * An unnamed file gets its name through /proc: linkat's AT_EMPTY_PATH
	 * would need CAP_DAC_READ_SEARCH.
	 */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, sp->dir[ST_LOG], id, AT_SYMLINK_FOLLOW) == 0)
		return fd;
	saved = errno;
	if (saved == EEXIST) {
		/* Back in the pool, unless a refill filled it meanwhile. */
		pthread_mutex_lock(&p->mu);
		if (p->n < LOGPOOL_MAX) {
			p->fd[p->n++] = fd;
			fd = -1;
		}
		pthread_mutex_unlock(&p->mu);
	}
	if (fd != -1)
		close(fd);
	errno = saved;
	return -1;
}

void
joblog_pool_unnote(struct joblog_pool *p)
{
	char name[16];

	if (p->note == NULL)
		return;
	snprintf(name, sizeof(name), "n%u", p->notename);
	unlinkat(p->dir, name, 0);
	free(p->note);
	p->note = NULL;
}

/* log/.pool/nSEQ, holding the line "@chute TIME text": 0, or -1 with errno. */
static int
note_make(struct joblog_pool *p, struct spool *sp, const char *text)
{
	char name[16];
	int fd, rc, saved;

	if ((p->note = strdup(text)) == NULL)
		return -1;
	pthread_mutex_lock(&p->mu);
	p->notename = p->seq++;
	pthread_mutex_unlock(&p->mu);
	snprintf(name, sizeof(name), "n%u", p->notename);
	fd = openat(p->dir, name, O_RDWR | O_APPEND | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, spool_fmode(sp, ST_LOG));
	if (fd == -1 || (rc = joblog_fnote(fd, "%s", text)) == -1) {
		saved = errno;
		if (fd != -1) {
			close(fd);
			unlinkat(p->dir, name, 0);
		}
		free(p->note);
		p->note = NULL;
		errno = saved;
		return -1;
	}
	close(fd);
	return rc;
}

int
joblog_pool_link(struct joblog_pool *p, struct spool *sp, const char *id,
    const char *text)
{
	char name[16];

	if (p->dir == -1) {
		errno = ENOENT;
		return -1;
	}
	if (p->note != NULL && strcmp(p->note, text) != 0)
		joblog_pool_unnote(p);
	if (p->note == NULL && note_make(p, sp, text) == -1)
		return -1;
	snprintf(name, sizeof(name), "n%u", p->notename);
	return linkat(p->dir, name, sp->dir[ST_LOG], id, 0);
}

void
joblog_pool_close(struct joblog_pool *p)
{
	if (p->dir == -1)
		return;
	joblog_pool_unnote(p);
	/* Unnamed: closed, they are gone. */
	while (p->n > 0)
		close(p->fd[--p->n]);
	close(p->dir);
	p->dir = -1;
}
