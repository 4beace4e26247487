/*
 * store_pg_act.c: a job of a PostgreSQL queue acted on, for `chute cancel
 * URL`, `chute retry URL`, the keys of `chute top URL` and the actions of
 * `chute web URL`: each one statement that moves the row, a note in the
 * job's log, a NOTIFY; msg gets the line to show; nothing is printed.
 * And `chute purge URL`'s statement, and the note after a pause.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "queue/pg/pg.h"
#include "queue/pg/pg_view.h"
#include "queue/pg/store_pg.h"

int
pg_note(struct pg *pg, const char *id, const char *text)
{
	static const char sql[] = "INSERT INTO chute.logs (queue, id, body)"
	    " VALUES ($1, $2, convert_to('@chute ' || to_char(now() AT TIME"
	    " ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || $3 ||"
	    " E'\\n', 'UTF8'))" PG_LOGS_STRAY;
	const char *p[3] = { pg->queue, id, text };

	return pg_cmd(pg, sql, 3, p);
}

int
pg_why_not(struct pg *pg, const char *id, const char *cmd, char *msg,
    size_t len)
{
	static const char sql[] =
	    "SELECT state FROM chute.jobs WHERE queue = $1 AND id = $2";
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);

	if (r == NULL)
		return pg_fail_msg(pg, cmd, msg, len);
	if (PQntuples(r) == 0)
		snprintf(msg, len, "%s: unknown job", id);
	else if (strcmp(cmd, "retry") == 0)
		snprintf(msg, len, "%s: not failed (%s)", id, PQgetvalue(r, 0, 0));
	else
		snprintf(msg, len, "%s: already %s", id, PQgetvalue(r, 0, 0));
	PQclear(r);
	return EXIT_NO;
}

/*
 * new, defer or cur -> failed, in one statement: the row moves from
 * chute.live to chute.finished, and the claim's token goes with it, so
 * the outcome of a handler still running is refused.  Its worker is told
 * at once (NOTIFY), and at its next lease renewal at the latest.  A
 * running job's dependents are held until its handler has ended (schema
 * version 13): its edges get held_until, its lease's end, which the
 * statement trigger passes over, and its worker releases them.
 */
int
pg_cancel_job(struct pg *pg, const char *id, const char *by, char *msg,
    size_t len)
{
	static const char sql[] =
	    "WITH gone AS (DELETE FROM chute.live WHERE queue = $1"
	    " AND id = $2 RETURNING *),"
	    " held AS (UPDATE chute.after a SET held_until ="
	    " coalesce(g.lease_until, now()) FROM gone g WHERE g.state = 'cur'"
	    " AND a.queue = $1 AND a.after_id = $2 AND NOT a.settled),"
	    " fin AS (INSERT INTO chute.finished (" PG_FINISHED_COLS ")"
	    " SELECT queue, id, 'failed', now(), attempts, 'cancelled', size,"
	    " created, claimed, priority, key FROM gone)"
	    " SELECT state FROM gone";
	const char *p[2] = { pg->queue, id };
	char text[256], note[NAME_MAX + 160];
	const char *n[1] = { note };
	PGresult *r = pg_exec(pg, sql, 2, p);

	if (r == NULL)
		return pg_fail_msg(pg, "cancel", msg, len);
	if (PQntuples(r) == 0) {
		PQclear(r);
		return pg_why_not(pg, id, "cancel", msg, len);
	}
	snprintf(text, sizeof(text), "cancelled by %s in %s", by,
	    PQgetvalue(r, 0, 0));
	pg_note(pg, id, text);
	pg_cancel_note(note, sizeof(note), pg->queue, id);
	if (strcmp(PQgetvalue(r, 0, 0), "cur") == 0)	/* its worker stops it */
		pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	else				/* no worker holds it: the views only */
		pg_cmd(pg, "SELECT pg_notify('" PGV_CHANNEL "', $1)", 1, p);
	snprintf(msg, len, "%s %s->failed", id, PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

int
pg_retry_job(struct pg *pg, const char *id, const char *by, char *msg,
    size_t len)
{
	static const char sql[] =
	    "WITH back AS (DELETE FROM chute.finished WHERE queue = $1"
	    " AND id = $2 AND state = 'failed' RETURNING *),"
	    /* A job with a dependency list waits again (schema 12). */
	    " live AS (INSERT INTO chute.live (queue, id, state, run_at, size,"
	    " created, claimed, priority, key) SELECT queue, id, CASE WHEN EXISTS"
	    " (SELECT FROM chute.after a WHERE a.queue = back.queue AND a.id ="
	    " back.id) THEN 'wait' ELSE 'new' END, now(), size, created, claimed,"
	    " priority, key FROM back RETURNING state),"
	    /* The last attempt's log, kept in the finished row, stays. */
	    " kept AS (INSERT INTO chute.logs (queue, id, body) SELECT queue,"
	    " id, log FROM back WHERE log IS NOT NULL" PG_LOGS_STRAY ")"
	    " SELECT state FROM live";
	const char *p[2] = { pg->queue, id }, *n[1] = { pg->queue };
	char text[256], to[8] = "new";
	PGresult *r = pg_exec(pg, sql, 2, p);
	int rows;

	if (r == NULL)
		return pg_fail_msg(pg, "retry", msg, len);
	rows = PQntuples(r);
	if (rows == 1 && strcmp(PQgetvalue(r, 0, 0), "wait") == 0)
		strlcpy(to, "wait", sizeof(to));
	PQclear(r);
	if (rows == 0)
		return pg_why_not(pg, id, "retry", msg, len);
	snprintf(text, sizeof(text), "reset by %s", by);
	pg_note(pg, id, text);
	pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	snprintf(msg, len, "%s failed->%s", id, to);
	return 0;
}

/* ---- pause ---- */

/*
 * After a pause: a queue that has no job and no worker is most likely a
 * misspelt name, and the queue meant runs on; say so (the pause stands:
 * pausing a queue before its first job is allowed).  Two probes of keys.
 */
void
pg_note_if_unknown(struct pg *pg)
{
	static const char sql[] =
	    "SELECT EXISTS (SELECT 1 FROM chute.jobs WHERE queue = $1)"
	    " OR EXISTS (SELECT 1 FROM chute.workers WHERE queue = $1)";
	const char *p[1] = { pg->queue };
	PGresult *r = pg_exec(pg, sql, 1, p);

	if (r != NULL && pg_rows(r, 1, 1, NULL) == 1 &&
	    strcmp(PQgetvalue(r, 0, 0), "f") == 0)
		fprintf(stderr, "chute: note: queue %s has no job and no "
		    "worker: is that the name meant? (--queue NAME)\n",
		    pg->queue);
	PQclear(r);
}

/* ---- purge ---- */

/* Finished jobs older than older ms go, with their payloads and logs. */
int
pg_purge(struct pg *pg, const char *state, msec_t older, long long *removed)
{
	static const char sql[] =
	    "WITH gone AS (DELETE FROM chute.finished WHERE queue = $1"
	    " AND ($3::text IS NULL OR state = $3)"
	    " AND run_at < now() - $2::bigint * interval '1 millisecond'"
	    " RETURNING id),"
	    " p AS (DELETE FROM chute.payloads WHERE queue = $1"
	    " AND id IN (SELECT id FROM gone)),"
	    " l AS (DELETE FROM chute.logs WHERE queue = $1"
	    " AND id IN (SELECT id FROM gone))"
	    " SELECT count(*) FROM gone";
	const char *p[3];
	char age[24];
	PGresult *r;

	*removed = -1;
	snprintf(age, sizeof(age), "%lld", (long long)older);
	p[0] = pg->queue;
	p[1] = age;
	p[2] = state;
	if ((r = pg_exec(pg, sql, 3, p)) == NULL)
		return pg_fail(pg, "purge");
	*removed = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return 0;
}
