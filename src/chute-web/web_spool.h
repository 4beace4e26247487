/*
 * web_spool.h: the spool as the dashboard's store: what web_spool.c (the
 * live overview, actions, metrics) and web_spool_read.c (pages of jobs, a
 * job, failures by reason) share.
 */
#ifndef WEB_SPOOL_H
#define WEB_SPOOL_H

#include <pthread.h>
#include <stdbool.h>

#include "queue/view.h"
#include "queue/spool/top_spool.h"
#include "store/spool.h"
#include "store/watch.h"
#include "chute-web/web.h"

struct wspool {
	struct spool	 sp;
	const char	*path;		/* as given: the metrics' label */
	/* The main thread's: the live model, chute top's (top_spool.c). */
	struct top_spool ts;
	struct top_source src;
	msec_t		 oldest;	/* new/'s oldest mtime; 0 none */
	long long	 old_count;	/* new/'s count when it was read */
	long long	 old_seen;	/* ... and the names read */
	msec_t		 old_read;	/* ... and when (mono_ms()) */
	/* Actions, one at a time: they mark the spool's directories dirty. */
	pthread_mutex_t	 act;
};

/* web_spool_read.c: the ops of struct web_store_ops that read pages. */
int	 wsp_list(void *st, const struct page_query *q, struct page_list *l,
	    char *err, size_t len);
int	 wsp_job(void *st, const char *id, struct page_job *j, char *err,
	    size_t len);
int	 wsp_failures(void *st, struct page_failures *f, char *err, size_t len);
int	 wsp_matching(void *st, const struct page_query *q, char *ids, int max,
	    char *err, size_t len);
/* st/name's mtime in µs, to the ms as `chute ls` reads it; -1: gone meanwhile. */
int64_t	 wsp_mtime(struct wspool *s, int st, const char *name, long long *size);

#endif
