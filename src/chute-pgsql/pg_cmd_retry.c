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

/*
 * failed -> new, attempts reset, as `chute retry` does on a spool; the
 * workers told (and with them the views).
 */
int
pgcmd_retry_job(struct pg *pg, const char *id, const char *by, char *state,
    size_t len)
{
	static const char sql[] =
	    "UPDATE chute.jobs SET state = 'new', attempts = 0, last = '',"
	    " run_at = now() WHERE queue = $1 AND id = $2 AND state = 'failed'";
	const char *p[2] = { pg->queue, id }, *n[1] = { pg->queue };
	char text[128];
	PGresult *r = pg_exec(pg, sql, 2, p);
	int rows;

	if (r == NULL)
		return -1;
	rows = atoi(PQcmdTuples(r));
	PQclear(r);
	if (rows == 0)
		return pgcmd_state_of(pg, id, state, len) == -1 ? -1 : 1;
	strlcpy(state, "failed", len);
	snprintf(text, sizeof(text), "reset by %s (uid %ld)", by,
	    (long)getuid());
	pgcmd_note(pg, id, text);
	pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	return 0;
}

static int
retry_one(struct pg *pg, const char *id)
{
	char st[16];

	switch (pgcmd_retry_job(pg, id, "`chute retry`", st, sizeof(st))) {
	case 0:
		printf("%s failed->new\n", id);
		return 0;
	case 1:
		return pgcmd_not_there(id, st, "retry");
	default:
		return pg_fail(pg, "retry");
	}
}

int
pgcmd_retry(int argc, char **argv)
{
	return pgcmd_each_id(argc, argv, "retry", retry_one);
}
