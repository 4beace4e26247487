/*
 * web_live.c: the main thread's reading of the overview.  The store's
 * source (struct top_source, queue/view.h: a spool's inotify, a queue's
 * LISTEN) keeps `chute top`'s model current; this loop polls its
 * descriptor and the signalfd, updates the model when the source says it
 * is due but at most once per WEB_EVENT_MS, and publishes each new
 * reading to every page and stream at once: those wait on w->cv.  The
 * hour of throughput is the model's per-second counts folded into
 * minutes as they complete.
 */
#include <sys/signalfd.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "queue/view.h"
#include "chute-web/web.h"

#define MINUTE_MS	60000

/* ---- the hour ---- */

void
web_hour_add(struct web_hour *h, int st, msec_t when, unsigned n)
{
	int64_t m = when / MINUTE_MS;
	size_t i = (size_t)(m % WEB_HOUR);

	if (h->minute[i] > m)		/* a minute that has left the window */
		return;
	if (h->minute[i] != m) {
		h->minute[i] = m;
		h->done[i] = h->failed[i] = 0;
	}
	if (st == ST_DONE)
		h->done[i] += n;
	else
		h->failed[i] += n;
}

/*
 * Each second of the model's ring that is over and not yet taken goes
 * into its minute, once.  A second the model counted only in part (a
 * queue's bounded read: before rate_from) is taken as it is, and the
 * chart says so.
 */
void
web_hour_fold(struct web_hour *h, const struct top *t, msec_t now)
{
	int64_t now_s = now / 1000;

	for (size_t i = 0; i < TOP_WINDOW; i++) {
		int64_t s = t->sec[i];

		if (s <= h->folded || s >= now_s)
			continue;
		if (s < t->rate_from)
			h->part = true;
		web_hour_add(h, ST_DONE, s * 1000, t->done[i]);
		web_hour_add(h, ST_FAILED, s * 1000, t->failed[i]);
	}
	if (now_s - 1 > h->folded)
		h->folded = now_s - 1;
}

void
web_hour_fill(const struct web_hour *h, msec_t now, unsigned *done,
    unsigned *failed)
{
	int64_t m = now / MINUTE_MS;

	for (int k = 0; k < WEB_HOUR; k++) {
		int64_t want = m - (WEB_HOUR - 1) + k;
		size_t i = (size_t)(want % WEB_HOUR);
		bool here = h->minute[i] == want;

		done[k] = here ? h->done[i] : 0;
		failed[k] = here ? h->failed[i] : 0;
	}
}

/* ---- the reading ---- */

/*
 * The model as the source left it, and what the dashboard adds, for the
 * pages and the streams.  The streams are woken when it changed (at most
 * once per WEB_EVENT_MS, as the updates), and every WEB_SAFETY_MS anyway
 * for the ages they show.
 */
void
web_publish(struct web *w)
{
	struct web_overview *ov = calloc(1, sizeof(*ov));
	msec_t now = now_ms();
	bool changed;

	if (ov == NULL)
		return;
	ov->t = *w->src->t;
	ov->at = now;
	if (w->ops->oldest(w->st, &ov->t, &ov->oldest) == -1)
		ov->oldest = -1;
	web_hour_fold(&w->hour, &ov->t, now);
	web_hour_fill(&w->hour, now, ov->done, ov->failed);
	ov->hour_part = w->hour.part;
	pthread_mutex_lock(&w->mu);
	changed = memcmp(&ov->t, &w->ov.t, sizeof(ov->t)) != 0 ||
	    ov->oldest != w->ov.oldest || memcmp(ov->done, w->ov.done,
	    sizeof(ov->done)) != 0 || memcmp(ov->failed, w->ov.failed,
	    sizeof(ov->failed)) != 0;
	w->ov = *ov;
	if (changed || now - w->sent_at >= WEB_SAFETY_MS) {
		w->gen++;
		w->sent_at = now;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	free(ov);
}

/* The source's update; one that fails is said on the page and tried again. */
static void
update(struct web *w)
{
	struct top_source *src = w->src;

	if (src->update(src->arg) == 0) {
		w->ops->keys(w->st, src->t);
		if (w->trouble)
			src->t->trouble[0] = '\0';
		w->trouble = false;
		return;
	}
	if (!w->trouble)
		fprintf(stderr, "chute: web: %s: %s\n", w->target,
		    strerror(errno));
	snprintf(src->t->trouble, sizeof(src->t->trouble), "cannot read it: "
	    "%s", strerror(errno));
	w->trouble = true;
}

/* How long poll may wait: until the update is due, not sooner than allowed. */
static int
wait_ms(struct web *w, msec_t last)
{
	msec_t due = w->src->due(w->src->arg), now = mono_ms();

	if (due < last + WEB_EVENT_MS)
		due = last + WEB_EVENT_MS;
	if (due > now + WEB_SAFETY_MS)
		due = now + WEB_SAFETY_MS;
	return due > now ? (int)(due - now) : 0;
}

int
web_live_run(struct web *w, int sigfd)
{
	struct top_source *src = w->src;
	msec_t last = mono_ms();
	struct signalfd_siginfo si;

	for (;;) {
		struct pollfd p[2] = { { .fd = sigfd, .events = POLLIN },
		    { .fd = src->fd(src->arg), .events = POLLIN } };
		int ms = wait_ms(w, last);

		if (poll(p, 2, ms) == -1 && errno != EINTR)
			return EX_SOFTWARE;
		if ((p[0].revents & POLLIN) && read(sigfd, &si, sizeof(si)) ==
		    (ssize_t)sizeof(si))
			return 0;
		if (p[1].fd != -1 && (p[1].revents & (POLLIN | POLLERR |
		    POLLHUP)) && src->input(src->arg) == -1)
			update(w);	/* says why, and reads it all again */
		if (wait_ms(w, last) == 0) {
			update(w);
			last = mono_ms();
			web_publish(w);
		}
	}
}
