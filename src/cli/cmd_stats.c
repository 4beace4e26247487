/*
 * cmd_stats.c: `chute stats SPOOL [--prometheus]`: how many jobs in each
 * state, how long the oldest has waited in new/, what runs and for how
 * long, and who owns the spool; read the way ls and status read it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/spool.h"
#include "cli/listing.h"

struct stats {
	struct listing	 all;		/* counts and oldest mtimes */
	pid_t		 owner;		/* lock_owner() */
	size_t		 running;	/* in cur/ under a live owner */
	msec_t		 longest;	/* longest running attempt, ms */
	msec_t		 now;
	int		 paused;	/* spool_paused() */
	char		 paused_by[128];
	msec_t		 paused_at;
};

/*
 * The jobs in cur/ run only while an owner holds the lock: a dead owner's
 * are abandoned, not running, until the next owner recovers them.  cur/
 * holds at most as many jobs as the owner has slots, so reading each one's
 * log costs little, whatever the size of new/.
 */
static int
stats_running(struct spool *sp, struct stats *s)
{
	struct listing cur = { .sp = sp, .keep = true };
	int rc;

	if (s->owner == 0)
		return 0;
	if ((rc = listing_read(&cur, ST_CUR)) != 0)
		return rc;
	s->running = cur.n;
	for (size_t i = 0; i < cur.n; i++) {
		msec_t t = listing_started(sp, cur.v[i].id);

		if (t != 0 && s->now - t > s->longest)
			s->longest = s->now - t;
	}
	listing_free(&cur);
	return 0;
}

static int
stats_read(struct spool *sp, struct stats *s)
{
	int rc;

	if ((rc = listing_read(&s->all, ST_NONE)) != 0)
		return rc;
	s->owner = lock_owner(sp);
	s->now = now_ms();
	if ((s->paused = spool_paused(sp, s->paused_by, sizeof(s->paused_by),
	    &s->paused_at)) == -1) {
		fprintf(stderr, "chute: %s/%s: %s\n", sp->path, PAUSE_FILE,
		    strerror(errno));
		return EX_IOERR;
	}
	return stats_running(sp, s);
}

/* Seconds from an mtime to now; 0 for none, and for one in the future. */
static double
age_seconds(msec_t then, msec_t now)
{
	return then != 0 && now > then ? (now - then) / 1000.0 : 0.0;
}

static void
print_prometheus(FILE *f, const struct stats *s, const char *path)
{
	struct prom_stats p = { .label = "spool", .name = path };

	for (int st = ST_FIRST; st < ST_END; st++)
		p.jobs[st] = (double)s->all.count[st];
	p.v[PM_OLDEST] = age_seconds(s->all.oldest[ST_NEW], s->now);
	p.v[PM_RUNNING] = (double)s->running;
	p.v[PM_LONGEST] = s->longest / 1000.0;
	p.v[PM_OWNER_UP] = s->owner != 0;
	p.v[PM_OWNER_PID] = s->owner > 0 ? (double)s->owner : 0.0;
	p.v[PM_PAUSED] = s->paused == 1;
	p.v[PM_TIME] = s->now / 1000.0;
	p.has[PM_OLDEST] = p.has[PM_RUNNING] = p.has[PM_LONGEST] = true;
	p.has[PM_OWNER_UP] = p.has[PM_OWNER_PID] = p.has[PM_TIME] = true;
	p.has[PM_PAUSED] = true;
	prom_print(f, &p);
}

static void
print_text(const struct stats *s)
{
	msec_t oldest = s->all.oldest[ST_NEW];
	char age[32] = "-", longest[32] = "-", text[256];

	for (int st = ST_FIRST; st < ST_END; st++)
		printf("%-17s %zu\n", state_names[st], s->all.count[st]);
	if (oldest != 0)
		dur_format(s->now > oldest ? s->now - oldest : 0, age,
		    sizeof(age));
	if (s->running > 0)
		dur_format(s->longest, longest, sizeof(longest));
	printf("%-17s %s\n", "oldest_queued_age", age);
	printf("%-17s %zu\n%-17s %s\n", "running", s->running,
	    "longest_running", longest);
	if (s->owner == 0)
		printf("%-17s no owner\n", "owner");
	else if (s->owner == -1)
		printf("%-17s unknown pid (lock held)\n", "owner");
	else
		printf("%-17s %ld\n", "owner", (long)s->owner);
	cmd_paused_text(s->paused == 1, s->paused_by, s->paused_at, text,
	    sizeof(text));
	/* "paused by WHO since TIME" as "paused  by WHO since TIME". */
	printf("%-17s %s\n", "paused", s->paused == 1 ? text + 7 : "no");
}

int
stats_spool_prometheus(FILE *f, struct spool *sp, const char *path)
{
	struct stats s = { .all = { .sp = sp, .new_only = true } };
	int rc;

	if ((rc = stats_read(sp, &s)) == 0)
		print_prometheus(f, &s, path);
	listing_free(&s.all);
	return rc;
}

int
cmd_stats(int argc, char **argv)
{
	struct spool sp;
	struct stats s = { .all = { .sp = &sp, .new_only = true } };
	bool prom = false;
	int rc;

	if (argc == 3 && strcmp(argv[2], "--prometheus") == 0)
		prom = true;
	else if (argc != 2)
		return usage_error("stats", "want SPOOL [--prometheus]");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	if (prom)
		rc = stats_spool_prometheus(stdout, &sp, argv[1]);
	else if ((rc = stats_read(&sp, &s)) == 0)
		print_text(&s);
	if (rc == 0)
		rc = cmd_flush_stdout(0);
	listing_free(&s.all);
	spool_close(&sp);
	return rc;
}
