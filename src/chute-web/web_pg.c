/*
 * web_pg.c: a PostgreSQL queue as the dashboard's store.  Its live
 * overview is `chute top URL`'s source (pg_top_source.c: pg_view.c's
 * bounded reads, woken by LISTEN, on a connection of its own, the main
 * thread's); the pages are read on a second connection that the
 * connections' threads take in turn (mu), made again when it was lost.
 * Every statement here is bounded: an index's range under a LIMIT, the
 * same WEB_SCAN_MAX rows a spool's page reads at most; its actions are
 * those of `chute cancel URL`, `chute retry URL`, `chute pause URL`.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/top.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"
#include "chute-web/web.h"

#define WAIT_MS		3000	/* a page's statements wait this long, at most */
#define SEED_MAX	100000	/* finished rows the hour's start reads, at most */
#define LOG_ROWS	1000	/* a job's log rows looked at: the newest */

struct wpg {
	pthread_mutex_t	 mu;		/* guards req */
	struct pg	 req;		/* the pages' connection */
	struct pgtop	*top;		/* the main thread's: the live model */
	struct top_source src;
};

/* ---- the pages' connection ---- */

/* Take it (connected again if lost), its calls bounded: 0, or -1 (err). */
static int
take(struct wpg *g, char *err, size_t len)
{
	pthread_mutex_lock(&g->mu);
	if (!pg_ok(&g->req)) {
		pg_close(&g->req);
		if (pg_connect(&g->req, false, 0) == -1) {
			snprintf(err, len, "%s: %s", g->req.name,
			    pg_error(&g->req));
			pthread_mutex_unlock(&g->mu);
			return -1;
		}
	}
	g->req.deadline = mono_ms() + WAIT_MS;
	return 0;
}

static void
give(struct wpg *g)
{
	g->req.deadline = 0;
	pthread_mutex_unlock(&g->mu);
}

/* A statement's rows, or NULL with err set. */
static PGresult *
query(struct wpg *g, const char *sql, int n, const char *const *p, bool bin,
    char *err, size_t len)
{
	PGresult *r = bin ? pg_exec_bin(&g->req, sql, n, p) :
	    pg_exec(&g->req, sql, n, p);

	if (r == NULL)
		snprintf(err, len, "%s: %s", g->req.name, g->req.late ?
		    "no reply within 3s" : pg_error(&g->req));
	return r;
}

static long long
col_ll(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col),
	    NULL, 10);
}

/* ---- the main thread's ---- */

static struct top_source *
wpg_source(void *st)
{
	return &((struct wpg *)st)->src;
}

/*
 * The oldest job waiting, by the claim's index (jobs_due: queue, run_at,
 * id), first in its order: one row.  On the source's connection, between
 * its reads; a server that is gone is its to find and say.
 */
static int
wpg_oldest(void *st, const struct top *t, msec_t *at)
{
	static const char sql[] = "SELECT (extract(epoch FROM now() - "
	    PG_NEAR("run_at") ") * 1000)::bigint FROM chute.jobs WHERE queue = $1 AND state ="
	    " 'new' ORDER BY run_at, id LIMIT 1";
	struct wpg *g = st;
	struct pg *pg = pgtop_pg(g->top);
	const char *p[1] = { pg->queue };
	PGresult *r;

	if (!pg_ok(pg))
		return -1;
	pg->deadline = mono_ms() + WAIT_MS;
	r = pg_exec(pg, sql, 1, p);
	pg->deadline = 0;
	if (r == NULL)
		return -1;
	*at = PQntuples(r) == 1 ? now_ms() - col_ll(r, 0, 0) : 0;
	PQclear(r);
	return 0;
}

/* ---- a page of one state, in the order of `chute ls URL` ---- */

/*
 * A time in microseconds since the epoch, as a bigint.  The last 800 or
 * so of the years a timestamptz holds (to 294276) are more microseconds
 * than a bigint does: a row dated there (finite: version 7's checks let
 * it by) failed its page, "bigint out of range".  Those are said as
 * US_MAX (year 293,500), which a page's cursor takes back; a cursor
 * there goes on to those of them whose ID is greater, so that the pages
 * end (some of those rows, dated past 293,500, may be left out).  An
 * infinity past the checks (dropped by the role that owns the tables)
 * is said as the first time or as US_MAX.
 */
#define US_MAX		"9200000000000000000"
#define EPOCH_US(t)	"least(greatest(extract(epoch FROM " t ") * 1000000," \
	" -210866803200000000), " US_MAX ")::bigint"
#define US_AT(us)	"(timestamptz 'epoch' + " us "::bigint * interval" \
	" '1 microsecond')"

/*
 * After the cursor (run_at, id), in that order, by the state's index
 * (jobs_due, jobs_finished, jobs_failed; cur is few), its range starting
 * at the cursor's run_at (the run_at >= makes it the index's range: the
 * row comparison alone would be a filter on an index without id); at
 * most WEB_SCAN_MAX rows looked at for the prefix, then the page's rows.
 * The subquery's order is the outer one's, so nothing is sorted and the
 * scan stops at the page's LIMIT.  run_at goes both ways in microseconds
 * since the epoch, exactly (but past US_MAX, above).
 */
#define LIST_AFTER "queue = $1 AND state = $2 AND ($3::bigint IS NULL OR" \
	" (run_at >= " US_AT("$3") " AND (least(run_at, " US_AT(US_MAX) ")," \
	" id) > (" US_AT("$3") ", $4)))"
static const char list_sql[] = "SELECT id, " EPOCH_US("run_at") ","
    " attempts, last FROM (SELECT id, run_at, attempts,"
    " last FROM chute.jobs WHERE " LIST_AFTER " ORDER BY run_at, id LIMIT"
    " $5) x WHERE starts_with(id, $6) ORDER BY run_at, id LIMIT $7";
/* A short page with a prefix: did the scan stop at WEB_SCAN_MAX rows? */
static const char scanned_sql[] = "SELECT count(*) FROM (SELECT 1 FROM"
    " chute.jobs WHERE " LIST_AFTER " ORDER BY run_at, id LIMIT $5) x";

static void
list_rows(PGresult *r, const struct web_query *q, struct web_list *l)
{
	int n = pg_rows(r, 4, q->rows + 1, NULL);

	for (int i = 0; i < n; i++) {
		strlcpy(l->v[i].id, PQgetvalue(r, i, 0), sizeof(l->v[i].id));
		l->v[i].us = col_ll(r, i, 1);
		l->v[i].attempts = (int)col_ll(r, i, 2);
		strlcpy(l->v[i].last, PQgetvalue(r, i, 3), sizeof(l->v[i].last));
	}
	l->more = n > q->rows;
	l->n = l->more ? q->rows : (n > 0 ? n : 0);
}

static int
wpg_list(void *st, const struct web_query *q, struct web_list *l, char *err,
    size_t len)
{
	char after[24], scan[16], rows[16];
	const char *p[7] = { NULL, state_names[q->state], q->after ? after :
	    NULL, q->after_id, scan, q->prefix, rows };
	struct wpg *g = st;
	PGresult *r;

	snprintf(after, sizeof(after), "%lld", (long long)q->after_us);
	snprintf(scan, sizeof(scan), "%d", WEB_SCAN_MAX);
	snprintf(rows, sizeof(rows), "%d", q->rows + 1);
	if (take(g, err, len) == -1)
		return -1;
	p[0] = g->req.queue;
	if ((r = query(g, list_sql, 7, p, false, err, len)) == NULL) {
		give(g);
		return -1;
	}
	list_rows(r, q, l);
	PQclear(r);
	/* A failure here only leaves the note out. */
	if (!l->more && q->prefix[0] != '\0' &&
	    (r = query(g, scanned_sql, 5, p, false, err, len)) != NULL) {
		l->cut = pg_rows(r, 1, 1, NULL) == 1 &&
		    col_ll(r, 0, 0) >= WEB_SCAN_MAX;
		PQclear(r);
	}
	give(g);
	return 0;
}

/* ---- one job ---- */

static int
job_row(struct wpg *g, const char *id, struct web_job *j, char *err,
    size_t len)
{
	static const char sql[] = "SELECT state, attempts, last, worker, size,"
	    " " EPOCH_US(PG_NEAR("run_at")) ","
	    " (extract(epoch FROM " PG_NEAR("lease_until") " - now()) * 1000)"
	    "::bigint FROM chute.jobs WHERE queue = $1 AND id = $2";
	const char *p[2] = { g->req.queue, id };
	PGresult *r = query(g, sql, 2, p, false, err, len);

	if (r == NULL)
		return -1;
	if (pg_rows(r, 7, 1, NULL) != 1) {
		PQclear(r);
		return 1;
	}
	j->state = state_from_name(PQgetvalue(r, 0, 0));
	j->attempts = (int)col_ll(r, 0, 1);
	strlcpy(j->last, PQgetvalue(r, 0, 2), sizeof(j->last));
	if (j->state == ST_CUR && !PQgetisnull(r, 0, 3))
		snprintf(j->worker, sizeof(j->worker), "%s, lease %s %lld ms",
		    PQgetvalue(r, 0, 3), col_ll(r, 0, 6) >= 0 ? "for" :
		    "ran out", llabs(col_ll(r, 0, 6)));
	j->size = col_ll(r, 0, 4);
	j->us = col_ll(r, 0, 5);
	PQclear(r);
	return 0;
}

/*
 * Which of the newest LOG_ROWS rows of its log make its last WEB_LOG_MAX
 * bytes: the first of them (*seq) and from where in it (*from, 1-based).
 */
static int
log_span(struct wpg *g, const char *id, struct web_job *j, long long *seq,
    long long *from, char *err, size_t len)
{
	static const char sql[] = "SELECT seq, octet_length(body) FROM"
	    " chute.job_logs WHERE queue = $1 AND id = $2 ORDER BY seq DESC"
	    " LIMIT 1000";
	const char *p[2] = { g->req.queue, id };
	PGresult *r = query(g, sql, 2, p, false, err, len);
	long long got = 0;
	int n;

	if (r == NULL)
		return -1;
	n = pg_rows(r, 2, LOG_ROWS, NULL);
	j->logsize = n > 0 ? 0 : -1;
	for (int i = 0; i < n; i++) {
		long long size = col_ll(r, i, 1);

		j->logsize += size;
		if (got < WEB_LOG_MAX) {
			*seq = col_ll(r, i, 0);
			*from = got + size > WEB_LOG_MAX ? got + size -
			    WEB_LOG_MAX + 1 : 1;
			got += size - (*from - 1);
		}
	}
	PQclear(r);
	return 0;
}

static int
job_log(struct wpg *g, const char *id, struct web_job *j, char *err,
    size_t len)
{
	static const char sql[] = "SELECT CASE WHEN seq = $3::bigint THEN"
	    " substring(body FROM $4::integer) ELSE body END FROM chute.job_logs"
	    " WHERE queue = $1 AND id = $2 AND seq >= $3::bigint ORDER BY seq";
	long long seq = 0, from = 1;
	char s[24], f[24];
	const char *p[4] = { g->req.queue, id, s, f };
	PGresult *r;

	if (log_span(g, id, j, &seq, &from, err, len) == -1 || j->logsize < 0)
		return j->logsize < 0 ? 0 : -1;
	snprintf(s, sizeof(s), "%lld", seq);
	snprintf(f, sizeof(f), "%lld", from);
	if ((r = query(g, sql, 4, p, true, err, len)) == NULL)
		return -1;
	if ((j->log = malloc(WEB_LOG_MAX)) != NULL)
		for (int i = 0; i < PQntuples(r); i++) {
			size_t k = (size_t)PQgetlength(r, i, 0);

			if (j->loglen + k > WEB_LOG_MAX)
				k = WEB_LOG_MAX - j->loglen;
			memcpy(j->log + j->loglen, PQgetvalue(r, i, 0), k);
			j->loglen += k;
		}
	PQclear(r);
	return 0;
}

static int
wpg_job(void *st, const char *id, struct web_job *j, char *err, size_t len)
{
	struct wpg *g = st;
	int rc;

	memset(j, 0, sizeof(*j));
	strlcpy(j->id, id, sizeof(j->id));
	j->logsize = -1;
	if (take(g, err, len) == -1)
		return -1;
	if ((rc = job_row(g, id, j, err, len)) == 0)
		rc = job_log(g, id, j, err, len);
	give(g);
	return rc;
}

/* ---- failures by reason: the newest WEB_FAIL_READ, by jobs_failed ---- */

static const char groups_sql[] = "SELECT last, count(*), (array_agg(id ORDER"
    " BY run_at DESC, id))[1], " EPOCH_US("max(run_at)") ","
    " sum(count(*)) OVER () FROM (SELECT id, last, run_at"
    " FROM chute.jobs WHERE queue = $1 AND state = 'failed' ORDER BY run_at"
    " DESC, id LIMIT $2) f GROUP BY last ORDER BY count(*) DESC, max(run_at)"
    " DESC";

static int
wpg_failures(void *st, struct web_failures *f, char *err, size_t len)
{
	struct wpg *g = st;
	char max[16];
	const char *p[2] = { NULL, max };
	PGresult *r;
	int n;

	memset(f, 0, sizeof(*f));
	snprintf(max, sizeof(max), "%d", WEB_FAIL_READ);
	if (take(g, err, len) == -1)
		return -1;
	p[0] = g->req.queue;
	r = query(g, groups_sql, 2, p, false, err, len);
	give(g);
	if (r == NULL)
		return -1;
	n = pg_rows(r, 5, WEB_FAIL_READ, NULL);
	f->read = n > 0 ? col_ll(r, 0, 4) : 0;
	f->other = f->read;
	for (int i = 0; i < n && i < WEB_GROUPS; i++, f->n++) {
		struct web_group *v = &f->v[i];

		strlcpy(v->reason, PQgetvalue(r, i, 0), sizeof(v->reason));
		v->n = col_ll(r, i, 1);
		strlcpy(v->id, PQgetvalue(r, i, 2), sizeof(v->id));
		v->us = col_ll(r, i, 3);
		f->other -= v->n;
	}
	PQclear(r);
	return 0;
}

/* ---- metrics, retry matching, actions ---- */

static int
wpg_metrics(void *st, FILE *f)
{
	struct wpg *g = st;
	char err[512];
	int rc;

	if (take(g, err, sizeof(err)) == -1) {
		fprintf(stderr, "chute: web: %s\n", err);
		return -1;
	}
	rc = pgcmd_stats_prometheus(f, &g->req);
	give(g);
	return rc == 0 ? 0 : -1;
}

static const char matching_sql[] = "SELECT id FROM (SELECT id, last, run_at"
    " FROM chute.jobs WHERE queue = $1 AND state = 'failed' ORDER BY run_at,"
    " id LIMIT $2) x WHERE starts_with(id, $3) AND ($4 = '' OR last = $4)"
    " ORDER BY run_at, id LIMIT $5";

static int
wpg_matching(void *st, const struct web_query *q, char *ids, int max,
    char *err, size_t len)
{
	struct wpg *g = st;
	char scan[16], lim[16];
	const char *p[5] = { NULL, scan, q->prefix, q->reason, lim };
	PGresult *r;
	int n;

	snprintf(scan, sizeof(scan), "%d", WEB_SCAN_MAX);
	snprintf(lim, sizeof(lim), "%d", max);
	if (take(g, err, len) == -1)
		return -1;
	p[0] = g->req.queue;
	r = query(g, matching_sql, 5, p, false, err, len);
	give(g);
	if (r == NULL)
		return -1;
	n = pg_rows(r, 1, max, NULL);
	for (int i = 0; i < n; i++)
		strlcpy(ids + (size_t)i * WEB_ID_LEN, PQgetvalue(r, i, 0),
		    WEB_ID_LEN);
	PQclear(r);
	return n < 0 ? 0 : n;
}

/* As `chute pause URL` and `chute resume URL` say it. */
static int
pause_queue(struct wpg *g, bool on, const char *by, char *msg, size_t len)
{
	int rc = pg_pause(&g->req, g->req.queue, on, by);

	if (rc == -1)
		return pg_fail(&g->req, on ? "pause" : "resume");
	snprintf(msg, len, "%s %s", g->req.queue, rc == 1 ? (on ?
	    "already paused" : "not paused") : on ? "paused" : "resumed");
	return 0;
}

static int
wpg_act(void *st, enum web_act a, const char *id, const char *by, char *msg,
    size_t len)
{
	struct wpg *g = st;
	int rc;

	*msg = '\0';
	if (take(g, msg, len) == -1)
		return EX_TEMPFAIL;
	if (a == WA_CANCEL)
		rc = pgcmd_cancel_job(&g->req, id, by, msg, len);
	else if (a == WA_RETRY)
		rc = pgcmd_retry_job(&g->req, id, by, msg, len);
	else
		rc = pause_queue(g, a == WA_PAUSE, by, msg, len);
	if (*msg == '\0')	/* the server failed: its words */
		snprintf(msg, len, "%s: %s", g->req.name, g->req.late ?
		    "no reply within 3s" : pg_error(&g->req));
	give(g);
	return rc;
}

static void
wpg_close(void *st)
{
	struct wpg *g = st;

	if (g->top != NULL) {
		pg_close(pgtop_pg(g->top));
		free(pgtop_pg(g->top)->uri);
		pgtop_free(g->top);
	}
	pg_close(&g->req);
	free(g->req.uri);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

static const struct web_store_ops wpg_ops = {
	.label = "queue",
	.source = wpg_source,
	.oldest = wpg_oldest,
	.list = wpg_list,
	.job = wpg_job,
	.failures = wpg_failures,
	.metrics = wpg_metrics,
	.matching = wpg_matching,
	.act = wpg_act,
	.close = wpg_close,
};

/*
 * The hour before the start, per minute ago, from jobs_finished: its
 * newest SEED_MAX rows at most (past them, the chart says so).
 */
static int
hour_seed(struct wpg *g, struct web_hour *h)
{
	static const char sql[] = "SELECT floor(extract(epoch FROM now() - "
	    PG_NEAR("run_at") ") / 60)::bigint, state = 'done', count(*),"
	    " sum(count(*))"
	    " OVER () FROM (SELECT run_at, state FROM chute.jobs WHERE queue ="
	    " $1 AND state IN ('done', 'failed') AND run_at > now() - interval"
	    " '1 hour' ORDER BY run_at DESC LIMIT 100000) x GROUP BY 1, 2";
	const char *p[1] = { g->req.queue };
	msec_t now = now_ms();
	PGresult *r = pg_exec(&g->req, sql, 1, p);
	int n;

	_Static_assert(SEED_MAX == 100000, "the statement says 100000");
	if (r == NULL)
		return -1;
	h->folded = now / 1000;
	n = pg_rows(r, 4, 2 * WEB_HOUR + 2, NULL);
	for (int i = 0; i < n; i++)
		web_hour_add(h, strcmp(PQgetvalue(r, i, 1), "t") == 0 ?
		    ST_DONE : ST_FAILED, now - col_ll(r, i, 0) * 60000,
		    (unsigned)col_ll(r, i, 2));
	h->part = n > 0 && col_ll(r, 0, 3) >= SEED_MAX;
	PQclear(r);
	return 0;
}

/* The source's own connection, and its first reading. */
static int
start_source(struct wpg *g, const char *uri, const char *queue)
{
	struct pg pg;
	int rc;

	if (pg_parse(&pg, uri, queue) == -1)
		return EX_USAGE;
	if (pg_connect(&pg, false, 0) == -1) {
		rc = pg_fail(&pg, "connect");
		pg_close(&pg);
		free(pg.uri);
		return rc;
	}
	if ((g->top = pgtop_new(&pg)) == NULL) {
		pg_close(&pg);
		free(pg.uri);
		return EX_SOFTWARE;
	}
	return pgtop_start(g->top, &g->src);
}

int
web_pg_open(const char *uri, const char *queue, struct web_hour *h,
    const struct web_store_ops **ops, void **st, const char **name)
{
	struct wpg *g = calloc(1, sizeof(*g));
	int rc;

	if (g == NULL)
		return EX_SOFTWARE;
	pthread_mutex_init(&g->mu, NULL);
	if (pg_parse(&g->req, uri, queue) == -1) {
		free(g);
		return EX_USAGE;
	}
	if (pg_connect(&g->req, false, 0) == -1)
		rc = pg_fail(&g->req, "connect");
	else if ((rc = pg_schema_check(&g->req)) == 0 && hour_seed(g, h) == -1)
		rc = pg_fail(&g->req, "web");
	if (rc == 0)
		rc = start_source(g, uri, queue);
	if (rc != 0) {
		wpg_close(g);
		return rc;
	}
	*ops = &wpg_ops;
	*st = g;
	*name = g->req.name;
	return 0;
}
