/*
 * pg_cmd_unique.c: `chute submit URL --unique KEY`: one job, whose key's
 * row in chute.unique_keys (schema version 10) goes in with it, in one
 * statement, or is found held; then what --on-duplicate says.  fleet.md,
 * "Unique keys", has the statements and their crash windows.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/util.h"
#include "cli/submit_unique.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/* The states of a new job: defer when --delay or --at gave a time. */
#define UQ_STATE	"CASE WHEN $6::bigint IS NULL AND $7::bigint IS NULL" \
	" THEN 'new' ELSE 'defer' END"
#define UQ_RUN_AT	"CASE WHEN $7::bigint IS NOT NULL THEN" \
	" to_timestamp($7::bigint / 1000.0) WHEN $6::bigint IS NOT NULL THEN" \
	" now() + $6::bigint * interval '1 millisecond' ELSE now() END"

/*
 * The key, the payload and the job, or nothing: the payload's insert has
 * no ON CONFLICT, so a taken ID fails the statement (23505), key and all.
 * A key held by a transaction not yet committed waits for it; then its
 * row is there (nothing inserted here) or gone (rolled back: ours).
 * Rows: one, the number of jobs inserted (0: the key is held).
 */
static const char take_sql[] =
"WITH k AS (INSERT INTO chute.unique_keys (queue, ukey, id, held_while)"
" VALUES ($1, $4, $2, $5) ON CONFLICT (queue, ukey) DO NOTHING RETURNING id),"
" p AS (INSERT INTO chute.payloads (queue, id, body, unique_key)"
" SELECT $1, id, $3, $4 FROM k RETURNING id),"
" j AS (INSERT INTO chute.live (queue, id, state, run_at, size, unique_key,"
" priority, key) SELECT $1, id, " UQ_STATE ", " UQ_RUN_AT ", octet_length($3),"
" $4, $8::smallint, $9 FROM p RETURNING id),"
" w AS (SELECT pg_notify('" PG_CHANNEL "', $1) FROM (SELECT FROM j LIMIT 1) x)"
" SELECT count(*) FROM j WHERE (SELECT count(*) FROM w) >= 0";

/* The holder: its ID and state (NULL: purged meanwhile); no row: freed. */
static const char holder_sql[] =
"SELECT u.id, coalesce(l.state, f.state) FROM chute.unique_keys u"
" LEFT JOIN chute.live l ON l.queue = u.queue AND l.id = u.id"
" LEFT JOIN chute.finished f ON f.queue = u.queue AND f.id = u.id"
" WHERE u.queue = $1 AND u.ukey = $2";

/*
 * --on-duplicate replace: a waiting holder's bytes and time (its priority
 * and key stay: a key's admission counts follow the row).  Its row is
 * locked by the UPDATE, so a claim's SKIP LOCKED passes it by; one
 * claimed first is not waiting any more, and nothing is updated (0 rows).
 */
static const char replace_sql[] =
"WITH l AS (UPDATE chute.live SET state = " UQ_STATE ", run_at = " UQ_RUN_AT ","
" size = octet_length($3) WHERE queue = $1 AND id = $2"
" AND state IN ('new', 'defer') AND unique_key = $4 RETURNING id),"
" p AS (UPDATE chute.payloads SET body = $3 WHERE queue = $1"
" AND id IN (SELECT id FROM l) RETURNING id),"
" w AS (SELECT pg_notify('" PG_CHANNEL "', $1) FROM (SELECT FROM p LIMIT 1) x)"
" SELECT count(*) FROM p WHERE (SELECT count(*) FROM w) >= 0";

struct uq_job {
	struct pg		*pg;
	const struct uq_opts	*u;
	const char		*id;
	const char		*body;
	size_t			 len;
	char			 delay[24], at[24];
	bool			 has_delay, has_at;
	char			 prio[16];	/* --priority */
	const char		*key;		/* --key, NULL none */
};

/*
 * Run sql with the job's nine parameters (the priority and key typed, as
 * replace_sql does not name them); its one count, or -1 (said).
 */
static long
uq_count(struct uq_job *j, const char *sql, const char *id)
{
	static const Oid types[9] = { PG_OID_TEXT, PG_OID_TEXT, PG_OID_BYTEA,
	    PG_OID_TEXT, PG_OID_TEXT, 0, 0, PG_OID_TEXT, PG_OID_TEXT };
	static const int fmts[9] = { 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	const char *v[9] = { j->pg->queue, id, j->body, j->u->key,
	    unique_while_names[j->u->w], j->has_delay ? j->delay : NULL,
	    j->has_at ? j->at : NULL, j->prio, j->key };
	const int lens[9] = { 0, 0, (int)j->len, 0, 0, 0, 0, 0, 0 };
	PGresult *r;
	long n;

	r = pg_send(j->pg, sql, 9, types, v, lens, fmts) == 0 ?
	    pg_await(j->pg) : NULL;
	if (pg_result(j->pg, r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		PQclear(r);
		return -1;
	}
	n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return n;
}

/* The holder into id and its state: 1, 0 none (freed), -1 error. */
static int
uq_holder(struct uq_job *j, char *id, size_t len, char *st, size_t stlen)
{
	const char *v[2] = { j->pg->queue, j->u->key };
	PGresult *r = pg_exec(j->pg, holder_sql, 2, v);
	int n;

	if (r == NULL)
		return -1;
	if ((n = pg_rows(r, 2, 1, NULL)) < 0) {
		PQclear(r);
		return -1;
	}
	if (n == 1) {
		strlcpy(id, PQgetvalue(r, 0, 0), len);
		strlcpy(st, PQgetisnull(r, 0, 1) ? "purged" :
		    PQgetvalue(r, 0, 1), stlen);
	}
	PQclear(r);
	return n;
}

/* Held by id in st: refused, kept, or (waiting) replaced; -1 look again. */
static int
uq_held(struct uq_job *j, const char *id, const char *st)
{
	long n;

	if (j->u->dup == UQ_REPLACE && (strcmp(st, "new") == 0 ||
	    strcmp(st, "defer") == 0)) {
		if ((n = uq_count(j, replace_sql, id)) == -1)
			return pg_fail(j->pg, "submit");
		if (n == 0)
			return -1;
		printf("%s\n", id);
		return 0;
	}
	printf("%s\n", id);
	if (j->u->dup == UQ_KEEP)
		return 0;
	fflush(stdout);
	fprintf(stderr, "chute: %s: unique key %s of queue %s is held by job %s"
	    " (%s)\n", j->pg->name, j->u->key, j->pg->queue, vis_id(id), st);
	return EXIT_HELD;
}

int
pgcmd_submit_unique(struct pg *pg, const struct uq_opts *u, const char *id,
    const char *body, size_t len, long long delay, long long at, int prio,
    const char *key)
{
	struct uq_job j = { .pg = pg, .u = u, .id = id, .body = body,
	    .len = len, .has_delay = delay >= 0, .has_at = at >= 0,
	    .key = key };
	char hid[NAME_MAX + 1], st[16];
	long n;
	int rc;

	snprintf(j.delay, sizeof(j.delay), "%lld", (long long)delay);
	snprintf(j.at, sizeof(j.at), "%lld", (long long)at);
	snprintf(j.prio, sizeof(j.prio), "%d", prio);
	/* The holder may go, or move, between two statements: again. */
	for (int tries = 0; tries < 8; tries++) {
		if ((n = uq_count(&j, take_sql, id)) == -1) {
			if (strcmp(pg->state, "23505") == 0) {
				fprintf(stderr, "chute: %s: job exists\n", id);
				return EXIT_NO;
			}
			return pg_fail(pg, "submit");
		}
		if (n == 1) {
			printf("%s\n", id);
			return 0;
		}
		if ((rc = uq_holder(&j, hid, sizeof(hid), st, sizeof(st))) == -1)
			return pg_fail(pg, "submit");
		if (rc == 1 && (rc = uq_held(&j, hid, st)) != -1)
			return rc;
	}
	fprintf(stderr, "chute: %s: unique key %s of queue %s: its holder kept "
	    "changing; try again\n", pg->name, u->key, pg->queue);
	return EX_TEMPFAIL;
}
