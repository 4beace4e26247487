/*
 * keeper.h: a spool owner's second thread (keeper.c), which waits on the
 * disk for the two things no job waits for: the group commit's directory
 * fsyncs and the log pool's creates.
 */
#ifndef KEEPER_H
#define KEEPER_H

#include <pthread.h>
#include <stdbool.h>
#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"

struct keeper {
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	struct spool	*sp;
	struct joblog_pool *pool;
	bool		 on;		/* the thread runs */
	bool		 quit;		/* asked to end */
	bool		 fill;		/* asked to refill the pool */
	bool		 syncing;	/* fsyncing `sync`'s directories */
	msec_t		 since;		/* monotonic: when that began */
	unsigned	 sync;		/* handed over, not fsynced yet */
	unsigned	 failed;	/* whose fsync failed, with errno err */
	int		 err;
	int		 fill_err;	/* the pool's last failure; 0: none */
};

/* Start the thread: 0, or -1 with errno set (the owner then does it all). */
int	 keeper_start(struct keeper *k, struct spool *sp,
	    struct joblog_pool *pool);
/* Refill the log pool up to what it wants. */
void	 keeper_fill(struct keeper *k);
/*
 * Has every fsync handed over ended?  *failed is the set whose fsync
 * failed since the last call (the owner's again, to retry), *err the
 * errno of the last failure, *since when the fsync in progress began
 * (0: none).
 */
bool	 keeper_idle(struct keeper *k, unsigned *failed, int *err,
	    msec_t *since);
/* Fsync these state directories (a set of 1 << ST_...). */
void	 keeper_sync(struct keeper *k, unsigned set);
/* The pool's last failure to make a log (errno), once; 0: none. */
int	 keeper_fill_error(struct keeper *k);
/*
 * End the thread, after the fsync or create it is doing.  Returns the
 * directories it was given and did not make durable, for the owner to
 * fsync itself.
 */
unsigned	 keeper_stop(struct keeper *k);

#endif
