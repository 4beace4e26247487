/*
 * fault.c: an LD_PRELOAD shim that makes one libc call fail, for the
 * fault-injection tests (check_fault.c).  Built on its own:
 *
 *	cc -shared -fPIC -O2 -o build/libfault.so tests/fault.c -ldl
 *
 * CHUTE_FAULT=CALL:N[+]:ERR	the Nth call of CALL (1-based) fails with
 *				errno ERR (a name such as EIO, or a
 *				number); "N+": the Nth and every later one.
 * CHUTE_FAULT_PATH=SUBSTR	count only calls whose path contains SUBSTR.
 *				A path is the name resolved against its
 *				directory descriptor (renames and links:
 *				either name); for fsync, write and close, the
 *				descriptor's /proc/self/fd link.
 * CHUTE_FAULT_LOG=FILE		append one line per counted call, "CALL #N
 *				PATH: injected ERR" or "CALL #N PATH: passed",
 *				so a test can tell that the fault happened,
 *				and what came after it.
 * CHUTE_FAULT_HOLD=FIFO	with ERR "HOLD": the chosen call does not
 *				fail but waits (logged "injected HOLD"), until
 *				the test opens FIFO for writing and closes it,
 *				then runs.  A disk that stalls, on cue.
 *
 * CALL is one of write, fsync, fdatasync, close, open, openat, rename,
 * renameat, renameat2, linkat, unlinkat.  A failed call has no effect,
 * except close, which closes the descriptor anyway (as Linux does when
 * close reports an error).  The variables are read once, when the shim is
 * loaded, and then removed from the environment together with LD_PRELOAD,
 * so the processes this one starts (handlers) run without faults.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/stat.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum call { C_WRITE, C_FSYNC, C_FDATASYNC, C_CLOSE, C_OPEN, C_OPENAT,
    C_RENAME, C_RENAMEAT, C_RENAMEAT2, C_LINKAT, C_UNLINKAT, C_NCALLS };

static const char *const call_names[C_NCALLS] = { "write", "fsync",
    "fdatasync", "close", "open", "openat", "rename", "renameat",
    "renameat2", "linkat", "unlinkat" };

static struct {
	int		 call;		/* -1: no fault configured */
	unsigned long	 nth;
	int		 and_later;
	int		 err;
	char		 path[PATH_MAX];
	char		 log[PATH_MAX];
	char		 hold[PATH_MAX];	/* ERR "HOLD": wait on this FIFO */
	int		 holding;
	unsigned long	 seen;		/* matching calls so far */
} F = { .call = -1 };

/* "EIO" or "5": an errno value, or 0. */
static int
parse_errno(const char *s)
{
	char *end;
	long v;

	for (int e = 1; e < 4096; e++)
		if (strerrorname_np(e) != NULL && strcmp(s, strerrorname_np(e)) == 0)
			return e;
	v = strtol(s, &end, 10);
	return *s != '\0' && *end == '\0' && v > 0 && v < 4096 ? (int)v : 0;
}

/* "CALL:N[+]:ERR"; a malformed value is reported once and ignored. */
static void
parse_fault(const char *spec)
{
	char buf[128], *name, *nth, *err, *end;

	snprintf(buf, sizeof(buf), "%s", spec);
	name = buf;
	if ((nth = strchr(name, ':')) == NULL || (err = strchr(nth + 1, ':')) == NULL)
		goto bad;
	*nth++ = '\0';
	*err++ = '\0';
	for (int i = 0; i < C_NCALLS; i++)
		if (strcmp(name, call_names[i]) == 0)
			F.call = i;
	F.nth = strtoul(nth, &end, 10);
	F.and_later = *end == '+';
	F.holding = strcmp(err, "HOLD") == 0;
	if (F.call == -1 || F.nth == 0 || end == nth ||
	    *(end + F.and_later) != '\0' ||
	    (!F.holding && (F.err = parse_errno(err)) == 0))
		goto bad;
	return;
bad:
	F.call = -1;
	dprintf(STDERR_FILENO, "fault.c: CHUTE_FAULT=%s: expected CALL:N[+]:ERRNO"
	    " or CALL:N[+]:HOLD; no fault injected\n", spec);
}

__attribute__((constructor)) static void
fault_init(void)
{
	const char *spec = getenv("CHUTE_FAULT"), *p, *l;

	if (spec != NULL)
		parse_fault(spec);
	if ((p = getenv("CHUTE_FAULT_PATH")) != NULL)
		snprintf(F.path, sizeof(F.path), "%s", p);
	if ((l = getenv("CHUTE_FAULT_LOG")) != NULL)
		snprintf(F.log, sizeof(F.log), "%s", l);
	if ((p = getenv("CHUTE_FAULT_HOLD")) != NULL)
		snprintf(F.hold, sizeof(F.hold), "%s", p);
	if (F.holding && F.hold[0] == '\0') {
		F.call = -1;
		dprintf(STDERR_FILENO, "fault.c: HOLD without CHUTE_FAULT_HOLD;"
		    " no fault injected\n");
	}
	unsetenv("CHUTE_FAULT");
	unsetenv("CHUTE_FAULT_PATH");
	unsetenv("CHUTE_FAULT_LOG");
	unsetenv("CHUTE_FAULT_HOLD");
	unsetenv("LD_PRELOAD");
}

/* The path of descriptor fd ("" if unknown), into buf. */
static void
fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	buf[0] = '\0';
	if (fd == AT_FDCWD) {
		if (getcwd(buf, len) == NULL)
			buf[0] = '\0';
		return;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, buf, len - 1)) >= 0)
		buf[n] = '\0';
}

/* name resolved against dirfd, as well as we can tell, into buf. */
static void
at_path(int dirfd, const char *name, char *buf, size_t len)
{
	char dir[PATH_MAX];

	if (name == NULL) {
		buf[0] = '\0';
		return;
	}
	if (name[0] == '/') {
		snprintf(buf, len, "%s", name);
		return;
	}
	fd_path(dirfd, dir, sizeof(dir));
	snprintf(buf, len, "%s/%s", dir, name);
}

static void
note(const char *path, int failed)
{
	char line[2 * PATH_MAX + 128];
	int fd, n;

	if (F.log[0] == '\0')
		return;
	/* Raw system calls: this shim must not see its own I/O. */
	fd = (int)syscall(SYS_openat, AT_FDCWD, F.log,
	    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%s #%lu %s: %s%s\n",
	    call_names[F.call], F.seen, path, failed ? "injected " : "passed",
	    !failed ? "" : F.holding ? "HOLD" :
	    strerrorname_np(F.err) ? strerrorname_np(F.err) : "?");
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	syscall(SYS_write, fd, line, (size_t)n);
	syscall(SYS_close, fd);
}

/* Wait until the test has opened F.hold for writing and closed it again. */
static void
hold(void)
{
	char buf[64];
	long fd, n;

	/* Raw system calls, as in note(). */
	while ((fd = syscall(SYS_openat, AT_FDCWD, F.hold, O_RDONLY | O_CLOEXEC)) < 0 &&
	    errno == EINTR)
		;
	if (fd < 0)
		return;
	while ((n = syscall(SYS_read, (int)fd, buf, sizeof(buf))) > 0 ||
	    (n < 0 && errno == EINTR))
		;
	syscall(SYS_close, (int)fd);
}

/*
 * Should this call fail?  It counts if it is the configured call and one
 * of its paths (a, b: either may be empty) contains CHUTE_FAULT_PATH.
 */
static int
hit(enum call c, const char *a, const char *b)
{
	unsigned long n;
	int fail;

	if ((int)c != F.call)
		return 0;
	if (F.path[0] != '\0' && strstr(a, F.path) == NULL &&
	    strstr(b, F.path) == NULL)
		return 0;
	n = __atomic_add_fetch(&F.seen, 1, __ATOMIC_SEQ_CST);
	fail = n == F.nth || (F.and_later && n > F.nth);
	note(a[0] != '\0' ? a : b, fail);
	if (fail && F.holding) {
		hold();
		return 0;
	}
	return fail;
}

static int
hit_fd(enum call c, int fd)
{
	char p[PATH_MAX] = "";

	if ((int)c != F.call)
		return 0;
	if (F.path[0] != '\0' || F.log[0] != '\0')
		fd_path(fd, p, sizeof(p));
	return hit(c, p, "");
}

static int
hit_at(enum call c, int d1, const char *n1, int d2, const char *n2)
{
	char a[2 * PATH_MAX] = "", b[2 * PATH_MAX] = "";

	if ((int)c != F.call)
		return 0;
	if (F.path[0] != '\0' || F.log[0] != '\0') {
		at_path(d1, n1, a, sizeof(a));
		at_path(d2, n2, b, sizeof(b));
	}
	return hit(c, a, b);
}

#define REAL(name) \
	static __typeof__(name) *real_; \
	if (real_ == NULL) \
		real_ = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

#define FAIL() do { errno = F.err; return -1; } while (0)

ssize_t
write(int fd, const void *buf, size_t len)
{
	REAL(write);
	if (hit_fd(C_WRITE, fd))
		FAIL();
	return real_(fd, buf, len);
}

int
fsync(int fd)
{
	REAL(fsync);
	if (hit_fd(C_FSYNC, fd))
		FAIL();
	return real_(fd);
}

int
fdatasync(int fd)
{
	REAL(fdatasync);
	if (hit_fd(C_FDATASYNC, fd))
		FAIL();
	return real_(fd);
}

int
close(int fd)
{
	REAL(close);
	if (hit_fd(C_CLOSE, fd)) {
		real_(fd);
		FAIL();
	}
	return real_(fd);
}

static mode_t
mode_arg(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return va_arg(ap, mode_t);
	return 0;
}

int
open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	REAL(open);
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (hit_at(C_OPEN, AT_FDCWD, path, AT_FDCWD, NULL))
		FAIL();
	return real_(path, flags, mode);
}

int
openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	REAL(openat);
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (hit_at(C_OPENAT, dirfd, path, AT_FDCWD, NULL))
		FAIL();
	return real_(dirfd, path, flags, mode);
}

/* open64/openat64 are the same symbols on 64-bit glibc; keep them covered. */
int open64(const char *, int, ...) __attribute__((alias("open")));
int openat64(int, const char *, int, ...) __attribute__((alias("openat")));

int
rename(const char *a, const char *b)
{
	REAL(rename);
	if (hit_at(C_RENAME, AT_FDCWD, a, AT_FDCWD, b))
		FAIL();
	return real_(a, b);
}

int
renameat(int d1, const char *a, int d2, const char *b)
{
	REAL(renameat);
	if (hit_at(C_RENAMEAT, d1, a, d2, b))
		FAIL();
	return real_(d1, a, d2, b);
}

int
renameat2(int d1, const char *a, int d2, const char *b, unsigned int flags)
{
	REAL(renameat2);
	if (hit_at(C_RENAMEAT2, d1, a, d2, b))
		FAIL();
	return real_(d1, a, d2, b, flags);
}

int
linkat(int d1, const char *a, int d2, const char *b, int flags)
{
	REAL(linkat);
	if (hit_at(C_LINKAT, d1, a, d2, b))
		FAIL();
	return real_(d1, a, d2, b, flags);
}

int
unlinkat(int dirfd, const char *path, int flags)
{
	REAL(unlinkat);
	if (hit_at(C_UNLINKAT, dirfd, path, AT_FDCWD, NULL))
		FAIL();
	return real_(dirfd, path, flags);
}
