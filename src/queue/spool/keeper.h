/*
 * keeper.h: a spool owner's second thread (keeper.c), which waits on the
 * disk for the two things no job waits for: the group commit's directory
 * fsyncs and the log pool's creates.
 */
#ifndef KEEPER_H
#define KEEPER_H

#include <pthread.h>
#include <stdbool.h>
#include "base/chute.h"

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

int	 keeper_start(struct keeper *, struct spool *, struct joblog_pool *);
void	 keeper_fill(struct keeper *);
bool	 keeper_idle(struct keeper *, unsigned *, int *, msec_t *);
void	 keeper_sync(struct keeper *, unsigned);
int	 keeper_fill_error(struct keeper *);
unsigned keeper_stop(struct keeper *);

#endif
