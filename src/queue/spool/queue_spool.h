/*
 * queue_spool.h: the spool queue's private state, shared by
 * queue_spool.c (the operations: claim, record, commit, events),
 * queue_spool_scan.c (finding work in new/ and defer/) and
 * queue_spool_recover.c (what a dead owner left in cur/ and tmp/).
 * Every rename is state.c's; these files only decide which one.
 */
#ifndef QUEUE_SPOOL_H
#define QUEUE_SPOOL_H

#include <dirent.h>
#include <limits.h>
#include <string.h>
#include "base/chute.h"
#include "queue/spool/keeper.h"
#include "queue/queue.h"

#define OLD_MAX	16
#define DEFER_WINDOW	65536	/* most names of defer/ indexed in memory */

struct spoolq {
	struct queue	 q;
	struct spool	 sp;
	struct queue_conf c;
	struct watch	*w;
	struct nameq	*ready;		/* in new/, key: mtime in ns */
	struct nameq	*waiting;	/* in new/, not complete yet; key: recheck (mono) */
	struct nameq	*orphans;	/* in cur/, an old handler runs; key: recheck (mono) */
	struct nameq	*promoted;	/* moved defer/ -> new/ by us, event not seen yet */
	struct nameq	*deferred;	/* in defer/, the soonest; key: due (realtime) */
	bool		 defer_truncated;	/* defer/ holds jobs deferred leaves out */
	struct nameq	*refused;	/* in new/, cannot be moved to failed/; key: its inode */
	struct nameq	*renamed;	/* renamed in new/ by us, event not seen yet; flags: as found */
	struct nameq	*flight;	/* in_place: our claims, still in new/ */
	struct claim	**held;		/* our claims, in cur/, until released */
	size_t		 nheld, capheld;
	struct joblog_pool pool;	/* empty logs for the next claims */
	struct keeper	 keeper;	/* fills pool, fsyncs; .on false: we do */
	int		 wlock;		/* .workers.PID, inherited by workers */
	char		 old[OLD_MAX][40];	/* .workers.PID of dead owners */
	int		 nold;
	int		 ndefer;	/* jobs in defer/, as last counted */
	bool		 rescan, fatal;
	bool		 pool_failed;	/* said once: no spare logs */
	bool		 pool_off;	/* no O_TMPFILE: not refilled */
	bool		 truncated;	/* new/ holds jobs the window left out */
	size_t		 window;	/* most names of new/ held in ready */
	msec_t		 next_defer;	/* realtime; 0: nothing deferred */
	msec_t		 next_rescan;	/* monotonic */
	msec_t		 dirty_since;	/* monotonic: oldest unsynced transition; 0: none */
	msec_t		 commit_due;	/* monotonic: sq_commit's next turn */
	bool		 sync_failed;	/* the last fsync failed: retry after a delay */
	msec_t		 slow_since;	/* the hung fsync already said (keeper.since) */
	msec_t		 scan_now;
	struct timespec	 new_mtime;	/* new/'s mtime at the last full scan */
	msec_t		 new_scanned;	/* realtime that scan started */
	DIR		*scan;		/* a scan of new/ in progress */
	bool		 scan_again;	/* restart it when it ends */
	struct timespec	 scan_mtime;
	msec_t		 scan_started;
};

/*
 * Is job name claimed by us (so in cur/ because of us)?  The claims are a
 * handful, one per slot, searched in a line as the slots would be.
 */
static inline bool
spoolq_holds(struct spoolq *sq, const char *name)
{
	for (size_t i = 0; i < sq->nheld; i++)
		if (strcmp(sq->held[i]->id, name) == 0)
			return true;
	return false;
}

/* queue_spool.c */
struct spoolq *spoolq_new(const struct queue_conf *);
void	 spoolq_on_event(void *, const struct watch_event *);

/* queue_spool_scan.c */
void	 spoolq_admit(struct spoolq *, const char *, unsigned);
void	 spoolq_scan_new(struct spoolq *, bool);
bool	 spoolq_scan_step(struct spoolq *, size_t);
void	 spoolq_refill(struct spoolq *);
void	 spoolq_scan_defer(struct spoolq *);
void	 spoolq_defer_due(struct spoolq *);
void	 spoolq_defer_arrived(struct spoolq *, const char *);
void	 spoolq_defer_left(struct spoolq *, const char *);
void	 spoolq_said_aside(const char *, int, const char *);
bool	 spoolq_refused(struct spoolq *, const char *, const struct stat *);
bool	 spoolq_new_empty(struct spoolq *);

/* queue_spool_recover.c */
void	 spoolq_recover(struct spoolq *);
void	 spoolq_recover_one(struct spoolq *, const char *);
void	 spoolq_clean_tmp(struct spoolq *);
int	 spoolq_workers_lock(struct spoolq *);
void	 spoolq_workers_unlock(struct spoolq *);
void	 spoolq_workers_find_old(struct spoolq *);

#endif
