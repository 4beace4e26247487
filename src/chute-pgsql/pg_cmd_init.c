/*
 * pg_cmd_init.c: chute init URL: the schema, made or upgraded
 * (pg_schema.c).
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
pgcmd_init(int argc, char **argv)
{
	struct pg pg;
	int rc;

	if ((rc = pgcmd_take(&argc, argv, "init", &pg, true)) != 0)
		return rc;
	if (argc != 1)
		return usage_error("init", "unexpected argument: %s", argv[1]);
	if (pg_connect(&pg, false, 0) == -1)
		return pgcmd_done(&pg, pg_fail(&pg, "connect"));
	return pgcmd_done(&pg, pg_schema_init(&pg));
}
