/*
 * web_main.c: chute-web's main, `chute web SPOOL|URL`: the options, the
 * store opened, the listening socket, then the main thread's loop
 * (web_live.c) while libmicrohttpd's threads serve the requests.  SIGTERM
 * or SIGINT ends it: the streams are closed, the threads joined, exit 0.
 */
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/notify.h"
#include "base/sigfd.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/store.h"
#include "chute-web/web.h"

struct opts {
	const char	*target;	/* SPOOL or URL */
	const char	*listen;
	const char	*auth;		/* --auth-file */
	const char	*queue;		/* NULL: not given */
	bool		 actions;
};

static int web_cmd(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "web", web_cmd, "SPOOL|URL --auth-file FILE [--queue NAME]"
	    " [--listen ADDR:PORT] [--allow-actions]" },
};

/* ---- the command line ---- */

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "auth-file", required_argument, NULL, 'a' },
		{ "allow-actions", no_argument, NULL, 'x' },
		{ "queue", required_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->listen = WEB_LISTEN;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		switch (c) {
		case 'l': o->listen = optarg; break;
		case 'a': o->auth = optarg; break;
		case 'x': o->actions = true; break;
		case 'q': o->queue = optarg; break;
		default:
			return usage_error("web", "bad option: %s",
			    argv[optind - 1]);
		}
	if (optind != argc - 1)
		return usage_error("web", "want one SPOOL or URL");
	o->target = argv[optind];
	/*
	 * No way around it: the pages show every job's ID, state and log to
	 * whoever reaches the port, 127.0.0.1's included (any local user),
	 * while chute makes a spool's files 0600 or 0640 and a queue's
	 * database asks for a password.  A switch to serve without one
	 * would be sound only for a spool every local user may read, and
	 * chute makes none: its logs are its owner's (and group's) whatever
	 * its directories' modes.
	 */
	if (o->auth == NULL)
		return usage_error("web", "want --auth-file FILE (lines "
		    "user:HASH): the dashboard shows jobs and their logs only "
		    "to its users, and a password never goes on the command "
		    "line");
	if (o->queue != NULL && !cmd_is_pg_uri(o->target))
		return usage_error("web", "--queue is for a postgresql:// URI");
	return 0;
}

/* ---- the socket ---- */

static bool
is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr.s_addr) >> 24 == 127;
	return sa->sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(
	    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
}

/* "ADDR:PORT" or "[ADDR6]:PORT" into host and port; false if not that. */
static bool
split_listen(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':');
	size_t n;

	if (colon == NULL || colon[1] == '\0' || strlen(colon + 1) >= plen ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return false;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= hlen)
		return false;
	memcpy(host, s, n);
	host[n] = '\0';
	strcpy(port, colon + 1);
	return true;
}

/* Port 0 is the kernel's choice: the one it made, for Host and the log. */
static int
port_of(int fd, struct web *w, int *rc)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	unsigned port;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1) {
		fprintf(stderr, "chute: web: getsockname: %s\n", strerror(errno));
		close(fd);
		*rc = EX_SOFTWARE;
		return -1;
	}
	port = ss.ss_family == AF_INET6 ?
	    ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) :
	    ntohs(((struct sockaddr_in *)&ss)->sin_port);
	snprintf(w->port, sizeof(w->port), "%u", port);
	return fd;
}

static int
bind_status(int e)
{
	return e == EACCES ? EX_NOPERM : e == EADDRINUSE ? EX_TEMPFAIL :
	    EX_IOERR;
}

/* A socket listening on spec, close-on-exec.  -1 after saying why (*rc). */
static int
listen_on(const char *spec, struct web *w, int *rc)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
	    .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai;
	char host[256];
	int fd, one = 1, e;

	*rc = EX_USAGE;
	if (!split_listen(spec, host, sizeof(host), w->port, sizeof(w->port)) ||
	    atoi(w->port) > 65535)
		return usage_error("web", "--listen %s: want ADDR:PORT", spec), -1;
	if ((e = getaddrinfo(host, w->port, &hints, &ai)) != 0) {
		fprintf(stderr, "chute: web: --listen %s: %s\n", spec,
		    gai_strerror(e));
		return -1;
	}
	w->loopback = is_loopback(ai->ai_addr);
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) == -1 || (ai->ai_family == AF_INET6 && setsockopt(fd,
	    IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) == -1) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 ||
	    listen(fd, WEB_CONN_MAX) == -1) {
		e = errno;
		fprintf(stderr, "chute: web: %s: %s\n", spec, strerror(e));
		if (fd != -1)
			close(fd);
		fd = -1;
		*rc = bind_status(e);
	}
	freeaddrinfo(ai);
	return fd == -1 ? -1 : port_of(fd, w, rc);
}

/* ---- the loop ---- */

static int
signals_open(void)
{
	signal(SIGPIPE, SIG_IGN);
	/* Blocked before any thread starts: all of them inherit it. */
	return sigfd_open(SIGINT, SIGTERM, SIGHUP, 0);
}

static void
stop_streams(struct web *w)
{
	pthread_mutex_lock(&w->mu);
	w->stopping = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* The address it serves, its port the kernel's if it chose. */
static void
say_listening(const struct web *w, const struct opts *o)
{
	const char *colon = strrchr(o->listen, ':');

	fprintf(stderr, "chute: web: %s %s on http://%.*s:%s/%s%s\n",
	    w->ops->label, w->target, (int)(colon - o->listen), o->listen,
	    w->port, w->actions ? " (actions on)" : "", w->auth != NULL ?
	    " (users of the auth file only)" : "");
}

/* The store, the socket, the server, then the loop until a signal. */
static int
serve(struct web *w, const struct opts *o)
{
	struct web_http *d;
	int fd, sigfd, rc;

	if ((fd = listen_on(o->listen, w, &rc)) == -1)
		return rc;
	if ((sigfd = signals_open()) == -1) {
		fprintf(stderr, "chute: web: signalfd: %s\n", strerror(errno));
		close(fd);
		return EX_SOFTWARE;
	}
	web_publish(w);
	if ((d = web_http_start(w, fd)) == NULL) {
		close(fd);
		close(sigfd);
		return EX_SOFTWARE;
	}
	say_listening(w, o);
	notify_send("READY=1");
	rc = web_live_run(w, sigfd);
	notify_send("STOPPING=1");
	stop_streams(w);
	web_http_stop(d);	/* joins every connection's thread */
	close(sigfd);
	return rc;
}

/*
 * The store: a spool's, or for a URI the queue's, which only
 * chute-web-pgsql has (web.h, web_pg_store).
 */
static int
open_store(const struct opts *o, struct web *w)
{
	const struct store_ops *ops = &store_spool_ops;

	if (cmd_is_pg_uri(o->target) && (web_pg_store == NULL ||
	    (ops = web_pg_store()) == NULL)) {
		fprintf(stderr, "chute: web: a PostgreSQL queue's dashboard is "
		    "chute-web-pgsql's, not chute-web's (Debian: the "
		    "chute-web-pgsql package)\n");
		return EX_UNAVAILABLE;
	}
	return web_store_open(ops, o->target, o->queue ? o->queue : "default",
	    &w->hour, &w->ops, &w->st, &w->target);
}

static int
web_cmd(int argc, char **argv)
{
	struct web w = { .mu = PTHREAD_MUTEX_INITIALIZER };
	struct opts o = { 0 };
	pthread_condattr_t ca;
	int rc;

	if ((rc = parse(argc, argv, &o)) != 0)
		return rc;
	w.actions = o.actions;
	if (o.auth != NULL && (w.auth = web_auth_load(o.auth)) == NULL)
		return EX_CONFIG;
	w.target = o.target;
	rc = open_store(&o, &w);
	if (rc != 0) {
		web_auth_free(w.auth);
		return rc;
	}
	w.src = w.ops->source(w.st);
	/* The streams' pings wait on the monotonic clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cv, &ca);
	notify_init();
	rc = serve(&w, &o);
	w.ops->close(w.st);
	web_auth_free(w.auth);
	pthread_cond_destroy(&w.cv);
	notify_close();
	return rc;
}

int
main(int argc, char *argv[])
{
	static const struct cmd_prog prog = {
		.own = cmds, .nown = sizeof(cmds) / sizeof(cmds[0]),
		.title = "web",
		.unknown = "chute-web: run as `chute web SPOOL|URL ...`",
	};

	return cmd_main(argc, argv, &prog);
}
