/*
 * store_pg_workers.c: `chute workers URL`'s answer (queue/store.h): the
 * queue's workers from chute.workers, alive, stopped and gone, with the
 * jobs each holds, and under a worker gone (or stopped) the claims it
 * still holds: those recovery will take back once their leases run out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/store.h"

#define WORKERS_MAX	1000	/* lines of either kind, at most */

/*
 * The workers, oldest first, each with its claims counted in one pass
 * over jobs_claimed (the queue's claims: at most the fleet's slots and
 * prefetch); chute.workers holds the live and the lately gone, a few
 * hundred rows at most.  Both statements in one snapshot.
 */
static const char workers_sql[] =
    "WITH held AS (SELECT worker, count(*) AS n FROM chute.live"
    " WHERE queue = $1 AND state = 'cur' GROUP BY worker)"
    " SELECT w.worker, w.host, w.pid, w.queue, w.slots, coalesce(h.n, 0),"
    " w.version, (extract(epoch FROM now() - w.started) * 1000)::bigint,"
    " (extract(epoch FROM now() - w.seen) * 1000)::bigint,"
    " CASE WHEN w.stopped IS NOT NULL THEN 'stopped'"
    " WHEN w.seen + " PG_WORKER_LEASE("w.") " > now()"
    " THEN 'alive' ELSE 'gone' END"
    " FROM chute.workers w LEFT JOIN held h ON h.worker = w.worker"
    " WHERE w.queue = $1 ORDER BY w.started, w.worker LIMIT $2::integer";
static const char held_sql[] =
    "SELECT j.worker, j.id,"
    " (extract(epoch FROM j.lease_until - now()) * 1000)::bigint"
    " FROM chute.live j JOIN chute.workers w ON w.worker = j.worker"
    " WHERE j.queue = $1 AND j.state = 'cur' AND (w.stopped IS NOT NULL"
    " OR w.seen + " PG_WORKER_LEASE("w.") " <= now())"
    " ORDER BY j.worker, j.lease_until, j.id LIMIT $2::integer";

/* Row i of the workers' reply, with the claims it holds. */
static void
print_worker(PGresult *r, int i, PGresult *held,
    const struct store_workers_out *o)
{
	struct store_worker w = {
		.worker = PQgetvalue(r, i, 0), .host = PQgetvalue(r, i, 1),
		.pid = atol(PQgetvalue(r, i, 2)), .queue = PQgetvalue(r, i, 3),
		.slots = atoi(PQgetvalue(r, i, 4)),
		.running = atol(PQgetvalue(r, i, 5)),
		.version = PQgetvalue(r, i, 6),
		.started_ago = strtoll(PQgetvalue(r, i, 7), NULL, 10),
		.seen_ago = strtoll(PQgetvalue(r, i, 8), NULL, 10),
		.state = PQgetvalue(r, i, 9),
	};

	o->worker(o->arg, &w);
	for (int k = 0; held != NULL && k < PQntuples(held); k++)
		if (strcmp(PQgetvalue(held, k, 0), w.worker) == 0)
			o->held(o->arg, PQgetvalue(held, k, 1), true,
			    strtoll(PQgetvalue(held, k, 2), NULL, 10));
}

/* Both replies, in one snapshot: 0, or -1 (pg_fail says why). */
static int
read_workers(struct pg *pg, PGresult **w, PGresult **held)
{
	char max[16];
	const char *p[2] = { pg->queue, max };

	snprintf(max, sizeof(max), "%d", WORKERS_MAX);
	*w = *held = NULL;
	if (pg_cmd(pg, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0,
	    NULL) == 0 && (*w = pg_exec(pg, workers_sql, 2, p)) != NULL &&
	    (*held = pg_exec(pg, held_sql, 2, p)) != NULL &&
	    pg_cmd(pg, "COMMIT", 0, NULL) == 0 &&
	    pg_rows(*w, 10, WORKERS_MAX, NULL) != -1 &&
	    pg_rows(*held, 3, WORKERS_MAX, NULL) != -1)
		return 0;
	PQclear(*w);
	PQclear(*held);
	*w = *held = NULL;
	return -1;
}

int
pg_workers_read(struct pg *pg, const struct store_workers_out *o, int *cut)
{
	PGresult *w, *held;

	if (read_workers(pg, &w, &held) == -1)
		return pg_fail(pg, "workers");
	for (int i = 0; i < PQntuples(w); i++)
		print_worker(w, i, held, o);
	*cut = PQntuples(w) == WORKERS_MAX || PQntuples(held) == WORKERS_MAX ?
	    WORKERS_MAX : 0;
	PQclear(w);
	PQclear(held);
	return 0;
}
