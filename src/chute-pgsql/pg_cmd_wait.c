/*
 * pg_cmd_wait.c: chute wait URL ID...: until each is done or failed, or
 * the timeout.
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

static int
wait_done(struct pg *pg, char *arr, int rc)
{
	free(arr);
	return pgcmd_done(pg, rc);
}

int
pgcmd_wait(int argc, char **argv)
{
	static const char sql[] = "SELECT id, state FROM chute.jobs"
	    " WHERE queue = $1 AND id = ANY($2::text[])";
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	msec_t timeout = -1, start = mono_ms(), nap = 50;
	struct pg pg;
	const char *p[2] = { NULL, NULL };
	char *arr;
	int rc, c;

	if ((rc = pgcmd_open(&argc, argv, "wait", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if (c != 't' || dur_parse(optarg, &timeout) == -1)
			return pgcmd_done(&pg, usage_error("wait", "bad option "
			    "or --timeout value"));
	if ((rc = check_ids(argc - optind, argv + optind, "wait")) != 0)
		return pgcmd_done(&pg, rc);
	p[0] = pg.queue;
	if ((p[1] = arr = pg_text_array((const char *const *)argv + optind,
	    argc - optind)) == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		return pgcmd_done(&pg, EX_SOFTWARE);
	}
	for (;;) {
		int left = 0, failed = 0, known;
		PGresult *r;

		if ((r = pg_exec(&pg, sql, 2, p)) == NULL)
			return wait_done(&pg, arr, pg_fail(&pg, "wait"));
		known = PQntuples(r);
		for (int i = 0; i < known; i++) {
			int st = state_from_name(PQgetvalue(r, i, 1));

			/* Finished in a terminal state; succeeded in done. */
			if (st == ST_NONE || !state_terminal(st))
				left++;
			else
				failed += st != ST_DONE;
		}
		PQclear(r);
		if (known < argc - optind) {
			fprintf(stderr, "chute: unknown job among the IDs\n");
			return wait_done(&pg, arr, EXIT_NO);
		}
		if (left == 0)
			return wait_done(&pg, arr, failed ? EXIT_NO : 0);
		if (timeout >= 0 && mono_ms() - start >= timeout)
			return wait_done(&pg, arr, EXIT_TIMEOUT);
		usleep((useconds_t)nap * 1000);
		nap = nap * 2 > 1000 ? 1000 : nap * 2;
	}
}
