/*
 * pg_cmd_log.c: chute log URL ID: a job's log, escaped on a terminal.
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

int
pgcmd_log(int argc, char **argv)
{
	static const char sql[] = "SELECT body FROM chute.job_logs"
	    " WHERE queue = $1 AND id = $2 ORDER BY seq";
	const char *p[2];
	struct pg pg;
	PGresult *r;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "log", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	if (argc != 2)
		return pgcmd_done(&pg, usage_error("log", "want URL and one ID"));
	if ((rc = check_ids(1, argv + 1, "log")) != 0)
		return pgcmd_done(&pg, rc);
	p[0] = pg.queue;
	p[1] = argv[1];
	r = PQexecParams(pg.conn, sql, 2, NULL, p, NULL, NULL, 1);
	if (pg_result(&pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return pgcmd_done(&pg, pg_fail(&pg, "log"));
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		/* No log yet is fine for a job that has not run. */
		if ((rc = job_exists(&pg, argv[1])) == -1)
			return pgcmd_done(&pg, pg_fail(&pg, "log"));
		if (rc == 0)
			fprintf(stderr, "chute: %s: unknown job\n", argv[1]);
		return pgcmd_done(&pg, rc == 1 ? 0 : EXIT_NO);
	}
	for (int i = 0; i < PQntuples(r); i++)
		if (cmd_write_log(PQgetvalue(r, i, 0),
		    (size_t)PQgetlength(r, i, 0)) == -1) {
			rc = EX_IOERR;
			break;
		}
	PQclear(r);
	return pgcmd_done(&pg, rc);
}
