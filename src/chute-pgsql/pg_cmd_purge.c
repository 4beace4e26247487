/*
 * pg_cmd_purge.c: chute purge URL --older DUR: finished jobs, their
 * payloads and logs, removed.
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
pgcmd_purge(int argc, char **argv)
{
	static const char sql[] =
	    "WITH gone AS (DELETE FROM chute.finished WHERE queue = $1"
	    " AND ($3::text IS NULL OR state = $3)"
	    " AND run_at < now() - $2::bigint * interval '1 millisecond'"
	    " RETURNING id),"
	    " p AS (DELETE FROM chute.payloads WHERE queue = $1"
	    " AND id IN (SELECT id FROM gone)),"
	    " l AS (DELETE FROM chute.logs WHERE queue = $1"
	    " AND id IN (SELECT id FROM gone))"
	    " SELECT count(*) FROM gone";
	static const struct option longopts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *p[3];
	char age[24];
	msec_t older = -1;
	struct pg pg;
	PGresult *r;
	int rc, c, st;

	if ((rc = pgcmd_open(&argc, argv, "purge", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'o' && dur_parse(optarg, &older) == 0)
			continue;
		if (c == 's' && (st = state_from_name(optarg)) != ST_NONE &&
		    state_terminal(st)) {
			state = optarg;
			continue;
		}
		return pgcmd_done(&pg, usage_error("purge", "bad option or "
		    "value"));
	}
	if (older < 0)
		return pgcmd_done(&pg, usage_error("purge", "--older-than DUR "
		    "is required"));
	snprintf(age, sizeof(age), "%lld", (long long)older);
	p[0] = pg.queue;
	p[1] = age;
	p[2] = state;
	if ((r = pg_exec(&pg, sql, 3, p)) == NULL)
		return pgcmd_done(&pg, pg_fail(&pg, "purge"));
	printf("purged %s\n", PQgetvalue(r, 0, 0));
	PQclear(r);
	return pgcmd_done(&pg, 0);
}
