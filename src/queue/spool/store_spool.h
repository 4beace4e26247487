/*
 * store_spool.h: what the files of the spool's store (store_spool*.c)
 * share; its interface is queue/store.h's store_spool_ops.
 */
#ifndef QUEUE_STORE_SPOOL_H
#define QUEUE_STORE_SPOOL_H

struct spool;
struct store_stats;
/* store_spool_stats.c: 0, or an exit status after saying why. */
int	 spool_stats_read(struct spool *sp, struct store_stats *st);

/* store_spool_workers.c: its owner, as `chute workers` shows a worker. */
struct store_workers_out;
int	 spool_workers(struct spool *sp, const struct store_workers_out *o);

#endif
