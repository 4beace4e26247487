/*
 * pg_queues.c: a queue paused and resumed (chute.queues), for `chute
 * pause URL`, `chute resume URL`, and the views that show it or act on it
 * (top, web).  The claim's own check of the pause is queue_pg_claim.c's.
 * And the words of a cancel's notification (pg.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "queue/pg/pg.h"

/*
 * Each statement changes the row only when the state changes, so that a
 * second pause keeps the first one's time and author, and notifies only
 * then: QUEUE (the submit's word: workers claim, views refresh) and
 * "pause QUEUE" or "resume QUEUE" (a worker says so, and hands back
 * what it claimed ahead: queue_pg.c).  Both in the statement's own
 * transaction, delivered by its commit.
 */
static const char pause_sql[] =
    "WITH up AS (INSERT INTO chute.queues (queue, paused, paused_at, paused_by)"
    " VALUES ($1, true, now(), $2) ON CONFLICT (queue) DO UPDATE"
    " SET paused = true, paused_at = now(), paused_by = EXCLUDED.paused_by"
    " WHERE NOT chute.queues.paused RETURNING queue)"
    " SELECT pg_notify('" PG_CHANNEL "', queue),"
    " pg_notify('" PG_CHANNEL "', 'pause ' || queue) FROM up";
static const char resume_sql[] =
    "WITH up AS (UPDATE chute.queues SET paused = false, paused_at = NULL,"
    " paused_by = NULL WHERE queue = $1 AND paused RETURNING queue)"
    " SELECT pg_notify('" PG_CHANNEL "', queue),"
    " pg_notify('" PG_CHANNEL "', 'resume ' || queue) FROM up";

int
pg_pause(struct pg *pg, const char *queue, bool on, const char *by)
{
	const char *p[2] = { queue, by != NULL ? by : "" };
	PGresult *r = pg_exec(pg, on ? pause_sql : resume_sql, on ? 2 : 1, p);
	int changed;

	if (r == NULL)
		return -1;
	changed = PQntuples(r);
	PQclear(r);
	return changed > 0 ? 0 : 1;
}

int
pg_paused(struct pg *pg, const char *queue, bool *paused, char *by,
    size_t len, msec_t *at)
{
	static const char sql[] = "SELECT coalesce(paused_by, ''),"
	    " (extract(epoch FROM paused_at) * 1000)::bigint"
	    " FROM chute.queues WHERE queue = $1 AND paused";
	const char *p[1] = { queue };
	PGresult *r = pg_exec(pg, sql, 1, p);
	int n;

	if (r == NULL)
		return -1;
	if ((n = pg_rows(r, 2, 1, NULL)) == -1) {
		PQclear(r);
		return -1;
	}
	*paused = n == 1;
	if (by != NULL && len > 0)
		strlcpy(by, n == 1 ? PQgetvalue(r, 0, 0) : "", len);
	if (at != NULL)
		*at = n == 1 ? strtoll(PQgetvalue(r, 0, 1), NULL, 10) : 0;
	PQclear(r);
	return 0;
}

void
pg_cancel_note(char *buf, size_t len, const char *queue, const char *id)
{
	snprintf(buf, len, "cancel/%s/%s", queue, id);
}

const char *
pg_cancel_of(const char *payload, const char *queue)
{
	size_t ql = strlen(queue);

	if (strncmp(payload, "cancel/", 7) != 0 ||
	    strncmp(payload + 7, queue, ql) != 0 || payload[7 + ql] != '/')
		return NULL;
	return payload + 8 + ql;
}
