/*
 * check_pg_view.c: what a live view reads of a queue (pg_view.c), called
 * directly against a real PostgreSQL server (t_pg.c), one fresh database
 * per test: rows made with SQL where a state or a time must be exact,
 * and by real workers where the claim and its notification are what is
 * tested.  Compiled with libpq's flags; the runner links pg_view.o and
 * the two objects it uses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"
#include "queue/pg/pg.h"
#include "queue/pg/pg_view.h"

static struct pg pg;

static void
setup(void)
{
	t_fleet_setup();
	memset(&pg, 0, sizeof(pg));
	EXPECT(pg_parse(&pg, t_uri, "default") == 0, "parse %s", t_uri);
	EXPECT(pg_connect(&pg, false, 0) == 0, "connect: %s", pg_error(&pg));
}

static void
teardown(void)
{
	pg_close(&pg);
	free(pg.uri);
	pg.uri = NULL;
	t_fleet_teardown();
}

/* n rows of queue q in state st, IDs PREFIX1..PREFIXn, run_at = now() + at. */
static void
rows(const char *q, const char *prefix, int n, const char *st, const char *at)
{
	bool fin = strcmp(st, "done") == 0 || strcmp(st, "failed") == 0;

	/* Finished jobs have a table of their own (schema version 5). */
	if (fin)
		t_sql(P("INSERT INTO chute.finished (queue, id, state, size,"
		    " run_at) SELECT '%s', '%s' || i, '%s', 1, now() + interval"
		    " '%s' FROM generate_series(1, %d) i", q, prefix, st, at, n));
	else
		t_sql(P("INSERT INTO chute.live (queue, id, state, size, run_at,"
		    " token) SELECT '%s', '%s' || i, '%s', 1, now() + interval"
		    " '%s', CASE WHEN '%s' = 'cur' THEN nextval('chute.fence')"
		    " END FROM generate_series(1, %d) i", q, prefix, st, at, st,
		    n));
}

static struct pgv_counts
counts(void)
{
	struct pgv_counts c;

	EXPECT(pgv_counts(&pg, &c) == 0, "pgv_counts: %s", pg_error(&pg));
	return c;
}

#define EXPECT_COUNT(c, st, num, k) EXPECT((c).n[st] == (num) &&	\
	(c).kind[st] == (k), "%s: %lld (kind %d), not %lld (kind %d)",	\
	state_names[st], (c).n[st], (c).kind[st], (long long)(num), (k))

/* ---- counts ---- */

START_TEST(test_counts_of_a_small_queue_are_exact_and_its_own)
{
	struct pgv_counts c;

	rows("default", "n", 3, "new", "-1 second");
	rows("default", "d", 2, "defer", "1 hour");
	rows("default", "due", 1, "defer", "-1 minute");
	rows("default", "c", 2, "cur", "-1 minute");
	rows("default", "ok", 4, "done", "-1 minute");
	rows("default", "f", 1, "failed", "-1 minute");
	rows("other", "n", 5, "new", "-1 second");
	rows("other", "f", 5, "failed", "-1 second");
	c = counts();
	EXPECT_COUNT(c, ST_NEW, 3, PGV_EXACT);
	EXPECT_COUNT(c, ST_DEFER, 3, PGV_EXACT);
	EXPECT_COUNT(c, ST_CUR, 2, PGV_EXACT);
	EXPECT_COUNT(c, ST_DONE, 4, PGV_EXACT);
	EXPECT_COUNT(c, ST_FAILED, 1, PGV_EXACT);
}
END_TEST

/* Within 10% of n: an estimate of the planner's. */
#define ABOUT(c, st, num) ((c).kind[st] == PGV_ABOUT &&			\
	(c).n[st] > (num) * 9 / 10 && (c).n[st] < (num) * 11 / 10)

/*
 * Past PGV_COUNT_MAX a count is the planner's estimate, of this queue's
 * jobs in that state: another queue's million done beside this one's new
 * ones must not pass for half of each (chute.jobs_queue_state).  Below
 * the bound it stays exact, the few failed among the done included.
 */
START_TEST(test_counts_past_the_bound_are_estimates_of_this_queue_s_jobs)
{
	struct pgv_counts c;

	rows("default", "n", 3 * PGV_COUNT_MAX, "new", "-1 second");
	rows("default", "c", 2 * PGV_COUNT_MAX, "cur", "-1 second");
	rows("default", "ok", 2 * PGV_COUNT_MAX, "done", "-1 minute");
	rows("default", "f", 3, "failed", "-1 minute");
	rows("default", "d", 7, "defer", "1 hour");
	rows("other", "ok", 6 * PGV_COUNT_MAX, "done", "-1 minute");
	rows("other", "n", 5, "new", "-1 minute");
	t_sql("ANALYZE chute.live, chute.finished");
	c = counts();
	EXPECT(ABOUT(c, ST_NEW, 3 * PGV_COUNT_MAX), "new: %lld (kind %d), not "
	    "about %d", c.n[ST_NEW], c.kind[ST_NEW], 3 * PGV_COUNT_MAX);
	EXPECT(ABOUT(c, ST_CUR, 2 * PGV_COUNT_MAX), "cur: %lld (kind %d)",
	    c.n[ST_CUR], c.kind[ST_CUR]);
	EXPECT(ABOUT(c, ST_DONE, 2 * PGV_COUNT_MAX), "done: %lld (kind %d)",
	    c.n[ST_DONE], c.kind[ST_DONE]);
	EXPECT_COUNT(c, ST_FAILED, 3, PGV_EXACT);
	/*
	 * The due range was cut before the deferred jobs: what was read of
	 * them is a lower bound, or the estimate of the seven.
	 */
	EXPECT(c.kind[ST_DEFER] == PGV_ATLEAST || c.n[ST_DEFER] < 20,
	    "defer %lld kind %d", c.n[ST_DEFER], c.kind[ST_DEFER]);
}
END_TEST

/* ---- jobs ---- */

START_TEST(test_running_jobs_come_oldest_claim_first_with_worker_and_lease)
{
	struct pgv_job v[3];
	int n;

	t_sql("INSERT INTO chute.live (queue, id, state, size, token, worker,"
	    " claimed, lease_until, attempts) VALUES"
	    " ('default', 'second', 'cur', 1, 5, 'h:1', now() - interval '10 s',"
	    "  now() + interval '20 s', 1),"
	    " ('default', 'first', 'cur', 1, 3, 'h:2', now() - interval '30 s',"
	    "  now() - interval '5 s', 2),"
	    " ('default', 'old', 'cur', 1, 9, 'h:1', NULL, now(), 1),"
	    " ('other', 'x', 'cur', 1, 1, 'h:3', now(), now(), 1)");
	n = pgv_running(&pg, v, 2);
	EXPECT(n == 2, "pgv_running: %d: %s", n, pg_error(&pg));
	EXPECT(strcmp(v[0].id, "first") == 0 && strcmp(v[1].id, "second") == 0,
	    "order: %s %s", v[0].id, v[1].id);
	EXPECT(strcmp(v[0].worker, "h:2") == 0 && v[0].attempts == 2,
	    "worker %s attempts %d", v[0].worker, v[0].attempts);
	EXPECT(v[0].elapsed >= 30000 && v[0].lease_left <= -5000 &&
	    v[1].elapsed >= 10000 && v[1].elapsed < v[0].elapsed &&
	    v[1].lease_left > 0 && v[1].lease_left <= 20000,
	    "elapsed %lld %lld, lease %lld %lld", (long long)v[0].elapsed,
	    (long long)v[1].elapsed, (long long)v[0].lease_left,
	    (long long)v[1].lease_left);
	EXPECT(v[0].when > 0 && v[1].when - v[0].when >= 19000,
	    "when %lld %lld", (long long)v[0].when, (long long)v[1].when);
	n = pgv_running(&pg, v, 3);
	EXPECT(n == 3 && strcmp(v[2].id, "old") == 0 && v[2].elapsed == -1,
	    "a claim without its time: %d %s %lld", n, v[2].id,
	    (long long)v[2].elapsed);
}
END_TEST

/* A real worker's claim names it and dates itself (claimed = now()). */
START_TEST(test_a_worker_s_claim_shows_its_worker_and_time)
{
	struct pgv_job v[2];
	pid_t w;
	int n = 0;

	t_fleet_submit("default", "b1", "x\n");
	w = t_owner(NULL, t_uri, "--", h_block(), (const char *)NULL);
	WAIT_UNTIL((n = pgv_running(&pg, v, 2)) == 1, 20000,
	    "b1 is not running: %d %s", n, pg_error(&pg));
	EXPECT(strcmp(v[0].id, "b1") == 0 && v[0].elapsed >= 0 &&
	    strstr(v[0].worker, P(":%ld", (long)w)) != NULL && v[0].attempts == 1,
	    "b1: worker %s elapsed %lld attempts %d (worker pid %ld)",
	    v[0].worker, (long long)v[0].elapsed, v[0].attempts, (long)w);
	t_release();
	EXPECT(t_stop(w) == 0, "the worker stops");
}
END_TEST

START_TEST(test_failures_come_newest_first_with_their_reasons)
{
	struct pgv_job v[4];
	int n;

	t_sql("INSERT INTO chute.finished (queue, id, state, size, run_at,"
	    " attempts, last) VALUES"
	    " ('default', 'older', 'failed', 1, now() - interval '1 h', 3, 'exit=3'),"
	    " ('default', 'newer', 'failed', 1, now() - interval '1 min', 1,"
	    "  'cancelled'),"
	    " ('default', 'ok', 'done', 1, now(), 1, 'exit=0'),"
	    " ('other', 'x', 'failed', 1, now(), 1, 'exit=1')");
	/* A row whose ID no job may have (chute.finished checks none) is left out. */
	t_sql("INSERT INTO chute.finished (queue, id, state, size, run_at, last)"
	    " VALUES ('default', '../up', 'failed', 1, now(), 'exit=9')");
	n = pgv_failures(&pg, v, 4);
	EXPECT(n == 2, "pgv_failures: %d: %s", n, pg_error(&pg));
	EXPECT(strcmp(v[0].id, "newer") == 0 && strcmp(v[0].last, "cancelled")
	    == 0 && v[0].attempts == 1 && v[0].elapsed >= 60000,
	    "first: %s %s %d %lld", v[0].id, v[0].last, v[0].attempts,
	    (long long)v[0].elapsed);
	EXPECT(strcmp(v[1].id, "older") == 0 && strcmp(v[1].last, "exit=3") == 0
	    && v[1].attempts == 3 && v[1].elapsed >= 3600000,
	    "second: %s %s %d", v[1].id, v[1].last, v[1].attempts);
}
END_TEST

/* ---- workers and the pause ---- */

/*
 * Alive first, by name; gone when stopped or unseen past its lease; the
 * jobs running under each counted; the totals over those not returned.
 */
START_TEST(test_workers_come_alive_first_with_their_running_jobs)
{
	struct pgv_worker v[2];
	int n, alive, all;

	t_sql("INSERT INTO chute.workers (worker, queue, host, pid, slots,"
	    " version, lease_ms, started, seen, stopped) VALUES"
	    " ('b:2', 'default', 'b', 2, 4, '1.0', 30000, now() - interval '1 h',"
	    "  now() - interval '1 s', NULL),"
	    " ('a:1', 'default', 'a', 1, 2, '1.0', 30000, now() - interval '2 h',"
	    "  now() - interval '1 min', NULL),"
	    " ('c:3', 'default', 'c', 3, 8, '0.9', 30000, now(), now(), now()),"
	    " ('d:4', 'default', 'd', 4, 1, '1.0', 30000, now(), now(), NULL),"
	    " ('x:9', 'other', 'x', 9, 1, '1.0', 30000, now(), now(), NULL)");
	t_sql("INSERT INTO chute.live (queue, id, state, size, token, worker)"
	    " VALUES ('default', 'j1', 'cur', 1, 1, 'b:2'),"
	    " ('default', 'j2', 'cur', 1, 2, 'b:2'), ('default', 'j3', 'cur', 1, 3,"
	    " 'a:1'), ('other', 'j4', 'cur', 1, 4, 'b:2')");
	n = pgv_workers(&pg, v, 2, &alive, &all);
	EXPECT(n == 2 && alive == 2 && all == 4, "pgv_workers: %d, %d alive of "
	    "%d: %s", n, alive, all, pg_error(&pg));
	EXPECT(strcmp(v[0].worker, "b:2") == 0 && v[0].alive && !v[0].stopped &&
	    v[0].running == 2 && v[0].slots == 4 && v[0].pid == 2 &&
	    strcmp(v[0].host, "b") == 0 && strcmp(v[0].version, "1.0") == 0 &&
	    v[0].seen_ago >= 1000 && v[0].started_ago >= 3600000,
	    "first: %s alive %d running %d slots %d", v[0].worker, v[0].alive,
	    v[0].running, v[0].slots);
	EXPECT(strcmp(v[1].worker, "d:4") == 0 && v[1].alive && v[1].running == 0,
	    "second: %s alive %d", v[1].worker, v[1].alive);
}
END_TEST

/* a:1 unseen for a minute past a 30 s lease, c:3 stopped: both gone. */
START_TEST(test_a_worker_past_its_lease_or_stopped_is_gone)
{
	struct pgv_worker v[4];
	int n, alive, all;

	t_sql("INSERT INTO chute.workers (worker, queue, host, pid, slots,"
	    " version, lease_ms, seen, stopped) VALUES"
	    " ('a:1', 'default', 'a', 1, 2, '1.0', 30000, now() - interval"
	    "  '1 min', NULL), ('c:3', 'default', 'c', 3, 8, '0.9', 30000,"
	    "  now(), now())");
	n = pgv_workers(&pg, v, 4, &alive, &all);
	EXPECT(n == 2 && alive == 0 && all == 2, "%d rows, %d alive of %d", n,
	    alive, all);
	EXPECT(strcmp(v[0].worker, "a:1") == 0 && !v[0].alive && !v[0].stopped &&
	    strcmp(v[1].worker, "c:3") == 0 && !v[1].alive && v[1].stopped,
	    "%s alive %d stopped %d; %s alive %d stopped %d", v[0].worker,
	    v[0].alive, v[0].stopped, v[1].worker, v[1].alive, v[1].stopped);
}
END_TEST

START_TEST(test_a_paused_queue_says_by_whom)
{
	char by[64];
	bool paused = true;

	EXPECT(pgv_paused(&pg, &paused, by, sizeof(by)) == 0 && !paused &&
	    by[0] == '\0', "never paused: %d '%s'", paused, by);
	t_sql("INSERT INTO chute.queues (queue, paused, paused_at, paused_by)"
	    " VALUES ('default', true, now(), 'ops@there'),"
	    " ('other', false, NULL, NULL)");
	EXPECT(pgv_paused(&pg, &paused, by, sizeof(by)) == 0 && paused &&
	    strcmp(by, "ops@there") == 0, "paused: %d '%s'", paused, by);
	t_sql("UPDATE chute.queues SET paused = false WHERE queue = 'default'");
	EXPECT(pgv_paused(&pg, &paused, by, sizeof(by)) == 0 && !paused,
	    "resumed: %d", paused);
}
END_TEST

/* ---- throughput ---- */

static unsigned
sum(const unsigned *v, int from, int to)
{
	unsigned s = 0;

	for (int i = from; i < to; i++)
		s += v[i];
	return s;
}

START_TEST(test_the_rate_counts_each_second_of_the_last_minute)
{
	struct pgv_rate r;
	int first = -1, next = -1, f = -1;

	rows("default", "a", 3, "done", "-100 milliseconds");
	rows("default", "b", 2, "done", "-5500 milliseconds");
	rows("default", "c", 1, "failed", "-10500 milliseconds");
	rows("default", "old", 4, "done", "-70 seconds");
	rows("other", "x", 9, "done", "-1 second");
	EXPECT(pgv_rate(&pg, &r) == 0, "pgv_rate: %s", pg_error(&pg));
	EXPECT(r.seconds == PGV_WINDOW, "seconds %d", r.seconds);
	EXPECT(sum(r.done, 0, PGV_WINDOW) == 5 && sum(r.failed, 0, PGV_WINDOW)
	    == 1, "done %u failed %u", sum(r.done, 0, PGV_WINDOW),
	    sum(r.failed, 0, PGV_WINDOW));
	for (int i = 0; i < PGV_WINDOW; i++) {
		if (r.done[i] && first == -1)
			first = i;
		else if (r.done[i] && next == -1)
			next = i;
		if (r.failed[i])
			f = i;
	}
	/* However long the test took since the inserts: in their order, apart. */
	EXPECT(first >= 0 && r.done[first] == 3 && next - first >= 5 &&
	    r.done[next] == 2 && f - first >= 10, "seconds: 3 in %d, 2 in %d, "
	    "the failure in %d", first, next, f);
}
END_TEST

/* More than PGV_RATE_MAX in the window: only the newest seconds count. */
START_TEST(test_a_rate_past_its_bound_counts_only_whole_seconds)
{
	struct pgv_rate r;

	t_sql(P("INSERT INTO chute.finished (queue, id, state, size, run_at)"
	    " SELECT 'default', 'r' || i, 'done', 1, now() - (i %% 20) *"
	    " interval '1 second' - interval '100 milliseconds'"
	    " FROM generate_series(1, %d) i", PGV_RATE_MAX + PGV_RATE_MAX / 2));
	EXPECT(pgv_rate(&pg, &r) == 0, "pgv_rate: %s", pg_error(&pg));
	EXPECT(r.seconds > 0 && r.seconds < 20, "seconds %d", r.seconds);
	EXPECT(sum(r.done, 0, r.seconds) < PGV_RATE_MAX &&
	    sum(r.done, r.seconds, PGV_WINDOW) == 0,
	    "%u in the %d seconds counted, %u after", sum(r.done, 0, r.seconds),
	    r.seconds, sum(r.done, r.seconds, PGV_WINDOW));
}
END_TEST

/* ---- notifications ---- */

START_TEST(test_notifications_of_the_queue_are_counted_and_others_not)
{
	int got = 0, n;

	EXPECT(pgv_listen(&pg) == 0, "listen: %s", pg_error(&pg));
	/* A cancel is cancel/QUEUE/ID; the older "cancel QUEUE ID" is not. */
	t_sql("SELECT pg_notify('chute', 'default'), pg_notify('chute',"
	    " 'cancel/default/x'), pg_notify('chute', 'other'),"
	    " pg_notify('chute', 'cancel/defaultx/y'),"
	    " pg_notify('chute', 'cancel default x'),"
	    " pg_notify('chute_view', 'default'), pg_notify('chute_view', 'other'),"
	    " pg_notify('elsewhere', 'default')");
	WAIT_UNTIL((n = pgv_notified(&pg)) >= 0 && (got += n) >= 3, 10000,
	    "%d of 3 notifications", got);
	t_sql("SELECT pg_notify('chute', 'other')");
	t_sql("SELECT pg_notify('chute_view', 'default')");
	WAIT_UNTIL((n = pgv_notified(&pg)) >= 0 && (got += n) >= 4, 10000,
	    "the one after: %d of 4", got);
	EXPECT(got == 4, "%d notifications counted, not 4", got);
}
END_TEST

/* Count what came on l so far, by channel; every payload is the queue's. */
static void
heard(struct pg *l, int *view, int *work)
{
	PGnotify *nt;

	PQconsumeInput(l->conn);
	while ((nt = PQnotifies(l->conn)) != NULL) {
		if (strcmp(nt->relname, PGV_CHANNEL) == 0)
			(*view)++;
		else
			(*work)++;
		EXPECT(strcmp(nt->extra, "default") == 0, "payload %s on %s",
		    nt->extra, nt->relname);
		PQfreemem(nt);
	}
}

/*
 * A worker tells the views of its claims and outcomes on their channel:
 * once the jobs moved, at most once per PGV_NOTIFY_MS (and at its end).
 * The workers' channel (PG_CHANNEL) hears nothing of it.  The jobs are
 * inserted by SQL, so that no submit is heard there either.
 */
START_TEST(test_a_worker_tells_the_views_debounced_and_not_the_workers)
{
	struct pg l;
	int view = 0, work = 0;
	int64_t t0, ms;

	memset(&l, 0, sizeof(l));
	EXPECT(pg_parse(&l, t_uri, "default") == 0 &&
	    pg_connect(&l, false, 0) == 0 && pg_cmd(&l, "LISTEN " PGV_CHANNEL
	    "; LISTEN " PG_CHANNEL, 0, NULL) == 0, "listen: %s", pg_error(&l));
	rows("default", "j", 40, "new", "-1 second");
	t_sql("INSERT INTO chute.payloads (queue, id, body) SELECT queue, id,"
	    " 'x' FROM chute.jobs");
	t0 = t_mono();
	EXPECT(t_reap(t_owner(NULL, t_uri, "--drain", "-j", "2", "--",
	    h_journal(), (const char *)NULL), 30000, "drain") == 0, "drain");
	ms = t_mono() - t0;
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE state = 'done'") ==
	    40, "all done");
	WAIT_UNTIL((heard(&l, &view, &work), view > 0), 10000,
	    "nothing on " PGV_CHANNEL " (%d on " PG_CHANNEL ")", work);
	heard(&l, &view, &work);
	EXPECT(view <= ms / PGV_NOTIFY_MS + 2, "%d on " PGV_CHANNEL " in %lld ms",
	    view, (long long)ms);
	EXPECT(work == 0, "%d on " PG_CHANNEL, work);
	pg_close(&l);
	free(l.uri);
}
END_TEST

Suite *
pg_view_suite(void)
{
	Suite *s = suite_create("pg_view");
	TCase *tc;

	if (t_pg_skip())
		return s;
	tc = t_tcase(setup, teardown, "view", 120);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_counts_of_a_small_queue_are_exact_and_its_own);
	tcase_add_test(tc, test_counts_past_the_bound_are_estimates_of_this_queue_s_jobs);
	tcase_add_test(tc, test_running_jobs_come_oldest_claim_first_with_worker_and_lease);
	tcase_add_test(tc, test_a_worker_s_claim_shows_its_worker_and_time);
	tcase_add_test(tc, test_failures_come_newest_first_with_their_reasons);
	tcase_add_test(tc, test_workers_come_alive_first_with_their_running_jobs);
	tcase_add_test(tc, test_a_worker_past_its_lease_or_stopped_is_gone);
	tcase_add_test(tc, test_a_paused_queue_says_by_whom);
	tcase_add_test(tc, test_the_rate_counts_each_second_of_the_last_minute);
	tcase_add_test(tc, test_a_rate_past_its_bound_counts_only_whole_seconds);
	tcase_add_test(tc, test_notifications_of_the_queue_are_counted_and_others_not);
	tcase_add_test(tc, test_a_worker_tells_the_views_debounced_and_not_the_workers);
	suite_add_tcase(s, tc);
	return s;
}
