/*
 * pg_cmd_stats.c: chute stats URL [--prometheus]: the counts per state, as
 * text or in Prometheus's format.
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

static void
stats_text(const struct pg_stats *s)
{
	char age[32] = "-", vis[128], text[256];

	for (int i = 0; i < LISTING_NSTATES; i++)
		printf("%-17s %lld\n", state_names[listing_states[i]],
		    s->jobs[i]);
	/* Stored text, whoever wrote it: escaped. */
	vis_text(s->paused_by, vis, sizeof(vis));
	if (s->jobs[0] > 0)
		dur_format((msec_t)(s->oldest_s * 1000), age, sizeof(age));
	printf("%-17s %s\n%-17s %lld\n%-17s %lld\n%-17s %lld\n%-17s %lld\n",
	    "oldest_queued_age", age, "running", s->running, "workers",
	    s->claiming, "workers_connected", s->connected, "workers_alive",
	    s->alive);
	cmd_paused_text(s->paused, vis, s->paused_at, text, sizeof(text));
	printf("%-17s %s\n", "paused", !s->paused ? "no" : text + 7);
}

int
pgcmd_stats(int argc, char **argv)
{
	struct pg_stats s;
	struct pg pg;
	bool prom;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "stats", &pg)) != 0)
		return pgcmd_done(&pg, rc);
	prom = argc == 2 && strcmp(argv[1], "--prometheus") == 0;
	if (argc > 2 || (argc == 2 && !prom))
		return pgcmd_done(&pg, usage_error("stats", "want URL "
		    "[--prometheus]"));
	if ((rc = pg_stats_read(&pg, &s)) != 0)
		return pgcmd_done(&pg, rc);
	if (prom)
		prom_print_queue(stdout, &s, pg.queue);
	else
		stats_text(&s);
	return pgcmd_done(&pg, 0);
}
