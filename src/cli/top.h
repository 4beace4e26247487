/*
 * top.h: what `chute top` knows of a spool between two looks at it: the
 * count per state, the longest-running jobs, the newest failures and the
 * jobs finished per second over the last minute.  Every part has a fixed
 * size, so a spool of a million jobs costs the view no more memory.
 */
#ifndef TOP_H
#define TOP_H

#include <limits.h>

#include "base/chute.h"

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

int	 top_init(struct top *, struct spool *, msec_t);
int	 top_rescan(struct top *);
void	 top_event(void *, const struct watch_event *);
void	 top_finished(struct top *, int, msec_t);
void	 top_rate(const struct top *, msec_t, unsigned *, unsigned *);
void	 top_age(msec_t, char *, size_t);
int	 top_cancel(struct top *, const char *, char *, size_t);
int	 top_retry(struct top *, const char *, char *, size_t);

#endif
