/*
 * check_forward.c: `chute forward SPOOL URL` end to end against a real
 * PostgreSQL server (t_pg.c): the database down while users submit into
 * the spool, kill -9 of forward at random instants, a server crash in the
 * middle of a batch, two hosts' spools with the same job names, the
 * schema upgrade.  What arrived is checked in the database (every job
 * exactly once, its exact bytes), what stayed in the spool, and what ran.
 */
#include <sys/stat.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"

/* `chute forward SPOOL URL ARGS...` in the background; its log is RP(log). */
#define FORWARD(spool, log, ...)					\
	t_spawn((const char *const[]){ T.bin, "forward", (spool), t_uri,	\
	    __VA_ARGS__, NULL }, NULL, RP(log), RP(log), NULL)

/* The content every test job gets: its name, so a mix-up shows. */
static const char *
body_of(const char *id)
{
	return P("payload of %s\n", id);
}

/* Jobs whose database row holds exactly the bytes their spool file had. */
static long
exact_payloads(void)
{
	return t_sqln("SELECT count(*) FROM chute.jobs j JOIN chute.payloads p"
	    " USING (queue, id) WHERE p.body = convert_to('payload of ' ||"
	    " p.origin_id || E'\\n', 'UTF8') AND j.size = length(p.body)");
}

/* How many times text occurs in the file at path. */
static int
occurrences(const char *path, const char *text)
{
	char *s = t_slurp(path), *p = s;
	int n = 0;

	while (p != NULL && (p = strstr(p, text)) != NULL) {
		n++;
		p += strlen(text);
	}
	free(s);
	return n;
}

/* n jobs f0000.. dropped into new/ as `mv` does. */
static void
drop_many(int n)
{
	for (int i = 0; i < n; i++) {
		const char *id = P("f%04d", i);
		t_drop(id, body_of(id));
	}
}

/* Wait until the database holds n rows. */
static void
await_rows(long n, int ms)
{
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.jobs") >= n, ms,
	    "%ld jobs in the database after %d ms, not %ld", t_sqln("SELECT "
	    "count(*) FROM chute.jobs"), ms, n);
}

/* ---- the basics ---- */

START_TEST(test_forwarded_jobs_arrive_once_and_both_sides_say_where)
{
	pid_t fw;
	char *st;

	t_submit_as("a1", body_of("a1"));
	t_drop("report.csv", body_of("report.csv"));
	EXPECT(mkfifo(SP("new", "pipe"), 0600) == 0, "mkfifo");
	/* One byte over the database's limit: sparse, never read. */
	{
		int fd = open(SP("tmp", "big"), O_WRONLY | O_CREAT | O_CLOEXEC,
		    0644);
		EXPECT(fd != -1 && ftruncate(fd, (64LL << 20) + 1) == 0,
		    "big: %s", strerror(errno));
		close(fd);
		EXPECT(rename(SP("tmp", "big"), SP("new", "big")) == 0, "mv big");
	}
	fw = FORWARD(T.spool, "fw.log", "--drain");
	EXPECT(t_reap(fw, 30000, "forward --drain") == 0, "forward: %s",
	    t_log_of(fw));
	EXPECT(t_exists(SP("done", "a1")) && t_exists(SP("done", "report.csv")),
	    "forwarded jobs are in done/");
	EXPECT(t_exists(SP("failed", "pipe")) && t_exists(SP("failed", "big")),
	    "the FIFO and the oversized job are in failed/");
	EXPECT(strstr(t_slurp(SP("log", "pipe")), "rejected: not a regular file"),
	    "the FIFO is refused as run refuses it");
	EXPECT(strstr(t_slurp(SP("log", "big")), "larger than 64 MiB"),
	    "the oversized job says why: %s", t_slurp(SP("log", "big")));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 2 &&
	    exact_payloads() == 2, "two jobs, exact bytes");
	st = t_status("a1");
	EXPECT(t_token(st, "forwarded") && strstr(st, " to default at ") &&
	    strstr(st, " as a1"), "status SPOOL: %s", st);
	EXPECT(CHUTE("status", t_uri, "a1") == 0 && t_token(T.out, "new"),
	    "status URL finds it by the same ID: %s%s", T.out, T.err);
	EXPECT(strstr(t_slurp(SP("log", "a1")), "forwarded to default at "),
	    "the log says where it went");
	/* Forwarded, then run by a worker of the fleet. */
	EXPECT(t_reap(t_owner(NULL, t_uri, "--drain", "--", h_journal(),
	    (const char *)NULL), 30000, "worker") == 0, "worker");
	EXPECT(t_journal_count("a1") == 1 && t_journal_count("report.csv") == 1,
	    "each ran once");
	EXPECT(strcmp(t_slurp(RP("seen/a1")), body_of("a1")) == 0, "its bytes");
}
END_TEST

/*
 * One batch, one log file: the jobs that kept their IDs share the line
 * that says where they went, and a line later written for one of them
 * (an operator puts it back in new/, and forward sends it again) goes to
 * that job's own copy only.
 */
START_TEST(test_a_batch_shares_one_log_line_until_one_job_gets_more)
{
	struct stat a, b;
	char *st;
	pid_t fw;

	drop_many(3);
	fw = FORWARD(T.spool, "fw.log", "--drain");
	EXPECT(t_reap(fw, 30000, "forward --drain") == 0, "forward: %s",
	    t_log_of(fw));
	EXPECT(stat(SP("log", "f0000"), &a) == 0 && stat(SP("log", "f0002"),
	    &b) == 0 && a.st_ino == b.st_ino && a.st_nlink == 3,
	    "one log file for the batch (links %lu)", (unsigned long)a.st_nlink);
	EXPECT(t_entries(SP("log", ".pool")) == 0, "nothing left in log/.pool/");
	st = t_status("f0001");
	EXPECT(t_token(st, "forwarded") && strstr(st, " as f0001"),
	    "status SPOOL says the ID: %s", st);
	EXPECT(rename(SP("done", "f0001"), SP("new", "f0001")) == 0, "mv");
	fw = FORWARD(T.spool, "fw2.log", "--drain");
	EXPECT(t_reap(fw, 30000, "forward --drain again") == 0, "forward: %s",
	    t_log_of(fw));
	EXPECT(occurrences(SP("log", "f0001"), "forwarded to default") == 2 &&
	    occurrences(SP("log", "f0001"), "from an earlier try") == 1,
	    "the job sent again: %s", t_slurp(SP("log", "f0001")));
	EXPECT(occurrences(SP("log", "f0000"), "forwarded to default") == 1 &&
	    occurrences(SP("log", "f0002"), "forwarded to default") == 1,
	    "the others' logs are untouched: %s", t_slurp(SP("log", "f0000")));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 3, "still 3 rows");
	EXPECT(stat(SP("log", "f0000"), &a) == 0 && a.st_nlink == 2 &&
	    stat(SP("log", "f0001"), &b) == 0 && b.st_nlink == 1,
	    "f0001 has its own log now");
}
END_TEST

START_TEST(test_forward_owns_the_spool_as_run_does)
{
	pid_t fw = FORWARD(T.spool, "fw.log", "--batch", "8");

	t_await_lock(fw, 10000);
	EXPECT(CHUTE("forward", T.spool, t_uri) == 75 && strstr(T.err,
	    "owned by pid"), "a second forward: %s", T.err);
	EXPECT(t_reap(OWNER("--drain", "--", "/bin/true"), 10000, "run") == 75,
	    "chute run on a forwarded spool is refused");
	EXPECT(CHUTE("forward", T.spool) == 64, "no URL: usage error");
	EXPECT(CHUTE("forward", T.spool, t_uri, "--batch", "0") == 64, "--batch 0");
	EXPECT(t_stop(fw) == 0, "SIGTERM: exit 0: %s", t_log_of(fw));
}
END_TEST

/*
 * A paused spool is not forwarded: forward says so, its title shows the
 * jobs waiting (the sign that it saw them and sent none), --drain waits;
 * after chute resume they arrive and --drain exits 0.  A pause of the
 * database's queue does not stop forward: its inserts are submissions.
 */
START_TEST(test_a_paused_spool_is_not_forwarded_until_resumed)
{
	pid_t fw;

	EXPECT(CHUTE("pause", t_uri) == 0, "pause the queue: %s", T.err);
	drop_many(2);
	EXPECT(CHUTE("pause", T.spool) == 0, "pause the spool: %s", T.err);
	fw = FORWARD(T.spool, "fw.log", "--drain");
	WAIT_UNTIL(t_log_count(fw, ": paused by ") == 1, 10000, "forward to "
	    "say it is paused: %s", t_log_of(fw));
	t_drop("late", body_of("late"));
	WAIT_UNTIL(strstr(t_title(fw), "queued=3 paused") != NULL, 10000,
	    "the title to count the 3 waiting: %s", t_title(fw));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 0, "forwarded "
	    "while paused: %s", t_log_of(fw));
	EXPECT(CHUTE("resume", T.spool) == 0, "resume: %s", T.err);
	EXPECT(t_reap(fw, 30000, "forward --drain") == 0, "--drain after the "
	    "resume: 0: %s", t_log_of(fw));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE state = 'new'") ==
	    3 && exact_payloads() == 3, "the 3 jobs, new in the paused queue");
	EXPECT(occurrences(RP("fw.log"), "resumed") == 1, "resumed said");
}
END_TEST

START_TEST(test_two_hosts_spools_with_the_same_names_both_arrive)
{
	char other[1200];
	pid_t a, b;

	snprintf(other, sizeof(other), "%s/spool2", T.root);
	EXPECT(CHUTE("init", other) == 0, "init spool2");
	for (int i = 0; i < 20; i++) {
		const char *id = P("same%02d", i);
		t_drop(id, body_of(id));
		t_write(P("%s/tmp/%s", other, id), body_of(id));
		EXPECT(rename(P("%s/tmp/%s", other, id), P("%s/new/%s", other,
		    id)) == 0, "drop into spool2");
	}
	a = FORWARD(T.spool, "a.log", "--origin", "hosta", "--drain");
	b = FORWARD(other, "b.log", "--origin", "hostb", "--drain");
	EXPECT(t_reap(a, 30000, "forward a") == 0, "a: %s", t_log_of(a));
	EXPECT(t_reap(b, 30000, "forward b") == 0, "b: %s", t_log_of(b));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 40 &&
	    t_sqln("SELECT count(DISTINCT id) FROM chute.jobs") == 40 &&
	    t_sqln("SELECT count(DISTINCT origin) FROM chute.payloads") == 2,
	    "40 jobs under 40 IDs from 2 origins: %s", t_sql("SELECT string_agg("
	    "origin || ':' || id, ' ') FROM chute.payloads"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.payloads WHERE id = origin_id") == 20,
	    "one of each pair kept its ID");
	EXPECT(exact_payloads() == 40, "exact bytes");
	/* The one that lost the race says which ID it got, on both sides. */
	for (int i = 0; i < 20; i++) {
		const char *id = P("same%02d", i), *log;
		char *lb = t_slurp(P("%s/log/%s", other, id)), *la =
		    t_slurp(SP("log", id));

		log = strstr(la, "its ID was taken") ? la : lb;
		EXPECT(strstr(log, P(" as %s-", id)) != NULL,
		    "the derived ID is in the log: %s", log);
		free(la);
		free(lb);
	}
}
END_TEST

START_TEST(test_init_upgrades_a_version_1_database)
{
	pid_t fw;

	const char *src = getenv("CHUTE_SRCDIR");
	char *sql = t_slurp(P("%s/tests/data/schema-v3.sql", src ? src : "."));

	/* Version 1: version 3's dump (check_pgsql.c) without forward's parts. */
	EXPECT(sql != NULL, "tests/data/schema-v3.sql: not found");
	free(t_uri);
	t_uri = t_pg_newdb();
	EXPECT(t_pg_sql(t_uri, sql, NULL, 0) == 0 && t_pg_sql(t_uri, "DROP INDEX"
	    " chute.jobs_origin; ALTER TABLE chute.jobs DROP CONSTRAINT"
	    " jobs_id_valid, DROP COLUMN origin, DROP COLUMN origin_spool, DROP"
	    " COLUMN origin_id, DROP COLUMN origin_birth; UPDATE chute.version"
	    " SET version = 1", NULL, 0) == 0, "back to 1: %s", t_pg_error());
	free(sql);
	t_drop("u1", body_of("u1"));
	EXPECT(CHUTE("forward", T.spool, t_uri, "--drain") == 78 &&
	    strstr(T.err, "run chute init"), "version 1 is refused: %s", T.err);
	EXPECT(t_exists(SP("new", "u1")), "the job is back in new/");
	EXPECT(CHUTE("init", t_uri) == 0 && strstr(T.out, "(upgraded)"),
	    "init upgrades: %s%s", T.out, T.err);
	EXPECT(t_sqln("SELECT version FROM chute.version") == 13,
	    "version 13, the current one");
	fw = FORWARD(T.spool, "fw.log", "--drain");
	EXPECT(t_reap(fw, 30000, "forward") == 0, "forward: %s", t_log_of(fw));
	EXPECT(exact_payloads() == 1, "u1 arrived");
}
END_TEST

/* ---- failures ---- */

/*
 * The database down for 10 s while forward runs and users keep
 * submitting, with chute submit and with mv: nothing lost, nothing
 * failed, no attempt used, one line when it went and one when it came
 * back; everything arrives and runs after.
 */
/*
 * Claims stay in new/: a job whose name an operator's mv already used in
 * done/ (no log with it) is only found at its final rename, and goes to
 * done/ under a derived ID; nothing is overwritten.
 */
START_TEST(test_a_name_taken_in_done_without_a_log_gets_a_derived_id)
{
	char *log;
	pid_t fw;

	t_write(SP("done", "x1"), "the old job\n");
	t_drop("x1", body_of("x1"));
	fw = FORWARD(T.spool, "fw.log", "--drain");
	EXPECT(t_reap(fw, 30000, "forward --drain") == 0, "forward: %s",
	    t_log_of(fw));
	EXPECT(strcmp(t_slurp(SP("done", "x1")), "the old job\n") == 0,
	    "done/x1 untouched");
	EXPECT(t_count_state("done") == 2 && t_count_state("new") == 0,
	    "the job is in done/ under another name");
	log = t_slurp(SP("log", "x1"));
	EXPECT(log == NULL || strstr(log, "forwarded") == NULL,
	    "no log/x1 of the forwarded job: %s", log ? log : "");
	EXPECT(t_sqln("SELECT count(*) FROM chute.payloads WHERE origin_id = 'x1'")
	    == 1 && exact_payloads() == 1, "in the database once, exact");
	EXPECT(strstr(t_log_of(fw), "renamed to=") != NULL, "said: %s",
	    t_log_of(fw));
}
END_TEST

/*
 * A spool job's name carries its priority and key (,p=N ,k=KEY, issue 36):
 * they go into the row's columns, the ID staying the whole name; a name
 * with an attribute chute does not know goes to failed/ with the reason,
 * never into the database without it.
 */
START_TEST(test_a_name_s_priority_and_key_go_into_the_row)
{
	pid_t fw;

	t_drop("f1,p=7,k=cust.1", body_of("f1,p=7,k=cust.1"));
	t_drop("f2", body_of("f2"));
	t_drop("f3,z=1", body_of("f3,z=1"));
	fw = FORWARD(T.spool, "fw.log", "--drain");
	EXPECT(t_reap(fw, 30000, "forward --drain") == 0, "forward: %s",
	    t_log_of(fw));
	EXPECT(strcmp(t_sql("SELECT string_agg(id || ' ' || priority || ' ' ||"
	    " coalesce(key, '-'), ', ' ORDER BY id) FROM chute.jobs"),
	    "f1,p=7,k=cust.1 7 cust.1, f2 0 -") == 0, "rows: %s",
	    t_sql("SELECT string_agg(id || ' ' || priority || ' ' ||"
	    " coalesce(key, '-'), ', ' ORDER BY id) FROM chute.jobs"));
	EXPECT(t_exists(SP("failed", "f3,z=1")) && strstr(t_log_of(fw),
	    "job=f3,z=1 new->failed refused: its name's attributes"),
	    "f3 refused: %s", t_log_of(fw));
	EXPECT(CHUTE("status", t_uri, "f1,p=7,k=cust.1") == 0 && strstr(T.out,
	    "priority=7 key=cust.1"), "status: %s%s", T.out, T.err);
}
END_TEST

/*
 * chute cancel of a job while its batch waits for the database: the
 * cancel wins locally (failed/), the database gets it all the same, and
 * its log and forward's journal say so and how to stop it there.
 */
START_TEST(test_a_cancel_while_the_batch_is_in_flight_is_told)
{
	pid_t fw;
	char *log;

	t_drop("c1", body_of("c1"));
	t_drop("c2", body_of("c2"));
	t_pg_down();
	fw = FORWARD(T.spool, "fw.log", "--batch", "8");
	WAIT_UNTIL(occurrences(RP("fw.log"), "unreachable") == 1, 20000,
	    "forward said nothing: %s", t_log_of(fw));
	EXPECT(CHUTE("cancel", T.spool, "c1") == 0, "cancel: %s", T.err);
	t_pg_up();
	WAIT_UNTIL(t_count_state("done") == 1, 30000, "c2 in done/: %s",
	    t_log_of(fw));
	WAIT_UNTIL(occurrences(RP("fw.log"), "left new/") == 1, 10000,
	    "said: %s", t_log_of(fw));
	EXPECT(t_exists(SP("failed", "c1")) && t_exists(SP("done", "c2")),
	    "c1 cancelled here, c2 done");
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 2, "both there");
	log = t_slurp(SP("log", "c1"));
	EXPECT(strstr(log, "left new/ while being forwarded") &&
	    strstr(log, " as c1"), "c1's log: %s", log);
	EXPECT(strstr(t_log_of(fw), "chute cancel URL c1"), "how: %s",
	    t_log_of(fw));
	EXPECT(t_stop(fw) == 0, "forward stops: %s", t_log_of(fw));
}
END_TEST

START_TEST(test_the_database_down_for_10s_loses_nothing_and_uses_no_attempt)
{
	pid_t fw = FORWARD(T.spool, "fw.log", "--batch", "16");
	int64_t until;
	int n = 0;

	t_await_lock(fw, 10000);
	t_submit_as("before", body_of("before"));
	await_rows(1, 20000);
	t_pg_down();
	/*
	 * A job every 100 ms for 10 s, one in five by chute submit (a
	 * process each: the harness allows a test 32), the others by mv.
	 */
	until = t_mono() + 10000;
	for (int64_t next = t_mono(); next < until; next += 100) {
		const char *id = P("d%04d", n++);

		WAIT_UNTIL(t_mono() >= next, 1000, "the clock");
		if (n % 5 == 1)
			t_submit_as(id, body_of(id));
		else
			t_drop(id, body_of(id));
	}
	WAIT_UNTIL(occurrences(RP("fw.log"), "unreachable") == 1, 10000,
	    "forward said nothing: %s", t_log_of(fw));
	EXPECT(t_count_state("failed") == 0, "nothing failed while down");
	t_pg_up();
	await_rows(n + 1, 60000);
	WAIT_UNTIL(t_count_state("done") == n + 1, 10000, "all in done/");
	EXPECT(occurrences(RP("fw.log"), "unreachable") == 1 &&
	    occurrences(RP("fw.log"), "reachable again") == 1,
	    "said once each way: %s", t_log_of(fw));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == n + 1 &&
	    exact_payloads() == n + 1 && t_count_state("failed") == 0,
	    "%d jobs, each once, exact", n + 1);
	/* Attempts are the start lines of the log: there are none. */
	for (int i = 0; i < n; i++) {
		const char *id = P("d%04d", i);
		EXPECT(occurrences(SP("log", id), " start") == 0 &&
		    occurrences(SP("log", id), "forwarded to") == 1,
		    "%s: %s", id, t_slurp(SP("log", id)));
	}
	EXPECT(strstr(t_status("d0001"), "forwarded attempts=0"), "status: %s",
	    t_status("d0001"));
	EXPECT(t_stop(fw) == 0, "forward stops: %s", t_log_of(fw));
	EXPECT(t_reap(t_owner(NULL, t_uri, "-j", "2", "--drain", "--",
	    h_journal(), (const char *)NULL), 60000, "worker") == 0, "worker");
	EXPECT(t_journal_total() == n + 1, "all ran: %d of %d",
	    t_journal_total(), n + 1);
}
END_TEST

/* Every one of the 500 jobs in the database exactly once, exactly. */
static void
expect_500_once(void)
{
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 500 &&
	    t_sqln("SELECT count(DISTINCT origin_id) FROM chute.payloads") == 500 &&
	    t_sqln("SELECT count(*) FROM chute.payloads WHERE id <> origin_id") == 0,
	    "500 jobs, each once under its own ID: %ld rows",
	    t_sqln("SELECT count(*) FROM chute.jobs"));
	EXPECT(exact_payloads() == 500, "exact payloads: %ld", exact_payloads());
	EXPECT(t_count_state("done") == 500 && t_count_state("failed") == 0,
	    "all in done/, none failed");
}

/*
 * Mark the jobs a killed forward left half done: in the database, still
 * in new/ (its claims stay there); how many.
 */
static int
mark_left(bool *left, int n)
{
	const char *ids = t_sql("SELECT ',' || string_agg(origin_id, ',') || ',' "
	    "FROM chute.payloads");
	int k = 0;

	for (int i = 0; i < n; i++)
		if (t_exists(SP("new", P("f%04d", i))) &&
		    strstr(ids, P(",f%04d,", i)) != NULL) {
			left[i] = true;
			k++;
		}
	return k;
}

START_TEST(test_kill_9_at_random_instants_creates_nothing_twice)
{
	bool left[500] = { false };
	pid_t fw;
	int mid = 0;

	drop_many(500);
	srandom((unsigned)getpid());
	for (int round = 0; round < 20; round++) {
		/* Killed once the spool has moved on by a random amount. */
		int target = t_count_state("done") + 1 + (int)(random() % 10);

		fw = FORWARD(T.spool, P("fw.%d.log", round), "--batch",
		    P("%d", 1 + (int)(random() % 24)));
		WAIT_UNTIL(t_count_state("done") >= target ||
		    t_count_state("done") == 500, 30000, "round %d: no progress:"
		    " %s", round, t_log_of(fw));
		kill(fw, SIGKILL);
		EXPECT(t_reap(fw, 10000, "killed forward") == 128 + SIGKILL,
		    "killed");
		mid += mark_left(left, 500) > 0;
	}
	/* Its pipeline holds claims while it works: kills found some. */
	EXPECT(mid > 0, "no kill left a batch sent and still in new/");
	fw = FORWARD(T.spool, "fw.last.log", "--drain");
	EXPECT(t_reap(fw, 60000, "forward --drain") == 0, "last: %s",
	    t_log_of(fw));
	expect_500_once();
	/*
	 * A job a killed forward left sent says it was found there.  (A kill
	 * between its log line and its rename to done/ leaves the line
	 * twice: the crash window of fleet.md.)
	 */
	for (int i = 0; i < 500; i++) {
		const char *log = SP("log", P("f%04d", i));

		EXPECT(occurrences(log, "abandoned") == 0 &&
		    occurrences(log, "forwarded to") >= 1 && (!left[i] ||
		    occurrences(log, "found there from an earlier try") >= 1),
		    "f%04d: %s", i, t_slurp(log));
	}
	EXPECT(t_count_state("cur") == 0, "nothing in cur/");
}
END_TEST

START_TEST(test_a_server_crash_in_the_middle_of_a_batch_loses_and_doubles_nothing)
{
	pid_t fw;

	drop_many(500);
	fw = FORWARD(T.spool, "fw.log", "--batch", "50");
	await_rows(1, 30000);
	t_pg_restart_immediate();
	WAIT_UNTIL(t_count_state("done") == 500, 60000, "not all done: %s",
	    t_log_of(fw));
	expect_500_once();
	EXPECT(t_stop(fw) == 0, "forward stops: %s", t_log_of(fw));
}
END_TEST

Suite *
forward_suite(void)
{
	Suite *s = suite_create("forward");
	TCase *tc;

	if (t_pg_skip())
		return s;
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "forward", 300);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_forwarded_jobs_arrive_once_and_both_sides_say_where);
	tcase_add_test(tc, test_a_name_s_priority_and_key_go_into_the_row);
	tcase_add_test(tc, test_a_batch_shares_one_log_line_until_one_job_gets_more);
	tcase_add_test(tc, test_forward_owns_the_spool_as_run_does);
	tcase_add_test(tc, test_a_paused_spool_is_not_forwarded_until_resumed);
	tcase_add_test(tc, test_two_hosts_spools_with_the_same_names_both_arrive);
	tcase_add_test(tc, test_init_upgrades_a_version_1_database);
	tcase_add_test(tc, test_a_name_taken_in_done_without_a_log_gets_a_derived_id);
	tcase_add_test(tc, test_a_cancel_while_the_batch_is_in_flight_is_told);
	tcase_add_test(tc, test_the_database_down_for_10s_loses_nothing_and_uses_no_attempt);
	tcase_add_test(tc, test_kill_9_at_random_instants_creates_nothing_twice);
	tcase_add_test(tc, test_a_server_crash_in_the_middle_of_a_batch_loses_and_doubles_nothing);
	suite_add_tcase(s, tc);
	return s;
}
