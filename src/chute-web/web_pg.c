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
#include "queue/view.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/store.h"
#include "chute-web/web.h"

#define WAIT_MS		3000	/* a page's statements wait this long, at most */
#define SEED_MAX	100000	/* finished rows the hour's start reads, at most */

struct wpg {
	pthread_mutex_t	 mu;		/* guards req */
	struct pg	 req;		/* the pages' connection */
	struct store	 store;		/* req as a store: pages, metrics, actions */
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

/* ---- the pages: the queue store's (store_pg_page.c), on req ---- */

static int
wpg_list(void *st, const struct page_query *q, struct page_list *l,
    char *err, size_t len)
{
	struct wpg *g = st;
	int rc;

	if (take(g, err, len) == -1)
		return -1;
	rc = g->store.ops->page(&g->store, q, l, err, len);
	give(g);
	return rc;
}

static int
wpg_job(void *st, const char *id, struct page_job *j, char *err, size_t len)
{
	struct wpg *g = st;
	int rc;

	memset(j, 0, sizeof(*j));
	strlcpy(j->id, id, sizeof(j->id));
	j->logsize = -1;
	if (take(g, err, len) == -1)
		return -1;
	rc = g->store.ops->page_job(&g->store, id, j, err, len);
	give(g);
	return rc;
}

static int
wpg_failures(void *st, struct page_failures *f, char *err, size_t len)
{
	struct wpg *g = st;
	int rc;

	memset(f, 0, sizeof(*f));
	if (take(g, err, len) == -1)
		return -1;
	rc = g->store.ops->page_failures(&g->store, f, err, len);
	give(g);
	return rc;
}

static int
wpg_matching(void *st, const struct page_query *q, char *ids, int max,
    char *err, size_t len)
{
	struct wpg *g = st;
	int rc;

	if (take(g, err, len) == -1)
		return -1;
	rc = g->store.ops->page_matching(&g->store, q, ids, max, err, len);
	give(g);
	return rc;
}

/* ---- metrics, actions ---- */

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
	rc = cmd_stats_prometheus(f, &g->store);
	give(g);
	return rc == 0 ? 0 : -1;
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
	rc = web_store_act(&g->store, a, id, by, msg, len);
	if (rc != 0 && (a == WA_PAUSE || a == WA_RESUME)) {
		/* The journal has the store's line; the page, the server's words. */
		fprintf(stderr, "chute: %s\n", msg);
		*msg = '\0';
	}
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
	static const char sql[] = "SELECT floor(extract(epoch FROM now() -"
	    " run_at) / 60)::bigint, state = 'done', count(*), sum(count(*))"
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
	g->store = (struct store){ .ops = &store_pg_ops, .target = g->req.name,
	    .be = &g->req };
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
