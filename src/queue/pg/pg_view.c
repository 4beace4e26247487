/*
 * pg_view.c: what a live view reads of a queue (pg_view.h), one short
 * read-only statement per part, each a range of a partial index bounded
 * by a LIMIT whatever the queue holds; and the notifications that say
 * when to read again.  The replies are input: row counts are bounded by
 * what was asked, and a row whose ID no job may have is left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/pg/pg_view.h"

static long long
ll(const PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static bool
yes(const PGresult *r, int row, int col)
{
	return strcmp(PQgetvalue(r, row, col), "t") == 0;
}

/* A statement with pg->queue and a bound as $1 and $2: its reply, or NULL. */
static PGresult *
ask(struct pg *pg, const char *sql, long long bound)
{
	char b[24];
	const char *p[2] = { pg->queue, b };

	snprintf(b, sizeof(b), "%lld", bound);
	return pg_exec(pg, sql, 2, p);
}

/* ---- counts ---- */

/*
 * One statement, seven bounded counts, each a range of one partial index:
 * the due jobs of jobs_due (new, and deferred ones whose time came), the
 * deferred ones still waiting (jobs_due past now(): no new job is ever
 * there, its run_at being its arrival), cur (jobs_claimed), failed
 * (jobs_failed), done and failed together (jobs_finished), the jobs
 * waiting for others (live_wait, schema 12).  Each reads at
 * most $2 = PGV_COUNT_MAX + 1 rows: each is in its index's order, so that
 * the plan is a scan of the index that stops at the LIMIT; without it the
 * planner took a bitmap scan of jobs_due, which reads every entry of the
 * range before the LIMIT applies (fleet.md, "Watching a queue").
 */
static const char counts_sql[] =
    "WITH due AS (SELECT state FROM chute.jobs WHERE queue = $1"
    " AND state IN ('new', 'defer') AND run_at <= now() ORDER BY run_at"
    " LIMIT $2::bigint)"
    " SELECT (SELECT count(*) FROM due),"
    " (SELECT count(*) FILTER (WHERE state = 'new') FROM due),"
    " (SELECT count(*) FROM (SELECT FROM chute.jobs WHERE queue = $1"
    "  AND state IN ('new', 'defer') AND run_at > now() ORDER BY run_at"
    "  LIMIT $2::bigint) f),"
    " (SELECT count(*) FROM (SELECT FROM chute.jobs WHERE queue = $1"
    "  AND state = 'cur' ORDER BY token LIMIT $2::bigint) c),"
    " (SELECT count(*) FROM (SELECT FROM chute.jobs WHERE queue = $1"
    "  AND state = 'failed' ORDER BY run_at LIMIT $2::bigint) x),"
    " (SELECT count(*) FROM (SELECT FROM chute.jobs WHERE queue = $1"
    "  AND state IN ('done', 'failed') ORDER BY run_at LIMIT $2::bigint) y),"
    " (SELECT count(*) FROM (SELECT FROM chute.jobs WHERE queue = $1"
    "  AND state = 'wait' ORDER BY id LIMIT $2::bigint) w)";

/*
 * The planner's estimate of the jobs in state st, from the table's
 * statistics (ANALYZE, which autovacuum runs after 2% of the rows
 * changed; chute.jobs_queue_state keeps the queue and state's combinations
 * together, so one queue's jobs do not pass for another's): planning
 * only, nothing is read.  The first line of EXPLAIN ends "rows=N
 * width=W)".  -1 when it cannot be had.
 */
static long long
estimate(struct pg *pg, int st)
{
	static const char sql[] = "EXPLAIN SELECT FROM chute.jobs"
	    " WHERE queue = $1 AND state = $2";
	const char *p[2] = { pg->queue, state_names[st] };
	PGresult *r = pg_exec(pg, sql, 2, p);
	const char *rows;
	long long n = -1;

	if (r == NULL)
		return -1;
	if (PQntuples(r) > 0 && PQnfields(r) == 1 &&
	    (rows = strstr(PQgetvalue(r, 0, 0), " rows=")) != NULL)
		n = strtoll(rows + 6, NULL, 10);
	PQclear(r);
	return n;
}

/* A count of one range: exact, or at least the bound. */
static void
bounded(struct pgv_counts *c, int st, long long n)
{
	c->n[st] = n > PGV_COUNT_MAX ? PGV_COUNT_MAX : n;
	c->kind[st] = n > PGV_COUNT_MAX ? PGV_ATLEAST : PGV_EXACT;
}

/*
 * The due range split by state: exact when it was read whole, else each
 * part of the rows read is a lower bound of its state.
 */
static void
split_due(struct pgv_counts *c, long long due, long long new, long long later)
{
	bool cut = due > PGV_COUNT_MAX;

	c->n[ST_NEW] = new > PGV_COUNT_MAX ? PGV_COUNT_MAX : new;
	c->kind[ST_NEW] = cut ? PGV_ATLEAST : PGV_EXACT;
	bounded(c, ST_DEFER, later);
	c->n[ST_DEFER] += due - new;
	if (cut)
		c->kind[ST_DEFER] = PGV_ATLEAST;
}

/* done: the finished jobs less the failed ones, exact when both are. */
static void
split_finished(struct pgv_counts *c, long long fin)
{
	bool exact = fin <= PGV_COUNT_MAX && c->kind[ST_FAILED] == PGV_EXACT;

	c->n[ST_DONE] = c->kind[ST_FAILED] == PGV_EXACT ? fin - c->n[ST_FAILED] :
	    0;
	c->kind[ST_DONE] = exact ? PGV_EXACT : PGV_ATLEAST;
}

int
pgv_counts(struct pg *pg, struct pgv_counts *c)
{
	PGresult *r = ask(pg, counts_sql, PGV_COUNT_MAX + 1);
	long long est;

	memset(c, 0, sizeof(*c));
	if (r == NULL)
		return -1;
	if (pg_rows(r, 7, 1, NULL) != 1) {
		PQclear(r);
		return -1;
	}
	split_due(c, ll(r, 0, 0), ll(r, 0, 1), ll(r, 0, 2));
	bounded(c, ST_WAIT, ll(r, 0, 6));
	bounded(c, ST_CUR, ll(r, 0, 3));
	bounded(c, ST_FAILED, ll(r, 0, 4));
	split_finished(c, ll(r, 0, 5));
	PQclear(r);
	/*
	 * Past the bound, the estimate; never below what was counted, and
	 * not the planner's floor of one row, which says nothing.
	 */
	for (int st = ST_FIRST; st < ST_END; st++) {
		if (c->kind[st] != PGV_ATLEAST)
			continue;
		if ((est = estimate(pg, st)) == -1)
			return -1;
		if (est > c->n[st] && est > 1) {
			c->n[st] = est;
			c->kind[st] = PGV_ABOUT;
		}
	}
	return 0;
}

/* ---- jobs ---- */

/*
 * Rows of id, worker, elapsed, when, lease left, attempts, last into v:
 * how many fit, those with an ID no job may have left out.
 */
static int
jobs_of(PGresult *r, struct pgv_job *v, int max)
{
	int n = pg_rows(r, 7, max, NULL), k = 0;

	for (int i = 0; i < n; i++) {
		struct pgv_job *j = &v[k];

		if (!id_valid(PQgetvalue(r, i, 0)))
			continue;
		strlcpy(j->id, PQgetvalue(r, i, 0), sizeof(j->id));
		strlcpy(j->worker, PQgetvalue(r, i, 1), sizeof(j->worker));
		j->elapsed = ll(r, i, 2);
		j->when = ll(r, i, 3);
		j->lease_left = ll(r, i, 4);
		j->attempts = (int)ll(r, i, 5);
		strlcpy(j->last, PQgetvalue(r, i, 6), sizeof(j->last));
		k++;
	}
	PQclear(r);
	return n == -1 ? -1 : k;
}

#define MS_SINCE(t)	"(extract(epoch FROM now() - " PG_NEAR(t) ") * 1000)::bigint"
#define MS_EPOCH(t)	"(extract(epoch FROM " PG_NEAR(t) ") * 1000)::bigint"

/*
 * In order of their fencing tokens, which claims take from one sequence
 * in turn: the oldest claim first, down jobs_claimed.  A job claimed ahead
 * by a worker (--prefetch) is in cur before its handler starts: it shows
 * as running.
 */
int
pgv_running(struct pg *pg, struct pgv_job *v, int max)
{
	static const char sql[] = "SELECT id, coalesce(worker, ''),"
	    " coalesce(" MS_SINCE("claimed") ", -1),"
	    " coalesce(" MS_EPOCH("claimed") ", 0),"
	    " coalesce((extract(epoch FROM " PG_NEAR("lease_until") " - now())"
	    " * 1000)::bigint,"
	    " 0), attempts, left(last, 255) FROM chute.jobs"
	    " WHERE queue = $1 AND state = 'cur' ORDER BY token LIMIT $2::bigint";
	PGresult *r = ask(pg, sql, max);

	return r == NULL ? -1 : jobs_of(r, v, max);
}

/* Down jobs_failed from its end: the newest failures first. */
int
pgv_failures(struct pg *pg, struct pgv_job *v, int max)
{
	static const char sql[] = "SELECT id, '', " MS_SINCE("run_at") ", "
	    MS_EPOCH("run_at") ", 0, attempts, left(last, 255) FROM chute.jobs"
	    " WHERE queue = $1 AND state = 'failed' ORDER BY run_at DESC"
	    " LIMIT $2::bigint";
	PGresult *r = ask(pg, sql, max);

	return r == NULL ? -1 : jobs_of(r, v, max);
}

/* ---- throughput ---- */

/*
 * The newest PGV_RATE_MAX rows of jobs_finished in the window, counted by
 * second on the server: at most PGV_WINDOW rows come back.  Each finished
 * job's run_at is when it finished.
 */
int
pgv_rate(struct pg *pg, struct pgv_rate *rt)
{
	static const char sql[] = "SELECT s, count(*) FILTER (WHERE state ="
	    " 'done'), count(*) FILTER (WHERE state = 'failed') FROM"
	    " (SELECT greatest(0, floor(extract(epoch FROM now() - "
	    PG_NEAR("run_at") ")))::int"
	    " AS s, state FROM chute.jobs WHERE queue = $1"
	    " AND state IN ('done', 'failed') AND run_at > now() - interval"
	    " '60 seconds' ORDER BY run_at DESC"
	    " LIMIT $2::bigint) f GROUP BY s ORDER BY s";
	PGresult *r = ask(pg, sql, PGV_RATE_MAX);
	long long total = 0, oldest = 0;
	_Static_assert(PGV_WINDOW == 60, "the statement says 60 seconds");
	int n;

	memset(rt, 0, sizeof(*rt));
	rt->seconds = PGV_WINDOW;
	if (r == NULL)
		return -1;
	if ((n = pg_rows(r, 3, PGV_WINDOW + 1, NULL)) == -1) {
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		long long s = ll(r, i, 0);

		if (s < 0 || s >= PGV_WINDOW)
			continue;
		rt->done[s] = (unsigned)ll(r, i, 1);
		rt->failed[s] = (unsigned)ll(r, i, 2);
		total += rt->done[s] + rt->failed[s];
		oldest = s;
	}
	PQclear(r);
	/*
	 * Cut: the oldest second read may hold more than was read.  When it
	 * is the last one, what was read of it is all there is to say.
	 */
	if (total >= PGV_RATE_MAX && oldest > 0) {
		rt->seconds = (int)oldest;
		rt->done[oldest] = rt->failed[oldest] = 0;
	} else if (total >= PGV_RATE_MAX)
		rt->seconds = 1;
	return 0;
}

/* ---- workers and pause (schema version 4) ---- */

/* Row i of the workers' reply. */
static void
worker_of(const PGresult *r, int i, struct pgv_worker *w)
{
	strlcpy(w->worker, PQgetvalue(r, i, 0), sizeof(w->worker));
	strlcpy(w->host, PQgetvalue(r, i, 1), sizeof(w->host));
	strlcpy(w->version, PQgetvalue(r, i, 2), sizeof(w->version));
	w->pid = (long)ll(r, i, 3);
	w->slots = (int)ll(r, i, 4);
	w->running = (int)ll(r, i, 5);
	w->lease_ms = ll(r, i, 6);
	w->started_ago = ll(r, i, 7);
	w->seen_ago = ll(r, i, 8);
	w->alive = yes(r, i, 9);
	w->stopped = yes(r, i, 10);
}

/*
 * The running jobs per worker are read from at most PGV_COUNT_MAX rows of
 * jobs_claimed; chute.workers is small (rows of workers gone for an hour
 * are deleted), read whole.
 */
int
pgv_workers(struct pg *pg, struct pgv_worker *v, int max, int *alive,
    int *all)
{
	static const char sql[] =
	    "WITH c AS (SELECT worker, count(*) AS n FROM (SELECT worker"
	    " FROM chute.jobs WHERE queue = $1 AND state = 'cur'"
	    " ORDER BY token LIMIT $3::bigint) x GROUP BY worker),"
	    " w AS (SELECT w.*, w.stopped IS NULL AND w.seen + "
	    PG_WORKER_LEASE("w.") " > now() AS alive FROM chute.workers w"
	    " WHERE w.queue = $1)"
	    " SELECT w.worker, w.host, w.version, w.pid, w.slots,"
	    " coalesce(c.n, 0), w.lease_ms, " MS_SINCE("w.started") ", "
	    MS_SINCE("w.seen") ", w.alive, w.stopped IS NOT NULL,"
	    " count(*) FILTER (WHERE w.alive) OVER (), count(*) OVER ()"
	    " FROM w LEFT JOIN c ON c.worker = w.worker"
	    " ORDER BY w.alive DESC, w.worker LIMIT $2::bigint";
	char b[24], cap[24];
	const char *p[3] = { pg->queue, b, cap };
	PGresult *r;
	int n;

	snprintf(b, sizeof(b), "%d", max);
	snprintf(cap, sizeof(cap), "%d", PGV_COUNT_MAX);
	r = pg_exec(pg, sql, 3, p);
	*alive = *all = 0;
	if (r == NULL)
		return -1;
	if ((n = pg_rows(r, 13, max, NULL)) == -1) {
		PQclear(r);
		return -1;
	}
	if (n > 0) {
		*alive = (int)ll(r, 0, 11);
		*all = (int)ll(r, 0, 12);
	}
	for (int i = 0; i < n; i++)
		worker_of(r, i, &v[i]);
	PQclear(r);
	return n;
}

/* pg_queues.c's lookup of the key of chute.queues. */
int
pgv_paused(struct pg *pg, bool *paused, char *by, size_t len)
{
	return pg_paused(pg, pg->queue, paused, by, len, NULL);
}

/* ---- notifications ---- */

int
pgv_listen(struct pg *pg)
{
	return pg_cmd(pg, "LISTEN " PG_CHANNEL "; LISTEN " PGV_CHANNEL, 0,
	    NULL);
}

/*
 * Of ours: on PG_CHANNEL the queue's name (a submit, a retry, pause or
 * resume) or a cancel in it (pg_cancel_note); on PGV_CHANNEL the queue's
 * name.
 */
static bool
ours(const struct pg *pg, const PGnotify *n)
{
	if (strcmp(n->extra, pg->queue) == 0)
		return strcmp(n->relname, PG_CHANNEL) == 0 ||
		    strcmp(n->relname, PGV_CHANNEL) == 0;
	return strcmp(n->relname, PG_CHANNEL) == 0 &&
	    pg_cancel_of(n->extra, pg->queue) != NULL;
}

int
pgv_notified(struct pg *pg)
{
	PGnotify *n;
	int k = 0;

	if (!pg_ok(pg) || PQconsumeInput(pg->conn) == 0)
		return -1;
	while ((n = PQnotifies(pg->conn)) != NULL) {
		if (ours(pg, n))
			k++;
		PQfreemem(n);
	}
	return k;
}
