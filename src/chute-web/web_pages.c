/*
 * web_pages.c: which page a path is, and the overview: counts, the oldest
 * queued job, who runs it, the last hour's throughput as a chart drawn
 * here in SVG, the running jobs and the newest failures.  Its live
 * updates are the same reading as JSON (web_overview_json), which the
 * static script (chute.js) puts into the page as text, never as markup.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/util.h"
#include "store/spool.h"
#include "chute-web/web.h"
#include "chute-web/web_page.h"

#define CHART_W		10	/* a minute's bar, and its gap */
#define CHART_H		100	/* the tallest bar */

/* ---- which page ---- */

int
web_page_get(const struct web_req *r, struct buf *b)
{
	static const struct {
		const char	*path;
		int		(*fn)(const struct web_req *, struct buf *);
	} pages[] = {
		{ "/", page_overview }, { "/jobs", page_jobs },
		{ "/job", page_job }, { "/failures", page_failures },
		{ "/workers", page_workers },
	};

	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
		if (strcmp(r->path, pages[i].path) == 0)
			return pages[i].fn(r, b);
	return web_page_status(r, b, MHD_HTTP_NOT_FOUND, "Not found",
	    "There is no such page.");
}

int
web_page_post(const struct web_req *r, struct buf *b)
{
	if (strcmp(r->path, "/action/cancel") == 0)
		return act_job(r, b, WA_CANCEL);
	if (strcmp(r->path, "/action/retry") == 0)
		return act_job(r, b, WA_RETRY);
	if (strcmp(r->path, "/action/retry-matching") == 0)
		return act_matching(r, b);
	if (strcmp(r->path, "/action/pause") == 0)
		return act_pause(r, b, WA_PAUSE);
	if (strcmp(r->path, "/action/resume") == 0)
		return act_pause(r, b, WA_RESUME);
	return web_page_status(r, b, MHD_HTTP_NOT_FOUND, "Not found",
	    "There is no such action.");
}

/* ---- the overview ---- */

/* How long ago t was (now_ms()'s clock); -1, shown "-", for none. */
static msec_t
since(msec_t t)
{
	msec_t now = now_ms();

	return t <= 0 ? -1 : t < now ? now - t : 0;
}

/* Who runs it, in words: a spool's owner, a queue's workers. */
static void
who_runs(const struct top *t, char *buf, size_t len)
{
	if (t->claims)
		snprintf(buf, len, "%d of %d workers alive", t->workers_alive,
		    t->workers_all);
	else if (t->nworker > 0)
		snprintf(buf, len, "owner %s", t->worker[0].name);
	else
		snprintf(buf, len, "%s", t->unknown_owner ? "owner pid unknown "
		    "(lock held)" : "no owner");
}

/* Jobs running: a spool's in cur/ while it has an owner; a queue's claimed. */
static long long
running(const struct top *t)
{
	return t->claims || t->nworker > 0 || t->unknown_owner ?
	    t->count[ST_CUR] : 0;
}

static void
paused_words(const struct top *t, char *buf, size_t len)
{
	if (!t->paused)
		snprintf(buf, len, "claiming");
	else
		snprintf(buf, len, "paused%s%s", t->paused_by[0] ? " by " : "",
		    t->paused_by);
}

static unsigned
chart_max(const struct web_overview *ov)
{
	unsigned max = 1;

	for (int k = 0; k < WEB_HOUR; k++)
		if (ov->done[k] + ov->failed[k] > max)
			max = ov->done[k] + ov->failed[k];
	return max;
}

/*
 * One bar per minute, done under failed, scaled to the busiest minute;
 * chute.js moves the same rectangles (ids dN and fN) by the same rule.
 */
static void
chart(const struct web_overview *ov, struct buf *b)
{
	unsigned max = chart_max(ov);

	buf_fmt(b, "<svg id=\"chart\" class=\"chart\" viewBox=\"0 0 %d %d\" "
	    "role=\"img\" aria-label=\"jobs finished per minute\">",
	    CHART_W * WEB_HOUR, CHART_H + 14);
	for (int k = 0; k < WEB_HOUR; k++) {
		unsigned hd = ov->done[k] * CHART_H / max;
		unsigned hf = ov->failed[k] * CHART_H / max;

		buf_fmt(b, "<rect id=\"d%d\" class=\"done\" x=\"%d\" y=\"%u\" "
		    "width=\"%d\" height=\"%u\"></rect>", k, k * CHART_W,
		    CHART_H - hd, CHART_W - 2, hd);
		buf_fmt(b, "<rect id=\"f%d\" class=\"failed\" x=\"%d\" y=\"%u\" "
		    "width=\"%d\" height=\"%u\"></rect>", k, k * CHART_W,
		    CHART_H - hd - hf, CHART_W - 2, hf);
	}
	buf_fmt(b, "<text x=\"0\" y=\"%d\">-60 min</text><text x=\"%d\" "
	    "y=\"%d\" text-anchor=\"end\">now</text></svg>"
	    "<p class=\"legend\">busiest minute: <span id=\"chart-max\">%u"
	    "</span> jobs; <span class=\"done\">done</span>, "
	    "<span class=\"failed\">failed</span>%s</p>", CHART_H + 12,
	    CHART_W * WEB_HOUR, CHART_H + 12, max, ov->hour_part ? "; some "
	    "minutes counted only in part (more finished than a reading "
	    "takes)" : "");
}

static void
counts(const struct web_overview *ov, struct buf *b)
{
	char n[32];

	buf_add(b, "<table class=\"counts\"><tr>");
	for (int st = ST_FIRST; st < ST_END; st++)
		buf_fmt(b, "<th>%s</th>", state_names[st]);
	buf_add(b, "</tr><tr>");
	for (int st = ST_FIRST; st < ST_END; st++) {
		top_count(&ov->t, st, n, sizeof(n));
		buf_fmt(b, "<td><a id=\"c-%s\" href=\"/jobs?state=%s\">%s"
		    "</a></td>", state_names[st], state_names[st], n);
	}
	buf_add(b, "</tr></table>");
}

static void
facts(const struct web_overview *ov, struct buf *b)
{
	unsigned done, failed;
	char words[256];

	top_rate(&ov->t, now_ms(), &done, &failed);
	buf_add(b, "<dl class=\"facts\"><dt>oldest queued</dt><dd id=\"oldest\">");
	buf_age(b, since(ov->oldest));
	buf_fmt(b, "</dd><dt>running</dt><dd id=\"running\">%lld</dd>"
	    "<dt>runs it</dt><dd id=\"owner\">", running(&ov->t));
	who_runs(&ov->t, words, sizeof(words));
	buf_html(b, words, strlen(words), false);
	buf_fmt(b, "</dd><dt>last minute</dt><dd id=\"minute\">%u done, %u "
	    "failed</dd><dt>state</dt><dd id=\"paused\">", done, failed);
	paused_words(&ov->t, words, sizeof(words));
	buf_html(b, words, strlen(words), false);
	buf_add(b, "</dd></dl>");
}

static void
item_row(struct buf *b, const struct top_job *j, bool failed, bool claims)
{
	buf_add(b, "<tr><td>");
	buf_age(b, since(j->since));
	if (failed) {
		buf_fmt(b, " ago</td><td>%d</td><td>", j->attempts);
		buf_html(b, j->reason, strlen(j->reason), false);
	} else if (claims) {
		buf_add(b, "</td><td>");
		buf_html(b, j->worker, strlen(j->worker), false);
	}
	buf_add(b, "</td><td>");
	page_job_link(b, j->id);
	buf_add(b, "</td></tr>");
}

static void
items(struct buf *b, const char *id, const struct top *t, bool failed)
{
	const struct top_job *v = failed ? t->fail : t->run;
	size_t n = failed ? t->nfail : t->nrun;

	buf_fmt(b, "<table class=\"jobs\"><thead><tr><th>%s</th>%s<th>ID</th>"
	    "</tr></thead><tbody id=\"%s\">", failed ? "failed" : "running",
	    failed ? "<th>attempts</th><th>last outcome</th>" : t->claims ?
	    "<th>worker</th>" : "", id);
	for (size_t i = 0; i < n && i < WEB_LIST; i++)
		item_row(b, &v[i], failed, t->claims);
	buf_add(b, "</tbody></table>");
}

/* A key's limit in words: its max and its rate, "-" for none. */
static void
key_words(const struct top_key *k, char *max, size_t mlen, char *rate,
    size_t rlen)
{
	if (k->max > 0)
		snprintf(max, mlen, "%ld", k->max);
	else
		snprintf(max, mlen, "-");
	limit_format_rate(k->rate_n, k->rate_ms, rate, rlen);
}

/*
 * The keys in use, the most waiting first: hidden while none is (keys
 * are words of safe bytes: base/sched.h's key_valid).
 */
static void
keys_table(struct buf *b, const struct top *t)
{
	char max[24], rate[48];

	buf_fmt(b, "<div id=\"keysbox\"%s><h2>Keys <span id=\"keys-all\">"
	    "%lld</span></h2><table class=\"jobs\"><thead><tr><th>key</th>"
	    "<th>running</th><th>waiting</th><th>max</th><th>rate</th></tr>"
	    "</thead><tbody id=\"keys\">", t->nkey > 0 ? "" : " hidden",
	    t->keys_all);
	for (size_t i = 0; i < t->nkey; i++) {
		key_words(&t->key[i], max, sizeof(max), rate, sizeof(rate));
		buf_add(b, "<tr><td>");
		buf_html(b, t->key[i].key, strlen(t->key[i].key), false);
		buf_fmt(b, "</td><td>%lld</td><td>%lld</td><td>%s</td><td>%s"
		    "</td></tr>", t->key[i].running, t->key[i].waiting, max,
		    rate);
	}
	buf_add(b, "</tbody></table></div>");
}

/* A schedule's words: its interval, next tick and last tick made ("-"). */
static void
sched_words(const struct top_sched *c, char *every, char *next, char *last,
    size_t len)
{
	dur_format(c->every, every, len);
	iso_time(c->next, next, len);
	if (c->last >= 0)
		iso_time(c->last, last, len);
	else
		strlcpy(last, "-", len);
}

/*
 * The schedules, by name, with their next tick: hidden while there is
 * none (a schedule's name is [A-Za-z0-9_-]: sched_name_valid).
 */
static void
scheds_table(struct buf *b, const struct top *t)
{
	char every[48], next[48], last[48];

	buf_fmt(b, "<div id=\"schedbox\"%s><h2>Schedules <span id=\"scheds-all\">"
	    "%lld</span></h2><table class=\"jobs\"><thead><tr><th>schedule"
	    "</th><th>every</th><th>next tick</th><th>last tick</th></tr>"
	    "</thead><tbody id=\"scheds\">", t->nsched > 0 ? "" : " hidden",
	    t->scheds_all);
	for (size_t i = 0; i < t->nsched; i++) {
		sched_words(&t->sched[i], every, next, last, sizeof(every));
		buf_add(b, "<tr><td>");
		buf_html(b, t->sched[i].name, strlen(t->sched[i].name), false);
		buf_fmt(b, "</td><td>%s</td><td>%s</td><td>%s</td></tr>",
		    every, next, last);
	}
	buf_add(b, "</tbody></table></div>");
}

/* Both forms, one hidden: chute.js shows the one the state wants. */
/* A retention other than the default, read as the page is made. */
static void
kept(const struct web_req *r, struct buf *b)
{
	struct retention k;
	char d[32], f[32];

	if (r->w->ops->retention(r->w->st, &k) == -1 ||
	    (k.done == KEEP_FOREVER && k.failed == KEEP_FOREVER))
		return;
	keep_format(k.done, d, sizeof(d));
	keep_format(k.failed, f, sizeof(f));
	buf_fmt(b, "<p id=\"kept\">finished jobs kept: done %s, failed %s</p>",
	    d, f);
}

static void
pause_form(const struct web_req *r, const struct web_overview *ov,
    struct buf *b)
{
	if (!r->w->actions)
		return;
	buf_fmt(b, "<div id=\"pause\"%s>", ov->t.paused ? " hidden" : "");
	page_form(r, b, "pause");
	page_form_end(b, "pause claiming");
	buf_fmt(b, "</div><div id=\"resume\"%s>", ov->t.paused ? "" : " hidden");
	page_form(r, b, "resume");
	page_form_end(b, "resume claiming");
	buf_add(b, "</div>");
}

int
page_overview(const struct web_req *r, struct buf *b)
{
	struct web_overview *ov = malloc(sizeof(*ov));

	if (ov == NULL)
		return web_page_status(r, b, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "Out of memory", "Try again.");
	pthread_mutex_lock(&r->w->mu);
	*ov = r->w->ov;
	pthread_mutex_unlock(&r->w->mu);
	page_head(r, b, "overview");
	buf_add(b, "<section id=\"overview\" class=\"live\"><h1>Overview</h1>");
	buf_fmt(b, "<p id=\"error\" class=\"error\"%s>", ov->t.trouble[0] ?
	    "" : " hidden");
	buf_html(b, ov->t.trouble, strlen(ov->t.trouble), false);
	buf_add(b, "</p>");
	counts(ov, b);
	facts(ov, b);
	kept(r, b);
	pause_form(r, ov, b);
	buf_add(b, "<h2>Jobs finished per minute, the last hour</h2>");
	chart(ov, b);
	buf_add(b, "<h2>Running</h2>");
	items(b, "run", &ov->t, false);
	buf_add(b, "<h2>Newest failures</h2>");
	items(b, "fail", &ov->t, true);
	keys_table(b, &ov->t);
	scheds_table(b, &ov->t);
	buf_add(b, "<p class=\"at\">read <span id=\"at\">");
	buf_age(b, since(ov->at));
	buf_add(b, "</span> ago; live while this page is open</p></section>");
	page_foot(b);
	free(ov);
	return MHD_HTTP_OK;
}

/* ---- the overview as a live update ---- */

static void
json_items(struct buf *b, const char *name, const struct top *t, bool failed)
{
	const struct top_job *v = failed ? t->fail : t->run;
	size_t n = failed ? t->nfail : t->nrun;

	buf_fmt(b, ",\"%s\":[", name);
	for (size_t i = 0; i < n && i < WEB_LIST; i++) {
		buf_add(b, i ? ",{\"id\":" : "{\"id\":");
		buf_json(b, v[i].id, true);
		buf_add(b, ",\"href\":\"/job?id=");
		buf_url(b, v[i].id);
		buf_add(b, "\",\"age\":\"");
		buf_age(b, since(v[i].since));
		buf_add(b, "\",\"worker\":");
		buf_json(b, t->claims && !failed ? v[i].worker : "", false);
		buf_fmt(b, ",\"attempts\":%d,\"reason\":", v[i].attempts);
		buf_json(b, failed ? v[i].reason : "", false);
		buf_add(b, "}");
	}
	buf_add(b, "]");
}

static void
json_keys(struct buf *b, const struct top *t)
{
	char max[24], rate[48];

	buf_fmt(b, ",\"keys_all\":%lld,\"keys\":[", t->keys_all);
	for (size_t i = 0; i < t->nkey; i++) {
		key_words(&t->key[i], max, sizeof(max), rate, sizeof(rate));
		buf_add(b, i ? ",{\"key\":" : "{\"key\":");
		buf_json(b, t->key[i].key, true);
		buf_fmt(b, ",\"running\":%lld,\"waiting\":%lld,\"max\":\"%s\","
		    "\"rate\":\"%s\"}", t->key[i].running, t->key[i].waiting,
		    max, rate);
	}
	buf_add(b, "]");
}

static void
json_scheds(struct buf *b, const struct top *t)
{
	char every[48], next[48], last[48];

	buf_fmt(b, ",\"scheds_all\":%lld,\"scheds\":[", t->scheds_all);
	for (size_t i = 0; i < t->nsched; i++) {
		sched_words(&t->sched[i], every, next, last, sizeof(every));
		buf_add(b, i ? ",{\"name\":" : "{\"name\":");
		buf_json(b, t->sched[i].name, true);
		buf_fmt(b, ",\"every\":\"%s\",\"next\":\"%s\",\"last\":\"%s\"}",
		    every, next, last);
	}
	buf_add(b, "]");
}

static void
json_chart(const struct web_overview *ov, struct buf *b)
{
	buf_fmt(b, ",\"max\":%u,\"done\":[", chart_max(ov));
	for (int k = 0; k < WEB_HOUR; k++)
		buf_fmt(b, k ? ",%u" : "%u", ov->done[k]);
	buf_add(b, "],\"failed\":[");
	for (int k = 0; k < WEB_HOUR; k++)
		buf_fmt(b, k ? ",%u" : "%u", ov->failed[k]);
	buf_add(b, "]");
}

/* The words the page shows, each a JSON string: "oldest":"3m2s"... */
static void
json_words(const struct web_overview *ov, struct buf *b)
{
	unsigned done, failed;
	char words[256];

	buf_add(b, ",\"oldest\":\"");
	buf_age(b, since(ov->oldest));
	buf_add(b, "\",\"owner\":");
	who_runs(&ov->t, words, sizeof(words));
	buf_json(b, words, false);
	top_rate(&ov->t, now_ms(), &done, &failed);
	buf_fmt(b, ",\"minute\":\"%u done, %u failed\",\"paused\":", done,
	    failed);
	paused_words(&ov->t, words, sizeof(words));
	buf_json(b, words, false);
	buf_add(b, ",\"error\":");
	buf_json(b, ov->t.trouble, false);
}

void
web_overview_json(const struct web_overview *ov, struct buf *b)
{
	char n[32];

	buf_add(b, "{\"counts\":{");
	for (int st = ST_FIRST; st < ST_END; st++) {
		top_count(&ov->t, st, n, sizeof(n));
		buf_fmt(b, "%s\"%s\":\"%s\"", st != ST_FIRST ? "," : "",
		    state_names[st], n);
	}
	buf_fmt(b, "},\"running\":%lld,\"is_paused\":%s", running(&ov->t),
	    ov->t.paused ? "true" : "false");
	json_words(ov, b);
	json_chart(ov, b);
	json_items(b, "run", &ov->t, false);
	json_items(b, "fail", &ov->t, true);
	json_keys(b, &ov->t);
	json_scheds(b, &ov->t);
	buf_fmt(b, ",\"claims\":%s}", ov->t.claims ? "true" : "false");
}
