/*
 * cmd_ls.c: `chute ls SPOOL [STATE]`: every job, oldest first, with its
 * state, age and attempts, read straight from the directories.
 */
#include <stdio.h>

#include "base/util.h"
#include "cli/cmd.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "cli/listing.h"

/* Age since mtime; a deferred job's time still to come shows as "-DUR". */
static void
age_of(const struct listing_entry *e, msec_t now, char *buf, size_t len)
{
	if (e->state == ST_DEFER && e->mtime > now) {
		buf[0] = '-';
		dur_format(e->mtime - now, buf + 1, len - 1);
	} else
		dur_format(now - e->mtime, buf, len);
}

static void
print_ls(struct listing *l)
{
	msec_t now = now_ms();

	printf("%-7s %10s %8s  %s\n", "STATE", "AGE", "ATTEMPTS", "ID");
	for (size_t i = 0; i < l->n; i++) {
		struct joblog_info ji;
		char age[32], vis[1024];

		joblog_read(l->sp, l->v[i].id, &ji);
		age_of(&l->v[i], now, age, sizeof(age));
		vis_name(l->v[i].id, vis, sizeof(vis));
		printf("%-7s %10s %8d  %s\n", state_names[l->v[i].state], age,
		    ji.attempts, vis);
	}
}

int
cmd_ls(int argc, char **argv)
{
	struct spool sp;
	struct listing l = { .sp = &sp, .keep = true };
	int only = ST_NONE, rc;

	if (argc < 2 || argc > 3)
		return usage_error("ls", "want SPOOL and at most one STATE");
	if (argc == 3 && (only = state_from_name(argv[2])) == ST_NONE)
		return usage_error("ls", "%s: not a state", argv[2]);
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	if ((rc = listing_read(&l, only)) == 0) {
		print_ls(&l);
		rc = cmd_flush_stdout(0);
	}
	listing_free(&l);
	spool_close(&sp);
	return rc;
}
