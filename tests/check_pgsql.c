/*
 * check_pgsql.c: the fleet, end to end: build/chute with postgresql://
 * URIs (it execs chute-pgsql) against a real PostgreSQL server that
 * t_pg.c starts for the test case, one fresh database per test.  Handlers
 * keep a journal outside the database, so what ran is checked against
 * something the database cannot fake.  Skipped, with one line, where the
 * server's programs are missing.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"

/* Start a worker: chute run URL ARGS... in the background. */
#define WORKER(...)	t_owner(NULL, t_uri, __VA_ARGS__, (const char *)NULL)

/* Wait until the job is in state; fail with its status otherwise. */
static void
await_state(const char *id, const char *state, int ms)
{
	const char *q = P("SELECT state FROM chute.jobs WHERE id = '%s'", id);

	WAIT_UNTIL(strcmp(t_sql(q), state) == 0, ms, "job %s is not %s in %d ms "
	    "but %s", id, state, ms, t_sql(q));
}

/* ---- the basics ---- */

START_TEST(test_init_twice_and_from_two_processes_at_once_is_safe)
{
	pid_t a = t_spawn((const char *const[]){ T.bin, "init", t_uri, NULL },
	    NULL, RP("a.out"), RP("a.out"), NULL);
	pid_t b = t_spawn((const char *const[]){ T.bin, "init", t_uri, NULL },
	    NULL, RP("b.out"), RP("b.out"), NULL);

	EXPECT(t_reap(a, 20000, "init a") == 0, "init a: %s", t_log_of(a));
	EXPECT(t_reap(b, 20000, "init b") == 0, "init b: %s", t_log_of(b));
	EXPECT(t_sqln("SELECT version FROM chute.version") == 13, "version");
	EXPECT(t_sqln("SELECT count(*) FROM chute.version") == 1, "one version row");
}
END_TEST

START_TEST(test_a_job_submitted_runs_and_every_command_sees_it)
{
	char *log;

	t_fleet_submit("default", "job1", "hello fleet\n");
	EXPECT(CHUTE("submit", t_uri, "--id", "job1") == 1 &&
	    strstr(T.err, "job exists") != NULL, "a second submit of job1: %s",
	    T.err);
	EXPECT(CHUTE("status", t_uri, "job1") == 0 && strcmp(T.out,
	    "job1 new attempts=0\n") == 0, "status: %s%s", T.out, T.err);
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(t_journal_has("job1", 1) && t_journal_count("job1") == 1,
	    "journal");
	log = t_slurp(RP("seen/job1"));
	EXPECT(log && strcmp(log, "hello fleet\n") == 0, "the handler read %s",
	    t_snip(log));
	free(log);
	EXPECT(CHUTE("status", t_uri, "job1") == 0 && strcmp(T.out,
	    "job1 done attempts=1 exit=0\n") == 0, "status: %s", T.out);
	EXPECT(CHUTE("wait", t_uri, "job1") == 0, "wait: %s", T.err);
	/* "--" ends the options, as on a spool; it is not a job's ID. */
	EXPECT(CHUTE("status", t_uri, "--", "job1") == 0 && strcmp(T.out,
	    "job1 done attempts=1 exit=0\n") == 0, "status -- job1: %s%s",
	    T.out, T.err);
	EXPECT(CHUTE("ls", t_uri) == 0 && t_line_of(T.out, "done") != NULL &&
	    t_token(T.out, "job1"), "ls: %s", T.out);
	EXPECT(CHUTE("stats", t_uri) == 0 && t_line_of(T.out, "done") &&
	    t_token(t_line_of(T.out, "done"), "1"), "stats: %s", T.out);
	EXPECT(CHUTE("log", t_uri, "job1") == 0 && strstr(T.out,
	    "attempt=1 start") && strstr(T.out, "attempt=1 exit=0"), "log: %s",
	    T.out);
	EXPECT(CHUTE("status", t_uri, "nope") == 1 && strstr(T.err, "unknown job"),
	    "unknown: %s", T.err);
	EXPECT(CHUTE("purge", t_uri, "--older-than", "0s") == 0 &&
	    strcmp(T.out, "purged 1\n") == 0, "purge: %s %s", T.out, T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.payloads") == 0 &&
	    t_sqln("SELECT count(*) FROM chute.logs") == 0, "purged payload and log");
}
END_TEST

START_TEST(test_two_queues_in_one_database_are_kept_apart)
{
	t_fleet_submit("a", "ja", "a\n");
	t_fleet_submit("b", "jb", "b\n");
	EXPECT(t_reap(WORKER("--queue", "a", "--drain", "--", h_journal()),
	    30000, "drain a") == 0, "drain a");
	EXPECT(t_journal_has("ja", 1) && !t_journal_has("jb", 1), "only a ran");
	EXPECT(CHUTE("status", t_uri, "--queue", "b", "jb") == 0 &&
	    t_token(T.out, "new"), "jb waits in b: %s", T.out);
	EXPECT(CHUTE("status", t_uri, "jb") == 1, "jb is not in default");
}
END_TEST

/* An ID may hold " and \: wait sends them in a text[] literal, quoted. */
START_TEST(test_wait_on_ids_with_quotes_and_backslashes)
{
	const char *q = "q\"uote\"", *bs = "back\\slash\\";

	t_fleet_submit("default", q, "x\n");
	t_fleet_submit("default", bs, "y\n");
	EXPECT(CHUTE("wait", t_uri, "--timeout", "100ms", q, bs) == 124,
	    "wait on two new jobs times out: %s", T.err);
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(CHUTE("status", t_uri, q) == 0 && t_token(T.out, "done"),
	    "%s: %s%s", q, T.out, T.err);
	EXPECT(CHUTE("status", t_uri, bs) == 0 && t_token(T.out, "done"),
	    "%s: %s%s", bs, T.out, T.err);
	EXPECT(CHUTE("wait", t_uri, "--timeout", "10s", q, bs) == 0,
	    "wait on both: %s", T.err);
	EXPECT(CHUTE("wait", t_uri, "--timeout", "10s", q, "q\"uote") == 1 &&
	    strstr(T.err, "unknown job"), "an unknown ID among them: %s", T.err);
}
END_TEST

/* ---- outcomes ---- */

START_TEST(test_exit_75_and_timeout_back_off_then_fail_at_max_attempts)
{
	const char *h = t_handler("h", "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "case $CHUTE_ID in slow) sleep 5;; esac\nexit 75\n");

	pid_t w;

	t_fleet_submit("default", "later", "x");
	t_fleet_submit("default", "slow", "x");
	w = WORKER("-j", "2", "--drain", "--max-attempts", "3", "--timeout",
	    "300ms", QUICK, "--", h);
	EXPECT(t_reap(w, 60000, "drain") == 0, "drain");
	/* Each deferral recorded is said so, none refused (they all were). */
	EXPECT(t_log_count(w, "job=later cur->defer attempt=") == 2 &&
	    t_log_count(w, "job=slow cur->defer attempt=") == 2 &&
	    t_log_count(w, "refused") == 0, "the journal:\n%s", t_log_of(w));
	EXPECT(t_journal_count("later") == 3 && t_journal_count("slow") == 3,
	    "three attempts each: %d %d", t_journal_count("later"),
	    t_journal_count("slow"));
	EXPECT(CHUTE("status", t_uri, "later") == 0 && strstr(T.out,
	    "failed attempts=3 exit=75 attempts-exhausted"), "later: %s", T.out);
	EXPECT(CHUTE("status", t_uri, "slow") == 0 && strstr(T.out,
	    "failed attempts=3 timeout signal=TERM attempts-exhausted"),
	    "slow: %s", T.out);
	EXPECT(CHUTE("wait", t_uri, "later") == 1, "wait on a failed job: 1");
}
END_TEST

START_TEST(test_delay_and_at_defer_a_job_until_its_time)
{
	char at[32];
	int64_t t0 = t_now();

	t_write(RP("in"), "x");
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--id", "d", "--delay", "1500ms")
	    == 0, "submit --delay: %s", T.err);
	snprintf(at, sizeof(at), "%lld", (long long)(t0 / 1000 + 2));
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--id", "a", "--at", at) == 0,
	    "submit --at: %s", T.err);
	EXPECT(CHUTE("status", t_uri, "d") == 0 && t_token(T.out, "defer") &&
	    strstr(T.out, "next="), "status of d: %s", T.out);
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(t_journal_count("d") == 1 && t_journal_count("a") == 1, "ran once");
	EXPECT(t_now() - t0 >= 1500, "not before its time: %lld ms",
	    (long long)(t_now() - t0));
}
END_TEST

START_TEST(test_cancel_from_another_process_stops_the_running_handler)
{
	pid_t w, h;

	t_fleet_submit("default", "c", "x");
	w = WORKER(QUICK, "--", h_block());
	WAIT_UNTIL((h = t_handler_pid("c")) > 0, 20000, "the handler to start");
	EXPECT(CHUTE("cancel", t_uri, "c") == 0 && strcmp(T.out,
	    "c cur->failed\n") == 0, "cancel: %s%s", T.out, T.err);
	WAIT_UNTIL(!t_alive(h), 10000, "the handler to be stopped");
	EXPECT(CHUTE("status", t_uri, "c") == 0 && t_token(T.out, "failed") &&
	    t_token(T.out, "cancelled"), "status: %s", T.out);
	EXPECT(t_alive(w), "the worker goes on");
	EXPECT(t_stop(w) == 0, "worker stops cleanly");
	EXPECT(CHUTE("status", t_uri, "c") == 0 && t_token(T.out, "failed"),
	    "still failed: %s", T.out);
	EXPECT(CHUTE("cancel", t_uri, "c") == 1 && strstr(T.err, "already failed"),
	    "a second cancel: %s", T.err);
	EXPECT(CHUTE("retry", t_uri, "c") == 0 && strcmp(T.out,
	    "c failed->new\n") == 0, "retry: %s", T.out);
	EXPECT(CHUTE("status", t_uri, "c") == 0 && strcmp(T.out,
	    "c new attempts=0\n") == 0, "after retry: %s", T.out);
}
END_TEST

/* utime + stime of pid, in clock ticks; -1 if it cannot be read. */
static long
cpu_ticks(pid_t pid)
{
	char *stat = t_slurp(P("/proc/%ld/stat", (long)pid)), *p;
	unsigned long ut, st;
	long n = -1;

	/* The fields after the name in parentheses, which may hold spaces. */
	if (stat != NULL && (p = strrchr(stat, ')')) != NULL && sscanf(p + 2,
	    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) ==
	    2)
		n = (long)(ut + st);
	free(stat);
	return n;
}

/*
 * A worker whose every slot is busy, with work waiting, sleeps until a
 * slot is free.  It took every wake-up (a notification, a claim that
 * filled its request) for a reason to turn its loop at once, and spun a
 * core until a slot freed: for as long as the running job took.  The
 * bound is loose on purpose (a fifth of the core over two seconds): a
 * spinning worker takes most of it, a sleeping one next to nothing.
 */
START_TEST(test_a_worker_with_every_slot_busy_sleeps_while_work_waits)
{
	struct timespec two = { 2, 0 };
	long before, after, hz = sysconf(_SC_CLK_TCK);
	pid_t w, h;

	t_fleet_submit("default", "busy", "x");
	w = WORKER("-j", "1", "--", h_block());
	WAIT_UNTIL((h = t_handler_pid("busy")) > 0, 20000, "the handler to start");
	for (int i = 0; i < 5; i++)	/* each one a notification: a wake-up */
		t_fleet_submit("default", P("waiting%d", i), "x");
	before = cpu_ticks(w);
	nanosleep(&two, NULL);	/* the window measured, not a wait for it */
	after = cpu_ticks(w);
	EXPECT(before >= 0 && after >= 0 && after - before < 2 * hz / 5,
	    "the worker used %ld of %ld ticks while its one slot was busy",
	    after - before, 2 * hz);
	t_release();
	EXPECT(t_stop(w) == 0, "the worker stops cleanly");
}
END_TEST

/* ---- the workers you can see, pause and resume ---- */

/* One line of `chute workers URL`, split into its words. */
struct wline {
	char	 worker[300], host[256], queue[128], version[32], state[16];
	char	 started[32], seen[32];
	long	 pid, running;
	int	 slots;
	char	*rest;		/* the lines after it (into T.out) */
};

/* Worker pid's name, host:pid (static). */
static const char *
worker_name(pid_t pid)
{
	static char name[300];
	char host[256] = "";

	gethostname(host, sizeof host - 1);
	snprintf(name, sizeof name, "%s:%d", host, (int)pid);
	return name;
}

/*
 * Has worker pid a row in chute.workers that holds cond?  Waited for
 * through psql: each chute is a process of the test's 32.
 */
static bool
worker_row(pid_t pid, const char *cond)
{
	return t_sqln(P("SELECT count(*) FROM chute.workers WHERE worker = '%s'"
	    " AND %s", worker_name(pid), cond)) == 1;
}

#define ALIVE	"stopped IS NULL AND seen + lease_ms * interval '1 millisecond'" \
	" > now()"

/* Worker pid's line of `chute workers URL [--queue queue]`; false if none. */
static bool
worker_line(pid_t pid, const char *queue, struct wline *w)
{
	char host[256] = "", name[300], *l;

	gethostname(host, sizeof host - 1);
	snprintf(name, sizeof name, "%s:%d", host, (int)pid);
	EXPECT(CHUTE("workers", t_uri, "--queue", queue) == 0 && strncmp(T.out,
	    "WORKER ", 7) == 0, "workers: %s%s", T.out, T.err);
	if ((l = t_line_of(T.out, name)) == NULL)
		return false;
	EXPECT(sscanf(l, "%299s %255s %ld %127s %d %ld %31s %31s %31s %15s",
	    w->worker, w->host, &w->pid, w->queue, &w->slots, &w->running,
	    w->version, w->started, w->seen, w->state) == 10, "a line of ten "
	    "words: %s", l);
	EXPECT(strcmp(w->host, host) == 0 && w->pid == pid, "host %s, pid %ld: "
	    "%s", w->host, w->pid, l);
	w->rest = strstr(T.out, name) + strlen(name);
	return true;
}

/*
 * chute workers URL lists each worker of the queue with the host, pid,
 * slots and version it recorded, the claims it holds (those `ls URL cur`
 * names it in), alive; stopped once stopped cleanly; none of another
 * queue's.
 */
START_TEST(test_workers_lists_each_worker_with_its_host_pid_slots_and_claims)
{
	struct wline a, b, o;
	pid_t wa, wb, wo;
	char *cur;

	t_fleet_submit("default", "k", "x");
	wa = WORKER("-j", "3", QUICK, "--", h_block());
	wb = WORKER("-j", "1", QUICK, "--", h_block());
	wo = WORKER("--queue", "other", "-j", "2", "--", h_block());
	WAIT_UNTIL(t_handler_pid("k") > 0, 20000, "k to start");
	WAIT_UNTIL(worker_row(wa, ALIVE) && worker_row(wb, ALIVE) &&
	    worker_row(wo, ALIVE), 20000, "the three workers' rows");
	EXPECT(worker_line(wa, "default", &a) && worker_line(wb, "default", &b) &&
	    a.running + b.running == 1, "both workers listed, one holding k: %s",
	    T.out);
	EXPECT(a.slots == 3 && b.slots == 1 && strcmp(a.queue, "default") == 0 &&
	    strcmp(a.version, "0.1.0") == 0 && strcmp(a.state, "alive") == 0 &&
	    strcmp(b.state, "alive") == 0, "%s", T.out);
	EXPECT(!worker_line(wo, "default", &o), "a worker of another queue: %s",
	    T.out);
	EXPECT(worker_line(wo, "other", &o) && o.slots == 2 && o.running == 0,
	    "--queue other: %s", T.out);
	EXPECT(CHUTE("ls", t_uri, "cur") == 0 && (cur = t_line_of(T.out, "cur"))
	    != NULL && t_token(cur, a.running ? a.worker : b.worker) &&
	    t_token(cur, "k"), "ls cur names k's worker: %s", T.out);
	t_release();
	await_state("k", "done", 10000);
	EXPECT(t_stop(wa) == 0, "wa stops");
	EXPECT(worker_line(wa, "default", &a) && strcmp(a.state, "stopped") == 0 &&
	    a.running == 0, "a stopped worker: %s", T.out);
	EXPECT(worker_line(wb, "default", &b) && strcmp(b.state, "alive") == 0,
	    "the other goes on: %s", T.out);
	EXPECT(t_stop(wb) == 0 && t_stop(wo) == 0, "workers stop");
}
END_TEST

/* The LEASE column of an `ls URL cur` line (the sixth), into lease[32]. */
static bool
ls_lease(const char *line, char *lease)
{
	return line != NULL && sscanf(line, "%*s %*s %*s %*s %*s %31s",
	    lease) == 1;
}

/*
 * A worker killed with -9 is alive until its lease runs out, then gone,
 * with the claims it held listed under it (nobody has recovered them:
 * no other worker runs); ls URL cur shows their leases run out.
 */
START_TEST(test_a_killed_worker_shows_gone_after_its_lease_with_its_claims)
{
	struct wline w;
	char lease[32];
	pid_t pid;

	t_fleet_submit("default", "k1", "x");
	t_fleet_submit("default", "k2", "x");
	pid = WORKER("--lease", "2s", "-j", "2", "--", h_block());
	WAIT_UNTIL(t_handler_pid("k1") > 0 && t_handler_pid("k2") > 0, 20000,
	    "both to start");
	WAIT_UNTIL(worker_row(pid, ALIVE), 20000, "its row");
	EXPECT(worker_line(pid, "default", &w) && strcmp(w.state, "alive") == 0 &&
	    w.running == 2 && strstr(w.rest, "holds") == NULL, "alive, holding "
	    "two: %s", T.out);
	EXPECT(CHUTE("ls", t_uri, "cur") == 0 && strstr(T.out, " LEASE ") &&
	    ls_lease(t_line_of(T.out, "cur"), lease) && strcmp(lease, "-") != 0 &&
	    t_nlines(T.out) == 3, "ls cur: %s", T.out);
	EXPECT(kill(pid, SIGKILL) == 0, "kill -9");
	t_reap(pid, 5000, "killed worker");
	WAIT_UNTIL(worker_row(pid, "NOT (" ALIVE ")"), 10000, "gone after its "
	    "2 s lease");
	EXPECT(worker_line(pid, "default", &w) && strcmp(w.state, "gone") == 0,
	    "gone: %s", T.out);
	EXPECT(w.running == 2 && strstr(w.rest, "\n  holds k1 lease=") &&
	    strstr(w.rest, "\n  holds k2 lease="), "its claims under it: %s",
	    T.out);
	EXPECT(CHUTE("ls", t_uri, "cur") == 0 && ls_lease(t_line_of(T.out,
	    "cur"), lease) && lease[0] == '-' && lease[1] != '\0' &&
	    t_token(t_line_of(T.out, "cur"), w.worker), "the lease run out: %s",
	    T.out);
}
END_TEST

#define GONE_AN_HOUR	"SELECT count(*) FROM chute.workers WHERE" \
	" coalesce(stopped, seen + lease_ms * interval '1 millisecond')" \
	" < now() - interval '1 hour'"

/*
 * Rows of workers gone for more than an hour are deleted by a worker's
 * recovery, a hundred at a time; those gone lately and the live stay.
 * The hour is made by setting seen and stopped back.
 */
START_TEST(test_rows_of_workers_gone_for_an_hour_are_deleted_a_hundred_at_once)
{
	struct wline w;
	pid_t a, b;

	a = WORKER("--", h_journal());
	WAIT_UNTIL(worker_row(a, ALIVE), 20000, "a's row");
	EXPECT(t_stop(a) == 0, "a stops");
	t_sql(P("UPDATE chute.workers SET stopped = now() - interval '61 minutes',"
	    " seen = now() - interval '61 minutes' WHERE worker = '%s'",
	    worker_name(a)));
	t_sql("INSERT INTO chute.workers (worker, queue, host, pid, slots,"
	    " version, lease_ms, started, seen) SELECT 'old:' || g, 'q' || g % 3,"
	    " 'old', g, 1, '0.0.9', 1000, now() - interval '3 hours',"
	    " now() - interval '2 hours' FROM generate_series(1, 150) g;"
	    " INSERT INTO chute.workers (worker, queue, host, pid, slots, version,"
	    " lease_ms, seen) VALUES ('late:1', 'default', 'late', 1, 1, '0.1.0',"
	    " 1000, now() - interval '30 minutes'), ('live:1', 'default', 'live',"
	    " 1, 1, '0.1.0', 3600000, now())");
	EXPECT(t_sqln(GONE_AN_HOUR) == 151, "151 gone for an hour");
	b = WORKER("--", h_journal());
	WAIT_UNTIL(t_sqln(GONE_AN_HOUR) == 51, 20000, "a hundred of the 151 "
	    "deleted: %ld left", t_sqln(GONE_AN_HOUR));
	EXPECT(t_sqln("SELECT count(*) FROM chute.workers WHERE worker IN"
	    " ('late:1', 'live:1')") == 2, "those gone lately and the live stay: "
	    "%s", t_sql("SELECT string_agg(worker, ' ') FROM chute.workers"
	    " WHERE worker NOT LIKE 'old:%'"));
	EXPECT(worker_line(b, "default", &w) && strcmp(w.state, "alive") == 0,
	    "b's own row: %s", T.out);
	EXPECT(t_stop(b) == 0, "b stops");
}
END_TEST

/*
 * chute pause URL: a worker that polls every 10 ms claims nothing (its
 * running job finishes, the one it claimed ahead goes back uncounted, a
 * submission is accepted and waits, counted in its title as queued),
 * until chute resume URL.  Each says so in the worker's journal.
 */
START_TEST(test_a_paused_queue_claims_nothing_and_its_running_job_finishes)
{
	pid_t w;

	t_fleet_submit("default", "a", "x");
	t_fleet_submit("default", "a2", "x");
	w = WORKER("-j", "1", "--poll", "10ms", QUICK, "--", h_block());
	WAIT_UNTIL(t_handler_pid("a") > 0 && t_sqln("SELECT count(*) FROM"
	    " chute.jobs WHERE state = 'cur'") == 2, 20000, "a running, a2 "
	    "claimed ahead");
	EXPECT(CHUTE("pause", t_uri) == 0 && strcmp(T.out, "default paused\n")
	    == 0 && T.err[0] == '\0', "pause: %s%s", T.out, T.err);
	/* A name with no job and no worker: a typo, most likely; said. */
	EXPECT(CHUTE("pause", t_uri, "--queue", "defualt") == 0 &&
	    strcmp(T.out, "defualt paused\n") == 0 && strstr(T.err, "note: "
	    "queue defualt has no job and no worker") && t_nlines(T.err) == 1,
	    "pause of an unknown queue: %s%s", T.out, T.err);
	EXPECT(CHUTE("resume", t_uri, "--queue", "defualt") == 0 &&
	    T.err[0] == '\0', "resume it: %s", T.err);
	EXPECT(CHUTE("pause", t_uri) == 0 && strstr(T.out, "default already "
	    "paused by ") == T.out, "pause again: %s%s", T.out, T.err);
	EXPECT(CHUTE("status", t_uri) == 0 && strstr(T.out, "default paused by ")
	    == T.out && strstr(T.out, " since "), "status: %s%s", T.out, T.err);
	WAIT_UNTIL(t_log_count(w, "queue default paused by ") == 1, 10000,
	    "the worker to say so: %s", t_log_of(w));
	await_state("a2", "new", 10000);
	EXPECT(t_sqln("SELECT attempts FROM chute.jobs WHERE id = 'a2'") == 0,
	    "a2 went back uncounted");
	t_fleet_submit("default", "b", "x");
	t_release();
	await_state("a", "done", 10000);
	WAIT_UNTIL(strstr(t_title(w), "running=0 queued=2 deferred=0 paused"),
	    10000, "the worker to count a2 and b, paused: %s", t_title(w));
	EXPECT(!t_journal_has("a2", 1) && !t_journal_has("b", 1) &&
	    t_sqln("SELECT count(*) FROM chute.jobs WHERE state = 'new'") == 2,
	    "nothing claimed while paused");
	EXPECT(CHUTE("stats", t_uri) == 0 && strstr(t_line_of(T.out, "paused"),
	    " by "), "stats: %s", T.out);
	EXPECT(CHUTE("resume", t_uri) == 0 && strcmp(T.out, "default resumed\n")
	    == 0, "resume: %s%s", T.out, T.err);
	await_state("a2", "done", 10000);
	await_state("b", "done", 10000);
	EXPECT(t_log_count(w, "queue default resumed") == 1, "said: %s",
	    t_log_of(w));
	EXPECT(CHUTE("resume", t_uri) == 0 && strcmp(T.out, "default not "
	    "paused\n") == 0 && CHUTE("status", t_uri) == 0 && strcmp(T.out,
	    "default not paused\n") == 0, "resume again: %s", T.out);
	EXPECT(t_stop(w) == 0, "worker stops");
}
END_TEST

/*
 * The notifications: a worker whose safety poll is an hour away learns of
 * the pause (its journal says so, though it claims nothing), counts the
 * job submitted meanwhile, and claims it at the resume: only the NOTIFY
 * of pause and resume can have told it.
 */
START_TEST(test_pause_and_resume_reach_a_worker_whose_poll_is_an_hour_away)
{
	pid_t w;

	w = WORKER("--poll", "1h", "--lease", "3s", "--", h_journal());
	WAIT_UNTIL(worker_row(w, ALIVE), 20000, "its row");
	EXPECT(CHUTE("pause", t_uri) == 0, "pause: %s", T.err);
	WAIT_UNTIL(t_log_count(w, "queue default paused by ") == 1, 10000,
	    "told of the pause: %s", t_log_of(w));
	t_fleet_submit("default", "j", "x");
	WAIT_UNTIL(strstr(t_title(w), "queued=1 deferred=0 paused"), 10000,
	    "counted, at a renewal: %s", t_title(w));
	EXPECT(!t_journal_has("j", 1), "j ran while paused");
	EXPECT(CHUTE("resume", t_uri) == 0, "resume: %s", T.err);
	await_state("j", "done", 20000);
	EXPECT(t_log_count(w, "queue default resumed") == 1, "said: %s",
	    t_log_of(w));
	EXPECT(t_stop(w) == 0, "worker stops");
}
END_TEST

/*
 * An outcome batch larger than the socket takes at once (a log of 1 MiB
 * goes as 2 MiB of hex) is written whole when it is sent.  It was left
 * half written on the nonblocking connection, the server waiting for the
 * rest and the worker for the reply, until the next timed statement (a
 * renewal, a third of this 90 s lease away) flushed it.  The job writes
 * its log only after the claim's news went to the views (500 ms), so
 * that no other statement comes meanwhile.
 */
START_TEST(test_an_outcome_batch_larger_than_the_socket_is_sent_whole)
{
	const char *h = t_handler("h_big", "sleep 1.5\n"
	    "head -c 1048576 /dev/zero | tr '\\0' x\n");
	pid_t w;

	w = WORKER("--poll", "1h", "--lease", "90s", "--", h);
	WAIT_UNTIL(worker_row(w, ALIVE), 20000, "its row");
	t_fleet_submit("default", "big", "x");
	await_state("big", "done", 20000);
	EXPECT(t_stop(w) == 0, "worker stops");
}
END_TEST

/* ---- many workers ---- */

/*
 * Every start appends "ID" to the journal and holds a witness lock on
 * locks/ID while it runs: a second run of the same job at the same time
 * would find it taken and say CONCURRENT.
 */
static const char *
h_witness(void)
{
	return t_handler("h_witness",
	    "exec 9> \"$R/locks/$CHUTE_ID\"\n"
	    "flock -n 9 || echo \"CONCURRENT $CHUTE_ID\" >> \"$R/journal\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n");
}

/* n jobs j0000.., submitted by one chute submit of n files. */
static void
submit_many(int n)
{
	const char **argv = calloc((size_t)n + 8, sizeof(*argv));
	pid_t pid;
	int a = 0;

	EXPECT(mkdir(RP("in"), 0700) == 0 && mkdir(RP("locks"), 0700) == 0,
	    "mkdir");
	argv[a++] = T.bin;
	argv[a++] = "submit";
	argv[a++] = t_uri;
	for (int i = 0; i < n; i++) {
		const char *f = strdup(RP(P("in/j%04d", i)));
		t_write(f, P("job %d\n", i));
		argv[a++] = f;
	}
	argv[a] = NULL;
	pid = t_spawn(argv, NULL, RP("ids"), RP("submit.err"), NULL);
	for (int i = 3; i < a; i++)
		free((char *)(uintptr_t)argv[i]);
	free(argv);
	EXPECT(t_reap(pid, 60000, "submit") == 0, "submit: %s", t_log_of(pid));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == n, "%d jobs", n);
}

/* Each job ran exactly once, never twice at once, and is done. */
static void
expect_exactly_once(int n)
{
	char *j = t_slurp(RP("journal"));

	EXPECT(j != NULL && strstr(j, "CONCURRENT") == NULL, "a job ran twice "
	    "at once: %s", t_snip(j ? strstr(j, "CONCURRENT") : NULL));
	EXPECT(t_nlines(j) == n, "%d starts for %d jobs", t_nlines(j), n);
	EXPECT(t_sqln("SELECT count(DISTINCT id) FROM chute.jobs WHERE state ="
	    " 'done' AND attempts = 1") == n, "all done, once each");
	free(j);
	/* The journal's IDs are the jobs' IDs, each once. */
	EXPECT(t_pg_sql(t_uri, "SELECT 1", NULL, 0) == 0, "psql");
}

/* How often chute.payloads was read whole, or by its index. */
static long
payload_reads(const char *how)
{
	return t_sqln(P("SELECT coalesce(%s, 0) FROM pg_stat_user_tables"
	    " WHERE relid = 'chute.payloads'::regclass", how));
}

static void
workers_run_all(int nworkers, int n)
{
	long seq, idx;
	pid_t w[3];

	submit_many(n);
	/* Statistics as autovacuum keeps them on a queue in use. */
	t_sql("ANALYZE chute.live, chute.finished, chute.payloads");
	seq = payload_reads("seq_scan");
	idx = payload_reads("idx_scan");
	for (int i = 0; i < nworkers; i++)
		w[i] = WORKER("-j", "2", "--drain", "--", h_witness());
	for (int i = 0; i < nworkers; i++)
		EXPECT(t_reap(w[i], 600000, "worker") == 0, "worker %d: %s", i,
		    t_log_of(w[i]));
	expect_exactly_once(n);
	/*
	 * The workers' statements are prepared and planned once for any
	 * batch (pg_conn.c): each claim must fetch its payloads by key, never
	 * by reading the whole table (the payloads of every job queued).
	 * The exited workers' backends report their counts as they end.
	 */
	WAIT_UNTIL(payload_reads("idx_scan") >= idx + n, 10000, "%ld payloads "
	    "fetched by key for %d jobs", payload_reads("idx_scan") - idx, n);
	EXPECT(payload_reads("seq_scan") == seq, "chute.payloads read whole "
	    "%ld times by the workers", payload_reads("seq_scan") - seq);
}

START_TEST(test_two_workers_run_each_of_2000_jobs_exactly_once)
{
	workers_run_all(2, 2000);
}
END_TEST

START_TEST(test_three_workers_run_each_of_2000_jobs_exactly_once)
{
	workers_run_all(3, 2000);
}
END_TEST

/*
 * One submit of 2,500 files and, in their middle, one that is missing:
 * the missing one is named and the exit is 66; every other file is a job
 * with its exact bytes, its ID printed in input order, claimed in that
 * order; and the jobs went in as a few statements (1,000 a batch), not as
 * a transaction per file.
 */
START_TEST(test_a_submit_of_many_files_goes_in_batches_in_their_order)
{
	enum { N = 2500 };
	const char **argv = calloc(N + 8, sizeof(*argv));
	size_t cap = 1 << 18, w = 0;
	char *want = calloc(1, cap), *got = calloc(1, cap), *ids, *err;
	pid_t pid;
	int a = 0, rc;

	EXPECT(argv != NULL && want != NULL && got != NULL &&
	    mkdir(RP("in"), 0700) == 0, "setup");
	argv[a++] = T.bin;
	argv[a++] = "submit";
	argv[a++] = t_uri;
	for (int i = 0; i < N; i++) {
		if (i == N / 2)
			argv[a++] = strdup(RP("in/missing"));
		argv[a] = strdup(RP(P("in/f%04d", i)));
		t_write(argv[a++], P("payload %d\n", i));
		w += (size_t)snprintf(want + w, cap - w, "payload %d\n", i);
	}
	pid = t_spawn(argv, NULL, RP("ids"), RP("submit.err"), NULL);
	rc = t_reap(pid, 60000, "submit");
	for (int i = 3; i < a; i++)
		free((char *)(uintptr_t)argv[i]);
	free(argv);
	err = t_slurp(RP("submit.err"));
	ids = t_slurp(RP("ids"));
	EXPECT(rc == 66 && err != NULL && t_nlines(err) == 1 &&
	    strstr(err, "in/missing") != NULL, "exit %d, one line naming the "
	    "missing file: %s", rc, t_snip(err));
	EXPECT(ids != NULL && t_nlines(ids) == N, "%d IDs printed",
	    ids ? t_nlines(ids) : -1);
	EXPECT(t_pg_sql(t_uri, "SELECT string_agg(j.id, E'\\n' ORDER BY"
	    " j.run_at, j.id) FROM chute.jobs j", got, cap) == 0 &&
	    strncmp(got, ids, strlen(got)) == 0 && strlen(got) + 1 ==
	    strlen(ids), "claim order is the printed order, the input's");
	EXPECT(t_pg_sql(t_uri, "SELECT string_agg(convert_from(p.body, 'UTF8'),"
	    " '' ORDER BY j.run_at, j.id) FROM chute.jobs j JOIN chute.payloads"
	    " p USING (queue, id)", got, cap) == 0 && strncmp(got, want,
	    strlen(got)) == 0 && strlen(got) + 1 == strlen(want),
	    "each job holds its file's bytes, in input order");
	/* Each transaction that inserted rows left its own xmin on them. */
	EXPECT(t_sqln("SELECT count(DISTINCT xmin::text) FROM chute.live") <= 3,
	    "%ld transactions for %d jobs",
	    t_sqln("SELECT count(DISTINCT xmin::text) FROM chute.live"), N);
	free(want);
	free(got);
	free(ids);
	free(err);
}
END_TEST

/* ---- failures ---- */

START_TEST(test_a_killed_worker_s_job_runs_again_after_its_lease_and_never_at_once)
{
	pid_t a, b, h1;

	t_fleet_submit("default", "k", "x");
	a = WORKER("--lease", "2s", "--", h_block());
	WAIT_UNTIL((h1 = t_handler_pid("k")) > 0, 20000, "the first run");
	EXPECT(kill(a, SIGKILL) == 0, "kill -9 the worker");
	t_reap(a, 5000, "killed worker");
	/* Its handler dies with it (PR_SET_PDEATHSIG), well before the lease. */
	WAIT_UNTIL(!t_alive(h1), 1000, "the first run's handler to die with "
	    "its worker");
	b = WORKER("--lease", "2s", "--", h_block());
	WAIT_UNTIL(t_journal_has("k", 2), 15000, "the second run, after the "
	    "lease");
	EXPECT(!t_alive(h1), "the first run is gone");
	t_release();
	await_state("k", "done", 10000);
	EXPECT(CHUTE("status", t_uri, "k") == 0 && t_token(T.out, "attempts=2"),
	    "both attempts counted: %s", T.out);
	EXPECT(t_stop(b) == 0, "worker b stops");
}
END_TEST

/*
 * The witness of "never two runs at once" for the grandchildren tests: a
 * lock on R/witness that a handler's first run takes on fd 9 and hands to
 * a grandchild (sleep 30, in the handler's process group, recorded in
 * R/grandchild and R/hpids) that outlives the handler's own process.  Is
 * the witness free?  Taken and given back at once.
 */
static bool
witness_free(void)
{
	int fd = open(RP("witness"), O_RDONLY | O_CLOEXEC);
	bool free_ = fd != -1 && flock(fd, LOCK_EX | LOCK_NB) == 0;

	if (fd != -1)
		close(fd);
	return free_;
}

/* The grandchild's pid, once its handler has recorded it; 0 before. */
static pid_t
grandchild(void)
{
	char *s = t_slurp(RP("grandchild"));
	long pid = 0;

	if (s != NULL && sscanf(s, "%ld", &pid) != 1)
		pid = 0;
	free(s);
	return (pid_t)pid;
}

/*
 * Worker a (exec'd handlers, or with persistent, one worker) runs job g,
 * whose first run leaves a grandchild holding the witness; a is killed
 * with SIGKILL; worker b starts at once.  The grandchild must be gone,
 * the witness free, in well under the 4 s lease (its sleep would hold it
 * for 30 s), and b's run (attempt 2, after the lease) must find the
 * witness free: R/overlap records a run that did not.
 */
static pid_t
grandchild_worker(const char *h, bool persistent)
{
	if (persistent)
		return WORKER("--lease", "4s", QUICK, "--persistent", "--", h);
	return WORKER("--lease", "4s", QUICK, "--", h);
}

static void
grandchild_dies_with_its_worker(const char *h, bool persistent)
{
	pid_t a, b, g;

	t_write(RP("witness"), "");
	t_fleet_submit("default", "g", "x");
	a = grandchild_worker(h, persistent);
	WAIT_UNTIL((g = grandchild()) > 0, 20000, "the first run's grandchild");
	EXPECT(!witness_free(), "the grandchild does not hold the witness");
	EXPECT(kill(a, SIGKILL) == 0, "kill -9 the worker");
	b = grandchild_worker(h, persistent);
	t_reap(a, 5000, "killed worker");
	WAIT_UNTIL(witness_free(), 1500, "the witness lock to be freed: the "
	    "killed worker's grandchild (pid %d) still holds it", (int)g);
	WAIT_UNTIL(!t_alive(g), 1000, "the grandchild %d to be gone", (int)g);
	WAIT_UNTIL(t_journal_has("g", 2), 20000, "the second run, after the "
	    "lease");
	await_state("g", "done", 10000);
	EXPECT(!t_exists(RP("overlap")), "a run found the witness held: %s",
	    t_snip(t_slurp(RP("overlap"))));
	EXPECT(t_stop(b) == 0, "worker b stops");
}

/* Its first run forks a grandchild that holds the witness, and blocks. */
static const char h_grandchild[] =
    "exec 9>>\"$R/witness\"\n"
    "flock -n 9 || { echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/overlap\"; exit 1; }\n"
    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
    "[ \"$CHUTE_ATTEMPT\" = 1 ] || exit 0\n"
    "sleep 30 &\n"
    "echo $! >> \"$R/hpids\"; echo $! > \"$R/grandchild\"\n"
    "wait\n";

START_TEST(test_a_killed_worker_s_handler_s_grandchild_dies_with_it)
{
	grandchild_dies_with_its_worker(t_handler("h", h_grandchild), false);
}
END_TEST

/* The same with a persistent worker: its first job's grandchild. */
static const char w_grandchild[] =
    "tab=$(printf '\\t')\n"
    "while IFS=\"$tab\" read -r id path; do\n"
    "  exec 9>>\"$R/witness\"\n"
    "  if ! flock -n 9; then echo \"$id\" >> \"$R/overlap\"; echo fail; continue; fi\n"
    "  if [ -e \"$R/ran.$id\" ]; then\n"
    "    echo \"$id 2 $$\" >> \"$R/journal\"; exec 9>&-; echo ok; continue\n"
    "  fi\n"
    "  : > \"$R/ran.$id\"; echo \"$id 1 $$\" >> \"$R/journal\"\n"
    "  sleep 30 &\n"
    "  echo $! >> \"$R/hpids\"; echo $! > \"$R/grandchild\"\n"
    "  wait\n"
    "done\n";

START_TEST(test_a_killed_persistent_worker_s_grandchild_dies_with_it)
{
	grandchild_dies_with_its_worker(t_handler("w", w_grandchild), true);
}
END_TEST

/* The pid of the reaper whose start worker pid said last; 0 if none. */
static pid_t
reaper_of(pid_t pid)
{
	const char *log = t_log_of(pid), *p, *last = NULL;
	long r = 0;

	for (p = log; (p = strstr(p, "reaper pid=")) != NULL; p++)
		last = p;
	if (last != NULL && sscanf(last, "reaper pid=%ld", &r) != 1)
		r = 0;
	return (pid_t)r;
}

/*
 * Someone kills the reaper while a handler's grandchild runs: the worker
 * starts another and tells it of the running group, so a kill -9 of the
 * worker still takes the grandchild with it.
 */
START_TEST(test_a_killed_reaper_is_replaced_and_knows_the_running_groups)
{
	pid_t a, r, g;

	t_write(RP("witness"), "");
	t_fleet_submit("default", "g", "x");
	a = grandchild_worker(t_handler("h", h_grandchild), false);
	WAIT_UNTIL((g = grandchild()) > 0, 20000, "the first run's grandchild");
	EXPECT((r = reaper_of(a)) > 0 && t_alive(r), "the worker names no "
	    "live reaper: %s", t_log_of(a));
	EXPECT(kill(r, SIGKILL) == 0, "kill -9 the reaper");
	WAIT_UNTIL(strstr(t_log_of(a), "started again") != NULL, 10000,
	    "the worker to start another reaper: %s", t_log_of(a));
	EXPECT(reaper_of(a) != r && t_alive(reaper_of(a)), "no new reaper: %s",
	    t_log_of(a));
	EXPECT(kill(a, SIGKILL) == 0, "kill -9 the worker");
	t_reap(a, 5000, "killed worker");
	WAIT_UNTIL(witness_free(), 1500, "the witness lock to be freed: the "
	    "killed worker's grandchild (pid %d) still holds it", (int)g);
	WAIT_UNTIL(!t_alive(g), 1000, "the grandchild %d to be gone", (int)g);
}
END_TEST

/*
 * A frozen worker must not leave its handlers running (fleet.md, "A
 * frozen worker"): job g's first run leaves a grandchild (sleep 30)
 * holding the witness, and its worker is stopped with SIGSTOP.  Its
 * reaper must kill the handler's group before the lease runs out on the
 * server (its lease_until, still the frozen worker's: no other worker
 * runs yet to recover it); then worker b recovers g and runs it with the
 * witness free.  Thawed, worker a says what happened, records nothing for
 * its killed handler (attempts stay 2, g stays done) and runs a next job.
 * The same with --persistent: the group killed is the persistent
 * worker's, and the thawed owner starts another for the next job.
 */
static const char h_frozen[] =
    "exec 9>>\"$R/witness\"\n"
    "flock -n 9 || { echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/overlap\"; exit 1; }\n"
    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
    "[ \"$CHUTE_ID $CHUTE_ATTEMPT\" = \"g 1\" ] || exit 0\n"
    "sleep 30 &\n"
    "echo $! >> \"$R/hpids\"; echo $! > \"$R/grandchild\"\n"
    "wait\n";

/* The lease_until of job id on the server, in ms since the epoch; 0: none. */
static int64_t
lease_until_ms(const char *id)
{
	char sql[256], out[64] = "";
	long long ms = 0;

	snprintf(sql, sizeof(sql), "SELECT (extract(epoch FROM lease_until) *"
	    " 1000)::bigint FROM chute.live WHERE queue = 'default' AND id ="
	    " '%s' AND state = 'cur'", id);
	if (t_pg_sql(t_uri, sql, out, sizeof(out)) != 0 ||
	    sscanf(out, "%lld", &ms) != 1)
		return 0;
	return ms;
}

static int64_t
real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The same as one persistent worker: g's first run, and the others. */
static const char w_frozen[] =
    "tab=$(printf '\\t')\n"
    "while IFS=\"$tab\" read -r id path; do\n"
    "  exec 9>>\"$R/witness\"\n"
    "  if ! flock -n 9; then echo \"$id\" >> \"$R/overlap\"; echo fail; continue; fi\n"
    "  n=1; [ -e \"$R/ran.$id\" ] && n=2\n"
    "  echo \"$id $n $$\" >> \"$R/journal\"\n"
    "  if [ \"$id $n\" != \"g 1\" ]; then exec 9>&-; echo ok; continue; fi\n"
    "  : > \"$R/ran.$id\"\n"
    "  sleep 30 &\n"
    "  echo $! >> \"$R/hpids\"; echo $! > \"$R/grandchild\"\n"
    "  wait\n"
    "done\n";

static pid_t
frozen_worker(const char *h, bool persistent)
{
	if (persistent)
		return WORKER("--lease", "4s", QUICK, "--persistent", "--", h);
	return WORKER("--lease", "4s", QUICK, "--", h);
}

static void
frozen_worker_s_handlers_die(const char *h, bool persistent)
{
	int64_t freed, until;
	pid_t a, b, g;

	t_write(RP("witness"), "");
	t_fleet_submit("default", "g", "x");
	a = frozen_worker(h, persistent);
	WAIT_UNTIL((g = grandchild()) > 0, 20000, "the first run's grandchild");
	EXPECT(!witness_free(), "the grandchild does not hold the witness");
	EXPECT(kill(a, SIGSTOP) == 0, "SIGSTOP the worker");
	WAIT_UNTIL(witness_free(), 6000, "the witness lock to be freed: the "
	    "frozen worker's grandchild (pid %d) still holds it", (int)g);
	freed = real_ms();
	until = lease_until_ms("g");
	EXPECT(until > 0, "g is no longer the frozen worker's claim: %s",
	    t_pg_error());
	EXPECT(freed < until, "the handler's group outlived the lease: freed "
	    "at %lld, the lease ran out at %lld", (long long)freed,
	    (long long)until);
	WAIT_UNTIL(!t_alive(g), 1000, "the grandchild %d to be gone", (int)g);
	b = frozen_worker(h, persistent);
	WAIT_UNTIL(t_journal_has("g", 2), 20000, "the second run, after the "
	    "lease");
	await_state("g", "done", 10000);
	EXPECT(!t_exists(RP("overlap")), "a run found the witness held: %s",
	    t_snip(t_slurp(RP("overlap"))));
	EXPECT(t_stop(b) == 0, "worker b stops");
	/* Thawed: its handler's death is no outcome, and it goes on. */
	EXPECT(kill(a, SIGCONT) == 0, "SIGCONT");
	WAIT_UNTIL(strstr(t_log_of(a), "past the reaper's deadline") != NULL &&
	    strstr(t_log_of(a), "lease lost") != NULL, 15000, "the thawed "
	    "worker to say what happened: %s", t_log_of(a));
	t_fleet_submit("default", "n", "x");
	await_state("n", "done", 20000);
	EXPECT(strstr(t_log_of(a), "job=n new->cur") != NULL, "the thawed "
	    "worker did not run the next job: %s", t_log_of(a));
	EXPECT(t_stop(a) == 0, "worker a stops");
	EXPECT(CHUTE("status", t_uri, "g") == 0 && t_token(T.out, "done") &&
	    t_token(T.out, "attempts=2"), "the killed run was recorded: %s",
	    T.out);
	EXPECT(!t_exists(RP("overlap")), "a run found the witness held: %s",
	    t_snip(t_slurp(RP("overlap"))));
}

START_TEST(test_a_frozen_worker_s_handlers_die_before_its_lease_runs_out)
{
	frozen_worker_s_handlers_die(t_handler("h", h_frozen), false);
}
END_TEST

/* Its persistent worker's group is the one killed; thawed, it starts another. */
START_TEST(test_a_frozen_worker_s_persistent_worker_dies_before_its_lease)
{
	frozen_worker_s_handlers_die(t_handler("w", w_frozen), true);
}
END_TEST

/* A handler's line: wait for t_release(), 30 s at most. */
#define UNTIL_RELEASED	"i=0; while [ ! -e \"$R/release\" ] && [ $i -lt 600 ];" \
	" do sleep 0.05; i=$((i+1)); done\n"

/*
 * Jobs a, b and c running at once under one worker (-j 3, a 60 s lease),
 * each held until t_release(), then ending 0.  Returns the worker.
 */
static pid_t
three_held(void)
{
	const char *h = t_handler("h", "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >>"
	    " \"$R/journal\"\n" UNTIL_RELEASED "exit 0\n");
	const char *ids[] = { "a", "b", "c" };
	pid_t w;

	for (size_t i = 0; i < 3; i++)
		t_fleet_submit("default", ids[i], "x");
	w = WORKER("-j", "3", "--lease", "60s", "--", h);
	WAIT_UNTIL(t_journal_has("a", 1) && t_journal_has("b", 1) &&
	    t_journal_has("c", 1), 20000, "three runs at once");
	return w;
}

START_TEST(test_a_stopped_worker_s_late_outcome_is_refused)
{
	const char *h = t_handler("h", "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
	    "[ \"$CHUTE_ATTEMPT\" = 1 ] || exit 0\n"
	    UNTIL_RELEASED
	    "exit 1\n");
	pid_t a, b;

	t_fleet_submit("default", "s", "x");
	a = WORKER("--lease", "2s", "--", h);
	WAIT_UNTIL(t_journal_has("s", 1), 20000, "the first run");
	EXPECT(kill(a, SIGSTOP) == 0, "SIGSTOP the worker");
	b = WORKER("--lease", "2s", "--", h);
	WAIT_UNTIL(t_journal_has("s", 2), 15000, "another worker's run after "
	    "the lease");
	await_state("s", "done", 10000);
	/* Its reaper killed the first run past the deadline; thawed, its
	 * worker finds the claim lost, whatever that run would have said. */
	t_release();
	EXPECT(kill(a, SIGCONT) == 0, "SIGCONT");
	WAIT_UNTIL(strstr(t_log_of(a), "refused") != NULL ||
	    strstr(t_log_of(a), "lease lost") != NULL ||
	    strstr(t_log_of(a), "taken away") != NULL, 15000,
	    "the first worker to find its claim gone: %s", t_log_of(a));
	EXPECT(t_stop(a) == 0 && t_stop(b) == 0, "workers stop");
	EXPECT(CHUTE("status", t_uri, "s") == 0 && t_token(T.out, "done"),
	    "the second outcome stands: %s", T.out);
}
END_TEST

/*
 * One batch of outcomes, one of them refused: each row's reply is its
 * place in the arrays, which are sent in the order of their tokens, not
 * the order the jobs ended in.  The refusal must name the job whose
 * claim was taken, and the others must stand.  b's claim is given a new
 * token behind the worker's back (as another worker's claim would);
 * the three handlers end together, once released, so their outcomes go
 * in one statement.
 */
START_TEST(test_a_refusal_in_a_batch_of_outcomes_names_its_own_job)
{
	pid_t w = three_held();

	EXPECT(t_sqln("WITH s AS (UPDATE chute.live SET token ="
	    " nextval('chute.fence') WHERE id = 'b' AND state = 'cur'"
	    " RETURNING 1) SELECT count(*) FROM s") == 1, "b's claim taken");
	t_release();
	await_state("a", "done", 15000);
	await_state("c", "done", 15000);
	WAIT_UNTIL(strstr(t_log_of(w), "job=b outcome") != NULL ||
	    strstr(t_log_of(w), "job=b lease") != NULL, 15000, "b's outcome "
	    "refused: %s", t_log_of(w));
	EXPECT(strstr(t_log_of(w), "job=a outcome") == NULL &&
	    strstr(t_log_of(w), "job=c outcome") == NULL, "no other refusal: %s",
	    t_log_of(w));
	EXPECT(t_stop(w) == 0, "the worker stops");
	EXPECT(CHUTE("status", t_uri, "b") == 0 && t_token(T.out, "cur"),
	    "b's current state stands: %s", T.out);
}
END_TEST

/*
 * A row of chute.finished holding the (queue, id) of a running job (the
 * submitters share the workers' role) made every outcome batch of its
 * worker fail, for good: its jobs stayed cur, renewed forever, while its
 * journal said cur->done.  Now the job's end replaces that row, saying
 * so in its last and in the journal, and the other jobs of the batch are
 * recorded.  And while the server refuses a batch, the journal claims no
 * transition: the cur->done line is said after the commit.
 */
START_TEST(test_a_stray_finished_row_costs_no_batch_and_the_journal_waits)
{
	pid_t w = three_held();

	t_sql("INSERT INTO chute.finished (queue, id, state, size, last)"
	    " VALUES ('default', 'b', 'done', 0, 'planted')");
	t_sql("CREATE FUNCTION refuse_fin() RETURNS trigger LANGUAGE plpgsql"
	    " AS $$BEGIN IF NEW.last <> 'planted' THEN RAISE EXCEPTION"
	    " 'refused by the test' USING ERRCODE = '23514'; END IF;"
	    " RETURN NEW; END$$;"
	    " CREATE TRIGGER refuse_fin BEFORE INSERT OR UPDATE ON chute.finished"
	    " FOR EACH ROW EXECUTE FUNCTION refuse_fin()");
	t_release();
	WAIT_UNTIL(strstr(t_log_of(w), "record outcomes") != NULL, 20000,
	    "the refused batch said: %s", t_log_of(w));
	EXPECT(strstr(t_log_of(w), "cur->done") == NULL && t_sqln("SELECT"
	    " count(*) FROM chute.live WHERE state = 'cur'") == 3,
	    "no transition claimed while none committed: %s", t_log_of(w));
	t_sql("DROP TRIGGER refuse_fin ON chute.finished");
	await_state("a", "done", 15000);
	await_state("c", "done", 15000);
	await_state("b", "done", 15000);
	EXPECT(t_sqln("SELECT count(*) FROM chute.live") == 0, "nothing cur");
	EXPECT(strstr(t_sql("SELECT last FROM chute.finished WHERE id = 'b'"),
	    "exit=0; replaced a stray row") != NULL, "b's last: %s",
	    t_sql("SELECT last FROM chute.finished WHERE id = 'b'"));
	WAIT_UNTIL(strstr(t_log_of(w), "job=b cur->done") != NULL, 5000,
	    "b's line: %s", t_log_of(w));
	EXPECT(strstr(t_log_of(w), "job=a cur->done") != NULL &&
	    strstr(t_log_of(w), "job=c cur->done") != NULL &&
	    strstr(t_log_of(w), "job=b: a stray row") != NULL &&
	    strstr(t_log_of(w), "job=a: a stray") == NULL, "the journal: %s",
	    t_log_of(w));
	EXPECT(t_stop(w) == 0, "the worker stops");
	EXPECT(t_journal_count("b") == 1, "b ran once");
}
END_TEST

/*
 * Rows of chute.logs planted under a running job's ID at the sequence's
 * next values (a role that shares ours may write them): the log of that
 * job's deferral drew one, and the unique violation failed the whole
 * outcome batch, the other job's outcome with it, once per value planted
 * (1,000 here: every few seconds for more than an hour).  The log
 * written replaces the planted row, and both deferrals are recorded.
 */
START_TEST(test_planted_log_rows_ahead_of_the_sequence_cost_no_batch)
{
	const char *h = t_handler("h", "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    UNTIL_RELEASED
	    "echo out; exit 75\n");
	pid_t w;

	t_fleet_submit("default", "a", "x");
	t_fleet_submit("default", "b", "x");
	w = WORKER("-j", "2", "--lease", "60s", "--", h);
	WAIT_UNTIL(t_journal_has("a", 1) && t_journal_has("b", 1), 20000,
	    "two runs at once");
	t_sql("INSERT INTO chute.logs (queue, id, seq, body) SELECT 'default',"
	    " 'b', s, 'planted' FROM generate_series((SELECT last_value FROM"
	    " chute.logs_seq_seq), (SELECT last_value FROM chute.logs_seq_seq)"
	    " + 1000) s ON CONFLICT DO NOTHING");
	t_release();
	await_state("a", "defer", 15000);
	await_state("b", "defer", 15000);
	EXPECT(strstr(t_log_of(w), "record outcomes") == NULL &&
	    strstr(t_log_of(w), "job=a cur->defer") != NULL &&
	    strstr(t_log_of(w), "job=b cur->defer") != NULL, "the journal: %s",
	    t_log_of(w));
	EXPECT(t_stop(w) == 0, "the worker stops");
}
END_TEST

/*
 * A cancel's notification named its job "cancel QUEUE ID": the cancel of
 * job y of queue "a b" read, to a worker of queue a, as the cancel of
 * its job "b y", which it killed.  The payload now splits one way only.
 * The worker of a hears a submit to a after the cancel's notification
 * (delivered in commit order): once it runs z, it has read the cancel.
 */
START_TEST(test_a_cancel_in_a_queue_with_a_space_stops_no_other_job)
{
	pid_t wa, wab, hy, hby;

	t_fleet_submit("a", "b y", "x");
	t_fleet_submit("a b", "y", "x");
	wa = WORKER("--queue", "a", "-j", "2", "--", h_block());
	wab = WORKER("--queue", "a b", "--", h_block());
	WAIT_UNTIL((hy = t_handler_pid("y")) > 0 &&
	    (hby = t_handler_pid("b y")) > 0, 20000, "both handlers to start");
	EXPECT(CHUTE("cancel", t_uri, "--queue", "a b", "y") == 0 &&
	    strcmp(T.out, "y cur->failed\n") == 0, "cancel: %s%s", T.out, T.err);
	WAIT_UNTIL(!t_alive(hy), 10000, "y's handler to be stopped");
	t_fleet_submit("a", "z", "x");
	WAIT_UNTIL(t_handler_pid("z") > 0, 20000, "z to start in a");
	EXPECT(t_alive(hby) && strstr(t_log_of(wa), "cancel") == NULL,
	    "b y of queue a runs on: %s", t_log_of(wa));
	EXPECT(CHUTE("status", t_uri, "--queue", "a", "b y") == 0 &&
	    t_token(T.out, "cur"), "b y: %s%s", T.out, T.err);
	t_release();
	await_state("b y", "done", 15000);
	EXPECT(t_stop(wa) == 0 && t_stop(wab) == 0, "the workers stop");
}
END_TEST

/*
 * Out is one process's stderr that carried the server's text: escaped
 * (ESC and CR as \033 and \r), the text's own newline folded, so that
 * no line of it starts with the line it tried to forge.
 */
static bool
escaped_server_text(const char *out)
{
	return strstr(out, "evil \\033[2J\\r 2026-01-01T00:00:00.000Z "
	    "job=forged cur->done") != NULL && strpbrk(out, "\033\r") == NULL &&
	    strstr(out, "\n2026-01-01") == NULL;
}

/*
 * A WARNING or an ERROR raised by the server (here a trigger on
 * chute.live and a view chute.jobs made again, as anyone sharing the
 * workers' role may) reached the terminal as it came: libpq's notice
 * processor printed it raw, and only newlines were folded in errors.
 * Now every text from the server is escaped, on the stderr of status, ls
 * and cancel, and in a worker's journal.
 */
START_TEST(test_server_warnings_and_errors_come_out_escaped)
{
	static const char *const cmds[][5] = {
		{ "status", "s1" }, { "ls", "new" }, { "cancel", "s1" },
	};
	pid_t w;

	t_fleet_submit("default", "s1", "x");
	t_fleet_submit("default", "s2", "x");
	t_sql("CREATE TABLE public.mode (m text); INSERT INTO public.mode"
	    " VALUES ('warn');"
	    " CREATE FUNCTION public.evil() RETURNS boolean LANGUAGE plpgsql"
	    " AS $$DECLARE t text := E'evil \\x1b[2J\\r\\n2026-01-01T00:00:00.000Z"
	    " job=forged cur->done'; BEGIN IF (SELECT m FROM public.mode) ="
	    " 'error' THEN RAISE EXCEPTION '%', t; END IF; RAISE WARNING '%', t;"
	    " RETURN true; END$$;"
	    " CREATE FUNCTION public.evil_t() RETURNS trigger LANGUAGE plpgsql"
	    " AS $$BEGIN PERFORM public.evil(); RETURN coalesce(NEW, OLD);"
	    " END$$;"
	    " CREATE TRIGGER evil BEFORE UPDATE OR DELETE ON chute.live"
	    " FOR EACH ROW EXECUTE FUNCTION public.evil_t();"
	    " CREATE OR REPLACE VIEW chute.jobs AS SELECT queue, id, state,"
	    " run_at, attempts, last, token, worker, lease_until, cancel, size,"
	    " created, claimed, priority, key FROM chute.live WHERE public.evil()"
	    " UNION ALL SELECT queue, id, state, run_at, attempts, last,"
	    " NULL::bigint, NULL::text, NULL::timestamptz, false, size, created,"
	    " claimed, priority, key FROM chute.finished WHERE public.evil()");
	for (size_t i = 0; i < 3; i++) {
		CHUTE(cmds[i][0], t_uri, cmds[i][1]);
		EXPECT(strstr(T.err, "WARNING") && escaped_server_text(T.err),
		    "%s, a WARNING: %s", cmds[i][0], T.err);
	}
	w = WORKER("--drain", "--", h_journal());
	EXPECT(t_reap(w, 30000, "drain") == 0 && t_journal_has("s2", 1),
	    "the worker drains: %s", t_log_of(w));
	EXPECT(strstr(t_log_of(w), "WARNING") &&
	    escaped_server_text(t_log_of(w)), "the journal, a WARNING: %s",
	    t_log_of(w));
	t_sql("UPDATE public.mode SET m = 'error'");
	t_fleet_submit("default", "s3", "x");
	for (size_t i = 0; i < 3; i++) {
		EXPECT(CHUTE(cmds[i][0], t_uri, i == 2 ? "s3" : cmds[i][1]) != 0
		    && strstr(T.err, "ERROR") && escaped_server_text(T.err) &&
		    t_nlines(T.err) == 1, "%s, an ERROR: %s", cmds[i][0], T.err);
	}
	w = WORKER("--", h_journal());
	WAIT_UNTIL(strstr(t_log_of(w), "ERROR") != NULL, 20000, "the worker's "
	    "claim refused: %s", t_log_of(w));
	EXPECT(t_stop(w) == 0, "the worker stops");
	EXPECT(escaped_server_text(t_log_of(w)), "the journal, an ERROR: %s",
	    t_log_of(w));
}
END_TEST

/*
 * A server that stops answering on a live connection (its session and its
 * postmaster stopped: no reset, no error, no timeout on the server's side)
 * must not hold the worker's loop past its lease: its own deadline drops
 * the connection and bounds the connects that follow, and its handler is
 * stopped before the lease runs out, so the run after recovery is never
 * concurrent with it.  The worker itself goes on once the server is back.
 */
START_TEST(test_a_hung_server_cannot_hold_a_worker_past_its_lease)
{
	char q[512];
	pid_t a, h1, backend, pm = t_pg_postmaster();
	int64_t until;

	snprintf(q, sizeof(q), "SELECT pid FROM pg_stat_activity WHERE "
	    "application_name = 'chute-worker' AND datname = '%s'",
	    t_pg_dbname(t_uri));
	t_fleet_submit("default", "hung", "x");
	a = WORKER("--lease", "3s", "--", h_block());
	WAIT_UNTIL((h1 = t_handler_pid("hung")) > 0, 20000, "the first run");
	WAIT_UNTIL((backend = (pid_t)t_sqln(q)) > 0, 10000, "the worker's session");
	EXPECT(pm > 0 && kill(pm, SIGSTOP) == 0 && kill(backend, SIGSTOP) == 0,
	    "SIGSTOP the postmaster and the worker's session");
	/* Not WAIT_UNTIL: the server must be resumed whatever happens. */
	for (until = t_mono() + 20000; t_alive(h1) && t_mono() < until; )
		t_nap();
	kill(backend, SIGCONT);
	kill(pm, SIGCONT);
	EXPECT(!t_alive(h1), "the worker to stop its handler when it cannot "
	    "renew: %s", t_log_of(a));
	EXPECT(strstr(t_log_of(a), "no reply in time") != NULL, "the worker "
	    "says why it dropped the connection: %s", t_log_of(a));
	WAIT_UNTIL(t_journal_has("hung", 2), 30000, "the run after recovery: "
	    "%s", t_log_of(a));
	t_release();
	await_state("hung", "done", 15000);
	EXPECT(CHUTE("status", t_uri, "hung") == 0 && t_token(T.out,
	    "attempts=2"), "both attempts counted: %s", T.out);
	EXPECT(t_stop(a) == 0, "the worker is still there and stops");
}
END_TEST

START_TEST(test_server_restarts_and_killed_connections_lose_nothing)
{
	pid_t w[2];

	submit_many(300);
	for (int i = 0; i < 2; i++)
		w[i] = WORKER("-j", "2", "--lease", "3s", QUICK, "--", h_witness());
	WAIT_UNTIL(t_journal_total() >= 30, 30000, "work under way");
	t_pg_restart_immediate();
	WAIT_UNTIL(t_journal_total() >= 120, 60000, "work after the restart");
	EXPECT(t_pg_kill_backends(t_pg_dbname(t_uri), "chute-worker") >= 1,
	    "terminate the workers' connections");
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.jobs WHERE state = 'done'")
	    == 300, 120000, "every job done");
	for (int i = 0; i < 2; i++) {
		EXPECT(t_alive(w[i]), "worker %d still runs", i);
		EXPECT(t_stop(w[i]) == 0, "worker %d stops", i);
	}
	{
		char *j = t_slurp(RP("journal"));
		EXPECT(j && strstr(j, "CONCURRENT") == NULL, "never twice at once");
		EXPECT(t_nlines(j) >= 300, "every job ran");
		free(j);
	}
}
END_TEST

START_TEST(test_a_worker_started_while_the_database_is_down_waits_for_it)
{
	pid_t w;

	t_fleet_submit("default", "late", "x");
	t_pg_down();
	w = WORKER("--", h_journal());
	WAIT_UNTIL(strstr(t_log_of(w), "retrying") != NULL, 10000,
	    "the worker to say it retries: %s", t_log_of(w));
	EXPECT(t_alive(w), "it waits; it does not exit");
	t_pg_up();
	WAIT_UNTIL(t_journal_has("late", 1), 20000, "the job, once the server "
	    "is back");
	EXPECT(t_stop(w) == 0, "worker stops");
	/* Unreachable: submit exits 75 with one line and prints no ID. */
	t_pg_down();
	t_write(RP("in"), "x");
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri) == 75 && T.out[0] == '\0' &&
	    t_nlines(T.err) == 1, "submit to a stopped server: %d %s %s",
	    75, T.out, T.err);
	t_pg_up();
}
END_TEST

/* ---- hostile ---- */

START_TEST(test_bad_uris_and_bad_passwords_are_refused_without_the_password)
{
	const char *pw;

	EXPECT(CHUTE("status", "postgresql://[::1", "x") == 64, "malformed URI: "
	    "64, %s", T.err);
	/* libpq quotes a URI it cannot parse, or the token it cannot decode. */
	EXPECT(CHUTE("status", "postgresql://app:S3cretPW@[::1/db", "x") == 64 &&
	    strstr(T.err, "S3cretPW") == NULL && t_nlines(T.err) == 1,
	    "malformed, with a password: 64, not printed: %s", T.err);
	EXPECT(CHUTE("status", "postgresql://app:S3cr%zzetPW@localhost/db", "x")
	    == 64 && strstr(T.err, "S3cr") == NULL && strstr(T.err, "etPW") ==
	    NULL && t_nlines(T.err) == 1, "a bad %%-escape in the password: 64, "
	    "not printed: %s", T.err);
	EXPECT(CHUTE("status", "postgresql://app@localhost/db?password=S3cr%zz",
	    "x") == 64 && strstr(T.err, "S3cr") == NULL, "a bad %%-escape in "
	    "password=: %s", T.err);
	EXPECT(CHUTE("run", "postgresql://app:S3c/retPW@localhost/db", "--",
	    "true") == 64 && strstr(T.err, "S3c") == NULL && strstr(T.err,
	    "retPW") == NULL && strstr(T.err, "%2F"), "a password libpq would "
	    "split at its '/': refused, not printed: %s", T.err);
	EXPECT(CHUTE("init", t_uri, "postgresql://app:S3cretPW@h/db") == 64 &&
	    strstr(T.err, "S3cretPW") == NULL, "a second URI is refused, not "
	    "echoed: %s", T.err);
	EXPECT(CHUTE("run", t_uri, "--prefetch", "-1", "--", "true") == 64 &&
	    strncmp(T.err, "chute: run: --prefetch -1: ", 27) == 0,
	    "a bad --prefetch: 64, a line naming it: %s", T.err);
	EXPECT(CHUTE("pause", t_uri, "--queue", "q\nchute: forged") == 64 &&
	    t_nlines(T.err) == 1 && strstr(T.err, "--queue q\\nchute:"),
	    "a queue name with a newline: 64, one line, escaped: %s", T.err);
	EXPECT(CHUTE("run", t_uri, "--lease", "10ms", "--", "true") == 64,
	    "a lease too short: 64, %s", T.err);
	EXPECT(CHUTE("status", "postgresql:///db?host=/nonexistent/dir&"
	    "password=hunter2", "x") == 75 && strstr(T.err, "hunter2") == NULL &&
	    t_nlines(T.err) == 1, "unreachable: 75, one line, no password: %s",
	    T.err);
	t_sql("GRANT USAGE ON SCHEMA chute TO chute_pw;"
	    " GRANT ALL ON ALL TABLES IN SCHEMA chute TO chute_pw;"
	    " GRANT ALL ON ALL SEQUENCES IN SCHEMA chute TO chute_pw");
	pw = t_pg_uri_as(t_pg_dbname(t_uri), "chute_pw", "wrong-secret");
	EXPECT(CHUTE("status", pw, "x") == 77 && strstr(T.err, "wrong-secret") ==
	    NULL, "wrong password: 77 and not printed: %s", T.err);
	pw = t_pg_uri_as(t_pg_dbname(t_uri), "chute_pw", "secret");
	t_write(RP("in"), "x");
	EXPECT(CHUTE_IN(RP("in"), "submit", pw, "--id", "p") == 0, "submit with "
	    "the password: %s", T.err);
	{
		const char *h = t_handler("h", "echo \"$CHUTE_SPOOL\" > \"$R/spoolvar\"\n"
		    "tr '\\0' ' ' < /proc/$PPID/cmdline > \"$R/cmdline\"\n");
		char *v, *c;

		EXPECT(t_reap(WORKER("--drain", "--", h), 30000, "drain") == 0,
		    "drain");
		(void)pw;
		v = t_slurp(RP("spoolvar"));
		c = t_slurp(RP("cmdline"));
		EXPECT(v && strstr(v, "secret") == NULL && strstr(v, "postgresql://"),
		    "CHUTE_SPOOL without the password: %s", t_snip(v));
		EXPECT(c && strstr(c, "secret") == NULL, "the worker's title "
		    "without the password: %s", t_snip(c));
		free(v);
		free(c);
	}
}
END_TEST

/* n jobs of queue default in state (run_at: now + in_s), IDs PREFIX.N. */
static void
bulk_jobs(const char *prefix, int n, const char *state, int in_s)
{
	t_sql(P("WITH j AS (INSERT INTO chute.live (queue, id, state, run_at, size)"
	    " SELECT 'default', '%s.' || i, '%s', now() + %d * interval '1 s', 1"
	    " FROM generate_series(1, %d) i RETURNING id)"
	    " INSERT INTO chute.payloads (queue, id, body)"
	    " SELECT 'default', id, 'x' FROM j", prefix, state, in_s, n));
}

/*
 * Does pid's title say "queued=N+ deferred=2" with 10,000 <= N < limit?
 * One read for all of it: setproctitle clears the title before writing
 * the new one, so a read can come between and find it empty.
 */
static bool
title_capped(pid_t pid, long limit, char *seen, size_t len)
{
	const char *q;
	char *end;
	long n;

	snprintf(seen, len, "%s", t_title(pid));
	if ((q = strstr(seen, "queued=")) == NULL)
		return false;
	n = strtol(q + 7, &end, 10);
	return n >= 10000 && n < limit && strncmp(end, "+ deferred=2", 12) == 0;
}

/*
 * A worker's title counts the jobs waiting in the database (and those it
 * claimed ahead) exactly, up to 10,000 of each kind; past that it says
 * "at least" with a '+', and counting a deep queue stays cheap.
 */
START_TEST(test_a_worker_s_title_counts_the_queue_and_caps_a_deep_one)
{
	char seen[512];
	pid_t w;

	bulk_jobs("due", 3, "new", 0);
	bulk_jobs("later", 2, "defer", 3600);
	w = WORKER(QUICK, "--lease", "3s", "-j", "1", "--", h_block());
	WAIT_UNTIL(strstr(t_title(w), "running=1 queued=2 deferred=2") != NULL,
	    10000, "title: %s", t_title(w));
	bulk_jobs("deep", 10100, "new", 0);
	/* Counted again at the next renewal, a third of the lease. */
	WAIT_UNTIL(title_capped(w, 10100, seen, sizeof seen), 10000,
	    "10,100 more: the title should say queued=N+ with 10,000 <= N <"
	    " 10,100, and deferred=2: %s", seen);
	EXPECT(t_stop(w) == 0, "worker stops cleanly");
}
END_TEST

/* Every insert into chute.live fails with SQLSTATE code, from the server. */
static void
refuse_inserts(const char *code)
{
	t_sql(P("DROP TRIGGER IF EXISTS refuse ON chute.live;"
	    " CREATE OR REPLACE FUNCTION refuse() RETURNS trigger LANGUAGE"
	    " plpgsql AS $$BEGIN RAISE EXCEPTION 'refused by the test'"
	    " USING ERRCODE = TG_ARGV[0]; END$$;"
	    " CREATE TRIGGER refuse BEFORE INSERT ON chute.live FOR EACH ROW"
	    " EXECUTE FUNCTION refuse('%s')", code));
}

/*
 * A statement that fails for a passing reason while the connection stays
 * up (a deadlock, the server shutting down, out of resources) is 75, try
 * again; a lasting one (a constraint) is 74.  Neither prints an ID.
 */
START_TEST(test_a_passing_server_error_is_75_and_a_lasting_one_74)
{
	static const char *const passing[] = { "40P01", "57P01", "53200" };

	t_write(RP("in"), "x");
	for (size_t i = 0; i < sizeof(passing) / sizeof(passing[0]); i++) {
		refuse_inserts(passing[i]);
		EXPECT(CHUTE_IN(RP("in"), "submit", t_uri) == 75 &&
		    T.out[0] == '\0' && t_nlines(T.err) == 1 &&
		    strstr(T.err, "refused by the test"), "%s: 75, one line, "
		    "no ID: %s%s", passing[i], T.out, T.err);
	}
	refuse_inserts("23514");
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri) == 74 && T.out[0] == '\0',
	    "a check violation: 74: %s%s", T.out, T.err);
	t_sql("DROP TRIGGER refuse ON chute.live");
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri) == 0 && T.out[0] != '\0',
	    "then accepted: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 1, "one job");
}
END_TEST

/* How many times needle occurs in s (NULL: none). */
static int
occurs(const char *s, const char *needle)
{
	int n = 0;

	while (s != NULL && (s = strstr(s, needle)) != NULL) {
		n++;
		s += strlen(needle);
	}
	return n;
}

/*
 * The server refuses a batch of outcomes (here: every log insert, for a
 * while): the worker says so, keeps the outcome, and sends it again after
 * a pause, not in a loop; then it is recorded, and the job ran once.
 */
START_TEST(test_a_refused_outcome_batch_is_kept_and_sent_again)
{
	pid_t w;
	int said;

	t_sql("CREATE FUNCTION refuse_log() RETURNS trigger LANGUAGE plpgsql"
	    " AS $$BEGIN RAISE EXCEPTION 'log refused by the test'"
	    " USING ERRCODE = '23514'; END$$;"
	    " CREATE TRIGGER refuse_log BEFORE INSERT ON chute.finished"
	    " FOR EACH ROW EXECUTE FUNCTION refuse_log()");
	t_fleet_submit("default", "o", "x");
	w = WORKER("--drain", "--", h_journal());
	WAIT_UNTIL(strstr(t_log_of(w), "record outcomes") != NULL, 20000,
	    "the refusal said: %s", t_log_of(w));
	t_sql("DROP TRIGGER refuse_log ON chute.finished");
	EXPECT(t_reap(w, 30000, "drain") == 0, "the worker drains: %s",
	    t_log_of(w));
	said = occurs(t_log_of(w), "record outcomes");
	EXPECT(said >= 1 && said <= 2, "said %d times, not once per turn: %s",
	    said, t_log_of(w));
	EXPECT(t_journal_count("o") == 1, "ran once");
	EXPECT(CHUTE("status", t_uri, "o") == 0 && t_token(T.out, "done"),
	    "recorded done: %s", T.out);
}
END_TEST

START_TEST(test_an_oversized_job_is_refused_and_a_flooding_log_is_capped)
{
	int fd = open(RP("big"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *h;

	EXPECT(fd != -1 && ftruncate(fd, (64LL << 20) + 1) == 0, "sparse file");
	close(fd);
	EXPECT(CHUTE("submit", t_uri, RP("big")) == 66 && strstr(T.err, "64 MiB")
	    && T.out[0] == '\0', "oversized: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 0, "nothing inserted");
	t_fleet_submit("default", "flood", "x");
	h = t_handler("h", "head -c 3000000 /dev/zero | tr '\\0' 'y'\n");
	EXPECT(t_reap(WORKER("--drain", "--", h), 30000, "drain") == 0, "drain");
	EXPECT(t_sqln("SELECT sum(length(body)) FROM chute.job_logs WHERE id = 'flood'")
	    < (2 << 20), "the log is capped");
	/* The marker ends the kept part, beyond what T.out holds: ask psql. */
	EXPECT(t_sqln("SELECT count(*) FROM chute.job_logs WHERE id = 'flood' AND"
	    " position(convert_to('@chute log truncated', 'UTF8') IN body) > 0")
	    == 1, "with a marker");
	EXPECT(CHUTE("log", t_uri, "flood") == 0 && strncmp(T.out, "@chute ", 7) ==
	    0, "chute log prints it: %.40s", T.out);
}
END_TEST


/* ---- hostile rows ---- */

/*
 * Rows no submit can make (the schema's jobs_id_valid forbids them; the
 * test drops it, as any submitter sharing the workers' role could): IDs
 * that are paths, or hidden, or hold a newline.  Each is failed with a
 * reason in last and in its log; the file an ID names is never touched;
 * the good job beside them runs.
 */
START_TEST(test_a_row_whose_id_is_a_path_is_failed_and_never_touched_on_disk)
{
	const char *h = t_handler("h", "cat > /dev/null; echo \"$CHUTE_JOB\" >> \"$R/ran\"\n");
	char *v;
	pid_t w;
	int rc;

	EXPECT(mkdir(RP("x"), 0700) == 0, "mkdir x");
	t_write(RP("x/victim"), "precious\n");
	t_write(RP("x/victim2"), "precious\n");
	t_sql("ALTER TABLE chute.live DROP CONSTRAINT IF EXISTS jobs_id_valid");
	t_sql(P("WITH j AS (INSERT INTO chute.live (queue, id, state, size)"
	    " VALUES ('default', '%s', 'new', 1), ('default', '/../../%s', 'new', 1),"
	    " ('default', '.hidden', 'new', 1), ('default', E'a\\nb', 'new', 1),"
	    " ('default', 'good', 'new', 1) RETURNING id)"
	    " INSERT INTO chute.payloads (queue, id, body) SELECT 'default', id,"
	    " 'overwritten' FROM j", RP("x/victim"), RP("x/victim2")));
	w = WORKER("--drain", "--", h);
	/* The victims first: the old code did its harm, then hung. */
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.jobs WHERE state IN"
	    " ('new', 'cur')") == 0 || !t_alive(w), 30000, "the rows left new "
	    "and cur");
	v = t_slurp(RP("x/victim"));
	EXPECT(v && strcmp(v, "precious\n") == 0, "victim: %s", t_snip(v));
	free(v);
	v = t_slurp(RP("x/victim2"));
	EXPECT(v && strcmp(v, "precious\n") == 0, "victim2: %s", t_snip(v));
	free(v);
	EXPECT((rc = t_reap(w, 30000, "drain")) == 0, "drain: %d: %s", rc,
	    t_log_of(w));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE id <> 'good' AND"
	    " state = 'failed' AND last LIKE 'refused: its ID is not a valid job ID%'")
	    == 4, "the four failed with a reason: %s", t_sql("SELECT string_agg("
	    "state || ' ' || last, '; ') FROM chute.jobs"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.logs WHERE id <> 'good' AND"
	    " position(convert_to('refused: its ID', 'UTF8') IN body) > 0") == 4,
	    "a line in each one's log");
	EXPECT(strcmp(t_sql("SELECT state FROM chute.jobs WHERE id = 'good'"),
	    "done") == 0, "the good job ran");
	v = t_slurp(RP("ran"));
	EXPECT(v && t_nlines(v) == 1, "one handler ran: %s", t_snip(v));
	free(v);
}
END_TEST

/*
 * The claim picks rows of chute.jobs by ctid, and 200 tables inheriting it
 * each have a row at the same ctid: one claim of one job comes back with
 * 200 rows, which went past the worker's look-ahead array (a segfault).
 * Only what was asked for is taken, the rest handed back, and every job
 * runs once.
 */
START_TEST(test_a_claim_reply_of_more_rows_than_asked_is_bounded)
{
	const char *h = t_handler("h", "cat > /dev/null; echo \"$CHUTE_JOB\" >> \"$R/ran\"\n");
	char *v;
	pid_t w;
	int rc;

	t_sql("DO $$ BEGIN FOR i IN 1..200 LOOP"
	    " EXECUTE format('CREATE TABLE chute.jobs_%s () INHERITS (chute.live)', i);"
	    " EXECUTE format('INSERT INTO chute.jobs_%s (queue, id, state, size)"
	    " VALUES (''default'', ''inh.%s'', ''new'', 1)', i, i);"
	    " END LOOP; END $$;"
	    " INSERT INTO chute.payloads (queue, id, body)"
	    " SELECT 'default', 'inh.' || i, 'x' FROM generate_series(1, 200) i");
	w = WORKER("-j", "1", "--prefetch", "0", "--drain", "--", h);
	rc = t_reap(w, 120000, "drain");
	EXPECT(rc == 0, "drain: %d: %s", rc, t_log_of(w));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE state = 'done'") ==
	    200, "all done: %s", t_sql("SELECT string_agg(DISTINCT state, ',')"
	    " FROM chute.jobs"));
	v = t_slurp(RP("ran"));
	EXPECT(v && t_nlines(v) == 200, "200 runs: %d", v ? t_nlines(v) : -1);
	free(v);
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE attempts <> 1") == 0,
	    "each counted once");
}
END_TEST

/*
 * A fresh database holding the schema as version 3 made it
 * (tests/data/schema-v3.sql: pg_dump of what `chute init` made before
 * version 4), with a job waiting and one claimed by a worker of then; it
 * becomes the test's t_uri.
 */
static void
v3_database(void)
{
	const char *src = getenv("CHUTE_SRCDIR");
	char *sql = t_slurp(P("%s/tests/data/schema-v3.sql", src ? src : "."));

	EXPECT(sql != NULL, "tests/data/schema-v3.sql: not found (run from the "
	    "top of the tree, or set CHUTE_SRCDIR)");
	free(t_uri);
	t_uri = t_pg_newdb();
	EXPECT(t_pg_sql(t_uri, sql, NULL, 0) == 0, "loading version 3: %s",
	    t_pg_error());
	free(sql);
	t_sql("INSERT INTO chute.jobs (queue, id, state, size) VALUES"
	    " ('default', 'w', 'new', 2);"
	    " INSERT INTO chute.jobs (queue, id, state, size, attempts, token,"
	    " worker, lease_until) VALUES ('default', 'c', 'cur', 2, 1,"
	    " nextval('chute.fence'), 'old:1', now() - interval '1 minute');"
	    " INSERT INTO chute.payloads VALUES ('default', 'w', 'w\n'),"
	    " ('default', 'c', 'c\n')");
}

/*
 * The upgrade from version 2 (the schema without jobs_id_valid) fails the
 * waiting and running jobs whose IDs it forbids, keeps finished ones, and
 * adds the constraint NOT VALID while any remain; validated where none do.
 * Version 5 then moves the finished ones, bad IDs and all, to
 * chute.finished, whose own check is NOT VALID for the same reason.
 */
START_TEST(test_the_upgrade_to_version_3_fails_bad_ids_and_adds_the_check)
{
	EXPECT(strcmp(t_sql("SELECT convalidated FROM pg_constraint WHERE"
	    " conname = 'jobs_id_valid'"), "t") == 0, "a fresh schema: validated");
	v3_database();
	t_sql("ALTER TABLE chute.jobs DROP CONSTRAINT jobs_id_valid;"
	    " UPDATE chute.version SET version = 2");
	t_sql("INSERT INTO chute.jobs (queue, id, state, size, token) VALUES"
	    " ('default', '../n', 'new', 1, NULL), ('default', E'd\\x1b[2J', 'defer', 1, NULL),"
	    " ('default', '/c', 'cur', 1, 7), ('default', '.done', 'done', 1, NULL),"
	    " ('default', 'fine', 'new', 1, NULL)");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(upgraded)"),
	    "init: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT version FROM chute.version") == 13,
	    "the current version");
	EXPECT(t_sqln("SELECT count(*) FROM chute.finished WHERE state = 'failed'"
	    " AND last LIKE 'refused: %'") == 3, "three failed: %s",
	    t_sql("SELECT string_agg(id || ' ' || state, '; ') FROM chute.jobs"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.logs") == 3, "with a log line each");
	EXPECT(strcmp(t_sql("SELECT state FROM chute.finished WHERE id = '.done'"),
	    "done") == 0 && strcmp(t_sql("SELECT state FROM chute.live WHERE"
	    " id = 'fine'"), "new") == 0, "the finished and the good stay");
	EXPECT(strcmp(t_sql("SELECT convalidated FROM pg_constraint WHERE"
	    " conname = 'jobs_id_valid'"), "f") == 0, "NOT VALID: one remained");
	EXPECT(t_pg_sql(t_uri, "INSERT INTO chute.live (queue, id, state, size)"
	    " VALUES ('default', 'a/b', 'new', 1)", NULL, 0) == 1, "a bad insert "
	    "is refused now");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(already)"),
	    "init again: %s%s", T.out, T.err);
	v3_database();
	t_sql("ALTER TABLE chute.jobs DROP CONSTRAINT jobs_id_valid;"
	    " UPDATE chute.version SET version = 2;"
	    " INSERT INTO chute.jobs (queue, id, state, size) VALUES"
	    " ('default', 'over', 'done', 1)");
	EXPECT(CHUTE("init", t_uri) == 0, "init: %s", T.err);
	EXPECT(strcmp(t_sql("SELECT convalidated FROM pg_constraint WHERE"
	    " conname = 'jobs_id_valid'"), "t") == 0, "none left: validated");
}
END_TEST

/*
 * `chute init URL` upgrades a database of version 3, as the code before
 * version 4 made it, in place: the tables of version 4 are added, the
 * jobs stay and run.  Every other command refuses version 3 until then.
 * A version 2 database (version 3 without its constraint) goes to 4 in
 * one init too.
 */
START_TEST(test_init_upgrades_version_3_and_2_to_4_and_keeps_the_jobs)
{
	v3_database();
	EXPECT(CHUTE("stats", t_uri) == 78 && strstr(T.err, "schema version 3"),
	    "stats on version 3: %s", T.err);
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "schema version 13 "
	    "(upgraded)"), "init: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT version FROM chute.version") == 13 &&
	    t_sqln("SELECT count(*) FROM chute.version") == 1, "version 4");
	EXPECT(t_sqln("SELECT count(*) FROM chute.workers") == 0 &&
	    t_sqln("SELECT count(*) FROM chute.queues") == 0, "the new tables");
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(t_journal_has("w", 1) && t_journal_has("c", 2), "both ran");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(already)"),
	    "init again: %s%s", T.out, T.err);

	v3_database();
	t_sql("ALTER TABLE chute.jobs DROP CONSTRAINT jobs_id_valid;"
	    " UPDATE chute.version SET version = 2");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(upgraded)"),
	    "init of version 2: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT version FROM chute.version") == 13 &&
	    t_sqln("SELECT count(*) FROM pg_constraint WHERE"
	    " conname = 'jobs_id_valid' AND convalidated") == 1 &&
	    strcmp(t_sql("SELECT to_regclass('chute.queues') IS NOT NULL AND"
	    " to_regclass('chute.workers') IS NOT NULL"), "t") == 0,
	    "version 4, the check validated, the new tables there");
}

/* A new database (t_uri) holding tests/data/schema-vN.sql. */
static void
load_release(int version)
{
	const char *src = getenv("CHUTE_SRCDIR");
	char *sql = t_slurp(P("%s/tests/data/schema-v%d.sql", src ? src : ".",
	    version));

	EXPECT(sql != NULL, "tests/data/schema-v%d.sql: not found", version);
	free(t_uri);
	t_uri = t_pg_newdb();
	EXPECT(t_pg_sql(t_uri, sql, NULL, 0) == 0, "loading version %d: %s",
	    version, t_pg_error());
	free(sql);
}

/*
 * A database that chute of schema version N made and used, as dumped in
 * tests/data/schema-vN.sql (jobs in every state with their logs, a job
 * forwarded from a spool, a claim whose worker was killed), upgraded by
 * `chute init URL` in place, in one run: the finished jobs move to
 * chute.finished, where a forwarded job came from to its payload, and
 * every command reads and acts on them as before; names compare as
 * bytes (version 6); the job tables' times have their checks (version
 * 7).  A second init changes nothing.  workers: the rows
 * of chute.workers the dump holds; logs: of chute.logs once upgraded
 * (version 5 keeps a finished job's last log in its row).
 */
static void
upgrade_and_drive(int version, const char *spool, int workers, int logs)
{
	static const char *const want[][2] = { { "n1", "n1 done attempts=1"
	    " exit=0" }, { "ok1", "ok1 done attempts=1 exit=0" }, { "bad1",
	    "bad1 failed attempts=1 exit=1" }, { "d1", "d1 defer attempts=0" },
	    { "c1", "c1 cur attempts=1" }, { "fw2", "fw2 new attempts=0" } };

	load_release(version);
	EXPECT(CHUTE("status", t_uri, "n1") == 78 && strstr(T.err,
	    P("schema version %d", version)), "status on version %d: %s",
	    version, T.err);
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "schema version 13 "
	    "(upgraded)"), "init: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.finished") == 3 &&
	    t_sqln("SELECT count(*) FROM chute.live") == 3 &&
	    t_sqln("SELECT count(*) FROM chute.workers") == workers &&
	    t_sqln("SELECT count(*) FROM chute.logs") == logs, "rows: %s",
	    t_sql("SELECT string_agg(id || ' ' || state, ', ') FROM chute.jobs"));
	EXPECT(t_sqln("SELECT count(*) FROM pg_attribute WHERE attrelid IN"
	    " ('chute.live'::regclass, 'chute.finished'::regclass,"
	    " 'chute.payloads'::regclass, 'chute.logs'::regclass) AND attname"
	    " IN ('queue', 'id') AND attcollation = 'pg_catalog.\"C\"'::"
	    "regcollation") == 8, "queue and id compare as bytes");
	EXPECT(t_sqln("SELECT count(*) FROM pg_constraint WHERE conname IN"
	    " ('live_times_finite', 'finished_times_finite') AND convalidated")
	    == 2, "the times' checks, validated");
	/* Version 8: every job of before at priority 0, without a key. */
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE priority = 0 AND"
	    " key IS NULL") == 6 && t_sqln("SELECT count(*) FROM chute.live"
	    " WHERE parked") == 0, "priorities and keys: %s", t_sql("SELECT"
	    " string_agg(id || ' ' || priority || ' ' || coalesce(key, '-'),"
	    " ', ') FROM chute.jobs"));
	EXPECT(CHUTE("limit", t_uri) == 0 && strcmp(T.out, "no limits, no keys"
	    " in use\n") == 0, "limit: %s%s", T.out, T.err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		EXPECT(CHUTE("status", t_uri, want[i][0]) == 0 &&
		    strncmp(T.out, want[i][1], strlen(want[i][1])) == 0,
		    "status %s: %s%s", want[i][0], T.out, T.err);
	EXPECT(CHUTE("log", t_uri, "ok1") == 0 && strstr(T.out, "out of ok1\n")
	    && strstr(T.out, "attempt=1 exit=0"), "log ok1: %s", T.out);
	EXPECT(strcmp(t_sql("SELECT origin || ' ' || origin_spool || ' ' ||"
	    " origin_id FROM chute.payloads WHERE id = 'fw2'"), P("vm %s fw2",
	    spool)) == 0, "fw2's origin is in its payload");
	EXPECT(CHUTE("ls", t_uri, "failed") == 0 && strstr(T.out, "bad1"),
	    "ls failed: %s", T.out);
	EXPECT(CHUTE("retry", t_uri, "bad1") == 0 && CHUTE("cancel", t_uri,
	    "d1") == 0, "retry bad1, cancel d1: %s", T.err);
	/* c1's lease ran out long ago: recovered, run again. */
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(t_journal_has("c1", 2) && t_journal_has("fw2", 1) &&
	    t_journal_has("bad1", 1) && !t_journal_has("d1", 1) &&
	    !t_journal_has("n1", 1), "what ran");
	EXPECT(CHUTE("log", t_uri, "bad1") == 0 && strstr(T.out, "out of bad1\n")
	    && strstr(T.out, "reset by") && strstr(T.out, "attempt=1 exit=0"),
	    "log bad1, both lives: %s", T.out);
	EXPECT(CHUTE("stats", t_uri) == 0 && t_token(t_line_of(T.out, "done"),
	    "5") && t_token(t_line_of(T.out, "failed"), "1"), "stats: %s", T.out);
	EXPECT(CHUTE("purge", t_uri, "--older-than", "0s") == 0 &&
	    strcmp(T.out, "purged 6\n") == 0, "purge: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.logs") == 0 &&
	    t_sqln("SELECT count(*) FROM chute.payloads") == 0, "all gone");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(already)"),
	    "init again: %s%s", T.out, T.err);
}

/*
 * Databases made by the releases of versions 7, 6, 5, 4 and 2 (commits
 * 5efd0ba, 46635ea, ced1966, f3cbbaa and 45b421e), as they left them,
 * upgrade to the current version and keep working.
 */
START_TEST(test_init_upgrades_a_version_7_database_as_that_release_left_it)
{
	upgrade_and_drive(7, "/tmp/exp/sp", 2, 0);
}
END_TEST

/*
 * A database of version 12 (tests/data/schema-v12.sql) with what versions
 * 8 to 12 added in use: a job waited for, claimed by a worker killed long
 * ago; two jobs waiting for it, one --after-failed run; a deferred job, a
 * unique key, a keyed job under a limit, a schedule.  Upgraded to 13 by
 * `chute init`, each goes on: a is recovered and runs, its dependents are
 * woken in its end's transaction and run, the key, the limit and the
 * schedule are there, and the edges settle.
 */
START_TEST(test_init_upgrades_a_version_12_database_with_dependents_waiting)
{
	int code;

	load_release(12);
	EXPECT(CHUTE("status", t_uri, "w") == 78 && strstr(T.err,
	    "schema version 12"), "status on version 12: %s", T.err);
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "schema version 13 "
	    "(upgraded)"), "init: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.after WHERE held_until IS"
	    " NULL AND NOT settled") == 2, "w's and w2's edges, not held");
	EXPECT(CHUTE("status", t_uri, "w") == 0 && strstr(T.out, " wait ") &&
	    strstr(T.out, "after=a"), "w: %s", T.out);
	EXPECT(CHUTE("limit", t_uri) == 0 && t_line_of(T.out, "key") &&
	    t_token(t_line_of(T.out, "key"), "kk") &&
	    t_token(t_line_of(T.out, "key"), "1"), "limit: %s", T.out);
	EXPECT(CHUTE("schedule", t_uri) == 0 && strstr(T.out, "s1 every=1h"),
	    "schedule: %s", T.out);
	t_write(RP("in"), "x\n");
	code = CHUTE("submit", t_uri, "--unique", "u1", RP("in"));
	EXPECT(code == 3, "u1 still held: %d %s", code, T.err);
	/* d waits for 2099: a drain would wait for it. */
	EXPECT(CHUTE("cancel", t_uri, "d") == 0, "cancel d: %s", T.err);
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(t_journal_has("a", 2) && t_journal_has("w", 1) &&
	    t_journal_has("w2", 1) && t_journal_has("k", 1) &&
	    t_journal_has("u,u=u1", 1) && !t_journal_has("d", 1), "what ran");
	EXPECT(CHUTE("status", t_uri, "w2") == 0 && strstr(T.out, " done "),
	    "w2: %s", T.out);
	EXPECT(t_sqln("SELECT count(*) FROM chute.after WHERE NOT settled") == 0,
	    "every edge settled");
	EXPECT(CHUTE("submit", t_uri, "--unique", "u1", RP("in")) == 0,
	    "u1 free once u ran: %s", T.err);
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(already)"),
	    "init again: %s%s", T.out, T.err);
}
END_TEST

START_TEST(test_init_upgrades_a_version_6_database_as_that_release_left_it)
{
	upgrade_and_drive(6, "/tmp/exp/sp", 2, 0);
}
END_TEST

START_TEST(test_init_upgrades_a_version_5_database_as_that_release_left_it)
{
	upgrade_and_drive(5, "/tmp/exp/sp", 2, 0);
}
END_TEST

/*
 * A view of the operator's own over chute.jobs stops the upgrade from
 * version 5 to 6, which makes the views again: init says which view (exit
 * 74), and the database is left at version 5, whole; without the view,
 * init goes through.
 */
START_TEST(test_an_operator_s_view_stops_the_upgrade_to_6_with_its_name)
{
	int code;

	load_release(5);
	t_sql("CREATE VIEW public.mine AS SELECT id, state FROM chute.jobs");
	code = CHUTE("init", t_uri);
	EXPECT(code == 74 && strstr(T.err, "view mine depends on view "
	    "chute.jobs") && strchr(T.err, '\n') == T.err + strlen(T.err) - 1,
	    "init: one line naming the view, 74: %d %s", code, T.err);
	EXPECT(t_sqln("SELECT version FROM chute.version") == 5 &&
	    t_sqln("SELECT count(*) FROM chute.jobs") == 6, "left at 5, whole");
	t_sql("DROP VIEW public.mine");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(upgraded)"),
	    "init without the view: %s%s", T.out, T.err);
}
END_TEST

/*
 * A job's time at infinity or -infinity made top, ls, stats and the
 * dashboard fail for its whole queue ("cannot subtract infinite
 * timestamps"), and purge never took one at +infinity.  Version 7's
 * checks refuse such a time in chute.live and chute.finished; the
 * upgrade of a database that holds one stops with one line naming the
 * job (exit 74), the database left at version 6, whole, until the time
 * is set as fleet.md says.
 */
START_TEST(test_infinite_times_are_refused_and_stop_the_upgrade_to_7)
{
	static const char *const bad[] = {
		"INSERT INTO chute.live (queue, id, state, size, run_at) VALUES"
		" ('default', 'i1', 'new', 1, 'infinity')",
		"INSERT INTO chute.live (queue, id, state, size, created) VALUES"
		" ('default', 'i2', 'new', 1, '-infinity')",
		"UPDATE chute.live SET claimed = '-infinity' WHERE id = 'ok'",
		"UPDATE chute.live SET lease_until = 'infinity' WHERE id = 'ok'",
		"INSERT INTO chute.finished (queue, id, state, size, run_at)"
		" VALUES ('default', 'i3', 'done', 1, 'infinity')",
		"INSERT INTO chute.finished (queue, id, state, size, created)"
		" VALUES ('default', 'i4', 'failed', 1, '-infinity')",
		"INSERT INTO chute.finished (queue, id, state, size, claimed)"
		" VALUES ('default', 'i5', 'failed', 1, 'infinity')",
	};
	char out[512];
	int code;

	t_fleet_submit("default", "ok", "x");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT(t_pg_sql(t_uri, bad[i], out, sizeof(out)) != 0 &&
		    strstr(t_pg_error(), "times_finite"), "taken: %s: %s",
		    bad[i], t_pg_error());
	/* Past the checks (the shared role may drop them), the readers. */
	t_sql("ALTER TABLE chute.live DROP CONSTRAINT live_times_finite;"
	    " ALTER TABLE chute.finished DROP CONSTRAINT finished_times_finite");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		t_sql(bad[i]);
	t_sql("UPDATE chute.live SET state = 'cur', token = 1, worker = 'w',"
	    " lease_until = '-infinity', claimed = 'infinity' WHERE id = 'ok'");
	t_sql("INSERT INTO chute.live (queue, id, state, size, run_at) VALUES"
	    " ('default', 'i6', 'new', 1, '-infinity')");
	EXPECT(CHUTE("ls", t_uri) == 0 && t_token(T.out, "i1") &&
	    t_token(T.out, "i6"), "ls: %s%s", T.out, T.err);
	EXPECT(CHUTE("stats", t_uri) == 0 && CHUTE("stats", t_uri,
	    "--prometheus") == 0, "stats: %s%s", T.out, T.err);
	EXPECT(CHUTE("top", t_uri) == 0 && strstr(T.out, "ok"), "top, not a "
	    "terminal: %s%s", T.out, T.err);

	load_release(6);
	t_sql("UPDATE chute.finished SET run_at = 'infinity' WHERE id = 'n1'");
	code = CHUTE("init", t_uri);
	EXPECT(code == 74 && strstr(T.err, "job 'n1' of queue 'default' has a"
	    " time at infinity") && strstr(T.err, "The upgrade to version 7") &&
	    t_nlines(T.err) == 1, "init: one line naming the job, 74: %d %s",
	    code, T.err);
	EXPECT(t_sqln("SELECT version FROM chute.version") == 6 &&
	    t_sqln("SELECT count(*) FROM chute.jobs") == 6 &&
	    t_sqln("SELECT count(*) FROM pg_constraint WHERE conname ="
	    " 'live_times_finite'") == 0, "left at 6, whole");
	/* fleet.md's fix, as it is written there. */
	t_sql("UPDATE chute.finished SET run_at = CASE WHEN isfinite(run_at)"
	    " THEN run_at ELSE now() END, created = CASE WHEN isfinite(created)"
	    " THEN created ELSE now() END, claimed = CASE WHEN isfinite(claimed)"
	    " THEN claimed ELSE now() END WHERE NOT (isfinite(run_at) AND"
	    " isfinite(created) AND isfinite(coalesce(claimed, now())))");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(upgraded)"),
	    "init after the fix: %s%s", T.out, T.err);
	EXPECT(CHUTE("ls", t_uri) == 0 && t_token(T.out, "n1") &&
	    CHUTE("purge", t_uri, "--older-than", "0s") == 0 &&
	    strcmp(T.out, "purged 3\n") == 0, "ls and purge: %s%s", T.out,
	    T.err);
}
END_TEST

START_TEST(test_init_upgrades_a_version_4_database_as_that_release_left_it)
{
	upgrade_and_drive(4, "/tmp/exp/sp", 2, 3);
}
END_TEST

START_TEST(test_init_upgrades_a_version_2_database_as_that_release_left_it)
{
	upgrade_and_drive(2, "/tmp/exp/sp2", 0, 3);
}
END_TEST

/*
 * A worker that finds a schema of another version cannot go on: it exits
 * 78 (which chute-worker@.service does not restart) after one line with
 * what to do, older (run init) or newer (upgrade chute); one whose
 * password the server refuses exits 77.  Both used to say their line and
 * then spin, a core's worth of polls, forever.
 */
START_TEST(test_a_worker_that_cannot_go_on_exits_78_or_77_saying_why)
{
	pid_t w;

	v3_database();
	w = WORKER("--", h_journal());
	EXPECT(t_reap(w, 20000, "a worker on version 3") == 78 &&
	    strstr(t_log_of(w), "schema version 3, this chute speaks 13: run "
	    "chute init") != NULL, "on version 3: %s", t_log_of(w));
	free(t_uri);
	t_uri = t_pg_newdb();
	EXPECT(CHUTE("init", t_uri) == 0, "init: %s", T.err);
	t_sql("UPDATE chute.version SET version = 14");
	w = WORKER("--", h_journal());
	EXPECT(t_reap(w, 20000, "a worker on version 14") == 78 &&
	    strstr(t_log_of(w), "schema version 14, this chute speaks 13: "
	    "upgrade chute") != NULL, "on version 14: %s", t_log_of(w));
	w = t_owner(NULL, t_pg_uri_as(t_pg_dbname(t_uri), "chute_pw",
	    "wrong-secret"), "--", h_journal(), (const char *)NULL);
	EXPECT(t_reap(w, 20000, "a worker with a wrong password") == 77 &&
	    strstr(t_log_of(w), "wrong-secret") == NULL, "a wrong password: "
	    "77, not printed: %s", t_log_of(w));
}
END_TEST
END_TEST

/* A pid no process has now (kill says ESRCH), from start up. */
static long
dead_pid(long start)
{
	while (kill((pid_t)start, 0) == 0 || errno != ESRCH)
		start++;
	return start;
}

/*
 * A worker removes the local directories of dead workers, only its own:
 * not through a symlink planted by that name, not another user's.
 */
/*
 * chute.workers is written by every worker's role: a row whose lease_ms
 * is past what an interval holds (either way) is read as bounded, as
 * --lease is, and breaks nothing: chute workers, stats, top, and the
 * workers' recovery (whose sweep of dead rows read every queue's) went
 * "ERROR: interval out of range" before.
 */
START_TEST(test_a_worker_row_with_an_absurd_lease_breaks_no_statement)
{
	pid_t w;

	EXPECT(CHUTE("init", t_uri) == 0, "init: %s", T.err);
	t_sql("INSERT INTO chute.workers (worker, queue, host, pid, slots,"
	    " version, lease_ms) VALUES ('big', 'default', 'h', 1, 1, 'v',"
	    " 9223372036854775807), ('neg', 'other', 'h', 2, 1, 'v',"
	    " -9223372036854775807)");
	/* Times every reader subtracts from now(): no infinity gets in. */
	for (int i = 0; i < 3; i++) {
		static const char *const bad[] = { "started", "seen", "stopped" };
		char out[256];

		EXPECT(t_pg_sql(t_uri, P("INSERT INTO chute.workers (worker,"
		    " queue, host, pid, slots, version, lease_ms, %s) VALUES"
		    " ('inf', 'default', 'h', 3, 1, 'v', 1000, '-infinity')",
		    bad[i]), out, sizeof(out)) != 0, "a worker %s -infinity "
		    "was taken", bad[i]);
	}
	EXPECT(CHUTE("workers", t_uri) == 0 && t_line_of(T.out, "big") !=
	    NULL && strstr(t_line_of(T.out, "big"), " alive") != NULL, "workers: %s%s",
	    T.out, T.err);
	EXPECT(CHUTE("workers", t_uri, "--queue", "other") == 0 &&
	    t_line_of(T.out, "neg") != NULL &&
	    strstr(t_line_of(T.out, "neg"), " gone") != NULL, "workers of "
	    "other: %s%s", T.out, T.err);
	EXPECT(CHUTE("stats", t_uri) == 0 && strstr(T.out, "workers_alive     "
	    "1\n") != NULL, "stats: %s%s", T.out, T.err);
	EXPECT(CHUTE("top", t_uri) == 0 && strstr(T.out, "big") != NULL,
	    "top, not a terminal: %s%s", T.out, T.err);
	w = WORKER("--queue", "mine", "--drain", "--", h_journal());
	EXPECT(t_reap(w, 30000, "a worker") == 0 && strstr(t_log_of(w),
	    "ERROR") == NULL, "its recovery and sweep: %s", t_log_of(w));
}
END_TEST

START_TEST(test_a_worker_s_sweep_of_dead_workers_follows_no_symlink)
{
	char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
	const char *evil, *other, *mine;
	long pid = dead_pid(99999);
	pid_t w;

	EXPECT(mkdir(RP("tmp"), 0700) == 0 && mkdir(RP("dir"), 0700) == 0,
	    "mkdir");
	t_write(RP("dir/a"), "a");
	t_write(RP("dir/b"), "b");
	evil = P("%s/chute-pgsql.%ld.evil", RP("tmp"), pid);
	EXPECT(symlink(RP("dir"), evil) == 0, "symlink: %s", strerror(errno));
	other = P("%s/chute-pgsql.%ld.other", RP("tmp"), dead_pid(pid + 1));
	EXPECT(mkdir(other, 0755) == 0, "mkdir other");
	t_write(P("%s/f", other), "f");
	EXPECT(chown(P("%s/f", other), 65534, 65534) == 0 && chown(other, 65534,
	    65534) == 0, "chown: %s", strerror(errno));
	mine = P("%s/chute-pgsql.%ld.mine", RP("tmp"), dead_pid(pid + 2));
	EXPECT(mkdir(mine, 0700) == 0, "mkdir mine");
	t_write(P("%s/job", mine), "j");
	setenv("TMPDIR", RP("tmp"), 1);
	w = WORKER("--drain", "--", "true");
	if (old != NULL)
		setenv("TMPDIR", old, 1);
	else
		unsetenv("TMPDIR");
	free(old);
	EXPECT(t_reap(w, 30000, "drain") == 0, "drain: %s", t_log_of(w));
	EXPECT(t_exists(RP("dir/a")) && t_exists(RP("dir/b")), "the files behind "
	    "the symlink stay");
	EXPECT(t_exists(P("%s/f", other)), "another user's directory stays");
	EXPECT(!t_exists(mine), "our own dead worker's directory goes");
}
END_TEST

/*
 * An exec'd handler's output on the worker's disk is bounded as the
 * database bounds it: a handler writing 50 MB finds its local log (under
 * RUNTIME_DIRECTORY, where the worker keeps it) at PG_LOG_CAP bytes and
 * one more, not 50 MB, and its job is done, its log stored with the
 * marker.
 */
START_TEST(test_a_flooding_handler_s_local_log_is_capped_as_the_database_s)
{
	const char *h = t_handler("h", "head -c 50000000 /dev/zero | tr '\\0' y\n"
	    "stat -c %s \"$RT\"/chute-pgsql.*/.*.log > \"$R/size\"\n");
	char *v;
	pid_t w;

	EXPECT(mkdir(RP("rt"), 0700) == 0, "mkdir rt: %s", strerror(errno));
	setenv("RUNTIME_DIRECTORY", RP("rt"), 1);
	setenv("RT", RP("rt"), 1);
	t_fleet_submit("default", "flood50", "x");
	w = WORKER("--drain", "--", h);
	unsetenv("RUNTIME_DIRECTORY");
	unsetenv("RT");
	EXPECT(t_reap(w, 60000, "drain") == 0, "drain: %s", t_log_of(w));
	v = t_slurp(RP("size"));
	EXPECT(v && atol(v) > 0 && atol(v) <= (1 << 20) + 1, "the local log "
	    "holds %s bytes", t_snip(v));
	free(v);
	EXPECT(strcmp(t_sql("SELECT state FROM chute.jobs WHERE id = 'flood50'"),
	    "done") == 0, "done");
	EXPECT(t_sqln("SELECT count(*) FROM chute.job_logs WHERE id = 'flood50' AND"
	    " length(body) < (1 << 20) + 200 AND position(convert_to("
	    "'@chute log truncated', 'UTF8') IN body) > 0") == 1, "stored capped, "
	    "with the marker");
}
END_TEST

/*
 * Stored text reaches a terminal escaped, as the journal has it: a `last`
 * with a newline and an escape code cannot forge a second line of
 * `chute status`, nor drive the terminal.
 */
START_TEST(test_status_of_a_queue_escapes_a_forged_last)
{
	t_fleet_submit("default", "forged", "x");
	t_sql("WITH g AS (DELETE FROM chute.live WHERE id = 'forged' RETURNING *)"
	    " INSERT INTO chute.finished (queue, id, state, size, last) SELECT"
	    " queue, id, 'failed', size, E'nothing\\nforged done attempts=1"
	    " \\x1b[2J\\r' FROM g");
	EXPECT(CHUTE("status", t_uri, "forged") == 0, "status: %s", T.err);
	EXPECT(t_nlines(T.out) == 1 && strchr(T.out, '\033') == NULL &&
	    strchr(T.out, '\r') == NULL && strstr(T.out, "\\n"),
	    "one line, escaped: %s", T.out);
	t_sql("INSERT INTO chute.logs (queue, id, body) VALUES ('default',"
	    " 'forged', convert_to(E'out \\x1b[2J\\x07 end\\n', 'UTF8'))");
	EXPECT(CHUTE("log", t_uri, "forged") == 0 && strstr(T.out, "\033[2J"),
	    "log into a pipe, as it is: %s", T.out);
	EXPECT(t_chute_tty("log", t_uri, "forged", (const char *)NULL) == 0 &&
	    strpbrk(T.out, "\033\007") == NULL && strstr(T.out,
	    "out \\033[2J\\a end\r\n"), "log on a terminal, escaped: %s", T.out);
}
END_TEST

/* ---- --persistent ---- */

/*
 * Persistent workers against the database: the worker reads each job's
 * local copy by its path and answers by its first word; the owner keeps
 * each attempt's log in memory (queue_pg.c, open_log), so its start and
 * reply lines reach chute.logs only through the outcome's upload.  The
 * local copies live under RUNTIME_DIRECTORY, which must be empty after.
 */
START_TEST(test_persistent_workers_store_each_attempt_s_log)
{
	const char *w = t_handler("worker", "tab=$(printf '\\t')\n"
	    "while IFS=\"$tab\" read -r id path; do\n"
	    "  read -r what < \"$path\"\n"
	    "  echo \"$id $what ${CHUTE_INLINE-path}\" >> \"$R/wj\"\n"
	    "  case \"$what\" in\n"
	    "  fail) echo \"fail it said no\" ;;\n"
	    "  retry) echo \"retry later please\" ;;\n"
	    "  *) echo ok ;;\n"
	    "  esac\n"
	    "done\n");
	pid_t p;
	char *wj;

	EXPECT(mkdir(RP("rt"), 0700) == 0, "mkdir rt: %s", strerror(errno));
	setenv("RUNTIME_DIRECTORY", RP("rt"), 1);
	t_fleet_submit("default", "pa", "ok\n");
	t_fleet_submit("default", "pb", "fail\n");
	t_fleet_submit("default", "pc", "retry\n");
	p = WORKER("--persistent", "-j", "2", "--drain", "--max-attempts", "2",
	    QUICK, "--", w);
	unsetenv("RUNTIME_DIRECTORY");	/* the worker has it: no later test */
	EXPECT(t_reap(p, 30000, "drain") == 0, "drain: %s", t_log_of(p));
	wj = t_slurp(RP("wj"));
	/* The path protocol, as before --inline: no CHUTE_INLINE. */
	EXPECT(wj && strstr(wj, "pa ok path\n") && strstr(wj, "pb fail path\n") &&
	    strstr(wj, "pc retry path\n"), "the workers read: %s", t_snip(wj));
	free(wj);
	EXPECT(t_sqln("SELECT count(*) FROM chute.job_logs WHERE id = 'pa'") == 1 &&
	    t_sqln("SELECT count(*) FROM chute.job_logs WHERE id = 'pc'") == 2 &&
	    t_sqln("SELECT count(*) FROM chute.logs WHERE id = 'pc'") == 1,
	    "one log per attempt, the last one's in its finished row");
	EXPECT(CHUTE("log", t_uri, "pa") == 0 && strstr(T.out,
	    "attempt=1 start\n") && strstr(T.out, "attempt=1 reply=ok"),
	    "log pa: %s%s", T.out, T.err);
	EXPECT(CHUTE("log", t_uri, "pb") == 0 && strstr(T.out,
	    "attempt=1 start\n") && strstr(T.out, "it said no"),
	    "log pb: %s%s", T.out, T.err);
	EXPECT(CHUTE("log", t_uri, "pc") == 0 && strstr(T.out,
	    "attempt=1 start\n") && strstr(T.out, "attempt=2 start\n") &&
	    strstr(T.out, "later please"), "log pc: %s%s", T.out, T.err);
	EXPECT(t_entries(RP("rt")) == 0, "%d left in the local directory",
	    t_entries(RP("rt")));
}
END_TEST

/*
 * --inline against the database: the same hostile payloads and workers
 * as on a spool (t_inline_expect), each job's bytes straight from its
 * claim's reply to the worker's pipe; no local copy is made for it (the
 * worker counts the files under RUNTIME_DIRECTORY while it holds each).
 */
START_TEST(test_inline_workers_get_hostile_payloads_whole_and_framed)
{
	pid_t p;

	EXPECT(mkdir(RP("rt"), 0700) == 0, "mkdir rt: %s", strerror(errno));
	setenv("RUNTIME_DIRECTORY", RP("rt"), 1);
	t_inline_submit_all(t_uri);
	p = WORKER("--inline", "-j", "2", "--drain", "--max-attempts", "2",
	    "--timeout", "10s", QUICK, "--", t_inline_worker());
	unsetenv("RUNTIME_DIRECTORY");
	EXPECT(t_reap(p, 30000, "drain") == 0, "drain: %s", t_log_of(p));
	t_inline_expect(t_uri, p, true);
	EXPECT(t_entries(RP("rt")) == 0, "%d left in the local directory",
	    t_entries(RP("rt")));
}
END_TEST

/* ---- retention (issue 38) ---- */

/*
 * A queue that keeps done jobs 0: each leaves the database in its outcome
 * statement (no finished row, payload or log), under two workers at once;
 * a failed job stays (kept forever).  A `chute wait` blocked on a job
 * that then ends returns its outcome (the end told on chute_ended), and
 * status and log of it say it may have been removed by the retention,
 * never plainly "unknown job".
 */
START_TEST(test_a_queue_kept_0_leaves_nothing_and_wait_still_gets_the_outcome)
{
	const char *h = t_handler("h", "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >>"
	    " \"$R/journal\"\n"
	    "case \"$CHUTE_ID\" in w) " UNTIL_RELEASED " exit 0;; bad*) exit 1;;"
	    " d) echo once; [ \"$CHUTE_ATTEMPT\" = 1 ] && exit 75;; esac\n"
	    "exit 0\n");
	const char *argv[] = { T.bin, "wait", t_uri, "--timeout", "30s", "w",
	    NULL };
	pid_t a, b, waiter;

	EXPECT(CHUTE("retention", t_uri, "--done", "0") == 0 &&
	    strcmp(T.out, "done 0\nfailed forever\n") == 0, "retention: %s%s",
	    T.out, T.err);
	t_fleet_submit("default", "w", "x");
	a = WORKER("-j", "2", "--backoff", "50ms:200ms", "--", h);
	b = WORKER("-j", "2", "--backoff", "50ms:200ms", "--", h);
	WAIT_UNTIL(t_journal_has("w", 1), 20000, "w runs");
	/* Deferred once: its first attempt's log is a row of chute.logs. */
	t_fleet_submit("default", "d", "x");
	WAIT_UNTIL(t_journal_has("d", 2), 20000, "d runs again");
	waiter = t_spawn(argv, NULL, RP("waiter.out"), RP("waiter.out"), NULL);
	/* Its LISTEN comes before its first look, which found w running. */
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM pg_stat_activity WHERE query"
	    " LIKE '%id = ANY($2::text[])%'") > 0, 20000, "the wait looks");
	for (int i = 0; i < 20; i++)
		t_fleet_submit("default", P("%s%d", i % 5 ? "j" : "bad", i), "x");
	t_release();
	EXPECT(t_reap(waiter, 20000, "chute wait w") == 0, "wait on a job "
	    "kept 0 returns 0 for its success: %s", t_log_of(waiter));
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.finished") == 4 &&
	    t_sqln("SELECT count(*) FROM chute.live") == 0, 30000,
	    "the jobs end: %s", t_sql("SELECT count(*) FROM chute.jobs"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.finished WHERE state ="
	    " 'done'") == 0 && t_sqln("SELECT count(*) FROM chute.payloads") ==
	    4 && t_sqln("SELECT count(*) FROM chute.job_logs WHERE id NOT LIKE"
	    " 'bad%'") == 0, "no done job's row, payload or log is left: %s",
	    t_sql("SELECT string_agg(id, ' ') FROM chute.payloads"));
	EXPECT(CHUTE("status", t_uri, "bad0") == 0 && strstr(T.out, "failed"),
	    "a failed job is kept: %s%s", T.out, T.err);
	EXPECT(CHUTE("status", t_uri, "w") == 1 && strstr(T.err, "w: not "
	    "found: unknown, or finished and removed by the retention of queue "
	    "default (done 0, failed forever)"), "status: %s", T.err);
	EXPECT(CHUTE("log", t_uri, "j1") == 1 && strstr(T.err, "retention"),
	    "log: %s", T.err);
	EXPECT(CHUTE("wait", t_uri, "j1") == 1 && strstr(T.err, "retention"),
	    "wait after the end: %s", T.err);
	EXPECT(t_stop(a) == 0 && t_stop(b) == 0, "workers stop");
}
END_TEST

/*
 * A wait for one ID that the queue's retention removed names it, as
 * status does; for several, the one line says "a job among the IDs".
 */
START_TEST(test_a_wait_for_one_removed_job_names_it)
{
	EXPECT(CHUTE("retention", t_uri, "--done", "0") == 0, "retention: %s",
	    T.err);
	t_fleet_submit("default", "j1", "x");
	t_fleet_submit("default", "j2", "x");
	EXPECT(t_reap(WORKER("--drain", "--", h_journal()), 30000, "drain") == 0,
	    "drain");
	EXPECT(CHUTE("wait", t_uri, "j1") == 1 && strstr(T.err, "chute: j1: "
	    "not found: unknown, or finished and removed by the retention of "
	    "queue default (done 0, failed forever)") && t_nlines(T.err) == 1,
	    "wait for one: %s", T.err);
	EXPECT(CHUTE("wait", t_uri, "j1", "j2") == 1 && strstr(T.err, "chute: "
	    "a job among the IDs: not found") && t_nlines(T.err) == 1,
	    "wait for two: %s", T.err);
	EXPECT(CHUTE("retention", t_uri, "--done", "forever") == 0, "forever");
	EXPECT(CHUTE("wait", t_uri, "j1") == 1 && strcmp(T.err, "chute: "
	    "unknown job among the IDs\n") == 0, "kept forever, as before: %s",
	    T.err);
}
END_TEST

/*
 * Done jobs kept 2 s, failed 3 s, three workers: every finished row is
 * removed (with its payload and logs) no sooner than its state's time
 * after it ended, and no later than that plus the sweep's period (1 s)
 * and the machine's delays (3 s here), as an audit trigger on each table
 * records; no payload goes without its finished row.
 */
START_TEST(test_retention_removes_finished_jobs_at_their_time_under_three_workers)
{
	const char *h = t_handler("h", "case \"$CHUTE_ID\" in bad*) exit 1;;"
	    " esac\nexit 0\n");
	pid_t w[3];

	t_sql("CREATE TABLE public.fin_gone (id text, keep interval,"
	    " late interval);"
	    " CREATE TABLE public.pay_gone (id text);"
	    " CREATE FUNCTION public.fin_gone() RETURNS trigger LANGUAGE plpgsql"
	    " AS $$ BEGIN INSERT INTO public.fin_gone VALUES (OLD.id,"
	    " CASE OLD.state WHEN 'done' THEN interval '2 s' ELSE"
	    " interval '3 s' END, clock_timestamp() - OLD.run_at); RETURN OLD;"
	    " END $$;"
	    " CREATE FUNCTION public.pay_gone() RETURNS trigger LANGUAGE plpgsql"
	    " AS $$ BEGIN INSERT INTO public.pay_gone VALUES (OLD.id);"
	    " RETURN OLD; END $$;"
	    " CREATE TRIGGER fin_gone AFTER DELETE ON chute.finished FOR EACH ROW"
	    " EXECUTE FUNCTION public.fin_gone();"
	    " CREATE TRIGGER pay_gone AFTER DELETE ON chute.payloads FOR EACH ROW"
	    " EXECUTE FUNCTION public.pay_gone();");
	EXPECT(CHUTE("retention", t_uri, "--done", "2s", "--failed", "3s") ==
	    0, "retention: %s", T.err);
	for (int i = 0; i < 3; i++)
		w[i] = WORKER("-j", "2", "--", h);
	for (int i = 0; i < 20; i++)
		t_fleet_submit("default", P("%s%d", i % 5 ? "j" : "bad", i), "x");
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM public.fin_gone") == 20, 60000,
	    "every job removed: %s of 20",
	    t_sql("SELECT count(*) FROM public.fin_gone"));
	EXPECT(t_sqln("SELECT count(*) FROM public.fin_gone WHERE late < keep")
	    == 0, "none removed before its time: %s", t_sql("SELECT"
	    " string_agg(id || ' ' || late, ', ') FROM public.fin_gone WHERE"
	    " late < keep"));
	EXPECT(t_sqln("SELECT count(*) FROM public.fin_gone WHERE late > keep +"
	    " interval '4 s'") == 0, "none kept past its time by more than the"
	    " bound: %s", t_sql("SELECT max(late - keep) FROM public.fin_gone"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.payloads") == 0 &&
	    t_sqln("SELECT count(*) FROM chute.logs") == 0 &&
	    t_sqln("SELECT count(*) FROM public.pay_gone WHERE id NOT IN"
	    " (SELECT id FROM public.fin_gone)") == 0, "the payloads and logs"
	    " went with their rows, and only theirs");
	for (int i = 0; i < 3; i++)
		EXPECT(t_stop(w[i]) == 0, "worker %d stops", i);
	EXPECT(CHUTE("status", t_uri, "j1") == 1 && strstr(T.err, "done 2s, "
	    "failed 3s"), "status of a removed job: %s", T.err);
}
END_TEST

/* A duration that is not one: one line, exit 64, nothing in chute.queues. */
START_TEST(test_retention_refuses_bad_durations_and_touches_nothing)
{
	const char *bad[] = { "-1", "1x", "", "forever1", "99999999999d",
	    "1.5h" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT(CHUTE("retention", t_uri, "--done", bad[i]) == 64 &&
		    strstr(T.err, "--done DUR") && T.out[0] == '\0',
		    "--done '%s': %s", bad[i], T.err);
		EXPECT(CHUTE("retention", t_uri, "--failed", "1h", "--done",
		    bad[i]) == 64, "--done '%s' after a good --failed", bad[i]);
	}
	/* An operand left over (a duration without its option): refused. */
	EXPECT(CHUTE("retention", t_uri, "1h") == 64 && strstr(T.err,
	    "unexpected argument: 1h") && T.out[0] == '\0', "an operand: %s",
	    T.err);
	EXPECT(CHUTE("retention", t_uri, "--done", "1h", "forever") == 64 &&
	    T.out[0] == '\0', "an operand after a good option: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.queues") == 0,
	    "nothing was set");
	EXPECT(CHUTE("retention", t_uri) == 0 && strcmp(T.out,
	    "done forever\nfailed forever\n") == 0, "the default: %s", T.out);
	EXPECT(CHUTE("retention", t_uri, "--failed", "90m", "--queue", "q") ==
	    0 && strcmp(T.out, "done forever\nfailed 90m\n") == 0 &&
	    CHUTE("retention", t_uri) == 0 && strcmp(T.out,
	    "done forever\nfailed forever\n") == 0, "per queue: %s", T.out);
}
END_TEST

/* ---- priorities, keys and limits (issue 36) ---- */

/*
 * The witness of a key's limit, outside the database: job K-N is of key K
 * (u: no key); a run takes the first free of the flock(1) slots
 * $R/slot.K.1 .. slot.K.MAX (MAX from $R/max.K) and holds it until its
 * process group is gone (a kill of the group by the reaper frees it with
 * it); finding none free is a limit exceeded ($R/overlap).  Each start is
 * a line "K SLOT ID ATTEMPT" of $R/starts: a slot of MAX taken means MAX
 * ran at once.  A run of a job with a file $R/hold.ID (attempt 1 only)
 * waits for t_release(), in the group; the others $R/sleep.K seconds
 * (0.2).
 */
static const char h_slots[] =
    "k=${CHUTE_ID%%-*}\n"
    "n=$(cat \"$R/max.$k\" 2>/dev/null || echo 100)\n"
    "i=1\n"
    "while :; do\n"
    "  exec 9>>\"$R/slot.$k.$i\"\n"
    "  flock -n 9 && break\n"
    "  if [ $i -ge $n ]; then echo \"$CHUTE_ID\" >> \"$R/overlap\"; i=$((n+1)); break; fi\n"
    "  i=$((i+1))\n"
    "done\n"
    "echo \"$k $i $CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/starts\"\n"
    "if [ \"$CHUTE_ATTEMPT\" = 1 ] && [ -e \"$R/hold.$CHUTE_ID\" ]; then\n"
    UNTIL_RELEASED "exit 0\nfi\n"
    "sleep \"$(cat \"$R/sleep.$k\" 2>/dev/null || echo 0.2)\"\n";

/* The highest slot key's runs took (0: none ran). */
static int
slots_reached(const char *key)
{
	char *s = t_slurp(RP("starts")), *line, *save = NULL;
	char k[80];
	int i, max = 0;

	for (line = s ? strtok_r(s, "\n", &save) : NULL; line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%79s %d", k, &i) == 2 && strcmp(k, key) == 0 &&
		    i > max)
			max = i;
	free(s);
	return max;
}

static int
starts_of(const char *key)
{
	char *s = t_slurp(RP("starts")), *line, *save = NULL;
	char k[80];
	int n = 0;

	for (line = s ? strtok_r(s, "\n", &save) : NULL; line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%79s", k) == 1 && strcmp(k, key) == 0)
			n++;
	free(s);
	return n;
}

/* n jobs KEY-1 .. KEY-n of priority prio, in that order (key "u": none). */
static void
keyed_jobs(const char *key, int n, int prio)
{
	const char *k = strcmp(key, "u") == 0 ? "NULL" : P("'%s'", key);

	EXPECT(t_pg_sql(t_uri, P("INSERT INTO chute.payloads (queue, id, body)"
	    " SELECT 'default', '%s-' || g, 'x' FROM generate_series(1, %d) g;"
	    " INSERT INTO chute.live (queue, id, state, size, run_at, key,"
	    " priority) SELECT 'default', '%s-' || g, 'new', 1, now() -"
	    " interval '1 hour' + g * interval '1 us', %s, %d FROM"
	    " generate_series(1, %d) g", key, n, key, k, prio, n), NULL, 0) ==
	    0, "insert %d jobs of %s: %s", n, key, t_pg_error());
}

/* `chute limit URL ARGS...`, which must succeed. */
#define LIMIT(...) EXPECT(CHUTE("limit", t_uri, __VA_ARGS__) == 0, \
	"chute limit: %s%s", T.out, T.err)

static void
no_overlap(void)
{
	EXPECT(!t_exists(RP("overlap")), "a key ran more than its limit: %s",
	    t_snip(t_slurp(RP("overlap"))));
}

static long
done_count(void)
{
	return t_sqln("SELECT count(*) FROM chute.finished WHERE state ="
	    " 'done'");
}

/*
 * 4 workers of 4 slots over keys A (max 2), B (max 3), C (the default's
 * 1) and unkeyed jobs, the database restarted (a crash) in the middle: the
 * witness never finds a key over its limit, and each limit is reached.
 */
START_TEST(test_four_workers_of_four_slots_keep_every_key_s_limit)
{
	const char *h = t_handler("h", h_slots);
	pid_t w[4];

	LIMIT("--key", "A", "--max", "2");
	LIMIT("--key", "B", "--max", "3");
	LIMIT("--default", "--max", "1");
	t_write(RP("max.A"), "2");
	t_write(RP("max.B"), "3");
	t_write(RP("max.C"), "1");
	keyed_jobs("A", 24, 0);
	keyed_jobs("B", 24, 0);
	keyed_jobs("C", 12, 0);
	keyed_jobs("u", 24, 0);
	for (int i = 0; i < 4; i++)
		w[i] = WORKER("-j", "4", "--lease", "3s", QUICK, "--", h);
	WAIT_UNTIL(done_count() >= 20, 60000, "work under way");
	t_pg_restart_immediate();
	WAIT_UNTIL(done_count() == 84, 120000, "every job done: %ld",
	    done_count());
	for (int i = 0; i < 4; i++)
		EXPECT(t_stop(w[i]) == 0, "worker %d stops", i);
	no_overlap();
	EXPECT(slots_reached("A") == 2 && slots_reached("B") == 3 &&
	    slots_reached("C") == 1 && slots_reached("u") >= 4,
	    "the limits reached: A %d of 2, B %d of 3, C %d of 1, unkeyed %d",
	    slots_reached("A"), slots_reached("B"), slots_reached("C"),
	    slots_reached("u"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.keys WHERE admitted <> 0 OR"
	    " parked <> 0") == 0, "the keys' counts back to 0: %s",
	    t_sql("SELECT string_agg(key || ' ' || admitted || ' ' || parked,"
	    ", ') FROM chute.keys"));
}
END_TEST

/*
 * Key A at 2: worker a runs A-1 and A-2 (held 30 s, in their groups), and
 * is killed with -9 (or frozen with SIGSTOP past its lease); worker b
 * starts no job of A until the reaper has killed those groups (the
 * witness's slots free) and the claims are recovered; every job of A then
 * runs, never more than 2 at once.
 */
static void
limit_survives(bool freeze)
{
	const char *h = t_handler("h", h_slots);
	pid_t a, b;

	LIMIT("--key", "A", "--max", "2");
	t_write(RP("max.A"), "2");
	t_write(RP("hold.A-1"), "");
	t_write(RP("hold.A-2"), "");
	keyed_jobs("A", 6, 0);
	a = WORKER("-j", "4", "--lease", "3s", QUICK, "--", h);
	WAIT_UNTIL(starts_of("A") == 2, 20000, "A-1 and A-2 running");
	EXPECT(t_sqln("SELECT count(*) FROM chute.live WHERE key = 'A' AND"
	    " state = 'new' AND NOT parked") == 0, "no other job of A may start");
	EXPECT(kill(a, freeze ? SIGSTOP : SIGKILL) == 0, "stop worker a");
	b = WORKER("-j", "4", "--lease", "3s", QUICK, "--", h);
	WAIT_UNTIL(done_count() == 6, 40000, "every job of A done: %ld, %s",
	    done_count(), t_log_of(b));
	EXPECT(t_stop(b) == 0, "worker b stops");
	no_overlap();
	EXPECT(slots_reached("A") == 2, "2 at once reached: %d",
	    slots_reached("A"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.finished WHERE id IN ('A-1',"
	    " 'A-2') AND attempts = 2") == 2, "A-1 and A-2 ran again");
	if (freeze) {
		EXPECT(kill(a, SIGCONT) == 0, "SIGCONT");
		EXPECT(t_stop(a) == 0, "worker a stops");
	} else {
		t_reap(a, 5000, "the killed worker");
	}
	no_overlap();
}

START_TEST(test_a_key_s_limit_holds_when_a_worker_is_killed)
{
	limit_survives(false);
}
END_TEST

START_TEST(test_a_key_s_limit_holds_when_a_worker_is_frozen_past_its_lease)
{
	limit_survives(true);
}
END_TEST

/*
 * 100,000 jobs of key A at its limit of 1 wait, parked off the claim's
 * index; jobs of keys B and C and an unkeyed one, submitted after them,
 * start at once.
 */
START_TEST(test_a_hot_key_at_its_limit_holds_up_no_other_key)
{
	const char *h = t_handler("h", h_slots);
	pid_t w;

	LIMIT("--key", "A", "--max", "1");
	t_write(RP("sleep.A"), "1");
	keyed_jobs("A", 100000, 0);
	EXPECT(t_sqln("SELECT count(*) FROM chute.live WHERE key = 'A' AND"
	    " parked") == 99999, "all but one of A parked: %s",
	    t_sql("SELECT string_agg(admitted || ' ' || parked, ',') FROM"
	    " chute.keys"));
	t_write(RP("in"), "x");
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--id", "B-1", "--key", "B")
	    == 0 && CHUTE_IN(RP("in"), "submit", t_uri, "--id", "C-1", "--key",
	    "C", "--priority", "-5") == 0 && CHUTE_IN(RP("in"), "submit", t_uri,
	    "--id", "u-1") == 0, "submit: %s", T.err);
	w = WORKER("-j", "4", "--lease", "30s", QUICK, "--", h);
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.finished WHERE id IN"
	    " ('B-1', 'C-1', 'u-1')") == 3, 10000, "the other keys' jobs done");
	EXPECT(starts_of("A") <= 2, "A ran %d", starts_of("A"));
	EXPECT(CHUTE("limit", t_uri) == 0 && strstr(T.out, "A ") &&
	    strstr(T.out, "99999"), "chute limit: %s", T.out);
	EXPECT(t_stop(w) == 0, "the worker stops");
	no_overlap();
}
END_TEST

/*
 * A rate of 3 per second on key R and a bound of 3 on the whole queue,
 * with 2 workers of 4 slots: no window of a second holds more than 3
 * claims of R (the database's clock: chute.jobs.claimed), and never more
 * than 3 jobs run at once (the witness of the unkeyed jobs, whose key
 * is "u").
 */
START_TEST(test_a_rate_and_the_whole_queue_s_bound_are_exact_across_workers)
{
	const char *h = t_handler("h", h_slots);
	pid_t w[2];

	LIMIT("--key", "R", "--rate", "3/1s");
	LIMIT("--all", "--max", "3");
	t_write(RP("max.u"), "3");
	t_write(RP("sleep.R"), "0");
	t_write(RP("sleep.u"), "0.3");
	keyed_jobs("R", 12, 0);
	keyed_jobs("u", 16, 0);
	for (int i = 0; i < 2; i++)
		w[i] = WORKER("-j", "4", "--lease", "5s", QUICK, "--", h);
	WAIT_UNTIL(done_count() == 28, 60000, "every job done: %ld",
	    done_count());
	for (int i = 0; i < 2; i++)
		EXPECT(t_stop(w[i]) == 0, "worker %d stops", i);
	no_overlap();
	EXPECT(slots_reached("u") == 3, "3 at once reached: %d",
	    slots_reached("u"));
	EXPECT(t_sqln("SELECT max(n) FROM (SELECT (SELECT count(*) FROM"
	    " chute.finished g WHERE g.key = 'R' AND g.claimed >= f.claimed AND"
	    " g.claimed < f.claimed + interval '1 second') AS n FROM"
	    " chute.finished f WHERE f.key = 'R') x") == 3, "a second with more"
	    " or fewer than 3 claims of R: %s", t_sql("SELECT string_agg("
	    "to_char(claimed, 'SS.MS'), ' ' ORDER BY claimed) FROM"
	    " chute.finished WHERE key = 'R'"));
}
END_TEST

/*
 * No starvation: a job of priority -10 waits behind 60 of priority 10,
 * submitted after it (a stream of more important work that never runs
 * dry while it waits); one claim in four takes the oldest, so it starts
 * among the first few (without the share it would be the last).
 */
START_TEST(test_a_low_priority_job_starts_within_the_share_of_the_oldest)
{
	const char *h = t_handler("h", "echo \"$CHUTE_ID\" >> \"$R/order\"\n");
	char *order, *at;
	int pos = 0;

	keyed_jobs("low", 1, -10);
	keyed_jobs("u", 60, 10);
	t_sql("UPDATE chute.live SET run_at = run_at - interval '1 minute'"
	    " WHERE id = 'low-1'");
	EXPECT(t_reap(WORKER("-j", "1", "--prefetch", "0", "--drain", "--",
	    h), 60000, "drain") == 0, "drain");
	order = t_slurp(RP("order"));
	EXPECT(order != NULL && (at = strstr(order, "low-1\n")) != NULL,
	    "low ran: %s", t_snip(order));
	for (char *p = order; p < at; p++)
		pos += *p == '\n';
	EXPECT(pos < 8, "low started as number %d of 61", pos + 1);
	EXPECT(strncmp(order, "u-1\nu-2\nu-3\n", 12) == 0, "priority first: %s",
	    t_snip(order));
	free(order);
}
END_TEST

/*
 * A keyed job's end frees its key's admission (A at 1: A-2 waits parked
 * behind A-1, which fails, then runs); retry brings A-1 back with its
 * priority and key, status and ls show them, and a cancel of a waiting
 * job gives its place back: every count of chute.keys ends at 0.
 */
START_TEST(test_retry_keeps_priority_and_key_and_every_end_frees_the_key)
{
	const char *h = t_handler("h", "[ -e \"$R/fail.$CHUTE_ID\" ] && exit 1\n"
	    "echo \"$CHUTE_ID\" >> \"$R/order\"\n");

	LIMIT("--key", "A", "--max", "1");
	t_write(RP("in"), "x");
	t_write(RP("fail.A-1"), "");
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--id", "A-1", "--key", "A",
	    "--priority", "7") == 0 && CHUTE_IN(RP("in"), "submit", t_uri,
	    "--id", "A-2", "--key", "A") == 0, "submit: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.live WHERE parked") == 1,
	    "A-2 parked behind A-1");
	EXPECT(t_reap(WORKER("--max-attempts", "1", "--drain", "--", h), 30000,
	    "drain") == 0, "drain");
	EXPECT(strcmp(t_sql("SELECT string_agg(id || ' ' || state, ', ' ORDER"
	    " BY id) FROM chute.jobs"), "A-1 failed, A-2 done") == 0, "ends: %s",
	    t_sql("SELECT string_agg(id || ' ' || state, ', ') FROM chute.jobs"));
	EXPECT(CHUTE("retry", t_uri, "A-1") == 0 && CHUTE("status", t_uri,
	    "A-1") == 0 && strstr(T.out, "new attempts=0 priority=7 key=A"),
	    "status after retry: %s%s", T.out, T.err);
	EXPECT(CHUTE("ls", t_uri, "--key", "A") == 0 && strstr(T.out, "A-1") &&
	    strstr(T.out, " 7 "), "ls --key A: %s%s", T.out, T.err);
	EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--id", "A-3", "--key", "A")
	    == 0 && CHUTE("cancel", t_uri, "A-3") == 0 && CHUTE("cancel",
	    t_uri, "A-1") == 0, "cancel: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.keys WHERE admitted <> 0 OR"
	    " parked <> 0") == 0, "the key's counts back to 0: %s",
	    t_sql("SELECT string_agg(key || ' ' || admitted || ' ' || parked,"
	    ", ') FROM chute.keys"));
}
END_TEST

/*
 * Bad input: one line, exit 64, nothing written.  A limit lowered while
 * jobs of its key run stops none of them; no other job of the key starts
 * until fewer than the new limit run.
 */
START_TEST(test_bad_priorities_keys_and_limits_are_refused_and_a_lowered_limit_stops_nothing)
{
	static const char *const prio[] = { "101", "-101", "1.5", "", "+3",
	    "0x10" };
	char big[10241];
	const char *key[] = { "a/b", "a\001b", "", big, "a b", "é" };
	const char *h = t_handler("h", h_slots);
	pid_t w;

	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	t_write(RP("in"), "x");
	for (size_t i = 0; i < sizeof(prio) / sizeof(prio[0]); i++)
		EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--priority",
		    prio[i]) == 64 && strstr(T.err, "--priority") &&
		    !strchr(T.err, '\001'), "--priority %s: %s", prio[i], T.err);
	for (size_t i = 0; i < sizeof(key) / sizeof(key[0]); i++)
		EXPECT(CHUTE_IN(RP("in"), "submit", t_uri, "--key", key[i]) ==
		    64 && strstr(T.err, "--key") && !strchr(T.err, '\001'),
		    "--key %zu: %s", i, T.err);
	EXPECT(CHUTE("limit", t_uri, "--key", "A", "--max", "0") == 64 &&
	    CHUTE("limit", t_uri, "--key", "A", "--max", "-1") == 64 &&
	    CHUTE("limit", t_uri, "--default", "--rate", "0/1s") == 64 &&
	    CHUTE("limit", t_uri, "--key", "a/b", "--max", "1") == 64,
	    "bad limits: %s", T.err);
	EXPECT(t_sqln("SELECT (SELECT count(*) FROM chute.jobs) + (SELECT"
	    " count(*) FROM chute.limits)") == 0, "nothing written");
	/* Three of A run, held; the limit goes from 3 to 1. */
	LIMIT("--key", "A", "--max", "3");
	t_write(RP("max.A"), "3");
	for (int i = 1; i <= 3; i++)
		t_write(RP(P("hold.A-%d", i)), "");
	keyed_jobs("A", 6, 0);
	w = WORKER("-j", "6", "--lease", "30s", QUICK, "--", h);
	WAIT_UNTIL(starts_of("A") == 3, 20000, "three of A running");
	EXPECT(CHUTE("limit", t_uri, "--key", "A", "--max", "1") == 0 &&
	    strcmp(T.out, "key A: max 1, rate -\n") == 0, "lowered: %s%s",
	    T.out, T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.live WHERE key = 'A' AND"
	    " state = 'cur'") == 3, "the three still run");
	EXPECT(t_sqln("SELECT count(*) FROM chute.live WHERE key = 'A' AND"
	    " state = 'new' AND NOT parked") == 0, "none of the others may start");
	t_write(RP("max.A"), "1");
	/* The held runs end; then one at a time. */
	t_release();
	WAIT_UNTIL(done_count() == 6, 30000, "every job of A done: %ld",
	    done_count());
	EXPECT(t_stop(w) == 0, "the worker stops");
	no_overlap();
	EXPECT(CHUTE("status", t_uri, "A-4") == 0 && strstr(T.out, "key=A"),
	    "status: %s", T.out);
}
END_TEST

Suite *
pgsql_suite(void)
{
	Suite *s = suite_create("pgsql");
	TCase *tc;

	if (t_pg_skip())
		return s;
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "fleet", 120);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_init_twice_and_from_two_processes_at_once_is_safe);
	tcase_add_test(tc, test_a_job_submitted_runs_and_every_command_sees_it);
	tcase_add_test(tc, test_a_submit_of_many_files_goes_in_batches_in_their_order);
	tcase_add_test(tc, test_two_queues_in_one_database_are_kept_apart);
	tcase_add_test(tc, test_wait_on_ids_with_quotes_and_backslashes);
	tcase_add_test(tc, test_exit_75_and_timeout_back_off_then_fail_at_max_attempts);
	tcase_add_test(tc, test_delay_and_at_defer_a_job_until_its_time);
	tcase_add_test(tc, test_cancel_from_another_process_stops_the_running_handler);
	tcase_add_test(tc, test_a_worker_with_every_slot_busy_sleeps_while_work_waits);
	tcase_add_test(tc, test_a_killed_worker_s_job_runs_again_after_its_lease_and_never_at_once);
	tcase_add_test(tc, test_a_killed_worker_s_handler_s_grandchild_dies_with_it);
	tcase_add_test(tc, test_a_killed_persistent_worker_s_grandchild_dies_with_it);
	tcase_add_test(tc, test_a_killed_reaper_is_replaced_and_knows_the_running_groups);
	tcase_add_test(tc, test_a_stopped_worker_s_late_outcome_is_refused);
	tcase_add_test(tc, test_a_frozen_worker_s_handlers_die_before_its_lease_runs_out);
	tcase_add_test(tc, test_a_frozen_worker_s_persistent_worker_dies_before_its_lease);
	tcase_add_test(tc, test_a_refusal_in_a_batch_of_outcomes_names_its_own_job);
	tcase_add_test(tc, test_a_hung_server_cannot_hold_a_worker_past_its_lease);
	tcase_add_test(tc, test_a_worker_started_while_the_database_is_down_waits_for_it);
	tcase_add_test(tc, test_an_oversized_job_is_refused_and_a_flooding_log_is_capped);
	tcase_add_test(tc, test_a_passing_server_error_is_75_and_a_lasting_one_74);
	tcase_add_test(tc, test_a_refused_outcome_batch_is_kept_and_sent_again);
	tcase_add_test(tc, test_persistent_workers_store_each_attempt_s_log);
	tcase_add_test(tc, test_inline_workers_get_hostile_payloads_whole_and_framed);
	tcase_add_test(tc, test_a_worker_s_title_counts_the_queue_and_caps_a_deep_one);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "workers", 120);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_workers_lists_each_worker_with_its_host_pid_slots_and_claims);
	tcase_add_test(tc, test_a_killed_worker_shows_gone_after_its_lease_with_its_claims);
	tcase_add_test(tc, test_rows_of_workers_gone_for_an_hour_are_deleted_a_hundred_at_once);
	tcase_add_test(tc, test_a_paused_queue_claims_nothing_and_its_running_job_finishes);
	tcase_add_test(tc, test_pause_and_resume_reach_a_worker_whose_poll_is_an_hour_away);
	tcase_add_test(tc, test_an_outcome_batch_larger_than_the_socket_is_sent_whole);
	suite_add_tcase(s, tc);
	/* Rows, replies and local files made by someone hostile (issue 26). */
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "hostile", 180);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_bad_uris_and_bad_passwords_are_refused_without_the_password);
	tcase_add_test(tc, test_a_row_whose_id_is_a_path_is_failed_and_never_touched_on_disk);
	tcase_add_test(tc, test_a_claim_reply_of_more_rows_than_asked_is_bounded);
	tcase_add_test(tc, test_the_upgrade_to_version_3_fails_bad_ids_and_adds_the_check);
	tcase_add_test(tc, test_init_upgrades_a_version_7_database_as_that_release_left_it);
	tcase_add_test(tc, test_init_upgrades_a_version_12_database_with_dependents_waiting);
	tcase_add_test(tc, test_init_upgrades_a_version_6_database_as_that_release_left_it);
	tcase_add_test(tc, test_init_upgrades_a_version_5_database_as_that_release_left_it);
	tcase_add_test(tc, test_an_operator_s_view_stops_the_upgrade_to_6_with_its_name);
	tcase_add_test(tc, test_init_upgrades_a_version_4_database_as_that_release_left_it);
	tcase_add_test(tc, test_init_upgrades_a_version_2_database_as_that_release_left_it);
	tcase_add_test(tc, test_init_upgrades_version_3_and_2_to_4_and_keeps_the_jobs);
	tcase_add_test(tc, test_a_worker_that_cannot_go_on_exits_78_or_77_saying_why);
	tcase_add_test(tc, test_a_worker_row_with_an_absurd_lease_breaks_no_statement);
	tcase_add_test(tc, test_a_worker_s_sweep_of_dead_workers_follows_no_symlink);
	tcase_add_test(tc, test_status_of_a_queue_escapes_a_forged_last);
	tcase_add_test(tc, test_a_flooding_handler_s_local_log_is_capped_as_the_database_s);
	suite_add_tcase(s, tc);
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "retention", 180);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_a_queue_kept_0_leaves_nothing_and_wait_still_gets_the_outcome);
	tcase_add_test(tc, test_retention_removes_finished_jobs_at_their_time_under_three_workers);
	tcase_add_test(tc, test_retention_refuses_bad_durations_and_touches_nothing);
	tcase_add_test(tc, test_a_wait_for_one_removed_job_names_it);
	suite_add_tcase(s, tc);
	/* What a submitter sharing the workers' role can do (issue 35). */
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "shared", 180);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_a_stray_finished_row_costs_no_batch_and_the_journal_waits);
	tcase_add_test(tc, test_planted_log_rows_ahead_of_the_sequence_cost_no_batch);
	tcase_add_test(tc, test_a_cancel_in_a_queue_with_a_space_stops_no_other_job);
	tcase_add_test(tc, test_server_warnings_and_errors_come_out_escaped);
	tcase_add_test(tc, test_infinite_times_are_refused_and_stop_the_upgrade_to_7);
	suite_add_tcase(s, tc);
	/* Thousands of handler runs: minutes on a busy 2-core machine. */
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "many", 900);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_two_workers_run_each_of_2000_jobs_exactly_once);
	tcase_add_test(tc, test_three_workers_run_each_of_2000_jobs_exactly_once);
	tcase_add_test(tc, test_server_restarts_and_killed_connections_lose_nothing);
	suite_add_tcase(s, tc);
	/* Priorities, keys and limits (issue 36): a witness outside. */
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "sched", 300);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_four_workers_of_four_slots_keep_every_key_s_limit);
	tcase_add_test(tc, test_a_key_s_limit_holds_when_a_worker_is_killed);
	tcase_add_test(tc, test_a_key_s_limit_holds_when_a_worker_is_frozen_past_its_lease);
	tcase_add_test(tc, test_a_hot_key_at_its_limit_holds_up_no_other_key);
	tcase_add_test(tc, test_a_rate_and_the_whole_queue_s_bound_are_exact_across_workers);
	tcase_add_test(tc, test_a_low_priority_job_starts_within_the_share_of_the_oldest);
	tcase_add_test(tc, test_retry_keeps_priority_and_key_and_every_end_frees_the_key);
	tcase_add_test(tc, test_bad_priorities_keys_and_limits_are_refused_and_a_lowered_limit_stops_nothing);
	suite_add_tcase(s, tc);
	return s;
}
