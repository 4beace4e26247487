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
#include "queue/store.h"
#include "chute-web/web.h"

struct wspool {
	struct spool	 sp;
	const char	*path;		/* as given: the metrics' label */
	struct store	 store;		/* sp as a store: pages, metrics, actions */
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

#endif
