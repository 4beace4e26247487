/*
 * cmd_schedule.c: `chute schedule SPOOL [NAME ...]` (declare, change,
 * remove, list a spool's recurring jobs) and `chute tick SPOOL
 * [--follow]` (make every due tick's job, once, on the spool: sched_spool.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "cli/schedule.h"
#include "store/spool.h"
#include "queue/spool/store_spool.h"

/* The spool's path out of argv (its first operand): NULL, said. */
static const char *
take_spool(int *argc, char **argv, const char *cmd)
{
	const char *path;
	bool *keep;

	if (*argc < 2 || argv[1][0] == '-') {
		usage_error(cmd, "no spool given");
		return NULL;
	}
	path = argv[1];
	/*
	 * Out of the command's sight, kept in the array after the NULL
	 * (cmd_compact): setproctitle_init made the words copies that only
	 * argv points to, and a word dropped was a leak to LeakSanitizer.
	 */
	if ((keep = calloc((size_t)*argc + 1, sizeof(*keep))) == NULL) {
		fprintf(stderr, "chute: %s: out of memory\n", cmd);
		return NULL;
	}
	for (int i = 0; i < *argc; i++)
		keep[i] = i != 1;
	cmd_compact(argc, argv, keep);
	free(keep);
	return path;
}

static void
print_row(void *arg, const struct sched_row *r)
{
	(void)arg;
	sched_print_row(r);
}

int
cmd_schedule(int argc, char **argv)
{
	struct sched_args a;
	struct spool sp;
	const char *path;
	bool created;
	int rc;

	if ((path = take_spool(&argc, argv, "schedule")) == NULL)
		return EX_USAGE;
	if ((rc = sched_args_parse(argc, argv, &a)) != 0)
		return rc;
	if ((rc = spool_open_or_say(&sp, path)) != 0) {
		sched_args_free(&a);
		return rc;
	}
	if (a.name == NULL)
		rc = sched_spool_list(&sp, print_row, NULL);
	else if (a.remove && (rc = sched_spool_remove(&sp, a.name)) == EXIT_NO)
		fprintf(stderr, "chute: %s: no schedule %s\n", path, a.name);
	else if (a.remove && rc == 0)
		printf("%s removed\n", a.name);
	else if (!a.remove && (rc = sched_spool_declare(&sp, a.name, &a.ts,
	    a.payload, a.len, &created)) == 0)
		printf("%s %s\n", a.name, created ? "declared" : "changed");
	sched_args_free(&a);
	spool_close(&sp);
	return cmd_flush_stdout(rc);
}

/*
 * A pass's lock is a flock: on a file system that does not enforce it
 * across hosts, two schedulers could make one tick twice.  As the owner.
 */
static int
check_fs(struct spool *sp)
{
	const char *fs;

	if (spool_check_fs(sp, &fs) == 0)
		return 0;
	if (errno != EREMOTE) {
		fprintf(stderr, "chute: %s: statfs: %s\n", sp->path,
		    strerror(errno));
		return EX_IOERR;
	}
	fprintf(stderr, "chute: %s: spool is on %s, where flock(2) is not "
	    "enforced across hosts; a tick made once cannot be guaranteed\n",
	    sp->path, fs);
	return EX_CONFIG;
}

int
cmd_tick(int argc, char **argv)
{
	struct spool sp;
	const char *path;
	bool follow;
	msec_t next;
	int rc;

	if ((path = take_spool(&argc, argv, "tick")) == NULL)
		return EX_USAGE;
	if ((rc = tick_args_parse(argc, argv, &follow)) != 0 ||
	    (rc = spool_open_or_say(&sp, path)) != 0)
		return rc;
	if ((rc = check_fs(&sp)) != 0) {
		spool_close(&sp);
		return rc;
	}
	do {
		rc = sched_spool_tick(&sp, &next);
		/* A second at most: new schedules, a clock set back. */
		if (follow)
			sched_sleep_until(next == -1 ? now_ms() + 1000 : next,
			    1000);
	} while (follow);
	spool_close(&sp);
	return rc;
}
