/*
 * pg_top_source.c: a queue as a live view's source (struct top_source of
 * queue/view.h), for `chute top URL` (src/top/cmd_top.c) and `chute web URL`.
 * What it shows is read with pg_view.c, again at most once per
 * TOP_PG_COALESCE_MS after the notifications that say the queue changed
 * (LISTEN: submits, cancels, retries, pauses, the workers' claims and
 * outcomes), and every TOP_PG_PERIOD_MS for what only time changes (a
 * worker gone past its lease); between two reads times run on by the
 * local clock.  And never sooner than TOP_PG_SPACING times as long as the
 * last read took: a view costs the server at most a twentieth of one
 * backend's time, however big and busy the queue (fleet.md, "Watching a
 * queue").  A lost server is said in the model (its trouble line) and
 * connected to again with a growing delay, and no call waits longer than
 * TOP_PG_WAIT_MS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/view.h"
#include "queue/pg/pg.h"
#include "queue/pg/pg_view.h"
#include "queue/pg/store_pg.h"

#define TOP_PG_COALESCE_MS	500	/* a refresh at most this often after news */
#define TOP_PG_PERIOD_MS	5000	/* ... and this often without */
#define TOP_PG_WAIT_MS		3000	/* a call of the view's waits no longer */
#define TOP_PG_SPACING		20	/* reads this many times as long apart, at least */

_Static_assert(TOP_RUN_MAX >= TOP_FAIL_MAX, "jobs[] holds either list");

struct pgtop {
	struct top	 t;
	struct pg	 pg;
	struct pg	*home;		/* the store's, given back at the end */
	bool		 up;
	bool		 told;		/* news since the last refresh */
	msec_t		 refreshed;	/* mono_ms() of the last refresh */
	msec_t		 took;		/* ... and how long its reads took */
	msec_t		 retry_at, delay;	/* the next connect, while down */
	char		 lost_at[16];	/* when the connection went (HH:MM:SS) */
	struct pgv_job	 jobs[TOP_RUN_MAX];
	struct pgv_worker workers[TOP_WORKER_MAX];
};

/* ---- the model, from pg_view's answers ---- */

static void
take_counts(struct top *t, const struct pgv_counts *c)
{
	static const enum top_kind kinds[] = {
		[PGV_EXACT] = TOP_EXACT, [PGV_ATLEAST] = TOP_ATLEAST,
		[PGV_ABOUT] = TOP_ABOUT,
	};

	for (int st = ST_FIRST; st < ST_END; st++) {
		t->count[st] = c->n[st];
		t->kind[st] = kinds[c->kind[st]];
	}
}

/* Durations by the server's clock become instants of ours. */
static void
take_job(struct top_job *j, const struct pgv_job *v, msec_t now, bool running)
{
	memset(j, 0, sizeof(*j));
	strlcpy(j->id, v->id, sizeof(j->id));
	strlcpy(j->worker, v->worker, sizeof(j->worker));
	strlcpy(j->reason, v->last, sizeof(j->reason));
	j->attempts = v->attempts;
	j->since = v->elapsed >= 0 ? now - v->elapsed : 0;
	j->lease_until = running ? now + v->lease_left : 0;
}

static void
take_worker(struct top_worker *w, const struct pgv_worker *v, msec_t now)
{
	memset(w, 0, sizeof(*w));
	strlcpy(w->name, v->worker, sizeof(w->name));
	strlcpy(w->version, v->version, sizeof(w->version));
	w->pid = v->pid;
	w->slots = v->slots;
	w->running = v->running;
	w->started = now - v->started_ago;
	w->seen = now - v->seen_ago;
	w->alive = v->alive;
	w->stopped = v->stopped;
}

/* The seconds pgv_rate counted, as the model's ring keyed by our clock. */
static void
take_rate(struct top *t, const struct pgv_rate *r, msec_t now)
{
	int64_t s = now / 1000;

	for (int i = 0; i < TOP_WINDOW; i++) {
		size_t k = (size_t)((s - i) % TOP_WINDOW);

		t->sec[k] = s - i;
		t->done[k] = i < r->seconds ? r->done[i] : 0;
		t->failed[k] = i < r->seconds ? r->failed[i] : 0;
	}
	t->rate_from = r->seconds < TOP_WINDOW ? s - r->seconds + 1 : 0;
}

static int
read_jobs(struct pgtop *q, msec_t now)
{
	int n;

	if ((n = pgv_running(&q->pg, q->jobs, TOP_RUN_MAX)) == -1)
		return -1;
	for (int i = 0; i < n; i++)
		take_job(&q->t.run[i], &q->jobs[i], now, true);
	q->t.nrun = (size_t)n;
	if ((n = pgv_failures(&q->pg, q->jobs, TOP_FAIL_MAX)) == -1)
		return -1;
	for (int i = 0; i < n; i++)
		take_job(&q->t.fail[i], &q->jobs[i], now, false);
	q->t.nfail = (size_t)n;
	return 0;
}

/* Every part of the view, one statement each: 0, or -1 (pg_error). */
static int
read_all(struct pgtop *q)
{
	struct pgv_counts c;
	struct pgv_rate r;
	msec_t now = now_ms();
	int n;

	if (pgv_counts(&q->pg, &c) == -1 || read_jobs(q, now) == -1 ||
	    pgv_rate(&q->pg, &r) == -1 || (n = pgv_workers(&q->pg, q->workers,
	    TOP_WORKER_MAX, &q->t.workers_alive, &q->t.workers_all)) == -1 ||
	    pgv_paused(&q->pg, &q->t.paused, q->t.paused_by,
	    sizeof(q->t.paused_by)) == -1)
		return -1;
	take_counts(&q->t, &c);
	take_rate(&q->t, &r, now);
	for (int i = 0; i < n; i++)
		take_worker(&q->t.worker[i], &q->workers[i], now);
	q->t.nworker = (size_t)n;
	return 0;
}

/* ---- the connection, lost and made again ---- */

/* Why the last call failed, in the view's words. */
static const char *
why(struct pgtop *q)
{
	return q->pg.late ? "no reply within 3s" : pg_error(&q->pg);
}

/* Lost: said on the screen, tried again after a growing delay. */
static void
down(struct pgtop *q, const char *what)
{
	time_t now = time(NULL);
	struct tm tm;

	if (q->up) {
		strftime(q->lost_at, sizeof(q->lost_at), "%H:%M:%S",
		    localtime_r(&now, &tm));
		q->delay = 0;
	}
	snprintf(q->t.trouble, sizeof(q->t.trouble), "lost the server at %s, "
	    "connecting again (%s: %s)", q->lost_at, what, why(q));
	pg_close(&q->pg);
	q->up = false;
	q->delay = q->delay == 0 ? PG_RECONNECT_MIN_MS : q->delay * 2;
	if (q->delay > PG_RECONNECT_MAX_MS)
		q->delay = PG_RECONNECT_MAX_MS;
	q->retry_at = mono_ms() + q->delay;
}

/*
 * libpq prints the server's notices on stderr, the screen's terminal: a
 * server going away says so while the connection is idle, and the screen
 * would scroll.  The loss is seen (pgv_notified) and said on the screen.
 */
static void
quiet(void *arg, const char *msg)
{
}

/* Connect, check the schema, LISTEN: 0, or -1 after down(). */
static int
connect_again(struct pgtop *q)
{
	int v;

	if (pg_connect(&q->pg, false, 0) == -1) {
		down(q, "connect");
		return -1;
	}
	PQsetNoticeProcessor(q->pg.conn, quiet, q);
	if ((v = pg_schema_version(&q->pg)) != PG_SCHEMA_VERSION) {
		if (v != -1)
			pg_close(&q->pg);	/* said below as "schema" */
		down(q, v == -1 ? "schema" : "not chute's schema version");
		return -1;
	}
	if (pgv_listen(&q->pg) == -1) {
		down(q, "LISTEN");
		return -1;
	}
	q->up = true;
	q->t.trouble[0] = '\0';
	return 0;
}

/* ---- the queue as the view's source ---- */

static int
src_fd(void *arg)
{
	struct pgtop *q = arg;

	return q->up ? PQsocket(q->pg.conn) : -1;
}

static int
src_input(void *arg)
{
	struct pgtop *q = arg;
	int n = pgv_notified(&q->pg);

	if (n == -1)
		down(q, "connection");
	else if (n > 0)
		q->told = true;
	return 0;
}

static msec_t
src_due(void *arg)
{
	struct pgtop *q = arg;
	msec_t wait = q->told ? TOP_PG_COALESCE_MS : TOP_PG_PERIOD_MS;

	if (!q->up)
		return q->retry_at;
	if (wait < q->took * TOP_PG_SPACING)
		wait = q->took * TOP_PG_SPACING;
	return q->refreshed + wait;
}

/*
 * Read it all again (connecting first, when down).  News that came while
 * the statements ran may be newer than what they read: another refresh
 * follows, after the usual wait.  Never ends the view.
 */
static int
src_update(void *arg)
{
	struct pgtop *q = arg;
	msec_t t0 = mono_ms();

	q->pg.deadline = t0 + TOP_PG_WAIT_MS;
	if (q->up || connect_again(q) == 0) {
		q->told = false;
		t0 = mono_ms();
		if (read_all(q) == -1)
			down(q, "read");
		else
			q->told = pgv_notified(&q->pg) > 0;
		q->took = mono_ms() - t0;
	}
	q->pg.deadline = 0;
	q->refreshed = mono_ms();
	return 0;
}

/*
 * A key's action on id: fn is pg_cancel_job or pg_retry_job, which
 * say nothing on stderr: their line is the screen's.  A lost connection
 * is said in it too, and then on the screen's trouble line.
 */
static int
act(struct pgtop *q, const char *id, const char *cmd,
    int (*fn)(struct pg *, const char *, const char *, char *, size_t),
    char *msg, size_t len)
{
	char by[64];
	int rc;

	if (!q->up) {
		snprintf(msg, len, "%s: not %s: the server is not connected",
		    vis_id(id), strcmp(cmd, "cancel") == 0 ? "cancelled" :
		    "retried");
		return -1;
	}
	snprintf(by, sizeof(by), "`chute top` (uid %ld)", (long)getuid());
	q->pg.deadline = mono_ms() + TOP_PG_WAIT_MS;
	rc = fn(&q->pg, id, by, msg, len);
	q->pg.deadline = 0;
	if (rc != 0 && q->pg.late)
		snprintf(msg, len, "%s: %s: %s", vis_id(id), cmd, why(q));
	if (rc != 0 && rc != EXIT_NO && !pg_ok(&q->pg))
		down(q, cmd);
	q->told = true;		/* show what it did */
	return rc == 0 ? 0 : -1;
}

static int
src_cancel(void *arg, const char *id, char *msg, size_t len)
{
	return act(arg, id, "cancel", pg_cancel_job, msg, len);
}

static int
src_retry(void *arg, const char *id, char *msg, size_t len)
{
	return act(arg, id, "retry", pg_retry_job, msg, len);
}

struct pgtop *
pgtop_new(const struct pg *pg)
{
	struct pgtop *q = calloc(1, sizeof(*q));	/* some 80 KiB */

	if (q == NULL)
		return NULL;
	q->pg = *pg;
	snprintf(q->t.title, sizeof(q->t.title), "%s --queue %s", q->pg.name,
	    q->pg.queue);
	q->t.claims = true;
	return q;
}

int
pgtop_start(struct pgtop *q, struct top_source *src)
{
	*src = (struct top_source){ .t = &q->t, .arg = q, .fd = src_fd,
	    .input = src_input, .due = src_due, .update = src_update,
	    .cancel = src_cancel, .retry = src_retry };
	if (pgv_listen(&q->pg) == -1)
		return pg_fail(&q->pg, "LISTEN");
	if (read_all(q) == -1)
		return pg_fail(&q->pg, "top");
	PQsetNoticeProcessor(q->pg.conn, quiet, q);
	q->up = true;
	q->refreshed = mono_ms();
	return 0;
}

int
pgtop_read(struct pgtop *q)
{
	return read_all(q);
}

struct top *
pgtop_model(struct pgtop *q)
{
	return &q->t;
}

struct pg *
pgtop_pg(struct pgtop *q)
{
	return &q->pg;
}

void
pgtop_set_home(struct pgtop *q, struct pg *home)
{
	q->home = home;
}

struct pg *
pgtop_home(struct pgtop *q)
{
	return q->home;
}

void
pgtop_free(struct pgtop *q)
{
	free(q);
}
