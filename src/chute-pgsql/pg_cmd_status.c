/*
 * pg_cmd_status.c: chute status URL ID...: each job's state, attempts and
 * last outcome, escaped; without an ID, the queue's: paused or not.
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
status_one(struct pg *pg, const char *id)
{
	static const char sql[] = "SELECT state, attempts, last,"
	    " to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
	    " FROM chute.jobs WHERE queue = $1 AND id = $2";
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);
	char last[4 * 256 + 1];

	if (r == NULL)
		return pg_fail(pg, "status");
	if (PQntuples(r) == 0 || PQnfields(r) != 4) {
		PQclear(r);
		fflush(stdout);
		fprintf(stderr, "chute: %s: unknown job\n", id);
		return EXIT_NO;
	}
	/* Stored text, as the journal shows it: one line, no escape codes. */
	vis_text(PQgetvalue(r, 0, 2), last, sizeof(last));
	printf("%s %s attempts=%s%s%s%s%s\n", id, PQgetvalue(r, 0, 0),
	    PQgetvalue(r, 0, 1), *last ? " " : "", last,
	    strcmp(PQgetvalue(r, 0, 0), "defer") == 0 ? " next=" : "",
	    strcmp(PQgetvalue(r, 0, 0), "defer") == 0 ? PQgetvalue(r, 0, 3) : "");
	PQclear(r);
	return 0;
}

/* Without an ID: "QUEUE paused by WHO since TIME", or "QUEUE not paused". */
static int
status_queue(int argc, char **argv)
{
	char text[640];
	struct pg pg;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "status", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	if (argc != 1)
		return pgcmd_done(&pg, usage_error("status", "unexpected "
		    "argument: %s", argv[1]));
	if (pgcmd_paused_text(&pg, text, sizeof(text)) == -1)
		return pgcmd_done(&pg, pg_fail(&pg, "status"));
	printf("%s %s\n", pg.queue, text);
	return pgcmd_done(&pg, 0);
}

/* Is an ID among the arguments (URL and --queue aside)? */
static bool
has_ids(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--queue") == 0)
			i++;
		else if (strncmp(argv[i], "--queue=", 8) != 0 &&
		    !pg_is_uri(argv[i]))
			return true;
	}
	return false;
}

int
pgcmd_status(int argc, char **argv)
{
	if (!has_ids(argc, argv))
		return status_queue(argc, argv);
	return pgcmd_each_id(argc, argv, "status", status_one);
}
