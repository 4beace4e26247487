/*
 * pg_cmd_stats.c: chute stats URL [--prometheus]: the counts per state, as
 * text or in Prometheus's format.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "cli/listing.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/*
 * stats URL: one statement, one snapshot.  Columns: the count in each
 * state, in the table's order (JOBSTATES), then the SC_* below.
 * A job in cur whose lease has run out belongs to a worker that died or
 * lost the database, and waits for recovery: it is not running.  Workers
 * are counted by their sessions (pg_connect names a worker's
 * chute-worker), as the server knows no other list of them, nor which
 * queue a session serves; and by their rows in chute.workers, alive
 * (schema version 4).  The pause: chute.queues' row, NULL when not paused.
 * There is no longest running time: the schema
 * keeps no start of an attempt (a claim leaves run_at alone, a renewal
 * moves lease_until, the log arrives with the outcome).
 */
enum { SC_OLDEST = ST_NSTATES, SC_RUNNING, SC_CLAIMING, SC_CONNECTED,
	SC_ALIVE, SC_PAUSED_BY, SC_PAUSED_AT, SC_N };

#define STATS_COUNT_(st, name, flags) \
    " count(*) FILTER (WHERE state = '" name "'),"
static const char stats_sql[] = "SELECT"
    JOBSTATES(STATS_COUNT_)
    " greatest(0, coalesce(extract(epoch FROM now() - " PG_NEAR(
    "min(run_at) FILTER (WHERE state = 'new')") ")::float8, 0)),"
    " count(*) FILTER (WHERE state = 'cur' AND lease_until > now()),"
    " count(DISTINCT worker) FILTER (WHERE state = 'cur'"
    "  AND lease_until > now()),"
    " (SELECT count(*) FROM pg_stat_activity"
    "  WHERE datname = current_database()"
    "  AND application_name = 'chute-worker'),"
    " (SELECT count(*) FROM chute.workers w WHERE w.queue = $1"
    "  AND w.stopped IS NULL"
    "  AND w.seen + " PG_WORKER_LEASE("w.") " > now()),"
    " (SELECT coalesce(paused_by, '') FROM chute.queues"
    "  WHERE queue = $1 AND paused),"
    " (SELECT (extract(epoch FROM paused_at) * 1000)::bigint"
    "  FROM chute.queues WHERE queue = $1 AND paused)"
    " FROM chute.jobs WHERE queue = $1";

static double
stats_col(PGresult *r, int col)
{
	return strtod(PQgetvalue(r, 0, col), NULL);
}

static void
stats_prometheus(FILE *f, PGresult *r, const char *queue)
{
	struct prom_stats p = { .label = "queue", .name = queue };

	for (int st = ST_FIRST; st < ST_END; st++)
		p.jobs[st] = stats_col(r, st - ST_FIRST);
	p.v[PM_OLDEST] = stats_col(r, SC_OLDEST);
	p.v[PM_RUNNING] = stats_col(r, SC_RUNNING);
	p.v[PM_CLAIMING] = stats_col(r, SC_CLAIMING);
	p.v[PM_CONNECTED] = stats_col(r, SC_CONNECTED);
	p.v[PM_ALIVE] = stats_col(r, SC_ALIVE);
	p.v[PM_PAUSED] = !PQgetisnull(r, 0, SC_PAUSED_BY);
	p.v[PM_TIME] = now_ms() / 1000.0;
	p.has[PM_OLDEST] = p.has[PM_RUNNING] = p.has[PM_CLAIMING] = true;
	p.has[PM_CONNECTED] = p.has[PM_TIME] = true;
	p.has[PM_ALIVE] = p.has[PM_PAUSED] = true;
	prom_print(f, &p);
}

static void
stats_text(PGresult *r)
{
	char age[32] = "-", vis[128], text[256];

	for (int st = ST_FIRST; st < ST_END; st++)
		printf("%-17s %s\n", state_names[st],
		    PQgetvalue(r, 0, st - ST_FIRST));
	/* Stored text, whoever wrote it: escaped. */
	vis_text(PQgetvalue(r, 0, SC_PAUSED_BY), vis, sizeof(vis));
	if (stats_col(r, 0) > 0)
		dur_format((msec_t)(stats_col(r, SC_OLDEST) * 1000), age,
		    sizeof(age));
	printf("%-17s %s\n%-17s %s\n%-17s %s\n%-17s %s\n%-17s %s\n",
	    "oldest_queued_age", age, "running", PQgetvalue(r, 0, SC_RUNNING),
	    "workers", PQgetvalue(r, 0, SC_CLAIMING), "workers_connected",
	    PQgetvalue(r, 0, SC_CONNECTED), "workers_alive",
	    PQgetvalue(r, 0, SC_ALIVE));
	cmd_paused_text(!PQgetisnull(r, 0, SC_PAUSED_BY), vis, strtoll(
	    PQgetvalue(r, 0, SC_PAUSED_AT), NULL, 10), text, sizeof(text));
	printf("%-17s %s\n", "paused", PQgetisnull(r, 0, SC_PAUSED_BY) ? "no" :
	    text + 7);
}

int
pgcmd_stats_prometheus(FILE *f, struct pg *pg)
{
	const char *p[1] = { pg->queue };
	PGresult *r;

	if ((r = pg_exec(pg, stats_sql, 1, p)) == NULL)
		return pg_fail(pg, "stats");
	if (pg_rows(r, SC_N, 1, NULL) != 1) {
		PQclear(r);
		return pg_fail(pg, "stats");
	}
	stats_prometheus(f, r, pg->queue);
	PQclear(r);
	return 0;
}

int
pgcmd_stats(int argc, char **argv)
{
	const char *p[1];
	struct pg pg;
	PGresult *r;
	bool prom;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "stats", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	prom = argc == 2 && strcmp(argv[1], "--prometheus") == 0;
	if (argc > 2 || (argc == 2 && !prom))
		return pgcmd_done(&pg, usage_error("stats", "want URL "
		    "[--prometheus]"));
	if (prom)
		return pgcmd_done(&pg, pgcmd_stats_prometheus(stdout, &pg));
	p[0] = pg.queue;
	if ((r = pg_exec(&pg, stats_sql, 1, p)) == NULL)
		return pgcmd_done(&pg, pg_fail(&pg, "stats"));
	if (pg_rows(r, SC_N, 1, NULL) != 1) {
		PQclear(r);
		return pgcmd_done(&pg, pg_fail(&pg, "stats"));
	}
	stats_text(r);
	PQclear(r);
	return pgcmd_done(&pg, 0);
}
