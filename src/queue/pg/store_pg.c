/*
 * store_pg.c: a PostgreSQL queue as the store of the read and admin side
 * (queue/store.h): a job's row, the queue's pause (chute.queues), a job's
 * log (chute.job_logs), each a few short autocommitted statements.  The
 * connection is made at open, its schema checked.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/store.h"
#include "queue/view.h"

static struct pg *
pg_of(struct store *s)
{
	return s->be;
}

static int
sp_open(struct store *s, const char *uri, const char *queue)
{
	struct pg *pg = calloc(1, sizeof(*pg));
	int rc;

	if (pg == NULL) {
		fprintf(stderr, "chute: out of memory\n");
		return EX_SOFTWARE;
	}
	s->be = pg;
	if (pg_parse(pg, uri, queue != NULL ? queue : "default") == -1)
		return EX_USAGE;
	if (pg_connect(pg, false, 0) == -1)
		return pg_fail(pg, "connect");
	if ((rc = pg_schema_check(pg)) != 0)
		return rc;
	return 0;
}

static void
sp_close(struct store *s)
{
	struct pg *pg = pg_of(s);

	if (pg == NULL)
		return;
	pg_close(pg);
	free(pg->uri);
	free(pg);
	s->be = NULL;
}

static const char *
sp_title(struct store *s)
{
	return pg_of(s)->queue;
}

static int
sp_job(struct store *s, const char *id, struct store_job *j)
{
	static const char sql[] = "SELECT state, attempts, last,"
	    " to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
	    " (SELECT unique_key FROM chute.payloads p WHERE p.queue = $1"
	    " AND p.id = $2),"
	    /* What it waits or waited for (schema 12): as a spool's. */
	    " (SELECT array_to_string((array_agg(after_id ORDER BY after_id))"
	    "[1:3], ',') || CASE WHEN count(*) > 3 THEN ',+' || count(*) - 3"
	    " ELSE '' END FROM chute.after a WHERE a.queue = $1 AND a.id = $2"
	    " HAVING count(*) > 0) || CASE WHEN (SELECT after_run FROM"
	    " chute.live l WHERE l.queue = $1 AND l.id = $2) THEN ',run'"
	    " ELSE '' END"
	    ", priority, coalesce(key, '')"
	    " FROM chute.jobs WHERE queue = $1 AND id = $2";
	struct pg *pg = pg_of(s);
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);
	const char *why;

	memset(j, 0, sizeof(*j));
	if (r == NULL)
		return pg_fail(pg, "status");
	if (PQntuples(r) == 0 || PQnfields(r) != 8 ||
	    (j->state = state_from_name(PQgetvalue(r, 0, 0))) == ST_NONE) {
		PQclear(r);
		return EXIT_NO;
	}
	j->attempts = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	strlcpy(j->last, PQgetvalue(r, 0, 2), sizeof(j->last));
	if (j->state == ST_DEFER)
		strlcpy(j->next, PQgetvalue(r, 0, 3), sizeof(j->next));
	/* The key it was submitted with (schema 10): one of ours, checked. */
	if (!PQgetisnull(r, 0, 4) && key_valid(PQgetvalue(r, 0, 4), &why))
		strlcpy(j->unique, PQgetvalue(r, 0, 4), sizeof(j->unique));
	if (!PQgetisnull(r, 0, 5))
		vis_text(PQgetvalue(r, 0, 5), j->after, sizeof(j->after));
	j->prio = atoi(PQgetvalue(r, 0, 6));
	strlcpy(j->key, PQgetvalue(r, 0, 7), sizeof(j->key));
	PQclear(r);
	return 0;
}

static int
sp_pause(struct store *s, struct store_pause *p)
{
	struct pg *pg = pg_of(s);
	char by[128];

	memset(p, 0, sizeof(*p));
	if (pg_paused(pg, pg->queue, &p->paused, by, sizeof(by), &p->at) == -1)
		return pg_fail(pg, "status");
	/* Stored text, whoever wrote it: escaped. */
	vis_text(by, p->by, sizeof(p->by));
	return 0;
}

/* 1 if the job is there, 0 if not, -1 on error. */
static int
job_exists(struct pg *pg, const char *id)
{
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, "SELECT 1 FROM chute.jobs WHERE queue = $1"
	    " AND id = $2", 2, p);
	int n;

	if (r == NULL)
		return -1;
	n = PQntuples(r);
	PQclear(r);
	return n > 0;
}

static int
sp_log(struct store *s, const char *id, int (*out)(const char *, size_t))
{
	static const char sql[] = "SELECT body FROM chute.job_logs"
	    " WHERE queue = $1 AND id = $2 ORDER BY seq";
	struct pg *pg = pg_of(s);
	const char *p[2] = { pg->queue, id };
	PGresult *r;
	int rc = 0;

	r = PQexecParams(pg->conn, sql, 2, NULL, p, NULL, NULL, 1);
	if (pg_result(pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return pg_fail(pg, "log");
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		/* No log yet is fine for a job that has not run. */
		if ((rc = job_exists(pg, id)) == -1)
			return pg_fail(pg, "log");
		return rc == 1 ? 0 : EXIT_NO;
	}
	for (int i = 0; i < PQntuples(r) && rc == 0; i++)
		if (out(PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0)) == -1)
			rc = -1;
	PQclear(r);
	return rc;
}

static int
sp_stats(struct store *s, struct store_stats *st)
{
	return pg_stats_read(pg_of(s), st);
}

/* The jobs in run_at's order, with each claim's worker and lease left. */
static int
sp_list(struct store *s, int state,
    void (*row)(void *, const struct store_row *), void *arg)
{
	static const char sql[] = "SELECT state, (extract(epoch FROM now() - "
	    PG_NEAR("run_at") ") * 1000)::bigint, attempts, id, worker,"
	    " (extract(epoch FROM " PG_NEAR("lease_until") " - now()) * 1000)"
	    "::bigint, priority, coalesce(key, '')"
	    " FROM chute.jobs"
	    " WHERE queue = $1 AND ($2::text IS NULL OR state = $2)"
	    " ORDER BY run_at, id";
	struct pg *pg = pg_of(s);
	const char *p[2] = { pg->queue, state != ST_NONE ?
	    state_names[state] : NULL };
	PGresult *r;

	if ((r = pg_exec(pg, sql, 2, p)) == NULL)
		return pg_fail(pg, "ls");
	for (int i = 0; i < PQntuples(r); i++) {
		struct store_row w = {
			.state = state_from_name(PQgetvalue(r, i, 0)),
			.age = strtoll(PQgetvalue(r, i, 1), NULL, 10),
			.attempts = strtoll(PQgetvalue(r, i, 2), NULL, 10),
			.id = PQgetvalue(r, i, 3),
			.worker = PQgetisnull(r, i, 4) ? NULL :
			    PQgetvalue(r, i, 4),
			.has_lease = !PQgetisnull(r, i, 5),
			.lease = strtoll(PQgetvalue(r, i, 5), NULL, 10),
			.prio = atoi(PQgetvalue(r, i, 6)),
			.key = PQgetvalue(r, i, 7),
		};

		row(arg, &w);
	}
	PQclear(r);
	return 0;
}

/* ---- wait ---- */

/*
 * The ends told on PG_ENDED_CHANNEL (pg.h) for the IDs waited for (one
 * wait per process: the command's), and which of them a look found
 * live: a job of a queue kept 0 leaves the database in its outcome
 * statement, and its notification is then all that says how it ended.
 */
static struct {
	char *const	*ids;
	int		 n, *told;
	bool		*live;
} ended;

static void
ended_take(struct pg *pg)
{
	PGnotify *nt;
	const char *id;
	int st;

	while ((nt = PQnotifies(pg->conn)) != NULL) {
		if ((id = pg_ended_of(nt->extra, pg->queue, &st)) != NULL)
			for (int i = 0; i < ended.n; i++)
				if (strcmp(ended.ids[i], id) == 0)
					ended.told[i] = st;
		PQfreemem(nt);
	}
}

/*
 * A job seen live is gone: its end's notification may come a moment
 * after the commit the look saw (the server signals listeners after
 * the commit is visible).  Wait for it, ENDED_WAIT_MS at most.
 */
#define ENDED_WAIT_MS	2000
static void
ended_await(struct pg *pg, int i)
{
	msec_t until = mono_ms() + ENDED_WAIT_MS, left;
	struct pollfd pfd = { .fd = PQsocket(pg->conn), .events = POLLIN };

	while (ended.told[i] == 0 && (left = until - mono_ms()) > 0) {
		if (poll(&pfd, 1, (int)left) == -1 && errno != EINTR)
			return;
		if (PQconsumeInput(pg->conn) == 0)
			return;
		ended_take(pg);
	}
}

static int
ended_track(char *const *ids, int n)
{
	if (ended.ids == ids)
		return 0;
	free(ended.told);
	free(ended.live);
	ended.told = calloc(n, sizeof(*ended.told));
	ended.live = calloc(n, sizeof(*ended.live));
	if (ended.told == NULL || ended.live == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	ended.ids = ids;
	ended.n = n;
	return 0;
}

static int
sp_states(struct store *s, char *const *ids, int n, int *st)
{
	static const char sql[] = "SELECT id, state FROM chute.jobs"
	    " WHERE queue = $1 AND id = ANY($2::text[])";
	struct pg *pg = pg_of(s);
	const char *p[2] = { pg->queue, NULL };
	char *arr;
	PGresult *r;
	int rc;

	if ((rc = ended_track(ids, n)) != 0)
		return rc;
	if ((arr = pg_text_array((const char *const *)ids, n)) == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	p[1] = arr;
	r = pg_exec(pg, sql, 2, p);
	free(arr);
	if (r == NULL)
		return pg_fail(pg, "wait");
	ended_take(pg);
	for (int i = 0; i < n; i++) {
		st[i] = ST_NONE;
		for (int k = 0; k < PQntuples(r); k++)
			if (strcmp(PQgetvalue(r, k, 0), ids[i]) == 0)
				st[i] = state_from_name(PQgetvalue(r, k, 1));
		if (st[i] == ST_NONE && ended.live[i])
			ended_await(pg, i);
		if (st[i] == ST_NONE && ended.told[i] != 0)
			st[i] = ended.told[i];
		ended.live[i] = st[i] != ST_NONE && !state_terminal(st[i]);
	}
	PQclear(r);
	return 0;
}

/*
 * No watch: the states are polled, from every 50 ms up to every second;
 * and the ends of jobs that leave at once (pg.h: PG_ENDED_CHANNEL) are
 * listened for from before the first look.
 */
static int
sp_wait_start(struct store *s, void **w)
{
	struct pg *pg = pg_of(s);

	if (pg_cmd(pg, "LISTEN " PG_ENDED_CHANNEL, 0, NULL) == -1)
		return pg_fail(pg, "wait");
	if ((*w = malloc(sizeof(msec_t))) == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	*(msec_t *)*w = 50;
	return 0;
}

static int
sp_wait_nap(struct store *s, void *w, msec_t max)
{
	msec_t *nap = w, ms = max >= 0 && max < *nap ? max : *nap;

	usleep((useconds_t)ms * 1000);
	*nap = *nap * 2 > 1000 ? 1000 : *nap * 2;
	return 0;
}

static void
sp_wait_end(struct store *s, void *w)
{
	free(w);
	free(ended.told);
	free(ended.live);
	memset(&ended, 0, sizeof(ended));
}

/* ---- acts ---- */

static int
sp_cancel(struct store *s, const char *id, const char *by, char *msg,
    size_t len)
{
	return pg_cancel_job(pg_of(s), id, by, msg, len);
}

static int
sp_retry(struct store *s, const char *id, const char *by, char *msg,
    size_t len)
{
	return pg_retry_job(pg_of(s), id, by, msg, len);
}

static int
sp_set_pause(struct store *s, bool on, const char *by, bool *changed,
    char *msg, size_t len)
{
	struct pg *pg = pg_of(s);
	int rc;

	if ((rc = pg_pause(pg, pg->queue, on, by)) == -1)
		return pg_fail_msg(pg, on ? "pause" : "resume", msg, len);
	*changed = rc == 0;
	return 0;
}

static void
sp_paused_note(struct store *s)
{
	pg_note_if_unknown(pg_of(s));
}

static int
sp_purge(struct store *s, int state, msec_t older, long long *removed)
{
	return pg_purge(pg_of(s), state != ST_NONE ? state_names[state] :
	    NULL, older, removed);
}

/* ---- top ---- */

/*
 * The queue's source takes the store's connection (pg_top_source.c);
 * top_close gives it back for close.  The first look comes before the
 * screen: what stops it is said plainly.
 */
static int
sp_top_open(struct store *s, bool live, msec_t since, struct top_source *src,
    void **h)
{
	struct pgtop *q;

	if ((*h = q = pgtop_new(pg_of(s))) == NULL) {
		perror("chute: top");
		return EX_SOFTWARE;
	}
	/*
	 * The connection is the source's from now on, and the source makes
	 * it again when it is lost: the store's other calls meanwhile (top's
	 * and the dashboard's keys and schedules) go through the source's
	 * struct pg, never through the store's copy, whose PGconn a new
	 * connection freed (chute top URL crashed on the first reading of
	 * the keys after the server came back).
	 */
	pgtop_set_home(q, pg_of(s));
	s->be = pgtop_pg(q);
	if (live)
		return pgtop_start(q, src);
	if (pgtop_read(q) == -1)
		return pg_fail(pgtop_pg(q), "top");
	src->t = pgtop_model(q);
	return 0;
}

static void
sp_top_close(struct store *s, void *h)
{
	struct pg *home;

	if (h == NULL)
		return;
	home = pgtop_home(h);
	*home = *pgtop_pg(h);
	s->be = home;
	pgtop_free(h);
}

static int
sp_top_oldest(struct store *s, void *h, const struct top *t, msec_t *at)
{
	return pg_top_oldest(h, at);
}

static int
sp_hour(struct store *s, msec_t since, void (*add)(void *, int, msec_t,
    unsigned), void *arg, msec_t *at, bool *part)
{
	return pg_hour(pg_of(s), add, arg, at, part);
}

static const char *
sp_name(struct store *s)
{
	return pg_of(s)->name;
}

/* The connection made again if it was lost, its calls bounded. */
static int
sp_page_begin(struct store *s, msec_t wait, char *err, size_t len)
{
	struct pg *pg = pg_of(s);

	if (!pg_ok(pg)) {
		pg_close(pg);
		if (pg_connect(pg, false, 0) == -1) {
			snprintf(err, len, "%s: %s", pg->name, pg_error(pg));
			return -1;
		}
	}
	pg->deadline = mono_ms() + wait;
	return 0;
}

static void
sp_page_end(struct store *s)
{
	pg_of(s)->deadline = 0;
}

/* ---- the dashboard's pages (store_pg_page.c) ---- */

static int
sp_page(struct store *s, const struct page_query *q, struct page_list *l,
    char *err, size_t len)
{
	return pg_page_list(pg_of(s), q, l, err, len);
}

static int
sp_page_job(struct store *s, const char *id, struct page_job *j, char *err,
    size_t len)
{
	return pg_page_job(pg_of(s), id, j, err, len);
}

static int
sp_page_failures(struct store *s, struct page_failures *f, char *err,
    size_t len)
{
	return pg_page_failures(pg_of(s), f, err, len);
}

static int
sp_page_matching(struct store *s, const struct page_query *q, char *ids,
    int max, char *err, size_t len)
{
	return pg_page_matching(pg_of(s), q, ids, max, err, len);
}

/*
 * Not connected (a live view's source lost the server, and says so on its
 * screen): EX_TEMPFAIL without a line, which a reading every second would
 * repeat under the view.  A command's connection was made at open.
 */
static bool
down(struct pg *pg)
{
	return pg->conn == NULL || PQstatus(pg->conn) != CONNECTION_OK;
}

static int
sp_limits(struct store *s, void (*row)(void *, const struct store_limit_row *),
    void *arg)
{
	if (down(pg_of(s)))
		return EX_TEMPFAIL;
	return pg_limits_read(pg_of(s), row, arg);
}

static int
sp_set_limit(struct store *s, const struct store_limit_set *c, char *msg,
    size_t len)
{
	return pg_limit_set(pg_of(s), c, msg, len);
}

static int
sp_workers(struct store *s, const struct store_workers_out *o, int *cut)
{
	return pg_workers_read(pg_of(s), o, cut);
}

/* ---- retention ---- */

static int
sp_retention(struct store *s, struct retention *r)
{
	struct pg *pg = pg_of(s);

	return pg_retention(pg, pg->queue, r) == -1 ? pg_fail(pg,
	    "retention") : 0;
}

static int
sp_set_retention(struct store *s, const struct retention *r)
{
	struct pg *pg = pg_of(s);

	return pg_set_retention(pg, pg->queue, r) == -1 ? pg_fail(pg,
	    "retention") : 0;
}

static int
sp_schedules(struct store *s, void (*row)(void *, const struct sched_row *),
    void *arg)
{
	struct pg *pg = pg_of(s);

	if (down(pg))
		return EX_TEMPFAIL;
	return pg_schedules(pg, pg->queue, row, arg) == -1 ? pg_fail(pg,
	    "schedules") : 0;
}

const struct store_ops store_pg_ops = {
	.usage = "URL [--queue NAME]",
	.missing = "no postgresql:// URI given",
	.noun = "URL",
	.uri = true,
	.claims = true,
	.wait_unknown = "unknown job among the IDs",
	.open = sp_open,
	.close = sp_close,
	.title = sp_title,
	.job = sp_job,
	.pause = sp_pause,
	.log = sp_log,
	.stats = sp_stats,
	.list = sp_list,
	.workers = sp_workers,
	.top_open = sp_top_open,
	.top_close = sp_top_close,
	.top_oldest = sp_top_oldest,
	.hour = sp_hour,
	.name = sp_name,
	.page_begin = sp_page_begin,
	.page_end = sp_page_end,
	.page = sp_page,
	.page_job = sp_page_job,
	.page_failures = sp_page_failures,
	.page_matching = sp_page_matching,
	.states = sp_states,
	.wait_start = sp_wait_start,
	.wait_nap = sp_wait_nap,
	.wait_end = sp_wait_end,
	.cancel = sp_cancel,
	.retry = sp_retry,
	.set_pause = sp_set_pause,
	.paused_note = sp_paused_note,
	.purge = sp_purge,
	.limits = sp_limits,
	.set_limit = sp_set_limit,
	.retention = sp_retention,
	.set_retention = sp_set_retention,
	.schedules = sp_schedules,
};
