/*
 * pgq.h: the PostgreSQL queue's private state, shared by queue_pg.c (the
 * loop's hooks, opening and closing), queue_pg_conn.c (the connection),
 * queue_pg_claim.c (claims, local copies, leases) and queue_pg_outcome.c
 * (outcomes).  fleet.md lists every statement and its crash window.
 */
#ifndef QUEUE_PG_PGQ_H
#define QUEUE_PG_PGQ_H

#include <limits.h>
#include <stdbool.h>
#include "base/util.h"
#include "queue/pg/pg.h"
#include "queue/queue.h"

/* An outcome waiting for the next batch. */
struct pending {
	char		 id[NAME_MAX + 1];
	char		 token[24];
	uint64_t	 tok;		/* token, as a number: the sort key */
	bool		 took;		/* in the reply of the statement sent */
	bool		 stray;		/* it replaced a stray finished row */
	const char	*to;
	msec_t		 delay;
	bool		 counted;
	char		 last[96];
	int		 attempt;	/* for the line said after the commit */
	msec_t		 when;		/* realtime: defer's next run */
	char		*log;		/* hex of the attempt's log, malloc'd */
	msec_t		 since;		/* monotonic */
};

struct pgq {
	struct queue	 q;
	struct pg	 pg;
	struct queue_conf c;
	msec_t		 lease;
	msec_t		 poll;		/* --poll: the safety poll under LISTEN */
	int		 slots;		/* the owner's, at most the prefetch */
	int		 nslots;	/* the owner's (-j), for chute.workers */
	int		 prefetch_max;	/* --prefetch: claimed ahead, at most */
	unsigned	 done_n;	/* outcomes since done_t0 (the rate) */
	msec_t		 done_t0;
	double		 rate;		/* jobs finished per second, smoothed */
	char		 worker[300];	/* host:pid, in the claim's row */
	char		 host[256], pid[24];	/* its parts, for chute.workers */
	bool		 registered;	/* chute.workers has our row: started set */
	/* The queue paused (chute.queues), as last seen, and by whom; a
	 * "pause QUEUE" or "resume QUEUE" heard: look again (pgq_pause_check). */
	bool		 paused, pause_heard;
	char		 paused_by[128];
	char		 dir[PATH_MAX];	/* the local copies of jobs and logs */
	int		 dirfd;
	bool		 up, said_down, fatal;
	msec_t		 reconnect_at, reconnect_delay;
	bool		 wake;		/* claim at the next chance */
	/* The last hand-out (pq_claim) left slots idle: a wake is worth a
	 * turn of the loop at once; else the next free slot asks anyway. */
	bool		 starved;
	msec_t		 next_poll;	/* ...or at the latest then (mono) */
	msec_t		 next_renew, next_recover;
	msec_t		 next_reap;	/* gone workers' rows deleted then (mono) */
	msec_t		 renew_sent;	/* last renewal that succeeded, sent at */
	msec_t		 reaper_from;	/* renew_sent told the reaper; 0: none */
	struct claim	**held;		/* handed to the owner, not released */
	size_t		 nheld, capheld;
	struct claim	*ahead;		/* prefetched, not yet handed out: */
	int		 first, nahead;	/* ahead[first .. first + nahead) */
	size_t		 capahead;	/* slots + prefetch_max */
	struct pending	*pend;
	size_t		 npend, cappend;
	/* pend[0, nsent) are in the statement in flight (flush_send): the
	 * loop goes on running jobs while the server commits them. */
	bool		 flushing;
	size_t		 nsent;
	/* A claim in flight (claim_send): the loop goes on handing out the
	 * jobs claimed ahead meanwhile; never with outcomes in flight, one
	 * statement at a time. */
	bool		 claiming;
	int		 claim_want;
	unsigned	 nclaims;	/* claims sent: every SCHED_FIFO_EVERYth in age order */
	bool		 limited;	/* a rate or a whole-queue rule: claim_lim_sql */
	msec_t		 claim_sent;	/* mono */
	/* pgq_claim_take, which pgq_await_outcomes calls through this:
	 * queue_pg_claim.c uses queue_pg_outcome.c's statements, and the
	 * objects' arrows go one way (tests/build/layers.sh). */
	int		(*claim_take)(struct pgq *pq, PGresult *r);
	msec_t		 flush_again;	/* a batch failed: not before then (mono) */
	bool		 flush_stray;	/* the batch in flight is flush_sql_stray */
	bool		 stray_next;	/* the next one must be (a stray row) */
	struct pumps	*pumps;		/* exec'd handlers' output (pump.c) */
	size_t		 queued, deferred;	/* for the title, as last seen */
	msec_t		 next_count;	/* count them again then (count_waiting) */
	/* Views are owed a notification (pgq_moved), debounced from view_at. */
	bool		 view_owed;
	msec_t		 view_at;
	/* The queue's retention, as last read; "retention QUEUE" heard, or
	 * connected: read it again; the next sweep (mono; INT64_MAX: none). */
	struct retention keep;
	bool		 keep_heard;
	msec_t		 next_sweep;
	/* Jobs whose claim was lost (cancelled, taken away) and whose
	 * handler is gone, or never started: the edges of their dependents
	 * held by the cancel (schema 13) are released at the next turn. */
	char		(*unheld)[NAME_MAX + 1];
	size_t		 nunheld, capunheld;
};

/*
 * Jobs moved (claimed, recorded, recovered, handed back): the views of the
 * queue (pg_view.h) are told, once the change is committed, at most once
 * per PGV_NOTIFY_MS (queue_pg.c, tell_views).
 */
static inline void
pgq_moved(struct pgq *pq)
{
	pq->view_owed = true;
}

/* queue_pg_conn.c */
/* Lost it: say so once, try again after a growing delay. */
void	 pgq_down(struct pgq *pq, const char *what);
/*
 * A failed statement: the connection's fault, or the statement's?  A
 * server that refuses writes (a standby, a demoted primary) is the
 * connection's: the next one goes to the next host of the URI (pg.h).
 */
void	 pgq_failed(struct pgq *pq, const char *what);
/*
 * Bound every call of this turn of the loop (pg.h: deadline): a third of
 * the lease, like the server's statement_timeout, and while we hold
 * claims no later than the instant pgq_expire() must stop their handlers (a
 * twentieth of the lease at least, for a renewal that may still save
 * them).  A reply that comes later is not waited for: the connection is
 * dropped and made again.
 */
void	 pgq_arm(struct pgq *pq, msec_t mono);
/* The server's notices and warnings, as the owner's lines, on one line. */
void	 pgq_notice(void *arg, const char *msg);

/* queue_pg_claim.c */
/*
 * How many wait, for the title: up to PG_COUNT_MAX of each kind (at the
 * cap, "at least"), so that a deep queue costs a bounded statement (1.5 us
 * a row here) that cannot reach the statement timeout of a short lease.
 * Asked after a short claim or a renewal, when due: again only after 100
 * times as long as the last count took (failed or not), at most once a
 * poll: at most 1% of this worker's time.
 */
void	 pgq_count_waiting(struct pgq *pq);
/*
 * Hand out n jobs: prefetched ones first, then a batch from the database
 * of the free slots plus the prefetch allowance, claimed only when a
 * notification, a finished job or the poll says there may be work.
 */
int	 pq_claim(struct queue *q, struct claim *const *c, int n);
/*
 * A claim we held is gone: stop its handler (at once when its lease is
 * running out); its outcome will be refused.
 */
void	 pgq_lost(struct pgq *pq, struct claim *c, const char *why, bool now);
/* A prefetched claim we will not start: its local copy goes. */
void	 pgq_forget_ahead(struct pgq *pq, struct claim *c);
/*
 * Every prefetched claim goes back to new, its attempt not counted (a
 * stop, a pause): one statement, and their local copies removed.
 */
void	 pgq_hand_back(struct pgq *pq);
/*
 * The queue is paused (by: who; "" for unknown) or not, as a statement
 * just read: said once when it changes; paused, what was claimed ahead
 * goes back (no job starts that was not running when the pause was
 * seen); resumed, claim at once.
 */
void	 pgq_set_paused(struct pgq *pq, bool paused, const char *by);
/*
 * Extend every lease we hold, in one statement, sent well before they
 * expire.  A claim the database no longer gives us (cancelled, or
 * recovered by another worker after we lost touch) stops its handler.
 * The row must name us as well as hold our token: after a failover to an
 * asynchronous standby a token can be handed out again (fleet.md,
 * "Replication"), and another worker's claim must not pass for ours.
 */
int	 pgq_renew(struct pgq *pq, msec_t mono);
/*
 * The reaper's deadline (base/reaper.h), from renew_sent: every handler's
 * group is killed then if we have not renewed, so that a worker stopped
 * past its leases (SIGSTOP, a stalled process) cannot leave its handlers
 * running when another worker may take their jobs.  Eleven twelfths of the
 * lease after the last good renewal was sent: a twelfth after our own
 * deadline (pgq_expire, five sixths), so that a worker that can still act
 * always acts first, and a twelfth before the earliest instant another
 * worker can recover a job (the whole lease after the renewal reached the
 * server, which was after it was sent; fleet.md, "A frozen worker").
 */
#define PGQ_REAPER_AT(lease)	((lease) * 11 / 12)
/*
 * Tell the reaper the deadline of renew_sent while we hold claims that may
 * run (running or claimed ahead), and that there is none when we hold
 * none (an idle worker's persistent workers are not killed for a pause):
 * at each claim, renewal, expiry, and as the last running job is released.
 */
void	 pgq_tell_reaper(struct pgq *pq);
/*
 * Cannot renew: before the leases run out (on our own monotonic clock,
 * from when the last good renewal was sent) stop every handler, so a job
 * another worker recovers never runs twice at once.
 */
void	 pgq_expire(struct pgq *pq, msec_t mono);
/*
 * Any worker: claims whose lease ran out go back to new (or to failed when
 * their attempts are used up), picked SKIP LOCKED so that recovery never
 * races an outcome being recorded.
 */
void	 pgq_recover(struct pgq *pq, msec_t mono);
/*
 * Job id's claim was lost and its handler is gone (or never started):
 * the dependents a cancel held (schema version 13) may go on.  Noted,
 * and sent by pgq_unheld_send in a statement of its own, when none is in
 * flight; one that fails is dropped: the recovery of any worker releases
 * them at the lease's end.
 */
void	 pgq_unheld(struct pgq *pq, const char *id);
void	 pgq_unheld_send(struct pgq *pq);

/*
 * The reply r to the claim in flight (NULL: none came): its rows taken
 * as claimed ahead.  How many, or -1 (the connection's state says why).
 */
int	 pgq_claim_take(struct pgq *pq, PGresult *r);

/* queue_pg_retain.c */
/* Read the queue's retention again; said when it changes. */
void	 pgq_keep_check(struct pgq *pq, msec_t mono);
/* Remove a batch of finished jobs past their retention (due: next_sweep). */
void	 pgq_sweep(struct pgq *pq, msec_t mono);

/* queue_pg_outcome.c */
/*
 * Wait for the statement in flight, if any, the outcomes' or a claim's:
 * every other statement on the connection waits for it (one statement at
 * a time), as does the end.  0, or -1 (the batch was refused, or the
 * connection went down: pq->up tells which; the outcomes stay pending
 * either way).
 */
int	 pgq_await_outcomes(struct pgq *pq);
/*
 * Statements other than the outcomes' wait for those in flight first: one
 * statement at a time on the connection.  NULL or -1: as pg_exec and
 * pg_cmd (the connection may have gone down meanwhile).
 */
PGresult	*pgq_exec(struct pgq *pq, const char *sql, int n,
	    const char *const *p, bool bin);
int	 pgq_cmd(struct pgq *pq, const char *sql, int n, const char *const *p);
/* Send the pending outcomes and wait for them: 0, or -1. */
int	 pgq_flush(struct pgq *pq);
/*
 * Queue the outcome for the next batch (commit sends it).  A claim we know
 * is lost is refused at once (ESTALE): its handler was stopped for it.
 * The backend's hook calls pgq_expire first (queue_pg.c): past five sixths
 * of the lease every claim is lost, a handler the reaper killed included.
 */
int	 pq_record(struct queue *q, struct claim *c, const struct outcome *out,
	    msec_t when);
void	 pq_release(struct queue *q, struct claim *c);
/*
 * Send the batch: at once when nothing runs or PG_GROUP_MAX wait, else
 * once the oldest outcome has waited PG_GROUP_MS, so that a busy worker
 * records many per statement (each costs the server a commit and its
 * overhead, whatever it carries); and not while the last batch is in
 * flight (its result, on the connection's socket, wakes the loop:
 * pq_wake).
 */
msec_t	 pq_commit(struct queue *q, bool busy);

#endif
