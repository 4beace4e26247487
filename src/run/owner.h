/*
 * owner.h: the owner, which ties a queue (queue.h) to the handler
 * supervisor (supervise.h) through the outcome table (outcome.h).
 * owner.c is the event loop; owner_job.c the life of one job in it.
 */
#ifndef OWNER_H
#define OWNER_H

#include <poll.h>
#include "base/chute.h"
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
int	 owner_init(struct owner *, const struct run_opts *, struct queue *);
void	 owner_free(struct owner *);
int	 owner_loop(struct owner *);
int	 owner_run(struct owner *, const struct run_opts *, struct queue *);

/* owner_job.c */
void	 owner_dispatch(struct owner *);
void	 owner_ended(void *, int, const struct attempt_end *);
void	 owner_cancelled(void *, const char *, const char *, bool);
void	 owner_retry_due(struct owner *, msec_t);
void	 owner_give_up(struct owner *);
msec_t	 owner_retry_deadline(struct owner *);

#endif
