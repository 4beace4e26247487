/*
 * store_pg_stats.c: the numbers `chute stats URL` prints, as text or in
 * Prometheus's format, and `chute web URL`'s /metrics: one statement, one
 * snapshot, read into struct store_stats (queue/store.h).
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/store.h"

/*
 * stats URL: one statement, one snapshot.  Columns: the count in each
 * state, in the table's order (JOBSTATES), then the SC_* below.
 * A job in cur whose lease has run out belongs to a worker that died or
 * lost the database, and waits for recovery: it is not running.  Workers
 * are counted by their sessions (pg_connect names a worker's
 * chute-worker), as the server knows no other list of them, nor which
 * queue a session serves; and by their rows in chute.workers, alive
 * (schema version 4).  The pause: chute.queues' row, NULL when not paused.
 * There is no longest running time: the schema
 * keeps no start of an attempt (a claim leaves run_at alone, a renewal
 * moves lease_until, the log arrives with the outcome).
 */
enum { SC_OLDEST = ST_NSTATES, SC_RUNNING, SC_CLAIMING, SC_CONNECTED,
	SC_ALIVE, SC_PAUSED_BY, SC_PAUSED_AT, SC_N };

#define STATS_COUNT_(st, name, flags) \
    " count(*) FILTER (WHERE state = '" name "'),"
static const char stats_sql[] = "SELECT"
    JOBSTATES(STATS_COUNT_)
    " greatest(0, coalesce(extract(epoch FROM now() - " PG_NEAR(
    "min(run_at) FILTER (WHERE state = 'new')") ")::float8, 0)),"
    " count(*) FILTER (WHERE state = 'cur' AND lease_until > now()),"
    " count(DISTINCT worker) FILTER (WHERE state = 'cur'"
    "  AND lease_until > now()),"
    " (SELECT count(*) FROM pg_stat_activity"
    "  WHERE datname = current_database()"
    "  AND application_name = 'chute-worker'),"
    " (SELECT count(*) FROM chute.workers w WHERE w.queue = $1"
    "  AND w.stopped IS NULL"
    "  AND w.seen + " PG_WORKER_LEASE("w.") " > now()),"
    " (SELECT coalesce(paused_by, '') FROM chute.queues"
    "  WHERE queue = $1 AND paused),"
    " (SELECT (extract(epoch FROM paused_at) * 1000)::bigint"
    "  FROM chute.queues WHERE queue = $1 AND paused)"
    " FROM chute.jobs WHERE queue = $1";

static double
stats_col(PGresult *r, int col)
{
	return strtod(PQgetvalue(r, 0, col), NULL);
}

int
pg_stats_read(struct pg *pg, struct store_stats *s)
{
	const char *p[1] = { pg->queue };
	PGresult *r;

	if ((r = pg_exec(pg, stats_sql, 1, p)) == NULL)
		return pg_fail(pg, "stats");
	if (pg_rows(r, SC_N, 1, NULL) != 1) {
		PQclear(r);
		return pg_fail(pg, "stats");
	}
	memset(s, 0, sizeof(*s));
	for (int st = ST_FIRST; st < ST_END; st++)
		s->jobs[st] = strtoll(PQgetvalue(r, 0, st - ST_FIRST), NULL, 10);
	s->oldest_s = stats_col(r, SC_OLDEST);
	s->has_oldest = s->jobs[ST_NEW] > 0;
	s->oldest_ms = (msec_t)(s->oldest_s * 1000);
	s->running = strtoll(PQgetvalue(r, 0, SC_RUNNING), NULL, 10);
	s->has_workers = true;
	s->claiming = strtoll(PQgetvalue(r, 0, SC_CLAIMING), NULL, 10);
	s->connected = strtoll(PQgetvalue(r, 0, SC_CONNECTED), NULL, 10);
	s->alive = strtoll(PQgetvalue(r, 0, SC_ALIVE), NULL, 10);
	s->pause.paused = !PQgetisnull(r, 0, SC_PAUSED_BY);
	/* Stored text, whoever wrote it: escaped. */
	vis_text(PQgetvalue(r, 0, SC_PAUSED_BY), s->pause.by, 128);
	s->pause.at = strtoll(PQgetvalue(r, 0, SC_PAUSED_AT), NULL, 10);
	s->now = now_ms();
	PQclear(r);
	return 0;
}
