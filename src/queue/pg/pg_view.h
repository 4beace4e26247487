/*
 * pg_view.h: a queue seen live, for `chute top URL` and `chute web URL`:
 * the count per state, the running jobs and whose claims they are, the
 * newest failures, the jobs finished in each of the last 60 seconds, the
 * workers, whether the queue is paused.  Each function is one read-only
 * statement, cheap however many rows the queue has: a range of a partial
 * index, bounded by a LIMIT (fleet.md, "Watching a queue", has each
 * statement's plan and what it cost with a million rows).  A count that
 * reached its bound, or was estimated, says so (pgv_counts.kind): show it.
 *
 * Each call returns -1 with the reason in pg_error(pg) and pg->state, as
 * pg_exec does: pg_fail(pg, what) says it and gives the exit status.
 */
#ifndef QUEUE_PG_PG_VIEW_H
#define QUEUE_PG_PG_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"

#define PGV_COUNT_MAX	PG_COUNT_MAX	/* rows one count reads, at most */
#define PGV_RATE_MAX	PG_COUNT_MAX	/* finished rows the rate reads, at most */
#define PGV_WINDOW	60		/* seconds of throughput */
/*
 * Workers tell views of their claims and outcomes on a channel of their
 * own, so that no worker is woken by another's: at most once per
 * PGV_NOTIFY_MS each, after the change is committed (queue_pg.c).  The
 * payload is the queue's name.
 */
#define PGV_CHANNEL	"chute_view"
#define PGV_NOTIFY_MS	500

/* How far a count can be trusted. */
enum pgv_kind {
	PGV_EXACT,		/* counted */
	PGV_ATLEAST,		/* counted up to a bound: "10000+" */
	PGV_ABOUT,		/* the planner's estimate: "~1.2M" */
};

/* Indexed by the state (base/jobstate.h); [0] stays 0. */
struct pgv_counts {
	long long	 n[ST_END];
	enum pgv_kind	 kind[ST_END];
};

/* A running job (pgv_running) or a failed one (pgv_failures). */
struct pgv_job {
	char	 id[ID_MAX + 1];
	char	 worker[128];	/* running: the claim's "host:pid"; failed: "" */
	/*
	 * Running: since its claim (-1: claimed by a chute before schema
	 * version 4, which kept no time); failed: since it failed.  By the
	 * server's clock, as when: the server's epoch milliseconds.
	 */
	msec_t	 elapsed;
	msec_t	 when;
	msec_t	 lease_left;	/* running: < 0 once run out (its worker gone) */
	int	 attempts;
	char	 last[256];	/* the last outcome, as `chute status` says it */
};

/* A worker of the queue (chute.workers), alive or gone. */
struct pgv_worker {
	char	 worker[128];	/* "host:pid", as chute.jobs.worker */
	char	 host[128];
	char	 version[32];
	long	 pid;
	int	 slots;		/* -j */
	int	 running;	/* jobs in cur under its claims (prefetched too) */
	msec_t	 lease_ms;
	msec_t	 started_ago, seen_ago;	/* by the server's clock */
	bool	 alive;		/* not stopped, and seen within its lease */
	bool	 stopped;	/* it said so when it stopped */
};

/*
 * done[i], failed[i]: the jobs that finished i seconds ago (0: in the last
 * second), by the server's clock.  seconds: how many of them are counted
 * in full, PGV_WINDOW unless more than PGV_RATE_MAX jobs finished in the
 * window; then only the newest seconds that hold PGV_RATE_MAX are, and a
 * rate is the sum over them divided by seconds.  (When more than that
 * finished in the last second alone, seconds is 1 and done[0] +
 * failed[0] is PGV_RATE_MAX: at least that many.)
 */
struct pgv_rate {
	unsigned	 done[PGV_WINDOW], failed[PGV_WINDOW];
	int		 seconds;
};

/*
 * The counts of pg->queue, each counted up to PGV_COUNT_MAX (done and
 * failed together); past it the planner's estimate (PGV_ABOUT), or, when
 * that is lower than what was counted, what was (PGV_ATLEAST).  0, or -1.
 */
int	 pgv_counts(struct pg *pg, struct pgv_counts *c);
/* Up to max running jobs, the longest-running first: how many, or -1. */
int	 pgv_running(struct pg *pg, struct pgv_job *v, int max);
/* Up to max failed jobs, the newest first: how many, or -1. */
int	 pgv_failures(struct pg *pg, struct pgv_job *v, int max);
/* The jobs finished in each of the last PGV_WINDOW seconds: 0, or -1. */
int	 pgv_rate(struct pg *pg, struct pgv_rate *r);
/*
 * Up to max workers of pg->queue, those alive first, then by name: how
 * many, or -1.  *alive and *all: how many of the queue's workers are
 * alive, and how many rows it has (those not returned too).
 */
int	 pgv_workers(struct pg *pg, struct pgv_worker *v, int max, int *alive,
	    int *all);
/*
 * Is pg->queue paused?  by gets who paused it ("user@host"), "" when it
 * is not paused or nobody said.  0, or -1.
 */
int	 pgv_paused(struct pg *pg, bool *paused, char *by, size_t len);

/*
 * LISTEN for what changes the view of pg->queue: submits, cancels,
 * retries, pause and resume (PG_CHANNEL), claims and outcomes
 * (PGV_CHANNEL).  0, or -1.  Again after every new connection.
 */
int	 pgv_listen(struct pg *pg);
/*
 * Read what the server has sent (never waiting): how many of the
 * notifications that came concern pg->queue (0: none, or none yet), or
 * -1 when the connection is lost.
 */
int	 pgv_notified(struct pg *pg);

#endif
