/*
 * pg_cmd_cancel.c: chute cancel URL ID...: a job waiting or running moves
 * to failed.
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
#include "queue/pg/pg_view.h"
#include "chute-pgsql/pg_cmd.h"

/*
 * new, defer or cur -> failed, in one statement: the row moves from
 * chute.live to chute.finished, and the claim's token goes with it, so
 * the outcome of a handler still running is refused.  Its worker is told
 * at once (NOTIFY), and at its next lease renewal at the latest.
 */
int
pgcmd_cancel_job(struct pg *pg, const char *id, const char *by, char *msg,
    size_t len)
{
	static const char sql[] =
	    "WITH gone AS (DELETE FROM chute.live WHERE queue = $1"
	    " AND id = $2 RETURNING *),"
	    " fin AS (INSERT INTO chute.finished (" PG_FINISHED_COLS ")"
	    " SELECT queue, id, 'failed', now(), attempts, 'cancelled', size,"
	    " created, claimed FROM gone)"
	    " SELECT state FROM gone";
	const char *p[2] = { pg->queue, id };
	char text[256], note[NAME_MAX + 160];
	const char *n[1] = { note };
	PGresult *r = pg_exec(pg, sql, 2, p);

	if (r == NULL)
		return pg_fail_msg(pg, "cancel", msg, len);
	if (PQntuples(r) == 0) {
		PQclear(r);
		return pgcmd_why_not(pg, id, "cancel", msg, len);
	}
	snprintf(text, sizeof(text), "cancelled by %s in %s", by,
	    PQgetvalue(r, 0, 0));
	pgcmd_note(pg, id, text);
	pg_cancel_note(note, sizeof(note), pg->queue, id);
	if (strcmp(PQgetvalue(r, 0, 0), "cur") == 0)	/* its worker stops it */
		pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	else				/* no worker holds it: the views only */
		pg_cmd(pg, "SELECT pg_notify('" PGV_CHANNEL "', $1)", 1, p);
	snprintf(msg, len, "%s %s->failed", id, PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

/*
 * new, defer or cur -> failed, in one statement; the claim's token goes,
 * so the outcome of a handler still running is refused.  Its worker is
 * told at once (NOTIFY), and at its next lease renewal at the latest.
 */
static int
cancel_one(struct pg *pg, const char *id)
{
	char by[64], msg[2 * NAME_MAX + 160];

	snprintf(by, sizeof(by), "`chute cancel` (uid %ld)", (long)getuid());
	return cmd_say_result(pgcmd_cancel_job(pg, id, by, msg, sizeof(msg)),
	    msg);
}

int
pgcmd_cancel(int argc, char **argv)
{
	return pgcmd_each_id(argc, argv, "cancel", cancel_one);
}
