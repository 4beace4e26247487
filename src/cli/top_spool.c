/*
 * top_spool.c: what `chute top` reads from a spool (top.h).  An inotify
 * event only marks its directory dirty and counts a finished job; a
 * rescan, at most once per TOP_RESCAN_MS however many events came, counts
 * the names in the dirty directories, stats cur/ and the failures kept,
 * and reads all of failed/ again only when a kept failure left it or
 * events were lost.
 */
#include <sys/inotify.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/spool.h"
#include "store/state.h"
#include "store/watch.h"
#include "cli/top.h"

/* One pass over a state directory, for spool_scan's callback. */
struct pass {
	struct top	*t;
	int		 st;
	size_t		 n;		/* names seen */
	struct top_job	*v;		/* NULL: count (and seed) only */
	size_t		*nv, max;
	bool		 newest_first;
	bool		 seed;		/* count recent ones as finished */
	msec_t		 now;
};

static msec_t
ms_of(const struct timespec *ts)
{
	return (msec_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* ---- throughput: one bucket per second of the last TOP_WINDOW ---- */

void
top_finished(struct top *t, int st, msec_t when)
{
	int64_t s = when / 1000;
	size_t i = (size_t)(s % TOP_WINDOW);

	if (t->sec[i] > s)		/* a second that has left the window */
		return;
	if (t->sec[i] != s) {
		t->sec[i] = s;
		t->done[i] = t->failed[i] = 0;
	}
	if (st == ST_DONE)
		t->done[i]++;
	else
		t->failed[i]++;
}

void
top_rate(const struct top *t, msec_t now, unsigned *done, unsigned *failed)
{
	int64_t s = now / 1000;

	*done = *failed = 0;
	for (size_t i = 0; i < TOP_WINDOW; i++)
		if (t->sec[i] <= s && s - t->sec[i] < TOP_WINDOW) {
			*done += t->done[i];
			*failed += t->failed[i];
		}
}

/* ---- the kept jobs: sorted arrays of a fixed size ---- */

static void
job_remove(struct top_job *v, size_t *n, size_t i)
{
	memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
	(*n)--;
}

/* Insert j in order of since; when v is full the last one falls off. */
static void
job_insert(struct top_job *v, size_t *n, size_t max, const struct top_job *j,
    bool newest_first)
{
	size_t p = 0;

	while (p < *n && (newest_first ? v[p].since >= j->since :
	    v[p].since <= j->since))
		p++;
	if (p == max)
		return;
	if (*n == max)
		(*n)--;
	memmove(&v[p + 1], &v[p], (*n - p) * sizeof(*v));
	v[p] = *j;
	(*n)++;
}

static ssize_t
job_find(const struct top_job *v, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].id, id) == 0)
			return (ssize_t)i;
	return -1;
}

/* Attempts and last outcome, as `chute status` reads them from log/ID. */
static void
job_reason(struct top *t, struct top_job *j)
{
	struct joblog_info ji;

	if (joblog_read(t->sp, j->id, &ji) == -1)
		snprintf(ji.last, sizeof(ji.last), "log: %s", strerror(errno));
	j->attempts = ji.attempts;
	strlcpy(j->reason, ji.last[0] ? ji.last : "-", sizeof(j->reason));
}

/* ---- passes over the directories ---- */

static int
count_name(void *arg, const char *name)
{
	((struct pass *)arg)->n++;
	return 0;
}

/*
 * Stat one name.  A claim is a rename, and a rename sets the file's ctime:
 * in cur/ that is when the job started.  In done/ and failed/ the mtime is
 * when the job got there (spool-layout.md).
 */
static int
stat_name(void *arg, const char *name)
{
	struct pass *p = arg;
	struct top_job j;
	struct stat st;

	p->n++;
	if (fstatat(p->t->sp->dir[p->st], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;		/* moved on while we looked */
	j.since = ms_of(p->st == ST_CUR ? &st.st_ctim : &st.st_mtim);
	if (p->seed && j.since < p->now && p->now - j.since <
	    TOP_WINDOW * 1000)
		top_finished(p->t, p->st, j.since);
	if (p->v == NULL || strlen(name) >= sizeof(j.id))
		return 0;
	strlcpy(j.id, name, sizeof(j.id));
	j.attempts = 0;
	j.reason[0] = '\0';
	job_insert(p->v, p->nv, p->max, &j, p->newest_first);
	return 0;
}

/* One pass over state st with fn; the count goes to t->count[st]. */
static int
pass_run(struct top *t, int st, struct pass *p, int (*fn)(void *, const char *))
{
	p->t = t;
	p->st = st;
	p->n = 0;
	if (spool_scan(t->sp, st, fn, p) != 0)
		return -1;
	t->count[st] = p->n;
	return 0;
}

static int
read_running(struct top *t)
{
	struct pass p = { .v = t->run, .nv = &t->nrun, .max = TOP_RUN_MAX };

	t->nrun = 0;
	return pass_run(t, ST_CUR, &p, stat_name);
}

/*
 * All of failed/: its newest TOP_FAIL_MAX, with their reasons; with
 * seed_before > 0, the jobs that failed in the window before it count as
 * finished.
 */
static int
read_failed(struct top *t, msec_t seed_before)
{
	struct pass p = { .v = t->fail, .nv = &t->nfail, .max = TOP_FAIL_MAX,
	    .newest_first = true, .seed = seed_before > 0, .now = seed_before };

	t->nfail = 0;
	t->narrived = 0;	/* this pass sees them all */
	t->full = false;
	if (pass_run(t, ST_FAILED, &p, stat_name) == -1)
		return -1;
	for (size_t i = 0; i < t->nfail; i++)
		job_reason(t, &t->fail[i]);
	return 0;
}

/*
 * The failures kept that are still in failed/ (a retry or purge takes
 * them out), then the names that arrived since the last look.  Returns
 * true when a kept one left and failed/ holds more than are kept: only a
 * full read can tell which one is next.
 */
static bool
update_failed(struct top *t)
{
	size_t first = t->narrived > TOP_FAIL_MAX ? t->narrived - TOP_FAIL_MAX : 0;
	struct stat st;
	bool lost = false;

	for (size_t i = 0; i < t->nfail; )
		if (fstatat(t->sp->dir[ST_FAILED], t->fail[i].id, &st,
		    AT_SYMLINK_NOFOLLOW) == -1) {
			job_remove(t->fail, &t->nfail, i);
			lost = true;
		} else
			i++;
	for (size_t k = first; k < t->narrived; k++) {
		struct top_job j = { .since = 0 };
		ssize_t old;

		strlcpy(j.id, t->arrived[k % TOP_FAIL_MAX], sizeof(j.id));
		if (fstatat(t->sp->dir[ST_FAILED], j.id, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if ((old = job_find(t->fail, t->nfail, j.id)) != -1)
			job_remove(t->fail, &t->nfail, (size_t)old);
		j.since = ms_of(&st.st_mtim);
		job_reason(t, &j);
		job_insert(t->fail, &t->nfail, TOP_FAIL_MAX, &j, true);
	}
	t->narrived = 0;
	return lost && t->count[ST_FAILED] > t->nfail;
}

/* ---- the interface ---- */

/*
 * watch.c watches what the owner needs to see; the view needs every
 * arrival and departure: claims into cur/, retries and purges out of
 * failed/ and done/.  IN_MASK_ADD on the same descriptor widens a watch
 * and keeps its watch descriptor, so watch.c still decodes the events.
 */
static int
widen_watch(struct watch *w, struct spool *sp)
{
	static const struct { int st; uint32_t mask; } more[] = {
		{ ST_NEW, IN_MOVED_FROM | IN_DELETE },
		{ ST_CUR, IN_MOVED_TO | IN_CREATE },
		{ ST_DONE, IN_MOVED_FROM | IN_DELETE },
		{ ST_FAILED, IN_MOVED_FROM | IN_DELETE },
	};

	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		char *p = spool_jobpath(sp, more[i].st, "");
		int rc;

		if (p == NULL)
			return -1;
		rc = inotify_add_watch(watch_fd(w), p, IN_MASK_ADD |
		    IN_ONLYDIR | IN_DONT_FOLLOW | more[i].mask);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

struct watch *
top_watch_open(struct spool *sp)
{
	static const int states[] = { ST_NEW, ST_CUR, ST_DEFER, ST_DONE,
	    ST_FAILED };
	struct watch *w = watch_open(sp, states, 5);
	int saved;

	if (w != NULL && widen_watch(w, sp) == -1) {
		saved = errno;
		watch_close(w);
		errno = saved;
		return NULL;
	}
	return w;
}

int
top_init(struct top *t, struct spool *sp, msec_t since)
{
	struct pass p = { .seed = true, .now = since };

	memset(t, 0, sizeof(*t));
	t->sp = sp;
	if (pass_run(t, ST_NEW, &p, count_name) == -1 ||
	    pass_run(t, ST_DEFER, &p, count_name) == -1 ||
	    pass_run(t, ST_DONE, &p, stat_name) == -1 ||
	    read_running(t) == -1 || read_failed(t, since) == -1)
		return -1;
	t->owner = lock_owner(sp);
	return 0;
}

int
top_rescan(struct top *t)
{
	static const int counted[] = { ST_NEW, ST_DEFER, ST_DONE };
	unsigned dirty = t->dirty;
	struct pass p = { .v = NULL };

	t->dirty = 0;
	for (size_t i = 0; i < sizeof(counted) / sizeof(counted[0]); i++)
		if ((dirty & 1u << counted[i]) &&
		    pass_run(t, counted[i], &p, count_name) == -1)
			return -1;
	if ((dirty & 1u << ST_CUR) && read_running(t) == -1)
		return -1;
	if (!t->full && (dirty & 1u << ST_FAILED)) {
		if (pass_run(t, ST_FAILED, &p, count_name) == -1)
			return -1;
		t->full = update_failed(t);
	}
	if (t->full && read_failed(t, 0) == -1)
		return -1;
	t->owner = lock_owner(t->sp);
	return 0;
}

void
top_event(void *arg, const struct watch_event *ev)
{
	struct top *t = arg;

	if (ev->kind == W_OVERFLOW || ev->state == ST_NONE) {
		t->dirty = TOP_ALL;
		t->full = true;
		return;
	}
	t->dirty |= 1u << ev->state;
	if (ev->kind != W_ARRIVED ||
	    (ev->state != ST_DONE && ev->state != ST_FAILED))
		return;
	top_finished(t, ev->state, now_ms());
	if (ev->state == ST_FAILED)
		strlcpy(t->arrived[t->narrived++ % TOP_FAIL_MAX], ev->name,
		    sizeof(t->arrived[0]));
}

void
top_age(msec_t ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	if (ms < 60000)
		snprintf(buf, len, "%llds", (long long)ms / 1000);
	else
		dur_format(ms / 1000 * 1000, buf, len);
}

int
top_cancel(struct top *t, const char *id, char *msg, size_t len)
{
	int from;

	if (state_cancel(t->sp, id, &from) == -1) {
		if (errno == ENOENT)
			snprintf(msg, len, "%s: already finished", vis_id(id));
		else
			snprintf(msg, len, "%s: cancel: %s", vis_id(id),
			    strerror(errno));
		return -1;
	}
	t->dirty = TOP_ALL;
	/* Only a cancel that won its rename leaves a note. */
	joblog_note(t->sp, id, "cancelled by `chute top` (uid %ld) in %s/",
	    (long)getuid(), state_names[from]);
	if (spool_sync(t->sp) == -1) {
		snprintf(msg, len, "%s: fsync: %s", t->sp->path,
		    strerror(errno));
		return -1;
	}
	snprintf(msg, len, "%s %s->failed", vis_id(id), state_names[from]);
	return 0;
}

int
top_retry(struct top *t, const char *id, char *msg, size_t len)
{
	int st = spool_locate(t->sp, id, NULL);

	if (st != ST_FAILED) {
		snprintf(msg, len, "%s: not failed (%s)", vis_id(id),
		    st == ST_NONE ? "gone" : state_names[st]);
		return -1;
	}
	/* The reset goes first: a crash between leaves it failed, reset. */
	if (joblog_note(t->sp, id, "reset by `chute top` (uid %ld)",
	    (long)getuid()) == -1 && errno != ENOENT) {
		snprintf(msg, len, "%s/log/%s: %s", t->sp->path, vis_id(id),
		    strerror(errno));
		return -1;
	}
	if (state_retry(t->sp, id) == -1) {
		snprintf(msg, len, "%s: retry: %s", vis_id(id), strerror(errno));
		return -1;
	}
	t->dirty = TOP_ALL;
	if (spool_sync(t->sp) == -1) {
		snprintf(msg, len, "%s: fsync: %s", t->sp->path,
		    strerror(errno));
		return -1;
	}
	snprintf(msg, len, "%s failed->new", vis_id(id));
	return 0;
}
