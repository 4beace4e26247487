/*
 * cdp.c: a small DevTools-protocol client, so that tests/web.sh can drive
 * a real browser (Debian's headless Chromium) without anything from npm.
 * It starts `CHROMIUM --headless --remote-debugging-pipe` (the protocol's
 * JSON messages, each ended by a NUL, on descriptors 3 and 4), opens one
 * page, and then reads commands on stdin, one per line, answering each
 * with exactly one line on stdout:
 *
 *   auth USER PASS    answer every HTTP auth challenge with these ("ok")
 *   open URL          go there and wait for the load event ("ok")
 *   eval EXPR         the value of a JavaScript expression in the page,
 *                     as text (a string as it is, newlines as \n)
 *   wait MS EXPR      EXPR every 50 ms until it is true ("ok"), for MS
 *                     at most ("timeout")
 *   requests          every URL the page asked for so far, space-separated
 *   dialogs           how many alert/confirm/prompt dialogs opened (each
 *                     is dismissed at once)
 *   quit              end
 *
 * Errors answer "error: ...".  Every wait has a bound; nothing sleeps
 * but between the polls of "wait".  Requests go to loopback only: every
 * other host name resolves to nothing (--host-resolver-rules).
 */
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REPLY_MS	15000	/* a command's answer from the browser, at most */
#define MSG_MAX		(8 << 20)

static int to_fd = -1, from_fd = -1;
static pid_t browser;
static char *inbuf;
static size_t inlen, incap;
static int next_id = 1;
static char session[128];
static char user[256], pass[256];
static bool loaded;
static int dialogs;
static char *urls;		/* the requests' URLs, space-separated */
static size_t urlslen;

static long long
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- JSON: just enough to find a value by its path ---- */

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *skip_value(const char *p);

static const char *
skip_string(const char *p)
{
	for (p++; *p != '\0' && *p != '"'; p++)
		if (*p == '\\' && p[1] != '\0')
			p++;
	return *p == '"' ? p + 1 : p;
}

static const char *
skip_container(const char *p, char close)
{
	p = skip_ws(p + 1);
	while (*p != '\0' && *p != close) {
		if (close == '}') {
			p = skip_ws(skip_string(skip_ws(p)));
			if (*p == ':')
				p++;
		}
		p = skip_ws(skip_value(skip_ws(p)));
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	return *p == close ? p + 1 : p;
}

static const char *
skip_value(const char *p)
{
	p = skip_ws(p);
	if (*p == '"')
		return skip_string(p);
	if (*p == '{')
		return skip_container(p, '}');
	if (*p == '[')
		return skip_container(p, ']');
	while (*p != '\0' && *p != ',' && *p != '}' && *p != ']')
		p++;
	return p;
}

/* The value at path ("a.b.c") in the object at p, or NULL. */
static const char *
find(const char *p, const char *path)
{
	size_t klen = strcspn(path, ".");

	p = skip_ws(p);
	if (*p != '{')
		return NULL;
	p = skip_ws(p + 1);
	while (*p == '"') {
		const char *k = p + 1, *end = skip_string(p);
		bool match = (size_t)(end - 1 - k) == klen &&
		    strncmp(k, path, klen) == 0;

		p = skip_ws(end);
		if (*p++ != ':')
			return NULL;
		p = skip_ws(p);
		if (match)
			return path[klen] == '\0' ? p : find(p, path + klen + 1);
		p = skip_ws(skip_value(p));
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	return NULL;
}

static void
put_utf8(char **o, unsigned c)
{
	if (c < 0x80)
		*(*o)++ = (char)c;
	else if (c < 0x800) {
		*(*o)++ = (char)(0xc0 | c >> 6);
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*(*o)++ = (char)(0xe0 | c >> 12);
		*(*o)++ = (char)(0x80 | (c >> 6 & 0x3f));
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	} else {
		*(*o)++ = (char)(0xf0 | c >> 18);
		*(*o)++ = (char)(0x80 | (c >> 12 & 0x3f));
		*(*o)++ = (char)(0x80 | (c >> 6 & 0x3f));
		*(*o)++ = (char)(0x80 | (c & 0x3f));
	}
}

/* The JSON value at v as text: a string decoded (malloc'd), else as is. */
static char *
text_of(const char *v)
{
	const char *end = skip_value(v);
	char *out = malloc((size_t)(end - v) * 2 + 8), *o = out;

	if (out == NULL)
		return NULL;
	if (*v != '"') {
		memcpy(out, v, (size_t)(end - v));
		out[end - v] = '\0';
		return out;
	}
	for (const char *p = v + 1; p < end - 1; p++) {
		unsigned c, lo;

		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *o++ = '\n'; break;
		case 't': *o++ = '\t'; break;
		case 'r': *o++ = '\r'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'u':
			if (sscanf(p + 1, "%4x", &c) != 1)
				break;
			p += 4;
			if (c >= 0xd800 && c < 0xdc00 && p[1] == '\\' &&
			    p[2] == 'u' && sscanf(p + 3, "%4x", &lo) == 1) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			put_utf8(&o, c);
			break;
		default: *o++ = *p; break;
		}
	}
	*o = '\0';
	return out;
}

/* The string at path of msg, into buf; "" when it is not there. */
static void
get(const char *msg, const char *path, char *buf, size_t len)
{
	const char *v = find(msg, path);
	char *t = v != NULL ? text_of(v) : NULL;

	snprintf(buf, len, "%s", t != NULL ? t : "");
	free(t);
}

/* s as a JSON string, quoted, into a malloc'd buffer. */
static char *
quote(const char *s)
{
	char *out = malloc(strlen(s) * 6 + 3), *o = out;

	if (out == NULL)
		return NULL;
	*o++ = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\') {
			*o++ = '\\';
			*o++ = (char)*p;
		} else if (*p < 0x20)
			o += sprintf(o, "\\u%04x", *p);
		else
			*o++ = (char)*p;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

/* ---- the pipe ---- */

static int
send_raw(const char *msg)
{
	size_t len = strlen(msg) + 1, off = 0;

	while (off < len) {
		ssize_t n = write(to_fd, msg + off, len - off);

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

/* Send method with params (a JSON object's text) on our page; its id. */
static int
send_cmd(const char *method, const char *params, bool page)
{
	char *msg;
	int id = next_id++;

	if (asprintf(&msg, "{\"id\":%d,%s%s%s\"method\":\"%s\",\"params\":%s}",
	    id, page ? "\"sessionId\":\"" : "", page ? session : "",
	    page ? "\"," : "", method, params) == -1)
		return -1;
	if (send_raw(msg) == -1)
		id = -1;
	free(msg);
	return id;
}

/* The next whole message (malloc'd), waiting until deadline; NULL if none. */
static char *
next_msg(long long deadline)
{
	for (;;) {
		char *nul = inlen > 0 ? memchr(inbuf, '\0', inlen) : NULL;
		struct pollfd p = { .fd = from_fd, .events = POLLIN };
		long long left = deadline - ms_now();
		ssize_t n;

		if (nul != NULL) {
			size_t k = (size_t)(nul - inbuf) + 1;
			char *m = strdup(inbuf);

			memmove(inbuf, inbuf + k, inlen - k);
			inlen -= k;
			return m;
		}
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		if (inlen + 65536 > incap) {
			if (incap > MSG_MAX)
				return NULL;
			incap = incap ? incap * 2 : 1 << 20;
			if ((inbuf = realloc(inbuf, incap)) == NULL)
				return NULL;
		}
		if ((n = read(from_fd, inbuf + inlen, incap - inlen)) <= 0)
			return NULL;
		inlen += (size_t)n;
	}
}

static void
add_url(const char *u)
{
	size_t n = strlen(u);
	char *p = realloc(urls, urlslen + n + 2);

	if (p == NULL)
		return;
	urls = p;
	if (urlslen > 0)
		urls[urlslen++] = ' ';
	memcpy(urls + urlslen, u, n + 1);
	urlslen += n;
}

/* An event: paused requests go on (noted), auth is answered, dialogs shut. */
static void
on_event(const char *msg, const char *method)
{
	char rid[256], buf[4096], *qu, *qp;

	get(msg, "params.requestId", rid, sizeof(rid));
	if (strcmp(method, "Fetch.requestPaused") == 0) {
		get(msg, "params.request.url", buf, sizeof(buf));
		add_url(buf);
		snprintf(buf, sizeof(buf), "{\"requestId\":\"%s\"}", rid);
		send_cmd("Fetch.continueRequest", buf, true);
	} else if (strcmp(method, "Fetch.authRequired") == 0) {
		qu = quote(user);
		qp = quote(pass);
		snprintf(buf, sizeof(buf), "{\"requestId\":\"%s\","
		    "\"authChallengeResponse\":{\"response\":\"%s\","
		    "\"username\":%s,\"password\":%s}}", rid, user[0] ?
		    "ProvideCredentials" : "CancelAuth", qu ? qu : "\"\"",
		    qp ? qp : "\"\"");
		free(qu);
		free(qp);
		send_cmd("Fetch.continueWithAuth", buf, true);
	} else if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
		dialogs++;
		send_cmd("Page.handleJavaScriptDialog", "{\"accept\":false}",
		    true);
	} else if (strcmp(method, "Page.loadEventFired") == 0)
		loaded = true;
}

/* Wait for the answer to command id, handling events meanwhile. */
static char *
await(int id, long long deadline)
{
	char *m, method[128], idbuf[32];

	while ((m = next_msg(deadline)) != NULL) {
		get(m, "method", method, sizeof(method));
		if (method[0] != '\0') {
			on_event(m, method);
			free(m);
			continue;
		}
		get(m, "id", idbuf, sizeof(idbuf));
		if (atoi(idbuf) == id)
			return m;
		free(m);
	}
	return NULL;
}

/* Run a command and wait for its answer; NULL on a timeout or an error. */
static char *
call(const char *method, const char *params, bool page)
{
	int id = send_cmd(method, params, page);
	char *m, err[512];

	if (id == -1 || (m = await(id, ms_now() + REPLY_MS)) == NULL)
		return NULL;
	get(m, "error.message", err, sizeof(err));
	if (err[0] != '\0') {
		fprintf(stderr, "cdp: %s: %s\n", method, err);
		free(m);
		return NULL;
	}
	return m;
}

/* ---- the commands ---- */

static int
start(const char *chromium, const char *dir)
{
	int down[2], up[2];
	char prof[4096];
	char *m, *params;

	if (pipe2(down, O_CLOEXEC) == -1 || pipe2(up, O_CLOEXEC) == -1)
		return -1;
	snprintf(prof, sizeof(prof), "--user-data-dir=%s", dir);
	if ((browser = fork()) == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		/*
		 * The protocol's descriptors: 3 it reads, 4 it writes.
		 * Copied above them first: a pipe end that already is 3 or
		 * 4 would keep its close-on-exec through dup2.
		 */
		int rd = fcntl(down[0], F_DUPFD, 10), wr = fcntl(up[1],
		    F_DUPFD, 10);

		dup2(rd, 3);
		dup2(wr, 4);
		if (devnull != -1)
			dup2(devnull, 2);
		execl(chromium, chromium, "--headless", "--no-sandbox",
		    "--disable-gpu", "--remote-debugging-pipe", prof,
		    "--no-first-run", "--no-default-browser-check",
		    "--disable-background-networking", "--disable-sync",
		    "--disable-component-update", "--disable-extensions",
		    "--disable-features=Translate,MediaRouter",
		    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		    "--window-size=1000,800", "about:blank", (char *)NULL);
		_exit(127);
	}
	close(down[0]);
	close(up[1]);
	to_fd = down[1];
	from_fd = up[0];
	if ((m = call("Target.createTarget", "{\"url\":\"about:blank\"}",
	    false)) == NULL)
		return -1;
	get(m, "result.targetId", prof, sizeof(prof));
	free(m);
	if (asprintf(&params, "{\"targetId\":\"%s\",\"flatten\":true}",
	    prof) == -1 || (m = call("Target.attachToTarget", params,
	    false)) == NULL)
		return -1;
	free(params);
	get(m, "result.sessionId", session, sizeof(session));
	free(m);
	m = call("Page.enable", "{}", true);
	free(m);
	return session[0] != '\0' && m != NULL ? 0 : -1;
}

static void reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
reply(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
cmd_auth(char *args)
{
	char *sp = strchr(args, ' ');
	char *m;

	if (sp == NULL) {
		reply("error: auth USER PASS");
		return;
	}
	*sp = '\0';
	snprintf(user, sizeof(user), "%s", args);
	snprintf(pass, sizeof(pass), "%s", sp + 1);
	m = call("Fetch.enable", "{\"handleAuthRequests\":true,"
	    "\"patterns\":[{\"urlPattern\":\"*\"}]}", true);
	reply(m != NULL ? "ok" : "error: Fetch.enable");
	free(m);
}

static void
cmd_open(const char *url)
{
	char *q = quote(url), *params = NULL, *m;
	long long deadline = ms_now() + REPLY_MS;

	loaded = false;
	if (q == NULL || asprintf(&params, "{\"url\":%s}", q) == -1 ||
	    (m = call("Page.navigate", params, true)) == NULL) {
		free(q);
		free(params);
		reply("error: Page.navigate");
		return;
	}
	free(m);
	free(q);
	free(params);
	while (!loaded && (m = next_msg(deadline)) != NULL) {
		char method[128];

		get(m, "method", method, sizeof(method));
		if (method[0] != '\0')
			on_event(m, method);
		free(m);
	}
	reply(loaded ? "ok" : "error: no load event");
}

/* EXPR's value as text (malloc'd), or NULL. */
static char *
evaluate(const char *expr)
{
	char *q = quote(expr), *params = NULL, *m, *v = NULL;
	const char *val;

	if (q != NULL && asprintf(&params, "{\"expression\":%s,"
	    "\"returnByValue\":true,\"awaitPromise\":true}", q) != -1 &&
	    (m = call("Runtime.evaluate", params, true)) != NULL) {
		if (find(m, "result.exceptionDetails") == NULL &&
		    (val = find(m, "result.result.value")) != NULL)
			v = text_of(val);
		free(m);
	}
	free(q);
	free(params);
	return v;
}

static void
cmd_eval(const char *expr)
{
	char *v = evaluate(expr);

	if (v == NULL) {
		reply("error: no value");
		return;
	}
	for (char *p = v; *p; p++)
		if (*p == '\n')
			*p = ' ';
	reply("%s", v);
	free(v);
}

static void
cmd_wait(char *args)
{
	long long deadline = ms_now() + atoi(args);
	char *expr = strchr(args, ' '), *v;
	bool ok = false;

	if (expr == NULL) {
		reply("error: wait MS EXPR");
		return;
	}
	for (;;) {
		v = evaluate(expr + 1);
		ok = v != NULL && strcmp(v, "true") == 0;
		free(v);
		if (ok || ms_now() >= deadline)
			break;
		/* Events between the polls: a navigation, an auth challenge. */
		free(await(-1, ms_now() + 50));
	}
	reply(ok ? "ok" : "timeout");
}

static void
run(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (strncmp(line, "auth ", 5) == 0)
			cmd_auth(line + 5);
		else if (strncmp(line, "open ", 5) == 0)
			cmd_open(line + 5);
		else if (strncmp(line, "eval ", 5) == 0)
			cmd_eval(line + 5);
		else if (strncmp(line, "wait ", 5) == 0)
			cmd_wait(line + 5);
		else if (strcmp(line, "requests") == 0)
			reply("%s", urls != NULL ? urls : "");
		else if (strcmp(line, "dialogs") == 0)
			reply("%d", dialogs);
		else if (strcmp(line, "quit") == 0)
			break;
		else
			reply("error: unknown command");
	}
	free(line);
}

int
main(int argc, char **argv)
{
	int status;

	if (argc != 3) {
		fprintf(stderr, "usage: cdp CHROMIUM PROFILE-DIR < commands\n");
		return 64;
	}
	signal(SIGPIPE, SIG_IGN);
	if (start(argv[1], argv[2]) == -1) {
		reply("error: the browser did not start");
		if (browser > 0)
			kill(browser, SIGKILL);
		return 69;
	}
	reply("ready");
	run();
	free(call("Browser.close", "{}", false));
	close(to_fd);
	/* Browser.close ends it; one that hangs is killed. */
	for (long long end = ms_now() + 5000; ms_now() < end; ) {
		if (waitpid(browser, &status, WNOHANG) == browser)
			return 0;
		poll(NULL, 0, 50);
	}
	kill(browser, SIGKILL);
	waitpid(browser, &status, 0);
	return 0;
}
