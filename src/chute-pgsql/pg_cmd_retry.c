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

/* failed -> new, attempts reset, as `chute retry` does on a spool. */
static int
retry_one(struct pg *pg, const char *id)
{
	static const char sql[] =
	    "UPDATE chute.jobs SET state = 'new', attempts = 0, last = '',"
	    " run_at = now() WHERE queue = $1 AND id = $2 AND state = 'failed'";
	const char *p[2] = { pg->queue, id }, *n[1] = { pg->queue };
	char text[64];
	PGresult *r = pg_exec(pg, sql, 2, p);
	int rows;

	if (r == NULL)
		return pg_fail(pg, "retry");
	rows = atoi(PQcmdTuples(r));
	PQclear(r);
	if (rows == 0)
		return pgcmd_not_there(pg, id, "retry");
	snprintf(text, sizeof(text), "reset by `chute retry` (uid %ld)",
	    (long)getuid());
	pgcmd_note(pg, id, text);
	pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	printf("%s failed->new\n", id);
	return 0;
}

int
pgcmd_retry(int argc, char **argv)
{
	return pgcmd_each_id(argc, argv, "retry", retry_one);
}
