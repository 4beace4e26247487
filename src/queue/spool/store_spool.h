/*
 * store_spool.h: what the files of the spool's store (store_spool*.c)
 * share; its interface is queue/store.h's store_spool_ops.
 */
#ifndef QUEUE_STORE_SPOOL_H
#define QUEUE_STORE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct spool;
struct store_stats;
/*
 * store_spool.c: open the spool at path for reading (spool_open), or say
 * why not in one line naming it ("not a spool ...; create it with `chute
 * init PATH`"): 0, or an exit status.  `chute submit` and `chute web` too.
 */
int	 spool_open_or_say(struct spool *sp, const char *path);
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

/*
 * store_spool_limits.c: the rules of SPOOL/limits and the keys in use
 * (queue/store.h's limits: rows to row), one rule changed (set_limit);
 * spool_key_use: each key of a job in cur/ or new/, in byte order, with
 * how many of its jobs are in each: 0, or -1 with errno set.
 */
struct store_limit_row;
struct store_limit_set;
int	 spool_limits(struct spool *sp, void (*row)(void *arg,
	    const struct store_limit_row *r), void *arg);
int	 spool_set_limit(struct spool *sp, const struct store_limit_set *c,
	    char *msg, size_t len);
int	 spool_key_use(struct spool *sp, void (*key)(void *arg, const char *k,
	    long long running, long long waiting), void *arg);

/*
 * store_spool_page.c: the dashboard's pages of a spool (queue/page.h), as
 * the store's page, page_job, page_failures and page_matching answer
 * them: 0 (page_job: 1, no such job; page_matching: how many), or -1
 * with err saying why.
 */
struct page_query;
struct page_list;
struct page_job;
struct page_failures;
int	 spool_page_list(struct spool *sp, const struct page_query *q,
	    struct page_list *l, char *err, size_t len);
int	 spool_page_job(struct spool *sp, const char *id, struct page_job *j,
	    char *err, size_t len);
int	 spool_page_failures(struct spool *sp, struct page_failures *f,
	    char *err, size_t len);
int	 spool_page_matching(struct spool *sp, const struct page_query *q,
	    char *ids, int max, char *err, size_t len);
/* st/name's mtime in µs, to the ms as `chute ls` reads it; -1: gone meanwhile. */
int64_t	 spool_page_mtime(struct spool *sp, int st, const char *name,
	    long long *size);

#endif
