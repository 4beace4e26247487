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
#include "queue/pg/store_pg.h"
#include "chute-pgsql/pg_cmd.h"

/* failed -> new, attempts reset, as `chute retry` does on a spool. */
static int
retry_one(struct pg *pg, const char *id)
{
	char by[64], msg[2 * NAME_MAX + 160];

	snprintf(by, sizeof(by), "`chute retry` (uid %ld)", (long)getuid());
	return cmd_say_result(pg_retry_job(pg, id, by, msg, sizeof(msg)),
	    msg);
}

int
pgcmd_retry(int argc, char **argv)
{
	return pgcmd_each_id(argc, argv, "retry", retry_one);
}
