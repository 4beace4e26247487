/*
 * queue_spool.h: the spool queue's private state, shared by
 * queue_spool.c (events, due work, opening and closing, the tables of
 * operations), queue_spool_claim.c (claims), queue_spool_outcome.c
 * (outcomes and the group commit), queue_spool_in_place.c (forward's
 * claims, which stay in new/), queue_spool_scan.c (finding work in new/
 * and defer/) and queue_spool_recover.c (what a dead owner left in cur/
 * and tmp/).  Every rename is state.c's; these files only decide which
 * one.
 */
#ifndef QUEUE_SPOOL_H
#define QUEUE_SPOOL_H

#include <dirent.h>
#include <limits.h>
#include <string.h>
#include "base/nameq.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/limits.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/watch.h"
#include "queue/spool/keeper.h"
#include "queue/queue.h"

#define OLD_MAX	16
#define DEFER_WINDOW	65536	/* most names of defer/ indexed in memory */

struct skeys;

struct spoolq {
	struct queue	 q;
	struct spool	 sp;
	struct queue_conf c;
	struct watch	*w;
	struct nameq	*ready;		/* in new/, key: mtime in ns */
	struct nameq	*waiting;	/* in new/, not complete yet; key: recheck (mono) */
	struct nameq	*orphans;	/* in cur/, an old handler runs; key: recheck (mono); flags: its pid found */
	struct nameq	*promoted;	/* moved defer/ -> new/ by us, event not seen yet */
	struct nameq	*deferred;	/* in defer/, the soonest; key: due (realtime) */
	bool		 defer_truncated;	/* defer/ holds jobs deferred leaves out */
	struct nameq	*refused;	/* in new/, cannot be moved to failed/; key: its inode */
	struct nameq	*busy;		/* in new/, its file flocked by another; key: since (mono); flags: BUSY_SAID */
	struct nameq	*flocked;	/* busy, said held: --drain does not wait; key: recheck (mono) */
	bool		 held_left;	/* --drain said what it left held */
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
	bool		 paused;	/* SPOOL/paused is there: claim nothing */
	bool		 pause_unknown;	/* said once: it cannot be told */
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
	/* SPOOL/retention, as last read; a pass over done/ or failed/
	 * removing what is past it (queue_spool_retain.c). */
	struct retention keep;
	bool		 keep_bad;	/* said once: it cannot be read */
	DIR		*keep_dir;	/* the pass in progress, of keep_st */
	int		 keep_st;
	msec_t		 keep_next;	/* monotonic: the next pass */
	struct limits	 lim;		/* SPOOL/limits, as last read well */
	struct timespec	 lim_mtime;	/* its mtime then; ino too */
	ino_t		 lim_ino;
	struct skeys	*keys;		/* queue_spool_keys.c's counting */
	struct nameq	*alive;		/* orphans counted as running */
	struct nameq	*unparked;	/* parked names given room, to admit */
	unsigned	 nstarts;	/* claims made: each SCHED_FIFO_EVERYth the oldest */
	/* Jobs in wait/ and the jobs they wait for (queue_spool_after.c). */
	struct after_index *after;
	/* A pass over unique/ removing free keys' files (queue_spool_unique.c). */
	DIR		*uq_dir;	/* the pass in progress */
	msec_t		 uq_next;	/* monotonic: the next pass; 0 at the start */
	unsigned	 uq_removed, uq_failed;	/* this pass's */
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

static inline msec_t
min_ms(msec_t a, msec_t b)
{
	return a < b ? a : b;
}

/* queue_spool.c */
struct spoolq	*spoolq_new(const struct queue_conf *c);
/* One inotify event; also called by the unit tests. */
void	 spoolq_on_event(void *arg, const struct watch_event *ev);

/* queue_spool_claim.c: the backend's operations (queue.h says what each does) */
/* The oldest ready jobs in new/, up to n of them, each renamed to cur/. */
int	 sq_claim(struct queue *q, struct claim *const *c, int n);
/*
 * After the turn's handlers have started: make the spare logs the next
 * claims will take, so that no claim waits for an inode allocation.
 */
void	 sq_prepare(struct queue *q);
/* The spool lock is ours as long as we live: no claim expires. */
int	 sq_renew(struct queue *q, struct claim *const *c, int n);

/*
 * One claim of new/name into c, run's or forward's: true when it is ours;
 * otherwise the name went where it had to (renamed, rejected, back to
 * wait).
 */
typedef bool	 spoolq_take_fn(struct spoolq *sq, const char *name,
		    unsigned flags, struct claim *c);
/*
 * Up to n of the oldest ready names of new/, each taken by take_one into
 * c[0..n-1]: how many were.  Paused, none.
 */
int	 spoolq_claim(struct spoolq *sq, struct claim *const *c, int n,
	    spoolq_take_fn *take_one);
/*
 * queue_spool_unique.c: may new/name run as far as its unique key goes
 * (a ",u=KEY" in its name)?  False when it was refused to failed/ (the
 * key held by another job) or must be looked at again (the key's flock
 * busy, an error: said): it went where it had to.
 */
/*
 * new -> failed without ever running it, for why (its log and the journal
 * say so).  Not moved: ENOENT, nothing; EACCES or EPERM with st (its
 * lstat), left in new/ and passed over; otherwise tried again later.
 */
void	 spoolq_reject(struct spoolq *sq, const char *name,
	    const struct stat *st, const char *why);
bool	 spoolq_unique_ok(struct spoolq *sq, const char *name, unsigned flags);
/*
 * A bounded step of the pass over unique/ that removes the files of keys
 * no job holds (unique_sweep): at the start, then once an hour; when the
 * next step is due; the pass closed (at the end).
 */
void	 spoolq_unique_step(struct spoolq *sq, msec_t mono);
msec_t	 spoolq_unique_next(struct spoolq *sq, msec_t mono);
void	 spoolq_unique_close(struct spoolq *sq);

/*
 * Open and check new/name for a claim (ready_checkb, with flags).  True
 * with *fd, *st and *btime filled in when the job is ready; otherwise it
 * went where it had to (rejected, back to wait) or was gone.
 */
bool	 spoolq_ready(struct spoolq *sq, const char *name, unsigned flags,
	    int *fd, struct stat *st, struct timespec *btime);
/*
 * Is the name used by a job in a state directory other than new/ and
 * cur/?  That state, or ST_NONE.
 */
int	 spoolq_taken_elsewhere(struct spoolq *sq, const char *name);
/*
 * A dropped file whose name is not a valid ID, or is already a job's in
 * state other (ST_NONE: not valid), is renamed to a derived ID and
 * admitted under it.
 */
void	 spoolq_rename_dropped(struct spoolq *sq, const char *name,
	    unsigned flags, int other);
/* Not ready yet (r says why): look at name again later. */
void	 spoolq_later(struct spoolq *sq, const char *name, unsigned flags,
	    enum ready r, const struct stat *st);
/* c, cleared, holds name and its open file fd, among our claims. */
void	 spoolq_hold(struct spoolq *sq, struct claim *c, const char *name,
	    int fd);
/* c's log, opened and its attempts read (c->logerr says why not). */
void	 spoolq_open_log(struct spoolq *sq, struct claim *c);

/* queue_spool_outcome.c: the backend's operations */
/*
 * Move the finished job out of cur/.  ENOENT: a cancel (or an operator's
 * mv) got there first and wins; it is noted in the job's log.
 */
int	 sq_record(struct queue *q, struct claim *c, const struct outcome *out,
	    msec_t when);
void	 sq_release(struct queue *q, struct claim *c);
/*
 * Make finished transitions durable, by a group commit (the comment above
 * its definition says how); returns when to be called again.
 */
msec_t	 sq_commit(struct queue *q, bool busy);

/* queue_spool_in_place.c: forward's operations (queue_conf.in_place) */
/* The oldest ready jobs in new/, up to n of them, each left there. */
int	 sq_claim_in_place(struct queue *q, struct claim *const *c, int n);
/*
 * From new/ to done/ or failed/, or left in new/ (handed back); ENOENT:
 * a cancel or an operator's mv took it out of new/ first.
 */
int	 sq_record_in_place(struct queue *q, struct claim *c,
	    const struct outcome *out, msec_t when);
void	 sq_release_in_place(struct queue *q, struct claim *c);

/*
 * queue_spool_after.c: jobs that wait for others.  A job seen in wait/
 * (its event): its list read, and it is woken (wait -> new) or failed at
 * once if what it waits for has ended already.
 */
void	 spoolq_after_arrived(struct spoolq *sq, const char *name);
/* Job id reached done/ or failed/ (or was purged): its dependents settled. */
void	 spoolq_after_ended(struct spoolq *sq, const char *id);
/* wait/ read afresh, the index rebuilt (start, an inotify overflow). */
void	 spoolq_after_scan(struct spoolq *sq);
/* The waiting jobs known, not yet woken or failed. */
size_t	 spoolq_after_waiting(struct spoolq *sq);
void	 spoolq_after_close(struct spoolq *sq);

/* queue_spool_scan.c */
void	 spoolq_admit(struct spoolq *sq, const char *name, unsigned flags);
/* The names in sq->unparked admitted to ready, never parked again here. */
void	 spoolq_admit_unparked(struct spoolq *sq);
/*
 * Start reading new/ again, unless it has not changed since the last full
 * scan (the mtime test is only trusted when that scan started well after
 * the directory's last change: coarse time stamps).  A scan requested
 * while one runs restarts it when it ends, so nothing is missed.
 */
void	 spoolq_scan_new(struct spoolq *sq, bool force);
/* Read up to max names of new/; returns true when the scan is over. */
bool	 spoolq_scan_step(struct spoolq *sq, size_t max);
/* The window ran low and new/ holds more than it: read new/ again. */
void	 spoolq_refill(struct spoolq *sq);
/* Read defer/ whole: move every due job to new/, index the others. */
void	 spoolq_scan_defer(struct spoolq *sq);
/*
 * The index's due jobs, each looked at again (its mtime may have been
 * changed since: an operator's touch, a retry that moved it back).
 */
void	 spoolq_defer_due(struct spoolq *sq);
/* A file landed in defer/ (an event, or our own move): index it. */
void	 spoolq_defer_arrived(struct spoolq *sq, const char *name);
/*
 * A job left defer/.  Our own promotions are expected; anything else is
 * a cancel or an operator's mv or rm, which is logged (the job is not
 * ours to run until it appears in new/ again).
 */
void	 spoolq_defer_left(struct spoolq *sq, const char *name);
/* The journal's line for a file state_leave moved aside, if it did. */
void	 spoolq_said_aside(const char *id, int to, const char *aside);
/*
 * Was name refused in place (queue_spool_claim.c, refuse_in_place) and is it
 * still that inode?  One replaced since is looked at afresh.
 */
bool	 spoolq_refused(struct spoolq *sq, const char *name,
	    const struct stat *st);
/* new/ holds nothing but what was refused in place or is held: nothing to run. */
bool	 spoolq_new_empty(struct spoolq *sq);
/*
 * new/name's file is flocked by another process (READY_BUSY; st from the
 * check).  Once that has lasted HELD_MS the job is held: said once with
 * the holder's pid, and rechecked from sq->flocked, which --drain does not
 * wait for.  Returns true when it went there; false: it waits as before.
 */
bool	 spoolq_busy(struct spoolq *sq, const char *name, unsigned flags,
	    const struct stat *st);
/* new/name's check found no lock of another's on it (any longer). */
void	 spoolq_unbusy(struct spoolq *sq, const char *name);
/* --drain ends: one line per job it leaves held in new/. */
void	 spoolq_said_held(struct spoolq *sq);

/* queue_spool_retain.c */
/* Read SPOOL/retention again (the start, an event, a rescan). */
void	 spoolq_retain_look(struct spoolq *sq);
/*
 * Due: a bounded step (RETAIN_CHUNK names) of the pass over done/ and
 * failed/ that removes the jobs past their retention, and their logs;
 * when the next step is due (monotonic; INT64_MAX: never).
 */
void	 spoolq_retain_step(struct spoolq *sq, msec_t mono);
msec_t	 spoolq_retain_next(struct spoolq *sq, msec_t mono);
/* The pass in progress, if any, ends. */
void	 spoolq_retain_close(struct spoolq *sq);
/*
 * At a clean stop, with a state kept 0: one pass (RETAIN_LAST_STEPS steps
 * at most), so that the jobs that ended in the last turns do not stay
 * until the next owner.
 */
void	 spoolq_retain_last(struct spoolq *sq);
/* queue_spool_keys.c: the limits (base/sched.h), counted by the owner */
int	 spoolq_keys_new(struct spoolq *sq);
void	 spoolq_keys_free(struct spoolq *sq);
/*
 * SPOOL/limits read again: at start, on an event in the root, and at the
 * safety rescan when its inode or mtime changed.  A bad file is said
 * (its path and line) and the rules read before stay.
 */
void	 spoolq_limits_look(struct spoolq *sq);
void	 spoolq_limits_recheck(struct spoolq *sq);
/*
 * At start: the rated starts an earlier owner made inside each window,
 * from SPOOL/.starts, count; the file is kept from then on.
 */
void	 spoolq_starts_load(struct spoolq *sq);
/* Room for one more start: the whole spool's (LIM_ALL), key k's. */
bool	 spoolq_all_room(struct spoolq *sq);
bool	 spoolq_key_room(struct spoolq *sq, const char *k);
/* Is key k at its limit with jobs parked (new ones park behind them)? */
bool	 spoolq_key_parking(struct spoolq *sq, const char *k);
/*
 * Park new/name of key k (rank and age: its place in the ready queue)
 * until the key has room; false: not parked (no memory), it stays ready.
 */
bool	 spoolq_park(struct spoolq *sq, const char *k, const char *name,
	    int rank, int64_t age, unsigned flags);
bool	 spoolq_parked(struct spoolq *sq, const char *k, const char *name);
/* Up to n of key k's parked names to sq->unparked, best first. */
void	 spoolq_unpark(struct spoolq *sq, const char *k, size_t n);
/*
 * A job of key k ("" none) started, or (orphan) an earlier owner's found
 * running in cur/; and one of them gone: its handler ended (the claim's
 * release), or the orphan left cur/.
 */
void	 spoolq_key_run(struct spoolq *sq, const char *k, bool orphan);
void	 spoolq_key_done(struct spoolq *sq, const char *k);
/* Keys whose window has room again (mono); when the next one has. */
void	 spoolq_keys_due(struct spoolq *sq, msec_t mono);
msec_t	 spoolq_keys_next(struct spoolq *sq);
/* How many names of new/ are parked, waiting for their key's room. */
size_t	 spoolq_nparked(struct spoolq *sq);
/* The key in a job's name into k ("" none, or a bad one). */
void	 spoolq_name_key(const char *name, char *k, size_t len);

/* queue_spool_recover.c */
void	 spoolq_recover(struct spoolq *sq);
/*
 * One job found in cur/ that is not ours.  hint: the pid of the process
 * of the owner's user found holding its file the last time (0: none),
 * kept as its entry's flags in orphans.
 */
void	 spoolq_recover_one(struct spoolq *sq, const char *name, unsigned hint);
void	 spoolq_clean_tmp(struct spoolq *sq);
/*
 * Our own .workers.PID, for --persistent: created and share-locked once;
 * every worker inherits it.  Returns its descriptor, or -1 with errno set.
 */
int	 spoolq_workers_lock(struct spoolq *sq);
/* At exit: our workers are gone (or outlive us holding the lock). */
void	 spoolq_workers_unlock(struct spoolq *sq);
/* At start-up: remember the .workers.PID files of earlier owners (ours aside). */
void	 spoolq_workers_find_old(struct spoolq *sq);

#endif
