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
#include "queue/pg/store_pg.h"
#include "chute-pgsql/pg_cmd.h"


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
	return cmd_say_result(pg_cancel_job(pg, id, by, msg, sizeof(msg)),
	    msg);
}

int
pgcmd_cancel(int argc, char **argv)
{
	return pgcmd_each_id(argc, argv, "cancel", cancel_one);
}
