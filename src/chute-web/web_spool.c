/*
 * web_spool.c: a spool as the dashboard's store.  Its live overview is
 * `chute top`'s reading of the spool (top_spool.c: inotify marks
 * directories dirty, a rescan counts them), plus the age of the oldest
 * queued job and the jobs finished per minute over the last hour; its
 * actions are `chute cancel`'s and `chute retry`'s own functions.
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
#include "cli/top.h"
#include "store/lock.h"
#include "store/spool.h"
#include "store/watch.h"
#include "chute-web/web.h"
#include "chute-web/web_spool.h"

#define MINUTE_MS	60000

/* ---- throughput: one bucket per minute of the last WEB_HOUR ---- */

static void
hour_add(struct wspool *s, int st, msec_t when)
{
	int64_t m = when / MINUTE_MS;
	size_t i = (size_t)(m % WEB_HOUR);

	if (s->minute[i] > m)		/* a minute that has left the window */
		return;
	if (s->minute[i] != m) {
		s->minute[i] = m;
		s->done[i] = s->failed[i] = 0;
	}
	if (st == ST_DONE)
		s->done[i]++;
	else
		s->failed[i]++;
}

/* The last WEB_HOUR minutes up to now's, oldest first. */
static void
hour_fill(const struct wspool *s, msec_t now, unsigned *done, unsigned *failed)
{
	int64_t m = now / MINUTE_MS;

	for (int k = 0; k < WEB_HOUR; k++) {
		int64_t want = m - (WEB_HOUR - 1) + k;
		size_t i = (size_t)(want % WEB_HOUR);
		bool here = s->minute[i] == want;

		done[k] = here ? s->done[i] : 0;
		failed[k] = here ? s->failed[i] : 0;
	}
}

struct seed {
	struct wspool	*s;
	int		 st;
	msec_t		 since;
};

/*
 * A job in done/ or failed/ got there at its mtime: those of the hour
 * before since (when the watch began; the events count what came after).
 */
static int
seed_one(void *arg, const char *name)
{
	struct seed *p = arg;
	int64_t us = wsp_mtime(p->s, p->st, name, NULL);
	msec_t ms = us / 1000;

	if (us != -1 && ms < p->since && p->since - ms < WEB_HOUR * MINUTE_MS)
		hour_add(p->s, p->st, ms);
	return 0;
}

static int
hour_seed(struct wspool *s, msec_t since)
{
	struct seed p = { .s = s, .since = since };

	for (p.st = ST_DONE; p.st <= ST_FAILED; p.st++)
		if (spool_scan(&s->sp, p.st, seed_one, &p) == -1)
			return -1;
	return 0;
}

/* ---- the oldest queued job: a stat of each in new/, when new/ changed ---- */

static int
oldest_one(void *arg, const char *name)
{
	struct wspool *s = arg;
	int64_t us = wsp_mtime(s, ST_NEW, name, NULL);

	if (us != -1 && (s->oldest == 0 || us / 1000 < s->oldest))
		s->oldest = us / 1000;
	return 0;
}

static int
read_oldest(struct wspool *s)
{
	if (s->old_known)
		return 0;
	s->oldest = 0;
	if (spool_scan(&s->sp, ST_NEW, oldest_one, s) == -1)
		return -1;
	s->old_known = true;
	return 0;
}

/* ---- the main thread's: events, and the overview ---- */

static void
on_event(void *arg, const struct watch_event *ev)
{
	struct wspool *s = arg;

	top_event(&s->t, ev);
	s->dirty = true;
	if (ev->kind == W_OVERFLOW || ev->state == ST_NEW ||
	    ev->state == ST_NONE)
		s->old_known = false;
	if (ev->kind == W_ARRIVED &&
	    (ev->state == ST_DONE || ev->state == ST_FAILED))
		hour_add(s, ev->state, now_ms());
}

static int
wsp_watch_fd(void *st)
{
	return watch_fd(((struct wspool *)st)->w);
}

static int
wsp_wake(void *st, bool *dirty)
{
	struct wspool *s = st;

	s->dirty = false;
	if (watch_read(s->w, on_event, s) == -1)
		return -1;
	*dirty = s->dirty;
	return 0;
}

static void
owner_words(pid_t owner, char *buf, size_t len)
{
	if (owner > 0)
		snprintf(buf, len, "owner pid %ld", (long)owner);
	else
		snprintf(buf, len, "%s", owner == 0 ? "no owner" :
		    "owner pid unknown (lock held)");
}

static void
fill_lists(const struct top *t, struct web_overview *ov)
{
	for (size_t i = 0; i < t->nrun && ov->nrun < WEB_LIST; i++) {
		struct web_item *it = &ov->run[ov->nrun++];

		strlcpy(it->id, t->run[i].id, sizeof(it->id));
		it->since = t->run[i].since;
	}
	for (size_t i = 0; i < t->nfail && ov->nfail < WEB_LIST; i++) {
		struct web_item *it = &ov->fail[ov->nfail++];

		strlcpy(it->id, t->fail[i].id, sizeof(it->id));
		it->since = t->fail[i].since;
		it->attempts = t->fail[i].attempts;
		strlcpy(it->text, t->fail[i].reason, sizeof(it->text));
	}
}

static int
wsp_refresh(void *st, struct web_overview *ov)
{
	struct wspool *s = st;
	msec_t now = now_ms();

	memset(ov, 0, sizeof(*ov));
	ov->at = now;
	if (top_rescan(&s->t) == -1 || read_oldest(s) == -1) {
		snprintf(ov->error, sizeof(ov->error), "%s: %s", s->sp.path,
		    strerror(errno));
		return -1;
	}
	for (int i = ST_NEW; i <= ST_FAILED; i++)
		ov->count[i] = (long long)s->t.count[i];
	ov->running = s->t.owner != 0 ? ov->count[ST_CUR] : 0;
	ov->workers = s->t.owner != 0;
	owner_words(s->t.owner, ov->owner, sizeof(ov->owner));
	ov->oldest = s->oldest;
	ov->paused = faccessat(s->sp.root, "paused", F_OK,
	    AT_SYMLINK_NOFOLLOW) == 0;
	hour_fill(s, now, ov->done, ov->failed);
	top_rate(&s->t, now, &ov->min_done, &ov->min_failed);
	fill_lists(&s->t, ov);
	return 0;
}

/* ---- any thread's: workers, metrics, actions ---- */

static int
wsp_workers(void *st, struct web_workers *w, char *err, size_t len)
{
	struct wspool *s = st;
	pid_t owner = lock_owner(&s->sp);
	struct web_worker *o = &w->v[0];

	memset(w, 0, sizeof(*w));
	snprintf(w->note, sizeof(w->note), "A spool has one worker: the "
	    "process that holds its lock (chute run).");
	if (owner == 0)
		return 0;
	w->n = 1;
	owner_words(owner, o->name, sizeof(o->name));
	if (gethostname(o->host, sizeof(o->host)) == -1)
		o->host[0] = '\0';
	o->pid = owner > 0 ? owner : 0;
	o->slots = -1;
	o->running = (int)s->t.count[ST_CUR];
	o->started_ago = o->seen_ago = -1;
	o->alive = true;
	return 0;
}

static int
wsp_metrics(void *st, FILE *f)
{
	struct wspool *s = st;

	return stats_spool_prometheus(f, &s->sp, s->path) == 0 ? 0 : -1;
}

static int
wsp_act(void *st, enum web_act a, const char *id, const char *by, char *msg,
    size_t len)
{
	struct wspool *s = st;
	int rc;

	pthread_mutex_lock(&s->act);
	switch (a) {
	case WA_CANCEL:
		rc = cancel_job(&s->sp, id, by, msg, len);
		break;
	case WA_RETRY:
		rc = retry_job(&s->sp, id, by, msg, len);
		break;
	default:
		snprintf(msg, len, "pause and resume are not in this build");
		rc = EX_UNAVAILABLE;
		break;
	}
	pthread_mutex_unlock(&s->act);
	return rc;
}

static void
wsp_close(void *st)
{
	struct wspool *s = st;

	watch_close(s->w);
	spool_close(&s->sp);
	pthread_mutex_destroy(&s->act);
	free(s);
}

static const struct web_store_ops wsp_ops = {
	.label = "spool",
	.watch_fd = wsp_watch_fd,
	.wake = wsp_wake,
	.refresh = wsp_refresh,
	.list = wsp_list,
	.job = wsp_job,
	.failures = wsp_failures,
	.workers = wsp_workers,
	.metrics = wsp_metrics,
	.matching = wsp_matching,
	.act = wsp_act,
	.close = wsp_close,
};

int
web_spool_open(const char *path, const struct web_store_ops **ops, void **st)
{
	struct wspool *s = calloc(1, sizeof(*s));
	msec_t since = now_ms();
	int rc;

	if (s == NULL) {
		fprintf(stderr, "chute: out of memory\n");
		return EX_SOFTWARE;
	}
	if ((rc = open_spool_or_exit(&s->sp, path)) != 0) {
		free(s);
		return rc;
	}
	s->path = path;
	pthread_mutex_init(&s->act, NULL);
	/* The watch first, so that nothing after the first look is missed. */
	if ((s->w = top_watch_open(&s->sp)) == NULL ||
	    top_init(&s->t, &s->sp, since) == -1 || hour_seed(s, since) == -1) {
		fprintf(stderr, "chute: %s: %s%s\n", path, s->w == NULL ?
		    "inotify: " : "", strerror(errno));
		wsp_close(s);
		return EX_IOERR;
	}
	*ops = &wsp_ops;
	*st = s;
	return 0;
}
