/*
 * web_store.c: the dashboard's store, whichever it is, over the store
 * interface (queue/store.h): a spool or a queue opened twice, one for the
 * overview's live source (the main thread's: `chute top`'s source, on a
 * connection of its own), one for the pages, /metrics and the actions,
 * which the connections' threads call in turn when the store has a
 * connection (page_begin: made again when lost, every call bounded).
 * The actions are the subcommands': cancel and retry as `chute cancel`
 * and `chute retry` do them, pause and resume as `chute pause` and
 * `chute resume` say them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/listing.h"
#include "queue/page.h"
#include "queue/store.h"
#include "queue/view.h"
#include "chute-web/web.h"

#define WAIT_MS		3000	/* a page's calls wait this long, at most */

struct wstore {
	pthread_mutex_t	 mu;	/* the pages' store, one call at a time when it has a connection; the actions always */
	bool		 serial;	/* it has: page_begin */
	struct store	 pages;		/* the pages, /metrics, the actions */
	struct store	 live;		/* the main thread's: the live model */
	void		*h;		/* live's top_open */
	struct top_source src;
	msec_t		 keys_at;	/* live's keys' next reading (monotonic) */
};

int
web_store_act(struct store *s, enum web_act a, const char *id,
    const char *by, char *msg, size_t len)
{
	bool on = a == WA_PAUSE, changed;
	int rc;

	*msg = '\0';
	if (a == WA_CANCEL)
		return s->ops->cancel(s, id, by, msg, len);
	if (a == WA_RETRY)
		return s->ops->retry(s, id, by, msg, len);
	if ((rc = s->ops->set_pause(s, on, by, &changed, msg, len)) != 0)
		return rc;
	snprintf(msg, len, "%s %s", s->ops->title(s), !changed ? (on ?
	    "already paused" : "not paused") : on ? "paused" : "resumed");
	return 0;
}

/* ---- the pages' store, taken in turn ---- */

static int
take(struct wstore *w, char *err, size_t len)
{
	if (!w->serial)
		return 0;
	pthread_mutex_lock(&w->mu);
	if (w->pages.ops->page_begin(&w->pages, WAIT_MS, err, len) == -1) {
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	return 0;
}

static void
give(struct wstore *w)
{
	if (!w->serial)
		return;
	w->pages.ops->page_end(&w->pages);
	pthread_mutex_unlock(&w->mu);
}

/* ---- the main thread's ---- */

static struct top_source *
ws_source(void *st)
{
	return &((struct wstore *)st)->src;
}

static int
ws_oldest(void *st, const struct top *t, msec_t *at)
{
	struct wstore *w = st;

	return w->live.ops->top_oldest(&w->live, w->h, t, at);
}

static void
ws_keys(void *st, struct top *t)
{
	struct wstore *w = st;

	top_keys_read(&w->live, t, &w->keys_at);
}

/* ---- any thread's ---- */

static int
ws_list(void *st, const struct page_query *q, struct page_list *l,
    char *err, size_t len)
{
	struct wstore *w = st;
	int rc;

	if (take(w, err, len) == -1)
		return -1;
	rc = w->pages.ops->page(&w->pages, q, l, err, len);
	give(w);
	return rc;
}

static int
ws_job(void *st, const char *id, struct page_job *j, char *err, size_t len)
{
	struct wstore *w = st;
	struct store_job *sj = NULL;
	int rc;

	memset(j, 0, sizeof(*j));
	strlcpy(j->id, id, sizeof(j->id));
	j->logsize = -1;
	if (take(w, err, len) == -1)
		return -1;
	rc = w->pages.ops->page_job(&w->pages, id, j, err, len);
	/* What it waits for: status's words (the store's job), or none. */
	if (rc == 0 && (sj = calloc(1, sizeof(*sj))) != NULL &&
	    w->pages.ops->job(&w->pages, id, sj) == 0)
		strlcpy(j->after, sj->after, sizeof(j->after));
	give(w);
	free(sj);
	return rc;
}

static int
ws_failures(void *st, struct page_failures *f, char *err, size_t len)
{
	struct wstore *w = st;
	int rc;

	memset(f, 0, sizeof(*f));
	if (take(w, err, len) == -1)
		return -1;
	rc = w->pages.ops->page_failures(&w->pages, f, err, len);
	give(w);
	return rc;
}

static int
ws_matching(void *st, const struct page_query *q, char *ids, int max,
    char *err, size_t len)
{
	struct wstore *w = st;
	int rc;

	if (take(w, err, len) == -1)
		return -1;
	rc = w->pages.ops->page_matching(&w->pages, q, ids, max, err, len);
	give(w);
	return rc;
}

static int
ws_metrics(void *st, FILE *f)
{
	struct wstore *w = st;
	char err[512];
	int rc;

	if (take(w, err, sizeof(err)) == -1) {
		fprintf(stderr, "chute: web: %s\n", err);
		return -1;
	}
	rc = cmd_stats_prometheus(f, &w->pages);
	give(w);
	return rc == 0 ? 0 : -1;
}

/* One at a time: an action changes what the pages read. */
static int
ws_act(void *st, enum web_act a, const char *id, const char *by, char *msg,
    size_t len)
{
	struct wstore *w = st;
	int rc;

	*msg = '\0';
	if (take(w, msg, len) == -1)
		return EX_TEMPFAIL;
	if (!w->serial)
		pthread_mutex_lock(&w->mu);
	rc = web_store_act(&w->pages, a, id, by, msg, len);
	if (rc != 0 && (a == WA_PAUSE || a == WA_RESUME))
		fprintf(stderr, "chute: %s\n", msg);	/* the journal's too */
	if (!w->serial)
		pthread_mutex_unlock(&w->mu);
	give(w);
	return rc;
}

static int
ws_retention(void *st, struct retention *r)
{
	struct wstore *w = st;
	char err[512];
	int rc;

	if (take(w, err, sizeof(err)) == -1)
		return -1;
	rc = w->pages.ops->retention(&w->pages, r);
	give(w);
	return rc == 0 ? 0 : -1;
}

static void
ws_close(void *st)
{
	struct wstore *w = st;

	if (w->h != NULL)
		w->live.ops->top_close(&w->live, w->h);
	w->live.ops->close(&w->live);
	w->pages.ops->close(&w->pages);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

static const struct web_store_ops ws_ops[2] = {
	{ .label = "spool", .source = ws_source, .oldest = ws_oldest,
	    .keys = ws_keys,
	    .list = ws_list, .job = ws_job, .failures = ws_failures,
	    .metrics = ws_metrics, .matching = ws_matching, .act = ws_act,
	    .close = ws_close, .retention = ws_retention },
	{ .label = "queue", .source = ws_source, .oldest = ws_oldest,
	    .keys = ws_keys,
	    .list = ws_list, .job = ws_job, .failures = ws_failures,
	    .metrics = ws_metrics, .matching = ws_matching, .act = ws_act,
	    .close = ws_close, .retention = ws_retention },
};

/* ---- open ---- */

static void
hour_add(void *arg, int st, msec_t when, unsigned n)
{
	web_hour_add(arg, st, when, n);
}

int
web_store_open(const struct store_ops *ops, const char *target,
    const char *queue, struct web_hour *h, const struct web_store_ops **wops,
    void **st, const char **name)
{
	struct wstore *w = calloc(1, sizeof(*w));
	msec_t since = now_ms(), at = since;
	bool part = false;
	int rc;

	if (w == NULL) {
		fprintf(stderr, "chute: out of memory\n");
		return EX_SOFTWARE;
	}
	pthread_mutex_init(&w->mu, NULL);
	w->serial = ops->page_begin != NULL;
	w->pages = (struct store){ .ops = ops, .target = target };
	w->live = (struct store){ .ops = ops, .target = target };
	/* The pages' store, the hour before since, then the live source's. */
	if ((rc = ops->open(&w->pages, target, queue)) == 0 &&
	    (rc = ops->hour(&w->pages, since, hour_add, h, &at, &part)) == 0 &&
	    (rc = ops->open(&w->live, target, queue)) == 0)
		rc = ops->top_open(&w->live, true, since, &w->src, &w->h);
	if (rc != 0) {
		ws_close(w);
		return rc;
	}
	h->folded = at / 1000;
	h->part = part;
	*wops = &ws_ops[ops->uri];
	*st = w;
	*name = ops->name(&w->pages);
	return 0;
}
