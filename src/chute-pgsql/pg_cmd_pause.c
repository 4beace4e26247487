/*
 * pg_cmd_pause.c: `chute pause URL` and `chute resume URL`, the two
 * directions of a queue's pause (pg_queues.c): no worker claims from a
 * paused queue; running jobs finish, submissions are accepted.
 */
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/* "QUEUE already paused by WHO since TIME": the pause that stands. */
static void
already(struct pg *pg)
{
	char by[128], vis[512], text[640];
	bool paused = true;
	msec_t at = 0;

	if (pg_paused(pg, pg->queue, &paused, by, sizeof(by), &at) == -1)
		by[0] = '\0';
	vis_text(by, vis, sizeof(vis));
	cmd_paused_text(paused, vis, at, text, sizeof(text));
	printf("%s already %s\n", pg->queue, text);
}

static int
pause_queue(int argc, char **argv, bool on)
{
	const char *cmd = on ? "pause" : "resume";
	char who[512];
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
	if (rc == 0)
		printf("%s %s\n", pg.queue, on ? "paused" : "resumed");
	else if (!on)
		printf("%s not paused\n", pg.queue);
	else
		already(&pg);
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
