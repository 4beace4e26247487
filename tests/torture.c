/*
 * torture.c: the crash torture test for chute (issue 3).  Round after
 * round it starts an owner on one spool, submits jobs from several
 * processes (chute submit and tmp+mv), and kills the owner with SIGKILL at
 * a random moment; then it drains the spool and checks, from a journal the
 * handler keeps outside the spool and from the state directories, that no
 * job was lost, run twice at once, left in two places or invented.
 *
 * Build:  cc -std=gnu11 -D_GNU_SOURCE $(pkg-config --cflags libbsd-overlay) \
 *             -o build/torture tests/torture.c tests/torture_pg.c \
 *             $(pkg-config --libs libbsd-overlay)
 * Run:    build/torture [--rounds N] [--chute PATH] [--seed S] [--flaky] [--keep]
 *         build/torture --pgsql [--freeze] [--keys] ...: the same against
 *         the PostgreSQL queue, a fleet of workers on a throwaway cluster
 *         (torture_pg.c)
 *
 * The seed fixes every random choice this program makes (kill moments,
 * submission mixes, the handler's behaviour per job and attempt); the
 * kernel's scheduling still differs between runs, so a seed reproduces the
 * shape of a run, not its exact interleaving.
 *
 * A round: owner `chute run SPOOL -j 4 --grace 300ms --backoff 20ms:100ms
 * [--timeout 500ms] -- WORK/handler.sh`; three submitter processes, each
 * one or two bursts of `chute submit` (1-3 files a call, some on stdin,
 * some --delay 30ms) or tmp/NAME + rename to new/NAME; then SIGKILL to the
 * owner at one of four moments, found by watching (inotify) for the event
 * and then waiting a random time: right after the fork (exec, statfs,
 * lock); right after owner.pid appears (start-up recovery and scans);
 * after the round's first accepted submission (mid-burst); after the first
 * handler of this owner started (handlers running).  Submitters, and the
 * handlers the killed owner leaves behind, carry on into the next round.
 * An owner that exits by itself (75: the spool still locked although its
 * previous owner was reaped) is a violation.
 *
 * At the end: wait for the submitters, `chute run --drain` (bounded: 120 s
 * plus 100 ms per job still queued), wait for every orphaned handler
 * (bounded), then check:
 *  - each accepted ID (printed by chute submit, or renamed into new/) is
 *    in exactly one state directory, done/ or failed/; nothing in new/,
 *    cur/, defer/ or tmp/; no job file or log that was not submitted
 *    (derived IDs included); after every round, with the owner dead, no
 *    ID in two state directories;
 *  - done/: the last run exited 0 and `chute status` attempts equals its
 *    CHUTE_ATTEMPT; failed/: attempts equals --max-attempts (no handler
 *    here fails for good).  In non-flaky mode a job may only be in failed/
 *    if its log says its attempts were used up by owners dying ("abandoned
 *    ...; attempts exhausted"), which is what the spec prescribes: those
 *    are counted and reported, not violations;
 *  - attempts <= --max-attempts (chute's default, 5) for every job;
 *  - never twice at once, by the rule below.
 *
 * How a run of a handler is recorded.  The handler (a shell script written
 * into the temp dir) appends to WORK/journal, one write(2) per line, each
 * line far below PIPE_BUF, with O_APPEND, so lines never interleave:
 *
 *	S ID ATTEMPT PID START_NS LOCK		(LOCK: ok or BUSY)
 *	E ID ATTEMPT PID END_NS KIND CODE	(KIND: ok, tf, term)
 *
 * PID is the shell's $$: the handler runs its commands as children and
 * never execs, so PID is the run's process from START to END.  START_NS is
 * read after the handler has started, END_NS just before it exits.  LOCK
 * is an independent witness of "never twice at once": before its START
 * line the handler takes flock(LOCK_EX|LOCK_NB) on WORK/locks/ID through
 * fd 9, which every process of that run inherits, and closes fd 9 before
 * exiting.  BUSY means that, when this run started, some process of an
 * earlier run of the same job still existed.
 *
 * The rule for "no job's handler runs ran concurrently", per job, over its
 * runs in the order of their START lines, for each consecutive pair A, B:
 *  - any run whose LOCK is BUSY is a violation;
 *  - if A has an END line: B's START line must come after A's END line in
 *    the journal (one total order of appends, no clocks involved), and
 *    B's START_NS must not be below A's END_NS (B's process existed at
 *    START_NS, A's at END_NS);
 *  - if A has no END line (it was killed: by a timeout in --flaky mode;
 *    nothing kills a handler otherwise), its end is unknown and only the
 *    lock speaks for it: B is a violation iff B saw BUSY.  In non-flaky
 *    mode a run without END is itself a violation.  As a secondary
 *    heuristic, after the drain and after every child has been reaped, a
 *    run without END whose pid still exists (kill(pid, 0)) with
 *    CHUTE_ID=ID in /proc/PID/environ is reported as still running;
 *  - attempt numbers strictly increase.
 * Runs can only be judged by the lock if the lock is released no later than
 * chute's own lock on the job file: the handler closes fd 9 before it
 * exits; a run killed by a signal releases fd 0 (chute's) a few
 * microseconds before fd 9, far less than a new handler needs to start.
 *
 * Processes: this program is a child subreaper (PR_SET_CHILD_SUBREAPER), so
 * the handlers an owner leaves behind when it is killed become our
 * children: we see them exit through SIGCHLD (no polling), and at the end
 * every process we started, directly or not, can be found and killed.
 * SIGCHLD is blocked and waited for with sigtimedwait; every wait is
 * bounded.  Exit status: 0 no violation, 1 violations, 2 could not run.
 */
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "torture.h"

static const char *const dirs[] = { "new", "cur", "defer", "done", "failed" };
enum { D_NEW, D_CUR, D_DEFER, D_DONE, D_FAILED, D_N };

struct torture_cfg cfg = { .rounds = 200 };
static char default_chute[] = "./build/chute";

char work[PATH_MAX], *target;
char spool[PATH_MAX + 16];
pid_t main_pid;
volatile sig_atomic_t stop_sig;
sigset_t chld_set;
uint64_t rng;
struct tally tally;

/* What the rounds saw. */
static struct {
	int	 kills, k_startup, k_burst, k_running, k_live, k_subs;
	int	 refused, exhausted;
	int64_t	 drain_ms;
} stats;

/* ---- small helpers ---- */

int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
nap_us(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	/* A signal ends the nap early; the main loop then sees stop_sig. */
	nanosleep(&ts, NULL);
}

/* splitmix64: small, seedable, good enough to pick moments and mixes. */
uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

unsigned
rnd(uint64_t *s, unsigned n)
{
	return (unsigned)(rng_next(s) % n);
}

void
die(const char *fmt, ...)
{
	va_list ap;

	fputs("torture: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

char *
path(const char *fmt, ...)
{
	static char buf[8][PATH_MAX + 64];
	static int next;
	char *b = buf[next++ % 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(buf[0]), fmt, ap);
	va_end(ap);
	return b;
}

static int
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= w;
	}
	return 0;
}

/* One line appended in one write(2): lines from several processes never mix. */
void
append_line(const char *file, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int fd, n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd == -1 || write_all(fd, line, n) == -1)
		fprintf(stderr, "torture: %s: %s\n", file, strerror(errno));
	if (fd != -1)
		close(fd);
}

/* The whole file, NUL-terminated; NULL if it cannot be read. */
char *
slurp(const char *file, size_t *lenp)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	if (buf == NULL || (fd = open(file, O_RDONLY | O_CLOEXEC)) == -1) {
		free(buf);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0 ||
	    (n == -1 && errno == EINTR)) {
		if (n > 0 && (len += n) + 1 == cap) {
			if ((nb = realloc(buf, cap *= 2)) == NULL)
				die("out of memory");
			buf = nb;
		}
	}
	close(fd);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

/* ---- violations ---- */

static char **viol;
static int nviol;

void
violation(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		die("out of memory");
	va_end(ap);
	if ((viol = reallocarray(viol, nviol + 1, sizeof(*viol))) == NULL)
		die("out of memory");
	viol[nviol++] = s;
}

int
violations(void)
{
	return nviol;
}

/* The violations (the first SHOW_MAX), and how to run it all again. */
void
print_violations(const char *extra)
{
	for (int i = 0; i < nviol && i < SHOW_MAX; i++)
		printf("violation: %s\n", viol[i]);
	if (nviol > SHOW_MAX)
		printf("violation: ... and %d more (rerun with --seed %" PRIu64
		    " --keep)\n", nviol - SHOW_MAX, cfg.seed);
	if (nviol > 0)
		printf("torture: reproduce with: torture%s --rounds %d --seed %"
		    PRIu64 "%s --keep\n", extra, cfg.rounds, cfg.seed,
		    cfg.flaky ? " --flaky" : "");
	fflush(stdout);
}

/* ---- children: everything we start is tracked and reaped here ---- */

static struct kid kids[MAX_KIDS];
static int nkids;

struct kid *
kid_add(pid_t pid, enum kind kind, int round)
{
	/* Reuse a slot whose child was reaped and looked at. */
	for (int i = 0; i < nkids; i++)
		if (kids[i].pid == 0) {
			kids[i] = (struct kid){ pid, kind, false, 0, round };
			return &kids[i];
		}
	if (nkids == MAX_KIDS)
		die("too many children");
	kids[nkids] = (struct kid){ pid, kind, false, 0, round };
	return &kids[nkids++];
}

/* Reap every child that has exited; the unknown ones are orphaned handlers. */
void
reap(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		int i;
		for (i = 0; i < nkids; i++)
			if (kids[i].pid == pid && !kids[i].done)
				break;
		if (i < nkids) {
			kids[i].done = true;
			kids[i].status = st;
		} else
			tally.orphans_reaped++;
	}
}

/* Sleep until a child changes state (SIGCHLD) or ms pass. */
void
wait_chld(int64_t ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	sigtimedwait(&chld_set, NULL, &ts);
}

/* Wait at most ms for k to exit (or for ^C if intr).  True if it exited. */
bool
kid_wait(struct kid *k, int64_t ms, bool intr)
{
	int64_t deadline = mono_ms() + ms;

	for (;;) {
		reap();
		if (k->done)
			return true;
		int64_t left = deadline - mono_ms();
		if (left <= 0 || (intr && stop_sig))
			return false;
		wait_chld(left < 200 ? left : 200);
	}
}

void
kid_forget(struct kid *k)
{
	k->pid = 0;
}

char *
describe(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "signal %s", sigabbrev_np(WTERMSIG(st)) ?
		    sigabbrev_np(WTERMSIG(st)) : "?");
	else
		snprintf(buf, len, "status %#x", st);
	return buf;
}

/* In a fresh child: default signals, and die with us. */
void
child_setup(void)
{
	sigset_t none;

	sigemptyset(&none);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

/* In a fresh child: become as's user (before PR_SET_PDEATHSIG: it clears it). */
static void
child_become(const struct runas *as)
{
	if (as == NULL)
		return;
	if (setgroups(as->ngroups, as->groups) == -1 ||
	    setresgid(as->gid, as->gid, as->gid) == -1 ||
	    setresuid(as->uid, as->uid, as->uid) == -1 ||
	    (as->dir != NULL && chdir(as->dir) == -1))
		_exit(126);
}

/*
 * Run argv, stdin from in (-1: /dev/null), stdout into *out (malloc'd,
 * NUL-terminated), stderr appended to errfile.  Bounded by ms: a command
 * still running then is killed.  Returns its wait status, or -1.
 */
int
capture(char *const argv[], int in, char **out, const char *errfile, int64_t ms)
{
	return capture_as(argv, in, out, errfile, ms, NULL);
}

/* capture(), as the user as says (NULL: as we are). */
int
capture_as(char *const argv[], int in, char **out, const char *errfile,
    int64_t ms, const struct runas *as)
{
	int64_t deadline = mono_ms() + ms;
	size_t cap = 4096, len = 0;
	int p[2], st = -1;
	struct kid *k;
	pid_t pid, parent = getpid();

	*out = NULL;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* O_CLOEXEC: only 0, 1 and 2 reach the command. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int err = open(errfile, O_WRONLY | O_APPEND | O_CREAT |
		    O_CLOEXEC, 0644);

		child_become(as);
		child_setup();
		if (getppid() != parent)
			_exit(127);	/* it died before PR_SET_PDEATHSIG */
		dup2(in != -1 ? in : null, 0);
		dup2(p[1], 1);
		dup2(err != -1 ? err : null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	k = kid_add(pid, K_CMD, -1);
	char *buf = malloc(cap);
	for (;;) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		int64_t left = deadline - mono_ms();
		if (buf == NULL || left <= 0 || stop_sig)
			break;
		if (poll(&pfd, 1, left > 200 ? 200 : (int)left) <= 0)
			continue;
		if (len + 1024 > cap && (buf = realloc(buf, cap *= 2)) == NULL)
			die("out of memory");
		ssize_t n = read(p[0], buf + len, cap - len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(p[0]);
	if (!kid_wait(k, deadline - mono_ms() > 0 ? deadline - mono_ms() : 0,
	    true)) {
		kill(pid, SIGKILL);
		kid_wait(k, KILL_WAIT_MS, false);
	} else
		st = k->status;
	kid_forget(k);
	if (buf != NULL)
		buf[len] = '\0';
	*out = buf;
	return st;
}

/* ---- the handler ---- */

/*
 * The handler's sleep (0-50 ms) comes from the job ID; in --flaky mode
 * what the run does comes from the ID and the attempt together, so the
 * same attempt of the same job always behaves alike:
 *   15% exit 75 after the sleep; 5% run past --timeout and write END from a
 *   SIGTERM trap; 3% run past it and die of SIGTERM without END; 2% run
 *   past it ignoring SIGTERM, until chute's SIGKILL after --grace.
 */
const char flaky_modes[] =
    "d=$(( ((h + a * 2654435761) % 4294967296 * 1103515245 "
    "% 4294967296 >> 16) % 100 ))\n"
    "if [ $d -lt 15 ]; then mode=tf; elif [ $d -lt 20 ]; then mode=trap\n"
    "elif [ $d -lt 23 ]; then mode=die; elif [ $d -lt 25 ]; then "
    "mode=ignore; fi\n";

static void
write_handler(void)
{
	FILE *f = fopen(path("%s/handler.sh", work), "we");

	if (f == NULL)
		die("%s/handler.sh: %s", work, strerror(errno));
	fprintf(f,
	    "#!/bin/sh\n"
	    "# Written by chute's torture test: one START and one END line per run.\n"
	    "J='%s/journal'\n"
	    "id=$CHUTE_ID\n"
	    "a=$CHUTE_ATTEMPT\n"
	    "# Our own witness: every process of this run holds this lock.\n"
	    "exec 9>>'%s/locks/'\"$id\"\n"
	    "if flock -n 9; then lk=ok; else lk=BUSY; fi\n"
	    "set -- $(printf '%%s' \"$id\" | cksum)\n"
	    "h=$1\n"
	    "ms=$((h %% 51))\n"
	    "if [ $ms -lt 10 ]; then s=0.00$ms; else s=0.0$ms; fi\n"
	    "mode=ok\n"
	    "%s"
	    "echo \"S $id $a $$ $(date +%%s%%N) $lk\" >>\"$J\"\n"
	    "case $mode in\n"
	    "tf)\tsleep $s\n"
	    "\techo \"E $id $a $$ $(date +%%s%%N) tf 75\" >>\"$J\"\n"
	    "\texec 9>&-\n"
	    "\texit 75 ;;\n"
	    "trap)\ttrap 'echo \"E $id $a $$ $(date +%%s%%N) term 143\" >>\"$J\"; "
	    "exec 9>&-; exit 143' TERM\n"
	    "\tsleep 2 ;;\n"
	    "die)\tsleep 2 ;;\n"
	    "ignore)\ttrap '' TERM\n"
	    "\tsleep 2 ;;\n"
	    "*)\tsleep $s ;;\n"
	    "esac\n"
	    "echo \"E $id $a $$ $(date +%%s%%N) ok 0\" >>\"$J\"\n"
	    "exec 9>&-\n"
	    "exit 0\n", work, work, cfg.flaky ? flaky_modes : "");
	if (fclose(f) == EOF || chmod(path("%s/handler.sh", work), 0755) == -1)
		die("%s/handler.sh: %s", work, strerror(errno));
}

/* ---- owners ---- */

/*
 * fork and exec argv in a process group of its own (a terminal's ^C
 * reaches us, not it), stdin /dev/null, stdout and stderr appended to log,
 * TMPDIR set to tmpdir unless NULL.  Returns its pid.
 */
pid_t
spawn_logged(char *const argv[], const char *log, const char *tmpdir)
{
	pid_t pid;

	if ((pid = fork()) == -1)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		    0644);

		child_setup();
		setpgid(0, 0);
		if (tmpdir != NULL)
			setenv("TMPDIR", tmpdir, 1);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

static struct kid *
owner_start(bool drain, int round)
{
	char *argv[24], *hpath = strdup(path("%s/handler.sh", work));
	int ac = 0;
	pid_t pid;

	argv[ac++] = cfg.chute;
	argv[ac++] = "run";
	argv[ac++] = spool;
	argv[ac++] = "-j";
	argv[ac++] = "4";
	argv[ac++] = "--grace";
	argv[ac++] = "300ms";
	argv[ac++] = "--backoff";
	argv[ac++] = "20ms:100ms";
	if (cfg.flaky) {
		argv[ac++] = "--timeout";
		argv[ac++] = "500ms";
	}
	if (drain)
		argv[ac++] = "--drain";
	argv[ac++] = "--";
	argv[ac++] = hpath;
	argv[ac] = NULL;
	pid = spawn_logged(argv, path("%s/owner.log", work), NULL);
	free(hpath);
	return kid_add(pid, K_OWNER, round);
}

/* ---- submitters ---- */

struct sub {
	int		 round, idx, n;
	uint64_t	 rng;
};

static uint32_t hash(const char *);

static void
sub_record(char method, const char *id)
{
	append_line(path("%s/submissions", work), "%c %s", method, id);
}

static void __attribute__((format(printf, 2, 3)))
sub_error(struct sub *s, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	append_line(path("%s/errors", work), "round %d submitter %d: %s",
	    s->round, s->idx, msg);
}

/*
 * A failed submit to the database: exit 75 is what a server restart gives
 * (nothing printed for the job in flight, which may or may not have been
 * committed: '?' names it when we chose its ID, 'u' says one job of
 * unknown ID may exist).  Anything else is an error.
 */
static bool
sub_refused(struct sub *s, int st, const char *id)
{
	if (!cfg.pgsql || st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 75)
		return false;
	if (id != NULL)
		sub_record('?', id);
	else
		sub_record('u', "-");
	return true;
}

/*
 * chute submit of nfiles payloads in one call (one on stdin, sometimes;
 * against the database, a single one sometimes with an --id of ours) to
 * target, or with --pgsql to the spool forward reads (to_spool: 'f').
 */
static void
sub_chute(struct sub *s, int nfiles, bool delay, bool to_spool)
{
	char *argv[20], *files[8], *out = NULL, how[32], id[64];
	char key[8] = "-", prio[8];
	bool use_stdin = nfiles == 1 && rnd(&s->rng, 3) == 0;
	bool to_db = cfg.pgsql && !to_spool;
	bool use_id = to_db && nfiles == 1 && rnd(&s->rng, 2) == 0;
	int ac = 0, in = -1, st, got = 0;
	unsigned k = rnd(&s->rng, 5);

	argv[ac++] = cfg.chute;
	argv[ac++] = "submit";
	argv[ac++] = to_spool ? spool : target;
	if (delay) {
		argv[ac++] = "--delay";
		argv[ac++] = "30ms";
	}
	if (use_id) {
		snprintf(id, sizeof(id), "t-r%d-s%d-%d", s->round, s->idx, s->n);
		argv[ac++] = "--id";
		argv[ac++] = id;
	}
	/*
	 * --keys: four jobs in five of a key k0-k3 (the handler's witness
	 * reads it from the payload), each call at a priority of -5..5.
	 */
	if (cfg.keys && to_db) {
		snprintf(prio, sizeof(prio), "%d", (int)rnd(&s->rng, 11) - 5);
		argv[ac++] = "--priority";
		argv[ac++] = prio;
		if (k < 4) {
			snprintf(key, sizeof(key), "k%u", k);
			argv[ac++] = "--key";
			argv[ac++] = key;
		}
	}
	for (int i = 0; i < nfiles; i++) {
		files[i] = strdup(path("%s/payload/r%d-s%d-%d", work, s->round,
		    s->idx, s->n++));
		/* The number is the --pgsql handler's hash (no cksum to fork). */
		if (cfg.keys)
			append_line(files[i], "torture payload %d %u %s", i,
			    (unsigned)hash(files[i]), key);
		else
			append_line(files[i], "torture payload %d %u", i,
			    (unsigned)hash(files[i]));
		if (!use_stdin)
			argv[ac++] = files[i];
	}
	argv[ac] = NULL;
	if (use_stdin && (in = open(files[0], O_RDONLY | O_CLOEXEC)) == -1)
		sub_error(s, "%s: %s", files[0], strerror(errno));
	st = capture(argv, in, &out, path("%s/submit.err", work), CMD_MS);
	for (char *line = out, *nl; line && *line; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			break;
		*nl = '\0';
		if (*line != '\0') {
			sub_record(delay ? 'd' : to_spool ? 'f' : 'c', line);
			got++;
		}
	}
	if ((st != 0 || got != nfiles) && (!to_db ||
	    !sub_refused(s, st, use_id ? id : NULL))) {
		/* Its stderr, which the next submit overwrites. */
		char *err = slurp(path("%s/submit.err", work), NULL), *nl;

		if (err != NULL && (nl = strchr(err, '\n')) != NULL)
			*nl = '\0';
		sub_error(s, "chute submit %s of %d file(s) printed %d ID(s), "
		    "%s: %.300s", to_db ? "URL" : "SPOOL", nfiles, got,
		    st == -1 ? "timed out" : describe(st, how, sizeof(how)),
		    err != NULL && *err != '\0' ? err : "(nothing on stderr)");
		free(err);
	}
	if (in != -1)
		close(in);
	for (int i = 0; i < nfiles; i++) {
		unlink(files[i]);
		free(files[i]);
	}
	free(out);
}

/*
 * --pgsql: `chute submit URL --unique KEY --unique-while kept
 * --on-duplicate MODE` of one payload (issue 37).  KEY is one of
 * UNIQUE_KEYS per mode, so that the submitters of a round, and of the
 * rounds after, race for it; held while kept, nothing here being purged,
 * it makes one job per key in the whole run.  Each try is one line of
 * WORK/uniques, "MODE KEY STATUS ID|-", for torture_pg.c's check_unique;
 * a 75 (a restart) may have committed: one job of unknown ID (u).
 */
#define UNIQUE_KEYS	4
static void
sub_unique(struct sub *s)
{
	static char refuse[] = "refuse", keep[] = "keep", replace[] = "replace";
	static char *const modes[] = { refuse, keep, replace };
	char *mode = modes[rnd(&s->rng, 3)];
	char key[32], *file, *out = NULL, *nl;
	char *argv[] = { cfg.chute, "submit", target, "--unique", key,
	    "--unique-while", "kept", "--on-duplicate", mode, NULL, NULL };
	int st, code;

	snprintf(key, sizeof(key), "%s-%u", mode, rnd(&s->rng, UNIQUE_KEYS));
	file = strdup(path("%s/payload/r%d-s%d-%d", work, s->round, s->idx,
	    s->n++));
	append_line(file, "torture payload 0 %u", (unsigned)hash(file));
	argv[9] = file;
	st = capture(argv, -1, &out, path("%s/submit.err", work), CMD_MS);
	code = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (out != NULL && (nl = strchr(out, '\n')) != NULL)
		*nl = '\0';
	append_line(path("%s/uniques", work), "%s %s %d %s", mode, key, code,
	    out != NULL && *out != '\0' ? out : "-");
	if (code == 75)
		sub_record('u', "-");
	unlink(file);
	free(file);
	free(out);
}

/* The protocol for anyone without chute: write tmp/NAME, rename to new/NAME. */
static void
sub_mv(struct sub *s)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "m-r%04d-s%d-%03d", s->round, s->idx,
	    s->n++);
	fd = open(path("%s/tmp/%s", spool, name), O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0600);
	if (fd == -1 || write_all(fd, "torture payload mv\n", 19) == -1) {
		sub_error(s, "tmp/%s: %s", name, strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	close(fd);
	if (rename(path("%s/tmp/%s", spool, name),
	    path("%s/new/%s", spool, name)) == -1) {
		sub_error(s, "rename tmp/%s new/%s: %s", name, name,
		    strerror(errno));
		unlink(path("%s/tmp/%s", spool, name));
		return;
	}
	sub_record('m', name);
}

/* One submitter process: a few bursts of submissions, then exit. */
static void __attribute__((noreturn))
sub_main(struct sub *s)
{
	int ops = 1 + (rnd(&s->rng, 4) == 0);

	for (int op = 0; op < ops && !stop_sig; op++) {
		unsigned r = rnd(&s->rng, 100);

		if (r < 45)
			sub_chute(s, 1 + rnd(&s->rng, 3), false, false);
		else if (r < 55)
			sub_chute(s, 1 + rnd(&s->rng, 2), true, false);
		else if (cfg.pgsql && r < 70)	/* through forward's spool */
			sub_chute(s, 1 + rnd(&s->rng, 3), false, true);
		else if (cfg.pgsql && r < 80)
			sub_mv(s);
		else if (cfg.pgsql)	/* a database has no tmp/ */
			sub_chute(s, 1, false, false);
		else
			for (int i = 1 + rnd(&s->rng, 2); i > 0; i--)
				sub_mv(s);
		if (rnd(&s->rng, 2))
			nap_us(rnd(&s->rng, 8000));
	}
	_exit(0);
}

int
subs_live(void)
{
	int n = 0;

	for (int i = 0; i < nkids; i++)
		if (kids[i].pid != 0 && kids[i].kind == K_SUBMITTER) {
			if (kids[i].done) {
				char how[32];
				if (kids[i].status != 0)
					violation("round %d: submitter pid %ld "
					    "ended with %s", kids[i].round,
					    (long)kids[i].pid, describe(
					    kids[i].status, how, sizeof(how)));
				kid_forget(&kids[i]);
			} else
				n++;
		}
	return n;
}

/* Wait for every submitter still running (bounded). */
void
subs_wait_all(int64_t ms)
{
	int64_t deadline = mono_ms() + ms;

	while (subs_live() > 0) {
		int64_t left = deadline - mono_ms();
		if (stop_sig)
			return;
		if (left <= 0)
			die("submitters still running after %" PRId64 " ms", ms);
		reap();
		if (subs_live() > 0)
			wait_chld(left < 200 ? left : 200);
	}
}

static int
backlog(void)
{
	DIR *dp = opendir(path("%s/new", spool));
	struct dirent *de;
	int n = 0;

	while (dp && (de = readdir(dp)) != NULL)
		n += de->d_name[0] != '.';
	if (dp)
		closedir(dp);
	return n;
}

/*
 * NSUBMITTERS submitter processes for this round, unless backlog jobs wait
 * already: a slow machine must not pile up more than the drain can run.
 */
void
subs_start(int round, int backlog)
{
	if (backlog > MAX_BACKLOG)
		return;
	reap();
	if (subs_live() > MAX_LIVE_SUBS)
		subs_wait_all(CMD_MS);
	for (int i = 0; i < NSUBMITTERS; i++) {
		struct sub s = { round, i, 0, rng_next(&rng) };
		pid_t pid = fork();

		if (pid == -1)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			child_setup();
			setpgid(0, 0);
			nkids = 0;	/* this process's children are its own */
			sigprocmask(SIG_BLOCK, &chld_set, NULL);
			sub_main(&s);
		}
		setpgid(pid, pid);
		kid_add(pid, K_SUBMITTER, round);
	}
}

/* ---- the job table: every ID seen anywhere ---- */

struct job *jobs;
int njobs, unknown_allowed;
static int *slots;			/* open addressing, -1: empty */
static size_t nslots;
struct run *runs;
long nruns;
static long caprun;

static uint32_t
hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static void
jobs_grow(void)
{
	size_t n = nslots ? nslots * 2 : 4096;
	int *ns = malloc(n * sizeof(*ns));

	if (ns == NULL)
		die("out of memory");
	for (size_t i = 0; i < n; i++)
		ns[i] = -1;
	for (int j = 0; j < njobs; j++) {
		size_t i = hash(jobs[j].id) & (n - 1);
		while (ns[i] != -1)
			i = (i + 1) & (n - 1);
		ns[i] = j;
	}
	free(slots);
	slots = ns;
	nslots = n;
}

int
job_get(const char *id, bool create)
{
	size_t i;

	if (nslots == 0 || (size_t)njobs * 2 >= nslots)
		jobs_grow();
	for (i = hash(id) & (nslots - 1); slots[i] != -1; i = (i + 1) & (nslots - 1))
		if (strcmp(jobs[slots[i]].id, id) == 0)
			return slots[i];
	if (!create)
		return -1;
	if ((jobs = reallocarray(jobs, njobs + 1, sizeof(*jobs))) == NULL ||
	    (jobs[njobs].id = strdup(id)) == NULL)
		die("out of memory");
	jobs[njobs].method = 0;
	jobs[njobs].dirs = 0;
	jobs[njobs].attempts = -1;
	jobs[njobs].first = jobs[njobs].last = -1;
	jobs[njobs].rows = 0;
	jobs[njobs].state[0] = '\0';
	jobs[njobs].why = NULL;
	slots[i] = njobs;
	return njobs++;
}

/* ---- the journal, read as it grows ---- */

static off_t jr_off;
static long jr_line;

static void
journal_start(const char *id, int attempt, long pid, int64_t ns, bool busy,
    long ppid)
{
	int j = job_get(id, true);

	if (nruns == caprun &&
	    (runs = reallocarray(runs, caprun = caprun ? caprun * 2 : 4096,
	    sizeof(*runs))) == NULL)
		die("out of memory");
	runs[nruns] = (struct run){ .job = j, .attempt = attempt, .next = -1,
	    .pid = pid, .ppid = ppid, .start_ns = ns, .sline = jr_line,
	    .busy = busy, .claim = -1 };
	if (jobs[j].last == -1)
		jobs[j].first = nruns;
	else
		runs[jobs[j].last].next = nruns;
	jobs[j].last = nruns++;
	tally.runs++;
}

static void
journal_end(const char *id, int attempt, long pid, int64_t ns, int code)
{
	int j = job_get(id, true), found = -1;

	/* The latest open run of this job by this pid and attempt. */
	for (int r = jobs[j].first; r != -1; r = runs[r].next)
		if (runs[r].pid == pid && runs[r].attempt == attempt &&
		    runs[r].eline == 0)
			found = r;
	if (found == -1) {
		violation("%s: journal line %ld: END (attempt %d, pid %ld) "
		    "without a START", id, jr_line, attempt, pid);
		return;
	}
	runs[found].end_ns = ns;
	runs[found].eline = jr_line;
	runs[found].code = code;
	tally.ends++;
}

/* A START line may end with the worker's pid (--pgsql), an END line not. */
static void
journal_line(char *line)
{
	char id[256], lk[16], kind[16];
	long long ns;
	long pid, ppid = 0;
	int a, code, n;

	jr_line++;
	if ((n = sscanf(line, "S %255s %d %ld %lld %15s %ld", id, &a, &pid, &ns,
	    lk, &ppid)) >= 5)
		journal_start(id, a, pid, ns, strcmp(lk, "ok") != 0,
		    n == 6 ? ppid : 0);
	else if (sscanf(line, "E %255s %d %ld %lld %15s %d", id, &a, &pid, &ns,
	    kind, &code) == 6)
		journal_end(id, a, pid, ns, code);
	else
		violation("journal line %ld unreadable: %.100s", jr_line, line);
}

/* Read the journal's complete lines written since the last call. */
void
journal_poll(void)
{
	char buf[65536];
	size_t have = 0;
	ssize_t n;
	int fd = open(path("%s/journal", work), O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		die("%s/journal: %s", work, strerror(errno));
	while ((n = pread(fd, buf + have, sizeof(buf) - have - 1, jr_off + have)) > 0) {
		char *p = buf, *nl;
		have += n;
		buf[have] = '\0';
		while ((nl = memchr(p, '\n', buf + have - p)) != NULL) {
			*nl = '\0';
			journal_line(p);
			p = nl + 1;
		}
		jr_off += p - buf;
		have = buf + have - p;
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			die("journal line too long");
	}
	close(fd);
}

/* Is pid a live handler of job id?  (The secondary, kill(2)-based look.) */
bool
handler_alive(long pid, const char *id)
{
	char want[300], *env;
	size_t len;
	bool found = false;

	if (kill((pid_t)pid, 0) == -1)
		return false;
	if ((env = slurp(path("/proc/%ld/environ", pid), &len)) == NULL)
		return false;
	snprintf(want, sizeof(want), "CHUTE_ID=%s", id);
	for (size_t i = 0; i < len; i += strlen(env + i) + 1)
		if (strcmp(env + i, want) == 0)
			found = true;
	free(env);
	return found;
}

/* Runs started and not ended whose shell still exists: for the stats. */
static int
live_handlers(void)
{
	int n = 0;

	journal_poll();
	for (long r = nruns - 1; r >= 0 && r >= nruns - 64; r--)
		if (runs[r].eline == 0 &&
		    handler_alive(runs[r].pid, jobs[runs[r].job].id))
			n++;
	return n;
}

/* ---- killing owners ---- */

/*
 * A refused owner names the lock's holder in owner.log (from /proc/locks,
 * which names the process that took the flock, not every process holding
 * a copy of its descriptor).  Say whether that process still exists: if
 * it is a dead owner, some other process holds a copy of its descriptor.
 */
static void
lock_holder(char *out, size_t len)
{
	char *log = slurp(path("%s/owner.log", work), NULL), *p, *q = NULL;
	char *cmd = NULL, *st = NULL;
	long pid;

	for (p = log; p && (p = strstr(p, "owned by pid ")) != NULL; p++)
		q = p;
	if (q == NULL || (pid = atol(q + 13)) <= 0) {
		if (q != NULL)
			snprintf(out, len, "; it names pid %ld: the lock was "
			    "already free again when it looked", atol(q + 13));
		free(log);
		return;
	}
	if ((cmd = slurp(path("/proc/%ld/cmdline", pid), NULL)) != NULL &&
	    (st = slurp(path("/proc/%ld/stat", pid), NULL)) != NULL &&
	    (p = strrchr(st, ')')) != NULL)
		snprintf(out, len, "; lock held by pid %ld: %.60s, state/ppid %.12s",
		    pid, cmd, p + 2);
	else
		snprintf(out, len, "; the lock was taken by pid %ld, which is "
		    "dead: a copy of its descriptor outlived it", pid);
	journal_poll();
	for (long r = 0; r < nruns; r++)
		if (runs[r].pid == pid) {
			size_t n = strlen(out);
			snprintf(out + n, len - n, "; pid %ld is the handler of %s "
			    "attempt %d", pid, jobs[runs[r].job].id,
			    runs[r].attempt);
		}
	free(cmd);
	free(st);
	free(log);
}

/*
 * Kill an owner with SIGKILL and wait for it.  One that had already exited
 * by itself is a violation: refused (75, the spool still locked after the
 * previous owner was reaped) or crashed.
 */
static void
owner_kill(struct kid *k)
{
	char how[32];

	kill(k->pid, SIGKILL);
	if (!kid_wait(k, KILL_WAIT_MS, false))
		die("owner pid %ld did not die within %d ms of SIGKILL",
		    (long)k->pid, KILL_WAIT_MS);
	if (!WIFSIGNALED(k->status) || WTERMSIG(k->status) != SIGKILL) {
		char who[400] = "";
		if (WIFEXITED(k->status) && WEXITSTATUS(k->status) == 75) {
			stats.refused++;
			lock_holder(who, sizeof(who));
		}
		violation("round %d: owner pid %ld exited by itself before "
		    "the kill (%s%s; see owner.log)", k->round, (long)k->pid,
		    describe(k->status, how, sizeof(how)), who);
	}
	kid_forget(k);
}

/* ---- the rounds ---- */

/*
 * Kill moments are picked by watching what happens (inotify on the
 * journal, the submissions file and the spool root) and then waiting a
 * random time: the machine's speed varies too much for fixed delays to
 * land where we want them.  These waits choose moments; nothing that is
 * checked depends on them.
 */
int ino = -1;

static void
ino_setup(void)
{
	if ((ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) == -1 ||
	    inotify_add_watch(ino, path("%s/journal", work), IN_MODIFY) == -1 ||
	    inotify_add_watch(ino, path("%s/submissions", work), IN_MODIFY) == -1 ||
	    inotify_add_watch(ino, spool, IN_MOVED_TO) == -1)
		die("inotify: %s", strerror(errno));
}

/*
 * Wait until pred(arg) holds (true), the owner (if not NULL) has exited,
 * or ms pass.
 */
bool
wait_until(bool (*pred)(const void *), const void *arg, struct kid *owner,
    int64_t ms)
{
	int64_t deadline = mono_ms() + ms;
	char buf[4096];

	for (;;) {
		if (pred(arg))
			return true;
		reap();
		int64_t left = deadline - mono_ms();
		if ((owner != NULL && owner->done) || left <= 0 || stop_sig)
			return false;
		/* SIGCHLD is not in this poll: look at the owner every 50 ms. */
		struct pollfd pfd = { ino, POLLIN, 0 };
		poll(&pfd, 1, left < 50 ? (int)left : 50);
		while (read(ino, buf, sizeof(buf)) > 0)
			;
	}
}

/* The owner has its lock and wrote owner.pid: it is in start-up recovery. */
static bool
owner_up(const void *arg)
{
	char *s = slurp(path("%s/owner.pid", spool), NULL);
	bool up = s && atol(s) == (long)*(const pid_t *)arg;

	free(s);
	return up;
}

/* A handler started since the journal had *arg runs. */
bool
run_started(const void *arg)
{
	journal_poll();
	return nruns > *(const long *)arg;
}

/* A handler ended since the journal had *arg END lines. */
bool
run_ended(const void *arg)
{
	journal_poll();
	return tally.ends > *(const long *)arg;
}

/* A submission was accepted since the submissions file had *arg bytes. */
bool
submitted(const void *arg)
{
	struct stat st;

	return stat(path("%s/submissions", work), &st) == 0 &&
	    st.st_size > *(const off_t *)arg;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * "At every instant a job is in at most one state directory", looked at
 * between rounds: with the owner dead nothing moves a job from one state
 * directory to another (submitters only add to new/ and defer/), so one
 * pass over the directories is a snapshot.
 */
static void
check_snapshot(int round)
{
	char **names = NULL;
	size_t n = 0, cap = 0;

	for (int d = 0; d < D_N; d++) {
		DIR *dp = opendir(path("%s/%s", spool, dirs[d]));
		struct dirent *de;

		while (dp && (de = readdir(dp)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			if (n == cap && (names = reallocarray(names,
			    cap = cap ? cap * 2 : 1024, sizeof(*names))) == NULL)
				die("out of memory");
			if (asprintf(&names[n++], "%s/%s", de->d_name,
			    dirs[d]) == -1)
				die("out of memory");
		}
		if (dp)
			closedir(dp);
	}
	if (n > 0)		/* qsort(NULL, 0) is undefined */
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i + 1 < n; i++) {
		size_t l = strrchr(names[i], '/') - names[i];
		if (strncmp(names[i], names[i + 1], l + 1) == 0)
			violation("after round %d: %.*s is in two state "
			    "directories: %s/ and %s/", round, (int)l, names[i],
			    names[i] + l + 1, strrchr(names[i + 1], '/') + 1);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

enum mode { M_EARLY, M_RECOVERY, M_BURST, M_RUNNING };

static void
round_run(int round)
{
	unsigned r = rnd(&rng, 100);
	enum mode mode = r < 10 ? M_EARLY : r < 25 ? M_RECOVERY :
	    r < 60 ? M_BURST : M_RUNNING;
	struct kid *owner;
	struct stat st;
	off_t subs0;
	long runs0;

	journal_poll();
	runs0 = nruns;
	subs0 = stat(path("%s/submissions", work), &st) == 0 ? st.st_size : 0;
	/* Sometimes the burst begins before the owner: it lands mid-scan. */
	if (mode <= M_RECOVERY && rnd(&rng, 2))
		subs_start(round, backlog());
	owner = owner_start(false, round);
	if (mode >= M_BURST)
		subs_start(round, backlog());
	switch (mode) {
	case M_EARLY:		/* exec, lock, statfs */
		nap_us(rnd(&rng, 20000));
		stats.k_startup++;
		break;
	case M_RECOVERY:	/* recovery of cur/, scans of defer/ and new/ */
		wait_until(owner_up, &owner->pid, owner, 5000);
		nap_us(rnd(&rng, 3000));
		stats.k_startup++;
		break;
	case M_BURST:		/* submitters busy */
		wait_until(submitted, &subs0, owner, 5000);
		nap_us(rnd(&rng, 20000));
		stats.k_burst++;
		break;
	case M_RUNNING:		/* handlers running */
		wait_until(run_started, &runs0, owner, 5000);
		nap_us(rnd(&rng, 80000));
		stats.k_running++;
		break;
	}
	reap();
	if (subs_live() > 0)
		stats.k_subs++;
	if (live_handlers() > 0)
		stats.k_live++;
	owner_kill(owner);
	stats.kills++;
	check_snapshot(round);
}

/*
 * --pgsql: UNIQUE_SUBS submitters at once, each two sub_unique tries: a
 * race for the keys each round, whatever else the round does.
 */
#define UNIQUE_SUBS	4
void
subs_unique_start(int round)
{
	for (int i = 0; i < UNIQUE_SUBS; i++) {
		struct sub s = { round, NSUBMITTERS + i, 0, rng_next(&rng) };
		pid_t pid = fork();

		if (pid == -1)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			child_setup();
			setpgid(0, 0);
			nkids = 0;	/* this process's children are its own */
			sigprocmask(SIG_BLOCK, &chld_set, NULL);
			for (int k = 0; k < 2 && !stop_sig; k++)
				sub_unique(&s);
			_exit(0);
		}
		setpgid(pid, pid);
		kid_add(pid, K_SUBMITTER, round);
	}
}

/* ---- the final checks ---- */

void
load_submissions(void)
{
	char *buf = slurp(path("%s/submissions", work), NULL), *line, *save;

	if (buf == NULL)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		if (line[0] == 'u') {	/* see sub_refused() */
			unknown_allowed++;
			continue;
		}
		int j = job_get(line + 2, true);
		if (jobs[j].method != 0)
			violation("%s: accepted twice (%c and %c)", line + 2,
			    jobs[j].method, line[0]);
		jobs[j].method = line[0];
	}
	free(buf);
}

void
load_errors(void)
{
	char *buf = slurp(path("%s/errors", work), NULL), *line, *save;

	if (buf == NULL)
		return;
	for (line = strtok_r(buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save))
		violation("%s", line);
	free(buf);
}

/* A derived ID: NAME-SSSSSSSSSS.UUUUUU.PPPPPPP_CCCC (spool-layout.md). */
static bool
is_derived(const char *name)
{
	static const char pat[] = "-dddddddddd.dddddd.ddddddd_dddd";
	size_t n = strlen(name), m = sizeof(pat) - 1;

	if (n <= m)
		return false;
	for (size_t i = 0; i < m; i++) {
		char c = name[n - m + i];
		if (pat[i] == 'd' ? (c < '0' || c > '9') : c != pat[i])
			return false;
	}
	return true;
}

static void
scan_dirs(void)
{
	for (int d = 0; d < D_N; d++) {
		DIR *dp = opendir(path("%s/%s", spool, dirs[d]));
		struct dirent *de;

		if (dp == NULL)
			die("%s/%s: %s", spool, dirs[d], strerror(errno));
		while ((de = readdir(dp)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			int j = job_get(de->d_name, true);
			jobs[j].dirs |= 1u << d;
		}
		closedir(dp);
	}
	DIR *dp = opendir(path("%s/tmp", spool));
	struct dirent *de;
	while (dp && (de = readdir(dp)) != NULL)
		if (de->d_name[0] != '.')
			violation("tmp/%s left behind (no submitter was "
			    "killed)", de->d_name);
	if (dp)
		closedir(dp);
}

/* attempts=N for every job, from chute status, 200 IDs a call. */
static void
load_statuses(void)
{
	char *argv[210], *out, how[32];
	int j = 0;

	while (j < njobs) {
		int ac = 0, st;
		argv[ac++] = cfg.chute;
		argv[ac++] = "status";
		argv[ac++] = spool;
		for (; j < njobs && ac < 203; j++)
			if (jobs[j].dirs != 0)
				argv[ac++] = jobs[j].id;
		argv[ac] = NULL;
		if (ac == 3)
			break;
		st = capture(argv, -1, &out, path("%s/status.err", work), CMD_MS);
		if (st != 0)
			violation("chute status of %d jobs: %s (stderr in "
			    "status.err)", ac - 3, st == -1 ? "timed out" :
			    describe(st, how, sizeof(how)));
		for (char *line = out, *nl; line && *line; line = nl + 1) {
			char id[256], state[16];
			int n, k;
			if ((nl = strchr(line, '\n')) == NULL)
				break;
			*nl = '\0';
			if (sscanf(line, "%255s %15s attempts=%d", id, state, &n) == 3 &&
			    (k = job_get(id, false)) != -1)
				jobs[k].attempts = n;
		}
		free(out);
	}
}

/* In failed/ after max attempts, each one ended by its owner's death? */
static bool
exhausted_by_kills(const char *id)
{
	char *log = slurp(path("%s/log/%s", spool, id), NULL);
	bool yes = log && strstr(log, "abandoned: its owner died; attempts "
	    "exhausted") != NULL;

	free(log);
	return yes;
}

static void
check_place(struct job *jb)
{
	char where[64] = "";
	int n = 0;

	for (int d = 0; d < D_N; d++)
		if (jb->dirs & 1u << d) {
			n++;
			strlcat(where, " ", sizeof(where));
			strlcat(where, dirs[d], sizeof(where));
		}
	if (jb->method == 0 && n > 0) {
		violation("%s: in%s but never submitted%s", jb->id, where,
		    is_derived(jb->id) ? " (a derived ID: chute renamed a file "
		    "it should not have)" : "");
		return;
	}
	if (jb->method == 0)
		return;
	if (n == 0)
		violation("%s: accepted (%c) but in no state directory: lost",
		    jb->id, jb->method);
	else if (n > 1)
		violation("%s: in %d state directories at once:%s", jb->id, n,
		    where);
	else if (jb->dirs & (1u << D_NEW | 1u << D_CUR | 1u << D_DEFER))
		violation("%s: still in%s/ after the drain", jb->id, where);
}

static void
check_outcome(struct job *jb)
{
	const struct run *last = jb->last == -1 ? NULL : &runs[jb->last];

	if (jb->method == 0 || jb->dirs == 0)
		return;
	if (jb->attempts > MAX_ATTEMPTS)
		violation("%s: attempts=%d, more than --max-attempts %d", jb->id,
		    jb->attempts, MAX_ATTEMPTS);
	if (jb->dirs == 1u << D_DONE) {
		if (last == NULL || last->eline == 0 || last->code != 0)
			violation("%s: in done/ but its last run did not exit 0 "
			    "(%s)", jb->id, last == NULL ? "it never ran" :
			    last->eline == 0 ? "no END" : "exit != 0");
		else if (jb->attempts != last->attempt)
			violation("%s: in done/ with attempts=%d, but its last "
			    "run had CHUTE_ATTEMPT=%d", jb->id, jb->attempts,
			    last->attempt);
	}
	if (jb->dirs == 1u << D_FAILED) {
		if (jb->attempts != MAX_ATTEMPTS)
			violation("%s: in failed/ with attempts=%d: no handler "
			    "here fails for good", jb->id, jb->attempts);
		else if (exhausted_by_kills(jb->id))
			stats.exhausted++;	/* what the spec says; reported */
		else if (!cfg.flaky)
			violation("%s: in failed/ in non-flaky mode, not by "
			    "abandoned attempts", jb->id);
	}
}

void
check_runs(struct job *jb, bool need_end)
{
	for (int r = jb->first; r != -1; r = runs[r].next) {
		const struct run *a = &runs[r], *b = a->next == -1 ? NULL :
		    &runs[a->next];

		if (a->busy)
			violation("%s: attempt %d (pid %ld, journal line %ld) "
			    "started while a process of an earlier run still "
			    "held the job's lock", jb->id, a->attempt, a->pid,
			    a->sline);
		if (a->eline == 0 && need_end)
			violation("%s: attempt %d (pid %ld) never ended: killed?",
			    jb->id, a->attempt, a->pid);
		if (a->eline == 0 && handler_alive(a->pid, jb->id))
			violation("%s: attempt %d (pid %ld) still running after "
			    "the drain", jb->id, a->attempt, a->pid);
		if (b == NULL)
			continue;
		if (b->attempt <= a->attempt)
			violation("%s: CHUTE_ATTEMPT went from %d to %d", jb->id,
			    a->attempt, b->attempt);
		if (a->eline == 0)
			continue;	/* unknown end: only b->busy can tell */
		if (b->sline < a->eline)
			violation("%s: attempt %d (pid %ld) started at journal "
			    "line %ld, before attempt %d (pid %ld) ended at line "
			    "%ld", jb->id, b->attempt, b->pid, b->sline,
			    a->attempt, a->pid, a->eline);
		else if (b->start_ns < a->end_ns)
			violation("%s: attempt %d started at %" PRId64 " ns, "
			    "before attempt %d ended at %" PRId64 " ns", jb->id,
			    b->attempt, b->start_ns, a->attempt, a->end_ns);
	}
}

static void
check_all(void)
{
	DIR *dp;
	struct dirent *de;

	load_submissions();
	load_errors();
	scan_dirs();
	journal_poll();
	load_statuses();
	for (int j = 0; j < njobs; j++) {
		check_place(&jobs[j]);
		check_outcome(&jobs[j]);
		check_runs(&jobs[j], !cfg.flaky);
		if (jobs[j].first != -1 && jobs[j].method == 0 &&
		    jobs[j].dirs == 0)
			violation("%s: a handler ran for a job never submitted",
			    jobs[j].id);
	}
	/* A log for a job nobody submitted means chute invented one. */
	if ((dp = opendir(path("%s/log", spool))) != NULL) {
		while ((de = readdir(dp)) != NULL) {
			int j;
			if (de->d_name[0] == '.')
				continue;
			if ((j = job_get(de->d_name, false)) == -1 ||
			    jobs[j].method == 0)
				violation("log/%s: a log for a job never "
				    "submitted", de->d_name);
		}
		closedir(dp);
	}
}

/* ---- the end: drain, wait for orphans ---- */

static void
drain(void)
{
	int64_t t0 = mono_ms(), limit = DRAIN_MS;
	struct kid *k;
	char how[32];

	/* A slow machine with a long backlog is not a hang. */
	for (int d = D_NEW; d <= D_DEFER; d++) {
		DIR *dp = opendir(path("%s/%s", spool, dirs[d]));
		struct dirent *de;
		while (dp && (de = readdir(dp)) != NULL)
			if (de->d_name[0] != '.')
				limit += DRAIN_JOB_MS;
		if (dp)
			closedir(dp);
	}
	k = owner_start(true, -1);
	if (!kid_wait(k, limit, true)) {
		if (stop_sig)
			return;
		violation("chute run --drain did not finish within %d s "
		    "(see owner.log)", (int)(limit / 1000));
		kill(k->pid, SIGKILL);
		kid_wait(k, KILL_WAIT_MS, false);
	} else if (k->status != 0)
		violation("chute run --drain ended with %s (see owner.log)",
		    describe(k->status, how, sizeof(how)));
	stats.drain_ms = mono_ms() - t0;
	kid_forget(k);
}

/* Orphaned handlers are our children (subreaper): wait until none is left. */
static void
orphans_wait(int64_t ms)
{
	int64_t deadline = mono_ms() + ms;

	for (;;) {
		reap();
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
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

/* ---- clean-up: kill what we started, remove the temp dir ---- */

/* The state letter and parent of pid, from /proc/PID/stat; false if gone. */
bool
proc_stat(long pid, char *state, long *ppid)
{
	char *st = slurp(path("/proc/%ld/stat", pid), NULL), *p;
	bool ok = st != NULL && (p = strrchr(st, ')')) != NULL &&
	    sscanf(p + 1, " %c %ld", state, ppid) == 2;

	free(st);
	return ok;
}

/* How many live (not zombie) children parent has, as /proc sees them. */
int
proc_children(long parent)
{
	DIR *dp = opendir("/proc");
	struct dirent *de;
	long ppid;
	char state;
	int n = 0;

	while (dp && (de = readdir(dp)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end == '\0' && pid > 0 && proc_stat(pid, &state, &ppid) &&
		    ppid == parent && state != 'Z')
			n++;
	}
	if (dp)
		closedir(dp);
	return n;
}

/*
 * Our children as /proc sees them, orphaned handlers included: with kill,
 * SIGKILL each (and its group); else count those we do not track (a kid
 * not yet reaped is tracked).
 */
static int
children(bool kill_them)
{
	DIR *dp = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (dp && (de = readdir(dp)) != NULL) {
		char *p, state;
		long pid = strtol(de->d_name, &p, 10), ppid;
		bool tracked = false;

		if (*p != '\0' || pid <= 0 || !proc_stat(pid, &state, &ppid) ||
		    ppid != main_pid)
			continue;
		if (kill_them) {
			/* Handlers lead their own groups: take the group too. */
			kill(-(pid_t)pid, SIGKILL);
			kill((pid_t)pid, SIGKILL);
			n++;
			continue;
		}
		for (int i = 0; i < nkids && !tracked; i++)
			tracked = kids[i].pid == (pid_t)pid && !kids[i].done;
		n += !tracked;
	}
	if (dp)
		closedir(dp);
	return n;
}

static int
kill_children(void)
{
	return children(true);
}

/* Our children we did not start ourselves: orphaned handlers and theirs. */
int
untracked_children(void)
{
	return children(false);
}

static int
rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(p) : unlink(p)) == -1)
		fprintf(stderr, "torture: %s: %s\n", p, strerror(errno));
	return 0;
}

/* rm -rf dir, saying on stderr what it could not remove. */
void
rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void
cleanup(void)
{
	int64_t deadline = mono_ms() + KILL_WAIT_MS;

	if (getpid() != main_pid)
		return;
	/* Owners first: their handlers then become ours, and go next. */
	for (int i = 0; i < nkids; i++)
		if (kids[i].pid != 0 && !kids[i].done)
			kill(kids[i].pid, SIGKILL);
	for (;;) {
		reap();
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
			break;
		if (mono_ms() > deadline) {
			fprintf(stderr, "torture: some children would not die\n");
			break;
		}
		kill_children();
		wait_chld(50);
	}
	if (work[0] == '\0')
		return;
	if (cfg.keep)
		fprintf(stderr, "torture: kept %s\n", work);
	else
		rm_tree(work);
}

/* ---- main ---- */

static void
on_signal(int sig)
{
	stop_sig = sig;
}

static void
usage(void)
{
	fprintf(stderr, "usage: torture [--rounds N] [--chute PATH] [--seed S] "
	    "[--flaky] [--keep] [--pgsql [--freeze] [--keys]]\n");
	exit(64);
}

/* The handler's commands: a missing one would look like a chute bug. */
static const char *const tools[] = { "flock", "cksum", "date", "sleep", NULL };

static bool
in_path(const char *cmd)
{
	char *p = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	char *dir, *save = NULL;
	bool found = false;

	for (dir = strtok_r(p, ":", &save); dir && !found;
	    dir = strtok_r(NULL, ":", &save))
		found = access(path("%s/%s", dir, cmd), X_OK) == 0;
	free(p);
	return found;
}

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "chute", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "flaky", no_argument, NULL, 'f' },
		{ "keep", no_argument, NULL, 'k' },
		{ "pgsql", no_argument, NULL, 'p' },
		{ "freeze", no_argument, NULL, 'z' },
		{ "keys", no_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *err;
	char *end;
	int c;

	cfg.chute = getenv("CHUTE_BIN");
	if (cfg.chute == NULL)
		cfg.chute = default_chute;
	cfg.seed = arc4random() | (uint64_t)arc4random() << 32;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cfg.rounds = strtonum(optarg, 1, 1000000, &err);
			if (err)
				die("--rounds %s: %s", optarg, err);
			break;
		case 'c':
			cfg.chute = optarg;
			break;
		case 's':
			errno = 0;
			cfg.seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg)
				die("--seed %s: not a number", optarg);
			break;
		case 'f':
			cfg.flaky = true;
			break;
		case 'k':
			cfg.keep = true;
			break;
		case 'p':
			cfg.pgsql = true;
			break;
		case 'z':
			cfg.freeze = true;
			break;
		case 'K':
			cfg.keys = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || ((cfg.freeze || cfg.keys) && !cfg.pgsql))
		usage();
	if (access(cfg.chute, X_OK) == -1)
		die("%s: %s (build it with make, or give --chute PATH)",
		    cfg.chute, strerror(errno));
	for (const char *const *t = tools; *t != NULL; t++)
		if (!in_path(*t))
			die("%s: not found in PATH; the handler needs it "
			    "(flock is util-linux's)", *t);
}

/*
 * What both modes need: signals, the subreaper, the temp dir (removed at
 * exit, with every process we started killed first), the journal and the
 * submissions file.
 */
void
setup_common(void)
{
	const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct sigaction sa = { .sa_handler = on_signal };
	char tmpl[PATH_MAX];
	int fd;

	sigemptyset(&chld_set);
	sigaddset(&chld_set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld_set, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	snprintf(tmpl, sizeof(tmpl), "%s/torture.XXXXXX", tmpdir);
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, work) == NULL)
		die("%s: %s", tmpl, strerror(errno));
	atexit(cleanup);
	if (mkdir(path("%s/locks", work), 0700) == -1 ||
	    mkdir(path("%s/payload", work), 0700) == -1)
		die("%s: %s", work, strerror(errno));
	if ((fd = open(path("%s/journal", work), O_WRONLY | O_CREAT | O_TRUNC |
	    O_CLOEXEC, 0644)) == -1)
		die("%s/journal: %s", work, strerror(errno));
	close(fd);
	append_line(path("%s/submissions", work), "%s", "# method ID");
}

static void
setup(void)
{
	char *out, how[32];
	char *argv[] = { cfg.chute, "init", spool, NULL };
	int st;

	setup_common();
	snprintf(spool, sizeof(spool), "%s/spool", work);
	target = spool;
	write_handler();
	st = capture(argv, -1, &out, path("%s/init.err", work), CMD_MS);
	free(out);
	if (st != 0)
		die("chute init %s: %s", spool, st == -1 ? "timed out" :
		    describe(st, how, sizeof(how)));
	ino_setup();
}

int
main(int argc, char **argv)
{
	int64_t t0 = mono_ms();

	main_pid = getpid();
	parse_args(argc, argv);
	rng = cfg.seed;
	if (cfg.pgsql)
		return torture_pg();
	setup();
	printf("torture: seed=%" PRIu64 " rounds=%d%s chute=%s dir=%s\n",
	    cfg.seed, cfg.rounds, cfg.flaky ? " flaky" : "", cfg.chute, work);
	fflush(stdout);
	for (int r = 0; r < cfg.rounds && !stop_sig; r++)
		round_run(r);
	if (!stop_sig)
		subs_wait_all(CMD_MS);
	if (!stop_sig)
		drain();
	if (!stop_sig)
		orphans_wait(ORPHAN_MS);
	if (stop_sig) {
		fprintf(stderr, "torture: interrupted by signal %d\n", (int)stop_sig);
		return 2;
	}
	check_all();
	int naccepted = 0;
	for (int j = 0; j < njobs; j++)
		naccepted += jobs[j].method != 0;
	printf("torture: rounds=%d jobs=%d kills=%d runs=%ld violations=%d\n",
	    cfg.rounds, naccepted, stats.kills, tally.runs, nviol);
	printf("torture: kills at start-up=%d mid-burst=%d while-running=%d, "
	    "with submitters running=%d, with live handlers=%d; orphans "
	    "reaped=%d; owners refused=%d; failed by abandoned attempts=%d; "
	    "drain=%.1fs; total=%.1fs\n", stats.k_startup, stats.k_burst,
	    stats.k_running, stats.k_subs, stats.k_live, tally.orphans_reaped,
	    stats.refused, stats.exhausted, stats.drain_ms / 1000.0,
	    (mono_ms() - t0) / 1000.0);
	print_violations("");
	return nviol == 0 ? 0 : 1;
}
