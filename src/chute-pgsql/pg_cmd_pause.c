/*
 * pg_cmd_pause.c: `chute pause URL` and `chute resume URL`, the two
 * directions of a queue's pause (pg_queues.c): no worker claims from a
 * paused queue; running jobs finish, submissions are accepted.
 */
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/*
 * After a pause: a queue that has no job and no worker is most likely a
 * misspelt name, and the queue meant runs on; say so (the pause stands:
 * pausing a queue before its first job is allowed).  Two probes of keys.
 */
static void
note_if_unknown(struct pg *pg)
{
	static const char sql[] =
	    "SELECT EXISTS (SELECT 1 FROM chute.jobs WHERE queue = $1)"
	    " OR EXISTS (SELECT 1 FROM chute.workers WHERE queue = $1)";
	const char *p[1] = { pg->queue };
	PGresult *r = pg_exec(pg, sql, 1, p);

	if (r != NULL && pg_rows(r, 1, 1, NULL) == 1 &&
	    strcmp(PQgetvalue(r, 0, 0), "f") == 0)
		fprintf(stderr, "chute: note: queue %s has no job and no "
		    "worker: is that the name meant? (--queue NAME)\n",
		    pg->queue);
	PQclear(r);
}

static int
pause_queue(int argc, char **argv, bool on)
{
	const char *cmd = on ? "pause" : "resume";
	char who[512], text[640];
	struct pg pg;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, cmd, &pg)) != 0)
		return pgcmd_done(&pg, rc);
	if (argc != 1)
		return pgcmd_done(&pg, usage_error(cmd, "unexpected argument: "
		    "%s", argv[1]));
	cmd_who(who, sizeof(who));
	if ((rc = pg_pause(&pg, pg.queue, on, who)) == -1)
		return pgcmd_done(&pg, pg_fail(&pg, cmd));
	if (rc == 0) {
		printf("%s %s\n", pg.queue, on ? "paused" : "resumed");
		if (on)
			note_if_unknown(&pg);
	} else if (!on)
		printf("%s not paused\n", pg.queue);
	else if (pgcmd_paused_text(&pg, text, sizeof(text)) == 0)
		printf("%s already %s\n", pg.queue, text);	/* the one that stands */
	else
		return pgcmd_done(&pg, pg_fail(&pg, cmd));
	return pgcmd_done(&pg, 0);
}

int
pgcmd_pause(int argc, char **argv)
{
	return pause_queue(argc, argv, true);
}

int
pgcmd_resume(int argc, char **argv)
{
	return pause_queue(argc, argv, false);
}
