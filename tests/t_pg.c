/*
 * t_pg.c: a throwaway PostgreSQL cluster for the tests, on a Unix socket in
 * a mkdtemp(3) directory, driven by initdb, pg_ctl and psql (t_pg.h has the
 * contracts and the layout on disk).  Every child gets exactly stdin,
 * stdout and stderr, and nothing else of ours.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "t_pg.h"
#include "t_spool.h"

#define PG_ERRMAX	4096
#define PG_WHYMAX	3400	/* Check refuses messages over 4 KiB */
#define PG_INITDB_MS	120000
#define PG_CTL_MS	((T_PG_CTL_S + 30) * 1000)
#define PG_KILL_MS	10000	/* from SIGQUIT until all are gone */
#define PG_MAXGROUPS	64
#define PG_ADMIN_DB	"postgres"

/* Who removes a directory if its starter dies: see pg_watchdog_main(). */
struct pg_watchdog {
	pid_t	 pid;
	int	 fd;			/* our end of its pipe */
};

/* The installation: where the server's programs are, who runs them. */
static struct {
	bool	 looked, ok;
	char	 reason[600];
	char	 bindir[PATH_MAX];
	char	 psql[PATH_MAX + 16];
	bool	 as_other;		/* root: the server is postgres */
	uid_t	 uid;
	gid_t	 gid;
	gid_t	 groups[PG_MAXGROUPS];
	int	 ngroups;
	char	 super[64];		/* the cluster's superuser */
} inst;

/*
 * The cluster this process started; dir is "" when there is none.  Short:
 * the socket's path, in dir, must fit in sun_path's 108 bytes.
 */
static struct {
	char	 dir[128];
	char	 data[160];
	char	 log[160];
	int	 port;
	struct pg_watchdog watchdog;
} pg = { .watchdog.fd = -1 };

/*
 * initdb runs once per process (and the tests Check forks from it): each
 * cluster starts as a copy of this one's data directory, in a fifth of the
 * time.  Its watchdog removes it when the last of those processes ends.
 */
static struct {
	char	 dir[128];		/* "" until made */
	char	 data[160];
	pid_t	 owner;			/* who made it */
	struct pg_watchdog watchdog;
} tmpl = { .watchdog.fd = -1 };

static char	 pg_err[PG_ERRMAX];	/* stderr of the last child */
static char	 pg_why[PG_WHYMAX];	/* what failed in t_pg_start() */

/* ---- small things ---- */

static int64_t
pg_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
pg_nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void
pg_trim(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' ||
	    s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static bool
pg_isdir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool
pg_executable(const char *dir, const char *prog)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof path, "%s/%s", dir, prog);
	return access(path, X_OK) == 0;
}

/* The last max bytes of path, from a line start where possible (static). */
static const char *
pg_tail(const char *path, size_t max)
{
	static char buf[2048];
	char *nl;
	ssize_t n;
	off_t size;
	int fd;

	if (max >= sizeof buf)
		max = sizeof buf - 1;
	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return "(no server.log)";
	size = lseek(fd, 0, SEEK_END);
	if (size > (off_t)max)
		lseek(fd, size - (off_t)max, SEEK_SET);
	else
		lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, max);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (size > (off_t)max && (nl = strchr(buf, '\n')) != NULL)
		return nl + 1;
	return buf;
}

/* Set pg_why, with what the last child said and the end of server.log. */
static int
pg_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
pg_fail(const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(pg_why, sizeof pg_why, fmt, ap);
	va_end(ap);
	n = strlen(pg_why);
	snprintf(pg_why + n, sizeof pg_why - n,
	    "\n%.900s\n--- end of %s:\n%.1600s", pg_err, pg.log,
	    pg.log[0] != '\0' ? pg_tail(pg.log, 1500) : "");
	return -1;
}

/* s as a single-quoted SQL or postgresql.conf literal, in dst. */
static void
pg_quote(char *dst, size_t n, const char *s)
{
	size_t i = 0;

	if (n < 3)
		return;
	dst[i++] = '\'';
	for (; *s != '\0' && i + 3 < n; s++) {
		if (*s == '\'')
			dst[i++] = '\'';
		dst[i++] = *s;
	}
	dst[i++] = '\'';
	dst[i] = '\0';
}

/* s percent-encoded for a URI, keeping only unreserved characters and '/'. */
static void
pg_encode(char *dst, size_t n, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0;

	for (; *s != '\0' && i + 4 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/-._~", c) != NULL) {
			dst[i++] = (char)c;
		} else {
			dst[i++] = '%';
			dst[i++] = hex[c >> 4];
			dst[i++] = hex[c & 15];
		}
	}
	dst[i] = '\0';
}

/* ---- children ---- */

/*
 * execv(2) takes char *const[] for historical reasons and writes nothing
 * through it; the union says so without a cast that drops const.  A bare
 * name (pg_config) is looked up in PATH.
 */
static void
pg_execv(const char *const argv[])
{
	union {
		const char *const	*in;
		char *const		*out;
	} av = { .in = argv };

	if (strchr(argv[0], '/') == NULL)
		execvp(argv[0], av.out);
	else
		execv(argv[0], av.out);
}

/* The server's user, when we are root: set in the child, before exec. */
static int
pg_become_server_user(void)
{
	if (setgroups((size_t)inst.ngroups, inst.groups) == -1 ||
	    setresgid(inst.gid, inst.gid, inst.gid) == -1 ||
	    setresuid(inst.uid, inst.uid, inst.uid) == -1)
		return -1;
	return 0;
}

/*
 * In the child: fd 0 from /dev/null, out and err as 1 and 2, and nothing
 * else open.  Every descriptor of ours is O_CLOEXEC already; closefrom()
 * also drops what we inherited without it (Check's, make's).
 */
static int
pg_child_fds(int out, int err)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null == -1)
		return -1;
	/* Move them above 2 first, so that no dup2() below clobbers another. */
	if ((null = fcntl(null, F_DUPFD, 3)) == -1 ||
	    (out = fcntl(out == -1 ? null : out, F_DUPFD, 3)) == -1 ||
	    (err = fcntl(err == -1 ? null : err, F_DUPFD, 3)) == -1)
		return -1;
	if (dup2(null, 0) == -1 || dup2(out, 1) == -1 || dup2(err, 2) == -1)
		return -1;
	closefrom(3);
	return 0;
}

/*
 * fork and exec argv with stdout to out and stderr to err (-1: /dev/null),
 * as the server's user in the cluster's directory if server is set.  The
 * child dies with us (PR_SET_PDEATHSIG, set after any change of user, which
 * would clear it); a postmaster that pg_ctl forks does not inherit that.
 */
static pid_t
pg_spawn(const char *const argv[], bool server, int out, int err)
{
	static char lc_all[] = "LC_ALL=C";
	pid_t parent = getpid(), pid;
	sigset_t none;

	if ((pid = fork()) != 0)
		return pid;
	if (server && inst.as_other && pg_become_server_user() == -1)
		_exit(126);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent || pg_child_fds(out, err) == -1)
		_exit(127);
	if (server && pg.dir[0] != '\0' && chdir(pg.dir) == -1)
		_exit(127);
	/* Messages in English, whatever the test's locale: tests match them. */
	putenv(lc_all);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	pg_execv(argv);
	_exit(127);
}

/*
 * Wait until deadline for our child pid: its status (128+N for signal N);
 * -1 if it still runs; -2 if it is no child of ours (any more), so that no
 * one sends a signal to a pid that may be another process's now.
 */
static int
pg_wait(pid_t pid, int64_t deadline)
{
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status);
		if (r == -1 && errno != EINTR)
			return -2;
		if (pg_mono() >= deadline)
			return -1;
		pg_nap(r == 0 ? 5 : 0);
	}
}

/* Output kept from a child: the head of stdout, the tail of stderr. */
struct pg_buf {
	char	*p;
	size_t	 len, cap;
	bool	 tail;
};

static void
pg_buf_add(struct pg_buf *b, const char *s, size_t n)
{
	if (b->cap == 0)
		return;
	if (b->tail && n >= b->cap) {
		s += n - (b->cap - 1);
		n = b->cap - 1;
		b->len = 0;
	} else if (b->tail && b->len + n >= b->cap) {
		size_t drop = b->len + n - (b->cap - 1);

		memmove(b->p, b->p + drop, b->len - drop);
		b->len -= drop;
	} else if (b->len + n >= b->cap) {
		n = b->cap - 1 - b->len;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/*
 * Read the child's stdout and stderr pipes until both are at EOF or the
 * deadline.  0, or -1 at the deadline.
 */
static int
pg_drain(int fds[2], struct pg_buf *bufs[2], int64_t deadline)
{
	struct pollfd pfd[2];
	char chunk[4096];
	ssize_t n;
	int i, open_fds = 2, left;

	while (open_fds > 0) {
		if ((left = (int)(deadline - pg_mono())) <= 0)
			return -1;
		for (i = 0; i < 2; i++) {
			pfd[i].fd = fds[i];
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, 2, left) == -1 && errno != EINTR)
			return -1;
		for (i = 0; i < 2; i++) {
			if (fds[i] == -1 || pfd[i].revents == 0)
				continue;
			n = read(fds[i], chunk, sizeof chunk);
			if (n > 0)
				pg_buf_add(bufs[i], chunk, (size_t)n);
			else if (n == 0 || errno != EINTR) {
				close(fds[i]);
				fds[i] = -1;
				open_fds--;
			}
		}
	}
	return 0;
}

/*
 * Run argv to its end (at most timeout_ms), stdout into out (trimmed; out
 * may be NULL), stderr into pg_err.  Its exit status, 128+N for signal N,
 * or -1 (and pg_err says why) when it could not run or did not end in time.
 */
static int
pg_run(const char *const argv[], bool server, int timeout_ms, char *out,
    size_t outlen)
{
	struct pg_buf ob = { out, 0, out != NULL ? outlen : 0, false };
	struct pg_buf eb = { pg_err, 0, sizeof pg_err, true };
	struct pg_buf *bufs[2] = { &ob, &eb };
	int64_t deadline = pg_mono() + timeout_ms;
	int op[2], ep[2], fds[2], status, saved;
	pid_t pid;

	if (out != NULL && outlen > 0)
		out[0] = '\0';
	pg_err[0] = '\0';
	if (pipe2(op, O_CLOEXEC) == -1)
		goto fail;
	if (pipe2(ep, O_CLOEXEC) == -1) {
		close(op[0]);
		close(op[1]);
		goto fail;
	}
	pid = pg_spawn(argv, server, op[1], ep[1]);
	saved = errno;
	close(op[1]);
	close(ep[1]);
	fds[0] = op[0];
	fds[1] = ep[0];
	if (pid == -1) {
		close(op[0]);
		close(ep[0]);
		errno = saved;
		goto fail;
	}
	if (pg_drain(fds, bufs, deadline) == -1 ||
	    (status = pg_wait(pid, deadline)) == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		for (int i = 0; i < 2; i++)
			if (fds[i] != -1)
				close(fds[i]);
		snprintf(pg_err, sizeof pg_err, "%s did not finish within %d ms"
		    " (killed)", argv[0], timeout_ms);
		return -1;
	}
	if (status == -2) {
		snprintf(pg_err, sizeof pg_err, "%s: someone else's waitpid()"
		    " took its exit status", argv[0]);
		return -1;
	}
	if (out != NULL && outlen > 0)
		pg_trim(out);
	pg_trim(pg_err);
	if (status == 127 && pg_err[0] == '\0')
		snprintf(pg_err, sizeof pg_err, "could not run %s", argv[0]);
	if (status == 126 && pg_err[0] == '\0')
		snprintf(pg_err, sizeof pg_err, "could not become the user %s"
		    " to run %s", inst.super, argv[0]);
	return status;
fail:
	snprintf(pg_err, sizeof pg_err, "running %s: %s", argv[0],
	    strerror(errno));
	return -1;
}

/* pg_ctl ACTION [-m mode] on the cluster, as the server's user. */
static int
pg_ctl(const char *action, const char *mode)
{
	char prog[PATH_MAX + 16], secs[16];
	const char *argv[16];
	int n = 0;

	snprintf(prog, sizeof prog, "%s/pg_ctl", inst.bindir);
	snprintf(secs, sizeof secs, "%d", T_PG_CTL_S);
	argv[n++] = prog;
	argv[n++] = "-D";
	argv[n++] = pg.data;
	/* Always a log file: without one the postmaster would keep our pipe. */
	argv[n++] = "-l";
	argv[n++] = pg.log;
	argv[n++] = "-w";
	argv[n++] = "-t";
	argv[n++] = secs;
	if (mode != NULL) {
		argv[n++] = "-m";
		argv[n++] = mode;
	}
	argv[n++] = action;
	argv[n] = NULL;
	return pg_run(argv, true, PG_CTL_MS, NULL, 0);
}

/* ---- finding the server ---- */

static bool
pg_has_server(const char *dir)
{
	return pg_executable(dir, "initdb") && pg_executable(dir, "pg_ctl") &&
	    pg_executable(dir, "postgres");
}

/* Highest version first: "15" before "9.6". */
static int
pg_version_cmp(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)b, *(const char *const *)a);
}

/* The highest /usr/lib/postgresql/VERSION/bin with the server in it. */
static int
pg_find_debian_bindir(void)
{
	glob_t g;
	size_t i;
	int found = -1;

	if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0)
		return -1;
	qsort(g.gl_pathv, g.gl_pathc, sizeof g.gl_pathv[0], pg_version_cmp);
	for (i = 0; i < g.gl_pathc && found == -1; i++) {
		*strrchr(g.gl_pathv[i], '/') = '\0';
		if (pg_has_server(g.gl_pathv[i])) {
			snprintf(inst.bindir, sizeof inst.bindir, "%s",
			    g.gl_pathv[i]);
			found = 0;
		}
	}
	globfree(&g);
	return found;
}

/* psql: next to the server (the same version), else the first in PATH. */
static int
pg_find_psql(void)
{
	char path[PATH_MAX + 16], *dirs, *dir, *save = NULL;
	const char *p = getenv("PATH");

	snprintf(inst.psql, sizeof inst.psql, "%s/psql", inst.bindir);
	if (access(inst.psql, X_OK) == 0)
		return 0;
	if ((dirs = strdup(p != NULL ? p : "/usr/bin:/bin")) == NULL)
		return -1;
	for (dir = strtok_r(dirs, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof path, "%s/psql", dir);
		if (access(path, X_OK) == 0) {
			snprintf(inst.psql, sizeof inst.psql, "%s", path);
			free(dirs);
			return 0;
		}
	}
	free(dirs);
	return -1;
}

static int
pg_find_bindir(void)
{
	const char *forced = getenv("CHUTE_TEST_PG_BINDIR");
	const char *const cfg[] = { "pg_config", "--bindir", NULL };
	char dir[PATH_MAX];

	if (forced != NULL && *forced != '\0') {
		snprintf(inst.bindir, sizeof inst.bindir, "%s", forced);
		if (pg_has_server(forced))
			return 0;
		snprintf(inst.reason, sizeof inst.reason, "no initdb, pg_ctl"
		    " and postgres in CHUTE_TEST_PG_BINDIR=%.200s", forced);
		return -1;
	}
	/* libpq-dev's pg_config may name a version whose server is not here. */
	if (pg_run(cfg, false, 10000, dir, sizeof dir) == 0 &&
	    pg_has_server(dir)) {
		snprintf(inst.bindir, sizeof inst.bindir, "%s", dir);
		return 0;
	}
	if (pg_find_debian_bindir() == 0)
		return 0;
	snprintf(inst.reason, sizeof inst.reason, "no PostgreSQL server"
	    " (initdb, pg_ctl, postgres) in `pg_config --bindir` nor in"
	    " /usr/lib/postgresql/*/bin (apt-get install postgresql)");
	return -1;
}

/* Who runs the server, and the name of its superuser. */
static int
pg_find_user(void)
{
	struct passwd *pw;

	if (geteuid() != 0) {
		if ((pw = getpwuid(geteuid())) == NULL) {
			snprintf(inst.reason, sizeof inst.reason, "uid %ld has"
			    " no user name, and initdb needs one",
			    (long)geteuid());
			return -1;
		}
		snprintf(inst.super, sizeof inst.super, "%s", pw->pw_name);
		return 0;
	}
	/* initdb refuses root, so the server runs as Debian's postgres user. */
	if ((pw = getpwnam("postgres")) == NULL || pw->pw_uid == 0) {
		snprintf(inst.reason, sizeof inst.reason, "running as root and"
		    " there is no postgres user to run the server as (initdb"
		    " refuses root; apt-get install postgresql creates it)");
		return -1;
	}
	inst.as_other = true;
	inst.uid = pw->pw_uid;
	inst.gid = pw->pw_gid;
	inst.ngroups = PG_MAXGROUPS;
	if (getgrouplist(pw->pw_name, pw->pw_gid, inst.groups,
	    &inst.ngroups) == -1)
		inst.ngroups = 0;
	snprintf(inst.super, sizeof inst.super, "%s", pw->pw_name);
	return 0;
}

int
t_pg_available(void)
{
	if (!inst.looked) {
		inst.looked = true;
		inst.ok = pg_find_bindir() == 0 && pg_find_user() == 0;
		if (inst.ok && pg_find_psql() == -1) {
			snprintf(inst.reason, sizeof inst.reason,
			    "no psql in %.200s nor in PATH (apt-get install"
			    " postgresql-client)", inst.bindir);
			inst.ok = false;
		}
		if (inst.ok)
			inst.reason[0] = '\0';
	}
	return inst.ok ? 0 : -1;
}

const char *
t_pg_skip_reason(void)
{
	return inst.reason;
}

bool
t_pg_skip(void)
{
	static bool said;

	if (t_pg_available() == 0)
		return false;
	if (!said) {
		fprintf(stderr, "%s: skipping the PostgreSQL tests: %s\n",
		    getprogname(), inst.reason);
		said = true;
	}
	return true;
}

/* ---- the server's processes, found by their working directory ---- */

/*
 * Is /proc/PID/cwd dir/data?  The postmaster and everything it forks work
 * there; " (deleted)" once the directory is gone.
 */
static bool
pg_proc_in(pid_t pid, const char *dir)
{
	char link[64], cwd[PATH_MAX], data[PATH_MAX];
	ssize_t n;
	size_t len;

	snprintf(link, sizeof link, "/proc/%ld/cwd", (long)pid);
	if ((n = readlink(link, cwd, sizeof cwd - 1)) == -1)
		return false;
	cwd[n] = '\0';
	snprintf(data, sizeof data, "%s/data", dir);
	len = strlen(data);
	return strncmp(cwd, data, len) == 0 &&
	    (cwd[len] == '\0' || strcmp(cwd + len, " (deleted)") == 0);
}

/* Count the processes working in dir/data; send each sig unless it is 0. */
static int
pg_procs(const char *dir, int sig)
{
	struct dirent *de;
	DIR *d;
	long pid;
	char *end;
	int n = 0;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 0 || pid == getpid() ||
		    !pg_proc_in((pid_t)pid, dir))
			continue;
		n++;
		if (sig != 0)
			kill((pid_t)pid, sig);
	}
	closedir(d);
	return n;
}

int
t_pg_count_procs(const char *dir)
{
	return pg_procs(dir, 0);
}

/* The pid in dir/data/postmaster.pid, if that process runs there; else 0. */
static pid_t
pg_postmaster_of(const char *dir)
{
	char path[PATH_MAX];
	long pid = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/data/postmaster.pid", dir);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid > 0 && pg_proc_in((pid_t)pid, dir) ? (pid_t)pid : 0;
}

pid_t
t_pg_postmaster(void)
{
	return pg.dir[0] != '\0' ? pg_postmaster_of(pg.dir) : 0;
}

/* Poll until no process works in dir/data; false at the deadline. */
static bool
pg_procs_gone(const char *dir, int timeout_ms)
{
	int64_t deadline = pg_mono() + timeout_ms;

	while (pg_procs(dir, 0) > 0) {
		if (pg_mono() >= deadline)
			return false;
		pg_nap(10);
	}
	return true;
}

/*
 * Stop whatever is left of the server in dir without pg_ctl: SIGQUIT to the
 * postmaster is an immediate shutdown, which takes its children with it;
 * then SIGKILL to anything still working there.  Nothing to do, and quick,
 * when nothing runs there.
 */
static void
pg_kill_cluster(const char *dir)
{
	pid_t pm = pg_postmaster_of(dir);

	if (pm > 0)
		kill(pm, SIGQUIT);
	if (pg_procs_gone(dir, PG_KILL_MS))
		return;
	pg_procs(dir, SIGKILL);
	if (!pg_procs_gone(dir, 5000))
		fprintf(stderr, "t_pg: processes of the server in %s survive"
		    " SIGKILL\n", dir);
}

/* ---- watchdogs, and the clusters of dead runs ---- */

/*
 * A watchdog holds the read end of a pipe whose write end only its starter
 * (and the test processes Check forks from it) hold.  EOF means they are
 * all gone: if dir is still there, no one removed it, so it stops whatever
 * server works there and removes it.  Its own session keeps it out of the
 * killpg() with which Check ends a test's processes.
 */
static void
pg_watchdog_main(const char *dir, int rd, bool quiet)
{
	char c;
	ssize_t n;
	int null;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (rd != 3 && dup2(rd, 3) == -1)
		_exit(1);
	closefrom(4);		/* the write end among them */
	if ((null = open("/dev/null", O_RDWR)) != -1) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 3)
			close(null);
	}
	while ((n = read(3, &c, 1)) != 0 && (n > 0 || errno == EINTR))
		continue;
	if (!pg_isdir(dir))
		_exit(0);
	pg_kill_cluster(dir);
	if (t_rmtree(dir) == -1)
		fprintf(stderr, "t_pg watchdog: removing %s: %s\n", dir,
		    strerror(errno));
	else if (!quiet)
		fprintf(stderr, "t_pg watchdog: the process that started %s"
		    " ended without t_pg_stop(); stopped its server and removed"
		    " it\n", dir);
	_exit(0);
}

/* Start dir's watchdog, and say in dir/watchdog.pid that it lives. */
static int
pg_watchdog_start(const char *dir, struct pg_watchdog *w, bool quiet)
{
	char path[PATH_MAX], line[32];
	int p[2], fd;

	if (pipe2(p, O_CLOEXEC) == -1)
		return pg_fail("pipe: %s", strerror(errno));
	if ((w->pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return pg_fail("fork: %s", strerror(errno));
	}
	if (w->pid == 0)
		pg_watchdog_main(dir, p[0], quiet);
	close(p[0]);
	w->fd = p[1];
	/* For a later run's sweep: dir is not stale while it lives. */
	snprintf(path, sizeof path, "%s/watchdog.pid", dir);
	snprintf(line, sizeof line, "%ld\n", (long)w->pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd == -1)
		return pg_fail("%s: %s", path, strerror(errno));
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		close(fd);
		return pg_fail("%s: %s", path, strerror(errno));
	}
	close(fd);
	return 0;
}

/*
 * Close our end and reap the watchdog, which removes its directory if it
 * is still there: at most PG_KILL_MS and 5 s for the server to go, and the
 * removal.
 */
static void
pg_watchdog_stop(struct pg_watchdog *w)
{
	if (w->fd != -1)
		close(w->fd);
	w->fd = -1;
	if (w->pid > 0 &&
	    pg_wait(w->pid, pg_mono() + PG_KILL_MS + 20000) == -1 &&
	    kill(w->pid, SIGKILL) == 0)
		waitpid(w->pid, NULL, 0);
	w->pid = 0;
}

static bool
pg_pid_alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/*
 * Clusters under base whose starter and watchdog are both dead (a watchdog
 * killed with its runner by SIGKILL): stop what runs there and remove them.
 */
static void
pg_sweep(const char *base)
{
	char dir[512], path[PATH_MAX];
	struct dirent *de;
	long starter, watchdog;
	int len;
	FILE *f;
	DIR *d;

	if ((d = opendir(base)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		len = 0;
		if (sscanf(de->d_name, "chute-pg-%ld-%n", &starter,
		    &len) != 1 || len == 0 || pg_pid_alive(starter))
			continue;
		snprintf(dir, sizeof dir, "%.250s/%.250s", base, de->d_name);
		snprintf(path, sizeof path, "%s/watchdog.pid", dir);
		watchdog = 0;
		if ((f = fopen(path, "re")) != NULL) {
			if (fscanf(f, "%ld", &watchdog) != 1)
				watchdog = 0;
			fclose(f);
		}
		if (!pg_isdir(dir) || pg_pid_alive(watchdog))
			continue;
		pg_kill_cluster(dir);
		if (t_rmtree(dir) == 0)
			fprintf(stderr, "t_pg: removed %s, left by dead process"
			    " %ld\n", dir, starter);
	}
	closedir(d);
}

/* ---- making and starting a cluster ---- */

/* Can the server's user reach path (search permission all the way down)? */
static bool
pg_traversable(const char *path)
{
	char prefix[PATH_MAX];
	const char *p = path;
	struct stat st;
	mode_t need;
	int i;

	if (!inst.as_other)
		return true;
	do {
		p = strchr(p + 1, '/');
		snprintf(prefix, sizeof prefix, "%.*s",
		    p != NULL ? (int)(p - path) : (int)strlen(path), path);
		if (prefix[0] == '\0')
			continue;
		if (stat(prefix, &st) == -1)
			return false;
		need = S_IXOTH;
		if (st.st_uid == inst.uid)
			need = S_IXUSR;
		else
			for (i = 0; i < inst.ngroups; i++)
				if (st.st_gid == inst.groups[i])
					need = S_IXGRP;
		if ((st.st_mode & need) == 0)
			return false;
	} while (p != NULL);
	return true;
}

/* $TMPDIR; /tmp if it is long, odd, or out of the server's user's reach. */
static const char *
pg_base(void)
{
	const char *tmp = getenv("TMPDIR");
	static char base[PATH_MAX];

	/*
	 * sun_path: DIR/.s.PGSQL.NNNNN.lock must fit in 107 bytes; and the
	 * server reads unix_socket_directories as a list that commas, quotes
	 * and white space would cut.
	 */
	if (tmp != NULL && *tmp != '\0' && realpath(tmp, base) != NULL &&
	    strlen(base) < 60 && strpbrk(base, ",\"' \t\n") == NULL &&
	    pg_traversable(base))
		return base;
	return "/tmp";
}

/*
 * A fresh directory base/chute-pg-PID-XXXXXX in dir (of size n; short, for
 * the socket), owned by the server's user.
 */
static int
pg_mkdtemp(const char *base, char *dir, size_t n)
{
	char tmp[PATH_MAX], real[PATH_MAX];

	snprintf(tmp, sizeof tmp, "%s/chute-pg-%ld-XXXXXX", base,
	    (long)getpid());
	if (mkdtemp(tmp) == NULL)
		return pg_fail("mkdtemp %s: %s", tmp, strerror(errno));
	errno = 0;
	if (realpath(tmp, real) == NULL || strlen(real) >= n) {
		rmdir(tmp);
		return pg_fail("realpath %s: %s", tmp, errno != 0 ?
		    strerror(errno) : "too long for a socket directory");
	}
	if (inst.as_other && chown(real, inst.uid, inst.gid) == -1) {
		pg_fail("chown %s: %s", real, strerror(errno));
		rmdir(real);
		return -1;
	}
	memcpy(dir, real, strlen(real) + 1);
	return 0;
}

static int
pg_initdb(const char *data)
{
	char prog[PATH_MAX + 16];
	/*
	 * --no-sync: initdb's own final fsync of the new files guards against
	 * an OS crash, which a test cannot have; the server keeps fsync on.
	 */
	const char *argv[] = { prog, "-D", data, "-U", inst.super,
	    "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync",
	    NULL };

	snprintf(prog, sizeof prog, "%s/initdb", inst.bindir);
	if (pg_run(argv, true, PG_INITDB_MS, NULL, 0) != 0)
		return pg_fail("initdb -D %s failed", data);
	return 0;
}

/*
 * At the exit of the process that made the template (not of the tests
 * Check forks from it, which run this too): remove it now rather than a
 * moment later, when its watchdog sees our end of the pipe close.
 */
static void
pg_template_remove(void)
{
	if (tmpl.dir[0] == '\0' || tmpl.owner != getpid())
		return;
	pg_watchdog_stop(&tmpl.watchdog);
	if (pg_isdir(tmpl.dir))
		t_rmtree(tmpl.dir);
	tmpl.dir[0] = '\0';
}

/* The template of this process, made by initdb if there is none yet. */
static int
pg_template(const char *base)
{
	static bool registered;

	if (tmpl.dir[0] != '\0' && pg_isdir(tmpl.data))
		return 0;
	if (pg_mkdtemp(base, tmpl.dir, sizeof tmpl.dir) == -1)
		return -1;
	tmpl.owner = getpid();
	snprintf(tmpl.data, sizeof tmpl.data, "%s/data", tmpl.dir);
	if (!registered)
		registered = atexit(pg_template_remove) == 0;
	if (pg_watchdog_start(tmpl.dir, &tmpl.watchdog, true) == -1 ||
	    pg_initdb(tmpl.data) == -1) {
		pg_template_remove();
		return -1;
	}
	return 0;
}

/* The cluster's directory, its watchdog, and data/ (the template's, copied). */
static int
pg_make_cluster(const char *base)
{
	const char *argv[] = { "cp", "-a", tmpl.data, pg.data, NULL };

	if (pg_mkdtemp(base, pg.dir, sizeof pg.dir) == -1)
		return -1;
	snprintf(pg.data, sizeof pg.data, "%s/data", pg.dir);
	snprintf(pg.log, sizeof pg.log, "%s/server.log", pg.dir);
	if (pg_watchdog_start(pg.dir, &pg.watchdog, false) == -1 ||
	    pg_template(base) == -1)
		return -1;
	if (pg_run(argv, true, PG_INITDB_MS, NULL, 0) != 0)
		return pg_fail("cp -a %s %s failed", tmpl.data, pg.data);
	return 0;
}

/* Create or replace path with text, owned by the server's user. */
static int
pg_write_file(const char *path, const char *text, bool append)
{
	size_t len = strlen(text);
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
	    (append ? O_APPEND : O_TRUNC), 0600);
	if (fd == -1)
		return pg_fail("%s: %s", path, strerror(errno));
	if ((inst.as_other && fchown(fd, inst.uid, inst.gid) == -1) ||
	    write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return pg_fail("writing %s: %s", path, strerror(errno));
	}
	close(fd);
	return 0;
}

/*
 * pg_hba.conf: the socket only (there is no host line, and nothing listens
 * on TCP), trust for everyone but chute_pw, who must give its password.
 */
static int
pg_write_hba(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/pg_hba.conf", pg.data);
	return pg_write_file(path,
	    "# chute tests: the Unix socket only; chute_pw needs its password\n"
	    "local\tall\tchute_pw\tscram-sha-256\n"
	    "local\tall\tall\ttrust\n", false);
}

/* chute-test.conf, included from postgresql.conf: rewritten for each port. */
static int
pg_write_conf(void)
{
	char path[PATH_MAX], text[2048], dir[300];

	pg_quote(dir, sizeof dir, pg.dir);
	snprintf(text, sizeof text,
	    "listen_addresses = ''\n"
	    "unix_socket_directories = %s\n"
	    "port = %d\n"
	    "max_connections = 100\n"
	    "shared_buffers = 16MB\n"
	    "huge_pages = off\n"
	    "# The crash tests restart with -m immediate and must lose\n"
	    "# nothing committed: keep every durability setting on.\n"
	    "fsync = on\n"
	    "full_page_writes = on\n"
	    "synchronous_commit = on\n"
	    "password_encryption = 'scram-sha-256'\n"
	    "timezone = 'UTC'\n"
	    "log_timezone = 'UTC'\n", dir, pg.port);
	snprintf(path, sizeof path, "%s/chute-test.conf", pg.data);
	return pg_write_file(path, text, false);
}

static int
pg_configure(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof path, "%s/postgresql.conf", pg.data);
	if (pg_write_file(path, "\ninclude 'chute-test.conf'\n", true) == -1)
		return -1;
	return pg_write_hba();
}

/* Did the last start fail for a port or socket someone else holds? */
static bool
pg_port_taken(void)
{
	const char *log = pg_tail(pg.log, 1500);

	return strstr(log, "could not bind") != NULL ||
	    strstr(log, "lock file") != NULL ||
	    strstr(log, "already in use") != NULL;
}

/*
 * Start the server on a port picked from our pid.  The socket is in our own
 * directory, so the port only names it and no other run can hold it; a new
 * port is tried anyway if the server says it is taken.
 */
static int
pg_start_server(void)
{
	int attempt;

	for (attempt = 0; attempt < 3; attempt++) {
		pg.port = 20000 + (int)((getpid() + attempt * 7919) % 40000);
		if (pg_write_conf() == -1)
			return -1;
		if (pg_ctl("start", NULL) == 0)
			return 0;
		if (!pg_port_taken())
			break;
	}
	return pg_fail("pg_ctl start (port %d) failed or did not see the server"
	    " accept connections within %d s", pg.port, T_PG_CTL_S);
}

static int
pg_make_roles(void)
{
	if (t_pg_sql(t_pg_uri(PG_ADMIN_DB),
	    "CREATE ROLE chute_pw LOGIN PASSWORD 'secret'", NULL, 0) != 0)
		return pg_fail("creating the role chute_pw failed");
	return 0;
}

int
t_pg_start(void)
{
	const char *base;

	if (t_pg_available() == -1)
		return -1;
	ck_assert_msg(pg.dir[0] == '\0', "t_pg_start: a cluster runs already"
	    " in %s", pg.dir);
	base = pg_base();
	pg_sweep(base);
	pg_err[0] = '\0';
	if (pg_make_cluster(base) == -1 || pg_configure() == -1 ||
	    pg_start_server() == -1 || pg_make_roles() == -1)
		goto fail;
	return 0;
fail:
	t_pg_stop();
	ck_abort_msg("t_pg_start: %s", pg_why);
	return -1;
}

void
t_pg_stop(void)
{
	if (pg.dir[0] == '\0') {
		pg_watchdog_stop(&pg.watchdog);
		return;
	}
	if (t_pg_postmaster() > 0 && pg_ctl("stop", "fast") != 0)
		fprintf(stderr, "t_pg_stop: pg_ctl stop -m fast: %s\n", pg_err);
	pg_kill_cluster(pg.dir);
	if (pg_isdir(pg.dir) && t_rmtree(pg.dir) == -1)
		fprintf(stderr, "t_pg_stop: removing %s: %s\n", pg.dir,
		    strerror(errno));
	pg_watchdog_stop(&pg.watchdog);
	pg.dir[0] = pg.data[0] = pg.log[0] = '\0';
	pg.port = 0;
}

/* ---- using it ---- */

const char *
t_pg_dir(void)
{
	return pg.dir;
}

int
t_pg_port(void)
{
	return pg.port;
}

/* One of a ring of 8 buffers for URIs. */
static char *
pg_uri_buf(void)
{
	static char ring[8][T_PG_URIMAX];
	static int next;

	return ring[next++ % 8];
}

const char *
t_pg_uri(const char *dbname)
{
	char host[400], db[400], user[200];
	char *b = pg_uri_buf();

	pg_encode(host, sizeof host, pg.dir);
	pg_encode(db, sizeof db, dbname);
	pg_encode(user, sizeof user, inst.super);
	snprintf(b, T_PG_URIMAX, "postgresql:///%s?host=%s&port=%d&user=%s",
	    db, host, pg.port, user);
	return b;
}

const char *
t_pg_uri_as(const char *dbname, const char *user, const char *password)
{
	char host[400], db[400], u[200], pw[200];
	char *b = pg_uri_buf();

	pg_encode(host, sizeof host, pg.dir);
	pg_encode(db, sizeof db, dbname);
	pg_encode(u, sizeof u, user);
	pg_encode(pw, sizeof pw, password != NULL ? password : "");
	snprintf(b, T_PG_URIMAX, "postgresql://%s%s%s@/%s?host=%s&port=%d",
	    u, password != NULL ? ":" : "", pw, db, host, pg.port);
	return b;
}

const char *
t_pg_dbname(const char *uri)
{
	static char name[256];
	const char *p = strstr(uri, "://");
	size_t n = 0;
	unsigned hi;

	name[0] = '\0';
	if (p == NULL || (p = strchr(p + 3, '/')) == NULL)
		return name;
	for (p++; *p != '\0' && *p != '?' && n + 1 < sizeof name; p++) {
		if (*p == '%' && sscanf(p + 1, "%2x", &hi) == 1) {
			name[n++] = (char)hi;
			p += 2;
		} else {
			name[n++] = *p;
		}
	}
	name[n] = '\0';
	return name;
}

char *
t_pg_newdb(void)
{
	static int seq;
	char name[64], sql[128];
	char *uri;

	ck_assert_msg(pg.dir[0] != '\0', "t_pg_newdb: no cluster (t_pg_start)");
	if (t_pg_postmaster() == 0) {
		fprintf(stderr, "t_pg: the server in %s is down (an earlier"
		    " test ended between t_pg_down and t_pg_up); starting it\n",
		    pg.dir);
		t_pg_up();
	}
	snprintf(name, sizeof name, "t_%ld_%d", (long)getpid(), ++seq);
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	ck_assert_msg(t_pg_sql(t_pg_uri(PG_ADMIN_DB), sql, NULL, 0) == 0,
	    "%s: %s", sql, pg_err);
	ck_assert_msg((uri = strdup(t_pg_uri(name))) != NULL, "strdup: %s",
	    strerror(errno));
	return uri;
}

int
t_pg_sql(const char *uri, const char *sql, char *out, size_t outlen)
{
	const char *argv[] = { inst.psql, "-X", "-A", "-t", "-q", "-w",
	    "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql, NULL };

	if (t_pg_available() == -1) {
		snprintf(pg_err, sizeof pg_err, "no psql: %s", inst.reason);
		return -1;
	}
	return pg_run(argv, false, T_PG_SQL_MS, out, outlen);
}

const char *
t_pg_error(void)
{
	return pg_err;
}

pid_t
t_pg_session(const char *uri, const char *sql)
{
	const char *argv[] = { inst.psql, "-X", "-A", "-t", "-q", "-w",
	    "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql, NULL };
	pid_t pid;

	ck_assert_msg(t_pg_available() == 0, "t_pg_session: %s", inst.reason);
	pid = pg_spawn(argv, false, -1, -1);
	ck_assert_msg(pid != -1, "fork: %s", strerror(errno));
	return pid;
}

int
t_pg_session_wait(pid_t pid, int timeout_ms)
{
	int status = pg_wait(pid, pg_mono() + timeout_ms);

	if (status == -1 && kill(pid, SIGKILL) == 0)
		waitpid(pid, NULL, 0);
	return status < 0 ? -1 : status;
}

void
t_pg_restart_immediate(void)
{
	ck_assert_msg(pg.dir[0] != '\0', "t_pg_restart_immediate: no cluster");
	if (pg_ctl("restart", "immediate") != 0) {
		pg_fail("pg_ctl restart -m immediate failed");
		ck_abort_msg("%s", pg_why);
	}
}

void
t_pg_down(void)
{
	ck_assert_msg(pg.dir[0] != '\0', "t_pg_down: no cluster");
	if (pg_ctl("stop", "immediate") != 0) {
		pg_fail("pg_ctl stop -m immediate failed");
		ck_abort_msg("%s", pg_why);
	}
}

void
t_pg_up(void)
{
	ck_assert_msg(pg.dir[0] != '\0', "t_pg_up: no cluster");
	if (pg_ctl("start", NULL) != 0) {
		pg_fail("pg_ctl start failed");
		ck_abort_msg("%s", pg_why);
	}
}

/* Wait until none of the backends in pids ("1,2,3") is left. */
static void
pg_await_gone(const char *pids)
{
	char sql[PG_ERRMAX + 128], out[32];
	int64_t deadline = pg_mono() + 10000;

	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity"
	    " WHERE pid IN (%s)", pids);
	for (;;) {
		ck_assert_msg(t_pg_sql(t_pg_uri(PG_ADMIN_DB), sql, out,
		    sizeof out) == 0, "%s: %s", sql, pg_err);
		if (strcmp(out, "0") == 0)
			return;
		ck_assert_msg(pg_mono() < deadline, "backends %s still there"
		    " 10 s after pg_terminate_backend", pids);
		pg_nap(20);
	}
}

int
t_pg_kill_backends(const char *dbname, const char *application_name_like)
{
	char db[600], like[600], sql[2048 + 512], pids[PG_ERRMAX];
	int n = 0;

	ck_assert_msg(pg.dir[0] != '\0', "t_pg_kill_backends: no cluster");
	pg_quote(db, sizeof db, dbname != NULL ? dbname : "");
	pg_quote(like, sizeof like, application_name_like != NULL ?
	    application_name_like : "%");
	/* MATERIALIZED: pg_terminate_backend() only after the WHERE chose. */
	snprintf(sql, sizeof sql,
	    "WITH victims AS MATERIALIZED (SELECT pid FROM pg_stat_activity"
	    " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
	    " AND (%s = '' OR datname = %s) AND application_name LIKE %s)"
	    " SELECT coalesce(string_agg(pid::text, ','), '') FROM victims"
	    " WHERE pg_terminate_backend(pid)", db, db, like);
	ck_assert_msg(t_pg_sql(t_pg_uri(PG_ADMIN_DB), sql, pids,
	    sizeof pids) == 0, "terminating backends: %s", pg_err);
	if (pids[0] == '\0')
		return 0;
	for (const char *p = pids; p != NULL; p = strchr(p + 1, ','))
		n++;
	pg_await_gone(pids);
	return n;
}
