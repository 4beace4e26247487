/*
 * pg_cmd_schedule.c: `chute schedule URL [NAME ...]` and `chute tick URL
 * [--follow]`: a queue's recurring jobs (fleet.md, "Recurring jobs").  A
 * pass is one transaction: the queue's schedules locked (FOR UPDATE, by
 * name: every scheduler locks them in one order), the server's clock
 * read, and for each schedule with due ticks one statement that inserts
 * their jobs, their rows in chute.ticks (unique per schedule and tick)
 * and the new last tick.  A scheduler killed anywhere leaves the
 * transaction committed or rolled back whole, so any number of them, on
 * any hosts, make each tick's job once; their own clocks play no part.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/tick.h"
#include "cli/cmd.h"
#include "cli/schedule.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/* The server's clock, in ms since the epoch. */
#define SERVER_MS	"(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
#define TICKS_KEPT	"100"	/* chute.ticks rows kept per schedule */

static const char declare_sql[] =
"INSERT INTO chute.schedules AS s (queue, name, every_ms, offset_ms,"
" catch_up, payload, since_ms) VALUES ($1, $2, $3::bigint, $4::bigint, $5,"
" $6, " SERVER_MS ") ON CONFLICT (queue, name) DO UPDATE SET"
" every_ms = EXCLUDED.every_ms, offset_ms = EXCLUDED.offset_ms,"
" catch_up = EXCLUDED.catch_up, payload = EXCLUDED.payload,"
" since_ms = EXCLUDED.since_ms RETURNING (xmax = 0)";

/*
 * One schedule's due ticks ($3 times, $4 IDs) made, $5 its new last
 * tick: their rows in chute.ticks (a tick made twice would break its
 * key, and the whole pass with it), their payloads unless the ID is
 * taken (a job submitted by hand as NAME@TICK stands for its tick), their
 * jobs in new with the tick as run_at, one notification for the workers.
 * Rows: the jobs made, then the schedule updated (1).
 */
static const char make_sql[] =
"WITH t AS (SELECT * FROM unnest($3::bigint[], $4::text[]) AS t(tick, id)),"
" s AS (SELECT payload, every_ms FROM chute.schedules WHERE queue = $1"
" AND name = $2),"
" k AS (INSERT INTO chute.ticks (queue, name, tick_ms, id) SELECT $1, $2,"
" tick, id FROM t RETURNING tick_ms, id),"
" p AS (INSERT INTO chute.payloads (queue, id, body) SELECT $1, k.id,"
" s.payload FROM k, s ORDER BY k.tick_ms ON CONFLICT DO NOTHING RETURNING id),"
" j AS (INSERT INTO chute.live (queue, id, state, run_at, size) SELECT $1,"
" p.id, 'new', to_timestamp(k.tick_ms / 1000.0), octet_length(s.payload)"
" FROM p JOIN k ON k.id = p.id, s RETURNING id),"
" u AS (UPDATE chute.schedules SET last_ms = $5::bigint WHERE queue = $1"
" AND name = $2 RETURNING 1),"
" d AS (DELETE FROM chute.ticks WHERE queue = $1 AND name = $2 AND"
" tick_ms < $5::bigint - " TICKS_KEPT " * (SELECT every_ms FROM s)),"
" w AS (SELECT pg_notify('" PG_CHANNEL "', $1) FROM (SELECT FROM j LIMIT 1) x)"
" SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM u)"
" WHERE (SELECT count(*) FROM w) >= 0";

static long long
num(const PGresult *r, int row, int col)
{
	return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static int
declare(struct pg *pg, const struct sched_args *a)
{
	static const Oid types[6] = { PG_OID_TEXT, PG_OID_TEXT, 0, 0,
	    PG_OID_TEXT, PG_OID_BYTEA };
	static const int fmts[6] = { 0, 0, 0, 0, 0, 1 };
	char every[24], off[24];
	const char *v[6] = { pg->queue, a->name, every, off,
	    catchup_name(a->ts.mode), a->payload };
	const int lens[6] = { 0, 0, 0, 0, 0, (int)a->len };
	PGresult *r;
	bool created;

	snprintf(every, sizeof(every), "%lld", (long long)a->ts.every);
	snprintf(off, sizeof(off), "%lld", (long long)a->ts.offset);
	r = pg_send(pg, declare_sql, 6, types, v, lens, fmts) == 0 ?
	    pg_await(pg) : NULL;
	if (pg_result(pg, r) != PGRES_TUPLES_OK || pg_rows(r, 1, 1, NULL) != 1) {
		PQclear(r);
		return pg_fail(pg, "schedule");
	}
	created = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	printf("%s %s\n", a->name, created ? "declared" : "changed");
	return 0;
}

static int
remove_one(struct pg *pg, const char *name)
{
	const char *v[2] = { pg->queue, name };
	PGresult *r = pg_exec(pg, "DELETE FROM chute.schedules WHERE queue = $1"
	    " AND name = $2", 2, v);

	if (pg_result(pg, r) != PGRES_COMMAND_OK) {
		PQclear(r);
		return pg_fail(pg, "schedule --remove");
	}
	if (strcmp(PQcmdTuples(r), "1") != 0) {
		PQclear(r);
		fprintf(stderr, "chute: %s: no schedule %s in queue %s\n",
		    pg->name, name, pg->queue);
		return EXIT_NO;
	}
	PQclear(r);
	printf("%s removed\n", name);
	return 0;
}

/* Row i of the pass's columns into *s. */
static void
row_of(const PGresult *r, int i, struct sched_row *s, msec_t *since)
{
	s->name = PQgetvalue(r, i, 0);
	s->ts.every = num(r, i, 1);
	s->ts.offset = num(r, i, 2);
	if (catchup_parse(PQgetvalue(r, i, 3), &s->ts.mode) == -1)
		s->ts.mode = CATCHUP_SKIP;
	*since = num(r, i, 4);
	s->last = num(r, i, 5);
}

static void
print_row(void *arg, const struct sched_row *s)
{
	(void)arg;
	sched_print_row(s);
}

static int
list(struct pg *pg)
{
	return pg_schedules(pg, pg->queue, print_row, NULL) == -1 ?
	    pg_fail(pg, "schedule") : 0;
}

int
pgcmd_schedule(int argc, char **argv)
{
	struct sched_args a;
	struct pg pg;
	int rc;

	if ((rc = pgcmd_take(&argc, argv, "schedule", &pg, true)) != 0)
		return rc;
	if ((rc = sched_args_parse(argc, argv, &a)) != 0) {
		free(pg.uri);
		return rc;
	}
	if (pg_connect(&pg, false, 0) == -1)
		rc = pg_fail(&pg, "connect");
	else if ((rc = pg_schema_check(&pg)) != 0)
		;
	else if (a.name == NULL)
		rc = list(&pg);
	else if (a.remove)
		rc = remove_one(&pg, a.name);
	else
		rc = declare(&pg, &a);
	sched_args_free(&a);
	return pgcmd_done(&pg, rc);
}

/* "{a,b,c}" of the plan's ticks and of their IDs (safe bytes: no quoting). */
static int
arrays(const char *name, const msec_t *t, int n, char **ticks, char **ids)
{
	size_t tl = (size_t)n * 24 + 3, il = (size_t)n * (TICK_ID_MAX + 1) + 3;
	char id[TICK_ID_MAX + 1];

	*ticks = malloc(tl);
	*ids = malloc(il);
	if (*ticks == NULL || *ids == NULL)
		return -1;
	strlcpy(*ticks, "{", tl);
	strlcpy(*ids, "{", il);
	for (int i = 0; i < n; i++) {
		char one[24];

		snprintf(one, sizeof(one), "%s%lld", i ? "," : "",
		    (long long)t[i]);
		strlcat(*ticks, one, tl);
		tick_id(name, t[i], id, sizeof(id));
		if (i)
			strlcat(*ids, ",", il);
		strlcat(*ids, id, il);
	}
	strlcat(*ticks, "}", tl);
	strlcat(*ids, "}", il);
	return 0;
}

/* The plan's jobs made, in the pass's transaction: 0, or a status (said). */
static int
make(struct pg *pg, const char *name, const msec_t *t, int n)
{
	char *ticks = NULL, *ids = NULL, last[24];
	const char *v[5] = { pg->queue, name, NULL, NULL, last };
	long long made = -1;
	PGresult *r;

	if (arrays(name, t, n, &ticks, &ids) == -1) {
		free(ticks);
		free(ids);
		fprintf(stderr, "chute: tick: out of memory\n");
		return EX_SOFTWARE;
	}
	v[2] = ticks;
	v[3] = ids;
	snprintf(last, sizeof(last), "%lld", (long long)t[n - 1]);
	r = pg_exec(pg, make_sql, 5, v);
	free(ticks);
	free(ids);
	if (pg_result(pg, r) != PGRES_TUPLES_OK || pg_rows(r, 2, 1, NULL) != 1) {
		PQclear(r);
		return pg_fail(pg, "tick");
	}
	made = num(r, 0, 0);
	PQclear(r);
	if (made < n)
		fprintf(stderr, "chute: %s: schedule %s: %lld of its ticks' IDs "
		    "were jobs already (submitted by hand?): not made again\n",
		    pg->name, name, (long long)n - made);
	return 0;
}

static void
say_missed(struct pg *pg, const struct sched_row *s, msec_t base,
    long long missed)
{
	char text[256];

	tick_missed_text(&s->ts, missed, tick_next(&s->ts, base), text,
	    sizeof(text));
	if (*text)
		fprintf(stderr, "chute: %s: schedule %s: %s\n", pg->name,
		    s->name, text);
}

/* Each locked schedule's due ticks made; *next the earliest next tick. */
static int
make_all(struct pg *pg, const PGresult *r, int n, msec_t now, msec_t *next)
{
	msec_t ticks[TICK_BATCH], since, base, one;
	struct sched_row s;
	long long missed;
	int rc = 0, k;

	for (int i = 0; i < n && rc == 0; i++) {
		row_of(r, i, &s, &since);
		base = s.last >= 0 ? s.last : tick_floor(&s.ts, since);
		k = tick_plan(&s.ts, base, now, ticks, TICK_BATCH, &missed);
		if (k > 0)
			rc = make(pg, s.name, ticks, k);
		if (rc == 0)
			say_missed(pg, &s, base, missed);
		one = k == TICK_BATCH ? now : tick_next(&s.ts, now > base ? now :
		    base);
		if (*next == -1 || one < *next)
			*next = one;
	}
	return rc;
}

/*
 * One pass, one transaction.  *now: the server's clock at the pass; *next
 * the earliest next tick by it (-1: no schedule).  0, or a status (said).
 */
static int
tick_pass(struct pg *pg, msec_t *now, msec_t *next)
{
	const char *v[1] = { pg->queue };
	PGresult *r = NULL, *c = NULL;
	int rc = 0, n;

	*next = -1;
	/* A scheduler cut off holding the locks: the others wait 5 s at most. */
	if (pg_cmd(pg, "BEGIN", 0, NULL) == -1 || pg_cmd(pg,
	    "SET LOCAL lock_timeout = '5s'", 0, NULL) == -1)
		return pg_fail(pg, "tick");
	r = pg_exec(pg, "SELECT name, every_ms, offset_ms, catch_up, since_ms,"
	    " coalesce(last_ms, -1) FROM chute.schedules WHERE queue = $1"
	    " ORDER BY name FOR UPDATE", 1, v);
	if (pg_result(pg, r) != PGRES_TUPLES_OK ||
	    (n = pg_rows(r, 6, 100000, NULL)) == -1)
		goto fail;
	/* Read after the locks were granted: the clock of this pass. */
	c = pg_exec(pg, "SELECT " SERVER_MS, 0, NULL);
	if (pg_result(pg, c) != PGRES_TUPLES_OK || pg_rows(c, 1, 1, NULL) != 1)
		goto fail;
	*now = num(c, 0, 0);
	if ((rc = make_all(pg, r, n, *now, next)) != 0) {
		pg_cmd(pg, "ROLLBACK", 0, NULL);
		goto out;
	}
	if (pg_cmd(pg, "COMMIT", 0, NULL) == -1)
		goto fail;
	goto out;
fail:
	rc = pg_fail(pg, "tick");
	pg_cmd(pg, "ROLLBACK", 0, NULL);
out:
	PQclear(r);
	PQclear(c);
	return rc;
}

int
pgcmd_tick(int argc, char **argv)
{
	msec_t now = 0, next = -1;
	unsigned checked = (unsigned)-1;
	bool follow, down = false;
	char msg[1024];
	struct pg pg;
	int rc;

	if ((rc = pgcmd_take(&argc, argv, "tick", &pg, true)) != 0)
		return rc;
	if ((rc = tick_args_parse(argc, argv, &follow)) != 0) {
		free(pg.uri);
		return rc;
	}
	for (;;) {
		/* The schema checked once a connection. */
		if (!pg_ok(&pg) && pg_connect(&pg, false, 0) == -1) {
			rc = pg_fail_msg(&pg, "connect", msg, sizeof(msg));
			/* An outage is said once, not every second. */
			if (!down)
				fprintf(stderr, "chute: %s%s\n", msg, follow ?
				    " (trying again every second)" : "");
			down = true;
		} else if (pg.connects == checked ||
		    (rc = pg_schema_check(&pg)) == 0) {
			if (down)
				fprintf(stderr, "chute: %s: connected again\n",
				    pg.name);
			down = false;
			checked = pg.connects;
			rc = tick_pass(&pg, &now, &next);
		}
		/*
		 * Only a passing trouble (75: the server away, a lock held
		 * past 5 s) is waited out; a schema, a password or a
		 * statement refused would be said every second: exit with it.
		 */
		if (!follow || (rc != 0 && rc != EX_TEMPFAIL))
			break;
		if (rc != 0) {
			/* Lost, or refused: again in a second, anew. */
			pg_close(&pg);
			next = -1;
		}
		/*
		 * The server's clock says how long until the next tick; ours
		 * only measures that wait, capped at 5 s.
		 */
		sched_sleep_until(next == -1 || rc != 0 ? now_ms() + 1000 :
		    now_ms() + (next - now), 5000);
	}
	return pgcmd_done(&pg, rc);
}
