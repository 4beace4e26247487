/*
 * cmd_stats.c: `chute stats SPOOL [--prometheus]`: how many jobs in each
 * state, how long the oldest has waited in new/, and who owns the spool.
 */
#include <stdio.h>
#include <string.h>

#include "chute.h"
#include "listing.h"

/* owner: a pid, 0 for none, -1 for a lock held by a pid we cannot tell. */
static void
print_prometheus(const struct listing *l, pid_t owner, msec_t now)
{
	msec_t oldest = l->oldest[ST_NEW];

	printf("# HELP chute_jobs Jobs per state directory.\n"
	    "# TYPE chute_jobs gauge\n");
	for (int i = 0; i < LISTING_NSTATES; i++) {
		int s = listing_states[i];
		printf("chute_jobs{state=\"%s\"} %zu\n", state_names[s],
		    l->count[s]);
	}
	printf("chute_oldest_queued_seconds %.3f\n", oldest ?
	    (now - oldest) / 1000.0 : 0.0);
	printf("chute_owner_up %d\nchute_owner_pid %ld\n", owner != 0,
	    owner > 0 ? (long)owner : 0L);
}

static void
print_text(const struct listing *l, pid_t owner, msec_t now)
{
	msec_t oldest = l->oldest[ST_NEW];
	char age[32] = "-";

	for (int i = 0; i < LISTING_NSTATES; i++) {
		int s = listing_states[i];
		printf("%-17s %zu\n", state_names[s], l->count[s]);
	}
	if (oldest != 0)
		dur_format(now > oldest ? now - oldest : 0, age, sizeof(age));
	printf("%-17s %s\n", "oldest_queued_age", age);
	if (owner == 0)
		printf("%-17s no owner\n", "owner");
	else if (owner == -1)
		printf("%-17s unknown pid (lock held)\n", "owner");
	else
		printf("%-17s %ld\n", "owner", (long)owner);
}

int
cmd_stats(int argc, char **argv)
{
	struct spool sp;
	struct listing l = { .sp = &sp };
	bool prom = false;
	int rc;

	if (argc == 3 && strcmp(argv[2], "--prometheus") == 0)
		prom = true;
	else if (argc != 2)
		return usage_error("stats", "want SPOOL [--prometheus]");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	if ((rc = listing_read(&l, ST_NONE)) == 0) {
		if (prom)
			print_prometheus(&l, lock_owner(&sp), now_ms());
		else
			print_text(&l, lock_owner(&sp), now_ms());
		rc = cmd_flush_stdout(0);
	}
	listing_free(&l);
	spool_close(&sp);
	return rc;
}
