/*
 * pg_cmd_ls.c: chute ls URL [STATE]: the jobs of a queue, a page at a time;
 * of cur, with each claim's worker and lease.
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
 * `ls URL cur`: each claim's worker and its lease's time left, negative
 * once it has run out (its worker is gone: recovery takes it back).
 */
static void
print_cur(PGresult *r)
{
	printf("%-7s %10s %8s %9s %-24s  %s\n", "STATE", "AGE", "ATTEMPTS",
	    "LEASE", "WORKER", "ID");
	for (int i = 0; i < PQntuples(r); i++) {
		char a[32], l[32], w[512], v[1024];

		dur_signed(strtoll(PQgetvalue(r, i, 1), NULL, 10), a, sizeof(a));
		dur_signed(strtoll(PQgetvalue(r, i, 5), NULL, 10), l, sizeof(l));
		vis_name(PQgetisnull(r, i, 4) ? "-" : PQgetvalue(r, i, 4), w,
		    sizeof(w));
		vis_name(PQgetvalue(r, i, 3), v, sizeof(v));
		printf("%-7s %10s %8s %9s %-24s  %s\n", PQgetvalue(r, i, 0), a,
		    PQgetvalue(r, i, 2), PQgetisnull(r, i, 5) ? "-" : l, w, v);
	}
}

int
pgcmd_ls(int argc, char **argv)
{
	static const char sql[] = "SELECT state, (extract(epoch FROM now() - "
	    PG_NEAR("run_at") ") * 1000)::bigint, attempts, id, worker,"
	    " (extract(epoch FROM " PG_NEAR("lease_until") " - now()) * 1000)"
	    "::bigint"
	    " FROM chute.jobs"
	    " WHERE queue = $1 AND ($2::text IS NULL OR state = $2)"
	    " ORDER BY run_at, id";
	struct pg pg;
	const char *p[2];
	PGresult *r;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "ls", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	if (argc > 2 || (argc == 2 && state_from_name(argv[1]) == ST_NONE))
		return pgcmd_done(&pg, usage_error("ls", "want URL and at most "
		    "one STATE"));
	p[0] = pg.queue;
	p[1] = argc == 2 ? argv[1] : NULL;
	if ((r = pg_exec(&pg, sql, 2, p)) == NULL)
		return pgcmd_done(&pg, pg_fail(&pg, "ls"));
	if (argc == 2 && strcmp(argv[1], "cur") == 0) {
		print_cur(r);
		PQclear(r);
		return pgcmd_done(&pg, 0);
	}
	printf("%-7s %10s %8s  %s\n", "STATE", "AGE", "ATTEMPTS", "ID");
	for (int i = 0; i < PQntuples(r); i++) {
		char a[32], v[1024];

		dur_signed(strtoll(PQgetvalue(r, i, 1), NULL, 10), a, sizeof(a));
		vis_name(PQgetvalue(r, i, 3), v, sizeof(v));
		printf("%-7s %10s %8s  %s\n", PQgetvalue(r, i, 0), a,
		    PQgetvalue(r, i, 2), v);
	}
	PQclear(r);
	return pgcmd_done(&pg, 0);
}
