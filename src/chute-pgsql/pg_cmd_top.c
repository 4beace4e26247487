/*
 * pg_cmd_top.c: `chute top URL`.  The live view reads a spool's
 * directories and inotify; a PostgreSQL queue has neither, and its view
 * (refreshed by LISTEN/NOTIFY) is not written yet.  Until it is, the
 * command says so in one line instead of "unknown subcommand".
 */
#include <stdio.h>

#include "base/chute.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

int
pgcmd_top(int argc, char **argv)
{
	fprintf(stderr, "chute: top: not supported for a PostgreSQL queue yet; "
	    "`chute stats URL` and `chute ls URL` show its jobs\n");
	return EX_UNAVAILABLE;
}
