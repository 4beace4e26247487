/*
 * queue.h: where jobs come from and where their outcomes go.  The owner
 * (owner.c) runs handlers through the supervisor and asks outcome.c what
 * an ending means; the queue underneath, behind this struct of operations,
 * claims jobs and records outcomes.  One implementation per store, as
 * OpenSMTPD's queue_backend.c has queue_fs.c and queue_ram.c:
 * queue_spool.c for a spool directory, and the fleet's PostgreSQL queue.
 *
 * Nothing here calls up into the owner: what the owner must hear from the
 * queue (a running job was cancelled) goes through the callback it passes
 * in with struct queue_conf.
 */
#ifndef QUEUE_H
#define QUEUE_H

#include <limits.h>
#include "base/util.h"
#include "base/outcome.h"

/* One claimed job, as the queue hands it to the owner. */
struct claim {
	char	 id[NAME_MAX + 1];
	char	*path;		/* the job file: {} and CHUTE_JOB (malloc'd) */
	int	 fd;		/* the job file, read-only: the handler's stdin */
	int	 logfd;		/* the job's log; -1: it could not be opened */
	int	 logerr;	/* then the errno that said why */
	off_t	 logend;	/* for joblog_vnote */
	bool	 logshared;	/* a handler writes to the log too */
	/* Or, where no handler writes to it, the log in memory: logfd -1,
	 * chute's lines in logbuf (malloc'd, loglen bytes), for the queue
	 * to store (queue_pg.c under --persistent: no descriptor per job). */
	bool	 logmem;
	char	*logbuf;
	size_t	 loglen;
	int	 attempt;	/* this attempt, 1 for the first */
	uint64_t token;		/* fencing token; 0 where the store needs none */
	/* The payload in memory (malloc'd), for an --inline worker of the
	 * fleet; NULL: it is read from fd. */
	char	*payload;
	/* The payload's length as the claim saw it: --inline's LENGTH.
	 * In place (queue_conf.in_place): the file as the claim saw it, for
	 * forward's origin key; btime.tv_sec -1: no birth time kept. */
	off_t	 size;
	uint64_t ino;
	struct timespec btime;
	bool	 lognew;	/* in place, no log yet: queue_spool_note makes it */
};

struct queue_conf {
	bool	 persistent;	/* workers will inherit queue->worker_fd */
	/* --inline: workers get each payload on their pipe (claim.payload
	 * or claim.fd, claim.size bytes), never a path; the fleet writes
	 * no local copy. */
	bool	 inline_jobs;
	struct retry_policy policy;	/* for jobs a dead owner left */
	/* What a job a dead owner left in cur/ is told on its way back to
	 * new/ (log and owner's line); NULL: the outcome table's note.
	 * forward, which counts no attempts, says its own. */
	const char *recovered;
	/* forward: a claim leaves the job in new/, and its outcome moves
	 * it from there (take_in_place in queue_spool_in_place.c says why):
	 * operations of their own, chosen at open. */
	bool	 in_place;
	/* Another live owner holds the spool: open returns 0 with no queue
	 * and says nothing (run --if-unowned, for cron). */
	bool	 quiet_if_owned;
	/* A claimed job was cancelled (why: for the owner's line); now:
	 * its handler must go at once (SIGKILL), not after the grace. */
	void	(*cancelled)(void *, const char *id, const char *why, bool now);
	void	*arg;
};

struct queue;

/* Jobs waiting, for titles; *_more: at least that many (a capped count);
 * paused: the queue is, and nothing is claimed (chute pause). */
struct counts {
	size_t	 queued, deferred;
	bool	 queued_more, deferred_more;
	bool	 paused;
};

struct queue_backend {
	const char *name;
	/* Recover what a dead owner left, find the work already there. */
	void	(*start)(struct queue *);
	/* The descriptor to poll for wake-ups (-1: none now, a connection
	 * down), and reading it when it is readable, or each turn while
	 * there is none; -1: the queue cannot go on (the owner stops, and
	 * exits with exit_status, or EX_IOERR where that is 0). */
	int	(*fd)(struct queue *);
	int	(*wake)(struct queue *);
	/* Look at everything again (SIGHUP, lost wake-ups). */
	void	(*rescan)(struct queue *);
	/* Make due jobs claimable: deferred jobs whose time has come,
	 * rechecks, rescans; and when it next wants calling (monotonic ms;
	 * INT64_MAX: only after a wake-up), asked just before each wait. */
	void	(*due)(struct queue *, msec_t mono);
	msec_t	(*next)(struct queue *, msec_t mono);
	/* Claim up to n jobs into c[0..n-1]; returns how many. */
	int	(*claim)(struct queue *, struct claim *const *, int n);
	/* Ready what the next claims need, after this turn's handlers
	 * have started (off the path from a wake-up to an exec); NULL:
	 * nothing to ready. */
	void	(*prepare)(struct queue *);
	/* Extend the claims of the given running jobs; 0, or -1. */
	int	(*renew)(struct queue *, struct claim *const *, int n);
	/* Send the job where the outcome says, with time stamp when
	 * (realtime ms: next run for defer).  Returns 0, or -1 with errno:
	 * ENOENT or ESTALE, refused (cancelled, moved away, lease lost:
	 * someone else decides this job now; the queue notes it in the log);
	 * anything else, not recorded yet: try again later. */
	int	(*record)(struct queue *, struct claim *, const struct outcome *,
		    msec_t);
	/* The owner is done with the claim: close and forget it. */
	void	(*release)(struct queue *, struct claim *);
	/* Make recorded outcomes durable.  busy: handlers run, so it may
	 * wait to batch.  Returns when it wants calling again (monotonic). */
	msec_t	(*commit)(struct queue *, bool busy);
	/* No job left to claim, none deferred, none claimed. */
	bool	(*drained)(struct queue *);
	void	(*counts)(struct queue *, struct counts *);
	void	(*close)(struct queue *);
};

struct queue {
	const struct queue_backend *be;
	const char	*name;		/* for messages and titles */
	int		 worker_fd;	/* persistent workers get it as fd 3 */
	bool		 die_with_owner;	/* handlers get PR_SET_PDEATHSIG */
	int		 exit_status;	/* why wake said it cannot go on */
	/* The queue writes each recorded outcome's `cur->STATE` line
	 * itself, once its commit is known (the database's: a batch may
	 * fail); otherwise the owner writes it when record returns 0. */
	bool		 says_outcomes;
};

/*
 * queue_spool_in_place.c: forward's line "@chute TIME text" in the log of
 * its claim c; with share, one file may hold it for the batch's jobs.
 */
void	 queue_spool_note(struct queue *q, struct claim *c, bool share,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * queue_spool.c: open the spool at path as this process's queue: check it,
 * take its lock (waiting for it with wait), watch it.  Returns 0 with *qp
 * set, or an exit status after one line on stderr saying why.
 */
int	 queue_spool_open(const char *path, bool wait,
	    const struct queue_conf *c, struct queue **qp);

#endif
