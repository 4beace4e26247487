/*
 * web_frame.c: what every page of the dashboard has: its head (the one
 * script and style sheet), the navigation, and the pieces the pages build
 * with: a job's link, an action's form with the user's CSRF token, a
 * hidden field that survives any byte, a field read back, an age.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/util.h"
#include "chute-web/web.h"
#include "chute-web/web_page.h"

void
page_head(const struct web_req *r, struct buf *b, const char *title)
{
	static const char *const nav[][2] = {
		{ "/", "overview" }, { "/jobs", "jobs" },
		{ "/failures", "failures" }, { "/workers", "workers" },
		{ "/metrics", "metrics" },
	};

	buf_add(b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width\">"
	    "<title>");
	buf_add(b, title);
	buf_add(b, " - chute</title>"
	    "<link rel=\"stylesheet\" href=\"/static/chute.css\">"
	    "<script src=\"/static/chute.js\" defer></script>"
	    "</head><body><header><a class=\"home\" href=\"/\">chute</a> "
	    "<span class=\"target\">");
	buf_add(b, r->w->ops->label);
	buf_add(b, " ");
	buf_html(b, r->w->target, strlen(r->w->target), false);
	buf_add(b, "</span><nav>");
	for (size_t i = 0; i < sizeof(nav) / sizeof(nav[0]); i++)
		buf_fmt(b, "<a href=\"%s\">%s</a> ", nav[i][0], nav[i][1]);
	buf_add(b, "</nav>");
	if (r->user != -1) {
		buf_add(b, "<span class=\"user\">");
		buf_html(b, web_auth_name(r->w->auth, r->user),
		    strlen(web_auth_name(r->w->auth, r->user)), true);
		buf_add(b, "</span>");
	}
	buf_add(b, "</header><main>");
}

void
page_foot(struct buf *b)
{
	buf_add(b, "</main></body></html>\n");
}

void
page_job_link(struct buf *b, const char *id)
{
	buf_add(b, "<a class=\"id\" href=\"/job?id=");
	buf_url(b, id);
	buf_add(b, "\">");
	buf_html(b, id, strlen(id), true);
	buf_add(b, "</a>");
}

void
page_form(const struct web_req *r, struct buf *b, const char *name)
{
	buf_fmt(b, "<form method=\"post\" action=\"/action/%s\">"
	    "<input type=\"hidden\" name=\"csrf\" value=\"%s\">", name,
	    web_auth_token(r->w->auth, r->user));
}

void
page_form_end(struct buf *b, const char *label)
{
	buf_fmt(b, "<button type=\"submit\">%s</button></form>", label);
}

void
page_hidden(struct buf *b, const char *name, const char *s)
{
	buf_fmt(b, "<input type=\"hidden\" name=\"%s\" value=\"", name);
	buf_url(b, s);
	buf_add(b, "\">");
}

bool
page_field(const struct web_req *r, const char *name, bool hidden,
    char *out, size_t len)
{
	const char *v = r->get(r->arg, name);
	size_t n;

	if (v == NULL || strlen(v) >= len)
		return false;
	strlcpy(out, v, len);
	/* A hidden field is percent-encoded: decoded here, once. */
	n = hidden ? MHD_http_unescape(out) : strlen(out);
	out[n] = '\0';
	if (strlen(out) != n)		/* a %00 */
		return false;
	for (const char *p = out; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

void
page_when(struct buf *b, int64_t us, msec_t now)
{
	msec_t ms = us / 1000;

	if (ms > now) {
		buf_add(b, "in ");
		buf_age(b, ms - now);
	} else {
		buf_age(b, now - ms);
		buf_add(b, " ago");
	}
}

void
page_who(const struct web_req *r, char *who, size_t len)
{
	char host[64] = "localhost";

	gethostname(host, sizeof(host) - 1);
	snprintf(who, len, "web:%s@%s", r->user != -1 ?
	    web_auth_name(r->w->auth, r->user) : "-", host);
}

void
page_by(const struct web_req *r, char *by, size_t len)
{
	snprintf(by, len, "`chute web` (user %s, uid %ld)", r->user != -1 ?
	    web_auth_name(r->w->auth, r->user) : "-", (long)getuid());
}

int
web_page_status(const struct web_req *r, struct buf *b, int status,
    const char *title, const char *msg)
{
	page_head(r, b, title);
	buf_fmt(b, "<h1>%s</h1><p class=\"msg\">", title);
	buf_html(b, msg, strlen(msg), false);
	buf_add(b, "</p>");
	page_foot(b);
	return status;
}
