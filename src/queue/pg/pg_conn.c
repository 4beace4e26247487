/*
 * pg_conn.c: one connection to the database, as libpq makes it, and what
 * may be printed about it.  The URI is parsed by libpq (every libpq
 * parameter and PG* variable works); its password never reaches a message,
 * a log line or a process title: only pg->name, rebuilt without it, does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"
#include "queue/pg/pg.h"

bool
pg_is_uri(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0;
}

/* The value of keyword in a parsed conninfo, or NULL. */
static const char *
opt(PQconninfoOption *o, const char *keyword)
{
	for (; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, keyword) == 0)
			return o->val && *o->val ? o->val : NULL;
	return NULL;
}

/* A list of the URI's (host=a,b) in dst, or "" (one value, or too long). */
static void
keep_list(char *dst, size_t n, const char *v)
{
	if (v == NULL || strchr(v, ',') == NULL || strlcpy(dst, v, n) >= n)
		*dst = '\0';
}

/*
 * The list src turned by k: its items from the k-th (modulo their number)
 * on, then those before it, in dst; NULL when src is "".
 */
static const char *
turn_list(const char *src, unsigned k, char *dst, size_t n)
{
	const char *p = src;
	unsigned items = 1;

	if (*src == '\0')
		return NULL;
	for (const char *c = src; (c = strchr(c, ',')) != NULL; c++)
		items++;
	for (k %= items; k > 0; k--)
		p = strchr(p, ',') + 1;
	if (p == src)
		snprintf(dst, n, "%s", src);
	else
		snprintf(dst, n, "%s,%.*s", p, (int)(p - 1 - src), src);
	return dst;
}

/*
 * What of uri may be a password, as libpq may quote it in a message: the
 * userinfo after its first ':' up to the last '@' before the query (whole,
 * and in the pieces libpq cuts it into when it ends the userinfo sooner,
 * at a '/' or an earlier '@', and quotes the rest as a host or a port),
 * and the value of each password= (or percent-encoded key) of the query.
 * out[i] points into uri, len[i] long; at most max.  Returns how many.
 */
static int
secrets(const char *uri, const char **out, size_t *len, int max)
{
	const char *a = strstr(uri, "://"), *q, *at = NULL, *p;
	int n = 0;

	if (a == NULL)
		return 0;
	a += 3;
	q = a + strcspn(a, "?");
	for (p = a; p < q; p++)
		if (*p == '@')
			at = p;
	if (at != NULL && (p = memchr(a, ':', (size_t)(at - a))) != NULL &&
	    p + 1 < at) {
		out[n] = ++p;
		len[n++] = (size_t)(at - p);
		for (; p < at && n < max; p++) {
			size_t k = strcspn(p, "/@:?#&=");

			if (p + k > at)
				k = (size_t)(at - p);
			if (k > 0) {
				out[n] = p;
				len[n++] = k;
			}
			p += k;
		}
	}
	for (p = q; *p != '\0' && n < max; p += strcspn(p, "&")) {
		const char *eq = strchr(++p, '=');
		size_t key = strcspn(p, "&");

		if (eq == NULL || (size_t)(eq - p) > key)
			continue;
		if (strncmp(p, "password=", 9) == 0 || memchr(p, '%', eq - p)) {
			out[n] = eq + 1;
			len[n] = strcspn(eq + 1, "&");
			n += len[n] > 0;
		}
	}
	return n;
}

/* text into buf with every secret of uri in it replaced by "***". */
static void
redact(const char *uri, const char *text, char *buf, size_t size)
{
	const char *sec[16];
	size_t len[16], o = 0;
	int n = secrets(uri, sec, len, 16);

	while (*text != '\0' && o + 4 < size) {
		size_t best = 0;

		for (int i = 0; i < n; i++)
			if (len[i] > best && strncmp(text, sec[i], len[i]) == 0)
				best = len[i];
		if (best > 0) {
			memcpy(buf + o, "***", 3);
			o += 3;
			text += best;
		} else
			buf[o++] = *text++;
	}
	buf[o] = '\0';
}

/* Does the percent-encoded s, n bytes, decode to plain?  */
static bool
decodes_to(const char *s, size_t n, const char *plain)
{
	size_t i = 0;
	unsigned x;

	for (; i < n && *plain != '\0'; plain++) {
		if (s[i] == '%' && i + 2 < n && sscanf(s + i + 1, "%2x", &x) == 1)
			i += 3;
		else
			x = (unsigned char)s[i++];
		if (x != (unsigned char)*plain)
			return false;
	}
	return i == n && *plain == '\0';
}

int
pg_parse(struct pg *pg, const char *uri, const char *queue)
{
	PQconninfoOption *o;
	const char *host, *port, *user, *db, *pw, *sec[1];
	char *err = NULL, msg[1024];
	size_t len[1];
	int n;

	memset(pg, 0, sizeof(*pg));
	if ((o = PQconninfoParse(uri, &err)) == NULL) {
		/* libpq's message may quote the URI, password and all. */
		redact(uri, err ? err : "out of memory\n", msg, sizeof(msg));
		fprintf(stderr, "chute: not a PostgreSQL URI: %s", msg);
		PQfreemem(err);
		return -1;
	}
	host = opt(o, "host");
	port = opt(o, "port");
	user = opt(o, "user");
	db = opt(o, "dbname");
	pw = opt(o, "password");
	snprintf(pg->name, sizeof(pg->name), "postgresql://%s%s%s%s%s/%s",
	    user ? user : "", user ? "@" : "", host ? host : "",
	    port ? ":" : "", port ? port : "", db ? db : "");
	/*
	 * libpq ends the userinfo at the first '/' or '@': a password holding
	 * one would be split, its pieces taken for a host or a port, and
	 * quoted by every message about them (and by the name).
	 */
	n = secrets(uri, sec, len, 1);
	if (n == 1 && sec[0][-1] == ':' && (pw == NULL ||
	    !decodes_to(sec[0], len[0], pw))) {
		strlcpy(msg, pg->name, sizeof(msg));
		redact(uri, msg, pg->name, sizeof(pg->name));
		fprintf(stderr, "chute: %s: not a PostgreSQL URI: its password "
		    "holds a '/' or an '@': percent-encode them (%%2F, %%40)\n",
		    pg->name);
		PQconninfoFree(o);
		return -1;
	}
	keep_list(pg->hosts, sizeof(pg->hosts), host);
	keep_list(pg->hostaddrs, sizeof(pg->hostaddrs), opt(o, "hostaddr"));
	keep_list(pg->ports, sizeof(pg->ports), port);
	PQconninfoFree(o);
	if (strlcpy(pg->queue, queue, sizeof(pg->queue)) >= sizeof(pg->queue) ||
	    !id_valid(queue)) {
		/* Escaped: a newline in the name must not forge a line. */
		fprintf(stderr, "chute: --queue %s: not a valid queue name (as "
		    "a job ID: 1-%zu bytes, no '/', no leading '.')\n",
		    vis_id(queue), sizeof(pg->queue) - 1);
		return -1;
	}
	if ((pg->uri = strdup(uri)) == NULL) {
		fprintf(stderr, "chute: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Wait until the connection's socket is ready for events, or the deadline
 * passes: then the connection is dropped (whatever the server does with
 * the statement, we will not wait for it) and -1 returned.  Without a
 * deadline (0) the server's statement_timeout and the TCP keepalives
 * bound the wait.
 */
static int
wait_io(struct pg *pg, short events)
{
	struct pollfd p = { .fd = PQsocket(pg->conn), .events = events };
	msec_t left = -1;
	int n;

	for (;;) {
		if (pg->deadline != 0 && (left = pg->deadline - mono_ms()) <= 0)
			break;
		if (p.fd == -1)
			break;
		if ((n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left)) > 0)
			return 0;
		if (n == -1 && errno != EINTR)
			break;
	}
	pg->late = pg->deadline != 0;
	pg_close(pg);
	errno = pg->late ? ETIMEDOUT : EIO;
	return -1;
}

void
pg_server_text(const char *msg, char *buf, size_t len)
{
	char line[512], *nl;

	strlcpy(line, msg, sizeof(line));
	while ((nl = strchr(line, '\n')) != NULL)
		*nl = nl[1] == '\0' ? '\0' : ' ';
	vis_text(line, buf, len);
}

/*
 * A notice or WARNING the server sends on pg's connection: one line on
 * stderr, escaped, where libpq's own processor printed it as it came.
 * Those who say things otherwise (a worker's journal, top's screen) set
 * their own.
 */
static void
notice(void *arg, const char *msg)
{
	const struct pg *pg = arg;
	char text[4 * 512 + 1];

	pg_server_text(msg, text, sizeof(text));
	fprintf(stderr, "chute: %s: %s\n", pg->name, text);
}

/* PQconnectdbParams, but with poll(2) and the deadline (libpq's docs). */
static int
connect_by(struct pg *pg, const char *const *keys, const char *const *vals)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;

	pg->late = false;
	if ((pg->conn = PQconnectStartParams(keys, vals, 1)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	PQsetNoticeProcessor(pg->conn, notice, pg);
	while (st != PGRES_POLLING_OK) {
		if (PQstatus(pg->conn) == CONNECTION_BAD ||
		    st == PGRES_POLLING_FAILED)
			return -1;
		if (wait_io(pg, st == PGRES_POLLING_READING ? POLLIN :
		    POLLOUT) == -1)
			return -1;
		st = PQconnectPoll(pg->conn);
	}
	/* PQsend* never block on a full socket buffer: wait_io does. */
	if (PQsetnonblocking(pg->conn, 1) == -1)
		return -1;
	return 0;
}

int
pg_connect(struct pg *pg, bool listen, msec_t stmt_ms)
{
	static const char *const keys[] = {
		"connect_timeout", "keepalives", "keepalives_idle",
		"keepalives_interval", "keepalives_count", "tcp_user_timeout",
		"application_name", "options", "dbname",
		"host", "hostaddr", "port", NULL,	/* after dbname: these win */
	};
	char timeout[16], opts[192], tcp[24];
	char host[sizeof(pg->hosts)], addr[sizeof(pg->hostaddrs)];
	char port[sizeof(pg->ports)];
	unsigned k = pg->connects++;
	msec_t ms = stmt_ms > 0 ? stmt_ms : PG_STATEMENT_MS;
	const char *vals[sizeof(keys) / sizeof(keys[0])];

	pg_close(pg);
	strlcpy(pg->state, "00000", sizeof(pg->state));	/* nothing failed */
	snprintf(timeout, sizeof(timeout), "%d", PG_CONNECT_SECS);
	/*
	 * A worker's statements are short, and never worth compiling: under
	 * 200 tables inheriting chute.live, a claim of one job whose plan's
	 * cost passed jit_above_cost spent 23 s in LLVM (the age-order claim
	 * of schema version 8), past the worker's deadline, every time.
	 */
	snprintf(opts, sizeof(opts), "-c statement_timeout=%lld "
	    "-c idle_in_transaction_session_timeout=%d "
	    "-c client_min_messages=warning%s", (long long)ms,
	    PG_STATEMENT_MS, pg->prepare ?
	    " -c plan_cache_mode=force_generic_plan -c jit=off" : "");
	snprintf(tcp, sizeof(tcp), "%lld", (long long)ms);
	vals[0] = timeout;
	vals[1] = "1";
	vals[2] = "5";
	vals[3] = "2";
	vals[4] = "3";
	vals[5] = tcp;
	vals[6] = listen ? "chute-worker" : "chute";
	vals[7] = opts;
	vals[8] = pg->uri;
	/* Several hosts: each try starts one further along (pg.h). */
	vals[9] = turn_list(pg->hosts, k, host, sizeof(host));
	vals[10] = turn_list(pg->hostaddrs, k, addr, sizeof(addr));
	vals[11] = turn_list(pg->ports, k, port, sizeof(port));
	vals[12] = NULL;
	if (pg->deadline != 0)
		return connect_by(pg, keys, vals);
	pg->conn = PQconnectdbParams(keys, vals, 1);
	if (pg->conn == NULL) {
		errno = ENOMEM;
		return -1;
	}
	/* Once made: a notice during the handshake (none that a trigger or
	 * a policy can raise) went to libpq's own processor. */
	PQsetNoticeProcessor(pg->conn, notice, pg);
	if (PQstatus(pg->conn) != CONNECTION_OK)
		return -1;
	return 0;
}

void
pg_close(struct pg *pg)
{
	if (pg->conn != NULL)
		PQfinish(pg->conn);
	pg->conn = NULL;
	pg->nprep = 0;		/* prepared statements die with their session */
}

bool
pg_ok(struct pg *pg)
{
	return pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_OK;
}

const char *
pg_error(struct pg *pg)
{
	static char buf[4 * 512 + 1];

	if (pg->conn == NULL && pg->late)
		return "no reply in time (the worker's own deadline, "
		    "under its lease): connection dropped";
	if (pg->conn == NULL)
		return strerror(errno ? errno : ENOMEM);
	pg_server_text(PQerrorMessage(pg->conn), buf, sizeof(buf));
	return buf[0] ? buf : "unknown error";
}

/*
 * Sent: flush what libpq could not write at once, then collect the
 * results, waiting on the socket no later than the deadline.  With
 * several statements (the simple protocol) the first failure is kept.
 */
static PGresult *
await(struct pg *pg)
{
	PGresult *r, *kept = NULL;
	int f;

	while ((f = PQflush(pg->conn)) == 1)
		if (wait_io(pg, POLLIN | POLLOUT) == -1 ||
		    PQconsumeInput(pg->conn) == 0)
			return NULL;
	if (f == -1)
		return NULL;
	for (;;) {
		while (PQisBusy(pg->conn))
			if (wait_io(pg, POLLIN) == -1 ||
			    PQconsumeInput(pg->conn) == 0)
				goto broken;
		if ((r = PQgetResult(pg->conn)) == NULL)
			return kept;
		if (kept != NULL && PQresultStatus(kept) == PGRES_FATAL_ERROR) {
			PQclear(r);	/* the first failure stands */
			continue;
		}
		PQclear(kept);
		kept = r;
	}
broken:
	PQclear(kept);
	return NULL;
}

ExecStatusType
pg_result(struct pg *pg, const PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);
	const char *state;

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		state = "00000";
	else if (r == NULL || (state = PQresultErrorField(r,
	    PG_DIAG_SQLSTATE)) == NULL)
		state = "";
	strlcpy(pg->state, state, sizeof(pg->state));
	return st;
}

/*
 * With pg->prepare, the name sql has on this connection, prepared now if
 * it was not (one round trip, once per connection).  Returns 1 (name
 * set), 0 (not prepared: send it unnamed), or -1 (the prepare failed:
 * pg_result kept why, as the statement's own failure would have).
 */
static int
prepared(struct pg *pg, const char *sql, int n, const Oid *types,
    char name[16])
{
	PGresult *r;
	int i;

	for (i = 0; i < pg->nprep && pg->prep[i] != sql; i++)
		;
	snprintf(name, 16, "chute%d", i);
	if (i < pg->nprep)
		return 1;
	if (!pg->prepare || i == PG_PREPARED)
		return 0;
	r = PQsendPrepare(pg->conn, name, sql, n, types) ? await(pg) : NULL;
	if (pg_result(pg, r) != PGRES_COMMAND_OK) {
		PQclear(r);
		return -1;
	}
	PQclear(r);
	pg->prep[pg->nprep++] = sql;
	return 1;
}

/*
 * Run one statement with text parameters (never a string built from
 * input), or, without parameters, the statements of a fixed text; results
 * in text, or in binary (bin).  Returns the result of a successful
 * statement, or NULL (pg_error says why).
 */
static PGresult *
run(struct pg *pg, const char *sql, int n, const char *const *params,
    int bin)
{
	PGresult *r;
	ExecStatusType st;
	char name[16];
	int sent, k = 0;

	if (pg->conn == NULL)
		return NULL;
	if ((n > 0 || bin) && (k = prepared(pg, sql, n, NULL, name)) == -1)
		return NULL;
	if (k == 1) {
		if (pg->deadline == 0)
			r = PQexecPrepared(pg->conn, name, n, params, NULL,
			    NULL, bin);
		else
			r = PQsendQueryPrepared(pg->conn, name, n, params,
			    NULL, NULL, bin) ? await(pg) : NULL;
	} else if (pg->deadline == 0) {
		/* No parameters: the simple protocol (several statements). */
		if (n == 0 && !bin)
			r = PQexec(pg->conn, sql);
		else
			r = PQexecParams(pg->conn, sql, n, NULL, params, NULL,
			    NULL, bin);
	} else {
		if (n == 0 && !bin)
			sent = PQsendQuery(pg->conn, sql);
		else
			sent = PQsendQueryParams(pg->conn, sql, n, NULL, params,
			    NULL, NULL, bin);
		r = sent ? await(pg) : NULL;
	}
	st = pg_result(pg, r);
	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	PQclear(r);
	return NULL;
}

/*
 * A statement's failure that trying again later can cure: no result at
 * all, or the server going away or short of resources while the
 * connection still looked up (class 08, connection exception; 57P01-03,
 * shut down, crashed or starting up; 57014, the statement timed out on a
 * hung or overloaded server; 53, insufficient resources; 40001 and 40P01,
 * serialization failure and deadlock; 25006, a read-only transaction: a
 * standby, or a primary being demoted, reached instead of the primary).
 */
static bool
transient(const char *state)
{
	return state[0] == '\0' || strncmp(state, "08", 2) == 0 ||
	    strcmp(state, PG_READ_ONLY) == 0 ||
	    strncmp(state, "57P", 3) == 0 || strcmp(state, "57014") == 0 ||
	    strncmp(state, "53", 2) == 0 || strcmp(state, "40001") == 0 ||
	    strcmp(state, "40P01") == 0;
}

PGresult *
pg_exec(struct pg *pg, const char *sql, int n, const char *const *params)
{
	return run(pg, sql, n, params, 0);
}

PGresult *
pg_exec_bin(struct pg *pg, const char *sql, int n, const char *const *params)
{
	return run(pg, sql, n, params, 1);
}

/*
 * A statement sent without waiting for its reply is written whole first.
 * On a nonblocking connection libpq keeps what the socket did not take,
 * and only a PQflush sends it: the owner's loop polls the socket for its
 * reply alone, so a large outcome batch left half written sat there, the
 * server waiting for the rest and the worker for the reply, until the
 * next timed statement flushed it (seven seconds of nothing, in about one
 * drain of 100,000 jobs in four).  0, or -1 (the connection is closed).
 */
static int
sent_whole(struct pg *pg, int sent)
{
	int f;

	if (!sent)
		return -1;
	while ((f = PQflush(pg->conn)) == 1)
		if (wait_io(pg, POLLIN | POLLOUT) == -1 ||
		    PQconsumeInput(pg->conn) == 0)
			return -1;
	return f == -1 ? -1 : 0;
}

int
pg_send(struct pg *pg, const char *sql, int n, const Oid *types,
    const char *const *params, const int *lens, const int *fmts)
{
	char name[16];
	int k;

	if (pg->conn == NULL || (k = prepared(pg, sql, n, types, name)) == -1)
		return -1;
	if (k == 1)
		return sent_whole(pg, PQsendQueryPrepared(pg->conn, name, n,
		    params, lens, fmts, 0));
	return sent_whole(pg, PQsendQueryParams(pg->conn, sql, n, types,
	    params, lens, fmts, 0));
}

int
pg_send_bin(struct pg *pg, const char *sql, int n, const char *const *params)
{
	char name[16];
	int k;

	if (pg->conn == NULL || (k = prepared(pg, sql, n, NULL, name)) == -1)
		return -1;
	if (k == 1)
		return sent_whole(pg, PQsendQueryPrepared(pg->conn, name, n,
		    params, NULL, NULL, 1));
	return sent_whole(pg, PQsendQueryParams(pg->conn, sql, n, NULL,
	    params, NULL, NULL, 1));
}

PGresult *
pg_await(struct pg *pg)
{
	return pg->conn != NULL ? await(pg) : NULL;
}

/* ---- array parameters, in PostgreSQL's binary format ---- */

static void
put32(char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static char *
arr_room(struct pg_arr *a, size_t n)
{
	if (a->len + n > a->cap) {
		size_t cap = a->cap ? a->cap : 4096;
		char *b;

		while (cap < a->len + n)
			cap *= 2;
		if ((b = realloc(a->b, cap)) == NULL)
			return NULL;
		a->b = b;
		a->cap = cap;
	}
	a->len += n;
	return a->b + a->len - n;
}

void
pg_arr_begin(struct pg_arr *a, uint32_t oid)
{
	a->len = 0;
	a->n = 0;
	if (arr_room(a, 20) == NULL)
		return;
	put32(a->b, 1);		/* dimensions */
	put32(a->b + 4, 0);	/* no NULLs */
	put32(a->b + 8, oid);
	put32(a->b + 12, 0);	/* its length, set by pg_arr_end */
	put32(a->b + 16, 1);	/* lower bound */
}

char *
pg_arr_elem(struct pg_arr *a, size_t len)
{
	char *p;

	if (a->b == NULL || (p = arr_room(a, 4 + len)) == NULL)
		return NULL;
	put32(p, (uint32_t)len);
	a->n++;
	return p + 4;
}

int
pg_arr_str(struct pg_arr *a, const char *s)
{
	size_t n = strlen(s);
	char *p = pg_arr_elem(a, n);

	if (p == NULL)
		return -1;
	memcpy(p, s, n);
	return 0;
}

void
pg_arr_shrink(struct pg_arr *a, size_t len, size_t got)
{
	put32(a->b + a->len - len - 4, (uint32_t)got);
	a->len -= len - got;
}

void
pg_arr_end(struct pg_arr *a)
{
	if (a->b != NULL)
		put32(a->b + 12, (uint32_t)a->n);
}

static void
tarr_put(struct pg_tarr *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((p = realloc(b->p, cap)) == NULL) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
pg_tarr_add(struct pg_tarr *b, const char *s)
{
	size_t n;

	tarr_put(b, b->len == 0 ? "{\"" : ",\"", 2);
	/* The runs between a " and a \ are copied whole: an outcome's log,
	 * a few hundred hex digits per job, goes through here. */
	for (; *s != '\0'; s += n) {
		if ((n = strcspn(s, "\"\\")) == 0) {
			tarr_put(b, "\\", 1);
			n = 1;
		}
		tarr_put(b, s, n);
	}
	tarr_put(b, "\"", 1);
}

const char *
pg_tarr_end(struct pg_tarr *b)
{
	tarr_put(b, b->len == 0 ? "{}" : "}", b->len == 0 ? 2 : 1);
	return b->oom ? NULL : b->p;
}

char *
pg_text_array(const char *const *v, int n)
{
	struct pg_tarr b = { 0 };

	for (int i = 0; i < n; i++)
		pg_tarr_add(&b, v[i]);
	if (pg_tarr_end(&b) == NULL) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

int
pg_cmd(struct pg *pg, const char *sql, int n, const char *const *params)
{
	PGresult *r = pg_exec(pg, sql, n, params);

	if (r == NULL)
		return -1;
	PQclear(r);
	return 0;
}

int
pg_fail(struct pg *pg, const char *what)
{
	char msg[1024];
	int rc = pg_fail_msg(pg, what, msg, sizeof(msg));

	fprintf(stderr, "chute: %s\n", msg);
	return rc;
}

int
pg_fail_msg(struct pg *pg, const char *what, char *msg, size_t len)
{
	snprintf(msg, len, "%s: %s: %s", pg->name, what, pg_error(pg));
	if (pg->conn == NULL)
		return EX_TEMPFAIL;
	if (PQstatus(pg->conn) != CONNECTION_OK) {
		if (PQconnectionNeedsPassword(pg->conn) ||
		    PQconnectionUsedPassword(pg->conn))
			return EX_NOPERM;
		return EX_TEMPFAIL;
	}
	return transient(pg->state) ? EX_TEMPFAIL : EX_IOERR;
}
