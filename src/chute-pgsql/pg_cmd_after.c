/*
 * pg_cmd_after.c: `chute submit URL --after ID,...`: one job waiting for
 * others of its queue, in one call of chute.submit_after (schema version
 * 12), which refuses an unknown ID with nothing written.  fleet.md,
 * "Dependencies", has the statements and their crash windows.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/submit_after.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

static const char after_sql[] =
"SELECT chute.submit_after($1, $2, $3, $4::text[], $5::boolean,"
" $6::smallint, $7)";

int
pgcmd_submit_after(struct pg *pg, const struct af_opts *a, const char *id,
    const char *body, size_t len, int prio, const char *key)
{
	static const Oid types[7] = { PG_OID_TEXT, PG_OID_TEXT, PG_OID_BYTEA,
	    PG_OID_TEXT_ARR, PG_OID_TEXT, PG_OID_TEXT, PG_OID_TEXT };
	static const int fmts[7] = { 0, 0, 1, 1, 0, 0, 0 };
	struct pg_arr deps = { 0 };
	const char *v[7], *st;
	char pb[16];
	int lens[7] = { 0 }, rc = 0;
	PGresult *r;

	pg_arr_begin(&deps, PG_OID_TEXT);
	for (size_t i = 0; i < a->n; i++)
		if (pg_arr_str(&deps, a->ids[i]) == -1)
			break;
	if (deps.b == NULL) {
		fprintf(stderr, "chute: submit: out of memory\n");
		return EX_SOFTWARE;
	}
	pg_arr_end(&deps);
	v[0] = pg->queue;
	v[1] = id;
	v[2] = body;
	v[3] = deps.b;
	v[4] = a->mode == AFTER_RUN ? "true" : "false";
	snprintf(pb, sizeof(pb), "%d", prio);
	v[5] = pb;
	v[6] = key;		/* NULL: none */
	lens[2] = (int)len;
	lens[3] = (int)deps.len;
	r = pg_send(pg, after_sql, 7, types, v, lens, fmts) == 0 ?
	    pg_await(pg) : NULL;
	free(deps.b);
	if (pg_result(pg, r) != PGRES_TUPLES_OK || pg_rows(r, 1, 1, NULL) != 1) {
		PQclear(r);
		return pg_fail(pg, "submit");
	}
	st = PQgetvalue(r, 0, 0);
	if (strncmp(st, "unknown ", 8) == 0) {
		fprintf(stderr, "chute: %s: --after %s: no such job in queue %s"
		    " (never submitted, or purged)\n", pg->name, vis_id(st + 8),
		    pg->queue);
		rc = EXIT_NO;
	} else if (strcmp(st, "exists") == 0) {
		fprintf(stderr, "chute: %s: job exists\n", id);
		rc = EXIT_NO;
	} else
		printf("%s\n", id);
	PQclear(r);
	return rc;
}
