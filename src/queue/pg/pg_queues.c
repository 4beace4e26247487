/*
 * pg_queues.c: a queue paused and resumed (chute.queues), for `chute
 * pause URL`, `chute resume URL`, and the views that show it or act on it
 * (top, web).  The claim's own check of the pause is queue_pg_claim.c's.
 * And the words of a cancel's notification (pg.h); a queue's retention
 * (version 9), read and set, and the words of a job's end it removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/spool.h"
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

/* ---- retention ---- */

int
pg_retention(struct pg *pg, const char *queue, struct retention *r)
{
	static const char sql[] = "SELECT coalesce(keep_done, -1),"
	    " coalesce(keep_failed, -1) FROM chute.queues WHERE queue = $1";
	const char *p[1] = { queue };
	PGresult *res = pg_exec(pg, sql, 1, p);
	int n;

	r->done = r->failed = KEEP_FOREVER;
	if (res == NULL)
		return -1;
	if ((n = pg_rows(res, 2, 1, NULL)) == -1) {
		PQclear(res);
		return -1;
	}
	if (n == 1) {
		r->done = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		r->failed = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
		if (r->done < 0)
			r->done = KEEP_FOREVER;
		if (r->failed < 0)
			r->failed = KEEP_FOREVER;
	}
	PQclear(res);
	return 0;
}

/*
 * The row made if the queue has none (as a pause does), the workers told
 * once it is committed: they read it again (queue_pg_retain.c).
 */
int
pg_set_retention(struct pg *pg, const char *queue, const struct retention *r)
{
	static const char sql[] =
	    "WITH up AS (INSERT INTO chute.queues (queue, keep_done, keep_failed)"
	    " VALUES ($1, $2::bigint, $3::bigint) ON CONFLICT (queue) DO UPDATE"
	    " SET keep_done = EXCLUDED.keep_done,"
	    " keep_failed = EXCLUDED.keep_failed RETURNING queue)"
	    " SELECT pg_notify('" PG_CHANNEL "', 'retention ' || queue) FROM up";
	char d[24], f[24];
	const char *p[3] = { queue, NULL, NULL };
	PGresult *res;

	snprintf(d, sizeof(d), "%lld", (long long)r->done);
	snprintf(f, sizeof(f), "%lld", (long long)r->failed);
	if (r->done != KEEP_FOREVER)
		p[1] = d;
	if (r->failed != KEEP_FOREVER)
		p[2] = f;
	if ((res = pg_exec(pg, sql, 3, p)) == NULL)
		return -1;
	PQclear(res);
	return 0;
}

const char *
pg_ended_of(const char *payload, const char *queue, int *st)
{
	const char *s;
	size_t ql = strlen(queue), sl;

	if (strncmp(payload, "ended/", 6) != 0)
		return NULL;
	s = payload + 6;
	sl = strcspn(s, "/");
	for (*st = ST_FIRST; *st < ST_END; (*st)++)
		if (state_terminal(*st) && strlen(state_names[*st]) == sl &&
		    strncmp(s, state_names[*st], sl) == 0)
			break;
	if (*st == ST_END || s[sl] != '/' || strncmp(s + sl + 1, queue,
	    ql) != 0 || s[sl + 1 + ql] != '/')
		return NULL;
	return s + sl + 2 + ql;
}
