/*
 * web_jobs.c: the dashboard's pages of jobs: one state's jobs, a page at
 * a time in the order of `chute ls` (keyset pagination: the next page
 * starts after the last row's sort key, never at an offset), with an ID
 * prefix filter; one job, with the end of its log; failures grouped by
 * their last outcome; the workers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/id.h"
#include "base/util.h"
#include "store/spool.h"
#include "chute-web/web.h"
#include "chute-web/web_page.h"

static int
bad_request(const struct web_req *r, struct buf *b, const char *why)
{
	return web_page_status(r, b, MHD_HTTP_BAD_REQUEST, "Bad request", why);
}

static int
store_error(const struct web_req *r, struct buf *b, const char *err)
{
	char vis[1024];

	/* vis_name, not vis_id: its ring of buffers is not threads'. */
	vis_name(err, vis, sizeof(vis));
	fprintf(stderr, "chute: web: %s\n", vis);
	return web_page_status(r, b, MHD_HTTP_INTERNAL_SERVER_ERROR,
	    "Could not read it", err);
}

/* ---- one state's jobs ---- */

/* state, prefix, rows and the cursor (after, aid) of the query string. */
static const char *
read_query(const struct web_req *r, struct page_query *q)
{
	const char *v;
	char num[24];

	if ((v = r->get(r->arg, "state")) != NULL &&
	    (q->state = state_from_name(v)) == ST_NONE)
		return "state: one of wait, new, cur, defer, done, failed";
	if (r->get(r->arg, "prefix") != NULL &&
	    !page_field(r, "prefix", false, q->prefix, sizeof(q->prefix)))
		return "prefix: too long, or a control character";
	if ((v = r->get(r->arg, "rows")) != NULL &&
	    ((q->rows = atoi(v)) < 1 || q->rows > WEB_ROWS_MAX))
		return "rows: 1 to 200";
	if (r->get(r->arg, "after") == NULL)
		return NULL;
	if (!page_field(r, "after", false, num, sizeof(num)) ||
	    !page_field(r, "aid", false, q->after_id, sizeof(q->after_id)))
		return "after, aid: the next page's link, as it was";
	q->after_us = strtoll(num, NULL, 10);
	q->after = true;
	return NULL;
}

static void
state_tabs(const struct web_req *r, struct buf *b, const struct page_query *q)
{
	char n[ST_END][32];

	pthread_mutex_lock(&r->w->mu);
	for (int st = ST_FIRST; st < ST_END; st++)
		top_count(&r->w->ov.t, st, n[st], sizeof(n[st]));
	pthread_mutex_unlock(&r->w->mu);
	buf_add(b, "<nav class=\"states\">");
	for (int st = ST_FIRST; st < ST_END; st++)
		buf_fmt(b, "<a href=\"/jobs?state=%s\"%s>%s %s</a> ",
		    state_names[st], st == q->state ? " class=\"here\"" : "",
		    state_names[st], n[st]);
	buf_add(b, "</nav>");
}

static void
filter_form(struct buf *b, const struct page_query *q)
{
	buf_fmt(b, "<form class=\"filter\" method=\"get\" action=\"/jobs\">"
	    "<input type=\"hidden\" name=\"state\" value=\"%s\">"
	    "<label>ID starts with <input name=\"prefix\" value=\"",
	    state_names[q->state]);
	buf_attr(b, q->prefix);
	buf_add(b, "\"></label> <button type=\"submit\">filter</button></form>");
}

/* The form that cancels (or retries) one job, on its row or its page. */
static void
job_form(const struct web_req *r, struct buf *b, int state, const char *id)
{
	bool failed = state == ST_FAILED;

	if (!r->w->actions || state == ST_DONE)
		return;
	page_form(r, b, failed ? "retry" : "cancel");
	page_hidden(b, "id", id);
	page_form_end(b, failed ? "retry" : "cancel");
}

static void
rows(const struct web_req *r, struct buf *b, const struct page_query *q,
    const struct page_list *l)
{
	msec_t now = now_ms();

	buf_add(b, "<table class=\"jobs\" id=\"list\"><thead><tr><th>since</th>"
	    "<th>attempts</th><th>last outcome</th><th>ID</th>");
	buf_add(b, r->w->actions ? "<th></th></tr></thead><tbody>" :
	    "</tr></thead><tbody>");
	for (int i = 0; i < l->n; i++) {
		buf_add(b, "<tr><td>");
		page_when(b, l->v[i].us, now);
		buf_fmt(b, "</td><td>%d</td><td>", l->v[i].attempts);
		buf_html(b, l->v[i].last, strlen(l->v[i].last), false);
		buf_add(b, "</td><td>");
		page_job_link(b, l->v[i].id);
		buf_add(b, "</td>");
		if (r->w->actions) {
			buf_add(b, "<td>");
			job_form(r, b, q->state, l->v[i].id);
			buf_add(b, "</td>");
		}
		buf_add(b, "</tr>");
	}
	buf_add(b, "</tbody></table>");
}

/* The query string of this list, for its pager's links. */
static void
list_url(struct buf *b, const struct page_query *q)
{
	buf_fmt(b, "/jobs?state=%s&amp;rows=%d", state_names[q->state], q->rows);
	if (q->prefix[0] != '\0') {
		buf_add(b, "&amp;prefix=");
		buf_url(b, q->prefix);
	}
}

static void
pager(struct buf *b, const struct page_query *q, const struct page_list *l)
{
	buf_add(b, "<p class=\"pager\">");
	if (q->after) {
		buf_add(b, "<a href=\"");
		list_url(b, q);
		buf_add(b, "\">first page</a> ");
	}
	if (l->more) {
		buf_add(b, "<a id=\"next\" rel=\"next\" href=\"");
		list_url(b, q);
		buf_fmt(b, "&amp;after=%lld&amp;aid=",
		    (long long)l->v[l->n - 1].us);
		buf_url(b, l->v[l->n - 1].id);
		buf_add(b, "\">next page</a>");
	}
	buf_add(b, "</p>");
	if (l->cut)
		buf_fmt(b, "<p class=\"note\">Only the first %d names of %s/ "
		    "were read: the order holds among those. Narrow it with a "
		    "prefix.</p>", WEB_SCAN_MAX, state_names[q->state]);
}

static void
retry_all_form(const struct web_req *r, struct buf *b,
    const struct page_query *q)
{
	if (!r->w->actions || q->state != ST_FAILED)
		return;
	page_form(r, b, "retry-matching");
	page_hidden(b, "prefix", q->prefix);
	page_form_end(b, q->prefix[0] ? "retry every failed job with this "
	    "prefix..." : "retry every failed job...");
}

int
page_jobs(const struct web_req *r, struct buf *b)
{
	struct page_query q = { .state = ST_NEW, .rows = WEB_ROWS };
	struct page_list *l;
	const char *why;
	char err[512];

	if ((why = read_query(r, &q)) != NULL)
		return bad_request(r, b, why);
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return store_error(r, b, "out of memory");
	if (r->w->ops->list(r->w->st, &q, l, err, sizeof(err)) == -1) {
		free(l);
		return store_error(r, b, err);
	}
	page_head(r, b, state_names[q.state]);
	buf_fmt(b, "<h1>Jobs in %s</h1>", state_names[q.state]);
	state_tabs(r, b, &q);
	filter_form(b, &q);
	retry_all_form(r, b, &q);
	rows(r, b, &q, l);
	pager(b, &q, l);
	page_foot(b);
	free(l);
	return MHD_HTTP_OK;
}

/* ---- one job ---- */

static void
job_facts(struct buf *b, const struct page_job *j)
{
	buf_fmt(b, "<dl class=\"facts\"><dt>state</dt><dd id=\"state\">"
	    "<a href=\"/jobs?state=%s\">%s</a></dd><dt>since</dt><dd>",
	    state_names[j->state], state_names[j->state]);
	page_when(b, j->us, now_ms());
	buf_fmt(b, "</dd><dt>attempts</dt><dd id=\"attempts\">%d</dd>"
	    "<dt>priority</dt><dd id=\"prio\">%d</dd><dt>key</dt>"
	    "<dd id=\"key\">", j->attempts, j->prio);
	/* A key is a word of safe bytes (key_valid); escaped all the same. */
	buf_html(b, j->key[0] ? j->key : "-", strlen(j->key[0] ? j->key : "-"),
	    false);
	/* Only a job that has one: the page of any other is as it was. */
	if (j->unique[0] != '\0') {
		buf_add(b, "</dd><dt>unique key</dt><dd id=\"unique\">");
		buf_html(b, j->unique, strlen(j->unique), false);
	}
	/* Only a job submitted --after: IDs, ",+N" more, ",run" its mode. */
	if (j->after[0] != '\0') {
		buf_fmt(b, "</dd><dt>%s</dt><dd id=\"after\">",
		    j->state == ST_WAIT ? "waits for" : "waited for");
		buf_html(b, j->after, strlen(j->after), false);
	}
	buf_add(b, "</dd><dt>last outcome</dt><dd id=\"last\">");
	buf_html(b, j->last[0] ? j->last : "-", strlen(j->last[0] ? j->last :
	    "-"), false);
	buf_add(b, "</dd>");
	if (j->worker[0] != '\0') {
		buf_add(b, "<dt>run by</dt><dd id=\"worker\">");
		buf_html(b, j->worker, strlen(j->worker), false);
		buf_add(b, "</dd>");
	}
	buf_fmt(b, "<dt>payload</dt><dd id=\"size\">%lld bytes</dd></dl>",
	    j->size);
}

static void
job_log(struct buf *b, const struct page_job *j)
{
	buf_add(b, "<h2>Log</h2>");
	if (j->logsize < 0) {
		buf_add(b, "<p class=\"note\">No log: it has not run yet.</p>");
		return;
	}
	if ((long long)j->loglen < j->logsize)
		buf_fmt(b, "<p class=\"note\">Its last %zu bytes of %lld.</p>",
		    j->loglen, j->logsize);
	buf_add(b, "<pre id=\"log\" class=\"log\">");
	buf_html(b, j->log, j->loglen, false);
	buf_add(b, "</pre>");
}

int
page_job(const struct web_req *r, struct buf *b)
{
	char id[WEB_ID_LEN], err[512];
	struct page_job *j;
	int rc;

	if (!page_field(r, "id", false, id, sizeof(id)) || !id_valid(id))
		return bad_request(r, b, "id: not a job ID");
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return store_error(r, b, "out of memory");
	if ((rc = r->w->ops->job(r->w->st, id, j, err, sizeof(err))) != 0) {
		free(j);
		return rc == 1 ? web_page_status(r, b, MHD_HTTP_NOT_FOUND,
		    "No such job", "No job has that ID.") :
		    store_error(r, b, err);
	}
	page_head(r, b, "job");
	buf_add(b, "<h1>Job <span class=\"id\" id=\"id\">");
	buf_html(b, id, strlen(id), true);
	buf_add(b, "</span></h1>");
	job_facts(b, j);
	job_form(r, b, j->state, id);
	job_log(b, j);
	page_foot(b);
	free(j->log);
	free(j);
	return MHD_HTTP_OK;
}

/* ---- failures by reason ---- */

static void
group_row(const struct web_req *r, struct buf *b, const struct page_group *g)
{
	buf_fmt(b, "<tr><td>%lld</td><td class=\"reason\">", g->n);
	buf_html(b, g->reason, strlen(g->reason), false);
	buf_add(b, "</td><td>");
	page_job_link(b, g->id);
	buf_add(b, "</td><td>");
	page_when(b, g->us, now_ms());
	buf_add(b, "</td>");
	if (r->w->actions) {
		buf_add(b, "<td>");
		page_form(r, b, "retry-matching");
		page_hidden(b, "reason", g->reason);
		page_form_end(b, "retry these...");
		buf_add(b, "</td>");
	}
	buf_add(b, "</tr>");
}

int
page_failures(const struct web_req *r, struct buf *b)
{
	struct page_failures *f = calloc(1, sizeof(*f));
	char err[512];

	if (f == NULL)
		return store_error(r, b, "out of memory");
	if (r->w->ops->failures(r->w->st, f, err, sizeof(err)) == -1) {
		free(f);
		return store_error(r, b, err);
	}
	page_head(r, b, "failures");
	buf_fmt(b, "<h1>Failures by reason</h1><p>%lld%s failed jobs; the "
	    "newest %lld, grouped by their last outcome:</p>", f->total,
	    f->cut ? " or more" : "", f->read);
	buf_add(b, "<table class=\"jobs\" id=\"groups\"><thead><tr><th>jobs"
	    "</th><th>last outcome</th><th>newest</th><th>failed</th>");
	buf_add(b, r->w->actions ? "<th></th></tr></thead><tbody>" :
	    "</tr></thead><tbody>");
	for (int i = 0; i < f->n; i++)
		group_row(r, b, &f->v[i]);
	buf_add(b, "</tbody></table>");
	if (f->other > 0)
		buf_fmt(b, "<p class=\"note\">%lld more, of other reasons.</p>",
		    f->other);
	page_foot(b);
	free(f);
	return MHD_HTTP_OK;
}

/* ---- workers ---- */

static void
worker_row(struct buf *b, const struct top_worker *w, msec_t now)
{
	buf_add(b, "<tr><td>");
	buf_html(b, w->name, strlen(w->name), false);
	buf_add(b, "</td><td>");
	buf_html(b, w->version[0] ? w->version : "-", strlen(w->version[0] ?
	    w->version : "-"), false);
	buf_fmt(b, "</td><td>%ld</td><td>", w->pid);
	if (w->slots >= 0)
		buf_fmt(b, "%d", w->slots);
	else
		buf_add(b, "-");
	buf_fmt(b, "</td><td>%d</td><td>", w->running);
	buf_age(b, w->started > 0 ? now - w->started : -1);
	buf_add(b, "</td><td>");
	buf_age(b, w->seen > 0 ? now - w->seen : -1);
	buf_fmt(b, "</td><td>%s</td></tr>", w->alive ? "alive" : w->stopped ?
	    "stopped" : "gone");
}

int
page_workers(const struct web_req *r, struct buf *b)
{
	struct top *t = malloc(sizeof(*t));
	msec_t now = now_ms();

	if (t == NULL)
		return store_error(r, b, "out of memory");
	pthread_mutex_lock(&r->w->mu);
	*t = r->w->ov.t;
	pthread_mutex_unlock(&r->w->mu);
	page_head(r, b, "workers");
	if (t->claims)
		buf_fmt(b, "<h1>Workers</h1><p class=\"note\">%d of the "
		    "queue's %d workers alive; a worker is gone once its last "
		    "renewal is older than its lease.</p>", t->workers_alive,
		    t->workers_all);
	else
		buf_add(b, "<h1>Workers</h1><p class=\"note\">A spool has one "
		    "worker: the process that holds its lock (chute run).</p>");
	buf_add(b, "<table class=\"jobs\" id=\"workers\"><thead><tr>"
	    "<th>worker</th><th>version</th><th>pid</th><th>slots</th>"
	    "<th>running</th><th>started</th><th>last seen</th><th></th>"
	    "</tr></thead><tbody>");
	for (size_t i = 0; i < t->nworker; i++)
		worker_row(b, &t->worker[i], now);
	buf_add(b, "</tbody></table>");
	page_foot(b);
	free(t);
	return MHD_HTTP_OK;
}
