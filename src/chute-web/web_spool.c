/*
 * web_spool.c: a spool as the dashboard's store.  Its live overview is
 * `chute top`'s reading of the spool (top_spool.c: inotify marks
 * directories dirty, a rescan counts them; the owner and the pause), plus
 * the age of the oldest queued job and, from the mtimes in done/ and
 * failed/, the hour before it started; its actions are those of `chute
 * cancel`, `chute retry`, `chute pause` and `chute resume`.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/view.h"
#include "queue/spool/top_spool.h"
#include "store/pause.h"
#include "store/spool.h"
#include "store/watch.h"
#include "queue/spool/store_spool.h"
#include "queue/store.h"
#include "chute-web/web.h"
#include "chute-web/web_spool.h"

#define OLDEST_MS	5000	/* new/ is read for its oldest job this often, at most */

/* ---- the hour before the start, from the mtimes ---- */

struct seed {
	struct wspool	*s;
	struct web_hour	*h;
	int		 st;
	msec_t		 since;
};

/*
 * A job in a terminal state (done/, failed/) got there at its mtime:
 * those of the hour before since (when the watch began; the model counts
 * what came after).
 */
static int
seed_one(void *arg, const char *name)
{
	struct seed *p = arg;
	int64_t us = spool_page_mtime(&p->s->sp, p->st, name, NULL);
	msec_t ms = us / 1000;

	if (us != -1 && ms < p->since && p->since - ms < WEB_HOUR * 60000)
		web_hour_add(p->h, p->st, ms, 1);
	return 0;
}

static int
hour_seed(struct wspool *s, struct web_hour *h, msec_t since)
{
	struct seed p = { .s = s, .h = h, .since = since };

	h->folded = since / 1000;
	for (p.st = ST_FIRST; p.st < ST_END; p.st++)
		if (state_terminal(p.st) &&
		    spool_scan(&s->sp, p.st, seed_one, &p) == -1)
			return -1;
	return 0;
}

/* ---- the main thread's: the source, the oldest queued job ---- */

static struct top_source *
wsp_source(void *st)
{
	return &((struct wspool *)st)->src;
}

/* The oldest mtime so far; the pass stops after WEB_SCAN_MAX names. */
static int
oldest_one(void *arg, const char *name)
{
	struct wspool *s = arg;
	int64_t us = spool_page_mtime(&s->sp, ST_NEW, name, NULL);

	if (us != -1 && (s->oldest == 0 || us / 1000 < s->oldest))
		s->oldest = us / 1000;
	return ++s->old_seen >= WEB_SCAN_MAX;
}

/*
 * A stat of each job in new/, as `chute stats` makes: only when new/'s
 * count changed, at most every OLDEST_MS, and of WEB_SCAN_MAX names at
 * most, so that a busy spool's dashboard does not stat a long queue
 * every second (past that many, the oldest of those read is shown).
 */
static int
wsp_oldest(void *st, const struct top *t, msec_t *at)
{
	struct wspool *s = st;

	if (t->count[ST_NEW] != s->old_count &&
	    mono_ms() - s->old_read >= OLDEST_MS) {
		s->oldest = 0;
		s->old_seen = 0;
		if (spool_scan(&s->sp, ST_NEW, oldest_one, s) == -1)
			return -1;
		s->old_count = t->count[ST_NEW];
		s->old_read = mono_ms();
	}
	*at = s->oldest;
	return 0;
}

/* ---- any thread's: metrics, actions ---- */

static int
wsp_metrics(void *st, FILE *f)
{
	struct wspool *s = st;

	return cmd_stats_prometheus(f, &s->store) == 0 ? 0 : -1;
}

static int
wsp_act(void *st, enum web_act a, const char *id, const char *by, char *msg,
    size_t len)
{
	struct wspool *s = st;
	int rc;

	pthread_mutex_lock(&s->act);
	rc = web_store_act(&s->store, a, id, by, msg, len);
	pthread_mutex_unlock(&s->act);
	return rc;
}

/* ---- the pages: the spool store's (store_spool_page.c) ---- */

static int
wsp_list(void *st, const struct page_query *q, struct page_list *l,
    char *err, size_t len)
{
	struct wspool *s = st;

	return s->store.ops->page(&s->store, q, l, err, len);
}

static int
wsp_job(void *st, const char *id, struct page_job *j, char *err, size_t len)
{
	struct wspool *s = st;

	return s->store.ops->page_job(&s->store, id, j, err, len);
}

static int
wsp_failures(void *st, struct page_failures *f, char *err, size_t len)
{
	struct wspool *s = st;

	return s->store.ops->page_failures(&s->store, f, err, len);
}

static int
wsp_matching(void *st, const struct page_query *q, char *ids, int max,
    char *err, size_t len)
{
	struct wspool *s = st;

	return s->store.ops->page_matching(&s->store, q, ids, max, err, len);
}

static void
wsp_close(void *st)
{
	struct wspool *s = st;

	watch_close(s->ts.w);
	spool_close(&s->sp);
	pthread_mutex_destroy(&s->act);
	free(s);
}

static const struct web_store_ops wsp_ops = {
	.label = "spool",
	.source = wsp_source,
	.oldest = wsp_oldest,
	.list = wsp_list,
	.job = wsp_job,
	.failures = wsp_failures,
	.metrics = wsp_metrics,
	.matching = wsp_matching,
	.act = wsp_act,
	.close = wsp_close,
};

int
web_spool_open(const char *path, struct web_hour *h,
    const struct web_store_ops **ops, void **st)
{
	struct wspool *s = calloc(1, sizeof(*s));
	struct watch *w = NULL;
	msec_t since = now_ms();
	int rc;

	if (s == NULL) {
		fprintf(stderr, "chute: out of memory\n");
		return EX_SOFTWARE;
	}
	if ((rc = spool_open_or_say(&s->sp, path)) != 0) {
		free(s);
		return rc;
	}
	s->path = path;
	s->store = (struct store){ .ops = &store_spool_ops, .target = path,
	    .be = &s->sp };
	s->old_count = -1;
	pthread_mutex_init(&s->act, NULL);
	/* The watch first, so that nothing after the first look is missed. */
	if ((w = top_watch_open(&s->sp)) == NULL ||
	    top_init(&s->ts, &s->sp, since) == -1 ||
	    hour_seed(s, h, since) == -1) {
		fprintf(stderr, "chute: %s: %s%s\n", path, w == NULL ?
		    "inotify: " : "", strerror(errno));
		s->ts.w = w;
		wsp_close(s);
		return EX_IOERR;
	}
	top_spool_source(&s->ts, w, &s->src);
	*ops = &wsp_ops;
	*st = s;
	return 0;
}
