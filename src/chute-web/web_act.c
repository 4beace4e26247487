/*
 * web_act.c: the dashboard's actions, each a POST that web_http.c has
 * let through (--allow-actions, the user's credentials and CSRF token):
 * cancel or retry one job, retry the failed jobs that match a filter (a
 * page that says how many first, then at most WEB_BATCH_MAX of them),
 * pause and resume.  Each goes through the store's act, which is the
 * subcommand's own code; each is said on stderr, the journal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"
#include "store/spool.h"
#include "chute-web/web.h"
#include "chute-web/web_page.h"

#define SHOWN_IDS	20	/* IDs a confirmation lists */

/* The journal's line: who did what, and what came of it. */
static void
said(const struct web_req *r, const char *what, const char *msg)
{
	char vis[1024];

	vis_text(msg, vis, sizeof(vis));
	fprintf(stderr, "chute: web: user %s: %s: %s\n", r->user != -1 ?
	    web_auth_name(r->w->auth, r->user) : "-", what, vis);
}

static void
result(const struct web_req *r, struct buf *b, const char *title, int rc,
    const char *msg)
{
	page_head(r, b, title);
	buf_fmt(b, "<h1>%s</h1><p id=\"result\" class=\"%s\">", title,
	    rc == 0 ? "ok" : "error");
	buf_html(b, msg, strlen(msg), false);
	buf_add(b, "</p>");
}

int
act_job(const struct web_req *r, struct buf *b, enum web_act a)
{
	const char *what = a == WA_CANCEL ? "cancel" : "retry";
	char id[WEB_ID_LEN], by[160], msg[2 * WEB_ID_LEN + 256];
	int rc;

	if (!page_field(r, "id", true, id, sizeof(id)) || !id_valid(id))
		return web_page_status(r, b, MHD_HTTP_BAD_REQUEST,
		    "Bad request", "id: not a job ID");
	page_by(r, by, sizeof(by));
	msg[0] = '\0';
	rc = r->w->ops->act(r->w->st, a, id, by, msg, sizeof(msg));
	if (msg[0] == '\0')
		snprintf(msg, sizeof(msg), "%s: %s: the store failed (the "
		    "journal says why)", id, what);
	said(r, what, msg);
	result(r, b, a == WA_CANCEL ? "Cancel" : "Retry", rc, msg);
	buf_add(b, "<p>");
	page_job_link(b, id);
	buf_add(b, "</p>");
	page_foot(b);
	return rc == 0 ? MHD_HTTP_OK : MHD_HTTP_CONFLICT;
}

/* The filter of a "retry matching": an ID prefix and a last outcome. */
static bool
read_filter(const struct web_req *r, struct page_query *q)
{
	memset(q, 0, sizeof(*q));
	q->state = ST_FAILED;
	if (r->get(r->arg, "prefix") != NULL &&
	    !page_field(r, "prefix", true, q->prefix, sizeof(q->prefix)))
		return false;
	return r->get(r->arg, "reason") == NULL ||
	    page_field(r, "reason", true, q->reason, sizeof(q->reason));
}

static void
filter_words(struct buf *b, const struct page_query *q)
{
	if (q->prefix[0] != '\0') {
		buf_add(b, " whose ID starts with <span class=\"id\">");
		buf_html(b, q->prefix, strlen(q->prefix), true);
		buf_add(b, "</span>");
	}
	if (q->reason[0] != '\0') {
		buf_add(b, " whose last outcome is <span class=\"reason\">");
		buf_html(b, q->reason, strlen(q->reason), false);
		buf_add(b, "</span>");
	}
}

/* The first step: how many, which ones, and the form that retries them. */
static void
confirm(const struct web_req *r, struct buf *b, const struct page_query *q,
    const char *ids, int n)
{
	page_head(r, b, "retry");
	buf_fmt(b, "<h1>Retry %d failed job%s?</h1><p id=\"count\">%d%s "
	    "failed jobs", n, n == 1 ? "" : "s", n, n == WEB_BATCH_MAX ?
	    " (at most, at a time)" : "");
	filter_words(b, q);
	buf_add(b, ", oldest first:</p><ul class=\"ids\">");
	for (int i = 0; i < n && i < SHOWN_IDS; i++) {
		buf_add(b, "<li>");
		page_job_link(b, ids + (size_t)i * WEB_ID_LEN);
		buf_add(b, "</li>");
	}
	buf_add(b, n > SHOWN_IDS ? "<li>...</li></ul>" : "</ul>");
	if (n > 0) {
		page_form(r, b, "retry-matching");
		page_hidden(b, "prefix", q->prefix);
		page_hidden(b, "reason", q->reason);
		buf_add(b, "<input type=\"hidden\" name=\"confirm\" value=\"yes\">");
		page_form_end(b, "retry them");
	}
	page_foot(b);
}

/* The second: each one as `chute retry` would; a count of what came of it. */
static void
retry_all(const struct web_req *r, struct buf *b, const char *ids, int n)
{
	char by[160], msg[2 * WEB_ID_LEN + 256], first[sizeof(msg)] = "";
	int done = 0;

	page_by(r, by, sizeof(by));
	for (int i = 0; i < n; i++) {
		const char *id = ids + (size_t)i * WEB_ID_LEN;

		msg[0] = '\0';
		if (r->w->ops->act(r->w->st, WA_RETRY, id, by, msg,
		    sizeof(msg)) == 0)
			done++;
		else if (first[0] == '\0')
			strlcpy(first, msg[0] ? msg : "the store failed",
			    sizeof(first));
	}
	snprintf(msg, sizeof(msg), "%d of %d retried%s%s", done, n,
	    first[0] ? "; the first not: " : "", first);
	said(r, "retry matching", msg);
	result(r, b, "Retry", done == n ? 0 : 1, msg);
	buf_add(b, "<p><a href=\"/failures\">failures</a></p>");
	page_foot(b);
}

int
act_matching(const struct web_req *r, struct buf *b)
{
	const char *yes = r->get(r->arg, "confirm");
	struct page_query q;
	char err[512], *ids;
	int n;

	if (!read_filter(r, &q))
		return web_page_status(r, b, MHD_HTTP_BAD_REQUEST,
		    "Bad request", "prefix, reason: too long, or a control "
		    "character");
	if ((ids = calloc(WEB_BATCH_MAX, WEB_ID_LEN)) == NULL)
		return web_page_status(r, b, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "Out of memory", "Try again.");
	n = r->w->ops->matching(r->w->st, &q, ids, WEB_BATCH_MAX, err,
	    sizeof(err));
	if (n == -1)
		web_page_status(r, b, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "Could not read it", err);
	else if (yes != NULL && strcmp(yes, "yes") == 0)
		retry_all(r, b, ids, n);
	else
		confirm(r, b, &q, ids, n);
	free(ids);
	return n == -1 ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_OK;
}

int
act_pause(const struct web_req *r, struct buf *b, enum web_act a)
{
	const char *what = a == WA_PAUSE ? "pause" : "resume";
	char by[160], msg[512];
	int rc;

	page_who(r, by, sizeof(by));
	msg[0] = '\0';
	rc = r->w->ops->act(r->w->st, a, NULL, by, msg, sizeof(msg));
	if (msg[0] == '\0')
		snprintf(msg, sizeof(msg), "%s: the store failed (the journal "
		    "says why)", what);
	said(r, what, msg);
	result(r, b, a == WA_PAUSE ? "Pause" : "Resume", rc, msg);
	buf_add(b, "<p><a href=\"/\">overview</a></p>");
	page_foot(b);
	return rc == 0 ? MHD_HTTP_OK : MHD_HTTP_CONFLICT;
}
