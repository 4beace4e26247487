/*
 * top_spool.h: a spool as a live view's source (top_spool.c): what it
 * knows between two looks at it (struct top_spool), and the calls of
 * `chute top SPOOL` and `chute web SPOOL`.
 */
#ifndef QUEUE_TOP_SPOOL_H
#define QUEUE_TOP_SPOOL_H

#include <limits.h>
#include <sys/types.h>

#include "base/util.h"
#include "store/spool.h"
#include "store/watch.h"
#include "queue/view.h"

struct top_spool {
	struct top	 t;
	struct spool	*sp;
	struct watch	*w;		/* NULL: no events are read */
	pid_t		 owner;		/* lock_owner(): 0 none, -1 unknown */
	/* Names that arrived in failed/ since the last rescan, a ring. */
	char		 arrived[TOP_FAIL_MAX][NAME_MAX + 1];
	size_t		 narrived;
	unsigned	 dirty;		/* 1 << state: an event in it since the last rescan */
	bool		 full;		/* the next rescan re-reads failed/ */
	msec_t		 scanned;	/* mono_ms() of the last rescan */
};

/*
 * The watch a live view of sp reads (`chute top`, `chute web`): every
 * state directory, for every arrival and departure.  Open it before
 * top_init, so that nothing after the first look is missed.  Returns
 * NULL with errno set (watch_open's).
 */
struct watch	*top_watch_open(struct spool *sp);
/*
 * Read sp in full into s: counts, running jobs, the newest failures, and
 * the jobs that finished in the TOP_WINDOW seconds before `since`, by the
 * mtimes in done/ and failed/; the owner and whether the spool is paused.
 * since is when the caller's watch started: the jobs finishing after it
 * are its events', counted once.  Returns 0, or -1 with errno set.
 */
int	 top_init(struct top_spool *s, struct spool *sp, msec_t since);
/*
 * Look again after events, only in the directories they came from: names
 * are counted, not statted, except in cur/ (a few jobs) and for the
 * failures kept.  Returns 0, or -1 with errno set.
 */
int	 top_rescan(struct top_spool *s);
/*
 * watch_read's callback (arg is the struct top_spool).  Every event makes
 * its directory dirty; an arrival in done/ or failed/ is a finished job,
 * counted now, so throughput needs no stat.  Lost events (an overflow)
 * make the next rescan read everything, failed/ in full; the jobs they
 * would have counted as finished are not known.
 */
void	 top_event(void *arg, const struct watch_event *ev);
/*
 * Cancel id as `chute cancel` does: one rename to failed/, a note in its
 * log, the directories synced.  msg gets one line for the user either
 * way.  Returns 0, or -1.
 */
int	 top_cancel(struct top_spool *s, const char *id, char *msg, size_t len);
/* Retry id as `chute retry` does: the reset note, then failed/ -> new/. */
int	 top_retry(struct top_spool *s, const char *id, char *msg, size_t len);
/*
 * s as the view's source, its events read from w (top_watch_open's) and
 * rescans coalesced to one per TOP_RESCAN_MS.
 */
void	 top_spool_source(struct top_spool *s, struct watch *w,
	    struct top_source *src);

#endif
