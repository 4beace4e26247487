/*
 * store_spool.h: what the files of the spool's store (store_spool*.c)
 * share; its interface is queue/store.h's store_spool_ops.
 */
#ifndef QUEUE_STORE_SPOOL_H
#define QUEUE_STORE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct spool;
struct store_stats;
/* store_spool_stats.c: 0, or an exit status after saying why. */
int	 spool_stats_read(struct spool *sp, struct store_stats *st);

/* store_spool_workers.c: its owner, as `chute workers` shows a worker. */
struct store_workers_out;
int	 spool_workers(struct spool *sp, const struct store_workers_out *o);

/*
 * store_spool_act.c: cancel or retry job id as `chute cancel` and `chute
 * retry` do (queue/store.h's cancel and retry: msg and the returns);
 * `chute web` calls them too.  Pause or resume (path for msg's line, as
 * cancel's), and purge: 0, or an exit status after saying why.
 */
int	 spool_cancel_job(struct spool *sp, const char *id, const char *by,
	    char *msg, size_t len);
int	 spool_retry_job(struct spool *sp, const char *id, const char *by,
	    char *msg, size_t len);
int	 spool_purge(struct spool *sp, int only, msec_t age,
	    long long *removed);
int	 spool_set_pause(struct spool *sp, const char *path, bool on,
	    const char *by, bool *changed, char *msg, size_t len);

#endif
