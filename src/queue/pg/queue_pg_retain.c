/*
 * queue_pg_retain.c: a worker applies its queue's retention (chute.queues,
 * version 9): read when it connects and when "retention QUEUE" is
 * notified; a state kept 0 leaves the database in the outcome statement
 * (queue_pg_outcome.c); what is past a finite retention is removed here,
 * by every worker in turn, a bounded batch per statement.  fleet.md,
 * "Retention", has the statements, the bound and the crash windows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "queue/pg/pg.h"
#include "queue/pg/pgq.h"

/* Between sweeps: an eighth of the shortest finite retention, bounded. */
static msec_t
period(const struct retention *k)
{
	msec_t p = PG_SWEEP_MAX_MS;

	if (k->done != KEEP_FOREVER && k->done / 8 < p)
		p = k->done / 8;
	if (k->failed != KEEP_FOREVER && k->failed / 8 < p)
		p = k->failed / 8;
	return p < PG_SWEEP_MIN_MS ? PG_SWEEP_MIN_MS : p;
}

void
pgq_keep_check(struct pgq *pq, msec_t mono)
{
	struct retention r;
	char d[32], f[32];

	pq->keep_heard = false;
	if (pg_retention(&pq->pg, pq->pg.queue, &r) == -1) {
		pgq_failed(pq, "retention");
		pq->keep_heard = true;		/* again with the connection */
		return;
	}
	if (r.done != pq->keep.done || r.failed != pq->keep.failed) {
		keep_format(r.done, d, sizeof(d));
		keep_format(r.failed, f, sizeof(f));
		say("%s: retention: done %s, failed %s", pq->pg.name, d, f);
	}
	pq->keep = r;
	pq->next_sweep = r.done == KEEP_FOREVER && r.failed == KEEP_FOREVER ?
	    INT64_MAX : mono;
}

/*
 * The finished jobs of one state past its retention ($2 ms), oldest
 * first, at most PG_SWEEP_ROWS, SKIP LOCKED: workers sweeping at once
 * take different rows, and a row a retry or purge holds is left to it.
 * Each goes with its payload and its logs, in the one statement.  A
 * statement per state, its state a literal: the failed jobs' partial
 * index (finished_failed) is then the failed sweep's path, and neither
 * walks the other state's old rows, which a state kept forever may hold
 * by the million.
 */
#define SWEEP_SQL(STATE) \
	"WITH old AS MATERIALIZED (SELECT id FROM chute.finished" \
	" WHERE queue = $1 AND state = '" STATE "' AND run_at < now() -" \
	" $2::bigint * interval '1 millisecond' ORDER BY run_at" \
	" LIMIT " PG_SWEEP_ROWS_S " FOR UPDATE SKIP LOCKED)," \
	" f AS (DELETE FROM chute.finished j USING old WHERE j.queue = $1" \
	" AND j.id = old.id RETURNING j.id)," \
	" p AS (DELETE FROM chute.payloads x USING f WHERE x.queue = $1" \
	" AND x.id = f.id)," \
	" l AS (DELETE FROM chute.logs x USING f WHERE x.queue = $1" \
	" AND x.id = f.id)" \
	" SELECT count(*) FROM f"
static const char sweep_done_sql[] = SWEEP_SQL("done");
static const char sweep_failed_sql[] = SWEEP_SQL("failed");
#undef SWEEP_SQL

/* One state's sweep: how many went, or -1 (said). */
static long
sweep_state(struct pgq *pq, const char *sql, msec_t keep)
{
	char k[24];
	const char *p[2] = { pq->pg.queue, k };
	PGresult *r;
	long n;

	snprintf(k, sizeof(k), "%lld", (long long)keep);
	if ((r = pgq_exec(pq, sql, 2, p, false)) == NULL) {
		pgq_failed(pq, "retention");
		return -1;
	}
	n = pg_rows(r, 1, 1, NULL) == 1 ? strtol(PQgetvalue(r, 0, 0), NULL,
	    10) : 0;
	PQclear(r);
	if (n > 0)
		pgq_moved(pq);
	return n;
}

void
pgq_sweep(struct pgq *pq, msec_t mono)
{
	long d = 0, f = 0;

	pq->next_sweep = mono + period(&pq->keep);
	if (pq->keep.done != KEEP_FOREVER)
		d = sweep_state(pq, sweep_done_sql, pq->keep.done);
	if (pq->up && pq->keep.failed != KEEP_FOREVER)
		f = sweep_state(pq, sweep_failed_sql, pq->keep.failed);
	/* A full batch: more may be past their time, at the next turn. */
	if (d >= PG_SWEEP_ROWS || f >= PG_SWEEP_ROWS)
		pq->next_sweep = mono;
}
