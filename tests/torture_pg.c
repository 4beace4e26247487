/*
 * torture_pg.c: the crash torture against the PostgreSQL queue (fleet.md),
 * `torture --pgsql`.  A throwaway cluster on a Unix socket only; two or
 * three workers (`chute run URL -j 2 --lease 2s ...`) claiming from it
 * while submitters add jobs; round after round, a worker killed with
 * SIGKILL at a moment picked by watching (just started, mid-burst, a
 * handler running, a handler just ended) and a new one started, and now
 * and then the server restarted (`pg_ctl restart -m immediate`), stopped
 * for longer than a lease (an outage) or the workers' sessions terminated
 * (pg_terminate_backend, psql as the superuser).  With --freeze, a worker
 * is also stopped (SIGSTOP) past its lease now and then.  With --keys,
 * four jobs in five have a key (k0-k3) and every submit a priority; k0 is
 * at 1, k1 at 2, the default at 2, and k3's own limit moves between 1 and
 * 3 in a round in four; each run takes one of its key's flock slots
 * (WORK/locks/slot.K.N), and one that finds them all taken (WORK/overkeys)
 * is a violation: more of the key ran than its limit allows.  Then a drain and
 * the checks.  Every wait is bounded; the cluster goes with us at exit, on
 * SIGINT/SIGTERM, on a failed step of the harness (die) and, through a
 * watchdog process, when we are killed.
 *
 * What is recorded, outside chute:
 *  - the journal: the handler (WORK/handler.sh) appends
 *	S ID ATTEMPT PID START_NS LOCK PPID	(LOCK: ok or CONCURRENT)
 *	E ID ATTEMPT PID END_NS KIND CODE
 *    PPID is the worker that started it.  LOCK is the witness of "never
 *    twice at once": flock(LOCK_EX|LOCK_NB) on WORK/locks/ID through fd 9,
 *    held by the handler process (its foreground commands get 9>&-) and,
 *    for a third of the jobs, by a grandchild (sleep 10, in the background,
 *    listed in WORK/grandchildren) that the handler leaves behind in its
 *    process group: chute answers for every process of the group (the
 *    supervisor kills what is left when the handler exits, the reaper
 *    when its worker is killed: fleet.md, "Leases and fencing"), so the
 *    grandchild, which would outlive a 2 s lease, must be gone by then.
 *    CONCURRENT means a process of the previous run was still alive.
 *  - the audit: a trigger on chute.live (torture.audit, installed after
 *    `chute init`) writes one row per inserted or updated job row, and
 *    per row that moved to chute.finished (as an update), in the same
 *    transaction: old and new state, attempts, token, the claiming
 *    worker, whether the old lease had expired and the job was due by the
 *    statement's now(), and the application_name of the session (worker N
 *    connects as twN: the URI's application_name overrides chute's).  For
 *    one job, the audit's order is the commit order: a second update of a
 *    row waits for the first to commit.
 *  - the events: each kill (worker pid), restart, outage, termination and
 *    freeze, with the wall-clock interval it took (the server's
 *    clock_timestamp() in the audit is the same clock); and from the
 *    workers' own logs, when each said it started a run, and each line
 *    where it said its connection or a statement failed.
 *
 * What is checked, after the drain (workers with --drain until nothing is
 * in new, cur or defer), with every process of ours gone:
 *  - every ID chute submit printed is in chute.jobs exactly once, in done
 *    or failed; a job there whose ID was never printed only if a submit
 *    failed with 75 (a server restart) when it may have been committed;
 *  - unique keys (issue 37): each round four submitters at once make two
 *    `submit --unique KEY --unique-while kept --on-duplicate MODE` each,
 *    KEY one of four per mode (refuse, keep, replace), through the same
 *    kills and restarts; a key has exactly one job in the whole run, and
 *    every try printed that job's ID and exited as its mode promises (0;
 *    3 for refuse but the one that made it, and for a replace of a holder
 *    that had run), or exited 75 and printed nothing (check_unique);
 *  - dependencies (issue 37): each round a process (deps_main) submits,
 *    every other round, a job x-rR-N whose handler exits 1 (failed at
 *    once), then three `submit --id d-rR-N --after ID[,ID...]` of one to
 *    three of the latest jobs printed, half of them x- and d- jobs
 *    (chains), a third with --after-failed run, and cancels one in four
 *    (application_name tc) in whatever state it reached; each try is a
 *    line of WORK/deps.  The audit takes a dependent inserted in wait,
 *    wait -> wait (one of its jobs ended), wait -> new (woken), and a
 *    move to failed saying "dependency failed: ID" or a cancel by tc.
 *    Then (check_deps), for each dependent: its edges in chute.after are
 *    the list and mode it was given; it was claimed or ran only if each
 *    job it waits for ended done (with run: ended at all), its first
 *    claim after each of their ends (the audit's times), its first START
 *    after the last END of each of their runs (the journal; a job
 *    cancelled while it ran is ended by the cancel, and its handler's END
 *    may come after: counted apart), woken not before the last of them
 *    ended; one of them failed without run: failed, "dependency failed:
 *    ID" naming one of the failed ones, never claimed; else it ran
 *    (done, or failed by its own attempts, attempts >= 1); nothing is
 *    left in wait after the drain (check_job_pg) and no dependent ran
 *    twice at once (check_runs); only our cancels cancel;
 *  - the audit, job by job: a claim takes a job in new or defer that is
 *    due, adds 1 to attempts, gives a fresh token; nothing claims a job
 *    in cur (the SKIP LOCKED claim); a claim ends by an outcome recorded
 *    by the session of the worker holding it (fencing), by a recovery of
 *    an expired lease (to new, or to failed once attempts are used up) or
 *    by a hand-back (attempts - 1); a finished job never changes again;
 *    so attempts = claims - hand-backs;
 *  - each run in the journal belongs to exactly one claim (same job,
 *    attempt and worker pid, the latest such before it started), no claim
 *    has two runs, and no run was started after its claim was recovered;
 *  - an outcome agrees with its run: done only after END with exit 0
 *    ("every done job's handler ran"), and without --flaky nothing else;
 *    with --flaky, exit 75 or a timeout, as the run says;
 *  - a claim that ended by recovery lost its worker: it is explained by
 *    an event that could cost that worker its claims (its kill or freeze,
 *    a restart, an outage, a termination of its session) between the
 *    claim (less 1 s: a claim sent before a kill commits after it) and the
 *    recovery, or else by trouble that worker reported itself then (a
 *    statement that failed: it gives its leases up by design; counted
 *    apart); a loss nothing explains is a violation;
 *  - the attempts invariant follows: attempts in the database = the runs
 *    the journal has for that job + claims that never reached a START
 *    line, each of them lost as above (killed before it journaled) or,
 *    with --flaky, stopped by its timeout before it did.  It is sound
 *    because the trigger sees every committed change of the row (attempts
 *    changes only in a claim, +1, and a hand-back, -1), the claim's worker
 *    pid is the handler's parent, and a claim is matched to at most one
 *    run: nothing is counted twice, nothing is inferred;
 *  - failed: attempts = 5, and last says why: leases that expired every
 *    time ("abandoned: lease expired; attempts exhausted": kills and cuts
 *    used the attempts up, counted), or with --flaky the handler's own
 *    75s and timeouts; anything else is a violation;
 *  - never twice at once: no CONCURRENT, and the rules of torture.c's
 *    check_runs (a run starts after the previous one's END, in the
 *    journal's order and by the clock; attempt numbers increase; no
 *    handler still alive after the drain);
 *  - no worker exits by itself, the drain workers exit 0.
 */
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "torture.h"

#define LEASE_MS	2000	/* the workers' --lease */
#define SLACK_US	1000000	/* a claim may commit this long after a kill */
#define PG_CTL_S	60	/* pg_ctl -t */
#define PG_CTL_MS	((PG_CTL_S + 30) * 1000)
#define INITDB_MS	120000
#define GONE_MS		10000	/* the server's processes, after SIGQUIT */
#define MAX_GROUPS	64

/* Where the server's programs are, and who runs them. */
static struct {
	char	 bindir[PATH_MAX];
	char	 psql[PATH_MAX + 16];
	char	 super[64];		/* the cluster's superuser */
	bool	 as_other;		/* root: the server runs as postgres */
	gid_t	 groups[MAX_GROUPS];
	struct runas as;
} inst;

/* The cluster: dir holds data/, the socket and server.log. */
static struct {
	char	 dir[128];
	char	 data[160];
	char	 log[160];
	int	 port;
	char	 url[600];
	struct kid *postmaster;
	pid_t	 watchdog;
	int	 watchdog_fd;		/* our end of its pipe */
} pg = { .watchdog_fd = -1 };

/*
 * Every worker ever started: worker n connects as twN.  The array grows:
 * a worker is named by its index, never by a pointer.
 */
struct worker {
	pid_t		 pid;
	struct kid	*k;		/* NULL once reaped */
	bool		 drain;
};

static struct worker *workers;
static int nworkers;

/* EV_SELF: trouble a worker reported itself (worker_logs()). */
enum ev { EV_KILL, EV_RESTART, EV_OUTAGE, EV_TERMINATE, EV_FREEZE, EV_HANG,
    EV_SELF };

struct event {
	enum ev		 kind;
	int64_t		 t0, t1;	/* wall clock, us */
	pid_t		 pid;		/* the worker; 0: every worker */
};

static struct event *events;
static int nevents;

/* A claim, from the audit: a job taken into cur, and how that ended. */
struct claim {
	int		 job, attempt, next;
	int		 worker;	/* twN; -1: a session not of ours */
	pid_t		 pid;		/* the worker in the row */
	int64_t		 token, at, end_at;
	int		 run;		/* its START in the journal; -1: none */
	char		 end;		/* 'o' outcome, 'r' recovered, 'h' handed
					   back, 'x' claimed over; 0: open */
	char		 to[8];		/* an outcome's state */
	char		*last;		/* and its column last */
};

static struct claim *claims;
static int nclaims, capclaims;
static int *job_claims;			/* per job: first claim, -1: none */
static int *job_open;			/* per job: its open claim, -1: none */
static int64_t *job_end_at;		/* per job: when it left chute.live */
static int64_t *job_woke_at;		/* per job: its wait -> new, 0: none */

static struct {
	int	 kills, k_start, k_burst, k_running, k_ended, k_live;
	int	 restarts, outages, terminations, terminated, hangs;
	int	 freezes, freezes_running;
	int	 limit_changes;		/* --keys: k3's limit moved */
	int	 refused, unprinted;
	int	 lost, lost_norun, lost_midrun, lost_outcome, lost_self;
	int	 timeout_norun, handbacks;
	int	 failed_lost, failed_flaky;
	int	 fenced, expired, leftover_dirs;
	int	 fwd_kills, fwd_starts, fwd_jobs, fwd_resent;
	int	 uniq_tries, uniq_keys;
	int	 dep_jobs, dep_woken, dep_failed, dep_ran, dep_cancelled;
	int	 dep_x;
	int64_t	 drain_ms;
} st;

static void	keys_event(void);
static void	check_keys(void);

static int64_t
real_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The last max bytes of a file, for a message. */
static const char *
tail(const char *file, size_t max)
{
	static char buf[2048];
	size_t len;
	char *s = slurp(file, &len);

	if (s == NULL)
		return "(nothing)";
	snprintf(buf, sizeof(buf), "%s", len > max ? s + len - max : s);
	free(s);
	return buf;
}

/* ---- the installation ---- */

static bool
has_server(const char *dir)
{
	return access(path("%s/initdb", dir), X_OK) == 0 &&
	    access(path("%s/pg_ctl", dir), X_OK) == 0 &&
	    access(path("%s/postgres", dir), X_OK) == 0;
}

static int
version_cmp(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)b, *(const char *const *)a);
}

/* As t_pg.c looks: $CHUTE_TEST_PG_BINDIR, pg_config, Debian's highest. */
static bool
find_bindir(void)
{
	const char *forced = getenv("CHUTE_TEST_PG_BINDIR");
	char *argv[] = { "/usr/bin/pg_config", "--bindir", NULL }, *out;
	glob_t g;

	if (forced != NULL && *forced != '\0') {
		snprintf(inst.bindir, sizeof(inst.bindir), "%s", forced);
		return has_server(forced);
	}
	if (access(argv[0], X_OK) == 0 && capture(argv, -1, &out,
	    "/dev/null", CMD_MS) == 0 && out != NULL) {
		out[strcspn(out, "\n")] = '\0';
		snprintf(inst.bindir, sizeof(inst.bindir), "%s", out);
		free(out);
		if (has_server(inst.bindir))
			return true;
	}
	if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0)
		return false;
	qsort(g.gl_pathv, g.gl_pathc, sizeof(g.gl_pathv[0]), version_cmp);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		*strrchr(g.gl_pathv[i], '/') = '\0';
		if (has_server(g.gl_pathv[i])) {
			snprintf(inst.bindir, sizeof(inst.bindir), "%s",
			    g.gl_pathv[i]);
			globfree(&g);
			return true;
		}
	}
	globfree(&g);
	return false;
}

/* The server's programs and its user; the reason, when there are none. */
static const char *
find_server(void)
{
	struct passwd *pw;
	int n = MAX_GROUPS;

	if (!find_bindir())
		return "no initdb, pg_ctl and postgres in $CHUTE_TEST_PG_BINDIR,"
		    " `pg_config --bindir` or /usr/lib/postgresql/*/bin"
		    " (apt-get install postgresql)";
	snprintf(inst.psql, sizeof(inst.psql), "%s/psql", inst.bindir);
	if (access(inst.psql, X_OK) == -1)
		snprintf(inst.psql, sizeof(inst.psql), "/usr/bin/psql");
	if (access(inst.psql, X_OK) == -1)
		return "no psql (apt-get install postgresql-client)";
	if (geteuid() != 0) {
		if ((pw = getpwuid(geteuid())) == NULL)
			return "our uid has no user name, and initdb needs one";
		snprintf(inst.super, sizeof(inst.super), "%s", pw->pw_name);
		return NULL;
	}
	/* initdb refuses root: the server runs as Debian's postgres user. */
	if ((pw = getpwnam("postgres")) == NULL || pw->pw_uid == 0)
		return "running as root and there is no postgres user to run "
		    "the server as (apt-get install postgresql creates it)";
	if (getgrouplist(pw->pw_name, pw->pw_gid, inst.groups, &n) == -1)
		n = 0;
	inst.as_other = true;
	inst.as = (struct runas){ pw->pw_uid, pw->pw_gid, inst.groups, n,
	    NULL };
	snprintf(inst.super, sizeof(inst.super), "%s", pw->pw_name);
	return NULL;
}

/* ---- the cluster ---- */

/* Can the server's user search its way down to dir? */
static bool
reachable(const char *dir)
{
	char prefix[PATH_MAX];
	struct stat sb;

	if (!inst.as_other)
		return true;
	for (const char *p = dir; p != NULL; p = strchr(p + 1, '/')) {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(p - dir), dir);
		if (prefix[0] == '\0')
			continue;
		if (stat(prefix, &sb) == -1 || !(sb.st_mode &
		    (sb.st_uid == inst.as.uid ? S_IXUSR : S_IXOTH)))
			return false;
	}
	return true;
}

/* s percent-encoded for a URI: only unreserved characters and '/' as is. */
static void
encode(char *dst, size_t n, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0;

	for (; *s != '\0' && i + 4 < n; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("/-._~", c) != NULL)
			dst[i++] = (char)c;
		else {
			dst[i++] = '%';
			dst[i++] = hex[c >> 4];
			dst[i++] = hex[c & 15];
		}
	}
	dst[i] = '\0';
}

/*
 * The cluster's directory: short (the socket's path must fit in 107
 * bytes), under $TMPDIR if the server's user can reach it, else /tmp,
 * owned by that user.
 */
static void
cluster_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	char real[PATH_MAX], tmpl[PATH_MAX];

	if (tmp == NULL || realpath(tmp, real) == NULL || strlen(real) > 60 ||
	    strpbrk(real, ",\"' \t\n") != NULL || !reachable(real))
		snprintf(real, sizeof(real), "/tmp");
	snprintf(tmpl, sizeof(tmpl), "%s/torture-pg.XXXXXX", real);
	if (mkdtemp(tmpl) == NULL || strlen(tmpl) >= sizeof(pg.dir))
		die("%s: %s", tmpl, strerror(errno));
	snprintf(pg.dir, sizeof(pg.dir), "%s", tmpl);
	snprintf(pg.data, sizeof(pg.data), "%s/data", pg.dir);
	snprintf(pg.log, sizeof(pg.log), "%s/server.log", pg.dir);
	if (inst.as_other && chown(pg.dir, inst.as.uid, inst.as.gid) == -1)
		die("chown %s: %s", pg.dir, strerror(errno));
	inst.as.dir = pg.dir;
}

/* A server program, as the server's user; its wait status, or -1. */
static int
server_cmd(char *const argv[], int64_t ms)
{
	char *out;
	int rc = capture_as(argv, -1, &out, path("%s/pg.err", work), ms,
	    inst.as_other ? &inst.as : NULL);

	free(out);
	return rc;
}

static int
pg_ctl(const char *action, const char *mode)
{
	char prog[PATH_MAX + 16], secs[16], *argv[16];
	int n = 0;

	snprintf(prog, sizeof(prog), "%s/pg_ctl", inst.bindir);
	snprintf(secs, sizeof(secs), "%d", PG_CTL_S);
	argv[n++] = prog;
	argv[n++] = "-D";
	argv[n++] = pg.data;
	/* Always a log: without one the postmaster would keep our pipe. */
	argv[n++] = "-l";
	argv[n++] = pg.log;
	argv[n++] = "-w";
	argv[n++] = "-t";
	argv[n++] = secs;
	if (mode != NULL) {
		argv[n++] = "-m";
		argv[n++] = (char *)(uintptr_t)mode;
	}
	argv[n++] = (char *)(uintptr_t)action;
	argv[n] = NULL;
	return server_cmd(argv, PG_CTL_MS);
}

/* The postmaster pg_ctl started is our child now (we are the subreaper). */
static void
postmaster_track(void)
{
	char *s = slurp(path("%s/postmaster.pid", pg.data), NULL);
	long pid = s != NULL ? atol(s) : 0;

	free(s);
	if (pg.postmaster != NULL) {
		reap();
		kid_forget(pg.postmaster);
		pg.postmaster = NULL;
	}
	if (pid > 0)
		pg.postmaster = kid_add((pid_t)pid, K_SERVER, -1);
}

static void
server(const char *action, const char *mode)
{
	char how[32];
	int rc = pg_ctl(action, mode);

	if (rc != 0 && stop_sig)
		die("interrupted by signal %d", (int)stop_sig);
	if (rc != 0)
		die("pg_ctl %s%s%s: %s; %s; server.log ends: %s", action,
		    mode ? " -m " : "", mode ? mode : "", rc == -1 ? "timed out" :
		    describe(rc, how, sizeof(how)), tail(path("%s/pg.err", work),
		    300), tail(pg.log, 600));
	if (strcmp(action, "stop") != 0)
		postmaster_track();
}

/* Is /proc/PID/cwd dir (or what is left of it)?  The server works there. */
static bool
works_in(long pid, const char *dir)
{
	char cwd[PATH_MAX];
	ssize_t n = readlink(path("/proc/%ld/cwd", pid), cwd, sizeof(cwd) - 1);
	size_t len = strlen(dir);

	if (n == -1)
		return false;
	cwd[n] = '\0';
	return strncmp(cwd, dir, len) == 0 &&
	    (cwd[len] == '\0' || strcmp(cwd + len, " (deleted)") == 0);
}

/* How many processes work in dir; each gets sig unless it is 0. */
static int
server_procs(const char *dir, int sig)
{
	DIR *dp = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (dp != NULL && (de = readdir(dp)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 || pid == getpid() ||
		    !works_in(pid, dir))
			continue;
		n++;
		if (sig != 0)
			kill((pid_t)pid, sig);
	}
	if (dp != NULL)
		closedir(dp);
	return n;
}

/*
 * Stop what runs of the cluster without pg_ctl: SIGQUIT to the postmaster
 * is an immediate shutdown; SIGKILL to whatever is left after GONE_MS.
 */
static void
cluster_kill(const char *data)
{
	char *s = slurp(path("%s/postmaster.pid", data), NULL);
	long pm = s != NULL ? atol(s) : 0;
	int64_t deadline = mono_ms() + GONE_MS;

	free(s);
	if (pm > 0 && works_in(pm, data))
		kill((pid_t)pm, SIGQUIT);
	while (server_procs(data, 0) > 0 && mono_ms() < deadline) {
		reap();
		nap_us(10000);
	}
	if (server_procs(data, SIGKILL) > 0)
		nap_us(100000);
	reap();
}

/*
 * The watchdog: its own session, our pipe's read end.  EOF without the
 * "done" byte means we died without cleaning up (SIGKILL, a crash): it
 * stops the server and removes the cluster and WORK (unless --keep); our
 * other processes die with us (PR_SET_PDEATHSIG).
 */
static void __attribute__((noreturn))
watchdog_main(int rd)
{
	char c = 0;
	ssize_t n;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	if (rd != 3 && dup2(rd, 3) == -1)
		_exit(1);
	closefrom(4);		/* our write end among them */
	while ((n = read(3, &c, 1)) == -1 && errno == EINTR)
		;
	if (n == 1 && c == 'd')
		_exit(0);
	cluster_kill(pg.data);
	if (!cfg.keep) {
		rm_tree(pg.dir);
		rm_tree(work);
	}
	_exit(0);
}

static void
watchdog_start(void)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1 || (pg.watchdog = fork()) == -1)
		die("watchdog: %s", strerror(errno));
	if (pg.watchdog == 0)
		watchdog_main(p[0]);
	close(p[0]);
	pg.watchdog_fd = p[1];
	kid_add(pg.watchdog, K_SERVER, -1);
}

/* At exit, before torture.c's clean-up kills what is left of ours. */
static void
cluster_cleanup(void)
{
	if (getpid() != main_pid || pg.dir[0] == '\0')
		return;
	for (int i = 0; i < nworkers; i++)
		if (workers[i].k != NULL && !workers[i].k->done)
			kill(workers[i].pid, SIGKILL);
	cluster_kill(pg.data);
	if (cfg.keep)
		fprintf(stderr, "torture: kept the cluster in %s (pg_ctl -D %s "
		    "start)\n", pg.dir, pg.data);
	else
		rm_tree(pg.dir);
	if (pg.watchdog_fd != -1) {
		(void)!write(pg.watchdog_fd, "d", 1);
		close(pg.watchdog_fd);
	}
	for (int64_t deadline = mono_ms() + KILL_WAIT_MS;
	    pg.watchdog > 0 && waitpid(pg.watchdog, NULL, WNOHANG) == 0;
	    nap_us(10000))
		if (mono_ms() > deadline) {
			kill(pg.watchdog, SIGKILL);
			waitpid(pg.watchdog, NULL, 0);
		}
	pg.dir[0] = '\0';
}

/* initdb, our settings, start; the URI of the database postgres. */
static void
cluster_start(void)
{
	char prog[PATH_MAX + 16], host[300], user[200], how[32];
	char *argv[] = { prog, "-D", pg.data, "-U", inst.super, "--auth=trust",
	    "--encoding=UTF8", "--locale=C", "--no-sync", NULL };
	FILE *f;
	int rc;

	cluster_dir();
	watchdog_start();
	atexit(cluster_cleanup);
	snprintf(prog, sizeof(prog), "%s/initdb", inst.bindir);
	if ((rc = server_cmd(argv, INITDB_MS)) != 0)
		die("initdb -D %s: %s; %s", pg.data, rc == -1 ? "timed out" :
		    describe(rc, how, sizeof(how)),
		    tail(path("%s/pg.err", work), 600));
	pg.port = 20000 + (int)(getpid() % 40000);
	/* A restart -m immediate must lose nothing committed: durability on. */
	if ((f = fopen(path("%s/postgresql.conf", pg.data), "ae")) == NULL)
		die("%s/postgresql.conf: %s", pg.data, strerror(errno));
	fprintf(f, "\n# chute's torture: the socket only, nothing on TCP\n"
	    "listen_addresses = ''\nunix_socket_directories = '%s'\n"
	    "port = %d\nmax_connections = 100\nshared_buffers = 16MB\n"
	    "fsync = on\nfull_page_writes = on\nsynchronous_commit = on\n"
	    "timezone = 'UTC'\nlog_timezone = 'UTC'\n", pg.dir, pg.port);
	if (fclose(f) == EOF)
		die("%s/postgresql.conf: %s", pg.data, strerror(errno));
	server("start", NULL);
	encode(host, sizeof(host), pg.dir);
	encode(user, sizeof(user), inst.super);
	snprintf(pg.url, sizeof(pg.url), "postgresql:///postgres?host=%s&"
	    "port=%d&user=%s", host, pg.port, user);
}

/* ---- SQL, through psql as the superuser ---- */

/* Run q; its rows tab-separated in *out (malloc'd).  0, or the status. */
static int
sql(const char *q, char **out)
{
	char *argv[] = { inst.psql, "-X", "-A", "-t", "-q", "-F", "\t", "-v",
	    "ON_ERROR_STOP=1", "-d", pg.url, "-c", (char *)(uintptr_t)q, NULL };
	char *o = NULL;
	int rc = capture(argv, -1, &o, path("%s/psql.err", work), CMD_MS);

	if (out != NULL)
		*out = o;
	else
		free(o);
	return rc;
}

static void
sql_or_die(const char *q, char **out)
{
	char how[32];
	int rc = sql(q, out);

	if (rc != 0 && stop_sig)
		die("interrupted by signal %d", (int)stop_sig);
	if (rc != 0)
		die("psql -c '%.60s...': %s; %s", q, rc == -1 ? "timed out" :
		    describe(rc, how, sizeof(how)),
		    tail(path("%s/psql.err", work), 400));
}

/*
 * The audit (see the top of this file): one row per change of a row of
 * chute.live (the jobs that can still run), written by the transaction
 * that made it.
 */
static const char audit_sql[] =
    "CREATE SCHEMA torture;"
    "CREATE TABLE torture.audit (seq bigserial PRIMARY KEY,"
    " at timestamptz NOT NULL DEFAULT clock_timestamp(),"
    " app text NOT NULL DEFAULT current_setting('application_name'),"
    " op text NOT NULL, queue text, id text, old_state text, new_state text,"
    " old_attempts integer, new_attempts integer, old_token bigint,"
    " new_token bigint, worker text, expired boolean, due boolean,"
    " last text);"
    "CREATE FUNCTION torture.audit() RETURNS trigger LANGUAGE plpgsql AS $$"
    " DECLARE f chute.finished;"
    " BEGIN"
    "  IF TG_OP = 'INSERT' THEN"
    "   INSERT INTO torture.audit (op, queue, id, new_state, new_attempts,"
    "    new_token, worker, last) VALUES ('I', NEW.queue, NEW.id, NEW.state,"
    "    NEW.attempts, NEW.token, NEW.worker, NEW.last);"
    "   RETURN NULL;"
    "  END IF;"
    /*
     * Version 5: a job that ends leaves chute.live for chute.finished in
     * one statement, whose row this AFTER trigger sees: one change, as
     * the UPDATE of before was.
     */
    "  IF TG_OP = 'DELETE' THEN"
    "   SELECT * INTO f FROM chute.finished WHERE queue = OLD.queue"
    "    AND id = OLD.id;"
    "   IF NOT FOUND THEN"
    "    INSERT INTO torture.audit (op, queue, id, old_state)"
    "     VALUES ('D', OLD.queue, OLD.id, OLD.state);"
    "    RETURN NULL;"
    "   END IF;"
    "   INSERT INTO torture.audit (op, queue, id, old_state, new_state,"
    "    old_attempts, new_attempts, old_token, new_token, worker, expired,"
    "    due, last) VALUES ('U', OLD.queue, OLD.id, OLD.state, f.state,"
    "    OLD.attempts, f.attempts, OLD.token, NULL, OLD.worker,"
    "    OLD.lease_until < now(), OLD.run_at <= now(), f.last);"
    "   RETURN NULL;"
    "  END IF;"
    /*
     * Version 8: a keyed job admitted or parked (parked flipped, alone)
     * is no change of its claim or state.
     */
    "  IF OLD.parked IS DISTINCT FROM NEW.parked AND OLD.state = NEW.state"
    "   AND OLD.token IS NOT DISTINCT FROM NEW.token"
    "   AND OLD.attempts = NEW.attempts THEN"
    "   RETURN NULL;"
    "  END IF;"
    "  INSERT INTO torture.audit (op, queue, id, old_state, new_state,"
    "   old_attempts, new_attempts, old_token, new_token, worker, expired,"
    "   due, last) VALUES ('U', NEW.queue, NEW.id, OLD.state, NEW.state,"
    "   OLD.attempts, NEW.attempts, OLD.token, NEW.token,"
    "   CASE WHEN NEW.state = 'cur' THEN NEW.worker ELSE OLD.worker END,"
    "   OLD.lease_until < now(), OLD.run_at <= now(), NEW.last);"
    "  RETURN NULL;"
    " END $$;"
    "CREATE TRIGGER torture_audit AFTER INSERT OR UPDATE OR DELETE"
    " ON chute.live FOR EACH ROW EXECUTE FUNCTION torture.audit();";

/* Jobs not finished yet, for the submitters' brake; 0 if it cannot tell. */
static int
backlog_pg(void)
{
	char *out = NULL;
	int n = 0;

	if (sql("SELECT count(*) FROM chute.jobs WHERE state IN ('new', 'cur',"
	    " 'defer')", &out) == 0 && out != NULL)
		n = atoi(out);
	free(out);
	return n;
}

/* ---- the handler ---- */

/*
 * As torture.c's, with the worker's pid in START and a lock only the
 * handler process holds, and as few processes as it can: on a loaded
 * machine each costs, and --timeout counts.  Its hash h is the number the
 * submitter put in the payload (its stdin); the sleep is 0-150 ms from it;
 * with --flaky the same modes as on a spool.
 */
/*
 * --keys: the key's witness, as check_pgsql's: the first free of the
 * flock slots locks/slot.K.1..MAX (MAX from keymax.K), held through fd 8
 * by the handler's process group until it is gone; none free is a key over
 * its limit, a line of overkeys.
 */
static const char key_witness[] =
    "case $k in k[0-9])\n"
    "\tn=$(cat \"$W/keymax.$k\") i=1\n"
    "\twhile :; do\n"
    "\t\texec 8>>\"$W/locks/slot.$k.$i\"\n"
    "\t\tflock -n 8 && break\n"
    "\t\tif [ $i -ge $n ]; then echo \"$id $a $k\" >>\"$W/overkeys\";"
    " break; fi\n"
    "\t\ti=$((i + 1))\n"
    "\tdone ;;\n"
    "esac\n";

static void
write_handler_pg(void)
{
	FILE *f = fopen(path("%s/handler.sh", work), "we");

	if (f == NULL)
		die("%s/handler.sh: %s", work, strerror(errno));
	fprintf(f,
	    "#!/bin/sh\n"
	    "# Written by chute's torture test (--pgsql): a START and an END"
	    " line per run.\n"
	    "W='%s'\n"
	    "J=\"$W/journal\"\n"
	    "id=$CHUTE_ID\n"
	    "a=$CHUTE_ATTEMPT\n"
	    "w=$PPID\n"
	    "read -r _ _ _ h k || h=0\n"
	    "ms=$((h %% 151))\n"
	    "s=0.$((ms / 100))$((ms / 10 %% 10))$((ms %% 10))\n"
	    "mode=ok\n"
	    "%s"
	    "%s"
	    "# Dependencies: a job x-* fails for good (exit 1), each time.\n"
	    "case $id in x-*) mode=bad ;; esac\n"
	    "# The witness: this shell alone holds it; its commands get 9>&-,\n"
	    "# for they outlive it when the worker is killed (fleet.md).\n"
	    "exec 9>>'%s/locks/'\"$id\"\n"
	    "if flock -n 9; then lk=ok; else lk=CONCURRENT; fi\n"
	    "echo \"S $id $a $$ $(date +%%s%%N 9>&-) $lk $w\" >>\"$J\"\n"
	    "# A third of the jobs leave a grandchild in the handler's group\n"
	    "# that outlives the handler, holding the witness: it must die\n"
	    "# with the attempt, or with the worker when that is killed.\n"
	    "if [ $((h %% 3)) = 0 ]; then\n"
	    "\tsleep 10 &\n"
	    "\techo \"$id $a $!\" >>'%s/grandchildren'\n"
	    "fi\n"
	    "case $mode in\n"
	    "bad)\tsleep $s 9>&-\n"
	    "\techo \"E $id $a $$ $(date +%%s%%N 9>&-) bad 1\" >>\"$J\"\n"
	    "\texec 9>&-\n"
	    "\texit 1 ;;\n"
	    "tf)\tsleep $s 9>&-\n"
	    "\techo \"E $id $a $$ $(date +%%s%%N 9>&-) tf 75\" >>\"$J\"\n"
	    "\texec 9>&-\n"
	    "\texit 75 ;;\n"
	    "trap)\ttrap 'echo \"E $id $a $$ $(date +%%s%%N 9>&-) term 143\""
	    " >>\"$J\"; exec 9>&-; exit 143' TERM\n"
	    "\tsleep 2 9>&- ;;\n"
	    "die)\tsleep 2 9>&- ;;\n"
	    "ignore)\ttrap '' TERM\n"
	    "\tsleep 2 9>&- ;;\n"
	    "*)\tsleep $s 9>&- ;;\n"
	    "esac\n"
	    "echo \"E $id $a $$ $(date +%%s%%N 9>&-) ok 0\" >>\"$J\"\n"
	    "exec 9>&-\n"
	    "exit 0\n", work, cfg.flaky ? flaky_modes : "",
	    cfg.keys ? key_witness : "", work, work);
	if (fclose(f) == EOF || chmod(path("%s/handler.sh", work), 0755) == -1)
		die("%s/handler.sh: %s", work, strerror(errno));
}

/* ---- workers ---- */

/*
 * `chute run URL&application_name=twN -j 2 --lease 2s ...`, its output in
 * WORK/worker.N.log, its local copies under WORK/wtmp (a worker killed
 * with -9 leaves its chute-pgsql.XXXXXX there).
 */
static int
worker_start(bool drain, int round)
{
	char url[700], hpath[PATH_MAX + 16], *argv[24];
	int ac = 0, n = nworkers;
	pid_t pid;

	if ((workers = reallocarray(workers, nworkers + 1,
	    sizeof(*workers))) == NULL)
		die("out of memory");
	snprintf(url, sizeof(url), "%s&application_name=tw%d", pg.url, n);
	snprintf(hpath, sizeof(hpath), "%s/handler.sh", work);
	argv[ac++] = cfg.chute;
	argv[ac++] = "run";
	argv[ac++] = url;
	argv[ac++] = "-j";
	argv[ac++] = "2";
	argv[ac++] = "--lease";
	argv[ac++] = "2s";
	argv[ac++] = "--grace";
	argv[ac++] = "300ms";
	argv[ac++] = "--backoff";
	argv[ac++] = "50ms:200ms";
	if (cfg.flaky) {
		argv[ac++] = "--timeout";
		argv[ac++] = "500ms";
	}
	if (drain)
		argv[ac++] = "--drain";
	argv[ac++] = "--";
	argv[ac++] = hpath;
	argv[ac] = NULL;
	pid = spawn_logged(argv, path("%s/worker.%d.log", work, n),
	    path("%s/wtmp", work));
	workers[nworkers] = (struct worker){ pid, kid_add(pid, K_WORKER, round),
	    drain };
	return nworkers++;
}

/* Round workers alive; one that exited by itself is a violation. */
static int
workers_live(void)
{
	char how[32];
	int n = 0;

	reap();
	for (int i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];

		if (w->k == NULL || w->drain)
			continue;
		if (!w->k->done) {
			n++;
			continue;
		}
		violation("worker tw%d (pid %ld) exited by itself: %s (see "
		    "worker.%d.log)", i, (long)w->pid, describe(w->k->status,
		    how, sizeof(how)), i);
		kid_forget(w->k);
		w->k = NULL;
	}
	return n;
}

static void
workers_top_up(int round, int want)
{
	for (int n = workers_live(); n < want; n++)
		worker_start(false, round);
}

/* A live round worker: the one with that pid if it is, else any; or -1. */
static int
worker_pick(long pid)
{
	int live[64], n = 0;

	for (int i = 0; i < nworkers; i++) {
		const struct worker *w = &workers[i];

		if (w->k == NULL || w->k->done || w->drain)
			continue;
		if (w->pid == pid)
			return i;
		if (n < 64)
			live[n++] = i;
	}
	return n > 0 ? live[rnd(&rng, n)] : -1;
}

static void
event(enum ev kind, int64_t t0, pid_t pid)
{
	if ((events = reallocarray(events, nevents + 1, sizeof(*events))) ==
	    NULL)
		die("out of memory");
	events[nevents++] = (struct event){ kind, t0, real_us(), pid };
}

/* kill -9, and see that it had not exited by itself before. */
static void
worker_kill(int n)
{
	struct worker *w = &workers[n];
	int64_t t0 = real_us();
	char how[32];

	journal_poll();
	for (long r = nruns - 1; r >= 0 && r >= nruns - 64; r--)
		if (runs[r].ppid == w->pid && runs[r].eline == 0) {
			st.k_live++;
			break;
		}
	kill(w->pid, SIGKILL);
	if (!kid_wait(w->k, KILL_WAIT_MS, false))
		die("worker pid %ld did not die within %d ms of SIGKILL",
		    (long)w->pid, KILL_WAIT_MS);
	if (!WIFSIGNALED(w->k->status) || WTERMSIG(w->k->status) != SIGKILL)
		violation("worker tw%d (pid %ld) exited by itself before the "
		    "kill: %s (see worker.%d.log)", n, (long)w->pid,
		    describe(w->k->status, how, sizeof(how)), n);
	event(EV_KILL, t0, w->pid);
	kid_forget(w->k);
	w->k = NULL;
	st.kills++;
}

/*
 * For a freeze: the worker holding the most claims, soon one with claims
 * prefetched (more than its handlers running), if it comes within 1 s.
 */
static long
claimer(void)
{
	int64_t deadline = mono_ms() + 1000;
	long pid = 0;

	do {
		char *out = NULL;
		int n = 0;

		if (sql("SELECT split_part(worker, ':', 2), count(*) FROM "
		    "chute.jobs WHERE state = 'cur' GROUP BY 1 ORDER BY 2 DESC "
		    "LIMIT 1", &out) == 0 && out != NULL &&
		    sscanf(out, "%ld\t%d", &pid, &n) == 2 &&
		    n > proc_children(pid)) {
			free(out);
			return pid;
		}
		free(out);
		nap_us(10000);
	} while (mono_ms() < deadline);
	return pid;
}

/* Has another worker claimed again a job that the worker pid held? */
static bool
taken_over(long pid)
{
	char q[600], *out = NULL;
	bool yes;

	snprintf(q, sizeof(q), "SELECT count(*) FROM chute.jobs j WHERE "
	    "j.state = 'cur' AND split_part(j.worker, ':', 2) <> '%ld' AND "
	    "EXISTS (SELECT 1 FROM torture.audit a WHERE a.id = j.id AND "
	    "a.new_state = 'cur' AND split_part(a.worker, ':', 2) = '%ld')",
	    pid, pid);
	yes = sql(q, &out) == 0 && out != NULL && atoi(out) > 0;
	free(out);
	return yes;
}

/* pid's state, parent and process group (/proc/PID/stat); false if gone. */
static bool
stat_of(long pid, char *state, long *ppid, long *pgrp)
{
	char file[64], buf[1024], *p;
	FILE *f;
	bool ok;

	snprintf(file, sizeof(file), "/proc/%ld/stat", pid);
	if ((f = fopen(file, "re")) == NULL)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL &&
	    sscanf(p + 1, " %c %ld %ld", state, ppid, pgrp) == 3;
	fclose(f);
	return ok;
}

/*
 * Live processes in the process groups of parent's children, exited
 * (zombie) children included: a frozen worker's handlers and what they
 * left behind in their groups, all of which it cannot stop while frozen.
 */
static int
handler_groups_alive(long parent)
{
	long kids[64], ppid, pgrp;
	int nkids = 0, n = 0;
	struct dirent *de;
	DIR *dp;
	char state;

	for (int pass = 0; pass < 2; pass++) {
		if ((dp = opendir("/proc")) == NULL)
			return 0;
		while ((de = readdir(dp)) != NULL) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);

			if (*end != '\0' || pid <= 0 ||
			    !stat_of(pid, &state, &ppid, &pgrp))
				continue;
			if (pass == 0 && ppid == parent && nkids < 64)
				kids[nkids++] = pid;
			for (int k = 0; pass == 1 && state != 'Z' && k < nkids; k++)
				n += pgrp == kids[k];
		}
		closedir(dp);
	}
	return n;
}

/*
 * --freeze: SIGSTOP a worker for longer than its lease, as a long pause of
 * its VM would, then SIGCONT: other workers recover its claims and run the
 * jobs again; its late outcomes must be refused (fencing), and once thawed
 * it must start nothing it no longer holds.  It is thawed as soon as
 * another worker holds one of its jobs (its stale outcomes then meet a
 * live claim), else within 1.5 s.  It is frozen whatever its handlers are
 * doing: its reaper kills their groups at eleven twelfths of the lease
 * after its last renewal (fleet.md, "A frozen worker"), which was sent
 * before the freeze, so once a whole lease has passed since the freeze no
 * process of theirs may be left (a violation), and no run of another
 * worker may find one (CONCURRENT).
 */
static void
worker_freeze(int n)
{
	const struct worker *w = &workers[n];
	int64_t t0 = real_us(), m0 = mono_ms(), from = m0 + LEASE_MS, until;
	int running = handler_groups_alive(w->pid), left;

	kill(w->pid, SIGSTOP);
	while (mono_ms() < from && !stop_sig)
		nap_us((from - mono_ms()) * 1000);
	if (!stop_sig && (left = handler_groups_alive(w->pid)) > 0)
		violation("tw%d (pid %ld) frozen for its whole lease (%d ms): "
		    "%d process(es) of its handlers' groups still alive, which "
		    "its reaper should have killed", n, (long)w->pid, LEASE_MS,
		    left);
	until = mono_ms() + 200 + 1500;
	while (mono_ms() < until && !stop_sig && !taken_over(w->pid))
		nap_us(20000);
	st.freezes++;
	st.freezes_running += running > 0;
	kill(w->pid, SIGCONT);
	event(EV_FREEZE, t0, w->pid);
}

/* ---- the server's turn ---- */

static void
server_restart(void)
{
	int64_t t0 = real_us();

	server("restart", "immediate");
	event(EV_RESTART, t0, 0);
	st.restarts++;
}

/* Down for longer than a lease: every worker's claims expire meanwhile. */
static void
server_outage(void)
{
	int64_t t0 = real_us();

	server("stop", "immediate");
	reap();
	nap_us((LEASE_MS + rnd(&rng, 1000)) * 1000L);
	server("start", NULL);
	event(EV_OUTAGE, t0, 0);
	st.outages++;
}

/* pg_terminate_backend of worker n's session, or (-1) of every worker's. */
static void
terminate(int n)
{
	char q[400], *out = NULL;
	int64_t t0 = real_us();

	snprintf(q, sizeof(q), "SELECT count(pg_terminate_backend(pid)) FROM "
	    "pg_stat_activity WHERE backend_type = 'client backend' AND "
	    "application_name %s", n != -1 ? path("= 'tw%d'", n) :
	    "LIKE 'tw%'");
	sql_or_die(q, &out);
	st.terminated += out != NULL ? atoi(out) : 0;
	free(out);
	event(EV_TERMINATE, t0, n != -1 ? workers[n].pid : 0);
	st.terminations++;
}

/*
 * A server that stops answering worker n while its connection stays up:
 * its session and the postmaster stopped (SIGSTOP) for longer than the
 * lease, as a hung backend, or a network path that drops packets without a
 * reset, would leave it.  No error, no reset, no server-side timeout
 * reaches the worker: only its own deadline gets its loop back in time to
 * stop its handlers before the other workers recover its jobs, which run
 * again, never twice at once.
 */
static void
server_hang(int n)
{
	char q[200], *out = NULL;
	int64_t t0 = real_us();
	pid_t be;

	if (n == -1 || pg.postmaster == NULL)
		return;
	snprintf(q, sizeof(q), "SELECT pid FROM pg_stat_activity WHERE "
	    "application_name = 'tw%d' LIMIT 1", n);
	be = sql(q, &out) == 0 && out != NULL ? (pid_t)atoi(out) : 0;
	free(out);
	if (be <= 0)
		return;
	kill(pg.postmaster->pid, SIGSTOP);
	kill(be, SIGSTOP);
	nap_us((LEASE_MS + rnd(&rng, 1000)) * 1000L);
	kill(be, SIGCONT);
	kill(pg.postmaster->pid, SIGCONT);
	event(EV_HANG, t0, workers[n].pid);
	st.hangs++;
}

/* ---- forward: the spool at the edge ---- */

#define FWD_STOP_MS	30000	/* forward's SIGTERM, at most */

/* The forward running now, if any; its output is WORK/forward.log. */
static struct {
	struct kid	*k;
	pid_t		 pid;
	int		 said;	/* start lines in forward.log before it began */
} fwd;

static int	 forward_ready(void);

/*
 * `chute forward SPOOL URL&application_name=tf --batch N`, N from 1 to
 * 64 (small batches: more of them in flight at a kill), or with --drain.
 */
static void
forward_start(bool drain)
{
	char url[700], batch[16], *argv[10];
	int ac = 0;
	pid_t pid;

	snprintf(url, sizeof(url), "%s&application_name=tf", pg.url);
	snprintf(batch, sizeof(batch), "%u", 1 + rnd(&rng, 64));
	argv[ac++] = cfg.chute;
	argv[ac++] = "forward";
	argv[ac++] = spool;
	argv[ac++] = url;
	argv[ac++] = "--batch";
	argv[ac++] = batch;
	if (drain)
		argv[ac++] = "--drain";
	argv[ac] = NULL;
	fwd.said = forward_ready();
	pid = spawn_logged(argv, path("%s/forward.log", work), NULL);
	fwd.pid = pid;
	fwd.k = kid_add(pid, K_CMD, -1);
	st.fwd_starts++;
}

/* The round's forward must still run: it never exits by itself. */
static void
forward_alive(void)
{
	char how[32];

	reap();
	if (fwd.k == NULL || !fwd.k->done)
		return;
	violation("forward (pid %ld) exited by itself: %s (see forward.log)",
	    (long)fwd.pid, describe(fwd.k->status, how, sizeof(how)));
	kid_forget(fwd.k);
	fwd.k = NULL;
	forward_start(false);
}

/* kill -9 at this instant (whatever it is doing), and a new one. */
static void
forward_kill(void)
{
	forward_alive();
	kill(fwd.pid, SIGKILL);
	if (!kid_wait(fwd.k, KILL_WAIT_MS, false))
		die("forward pid %ld did not die within %d ms of SIGKILL",
		    (long)fwd.pid, KILL_WAIT_MS);
	kid_forget(fwd.k);
	fwd.k = NULL;
	st.fwd_kills++;
	forward_start(false);
}

/* Wait for the forward to exit (bounded): 0 it must, or a violation. */
static void
forward_reap(const char *what, int64_t ms)
{
	char how[32];

	if (!kid_wait(fwd.k, ms, true)) {
		if (stop_sig)
			return;
		violation("forward (%s) did not exit within %" PRId64 " s",
		    what, ms / 1000);
		kill(fwd.pid, SIGKILL);
		kid_wait(fwd.k, KILL_WAIT_MS, false);
	} else if (fwd.k->status != 0)
		violation("forward (%s) ended with %s (see forward.log)", what,
		    describe(fwd.k->status, how, sizeof(how)));
	kid_forget(fwd.k);
	fwd.k = NULL;
}

/*
 * After the rounds: the round's forward stops on SIGTERM (exit 0), then
 * `forward --drain` moves what is left and exits 0, before the drain
 * workers start.
 */
/*
 * How many forwards have said their start line (after their signals are
 * blocked and read from a signalfd).  forward_finish waits for the current
 * one's: a SIGTERM before it, to one just started (after a kill -9 late in
 * the last round; an ASan build starts slowly), killed it by the signal's
 * default action, which is not what the stop tests.
 */
static int
forward_ready(void)
{
	size_t len;
	char *text = slurp(path("%s/forward.log", work), &len), *p = text;
	int n = 0;

	while (p != NULL && (p = strstr(p, " origin=")) != NULL) {
		n++;
		p++;
	}
	free(text);
	return n;
}

static void
forward_finish(void)
{
	int64_t until = mono_ms() + FWD_STOP_MS;

	forward_alive();
	while (forward_ready() <= fwd.said && mono_ms() < until &&
	    !(fwd.k != NULL && fwd.k->done))
		wait_chld(50);
	kill(fwd.pid, SIGTERM);
	forward_reap("SIGTERM", FWD_STOP_MS);
	if (stop_sig)
		return;
	forward_start(true);
	forward_reap("--drain", DRAIN_MS);
}

/* ---- dependencies (issue 37) ---- */

#define DEP_POOL	48	/* the latest jobs a dependent may wait for */
#define DEP_MINE	8	/* ... and the latest x- and d- jobs */

struct dep_pool {
	char	 any[DEP_POOL][64], mine[DEP_MINE][64];
	int	 nany, nmine;
};

/*
 * IDs an --after may name: the latest printed ones (c and d: submits to
 * the database), the latest x- and d- jobs apart, so that chains and
 * jobs that fail are waited for often.
 */
static void
dep_pool(struct dep_pool *p)
{
	char *subs = slurp(path("%s/submissions", work), NULL), *line, *save;

	p->nany = p->nmine = 0;
	for (line = subs ? strtok_r(subs, "\n", &save) : NULL; line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((line[0] != 'c' && line[0] != 'd') || strlen(line) > 64 ||
		    strchr(line, ',') != NULL)	/* ",p=N,k=KEY": no list */
			continue;
		if ((line[2] == 'x' || line[2] == 'd') && line[3] == '-')
			snprintf(p->mine[p->nmine++ % DEP_MINE], 64, "%s",
			    line + 2);
		else
			snprintf(p->any[p->nany++ % DEP_POOL], 64, "%s",
			    line + 2);
	}
	free(subs);
	p->nany = p->nany < DEP_POOL ? p->nany : DEP_POOL;
	p->nmine = p->nmine < DEP_MINE ? p->nmine : DEP_MINE;
}

/*
 * `chute submit URL&application_name=td --id ID [--after LIST
 * [--after-failed run]] FILE`; its exit code, -1 if it timed out; a 0
 * that printed another ID is a 70.  Each try is a line of WORK/deps.
 */
static int
dep_cmd(const char *id, const char *after, bool run, uint64_t *r)
{
	char url[700], file[PATH_MAX + 64], *argv[16], *out = NULL;
	int ac = 0, ws, code;

	snprintf(url, sizeof(url), "%s&application_name=td", pg.url);
	snprintf(file, sizeof(file), "%s/payload/%s", work, id);
	append_line(file, "torture payload 0 %u", (unsigned)rnd(r, 1u << 30));
	argv[ac++] = cfg.chute;
	argv[ac++] = "submit";
	argv[ac++] = url;
	argv[ac++] = "--id";
	argv[ac++] = (char *)(uintptr_t)id;
	if (after != NULL) {
		argv[ac++] = "--after";
		argv[ac++] = (char *)(uintptr_t)after;
	}
	if (run) {
		argv[ac++] = "--after-failed";
		argv[ac++] = "run";
	}
	argv[ac++] = file;
	argv[ac] = NULL;
	ws = capture(argv, -1, &out, path("%s/deps.err", work), CMD_MS);
	code = ws != -1 && WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	if (code == 0 && (out == NULL || strncmp(out, id, strlen(id)) != 0 ||
	    out[strlen(id)] != '\n'))
		code = 70;
	unlink(file);
	free(out);
	/* Printed: submitted; 75: maybe committed, under this ID. */
	if (code == 0 || code == 75)
		append_line(path("%s/submissions", work), "%c %s",
		    code == 0 ? 'c' : '?', id);
	append_line(path("%s/deps", work), "%c %s %d %d %s",
	    after != NULL ? 'D' : 'X', id, code, run, after ? after : "-");
	return code;
}

/* `chute cancel URL&application_name=tc ID`: a line "C ID CODE". */
static void
dep_cancel(const char *id)
{
	char url[700], *argv[] = { cfg.chute, "cancel", url,
	    (char *)(uintptr_t)id, NULL }, *out = NULL;
	int ws;

	snprintf(url, sizeof(url), "%s&application_name=tc", pg.url);
	ws = capture(argv, -1, &out, path("%s/cancel.err", work), CMD_MS);
	free(out);
	append_line(path("%s/deps", work), "C %s %d 0 -", id, ws != -1 &&
	    WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}

/*
 * One process per round: now and then a job x-rR-N that fails (the
 * handler exits 1), then three dependents d-rR-N, each --after one to
 * three of the latest jobs (half of them x- and d- ones: chains),
 * a third with --after-failed run; one in four cancelled at once,
 * in whatever state it reached.
 */
static void __attribute__((noreturn))
deps_main(int round, uint64_t r)
{
	struct dep_pool p;
	char id[64], after[3 * 65];
	int n = 0;

	if (rnd(&r, 2) == 0) {
		snprintf(id, sizeof(id), "x-r%d-%d", round, n++);
		dep_cmd(id, NULL, false, &r);
	}
	for (int i = 0; i < 3 && !stop_sig; i++) {
		int k = 1 + (int)rnd(&r, 3);

		dep_pool(&p);
		after[0] = '\0';
		for (int a = 0; a < k; a++) {
			bool mine = p.nmine > 0 && (p.nany == 0 || rnd(&r, 2));
			const char *t = mine ? p.mine[rnd(&r, p.nmine)] :
			    p.nany > 0 ? p.any[rnd(&r, p.nany)] : NULL;

			if (t == NULL || strstr(after, t) != NULL)
				continue;	/* a substring: fewer, no matter */
			if (after[0] != '\0')
				strlcat(after, ",", sizeof(after));
			strlcat(after, t, sizeof(after));
		}
		if (after[0] == '\0')
			continue;
		snprintf(id, sizeof(id), "d-r%d-%d", round, n++);
		if (dep_cmd(id, after, rnd(&r, 3) == 0, &r) == 0 &&
		    rnd(&r, 4) == 0)
			dep_cancel(id);
	}
	_exit(0);
}

static void
deps_start(int round)
{
	uint64_t r = rng_next(&rng);
	pid_t pid = fork();

	if (pid == -1)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		child_setup();
		setpgid(0, 0);
		sigprocmask(SIG_BLOCK, &chld_set, NULL);
		deps_main(round, r);
	}
	setpgid(pid, pid);
	kid_add(pid, K_SUBMITTER, round);
}

/* ---- the rounds ---- */

static void
ino_setup_pg(void)
{
	if ((ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) == -1 ||
	    inotify_add_watch(ino, path("%s/journal", work), IN_MODIFY) == -1 ||
	    inotify_add_watch(ino, path("%s/submissions", work), IN_MODIFY) == -1)
		die("inotify: %s", strerror(errno));
}

/* The worker of the run that ended last (0: none seen). */
static long
last_ended_worker(void)
{
	long best = -1;

	for (long r = nruns - 1; r >= 0 && r >= nruns - 64; r--)
		if (runs[r].eline != 0 && (best == -1 ||
		    runs[r].eline > runs[best].eline))
			best = r;
	return best == -1 ? 0 : runs[best].ppid;
}

enum moment { MO_START, MO_BURST, MO_RUNNING, MO_ENDED };

/*
 * One round: workers topped up to 2 or 3, submitters (and with --freeze,
 * now and then, a worker frozen as they are claimed), then a kill at a
 * moment found by watching; a restart before or after it, a termination,
 * an outage, each now and then; then a pause that lets recoveries happen
 * while the next round's trouble begins.  The waits pick moments; nothing
 * checked depends on them.
 */
static void
round_pg(int round)
{
	unsigned m = rnd(&rng, 100), r = rnd(&rng, 100);
	enum moment mo = m < 10 ? MO_START : m < 35 ? MO_BURST :
	    m < 75 ? MO_RUNNING : MO_ENDED;
	bool restart = r < 20, restart_first = r < 10;
	int victim = -1, frozen;
	long runs0, ends0, pid = 0;
	struct stat sb;
	off_t subs0;

	workers_top_up(round, 2 + (int)rnd(&rng, 2));
	journal_poll();
	runs0 = nruns;
	ends0 = tally.ends;
	subs0 = stat(path("%s/submissions", work), &sb) == 0 ? sb.st_size : 0;
	subs_start(round, backlog_pg());
	subs_unique_start(round);	/* issue 37: check_unique */
	deps_start(round);		/* issue 37: check_deps */
	if (cfg.freeze && rnd(&rng, 100) < 30) {
		wait_until(submitted, &subs0, NULL, 5000);
		if ((frozen = worker_pick(claimer())) != -1)
			worker_freeze(frozen);
	}
	switch (mo) {
	case MO_START:		/* connect, LISTEN, recover, first claims */
		victim = worker_start(false, round);
		nap_us(rnd(&rng, 30000));
		st.k_start++;
		break;
	case MO_BURST:		/* claims woken by NOTIFY */
		wait_until(submitted, &subs0, NULL, 5000);
		nap_us(rnd(&rng, 20000));
		st.k_burst++;
		break;
	case MO_RUNNING:	/* handlers running */
		if (wait_until(run_started, &runs0, NULL, 5000))
			pid = runs[nruns - 1].ppid;
		nap_us(rnd(&rng, 80000));
		st.k_running++;
		break;
	case MO_ENDED:		/* an outcome in its 5 ms batch, or in flight */
		if (wait_until(run_ended, &ends0, NULL, 5000))
			pid = last_ended_worker();
		nap_us(rnd(&rng, 8000));
		st.k_ended++;
		break;
	}
	if (victim == -1)
		victim = worker_pick(pid);
	if (restart && restart_first)
		server_restart();
	if (victim != -1)
		worker_kill(victim);
	if (restart && !restart_first)
		server_restart();
	keys_event();
	if (rnd(&rng, 100) < 20)
		terminate(rnd(&rng, 2) ? worker_pick(0) : -1);
	if (rnd(&rng, 100) < 6)
		server_outage();
	if (rnd(&rng, 100) < 10)
		server_hang(worker_pick(0));
	if (rnd(&rng, 100) < 40) {	/* forward, at a random instant */
		nap_us(rnd(&rng, 150000));
		forward_kill();
	}
	forward_alive();
	workers_top_up(round, 2);
	nap_us(rnd(&rng, 500000));
}

/* ---- the end ---- */

/* Drain workers until nothing is left (bounded); then the round workers go. */
static void
drain_pg(void)
{
	int64_t t0 = mono_ms(), deadline = t0 + DRAIN_MS +
	    (int64_t)DRAIN_JOB_MS * backlog_pg();
	int d[2];
	char how[32];

	for (int i = 0; i < 2; i++)
		d[i] = worker_start(true, -1);
	for (int i = 0; i < 2 && !stop_sig; i++) {
		struct worker *w = &workers[d[i]];
		int64_t left = deadline - mono_ms();

		if (!kid_wait(w->k, left > 0 ? left : 0, true)) {
			if (stop_sig)
				return;
			violation("drain worker tw%d did not finish within %d s "
			    "(see worker.%d.log)", d[i], (int)((deadline - t0) /
			    1000), d[i]);
			kill(w->pid, SIGKILL);
			kid_wait(w->k, KILL_WAIT_MS, false);
		} else if (w->k->status != 0)
			violation("drain worker tw%d ended with %s (see "
			    "worker.%d.log)", d[i], describe(w->k->status, how,
			    sizeof(how)), d[i]);
		kid_forget(w->k);
		w->k = NULL;
	}
	st.drain_ms = mono_ms() - t0;
	workers_live();		/* none may have exited meanwhile */
	for (int i = 0; i < nworkers; i++)
		if (workers[i].k != NULL) {
			kill(workers[i].pid, SIGKILL);
			kid_wait(workers[i].k, KILL_WAIT_MS, false);
			kid_forget(workers[i].k);
			workers[i].k = NULL;
		}
}

/* What the killed workers and their handlers left: ours, until it ends. */
static void
orphans_wait_pg(int64_t ms)
{
	int64_t deadline = mono_ms() + ms;

	for (;;) {
		reap();
		if (untracked_children() == 0)
			return;
		int64_t left = deadline - mono_ms();
		if (left <= 0 || stop_sig) {
			if (!stop_sig)
				violation("handlers still running %" PRId64
				    " s after the drain", ms / 1000);
			return;
		}
		wait_chld(left < 200 ? left : 200);
	}
}

/* ---- the checks: the database's rows ---- */

/* Split a psql row on tabs into at most max fields; how many. */
static int
fields(char *line, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = line;
		if ((line = strchr(line, '\t')) == NULL)
			break;
		*line++ = '\0';
	}
	return n;
}

static void
load_jobs(void)
{
	char *out, *line, *save, *f[5];

	sql_or_die("SELECT queue, id, state, attempts, last FROM chute.jobs",
	    &out);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (fields(line, f, 5) != 5) {
			violation("chute.jobs: unreadable row: %.100s", line);
			continue;
		}
		int j = job_get(f[1], true);	/* may move jobs[] */
		struct job *jb = &jobs[j];

		if (strcmp(f[0], "default") != 0)
			violation("%s: in the queue '%s'", f[1], f[0]);
		jb->rows++;
		snprintf(jb->state, sizeof(jb->state), "%s", f[2]);
		jb->attempts = atoi(f[3]);
		free(jb->why);
		jb->why = strdup(f[4]);
	}
	free(out);
}

/* ---- the audit, row by row ---- */

struct arow {
	int64_t	 at, old_token, new_token;
	char	*app, *op, *id, *old, *new, *worker, *expired, *due, *last;
	int	 old_attempts, new_attempts;
};

static bool
is(const char *s, const char *a, const char *b)
{
	return strcmp(s, a) == 0 || (b != NULL && strcmp(s, b) == 0);
}

/* twN -> N; -1 for any other session. */
static int
app_worker(const char *app)
{
	char *end;
	long n;

	if (strncmp(app, "tw", 2) != 0)
		return -1;
	n = strtol(app + 2, &end, 10);
	return *end == '\0' && n >= 0 && n < nworkers ? (int)n : -1;
}

static void
claim_open(int j, const struct arow *a)
{
	const char *colon = strrchr(a->worker, ':');
	struct claim *c;

	if (nclaims == capclaims && (claims = reallocarray(claims,
	    capclaims = capclaims ? capclaims * 2 : 1024, sizeof(*claims))) ==
	    NULL)
		die("out of memory");
	c = &claims[nclaims];
	*c = (struct claim){ .job = j, .attempt = a->new_attempts, .next = -1,
	    .worker = app_worker(a->app), .pid = colon ? atol(colon + 1) : 0,
	    .token = a->new_token, .at = a->at, .run = -1 };
	/* Appended at the end of the job's list: claims in commit order. */
	int *p = &job_claims[j];
	while (*p != -1)
		p = &claims[*p].next;
	*p = nclaims;
	job_open[j] = nclaims++;
	if (c->worker == -1 || workers[c->worker].pid != c->pid)
		violation("%s: claimed by session '%s' for worker '%s', not one "
		    "of ours", jobs[j].id, a->app, a->worker);
	if (a->new_attempts != a->old_attempts + 1 || a->new_token == 0)
		violation("%s: a claim took attempts from %d to %d, token %"
		    PRId64, jobs[j].id, a->old_attempts, a->new_attempts,
		    a->new_token);
	if (strcmp(a->due, "true") != 0)
		violation("%s: claimed (attempt %d) before it was due",
		    jobs[j].id, a->new_attempts);
}

/*
 * A job left cur: recovered (an expired lease; to new, attempts kept, or
 * to failed with "abandoned: lease expired"), handed back (new, attempts
 * - 1), or an outcome, which only the claim's own worker may record.
 */
/* A cancel by our `chute cancel` (tc): the job leaves for failed. */
static bool
cancelled(const struct arow *a)
{
	return is(a->app, "tc", NULL) && is(a->new, "failed", NULL) &&
	    is(a->last, "cancelled", NULL);
}

static void
claim_close(int j, const struct arow *a)
{
	int k = job_open[j];
	struct claim *c = k != -1 ? &claims[k] : NULL;
	bool recovery = (is(a->new, "failed", NULL) &&
	    strncmp(a->last, "abandoned: lease expired", 24) == 0) ||
	    (is(a->new, "new", NULL) && a->new_attempts == a->old_attempts);

	if (c == NULL || c->token != a->old_token) {
		violation("%s: left cur (token %" PRId64 ") without a claim of "
		    "that token in the audit", jobs[j].id, a->old_token);
		return;
	}
	job_open[j] = -1;
	c->end_at = a->at;
	if (cancelled(a)) {
		c->end = 'c';		/* its worker stops the run */
		return;
	}
	if (recovery) {
		c->end = 'r';
		if (strcmp(a->expired, "true") != 0)
			violation("%s: the claim of attempt %d by tw%d was "
			    "recovered (by '%s') while its lease ran", jobs[j].id,
			    c->attempt, c->worker, a->app);
		return;
	}
	c->end = is(a->new, "new", NULL) &&
	    a->new_attempts == a->old_attempts - 1 ? 'h' : 'o';
	snprintf(c->to, sizeof(c->to), "%s", a->new);
	c->last = strdup(a->last);
	if (app_worker(a->app) != c->worker)
		violation("%s: outcome %s (%s) of attempt %d recorded by '%s', "
		    "but tw%d held the claim (lease %s): fencing failed",
		    jobs[j].id, a->new, a->last, c->attempt, a->app, c->worker,
		    strcmp(a->expired, "true") == 0 ? "expired" : "running");
	if (c->end == 'o' && a->new_attempts != a->old_attempts)
		violation("%s: outcome %s changed attempts from %d to %d",
		    jobs[j].id, a->new, a->old_attempts, a->new_attempts);
}

static void
audit_row(const struct arow *a)
{
	int j = job_get(a->id, true);

	if (is(a->new, "done", "failed"))
		job_end_at[j] = a->at;
	if (is(a->op, "I", NULL)) {
		/* wait: a dependent (issue 37), checked in check_deps. */
		if ((!is(a->new, "new", "defer") && !is(a->new, "wait", NULL)) ||
		    a->new_attempts != 0)
			violation("%s: inserted as %s with attempts %d",
			    a->id, a->new, a->new_attempts);
		return;
	}
	if (is(a->op, "D", NULL)) {
		violation("%s: deleted (from %s)", a->id, a->old);
		return;
	}
	if (is(a->old, "cur", NULL) && is(a->new, "cur", NULL)) {
		if (a->old_token == a->new_token)
			return;		/* a renewal */
		violation("%s: claimed (attempt %d, by '%s') while claimed "
		    "(token %" PRId64 ", attempt %d): two claims at once",
		    a->id, a->new_attempts, a->app, a->old_token,
		    a->old_attempts);
		if (job_open[j] != -1)
			claims[job_open[j]].end = 'x';
		claim_open(j, a);
	} else if (is(a->old, "new", "defer") && is(a->new, "cur", NULL))
		claim_open(j, a);
	else if (is(a->old, "cur", NULL))
		claim_close(j, a);
	else if (is(a->old, "wait", NULL) && is(a->new, "new", NULL))
		job_woke_at[j] = a->at;		/* its last dependency ended */
	else if (is(a->old, "wait", NULL) && is(a->new, "wait", NULL))
		;				/* one of them ended: waiting - 1 */
	else if (is(a->old, "new", "defer") && is(a->new, "new", "defer") &&
	    a->old_attempts == a->new_attempts &&
	    a->old_token == a->new_token && strstr(a->id, ",u=replace-"))
		;	/* --on-duplicate replace of a job not claimed yet */
	else if (is(a->new, "failed", NULL) && (strncmp(a->last,
	    "dependency failed: ", 19) == 0 || cancelled(a)))
		;				/* check_deps judges it */
	else
		violation("%s: changed from %s to %s by '%s' (%s)", a->id,
		    a->old, a->new, a->app, a->last);
}

static void
load_audit(void)
{
	char *out, *line, *save, *f[16];

	sql_or_die("SELECT (extract(epoch FROM at) * 1000000)::bigint, app, op,"
	    " id, coalesce(old_state, ''), coalesce(new_state, ''),"
	    " coalesce(old_attempts, -1), coalesce(new_attempts, -1),"
	    " coalesce(old_token, 0), coalesce(new_token, 0),"
	    " coalesce(worker, ''), coalesce(expired::text, ''),"
	    " coalesce(due::text, ''), coalesce(last, '')"
	    " FROM torture.audit ORDER BY seq", &out);
	/* Every job the audit names is in the table before the arrays. */
	for (char *p = out; p != NULL && *p != '\0'; ) {
		char *nl = strchr(p, '\n'), *id = p;
		for (int i = 0; i < 3 && id != NULL; i++)
			if ((id = strchr(id, '\t')) != NULL)
				id++;
		if (id != NULL) {
			char save_c, *e = strchr(id, '\t');
			if (e != NULL) {
				save_c = *e;
				*e = '\0';
				job_get(id, true);
				*e = save_c;
			}
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	if ((job_claims = malloc(njobs * sizeof(int))) == NULL ||
	    (job_open = malloc(njobs * sizeof(int))) == NULL ||
	    (job_end_at = calloc(njobs, sizeof(int64_t))) == NULL ||
	    (job_woke_at = calloc(njobs, sizeof(int64_t))) == NULL)
		die("out of memory");
	for (int j = 0; j < njobs; j++)
		job_claims[j] = job_open[j] = -1;
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		struct arow a;

		if (fields(line, f, 14) != 14) {
			violation("torture.audit: unreadable row: %.100s", line);
			continue;
		}
		a = (struct arow){ .at = strtoll(f[0], NULL, 10), .app = f[1],
		    .op = f[2], .id = f[3], .old = f[4], .new = f[5],
		    .old_attempts = atoi(f[6]), .new_attempts = atoi(f[7]),
		    .old_token = strtoll(f[8], NULL, 10),
		    .new_token = strtoll(f[9], NULL, 10), .worker = f[10],
		    .expired = f[11], .due = f[12], .last = f[13] };
		audit_row(&a);
	}
	free(out);
}

/* ---- runs and claims together ---- */

/* Each run to its claim: same job, attempt and worker, the latest before. */
static void
match_runs(void)
{
	for (long r = 0; r < nruns; r++) {
		struct run *rn = &runs[r];
		const char *id = jobs[rn->job].id;
		int best = -1;

		for (int k = job_claims[rn->job]; k != -1; k = claims[k].next)
			if (claims[k].attempt == rn->attempt &&
			    claims[k].pid == rn->ppid &&
			    claims[k].at <= rn->start_ns / 1000 + 1000)
				best = k;
		if (best == -1) {
			violation("%s: attempt %d ran (pid %ld, worker pid %ld, "
			    "journal line %ld) without a claim of it by that "
			    "worker", id, rn->attempt, rn->pid, rn->ppid,
			    rn->sline);
			continue;
		}
		if (claims[best].run != -1)
			violation("%s: one claim (attempt %d, tw%d) ran twice: "
			    "journal lines %ld and %ld", id, rn->attempt,
			    claims[best].worker, runs[claims[best].run].sline,
			    rn->sline);
		claims[best].run = (int)r;
		rn->claim = best;
	}
}

/* A wall-clock time in us as HH:MM:SS.mmm (UTC), for a message. */
static const char *
clock_text(int64_t us)
{
	static char buf[4][32];
	static int i;
	time_t secs = us / 1000000;
	struct tm tm;

	i = (i + 1) % 4;
	gmtime_r(&secs, &tm);
	snprintf(buf[i], sizeof(buf[i]), "%02d:%02d:%02d.%03d", tm.tm_hour,
	    tm.tm_min, tm.tm_sec, (int)(us % 1000000 / 1000));
	return buf[i];
}

/* "2026-12-01T20:08:27.753Z ...", say()'s time: us since the epoch, or 0. */
static int64_t
log_time(const char *line)
{
	struct tm tm = { 0 };
	const char *end = strptime(line, "%Y-%m-%dT%H:%M:%S", &tm);
	int ms;

	if (end == NULL || sscanf(end, ".%3dZ", &ms) != 1)
		return 0;
	return (int64_t)timegm(&tm) * 1000000 + ms * 1000;
}

/* "job=ID new->cur attempt=N" of worker w at t: the run it started. */
static void
launched(const struct worker *w, const char *line, int64_t t)
{
	const char *p = strstr(line, " job=");
	char id[256];
	int a, j;

	if (p == NULL || sscanf(p, " job=%255s new->cur attempt=%d", id, &a) !=
	    2 || (j = job_get(id, false)) == -1)
		return;
	for (int r = jobs[j].first; r != -1; r = runs[r].next)
		if (runs[r].attempt == a && runs[r].ppid == w->pid &&
		    runs[r].launch_us == 0) {
			runs[r].launch_us = t;
			return;
		}
}

/*
 * The workers' logs: when each started which run, and what each said went
 * wrong with its connection or a statement.  After such trouble a worker
 * may give up its claims (fleet.md, "Leases and fencing"), which is its
 * design: each of those lines is an event of that worker's own.  A line a
 * kill -9 caught in the worker's buffer is missing: that worker was killed.
 */
static void
worker_logs(void)
{
	static const char *const words[] = { "; retrying, jobs keep running",
	    ": renew: ", ": claim: ", ": recover: ", ": record outcomes: ",
	    NULL };

	for (int i = 0; i < nworkers; i++) {
		char *log = slurp(path("%s/worker.%d.log", work, i), NULL);
		char *line, *save;

		for (line = log ? strtok_r(log, "\n", &save) : NULL;
		    line != NULL; line = strtok_r(NULL, "\n", &save)) {
			int64_t t = log_time(line);
			const char *const *w = words;

			if (t == 0)
				continue;
			launched(&workers[i], line, t);
			while (*w != NULL && strstr(line, *w) == NULL)
				w++;
			if (*w == NULL)
				continue;
			event(EV_SELF, t, workers[i].pid);
			events[nevents - 1].t1 = t;
		}
		free(log);
	}
}

/*
 * What explains a claim lost to an expired lease: 1 an event of ours that
 * could cost it (its worker's kill, a restart, an outage, a termination of
 * its session) between the claim and its recovery; 2 trouble its worker
 * reported then; 0 nothing.
 */
static int
explained(const struct claim *c)
{
	int why = 0;

	for (int i = 0; i < nevents; i++)
		if ((events[i].pid == 0 || events[i].pid == c->pid) &&
		    events[i].t1 >= c->at - SLACK_US &&
		    events[i].t0 <= c->end_at)
			why = events[i].kind != EV_SELF ? 1 : why == 0 ? 2 : why;
	return why;
}

/* A claim its worker recorded: does the outcome agree with the run? */
static void
check_outcome_pg(const struct claim *c)
{
	const char *id = jobs[c->job].id;
	const struct run *rn = c->run != -1 ? &runs[c->run] : NULL;
	bool timeout = strncmp(c->last, "timeout", 7) == 0;

	if (rn == NULL) {
		if (cfg.flaky && timeout)
			st.timeout_norun++;	/* stopped before it journaled */
		else
			violation("%s: outcome %s (%s) recorded for attempt %d by "
			    "tw%d, whose handler never journaled", id, c->to,
			    c->last, c->attempt, c->worker);
		return;
	}
	if (is(c->to, "done", NULL)) {
		if (rn->eline == 0 || rn->code != 0)
			violation("%s: done by attempt %d, but that run %s", id,
			    c->attempt, rn->eline == 0 ? "never ended" :
			    "did not exit 0");
		return;
	}
	if (strncmp(id, "x-", 2) == 0 && is(c->last, "exit=1", NULL) &&
	    is(c->to, "failed", NULL)) {
		if (rn->eline == 0 || rn->code != 1)
			violation("%s: failed (exit=1) by attempt %d, but that "
			    "run %s", id, c->attempt, rn->eline == 0 ?
			    "never ended" : "did not exit 1");
		return;
	}
	if (!cfg.flaky) {
		violation("%s: attempt %d ended %s (%s) without --flaky", id,
		    c->attempt, c->to, c->last);
		return;
	}
	if (strncmp(c->last, "exit=75", 7) == 0 ?
	    rn->eline == 0 || rn->code != 75 :
	    !timeout || (rn->eline != 0 && rn->code != 143))
		violation("%s: attempt %d ended %s (%s), but its run %s %d", id,
		    c->attempt, c->to, c->last, rn->eline ? "exited" :
		    "never ended, code", rn->eline ? rn->code : 0);
}

static void
check_claims(void)
{
	for (int k = 0; k < nclaims; k++) {
		const struct claim *c = &claims[k];
		const struct run *rn = c->run != -1 ? &runs[c->run] : NULL;

		switch (c->end) {
		case 'o':
			check_outcome_pg(c);
			break;
		case 'h':
			st.handbacks++;
			if (rn != NULL)
				violation("%s: attempt %d ran, then was handed "
				    "back uncounted", jobs[c->job].id, c->attempt);
			break;
		case 'r':
			st.lost++;
			if (rn != NULL && rn->launch_us > c->end_at)
				violation("%s: tw%d started attempt %d at %s, "
				    "after its claim had been recovered (%.3f s "
				    "before): it ran a job it no longer held",
				    jobs[c->job].id, c->worker, c->attempt,
				    clock_text(rn->launch_us),
				    (rn->launch_us - c->end_at) / 1e6);
			if (rn == NULL)
				st.lost_norun++;
			else if (rn->eline == 0)
				st.lost_midrun++;
			else
				st.lost_outcome++;
			switch (explained(c)) {
			case 2:
				st.lost_self++;
				break;
			case 0:
				violation("%s: the claim of attempt %d by tw%d "
				    "(pid %ld) was lost without a kill, restart "
				    "or cut of its connection, nor trouble its "
				    "worker reported (its run: %s)",
				    jobs[c->job].id, c->attempt, c->worker,
				    (long)c->pid, rn == NULL ? "none" :
				    rn->eline == 0 ? "no END" : "ended");
				break;
			}
			break;
		default:
			break;	/* open: the job's state says it */
		}
	}
}

/* ---- the checks, job by job ---- */

static int
count_claims(int j, int *handed)
{
	int n = 0;

	*handed = 0;
	for (int k = job_claims[j]; k != -1; k = claims[k].next) {
		n++;
		*handed += claims[k].end == 'h';
	}
	return n;
}

static int
count_runs(const struct job *jb)
{
	int n = 0;

	for (int r = jb->first; r != -1; r = runs[r].next)
		n++;
	return n;
}

/* The last claim's run, when it is the one done recorded. */
static void
check_finished(struct job *jb, int j)
{
	int last = -1;

	for (int k = job_claims[j]; k != -1; k = claims[k].next)
		last = k;
	if (is(jb->state, "done", NULL)) {
		if (last == -1 || claims[last].end != 'o' ||
		    !is(claims[last].to, "done", NULL) || claims[last].run == -1)
			violation("%s: done, but the audit has no run whose "
			    "outcome made it so", jb->id);
		return;
	}
	/* Failed by the handler of an x- job, a dependency, a cancel. */
	if (strncmp(jb->id, "x-", 2) == 0 && is(jb->why, "exit=1", NULL))
		return;
	if (strncmp(jb->why, "dependency failed: ", 19) == 0 ||
	    is(jb->why, "cancelled", NULL))
		return;				/* check_deps */
	if (jb->attempts != MAX_ATTEMPTS)
		violation("%s: failed with attempts=%d (%s): no handler here "
		    "fails for good", jb->id, jb->attempts, jb->why);
	else if (strcmp(jb->why, "abandoned: lease expired; attempts "
	    "exhausted") == 0)
		st.failed_lost++;	/* kills and cuts used them up */
	else if (cfg.flaky && strstr(jb->why, "attempts-exhausted") != NULL)
		st.failed_flaky++;
	else
		violation("%s: failed (%s)%s", jb->id, jb->why, cfg.flaky ?
		    "" : " without --flaky");
}

static void
check_job_pg(struct job *jb, int j)
{
	int handed, n;

	if (jb->method == 0 && jb->rows > 0) {
		if (unknown_allowed > 0) {
			unknown_allowed--;	/* committed, ID never printed */
			st.unprinted++;
		} else
			violation("%s: in the database, never submitted",
			    jb->id);
	}
	if (jb->method != 0 && jb->method != '?' && jb->rows != 1) {
		violation("%s: chute submit printed it, and the database has "
		    "%d rows of it%s", jb->id, jb->rows, jb->rows == 0 ?
		    ": lost" : "");
		return;
	}
	if (jb->rows == 0) {
		if (jb->first != -1)
			violation("%s: a handler ran for a job not in the "
			    "database", jb->id);
		return;
	}
	if (!is(jb->state, "done", "failed")) {
		violation("%s: still %s after the drain", jb->id, jb->state);
		return;
	}
	if (jb->attempts > MAX_ATTEMPTS)
		violation("%s: attempts=%d, more than --max-attempts %d",
		    jb->id, jb->attempts, MAX_ATTEMPTS);
	n = count_claims(j, &handed);
	if (jb->attempts != n - handed)
		violation("%s: attempts=%d, but the audit has %d claims, %d "
		    "handed back", jb->id, jb->attempts, n, handed);
	if (jb->attempts < count_runs(jb))
		violation("%s: attempts=%d, but the journal has %d runs",
		    jb->id, jb->attempts, count_runs(jb));
	check_finished(jb, j);
}

/* Lines of the workers' logs that say the fencing or the leases acted. */
static void
count_worker_logs(void)
{
	DIR *dp;
	struct dirent *de;

	for (int i = 0; i < nworkers; i++) {
		char *log = slurp(path("%s/worker.%d.log", work, i), NULL);

		for (char *p = log; p && (p = strstr(p, " refused: ")); p++)
			st.fenced++;
		for (char *p = log; p && (p = strstr(p, "cannot renew its "
		    "lease")); p++)
			st.expired++;
		free(log);
	}
	if ((dp = opendir(path("%s/wtmp", work))) == NULL)
		return;
	while ((de = readdir(dp)) != NULL)
		st.leftover_dirs += strncmp(de->d_name, "chute-pgsql.", 12) == 0;
	closedir(dp);
}

/* ---- the checks: the spool at the edge ---- */

/* The bytes of a file as lowercase hex (psql's encode(body, 'hex')). */
static char *
hex_of(const char *file)
{
	size_t len = 0;
	char *b = slurp(file, &len), *h;

	if (b == NULL || (h = malloc(2 * len + 1)) == NULL) {
		free(b);
		return NULL;
	}
	for (size_t i = 0; i < len; i++)
		snprintf(h + 2 * i, 3, "%02x", (unsigned char)b[i]);
	h[2 * len] = '\0';
	free(b);
	return h;
}

/* One row forward inserted: from our spool, under its own ID, exactly. */
static void
check_forwarded(char **f)
{
	int j = job_get(f[1], false);
	char *local;

	st.fwd_jobs++;
	if (j == -1 || (jobs[j].method != 'f' && jobs[j].method != 'm')) {
		violation("%s: forwarded from %s, never accepted into it", f[1],
		    f[2]);
		return;
	}
	if (strcmp(f[0], f[1]) != 0 || strcmp(f[2], spool) != 0)
		violation("%s: forwarded as %s from '%s'", f[1], f[0], f[2]);
	local = hex_of(path("%s/done/%s", spool, f[1]));
	if (local == NULL || strcmp(local, f[3]) != 0)
		violation("%s: its payload in the database is not the file in "
		    "done/ (%s)", f[1], local == NULL ? "no such file" :
		    "other bytes");
	free(local);
}

/*
 * Every job accepted into the spool is in its done/ and nowhere else
 * there; every row forward inserted is one of them, with its bytes (the
 * rows themselves are checked with the others: exactly one per ID, run,
 * done or failed).
 */
static void
check_edge(void)
{
	static const char *const elsewhere[] = { "new", "cur", "defer",
	    "failed" };
	char *out, *line, *save, *f[4];
	struct stat sb;

	for (int j = 0; j < njobs; j++) {
		if (jobs[j].method != 'f' && jobs[j].method != 'm')
			continue;
		if (lstat(path("%s/done/%s", spool, jobs[j].id), &sb) == -1)
			violation("%s: accepted into the spool, not in its done/",
			    jobs[j].id);
		for (size_t i = 0; i < 4; i++)
			if (lstat(path("%s/%s/%s", spool, elsewhere[i],
			    jobs[j].id), &sb) == 0)
				violation("%s: still in the spool's %s/",
				    jobs[j].id, elsewhere[i]);
	}
	/* Where a job came from is in its payload's row (version 5). */
	sql_or_die("SELECT j.id, p.origin_id, p.origin_spool,"
	    " coalesce(encode(p.body, 'hex'), '') FROM chute.payloads p"
	    " LEFT JOIN chute.jobs j USING (queue, id)"
	    " WHERE p.origin IS NOT NULL", &out);
	for (line = strtok_r(out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (fields(line, f, 4) == 4)
			check_forwarded(f);
		else
			violation("chute.jobs: unreadable row: %.100s", line);
	free(out);
}

/* What forward said: jobs a killed one had sent, found there again. */
static void
count_forward_log(void)
{
	char *log = slurp(path("%s/forward.log", work), NULL);

	for (char *p = log; p && (p = strstr(p, "found there from an "
	    "earlier try")); p++)
		st.fwd_resent++;
	free(log);
}

/* ---- the checks: unique keys ---- */

/* The one job of each unique key: key and ID, tab-separated, in *out. */
static int
unique_jobs(char **out)
{
	char *rows, *line, *save, *f[3];
	size_t len = 0;
	FILE *m = open_memstream(out, &len);

	if (m == NULL)
		die("open_memstream: %s", strerror(errno));
	sql_or_die("SELECT unique_key, count(*), min(id) FROM chute.payloads"
	    " WHERE unique_key IS NOT NULL GROUP BY 1", &rows);
	for (line = strtok_r(rows, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (fields(line, f, 3) != 3)
			violation("chute.payloads: unreadable row: %.100s",
			    line);
		else if (atoi(f[1]) != 1)
			violation("unique key %s: %s jobs (held while kept, "
			    "nothing purged: one, ever)", f[0], f[1]);
		else
			fprintf(m, "%s\t%s\n", f[0], f[2]);
	}
	free(rows);
	fclose(m);
	return 0;
}

/* key's job in the rows of unique_jobs(), or NULL. */
static const char *
unique_job(const char *rows, const char *key, char *buf, size_t len)
{
	size_t n = strlen(key);

	for (const char *p = rows; p != NULL && *p != '\0'; ) {
		const char *nl = strchr(p, '\n');

		if (strncmp(p, key, n) == 0 && p[n] == '\t' && nl != NULL) {
			snprintf(buf, len, "%.*s", (int)(nl - p - n - 1),
			    p + n + 1);
			return buf;
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	return NULL;
}

/*
 * Each try of sub_unique (WORK/uniques) against the database: a key has
 * one job; a try printed it (its ID, the only one it may print) and
 * exited as its mode promises (refuse: 0 for the one that made it, else
 * 3; keep: 0; replace: 0, or 3 once the holder ran), or exited 75 and
 * printed nothing; at most one refuse of a key made it.  Each ID printed
 * counts as submitted ('q') for the checks of every job that follow.
 */
static void
check_unique(void)
{
	char *buf = slurp(path("%s/uniques", work), NULL), *rows, *line, *save;
	char mode[16], key[64], id[256], job[256], made[64][64];
	int code, nmade = 0;

	if (buf == NULL)
		return;
	unique_jobs(&rows);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		const char *j;

		st.uniq_tries++;
		if (sscanf(line, "%15s %63s %d %255s", mode, key, &code,
		    id) != 4) {
			violation("uniques: unreadable line: %.100s", line);
			continue;
		}
		j = unique_job(rows, key, job, sizeof(job));
		if (code == 75 && strcmp(id, "-") == 0)
			continue;
		if ((code != 0 && code != 3) || (code == 3 &&
		    strcmp(mode, "keep") == 0) || j == NULL ||
		    strcmp(id, j) != 0) {
			violation("submit --unique %s --on-duplicate %s: exit "
			    "%d, printed %s; the key's job: %s", key, mode,
			    code, id, j != NULL ? j : "none");
			continue;
		}
		if (jobs[job_get(id, true)].method == 0)
			jobs[job_get(id, true)].method = 'q';
		if (code != 0 || strcmp(mode, "refuse") != 0)
			continue;
		for (int i = 0; i < nmade; i++)
			if (strcmp(made[i], key) == 0)
				violation("submit --unique %s --on-duplicate "
				    "refuse: two exited 0", key);
		if (nmade < 64)
			snprintf(made[nmade++], sizeof(made[0]), "%s", key);
	}
	for (const char *p = rows; p != NULL && *p != '\0'; p++) {
		st.uniq_keys++;
		p = strchr(p, '\n');
		if (p == NULL)
			break;
	}
	free(rows);
	free(buf);
}

/* ---- the checks: dependencies ---- */

/* The edges in chute.after, "ID\t,A,B,\tRUN" a line, in *out. */
static char *
dep_edges(void)
{
	char *out;

	sql_or_die("SELECT id, ',' || string_agg(after_id, ',') || ',',"
	    " bool_and(run)::text || '/' || bool_or(run)::text"
	    " FROM chute.after GROUP BY id", &out);
	return out;
}

/* id's line of dep_edges(): its list and its run flags, or false. */
static bool
dep_edge(const char *rows, const char *id, char *list, size_t len,
    char *run, size_t rlen)
{
	size_t n = strlen(id);
	char *f[3], line[4096];

	for (const char *p = rows; p != NULL && *p != '\0'; ) {
		const char *nl = strchr(p, '\n');
		int l = nl != NULL ? (int)(nl - p) : (int)strlen(p);

		if (strncmp(p, id, n) == 0 && p[n] == '\t') {
			snprintf(line, sizeof(line), "%.*s", l, p);
			if (fields(line, f, 3) != 3)
				return false;
			snprintf(list, len, "%s", f[1]);
			snprintf(run, rlen, "%s", f[2]);
			return true;
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	return false;
}

/* The last END of job j's handlers, ns; 0: none. */
static int64_t
last_end_ns(int j)
{
	int64_t t = 0;

	for (int r = jobs[j].first; r != -1; r = runs[r].next)
		if (runs[r].eline != 0 && runs[r].end_ns > t)
			t = runs[r].end_ns;
	return t;
}

/* Was id cancelled by one of ours (WORK/deps' C lines)? */
static bool
dep_cancelled(const char *deps, const char *id)
{
	char pat[300];

	snprintf(pat, sizeof(pat), "\nC %s ", id);
	return strstr(deps, pat) != NULL;
}

/*
 * Dependent j and job d it waits for: claimed after d's end (the audit),
 * its first START after d's last END (the journal), woken not before it.
 */
static void
dep_order(int j, int d)
{
	const struct job *jb = &jobs[j];
	const char *id = jb->id;
	int first = job_claims[j];

	if (first != -1 && claims[first].at <= job_end_at[d])
		violation("%s: claimed at %s, before %s, which it waits "
		    "for, ended at %s", id, clock_text(claims[first].at),
		    jobs[d].id, clock_text(job_end_at[d]));
	/*
	 * A cancel ends a running job at once, but holds its dependents
	 * until its worker says the handler ended (schema version 13): a
	 * dependent run anyway starts after that END too.
	 */
	if (jb->first != -1 && runs[jb->first].start_ns <=
	    last_end_ns(d))
		violation("%s: its handler started (journal line %ld) "
		    "%.3f s before the last END of %s, which it waits "
		    "for", id, runs[jb->first].sline,
		    (last_end_ns(d) - runs[jb->first].start_ns) / 1e9,
		    jobs[d].id);
	if (job_woke_at[j] != 0 && job_woke_at[j] < job_end_at[d])
		violation("%s: woken (wait->new) at %s, before %s, which "
		    "it waits for, ended at %s", id,
		    clock_text(job_woke_at[j]), jobs[d].id,
		    clock_text(job_end_at[d]));
}

/*
 * How dependent j ended, its jobs having ended (all done or not): one
 * failed without run: failed naming one of them (failed: ",A,,B,"),
 * never claimed nor run; else it ran.
 */
static void
dep_verdict(int j, bool run, bool all_done, const char *failed)
{
	const struct job *jb = &jobs[j];
	const char *id = jb->id;
	int first = job_claims[j];
	char pat[300];

	if (!all_done && !run) {
		st.dep_failed++;
		if (first != -1 || jb->first != -1)
			violation("%s: ran (claimed: %s, handler: %s) though %s, "
			    "which it waits for without --after-failed run, "
			    "failed", id, first != -1 ? "yes" : "no",
			    jb->first != -1 ? "yes" : "no", failed);
		snprintf(pat, sizeof(pat), ",%s,", jb->why + (strncmp(jb->why,
		    "dependency failed: ", 19) == 0 ? 19 : 0));
		if (!is(jb->state, "failed", NULL) || strncmp(jb->why,
		    "dependency failed: ", 19) != 0 || strstr(failed, pat) ==
		    NULL)
			violation("%s: %s (%s); a job it waits for failed (%s): "
			    "failed, naming one of them, was due", id, jb->state,
			    jb->why, failed);
		return;
	}
	st.dep_ran++;
	if (strncmp(jb->why, "dependency failed: ", 19) == 0 ||
	    jb->attempts < 1)
		violation("%s: %s (%s, attempts=%d), but every job it waits "
		    "for ended %s: it was due to run", id, jb->state, jb->why,
		    jb->attempts, run ? "(--after-failed run)" : "done");
}

/* Does the list (A,B,...) name a job with no row in the database? */
static bool
names_a_missing_job(const char *after)
{
	char copy[4096], *save, *t;
	int j;

	snprintf(copy, sizeof(copy), "%s", after);
	for (t = strtok_r(copy, ",", &save); t != NULL;
	    t = strtok_r(NULL, ",", &save))
		if ((j = job_get(t, false)) == -1 || jobs[j].rows == 0)
			return true;
	return false;
}

/*
 * Each dependent against its jobs: its edges are the list it was given;
 * it was claimed (ran) only if each job it waits for ended done (with
 * --after-failed run, ended at all), and only after each had ended (the
 * audit's times, and the journal's: its first START after their last
 * END); woken (wait -> new) not before the last of them ended; one of
 * them failed without run: failed itself, "dependency failed: ID" naming
 * one that failed, never claimed; it all ended: it ended too (check_job_pg:
 * nothing left in wait), done or failed by its own handler, attempts >= 1.
 * A cancelled dependent (ours, tc) may stop anywhere.
 */
static void
check_dep(const char *deps, const char *edges, const char *id, int code,
    bool run, char *after)
{
	char list[4096], flags[32], *save, *t, failed[4096] = "";
	int j = job_get(id, false), nafter = 0;
	bool all_done = true, cancel;
	struct job *jb;

	/* 1: a job it names is none of the queue's (one whose own submit
	 * exited 75 and was not committed): refused as it must be. */
	if (code == 1 && names_a_missing_job(after))
		return;
	if (code != 0 && code != 75) {
		violation("%s: submit --after %s exited %d", id, after, code);
		return;
	}
	if (j == -1 || jobs[j].rows == 0) {
		if (code == 0)
			violation("%s: submit --after printed it; no row", id);
		return;
	}
	jb = &jobs[j];
	st.dep_jobs++;
	cancel = dep_cancelled(deps, id) && is(jb->why, "cancelled", NULL);
	st.dep_cancelled += cancel;
	st.dep_woken += job_woke_at[j] != 0;
	if (!dep_edge(edges, id, list, sizeof(list), flags, sizeof(flags)))
		list[0] = '\0';
	for (t = strtok_r(after, ",", &save); t != NULL;
	    t = strtok_r(NULL, ",", &save)) {
		char pat[300];
		int d = job_get(t, false);

		nafter++;
		snprintf(pat, sizeof(pat), ",%s,", t);
		if (strstr(list, pat) == NULL)
			violation("%s: waits for %s, and chute.after has no such "
			    "edge (%s)", id, t, list);
		if (d == -1 || !is(jobs[d].state, "done", "failed")) {
			violation("%s: waits for %s, %s after the drain", id, t,
			    d == -1 ? "not in the database" : jobs[d].state);
			continue;
		}
		if (!is(jobs[d].state, "done", NULL)) {
			all_done = false;
			strlcat(failed, pat, sizeof(failed));
		}
		dep_order(j, d);
	}
	if (list[0] != '\0') {
		int edges_n = -1;	/* ",A,B,": one comma more than edges */

		for (const char *p = list; *p != '\0'; p++)
			edges_n += *p == ',';
		if (edges_n != nafter)
			violation("%s: chute.after has %d edges (%s), it was "
			    "given %d", id, edges_n, list, nafter);
	}
	if (list[0] != '\0' && !is(flags, run ? "true/true" : "false/false",
	    NULL))
		violation("%s: chute.after's run (and/or) is %s, it was "
		    "submitted %s --after-failed run", id, flags, run ? "with" :
		    "without");
	if (is(jb->why, "cancelled", NULL) && !dep_cancelled(deps, id))
		violation("%s: cancelled, and not by us", id);
	if (cancel)
		return;
	dep_verdict(j, run, all_done, failed);
}

static void
check_deps(void)
{
	char *deps = slurp(path("%s/deps", work), NULL), *edges, *line, *save;
	char *all;

	if (deps == NULL)
		return;
	edges = dep_edges();
	if (asprintf(&all, "\n%s", deps) == -1)
		die("out of memory");
	for (line = strtok_r(deps, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char kind, id[256], after[4096];
		int code, run;

		if (sscanf(line, "%c %255s %d %d %4095s", &kind, id, &code, &run,
		    after) != 5) {
			violation("deps: unreadable line: %.100s", line);
			continue;
		}
		if (kind == 'D')
			check_dep(all, edges, id, code, run, after);
		else if (kind == 'X')
			st.dep_x += code == 0;
		else if (code != 0 && code != 75 && code != 1)
			violation("chute cancel %s exited %d", id, code);
	}
	free(all);
	free(edges);
	free(deps);
}

static void
check_all_pg(void)
{
	load_submissions();
	load_errors();
	journal_poll();
	load_jobs();
	check_unique();
	load_audit();
	match_runs();
	worker_logs();
	check_claims();
	for (int j = 0; j < njobs; j++) {
		check_job_pg(&jobs[j], j);
		check_runs(&jobs[j], false);
	}
	check_edge();
	check_deps();
	if (cfg.keys)
		check_keys();
	count_worker_logs();
	count_forward_log();
}

/* ---- --keys: limits ---- */

/*
 * `chute limit URL --key KEY --max N` (or --default), which must work;
 * and the witness's bound for the key.  k3's limit moves at random
 * between 1 and 3 (keys_event): its witness allows 3, the most it has.
 */
static void
limit_set(const char *key, int max)
{
	char n[16], k[16], *argv[8], *out, how[32];
	int ac = 0, rc;

	snprintf(n, sizeof(n), "%d", max);
	argv[ac++] = cfg.chute;
	argv[ac++] = "limit";
	argv[ac++] = pg.url;
	if (key != NULL) {
		strlcpy(k, key, sizeof(k));
		argv[ac++] = "--key";
		argv[ac++] = k;
	} else {
		argv[ac++] = "--default";
	}
	argv[ac++] = "--max";
	argv[ac++] = n;
	argv[ac] = NULL;
	rc = capture(argv, -1, &out, path("%s/limit.err", work), CMD_MS);
	free(out);
	/* A restart may refuse it (75): the rule stays as it was. */
	if (rc != 0 && !(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 75))
		die("chute limit %s: %s; %s", key ? key : "--default",
		    rc == -1 ? "timed out" : describe(rc, how, sizeof(how)),
		    tail(path("%s/limit.err", work), 400));
}

static void
keys_setup(void)
{
	static const char *const max[] = { "1", "2", "2", "3" };

	limit_set("k0", 1);
	limit_set("k1", 2);
	limit_set(NULL, 2);		/* k2; k3 until its first event */
	for (int k = 0; k < 4; k++)
		append_line(path("%s/keymax.k%d", work, k), "%s", max[k]);
}

static void
keys_event(void)
{
	if (cfg.keys && rnd(&rng, 100) < 25) {
		limit_set("k3", 1 + (int)rnd(&rng, 3));
		st.limit_changes++;
	}
}

/* No key ran more than its witness's bound. */
static void
check_keys(void)
{
	char *s = slurp(path("%s/overkeys", work), NULL), *line, *save = NULL;

	for (line = s ? strtok_r(s, "\n", &save) : NULL; line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		violation("run of %s: its key's slots were all taken: more "
		    "than its limit ran at once", line);
	free(s);
}

/* ---- the whole run ---- */

static void
setup_pg(void)
{
	char *argv[] = { cfg.chute, "init", pg.url, NULL }, *out, how[32];
	int rc;

	if (mkdir(path("%s/wtmp", work), 0700) == -1)
		die("%s/wtmp: %s", work, strerror(errno));
	write_handler_pg();
	cluster_start();
	target = pg.url;
	rc = capture(argv, -1, &out, path("%s/init.err", work), CMD_MS);
	free(out);
	if (rc != 0)
		die("chute init %s: %s; %s", pg.url, rc == -1 ? "timed out" :
		    describe(rc, how, sizeof(how)),
		    tail(path("%s/init.err", work), 400));
	/* The spool at the edge: submitters feed it, forward empties it. */
	snprintf(spool, sizeof(spool), "%s/spool", work);
	argv[2] = spool;
	rc = capture(argv, -1, &out, path("%s/init.err", work), CMD_MS);
	free(out);
	if (rc != 0)
		die("chute init %s: %s", spool, rc == -1 ? "timed out" :
		    describe(rc, how, sizeof(how)));
	sql_or_die(audit_sql, NULL);
	if (cfg.keys)
		keys_setup();
	ino_setup_pg();
}

/* Lines in a file; 0 if it is missing. */
static int
count_lines(const char *file)
{
	FILE *f = fopen(file, "re");
	int n = 0, c;

	if (f == NULL)
		return 0;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void
summary(int64_t t0)
{
	int accepted = 0;

	for (int j = 0; j < njobs; j++)
		accepted += jobs[j].method != 0 && jobs[j].method != '?';
	for (int j = 0; j < njobs; j++)
		st.refused += jobs[j].method == '?';
	st.refused += unknown_allowed + st.unprinted;
	printf("torture: pgsql rounds=%d jobs=%d kills=%d restarts=%d "
	    "outages=%d terminations=%d (sessions=%d) hangs=%d%s runs=%ld "
	    "violations=%d\n", cfg.rounds, accepted + st.unprinted, st.kills,
	    st.restarts, st.outages, st.terminations, st.terminated, st.hangs,
	    cfg.freeze ?
	    path(" freezes=%d (with handlers running=%d)", st.freezes,
	    st.freezes_running) : cfg.keys ? path(" keys: k3's limit "
	    "moved=%d", st.limit_changes) : "", tally.runs, violations());
	printf("torture: kills at start-up=%d mid-burst=%d while-running=%d "
	    "after-an-end=%d, with live handlers=%d; runs leaving a grandchild "
	    "with the witness=%d; claims=%d, lost=%d (before "
	    "a START=%d, mid-run=%d, outcome unrecorded=%d; after trouble "
	    "its worker reported, not ours=%d), stopped by a timeout before a START=%d, handed back=%d; outcomes refused "
	    "(fenced)=%d; leases given up=%d; submits refused by a restart=%d "
	    "(committed, ID unprinted=%d); failed by lost claims=%d, by the "
	    "handler=%d; workers=%d, their local dirs left behind=%d; orphans "
	    "reaped=%d; forward: started=%d, killed=%d, jobs=%d, found "
	    "again after a kill=%d; unique submits=%d, keys=%d; dependents=%d (woken from wait=%d, "
	    "ran=%d, failed by a dependency=%d, cancelled=%d; jobs that fail"
	    "=%d); drain=%.1fs; "
	    "total=%.1fs\n", st.k_start, st.k_burst,
	    st.k_running, st.k_ended, st.k_live,
	    count_lines(path("%s/grandchildren", work)), nclaims, st.lost,
	    st.lost_norun, st.lost_midrun, st.lost_outcome, st.lost_self,
	    st.timeout_norun,
	    st.handbacks, st.fenced, st.expired, st.refused, st.unprinted,
	    st.failed_lost, st.failed_flaky, nworkers, st.leftover_dirs,
	    tally.orphans_reaped, st.fwd_starts, st.fwd_kills, st.fwd_jobs,
	    st.fwd_resent, st.uniq_tries, st.uniq_keys, st.dep_jobs,
	    st.dep_woken, st.dep_ran, st.dep_failed, st.dep_cancelled, st.dep_x,
	    st.drain_ms / 1000.0,
	    (mono_ms() - t0) / 1000.0);
	print_violations(cfg.freeze ? " --pgsql --freeze" : " --pgsql");
}

int
torture_pg(void)
{
	int64_t t0 = mono_ms();
	const char *why;

	setup_common();
	if ((why = find_server()) != NULL) {
		printf("torture: skipping the PostgreSQL torture: %s\n", why);
		return 0;
	}
	setup_pg();
	printf("torture: seed=%" PRIu64 " rounds=%d%s pgsql chute=%s dir=%s "
	    "cluster=%s\n", cfg.seed, cfg.rounds, cfg.flaky ? " flaky" : "",
	    cfg.chute, work, pg.dir);
	fflush(stdout);
	workers_top_up(-1, 2 + (int)rnd(&rng, 2));
	forward_start(false);
	for (int r = 0; r < cfg.rounds && !stop_sig; r++)
		round_pg(r);
	if (!stop_sig)
		subs_wait_all(CMD_MS);
	if (!stop_sig)
		forward_finish();
	if (!stop_sig)
		drain_pg();
	if (!stop_sig)
		orphans_wait_pg(ORPHAN_MS);
	if (stop_sig) {
		fprintf(stderr, "torture: interrupted by signal %d\n",
		    (int)stop_sig);
		return 2;
	}
	check_all_pg();
	summary(t0);
	return violations() == 0 ? 0 : 1;
}
