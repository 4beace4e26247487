/*
 * web_http.c: the dashboard's requests, as libmicrohttpd hands them over
 * (a thread per connection, WEB_CONN_MAX of them): the checks every
 * request passes (method, Host, credentials), the checks every POST
 * passes (where it came from, its type, its size, its CSRF token), the
 * headers every response has (a strict Content-Security-Policy...), and
 * the live-update streams (Server-Sent Events).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "base/util.h"
#include "chute-web/web.h"

#define CSP	"default-src 'none'; script-src 'self'; style-src 'self'; " \
	"img-src 'self'; connect-src 'self'; frame-ancestors 'none'; " \
	"form-action 'self'; base-uri 'none'"
#define FORM_TYPE	"application/x-www-form-urlencoded"
#define FIELDS_MAX	16

/* One request, across libmicrohttpd's calls for it. */
struct rq {
	struct buf	 body;		/* a POST's, up to WEB_BODY_MAX */
	bool		 too_big;
	/* The POST's fields, decoded in place in body. */
	const char	*name[FIELDS_MAX], *value[FIELDS_MAX];
	int		 n;
};

/* ---- responses ---- */

static void
secure_headers(struct MHD_Response *resp, const char *type, bool cache)
{
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Content-Security-Policy", CSP);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "Cross-Origin-Opener-Policy",
	    "same-origin");
	MHD_add_response_header(resp, "Cross-Origin-Resource-Policy",
	    "same-origin");
	MHD_add_response_header(resp, "Cache-Control", cache ? "no-cache" :
	    "no-store");
}

/* Send b (taken: freed by libmicrohttpd) with status and type. */
static enum MHD_Result
send_buf(struct MHD_Connection *c, int status, struct buf *b,
    const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	if (b->oom) {
		buf_free(b);
		return MHD_NO;		/* the connection is closed */
	}
	resp = MHD_create_response_from_buffer(b->len, b->p,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		buf_free(b);
		return MHD_NO;
	}
	b->p = NULL;
	secure_headers(resp, type, false);
	r = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result
send_page(struct MHD_Connection *c, int status, struct buf *b)
{
	return send_buf(c, status, b, "text/html; charset=utf-8");
}

static enum MHD_Result
send_error(struct MHD_Connection *c, const struct web_req *r, int status,
    const char *title, const char *msg)
{
	struct buf b = { 0 };

	return send_page(c, web_page_status(r, &b, status, title, msg), &b);
}

/* The script or the style sheet, which the browser may keep (no-cache). */
static enum MHD_Result
send_static(struct MHD_Connection *c, const struct web_req *r,
    const char *path)
{
	const char *type, *data;
	struct MHD_Response *resp;
	enum MHD_Result res;
	size_t len;

	if ((data = web_static(path, &len, &type)) == NULL)
		return send_error(c, r, MHD_HTTP_NOT_FOUND, "Not found",
		    "No such file.");
	resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)data,
	    MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	secure_headers(resp, type, true);
	res = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return res;
}

/* 401 with the challenge: the browser asks for a user and password. */
static enum MHD_Result
send_challenge(struct MHD_Connection *c, const struct web_req *r)
{
	struct MHD_Response *resp;
	struct buf b = { 0 };
	enum MHD_Result res;

	web_page_status(r, &b, MHD_HTTP_UNAUTHORIZED, "Who are you?",
	    "This dashboard wants a user and password from its --auth-file.");
	if (b.oom || (resp = MHD_create_response_from_buffer(b.len, b.p,
	    MHD_RESPMEM_MUST_FREE)) == NULL) {
		buf_free(&b);
		return MHD_NO;
	}
	secure_headers(resp, "text/html; charset=utf-8", false);
	res = MHD_queue_basic_auth_fail_response(c, "chute", resp);
	MHD_destroy_response(resp);
	return res;
}

/* ---- live updates: one event per new reading of the overview ---- */

struct stream {
	struct web	*w;
	int		 fd;		/* the connection's socket */
	uint64_t	 gen;		/* the reading it sent last; 0 none */
	struct buf	 out;		/* what is still to send */
	size_t		 off;
};

/*
 * Has the browser gone?  Looked at once a second while a stream waits, so
 * that a closed page frees its place among the WEB_SSE_MAX at once, not
 * at the next write.
 */
static bool
hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP |
	    POLLERR));
}

/*
 * Wait (w->mu held) for a reading newer than s->gen, or a ping's time.
 * Returns false when the stream is to end: stopping, or the browser gone.
 */
static bool
await_news(struct stream *s)
{
	msec_t ping = mono_ms() + WEB_PING_MS;
	struct timespec ts;

	while (!s->w->stopping && s->w->gen == s->gen && mono_ms() < ping) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		if (pthread_cond_timedwait(&s->w->cv, &s->w->mu, &ts) ==
		    ETIMEDOUT && hung_up(s->fd))
			return false;
	}
	return !s->w->stopping;
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	size_t n;

	if (s->off == s->out.len) {
		s->out.len = s->off = 0;
		pthread_mutex_lock(&s->w->mu);
		if (!await_news(s)) {
			pthread_mutex_unlock(&s->w->mu);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (s->w->gen != s->gen) {
			s->gen = s->w->gen;
			buf_add(&s->out, "event: overview\ndata: ");
			web_overview_json(&s->w->ov, &s->out);
			buf_add(&s->out, "\n\n");
		} else
			buf_add(&s->out, ": ping\n\n");
		pthread_mutex_unlock(&s->w->mu);
		if (s->out.oom)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = s->out.len - s->off < max ? s->out.len - s->off : max;
	memcpy(buf, s->out.p + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

static void
stream_free(void *cls)
{
	struct stream *s = cls;

	pthread_mutex_lock(&s->w->mu);
	s->w->nsse--;
	pthread_mutex_unlock(&s->w->mu);
	buf_free(&s->out);
	free(s);
}

static enum MHD_Result
send_stream(struct MHD_Connection *c, const struct web_req *r)
{
	struct stream *s = calloc(1, sizeof(*s));
	struct MHD_Response *resp;
	enum MHD_Result res;
	bool full;

	if (s == NULL)
		return MHD_NO;
	s->w = r->w;
	s->fd = MHD_get_connection_info(c,
	    MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
	pthread_mutex_lock(&r->w->mu);
	if (!(full = r->w->nsse >= WEB_SSE_MAX))
		r->w->nsse++;
	pthread_mutex_unlock(&r->w->mu);
	if (full) {
		free(s);
		return send_error(c, r, MHD_HTTP_SERVICE_UNAVAILABLE, "Busy",
		    "As many live views as this dashboard serves are open.");
	}
	/* The browser reconnects after 3 s if the stream ends. */
	buf_add(&s->out, "retry: 3000\n\n");
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
	    stream_read, s, stream_free);
	if (resp == NULL) {
		stream_free(s);
		return MHD_NO;
	}
	secure_headers(resp, "text/event-stream; charset=utf-8", false);
	res = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return res;
}

static enum MHD_Result
send_metrics(struct MHD_Connection *c, const struct web_req *r)
{
	struct buf b = { 0 };
	size_t len = 0;
	char *text = NULL;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (f == NULL)
		return MHD_NO;
	rc = r->w->ops->metrics(r->w->st, f);
	if (fclose(f) == EOF || rc == -1) {
		free(text);
		return send_error(c, r, MHD_HTTP_INTERNAL_SERVER_ERROR,
		    "No metrics", "The store could not be read; the journal "
		    "says why.");
	}
	b.p = text;
	b.len = b.cap = len;
	return send_buf(c, MHD_HTTP_OK, &b,
	    "text/plain; version=0.0.4; charset=utf-8");
}

/* ---- the checks ---- */

/* localhost, [::1] or 127.N.N.N: the n bytes at h. */
static bool
loopback_name(const char *h, size_t n)
{
	if ((n == 9 && strncmp(h, "localhost", 9) == 0) ||
	    (n == 5 && strncmp(h, "[::1]", 5) == 0))
		return true;
	return n > 4 && strncmp(h, "127.", 4) == 0 &&
	    strspn(h, "0123456789.") == n;
}

/*
 * Listening on a loopback address, the Host must be one too: a page of
 * another site whose name an attacker points at 127.0.0.1 (DNS
 * rebinding) must not read the dashboard as its own.
 */
static bool
host_ok(struct MHD_Connection *c, const struct web *w)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *colon;

	if (!w->loopback)
		return true;
	return h != NULL && (colon = strrchr(h, ':')) != NULL &&
	    strcmp(colon + 1, w->port) == 0 &&
	    loopback_name(h, (size_t)(colon - h));
}

/*
 * Basic auth against the --auth-file: the user's index, or -1 (no
 * --auth-file: everyone is -1 and allowed).  *denied when credentials
 * are wanted and missing or wrong.
 */
static int
who(struct MHD_Connection *c, const struct web *w, bool *denied)
{
	char *pass = NULL, *user, vis[1024];
	int u = -1;

	*denied = false;
	if (w->auth == NULL)
		return -1;
	user = MHD_basic_auth_get_username_password(c, &pass);
	if (user == NULL || pass == NULL ||
	    (u = web_auth_check(w->auth, user, pass)) == -1)
		*denied = true;
	if (user != NULL && u == -1) {
		/* vis_name, not vis_id: its ring of buffers is not threads'. */
		vis_name(user, vis, sizeof(vis));
		fprintf(stderr, "chute: web: %s: wrong user or password\n",
		    vis);
	}
	if (pass != NULL) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user != NULL)
		MHD_free(user);
	return u;
}

/*
 * Origin, when the browser sends it, is this dashboard's.  "null" is what
 * a browser sends for a form under Referrer-Policy: no-referrer (ours),
 * and from a sandbox: then Sec-Fetch-Site must have said same-origin.
 */
static bool
origin_ok(const char *origin, const char *host, const char *site)
{
	if (origin == NULL)
		return true;		/* not sent (curl): the token decides */
	if (strcmp(origin, "null") == 0)
		return site != NULL;	/* checked already: same-origin */
	if (host == NULL)
		return false;
	if (strncmp(origin, "http://", 7) == 0)
		return strcmp(origin + 7, host) == 0;
	if (strncmp(origin, "https://", 8) == 0)	/* behind a TLS proxy */
		return strcmp(origin + 8, host) == 0;
	return false;
}

/*
 * A POST must come from the dashboard's own page: if the browser says
 * where it came from (Sec-Fetch-Site, Origin), that is here; its type is
 * a form's, and it carries the user's token from that page.  NULL, or
 * why not.
 */
static const char *
post_refused(struct MHD_Connection *c, const struct web_req *r)
{
	const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Sec-Fetch-Site");
	const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Content-Type");

	if (site != NULL && strcmp(site, "same-origin") != 0)
		return "it came from another site (Sec-Fetch-Site)";
	if (!origin_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Origin"), MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host"),
	    site))
		return "it came from another site (Origin)";
	if (type == NULL || strncmp(type, FORM_TYPE, strlen(FORM_TYPE)) != 0)
		return "it is not a form's";
	if (r->w->auth == NULL || r->user == -1 ||
	    !web_auth_token_ok(r->w->auth, r->user, r->get(r->arg, "csrf")))
		return "its CSRF token is missing or not this user's";
	return NULL;
}

/* ---- a POST's fields ---- */

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode s in place ('+' a space, %XX a byte); false for %00 or a bad %. */
static bool
form_decode(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		int hi, lo;

		if (*s == '+')
			*o++ = ' ';
		else if (*s != '%')
			*o++ = *s;
		else if ((hi = hexval(s[1])) < 0 || (lo = hexval(s[2])) < 0 ||
		    (hi == 0 && lo == 0))
			return false;
		else {
			*o++ = (char)(hi << 4 | lo);
			s += 2;
		}
	}
	*o = '\0';
	return true;
}

static bool
form_parse(struct rq *q)
{
	char *p = q->body.p;

	while (p != NULL && *p != '\0') {
		char *amp = strchr(p, '&'), *eq;

		if (amp != NULL)
			*amp++ = '\0';
		if ((eq = strchr(p, '=')) != NULL)
			*eq++ = '\0';
		if (q->n == FIELDS_MAX || !form_decode(p) ||
		    (eq != NULL && !form_decode(eq)))
			return false;
		q->name[q->n] = p;
		q->value[q->n++] = eq != NULL ? eq : "";
		p = amp;
	}
	return true;
}

static const char *
form_get(void *arg, const char *name)
{
	struct rq *q = arg;

	for (int i = 0; i < q->n; i++)
		if (strcmp(q->name[i], name) == 0)
			return q->value[i];
	return NULL;
}

static const char *
query_get(void *arg, const char *name)
{
	return MHD_lookup_connection_value(arg, MHD_GET_ARGUMENT_KIND, name);
}

/* ---- the request ---- */

/* c's deadline (web_late.c), or NULL. */
static struct web_late_conn *
late_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i = MHD_get_connection_info(c,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i != NULL ? i->socket_context : NULL;
}

/*
 * A connection opened: its request is due within WEB_REQUEST_S; or
 * closed, its descriptor not yet.
 */
static void
on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
    enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *i;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		web_late_close(*socket_ctx);
		*socket_ctx = NULL;
		return;
	}
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (i != NULL)
		*socket_ctx = web_late_open(cls, i->connect_fd);
}

static enum MHD_Result
serve_get(struct MHD_Connection *c, struct web_req *r)
{
	struct buf b = { 0 };

	if (strncmp(r->path, "/static/", 8) == 0)
		return send_static(c, r, r->path);
	if (strcmp(r->path, "/events") == 0)
		return send_stream(c, r);
	if (strcmp(r->path, "/metrics") == 0)
		return send_metrics(c, r);
	r->get = query_get;
	r->arg = c;
	return send_page(c, web_page_get(r, &b), &b);
}

static enum MHD_Result
serve_post(struct MHD_Connection *c, struct web_req *r, struct rq *q)
{
	struct buf b = { 0 };
	const char *why;
	char vis[1024];

	if (!r->w->actions)
		return send_error(c, r, MHD_HTTP_FORBIDDEN, "Read-only",
		    "This dashboard was started without --allow-actions.");
	if (q->too_big)
		return send_error(c, r, MHD_HTTP_CONTENT_TOO_LARGE, "Too large",
		    "A form of this dashboard is never that large.");
	r->get = form_get;
	r->arg = q;
	if (!form_parse(q))
		return send_error(c, r, MHD_HTTP_BAD_REQUEST, "Bad form",
		    "The form's fields could not be read.");
	if ((why = post_refused(c, r)) != NULL) {
		/*
		 * The path is decoded (%0A is a newline) and a page of
		 * another site chooses it: escaped as the journal's IDs are,
		 * so that it can forge no line.
		 */
		vis_name(r->path, vis, sizeof(vis));
		fprintf(stderr, "chute: web: %s refused: %s\n", vis, why);
		return send_error(c, r, MHD_HTTP_FORBIDDEN, "Refused", why);
	}
	return send_page(c, web_page_post(r, &b), &b);
}

/* A POST's body, taken as it comes; one byte more than allowed is too many. */
static void
take_body(struct rq *q, const char *data, size_t *size)
{
	if (q->body.len + *size > WEB_BODY_MAX)
		q->too_big = true;
	else
		buf_addn(&q->body, data, *size);
	*size = 0;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *size, void **ctx)
{
	struct web_req r = { .w = cls, .user = -1, .path = url };
	bool denied, post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
	struct rq *q = *ctx;

	if (q == NULL) {
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return MHD_NO;
		*ctx = q;
		return MHD_YES;
	}
	if (*size > 0) {
		take_body(q, upload, size);
		return MHD_YES;
	}
	web_late_whole(late_of(c));
	if (!post && strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_error(c, &r, MHD_HTTP_METHOD_NOT_ALLOWED,
		    "Not allowed", "GET, HEAD and POST only.");
	if (!host_ok(c, r.w))
		return send_error(c, &r, MHD_HTTP_MISDIRECTED_REQUEST,
		    "Not this host", "This dashboard answers to its loopback "
		    "address (or localhost) and port only.");
	r.user = who(c, r.w, &denied);
	if (denied)
		return send_challenge(c, &r);
	return post ? serve_post(c, &r, q) : serve_get(c, &r);
}

static void
on_done(void *cls, struct MHD_Connection *c, void **ctx,
    enum MHD_RequestTerminationCode why)
{
	struct rq *q = *ctx;

	web_late_again(late_of(c));
	if (q == NULL)
		return;
	buf_free(&q->body);
	free(q);
	*ctx = NULL;
}

/* libmicrohttpd's own lines, in the journal with ours. */
static void on_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static void
on_log(void *cls, const char *fmt, va_list ap)
{
	fprintf(stderr, "chute: web: ");
	vfprintf(stderr, fmt, ap);
}

struct web_http {
	struct MHD_Daemon	*d;
	struct web_late		*late;
};

/*
 * A thread per connection.  No limit per address: on loopback, where
 * the dashboard listens unless told otherwise, every client and a TLS
 * proxy in front share one, and the deadline of web_late.c is what frees
 * a place held by a slow client.
 */
struct web_http *
web_http_start(struct web *w, int fd)
{
	struct web_http *h = calloc(1, sizeof(*h));

	if (h == NULL || (h->late = web_late_start()) == NULL) {
		free(h);
		return NULL;
	}
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL | MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_request, w,
	    MHD_OPTION_EXTERNAL_LOGGER, on_log, w,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_CONN_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)WEB_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)WEB_CONN_MEM,
	    MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
	    MHD_OPTION_NOTIFY_COMPLETED, on_done, w,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, h->late,
	    MHD_OPTION_STRICT_FOR_CLIENT, 1,
	    MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		fprintf(stderr, "chute: web: libmicrohttpd did not start\n");
		web_late_stop(h->late);
		free(h);
		return NULL;
	}
	return h;
}

void
web_http_stop(struct web_http *h)
{
	/* Each connection forgets its deadline as it is closed. */
	MHD_stop_daemon(h->d);
	web_late_stop(h->late);
	free(h);
}
