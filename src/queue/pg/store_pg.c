/*
 * store_pg.c: a PostgreSQL queue as the store of the read and admin side
 * (queue/store.h): a job's row, the queue's pause (chute.queues), a job's
 * log (chute.job_logs), each a few short autocommitted statements.  The
 * connection is made at open, its schema checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/store.h"

static struct pg *
pg_of(struct store *s)
{
	return s->be;
}

static int
sp_open(struct store *s, const char *uri, const char *queue)
{
	struct pg *pg = calloc(1, sizeof(*pg));
	int rc;

	if (pg == NULL) {
		fprintf(stderr, "chute: out of memory\n");
		return EX_SOFTWARE;
	}
	s->be = pg;
	if (pg_parse(pg, uri, queue != NULL ? queue : "default") == -1)
		return EX_USAGE;
	if (pg_connect(pg, false, 0) == -1)
		return pg_fail(pg, "connect");
	if ((rc = pg_schema_check(pg)) != 0)
		return rc;
	return 0;
}

static void
sp_close(struct store *s)
{
	struct pg *pg = pg_of(s);

	if (pg == NULL)
		return;
	pg_close(pg);
	free(pg->uri);
	free(pg);
	s->be = NULL;
}

static const char *
sp_title(struct store *s)
{
	return pg_of(s)->queue;
}

static int
sp_job(struct store *s, const char *id, struct store_job *j)
{
	static const char sql[] = "SELECT state, attempts, last,"
	    " to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
	    " FROM chute.jobs WHERE queue = $1 AND id = $2";
	struct pg *pg = pg_of(s);
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);

	memset(j, 0, sizeof(*j));
	if (r == NULL)
		return pg_fail(pg, "status");
	if (PQntuples(r) == 0 || PQnfields(r) != 4 ||
	    (j->state = state_from_name(PQgetvalue(r, 0, 0))) == ST_NONE) {
		PQclear(r);
		return EXIT_NO;
	}
	j->attempts = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	strlcpy(j->last, PQgetvalue(r, 0, 2), sizeof(j->last));
	if (j->state == ST_DEFER)
		strlcpy(j->next, PQgetvalue(r, 0, 3), sizeof(j->next));
	PQclear(r);
	return 0;
}

static int
sp_pause(struct store *s, struct store_pause *p)
{
	struct pg *pg = pg_of(s);
	char by[128];

	memset(p, 0, sizeof(*p));
	if (pg_paused(pg, pg->queue, &p->paused, by, sizeof(by), &p->at) == -1)
		return pg_fail(pg, "status");
	/* Stored text, whoever wrote it: escaped. */
	vis_text(by, p->by, sizeof(p->by));
	return 0;
}

/* 1 if the job is there, 0 if not, -1 on error. */
static int
job_exists(struct pg *pg, const char *id)
{
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, "SELECT 1 FROM chute.jobs WHERE queue = $1"
	    " AND id = $2", 2, p);
	int n;

	if (r == NULL)
		return -1;
	n = PQntuples(r);
	PQclear(r);
	return n > 0;
}

static int
sp_log(struct store *s, const char *id, int (*out)(const char *, size_t))
{
	static const char sql[] = "SELECT body FROM chute.job_logs"
	    " WHERE queue = $1 AND id = $2 ORDER BY seq";
	struct pg *pg = pg_of(s);
	const char *p[2] = { pg->queue, id };
	PGresult *r;
	int rc = 0;

	r = PQexecParams(pg->conn, sql, 2, NULL, p, NULL, NULL, 1);
	if (pg_result(pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return pg_fail(pg, "log");
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		/* No log yet is fine for a job that has not run. */
		if ((rc = job_exists(pg, id)) == -1)
			return pg_fail(pg, "log");
		return rc == 1 ? 0 : EXIT_NO;
	}
	for (int i = 0; i < PQntuples(r) && rc == 0; i++)
		if (out(PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0)) == -1)
			rc = -1;
	PQclear(r);
	return rc;
}

static int
sp_stats(struct store *s, struct store_stats *st)
{
	return pg_stats_read(pg_of(s), st);
}

const struct store_ops store_pg_ops = {
	.usage = "URL [--queue NAME]",
	.missing = "no postgresql:// URI given",
	.noun = "URL",
	.uri = true,
	.open = sp_open,
	.close = sp_close,
	.title = sp_title,
	.job = sp_job,
	.pause = sp_pause,
	.log = sp_log,
	.stats = sp_stats,
};
