/*
 * store_spool_stats.c: the numbers of `chute stats SPOOL` (queue/store.h,
 * struct store_stats): one pass over each state directory, the owner
 * (the lock), the pause, and the longest running attempt from the logs of
 * the jobs in cur/.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/spool.h"
#include "queue/spool/spool_list.h"
#include "queue/spool/store_spool.h"
#include "queue/store.h"

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

int
spool_stats_read(struct spool *sp, struct store_stats *st)
{
	struct stats s = { .all = { .sp = sp, .new_only = true } };
	msec_t oldest;
	int rc;

	memset(st, 0, sizeof(*st));
	if ((rc = stats_read(sp, &s)) == 0) {
		for (int i = ST_FIRST; i < ST_END; i++)
			st->jobs[i] = (long long)s.all.count[i];
		oldest = s.all.oldest[ST_NEW];
		st->has_oldest = oldest != 0;
		st->oldest_ms = s.now > oldest ? s.now - oldest : 0;
		st->oldest_s = age_seconds(oldest, s.now);
		st->running = (long long)s.running;
		st->has_longest = true;
		st->longest_ms = s.longest;
		st->has_owner = true;
		st->owner = (long)s.owner;
		st->pause.paused = s.paused == 1;
		strlcpy(st->pause.by, s.paused_by, sizeof(st->pause.by));
		st->pause.at = s.paused_at;
		st->now = s.now;
	}
	listing_free(&s.all);
	return rc;
}
