/*
 * t_cli.c: the harness behind the suites that drive $CHUTE_BIN (t_cli.h
 * has the contracts).  One test at a time runs in a process of its own
 * (Check's fork mode), so the state of the running test is plain globals.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "t_cli.h"
#include "t_spool.h"

struct t_cli T;

/* What the test started, for t_kill_all() and t_log_of(). */
static struct t_proc	 procs[T_MAXPROCS];
static int		 nprocs;
static int		 ncmd;		/* numbers each command's output files */

/* ---- time ---- */

int64_t
t_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
t_nap(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* ---- paths and files ---- */

/* printf into one of a ring of buffers: good for a few paths per statement. */
char *
P(const char *fmt, ...)
{
	static char buf[32][PATH_MAX];
	static int next;
	char *b = buf[next++ % 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, PATH_MAX, fmt, ap);
	va_end(ap);
	return b;
}

void
t_write(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(data);

	EXPECT(fd != -1, "open %s: %s", path, strerror(errno));
	EXPECT(write(fd, data, len) == (ssize_t)len, "write %s: %s", path,
	    strerror(errno));
	close(fd);
}

/* The whole file as a malloc'd string, or NULL if it cannot be opened. */
char *
t_slurp(const char *path)
{
	size_t cap = 4096, len = 0;
	char *buf;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	close(fd);
	EXPECT(buf != NULL, "out of memory reading %s", path);
	buf[len] = '\0';
	return buf;
}

bool
t_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/*
 * Entries in dir, those starting with '.' only if dots (never . and ..);
 * -1 if dir cannot be read.
 */
static int
t_count(const char *dir, bool dots)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' || (dots &&
		    strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0))
			n++;
	closedir(d);
	return n;
}

int
t_count_state(const char *state)
{
	return t_count(P("%s/%s", T.spool, state), false);
}

int
t_entries(const char *dir)
{
	return t_count(dir, true);
}

/* Name of the only non-dot entry in dir other than except, or NULL. */
char *
t_other_entry(const char *dir, const char *except)
{
	static char name[NAME_MAX + 1];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, except) == 0)
			continue;
		snprintf(name, sizeof name, "%s", de->d_name);
		n++;
	}
	closedir(d);
	return n == 1 ? name : NULL;
}

void
t_set_mtime(const char *path, int64_t epoch_ms)
{
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = epoch_ms / 1000;
	ts[0].tv_nsec = ts[1].tv_nsec = (epoch_ms % 1000) * 1000000;
	EXPECT(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0,
	    "utimensat %s: %s", path, strerror(errno));
}

int64_t
t_mtime_ms(const char *path)
{
	struct stat st;

	EXPECT(lstat(path, &st) == 0, "stat %s: %s", path, strerror(errno));
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* The submission protocol for writers without chute: tmp/NAME, then mv. */
void
t_drop(const char *name, const char *content)
{
	t_write(SP("tmp", name), content);
	EXPECT(rename(SP("tmp", name), SP("new", name)) == 0,
	    "rename tmp/%s -> new/%s: %s", name, name, strerror(errno));
}

/* In which state directories does id exist?  A count, and the last one. */
int
t_where(const char *id, const char **state)
{
	static const char *const states[] = { "tmp", "new", "cur", "defer", "done", "failed" };
	int n = 0;

	*state = "nowhere";
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
		if (t_exists(SP(states[i], id))) {
			*state = states[i];
			n++;
		}
	return n;
}

/* ---- text ---- */

/* Is tok a whitespace-delimited word of text? */
bool
t_token(const char *text, const char *tok)
{
	size_t len = strlen(tok);
	const char *p = text;

	if (text == NULL)
		return false;
	while ((p = strstr(p, tok)) != NULL) {
		bool start = p == text || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n';
		char end = p[len];

		if (start && (end == '\0' || end == ' ' || end == '\t' || end == '\n'))
			return true;
		p++;
	}
	return false;
}

/* Does the decimal number n appear in text, not as part of a longer number? */
bool
t_number_in(const char *text, long n)
{
	char num[32];
	const char *p = text;
	size_t len;

	len = (size_t)snprintf(num, sizeof num, "%ld", n);
	while (text != NULL && (p = strstr(p, num)) != NULL) {
		if ((p == text || p[-1] < '0' || p[-1] > '9') &&
		    (p[len] < '0' || p[len] > '9'))
			return true;
		p++;
	}
	return false;
}

/* Line n (0-based) of text, without its newline, or NULL. */
char *
t_line(const char *text, int n)
{
	static char line[4][4096];
	static int next;
	char *b = line[next++ % 4];
	const char *end;

	for (; n > 0; n--) {
		if ((text = strchr(text, '\n')) == NULL)
			return NULL;
		text++;
	}
	if (*text == '\0')
		return NULL;
	end = strchr(text, '\n');
	snprintf(b, 4096, "%.*s", (int)(end ? end - text : (ptrdiff_t)strlen(text)), text);
	return b;
}

int
t_nlines(const char *text)
{
	int n = 0;

	while (t_line(text, n) != NULL)
		n++;
	return n;
}

/* The first line of text whose first word is word, or NULL. */
char *
t_line_of(const char *text, const char *word)
{
	size_t len = strlen(word);
	char *l;

	for (int i = 0; (l = t_line(text, i)) != NULL; i++)
		if (strncmp(l, word, len) == 0 && (l[len] == ' ' || l[len] == '\0'))
			return l;
	return NULL;
}

/* The last whitespace-delimited word of line. */
const char *
t_last_word(const char *line)
{
	const char *p = line + strlen(line);

	while (p > line && p[-1] != ' ' && p[-1] != '\t')
		p--;
	return p;
}

bool
t_id_charset_ok(const char *id)
{
	if (*id == '\0' || *id == '.')
		return false;
	for (; *id; id++)
		if (!(*id >= 'a' && *id <= 'z') && !(*id >= 'A' && *id <= 'Z') &&
		    !(*id >= '0' && *id <= '9') && *id != '.' && *id != '_' && *id != '-')
			return false;
	return true;
}

const char *
t_snip(const char *s)
{
	static char buf[4][1100];
	static int next;
	char *b = buf[next++ % 4];
	size_t len;

	if (s == NULL)
		return "(none)";
	len = strlen(s);
	snprintf(b, sizeof buf[0], "%.1000s%s", s, len > 1000 ? "...(cut)" : "");
	return b;
}

/* ---- processes ---- */

struct t_proc *
t_proc_of(pid_t pid)
{
	for (int i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	return NULL;
}

static int
t_decode(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/*
 * In the child: open path for one of its standard descriptors, above 2 and
 * close-on-exec, so that the dup2() onto 0, 1 or 2 is the only copy exec
 * keeps, even when the test process runs with one of 0-2 closed.
 */
static int
t_child_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644), high;

	if (fd == -1 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return high;
}

/*
 * execv(2) takes char *const[] for historical reasons and writes nothing
 * through it; the union says so without a cast that drops const.
 */
static void
t_execv(const char *const argv[])
{
	union {
		const char *const	*in;
		char *const		*out;
	} av = { .in = argv };

	execv(argv[0], av.out);
}

/*
 * fork and exec argv with stdin from in (or /dev/null), stdout and stderr
 * appended to out and err (which may be the same path), in cwd if given.
 * The child dies with us (PR_SET_PDEATHSIG), so a test that fails or times
 * out leaves no owner behind.
 */
pid_t
t_spawn(const char *const argv[], const char *in, const char *out,
    const char *err, const char *cwd)
{
	pid_t parent = getpid(), pid;
	sigset_t none;

	EXPECT((pid = fork()) != -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		int fd0, fd1, fd2;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		fd0 = t_child_open(in ? in : "/dev/null", O_RDONLY);
		fd1 = t_child_open(out, O_WRONLY | O_CREAT | O_APPEND);
		fd2 = strcmp(out, err) == 0 ? fcntl(fd1, F_DUPFD_CLOEXEC, 3) :
		    t_child_open(err, O_WRONLY | O_CREAT | O_APPEND);
		if (fd0 == -1 || fd1 == -1 || fd2 == -1 || dup2(fd0, 0) == -1 ||
		    dup2(fd1, 1) == -1 || dup2(fd2, 2) == -1)
			_exit(127);
		if (cwd != NULL && chdir(cwd) == -1)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		t_execv(argv);
		_exit(127);
	}
	EXPECT(nprocs < T_MAXPROCS, "too many processes in one test");
	procs[nprocs].pid = pid;
	procs[nprocs].live = true;
	snprintf(procs[nprocs].log, PATH_MAX, "%s", out);
	nprocs++;
	return pid;
}

/* The last 2000 bytes of a process's output, for failure messages. */
const char *
t_log_of(pid_t pid)
{
	static char snip[2048];
	struct t_proc *p = t_proc_of(pid);
	char *all = p ? t_slurp(p->log) : NULL;
	size_t len = all ? strlen(all) : 0;

	snprintf(snip, sizeof snip, "%s%s", len > 2000 ? "...\n" : "",
	    all == NULL ? "(no output)" : len > 2000 ? all + len - 2000 : all);
	free(all);
	return snip;
}

int
t_log_count(pid_t pid, const char *text)
{
	struct t_proc *p = t_proc_of(pid);
	char *all = p ? t_slurp(p->log) : NULL;
	int n = 0;

	for (const char *c = all; c != NULL && (c = strstr(c, text)) != NULL;
	    c += strlen(text))
		n++;
	free(all);
	return n;
}

/* 0 while pid runs; otherwise reap it and return its exit code (128+sig). */
int
t_poll_exit(pid_t pid, int *code)
{
	struct t_proc *p = t_proc_of(pid);
	int st;

	if (p != NULL && !p->live)
		return 1;	/* already reaped; *code was reported then */
	if (waitpid(pid, &st, WNOHANG) != pid)
		return 0;
	if (p != NULL)
		p->live = false;
	*code = t_decode(st);
	return 1;
}

/* Wait up to timeout_ms for our child pid to exit; its exit code (128+sig). */
int
t_reap(pid_t pid, int timeout_ms, const char *what)
{
	int64_t deadline = t_mono() + timeout_ms;
	int code = -1;

	while (!t_poll_exit(pid, &code)) {
		EXPECT(t_mono() < deadline, "%s (pid %d) did not exit within %d ms;"
		    " output so far:\n%s", what, (int)pid, timeout_ms, t_log_of(pid));
		t_nap();
	}
	return code;
}

/* pid's process title (setproctitle), NULs as spaces; "" if gone. */
const char *
t_title(pid_t pid)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(P("/proc/%d/cmdline", (int)pid), O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd == -1)
		return buf;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n < 0)
		n = 0;
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}

/* Does pid exist and is it not a zombie?  (Works for non-children.) */
bool
t_alive(pid_t pid)
{
	char *stat, *rp;
	bool alive;

	if (pid <= 0 || kill(pid, 0) == -1)
		return false;
	if ((stat = t_slurp(P("/proc/%d/stat", (int)pid))) == NULL)
		return false;
	rp = strrchr(stat, ')');
	alive = rp != NULL && rp[1] == ' ' && rp[2] != 'Z';
	free(stat);
	return alive;
}

/* pids a handler recorded, one a line, in root/name. */
int
t_read_pids(const char *name, pid_t *pids, int max)
{
	char *text = t_slurp(RP(name)), *p, *end;
	int n = 0;

	if (text == NULL)
		return 0;
	for (p = text; n < max; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0)
			pids[n++] = (pid_t)v;
	}
	free(text);
	return n;
}

/*
 * Stop everything the test started: our children (owners, waits), then the
 * handlers they left (each records its pid in root/hpids and stops once
 * root/release exists, or after a bounded while on its own).
 */
void
t_kill_all(void)
{
	pid_t pids[256];
	int n;

	for (int i = 0; i < nprocs; i++)
		if (procs[i].live) {
			kill(procs[i].pid, SIGCONT);
			kill(procs[i].pid, SIGKILL);
			waitpid(procs[i].pid, NULL, 0);
			procs[i].live = false;
		}
	if (T.root[0] == '\0')
		return;
	close(open(RP("release"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	n = t_read_pids("hpids", pids, 256);
	for (int i = 0; i < n; i++) {
		kill(-pids[i], SIGKILL);
		kill(pids[i], SIGKILL);
	}
}

/* "chute ARG ARG ..." for messages, shortened to fit. */
static const char *
t_cmdline(const char *const argv[])
{
	static char line[512];
	size_t len;

	snprintf(line, sizeof line, "chute");
	for (int i = 1; argv[i] != NULL; i++) {
		len = strlen(line);
		snprintf(line + len, sizeof line - len, " %s", argv[i]);
	}
	return line;
}

/* Run $CHUTE_BIN with the NULL-terminated arguments; output into T.out/T.err. */
static int
t_vchute(const char *in, int timeout_ms, const char *first, va_list ap)
{
	const char *argv[128];
	char *out, *err, *text;
	int argc = 0, code;
	pid_t pid;

	argv[argc++] = T.bin;
	for (const char *a = first; a != NULL && argc < 127; a = va_arg(ap, const char *))
		argv[argc++] = a;
	argv[argc] = NULL;
	ncmd++;
	out = strdup(RP(P("cmd.%d.out", ncmd)));
	err = strdup(RP(P("cmd.%d.err", ncmd)));
	pid = t_spawn(argv, in, out, err, NULL);
	code = t_reap(pid, timeout_ms, t_cmdline(argv));
	text = t_slurp(out);
	snprintf(T.out, sizeof T.out, "%s", text ? text : "");
	free(text);
	text = t_slurp(err);
	snprintf(T.err, sizeof T.err, "%s", text ? text : "");
	free(text);
	free(out);
	free(err);
	return code;
}

int
t_chute(const char *in, const char *first, ...)
{
	va_list ap;
	int code;

	va_start(ap, first);
	code = t_vchute(in, T_CMD_MS, first, ap);
	va_end(ap);
	return code;
}

/*
 * Run $CHUTE_BIN with the NULL-terminated arguments, its stdout a terminal
 * (a pty of its own; stdin and stderr /dev/null): what it wrote there (the
 * terminal's own "\r" before each "\n" included) into T.out.  Its exit
 * code; fails the test if it runs past T_CMD_MS.
 */
int
t_chute_tty(const char *first, ...)
{
	const char *argv[64];
	int argc = 0, m, code;
	size_t got = 0;
	int64_t deadline = t_mono() + T_CMD_MS;
	va_list ap;
	pid_t pid;

	argv[argc++] = T.bin;
	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 63; a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	EXPECT(m != -1 && grantpt(m) == 0 && unlockpt(m) == 0, "pty: %s",
	    strerror(errno));
	if ((pid = fork()) == 0) {
		int s = open(ptsname(m), O_RDWR | O_CLOEXEC), nul;

		setsid();
		nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (s == -1 || nul == -1 || dup2(nul, 0) == -1 ||
		    dup2(s, 1) == -1 || dup2(nul, 2) == -1)
			_exit(127);
		t_execv(argv);
		_exit(127);
	}
	EXPECT(pid > 0, "fork: %s", strerror(errno));
	/* Until the last writer closes the terminal: EIO on Linux. */
	for (;;) {
		struct pollfd pfd = { .fd = m, .events = POLLIN };
		ssize_t n;

		EXPECT(t_mono() < deadline, "%s did not finish in %d ms", argv[1],
		    T_CMD_MS);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(m, T.out + got, sizeof(T.out) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(T.out) - 1)
			break;
	}
	T.out[got] = '\0';
	close(m);
	code = t_reap(pid, T_CMD_MS, argv[1]);
	return code;
}

/* argv[] = { bin, "run", spoolarg, first, ..., NULL } from the va_list. */
static void
t_run_argv(const char *argv[128], const char *bin, const char *spoolarg,
    const char *first, va_list ap)
{
	int argc = 0;

	argv[argc++] = bin;
	argv[argc++] = "run";
	argv[argc++] = spoolarg;
	for (const char *a = first; a != NULL && argc < 127; a = va_arg(ap, const char *))
		argv[argc++] = a;
	argv[argc] = NULL;
}

/* A new owner's output file, T.root/owner.N.log (a static buffer). */
static const char *
t_owner_log(void)
{
	static char log[PATH_MAX];

	snprintf(log, sizeof log, "%s/owner.%d.log", T.root, ++ncmd);
	return log;
}

/* Start `chute run SPOOLARG ARGS...` in the background, in cwd if given. */
pid_t
t_owner(const char *cwd, const char *spoolarg, const char *first, ...)
{
	const char *argv[128], *log;
	va_list ap;

	va_start(ap, first);
	t_run_argv(argv, T.bin, spoolarg, first, ap);
	va_end(ap);
	log = t_owner_log();
	return t_spawn(argv, NULL, log, log, cwd);
}

/* SIGTERM an owner; it must exit within 10 s.  Its exit code. */
int
t_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	return t_reap(pid, 10000, "owner after SIGTERM");
}

/* Does /proc/locks show a flock on the spool directory held by pid? */
bool
t_lock_held_by(pid_t pid)
{
	char line[512], type[32], arrow[32];
	unsigned long ino;
	unsigned maj, min;
	struct stat st;
	long lpid;
	FILE *f;
	bool held = false;

	if (stat(T.spool, &st) == -1 || (f = fopen("/proc/locks", "re")) == NULL)
		return false;
	while (!held && fgets(line, sizeof line, f) != NULL) {
		/* "1: FLOCK  ADVISORY  WRITE 3418 fe:00:10952941 0 EOF"; waiters have "->" */
		if (sscanf(line, "%*d: %31s %31s %*s %ld %x:%x:%lu", type, arrow,
		    &lpid, &maj, &min, &ino) == 6 && strcmp(type, "FLOCK") == 0 &&
		    lpid == pid && ino == st.st_ino)
			held = true;
	}
	fclose(f);
	return held;
}

/* Wait until owner pid holds the spool's lock; fail at once if it exits. */
void
t_await_lock(pid_t pid, int timeout_ms)
{
	int64_t deadline = t_mono() + timeout_ms;
	int code;

	while (!t_lock_held_by(pid)) {
		EXPECT(!t_poll_exit(pid, &code), "owner %d exited with %d before"
		    " taking the spool lock:\n%s", (int)pid, code, t_log_of(pid));
		EXPECT(t_mono() < deadline, "owner %d did not take the flock on %s"
		    " within %d ms:\n%s", (int)pid, T.spool, timeout_ms, t_log_of(pid));
		t_nap();
	}
}

/* chute wait --timeout for one job; fails if it times out.  0 done, 1 failed. */
int
t_await(const char *id, int timeout_ms)
{
	char tmo[32];
	const char *where;
	int code;

	snprintf(tmo, sizeof tmo, "%dms", timeout_ms);
	code = CHUTE("wait", T.spool, "--timeout", tmo, id);
	t_where(id, &where);
	EXPECT(code != 124, "job %s did not reach done/ or failed/ within %d ms"
	    " (chute wait timed out); it is in %s/", id, timeout_ms, where);
	EXPECT(code == 0 || code == 1, "chute wait %s exited %d: %s", id, code, T.err);
	EXPECT(strcmp(where, code == 0 ? "done" : "failed") == 0,
	    "chute wait %s exited %d but the job is in %s/", id, code, where);
	return code;
}

/* ---- the handlers' journal: one "ID ATTEMPT [more]" line per start ---- */

int
t_journal_count(const char *id)
{
	char *text = t_slurp(RP("journal")), *l;
	int n = 0;

	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL; i++)
		if (t_line_of(l, id) != NULL)
			n++;
	free(text);
	return n;
}

bool
t_journal_has(const char *id, int attempt)
{
	char *text = t_slurp(RP("journal")), *l, want[512];
	bool found = false;

	snprintf(want, sizeof want, "%s %d", id, attempt);
	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL; i++)
		if (strncmp(l, want, strlen(want)) == 0 &&
		    (l[strlen(want)] == '\0' || l[strlen(want)] == ' '))
			found = true;
	free(text);
	return found;
}

int
t_journal_total(void)
{
	char *text = t_slurp(RP("journal"));
	int n = text ? t_nlines(text) : 0;

	free(text);
	return n;
}

/* Write an executable /bin/sh handler into the test directory; R is its root. */
const char *
t_handler(const char *name, const char *body)
{
	char *path = strdup(RP(name));
	FILE *f = fopen(path, "we");

	EXPECT(f != NULL, "create %s: %s", path, strerror(errno));
	fprintf(f, "#!/bin/sh\nR='%s'\n%s", T.root, body);
	EXPECT(fclose(f) == 0 && chmod(path, 0755) == 0, "write %s", path);
	return path;
}

/* Records "ID ATTEMPT" and keeps a copy of what it read on stdin in seen/ID. */
const char *
h_journal(void)
{
	return t_handler("h_journal",
	    "cat > \"$R/seen/$CHUTE_ID.part\" && mv \"$R/seen/$CHUTE_ID.part\" \"$R/seen/$CHUTE_ID\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n");
}

/* Records its start, then blocks until root/release exists (30 s at most: exit 99). */
const char *
h_block(void)
{
	return t_handler("h_block",
	    "echo $$ >> \"$R/hpids\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
	    "i=0\n"
	    "while [ ! -e \"$R/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
	    "[ -e \"$R/release\" ] || exit 99\n");
}

/* The pid h_block recorded for id, from its journal line. */
pid_t
t_handler_pid(const char *id)
{
	char *text = t_slurp(RP("journal")), *l;
	long pid = 0;

	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL; i++)
		if (t_line_of(l, id) != NULL)
			sscanf(t_last_word(l), "%ld", &pid);
	free(text);
	return (pid_t)pid;
}

void
t_release(void)
{
	t_write(RP("release"), "");
}

size_t
t_inline_payload(const char *id, char **body)
{
	static const char nul[] = "a\0b\n\0\tx\t5\nhello\0";
	size_t len;
	char *b;

	if (strstr(id, "nul") != NULL) {
		len = sizeof(nul);	/* with its last NUL */
		b = malloc(len);
		memcpy(b, nul, len);
	} else if (strstr(id, "empty") != NULL) {
		len = 0;
		b = malloc(1);
	} else if (strstr(id, "big") != NULL) {
		uint32_t x = 2463534242u;	/* xorshift: bytes of every value */

		len = 1048576 + 7;
		b = malloc(len);
		for (size_t i = 0; b != NULL && i < len; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[i] = i % 4096 == 0 ? '\0' : (char)x;
		}
	} else {
		len = 2;
		b = strdup("x\n");
	}
	EXPECT(b != NULL, "out of memory");
	*body = b;
	return len;
}

void
t_inline_submit(const char *store, const char *id)
{
	const char *in = RP(P("in.%s", id));
	char *body;
	size_t len = t_inline_payload(id, &body);
	int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	EXPECT(fd != -1 && write(fd, body, len) == (ssize_t)len &&
	    close(fd) == 0, "write %s: %s", in, strerror(errno));
	free(body);
	EXPECT(CHUTE_IN(in, "submit", store, "--id", id) == 0 &&
	    t_line_of(T.out, id) != NULL, "submit %s: %s%s", id, T.out, T.err);
}

bool
t_inline_received(const char *id)
{
	char *body, *got = malloc(1048576 + 64);
	size_t len = t_inline_payload(id, &body);
	int fd = open(RP(P("got.%s", id)), O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, k;
	bool same;

	while (got != NULL && fd != -1 && (size_t)n < 1048576 + 64 &&
	    (k = read(fd, got + n, 1048576 + 64 - n)) > 0)
		n += k;
	same = fd != -1 && got != NULL && (size_t)n == len &&
	    memcmp(got, body, len) == 0;
	if (fd != -1)
		close(fd);
	free(got);
	free(body);
	return same;
}

const char *
t_inline_worker(void)
{
	return t_handler("w_inline",
	    "echo $$ >> \"$R/wpids\"\n"
	    "[ \"$CHUTE_INLINE\" = 1 ] || exit 9\n"
	    "tab=$(printf '\\t')\n"
	    "while IFS=\"$tab\" read -r id len; do\n"
	    "  echo \"$id $len\" >> \"$R/wj\"\n"
	    "  [ -z \"$RUNTIME_DIRECTORY\" ] ||\n"
	    "    find \"$RUNTIME_DIRECTORY\" -type f | wc -l > \"$R/local.$id\"\n"
	    "  case $id in\n"
	    "  half*) head -c $((len / 2)) > /dev/null; echo ok read half;\n"
	    "    kill -STOP $$ ;;\n"
	    "  early*) echo ok read nothing; kill -STOP $$ ;;\n"
	    "  die*) head -c $((len / 2)) > /dev/null; exit 3 ;;\n"
	    "  *) head -c \"$len\" > \"$R/got.$id\"; echo ok ;;\n"
	    "  esac\n"
	    "done\n");
}

/* Whole reads around each kind of worker that breaks off: none may spill. */
static const char *const inline_ids[] = {
	"nul", "empty", "big", "x1", "half-x", "x2", "half-big", "x3",
	"early-big", "x4", "die-big", "x5",
};
#define NINLINE	(sizeof(inline_ids) / sizeof(inline_ids[0]))

void
t_inline_submit_all(const char *store)
{
	for (size_t i = 0; i < NINLINE; i++)
		t_inline_submit(store, inline_ids[i]);
}

/* `chute status STORE id` says state and attempts=n (and more, if not NULL). */
static void
inline_status(const char *store, const char *id, const char *state, int n,
    const char *more)
{
	EXPECT(CHUTE("status", store, id) == 0 && t_token(T.out, state) &&
	    t_token(T.out, P("attempts=%d", n)) &&
	    (more == NULL || strstr(T.out, more) != NULL),
	    "status %s: want %s attempts=%d %s: %s%s", id, state, n,
	    more ? more : "", T.out, T.err);
}

void
t_inline_expect(const char *store, pid_t owner, bool local)
{
	char *wj = t_slurp(RP("wj")), *body;
	int lines = 0, unread = 0;

	for (size_t i = 0; i < NINLINE; i++) {
		const char *id = inline_ids[i];

		if (strncmp(id, "die", 3) == 0)
			inline_status(store, id, "failed", 2, "worker-died");
		else if (strncmp(id, "half", 4) == 0)
			inline_status(store, id, "done", 1, "reply=ok");
		else if (strncmp(id, "early", 5) == 0)
			inline_status(store, id, "done", 1, "reply=ok");
		else {
			inline_status(store, id, "done", 1, NULL);
			EXPECT(t_inline_received(id), "%s did not arrive whole",
			    id);
		}
		/* Every head the workers read is a job's, with its length. */
		EXPECT(wj != NULL && strstr(wj, P("%s %zu\n", id,
		    t_inline_payload(id, &body))) != NULL, "no head \"%s\" in "
		    "%s", id, t_snip(wj));
		free(body);
	}
	lines = wj != NULL ? t_nlines(wj) : 0;
	EXPECT(lines == (int)NINLINE + 1, "%d heads read for %zu jobs and one "
	    "retry (a frame misread?):\n%s", lines, NINLINE, t_snip(wj));
	/* Where the workers lived, not one file was made for a job. */
	for (size_t i = 0; local && i < NINLINE; i++) {
		char *n = t_slurp(RP(P("local.%s", inline_ids[i])));

		EXPECT(n != NULL && atoi(n) == 0, "%s: %s local files",
		    inline_ids[i], n ? n : "(not counted)");
		free(n);
	}
	/* Stopped (and started again) after each answer with bytes unread. */
	unread = t_log_count(owner, "of its job unread");
	EXPECT(unread == 3 && t_log_count(owner, "answer before its whole "
	    "job") == 3, "%d answers said to leave bytes unread:\n%s",
	    unread, t_log_of(owner));
	free(wj);
}

/* Submit stdin content under --id; exit 0 and that ID on stdout expected. */
void
t_submit_as(const char *id, const char *content)
{
	const char *in = RP(P("in.%s", id));
	int code;

	t_write(in, content);
	code = CHUTE_IN(in, "submit", T.spool, "--id", id);
	EXPECT(code == 0, "chute submit --id %s exited %d: %s", id, code, T.err);
	EXPECT(t_line_of(T.out, id) != NULL, "chute submit --id %s printed '%s'",
	    id, T.out);
}

/* `chute status SPOOL id` must succeed; its line for id. */
char *
t_status(const char *id)
{
	static char line[4096];
	char *l;
	int code = CHUTE("status", T.spool, id);

	EXPECT(code == 0, "chute status %s exited %d: %s", id, code, T.err);
	l = t_line_of(T.out, id);
	EXPECT(l != NULL, "chute status %s printed no line for it: '%s'", id, T.out);
	snprintf(line, sizeof line, "%s", l);
	return line;
}

/* ---- fixture ---- */

void
t_cli_setup(void)
{
	char tmpl[PATH_MAX], real[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	int code;

	memset(&T, 0, sizeof T);
	T.bin = getenv("CHUTE_BIN");
	ck_assert_msg(T.bin != NULL && T.bin[0] == '/',
	    "CHUTE_BIN must be the absolute path of build/chute (make check sets it)");
	ck_assert_msg(access(T.bin, X_OK) == 0, "%s: %s", T.bin, strerror(errno));
	snprintf(tmpl, sizeof tmpl, "%s/chute-cli.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp: %s", strerror(errno));
	ck_assert_msg(realpath(tmpl, real) != NULL && strlen(real) < sizeof T.root,
	    "realpath %s", tmpl);
	memcpy(T.root, real, strlen(real) + 1);
	snprintf(T.spool, sizeof T.spool, "%s/spool", T.root);
	ck_assert_msg(mkdir(RP("seen"), 0755) == 0, "mkdir seen");
	code = CHUTE("init", T.spool);
	EXPECT(code == 0, "chute init %s exited %d: %s", T.spool, code, T.err);
}

/*
 * A directory that cannot be removed (something the test could not stop
 * still writes into it) is reported, not failed: the test itself passed.
 */
void
t_cli_teardown(void)
{
	t_kill_all();
	if (T.root[0] != '\0' && t_rmtree(T.root) == -1)
		fprintf(stderr, "check_cli: could not remove %s: %s\n", T.root,
		    strerror(errno));
}

/* A test case of a CLI-level suite: its fixture, and how long a test may take. */
TCase *
t_tcase(SFun setup, SFun teardown, const char *name, int timeout)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, timeout);
	return tc;
}


/* ---- other users ---- */

static const char *const t_user_names[] = { "chute-t-own", "chute-t-eve",
    "chute-t-bob" };

static bool
t_run_quiet(const char *const argv[])
{
	pid_t pid = t_spawn(argv, NULL, RP("useradd.log"), RP("useradd.log"), NULL);

	return t_reap(pid, T_CMD_MS, argv[0]) == 0;
}

/* The group and the three users exist (made here if they did not). */
static bool
t_users_made(void)
{
	const char *ga[] = { "/usr/sbin/groupadd", "-r", T_SUBS, NULL };
	char groups[64];

	if (getgrnam(T_SUBS) == NULL && !t_run_quiet(ga))
		return false;
	for (size_t i = 0; i < sizeof t_user_names / sizeof t_user_names[0]; i++) {
		/* The owner is in the group too: chute init --group needs it. */
		const char *ua[] = { "/usr/sbin/useradd", "-r", "-M", "-d",
		    "/nonexistent", "-s", "/usr/sbin/nologin", "-G", T_SUBS,
		    t_user_names[i], NULL };

		if (getpwnam(t_user_names[i]) == NULL && !t_run_quiet(ua))
			return false;
	}
	snprintf(groups, sizeof groups, "%s", T_SUBS);
	return getgrnam(groups) != NULL;
}

bool
t_users(void)
{
	if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) == -1 ||
	    access("/usr/sbin/useradd", X_OK) == -1) {
		fprintf(stderr, "skipped: other users need root, setpriv and "
		    "useradd\n");
		return false;
	}
	if (!t_users_made()) {
		fprintf(stderr, "skipped: cannot make the test users: %s\n",
		    t_snip(t_slurp(RP("useradd.log"))));
		return false;
	}
	return true;
}

uid_t
t_uid(const char *who)
{
	struct passwd *pw = getpwnam(who);

	EXPECT(pw != NULL, "no user %s", who);
	return pw->pw_uid;
}

gid_t
t_subs_gid(void)
{
	struct group *gr = getgrnam(T_SUBS);

	EXPECT(gr != NULL, "no group %s", T_SUBS);
	return gr->gr_gid;
}

/* chown -R, not following symlinks. */
static void
t_chown_tree(const char *path, uid_t uid, gid_t gid)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	EXPECT(lchown(path, uid, gid) == 0, "chown %s: %s", path, strerror(errno));
	if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode))
		return;
	/* chown clears set-group-ID: the spool's directories keep theirs. */
	EXPECT(chmod(path, st.st_mode & 07777) == 0, "chmod %s", path);
	EXPECT((d = opendir(path)) != NULL, "opendir %s", path);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, ".."))
			t_chown_tree(P("%s/%s", path, de->d_name), uid, gid);
	closedir(d);
}

/*
 * T.spool made again by `chute init --group chute-t-subs` and given to
 * chute-t-own, as a packaged spool is; T.root and a copy of $CHUTE_BIN
 * (T.root/bin/chute: the build tree may be closed to other users) made
 * reachable.  Call after t_users().
 */
void
t_group_spool(void)
{
	const char *rm[] = { "/bin/rm", "-rf", T.spool, NULL };
	const char *cp[] = { "/bin/cp", T.bin, RP("bin/chute"), NULL };
	int code;

	EXPECT(chmod(T.root, 0755) == 0, "chmod %s", T.root);
	EXPECT(t_run_quiet(rm), "rm -rf %s", T.spool);
	code = CHUTE("init", "--group", T_SUBS, T.spool);
	EXPECT(code == 0, "chute init --group: %d %s", code, T.err);
	t_chown_tree(T.spool, t_uid("chute-t-own"), t_subs_gid());
	EXPECT(mkdir(RP("bin"), 0755) == 0 && t_run_quiet(cp), "copy %s", T.bin);
	EXPECT(chmod(RP("seen"), 0777) == 0, "chmod seen");
}

/* t_spawn, as user who with the group as its groups (setpriv). */
pid_t
t_spawn_as(const char *who, const char *const argv[], const char *in,
    const char *out, const char *err, const char *cwd)
{
	const char *av[140];
	char u[32], g[32], gs[32];
	int n = 0;

	snprintf(u, sizeof u, "--reuid=%ld", (long)t_uid(who));
	snprintf(g, sizeof g, "--regid=%ld", (long)t_subs_gid());
	snprintf(gs, sizeof gs, "--groups=%ld", (long)t_subs_gid());
	av[n++] = "/usr/bin/setpriv";
	av[n++] = u;
	av[n++] = g;
	av[n++] = gs;
	av[n++] = "--";
	for (int i = 0; argv[i] != NULL && n < 139; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	return t_spawn(av, in, out, err, cwd);
}

/* `chute run T.spool ARGS...` as who, from T.root/bin/chute. */
pid_t
t_owner_as(const char *who, const char *first, ...)
{
	const char *argv[128], *log;
	va_list ap;

	va_start(ap, first);
	t_run_argv(argv, strdup(RP("bin/chute")), T.spool, first, ap);
	va_end(ap);
	log = t_owner_log();
	return t_spawn_as(who, argv, NULL, log, log, NULL);
}

/* sh -c script as who, in T.spool; its exit code, within timeout_ms. */
int
t_sh_as(const char *who, int timeout_ms, const char *script)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	char *log = RP(P("sh.%d.log", ++ncmd));
	pid_t pid = t_spawn_as(who, argv, NULL, log, log, T.spool);

	return t_reap(pid, timeout_ms, script);
}
