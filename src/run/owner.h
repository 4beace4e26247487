/*
 * owner.h: the owner, which ties a queue (queue.h) to the handler
 * supervisor (supervise.h) through the outcome table (outcome.h).
 * owner.c is the event loop; owner_job.c the life of one job in it.
 */
#ifndef OWNER_H
#define OWNER_H

#include <poll.h>
#include "base/util.h"
#include "run/opts.h"
#include "base/outcome.h"
#include "queue/queue.h"
#include "run/supervise.h"

/* The job in one supervisor slot, from its claim until its outcome is recorded. */
struct ojob {
	bool		 busy;
	struct claim	 c;
	struct outcome	 out;		/* decided when its handler ended */
	msec_t		 when;		/* the outcome's time stamp (realtime) */
	msec_t		 retry_at;	/* recording failed: try again (mono); 0: no */
};

struct owner {
	const struct run_opts *o;
	struct queue	*q;
	struct sup	*sup;
	struct ojob	*jobs;		/* one per slot */
	struct claim	**batch;	/* claim's argument, one per slot */
	struct pollfd	*pfd;		/* signalfd, the queue's, the workers' */
	struct retry_policy policy;
	int		 sigfd;
	int		 running;	/* slots holding a job */
	unsigned long	 finished, failed;	/* outcomes done or failed */
	msec_t		 started;	/* monotonic, for --drain's progress */
	bool		 stopping, fatal;
};

/* owner.c */
int	 owner_init(struct owner *ow, const struct run_opts *o,
	    struct queue *q);
/* Everything owner_init made; the queue is the caller's. */
void	 owner_free(struct owner *ow);
/*
 * Run jobs until told to stop (or, with --drain, until the queue is
 * empty).  Returns the exit status.
 */
int	 owner_loop(struct owner *ow);
/*
 * Run o's handler on the jobs of q until told to stop (or, with --drain,
 * until q is empty), then close q.  ow is the caller's: q was opened with
 * ow as its callbacks' argument.  Returns the exit status.
 */
int	 owner_run(struct owner *ow, const struct run_opts *o, struct queue *q);

/* owner_job.c */
void	 owner_dispatch(struct owner *ow);
/* The supervisor's callback: slot i's handler ended as e says. */
void	 owner_ended(void *arg, int i, const struct attempt_end *e);
/* The queue's callback: a job it gave us was cancelled. */
void	 owner_cancelled(void *arg, const char *id, const char *why, bool now);
/* Outcomes whose recording failed, tried again when their time comes. */
void	 owner_retry_due(struct owner *ow, msec_t mono);
/*
 * Stopping: an outcome that still cannot be recorded after one more try
 * is left to the next owner, so that no shutdown waits on it.  Its job
 * stays where it is (cur/, or claimed in the database until its lease
 * ends) and is recovered as an attempt that ended with its owner.
 */
void	 owner_give_up(struct owner *ow);
msec_t	 owner_retry_deadline(struct owner *ow);

#endif
