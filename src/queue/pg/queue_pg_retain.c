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
 * The finished jobs past their state's retention ($2, $3: ms, NULL
 * forever), oldest first by finished_at (queue, run_at, id), at most
 * PG_SWEEP_ROWS, SKIP LOCKED: workers sweeping at once take different
 * rows, and a row a retry or purge holds is left to it.  Each goes with
 * its payload and its logs, in the one statement.
 */
void
pgq_sweep(struct pgq *pq, msec_t mono)
{
	static const char sql[] =
	    "WITH old AS MATERIALIZED (SELECT id FROM chute.finished"
	    " WHERE queue = $1 AND run_at < now() - least($2::bigint,"
	    " $3::bigint) * interval '1 millisecond' AND run_at < now() -"
	    " CASE state WHEN 'done' THEN $2::bigint ELSE $3::bigint END"
	    " * interval '1 millisecond' ORDER BY run_at"
	    " LIMIT " PG_SWEEP_ROWS_S " FOR UPDATE SKIP LOCKED),"
	    " f AS (DELETE FROM chute.finished j USING old WHERE j.queue = $1"
	    " AND j.id = old.id RETURNING j.id),"
	    " p AS (DELETE FROM chute.payloads x USING f WHERE x.queue = $1"
	    " AND x.id = f.id),"
	    " l AS (DELETE FROM chute.logs x USING f WHERE x.queue = $1"
	    " AND x.id = f.id)"
	    " SELECT count(*) FROM f";
	char d[24], f[24];
	const char *p[3] = { pq->pg.queue, NULL, NULL };
	PGresult *r;
	long n;

	snprintf(d, sizeof(d), "%lld", (long long)pq->keep.done);
	snprintf(f, sizeof(f), "%lld", (long long)pq->keep.failed);
	if (pq->keep.done != KEEP_FOREVER)
		p[1] = d;
	if (pq->keep.failed != KEEP_FOREVER)
		p[2] = f;
	pq->next_sweep = mono + period(&pq->keep);
	if ((r = pgq_exec(pq, sql, 3, p, false)) == NULL) {
		pgq_failed(pq, "retention");
		return;
	}
	n = pg_rows(r, 1, 1, NULL) == 1 ? strtol(PQgetvalue(r, 0, 0), NULL,
	    10) : 0;
	PQclear(r);
	/* A full batch: more may be past their time, at the next turn. */
	if (n >= PG_SWEEP_ROWS)
		pq->next_sweep = mono;
	if (n > 0)
		pgq_moved(pq);
}
