/*
 * top.h: what `chute top` knows of a spool between two looks at it: the
 * count per state, the longest-running jobs, the newest failures and the
 * jobs finished per second over the last minute.  Every part has a fixed
 * size, so a spool of a million jobs costs the view no more memory.
 */
#ifndef TOP_H
#define TOP_H

#include <limits.h>

#include "base/util.h"
#include "store/spool.h"
#include "store/watch.h"

#define TOP_RUN_MAX	64	/* running jobs kept: the longest-running */
#define TOP_FAIL_MAX	32	/* failures kept: the newest */
#define TOP_WINDOW	60	/* seconds of throughput */
#define TOP_RESCAN_MS	250	/* events are coalesced into one rescan per this */
#define TOP_ALL		(1u << ST_NEW | 1u << ST_CUR | 1u << ST_DEFER | \
			    1u << ST_DONE | 1u << ST_FAILED)

struct top_job {
	char	 id[NAME_MAX + 1];
	msec_t	 since;			/* running: claimed; failed: failed */
	int	 attempts;		/* failed only */
	char	 reason[64];		/* failed only: the last outcome */
};

struct top {
	struct spool	*sp;
	size_t		 count[ST_NDIRS];
	pid_t		 owner;		/* lock_owner(): 0 none, -1 unknown */
	struct top_job	 run[TOP_RUN_MAX];	/* the longest-running first */
	size_t		 nrun;
	struct top_job	 fail[TOP_FAIL_MAX];	/* the newest first */
	size_t		 nfail;
	/* Names that arrived in failed/ since the last rescan, a ring. */
	char		 arrived[TOP_FAIL_MAX][NAME_MAX + 1];
	size_t		 narrived;
	/* Jobs finished in each of the last TOP_WINDOW seconds, a ring. */
	int64_t		 sec[TOP_WINDOW];
	unsigned	 done[TOP_WINDOW], failed[TOP_WINDOW];
	unsigned	 dirty;		/* 1 << state: an event in it since the last rescan */
	bool		 full;		/* the next rescan re-reads failed/ */
};

/*
 * The watch a live view of sp reads (`chute top`, `chute web`): every
 * state directory, for every arrival and departure.  Open it before
 * top_init, so that nothing after the first look is missed.  Returns
 * NULL with errno set (watch_open's).
 */
struct watch	*top_watch_open(struct spool *sp);
/*
 * Read sp in full into t: counts, running jobs, the newest failures, and
 * the jobs that finished in the TOP_WINDOW seconds before `since`, by the
 * mtimes in done/ and failed/.  since is when the caller's watch started:
 * the jobs finishing after it are its events', counted once.  Returns 0,
 * or -1 with errno set.
 */
int	 top_init(struct top *t, struct spool *sp, msec_t since);
/*
 * Look again after events, only in the directories they came from: names
 * are counted, not statted, except in cur/ (a few jobs) and for the
 * failures kept.  Returns 0, or -1 with errno set.
 */
int	 top_rescan(struct top *t);
/*
 * watch_read's callback (arg is the struct top).  Every event makes its
 * directory dirty; an arrival in done/ or failed/ is a finished job,
 * counted now, so throughput needs no stat.  Lost events (an overflow)
 * make the next rescan read everything, failed/ in full; the jobs they
 * would have counted as finished are not known.
 */
void	 top_event(void *arg, const struct watch_event *ev);
/* A job reached done/ (st is ST_DONE) or failed/ at when. */
void	 top_finished(struct top *t, int st, msec_t when);
/* Jobs finished in the TOP_WINDOW seconds up to now. */
void	 top_rate(const struct top *t, msec_t now, unsigned *done,
	    unsigned *failed);
/* A running time or an age to the second: 0s, 59s, then 1m0s, 2h3m... */
void	 top_age(msec_t ms, char *buf, size_t len);
/*
 * Cancel id as `chute cancel` does: one rename to failed/, a note in its
 * log, the directories synced.  msg gets one line for the user either
 * way.  Returns 0, or -1.
 */
int	 top_cancel(struct top *t, const char *id, char *msg, size_t len);
/* Retry id as `chute retry` does: the reset note, then failed/ -> new/. */
int	 top_retry(struct top *t, const char *id, char *msg, size_t len);

#endif
