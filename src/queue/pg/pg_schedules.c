/*
 * pg_schedules.c: a queue's recurring jobs listed (chute.schedules,
 * fleet.md "Recurring jobs"), each with its next tick: for `chute
 * schedule URL` and the store's listing (stats, top, the dashboard).
 */
#include <stdlib.h>

#include "base/tick.h"
#include "store/sched_spool.h"
#include "queue/pg/pg.h"

static const char list_sql[] =
"SELECT name, every_ms, offset_ms, catch_up, since_ms, coalesce(last_ms, -1)"
" FROM chute.schedules WHERE queue = $1 ORDER BY name";

static long long
num(const PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

int
pg_schedules(struct pg *pg, const char *queue, void (*row)(void *,
    const struct sched_row *), void *arg)
{
	const char *v[1] = { queue };
	PGresult *r = pg_exec(pg, list_sql, 1, v);
	struct sched_row s;
	msec_t since;
	int n;

	if (pg_result(pg, r) != PGRES_TUPLES_OK || (n = pg_rows(r, 6, 100000,
	    NULL)) == -1) {
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		s.name = PQgetvalue(r, i, 0);
		s.ts.every = num(r, i, 1);
		s.ts.offset = num(r, i, 2);
		if (catchup_parse(PQgetvalue(r, i, 3), &s.ts.mode) == -1)
			s.ts.mode = CATCHUP_SKIP;
		since = num(r, i, 4);
		s.last = num(r, i, 5);
		/* A schedule that never ticked counts from its declaration. */
		s.next = tick_next(&s.ts, s.last >= 0 ? s.last :
		    tick_floor(&s.ts, since));
		row(arg, &s);
	}
	PQclear(r);
	return 0;
}
