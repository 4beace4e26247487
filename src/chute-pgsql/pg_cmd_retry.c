/*
 * pg_cmd_retry.c: chute retry URL ID...: a failed job back to new, its
 * attempts reset.
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

int
pgcmd_retry_job(struct pg *pg, const char *id, const char *by, char *msg,
    size_t len)
{
	static const char sql[] =
	    "WITH back AS (DELETE FROM chute.finished WHERE queue = $1"
	    " AND id = $2 AND state = 'failed' RETURNING *),"
	    " live AS (INSERT INTO chute.live (queue, id, state, run_at, size,"
	    " created, claimed) SELECT queue, id, 'new', now(), size, created,"
	    " claimed FROM back),"
	    /* The last attempt's log, kept in the finished row, stays. */
	    " kept AS (INSERT INTO chute.logs (queue, id, body) SELECT queue,"
	    " id, log FROM back WHERE log IS NOT NULL" PG_LOGS_STRAY ")"
	    " SELECT id FROM back";
	const char *p[2] = { pg->queue, id }, *n[1] = { pg->queue };
	char text[256];
	PGresult *r = pg_exec(pg, sql, 2, p);
	int rows;

	if (r == NULL)
		return pg_fail_msg(pg, "retry", msg, len);
	rows = PQntuples(r);
	PQclear(r);
	if (rows == 0)
		return pgcmd_why_not(pg, id, "retry", msg, len);
	snprintf(text, sizeof(text), "reset by %s", by);
	pgcmd_note(pg, id, text);
	pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	snprintf(msg, len, "%s failed->new", id);
	return 0;
}

/* failed -> new, attempts reset, as `chute retry` does on a spool. */
static int
retry_one(struct pg *pg, const char *id)
{
	char by[64], msg[2 * NAME_MAX + 160];

	snprintf(by, sizeof(by), "`chute retry` (uid %ld)", (long)getuid());
	return cmd_say_result(pgcmd_retry_job(pg, id, by, msg, sizeof(msg)),
	    msg);
}

int
pgcmd_retry(int argc, char **argv)
{
	return pgcmd_each_id(argc, argv, "retry", retry_one);
}
