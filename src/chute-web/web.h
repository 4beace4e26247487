/*
 * web.h: chute-web, the dashboard `chute web SPOOL|URL` serves: what its
 * files share.  A program of its own (chute execs it), so that only a host
 * that wants a dashboard installs libmicrohttpd.  Its limits are in one
 * block here; its store (a spool, or a queue) is read through struct
 * web_store_ops, so that the pages do not know which it is.
 */
#ifndef WEB_H
#define WEB_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"
#include "queue/view.h"
#include "store/spool.h"
#include "queue/page.h"

/* ---- the dashboard's defaults and limits, all in one place ---- */
#define WEB_LISTEN	"127.0.0.1:8420"	/* --listen's default */
#define WEB_CONN_MAX	64	/* connections at once (a thread each) */
#define WEB_SSE_MAX	16	/* of which live-update streams, at most */
#define WEB_TIMEOUT_S	30	/* a connection idle this long is closed */
#define WEB_REQUEST_S	10	/* ... and one whose request takes longer to arrive */
#define WEB_CONN_MEM	32768	/* bytes per connection: headers, at most */
#define WEB_BODY_MAX	4096	/* bytes of a POST's body, at most */
#define WEB_EVENT_MS	1000	/* one refresh of the overview per this, at most */
#define WEB_SAFETY_MS	10000	/* ... and one at least, events or not */
#define WEB_PING_MS	15000	/* an idle live-update stream gets a comment */
#define WEB_ROWS	50	/* rows of a job list's page, by default */
#define WEB_ROWS_MAX	PAGE_ROWS_MAX	/* queue/page.h */
#define WEB_SCAN_MAX	PAGE_SCAN_MAX	/* queue/page.h */
#define WEB_LOG_MAX	PAGE_LOG_MAX	/* queue/page.h */
#define WEB_BATCH_MAX	1000	/* jobs one "retry matching" takes, at most */
#define WEB_FAIL_READ	PAGE_FAIL_READ	/* queue/page.h */
#define WEB_GROUPS	PAGE_GROUPS	/* queue/page.h */
#define WEB_WORKERS	64	/* workers shown, at most */
#define WEB_LIST	10	/* running jobs and failures on the overview */
#define WEB_HOUR	60	/* minutes of throughput on the chart */
#define WEB_USERS	64	/* lines of an --auth-file, at most */
#define WEB_AUTH_CACHE	16	/* credentials remembered once checked */
#define WEB_AUTH_TTL_MS	300000	/* ... for this long */
#define WEB_AUTH_WAIT_MS	2000	/* a refusal waits for the dearest hash's time, at most */
#define WEB_ID_LEN	PAGE_ID_LEN	/* queue/page.h */

/* ---- what the pages show, as a store reads it ---- */

/* Jobs finished per minute over the last WEB_HOUR, a ring (web_live.c). */
struct web_hour {
	int64_t		 minute[WEB_HOUR];
	unsigned	 done[WEB_HOUR], failed[WEB_HOUR];
	int64_t		 folded;	/* the last second of the model's taken */
	bool		 part;		/* what came before the start is not all there */
};

/*
 * The overview: the model `chute top` draws (queue/view.h: counts and how
 * far they can be trusted, running jobs, the newest failures, workers,
 * the pause, what went wrong), as its source last read it, and what the
 * dashboard adds.
 */
struct web_overview {
	struct top	 t;
	msec_t		 oldest;	/* when the oldest queued job was queued; 0 none */
	unsigned	 done[WEB_HOUR], failed[WEB_HOUR];	/* per minute, the last is now's */
	bool		 hour_part;	/* web_hour.part */
	msec_t		 at;		/* now_ms() of the reading */
};

enum web_act { WA_CANCEL, WA_RETRY, WA_PAUSE, WA_RESUME };

/*
 * A store, as the pages read it: web_store.c's, over queue/store.h's, for
 * a spool and a queue alike.  source
 * and oldest are the main thread's; the others are called from the
 * connections' threads, any number at once: each takes the locks it
 * needs.  Functions returning int return 0, or -1 with err saying why in
 * a line for the page.
 */
struct web_store_ops {
	const char	*label;		/* "spool" or "queue" */
	/* What keeps the overview's model current (queue/view.h). */
	struct top_source *(*source)(void *st);
	/* When the oldest queued job was queued (0: none), into *at. */
	int	(*oldest)(void *st, const struct top *t, msec_t *at);
	/* t's keys in use read again, once a second at most (live thread). */
	void	(*keys)(void *st, struct top *t);
	int	(*list)(void *st, const struct page_query *q, struct page_list *l,
		    char *err, size_t len);
	/* 1 when there is no such job. */
	int	(*job)(void *st, const char *id, struct page_job *j, char *err,
		    size_t len);
	int	(*failures)(void *st, struct page_failures *f, char *err,
		    size_t len);
	/* `chute stats --prometheus`, to f. */
	int	(*metrics)(void *st, FILE *f);
	/*
	 * Up to max failed jobs matching q (prefix, reason) into ids (max
	 * of WEB_ID_LEN each), oldest first.  Returns how many, or -1.
	 */
	int	(*matching)(void *st, const struct page_query *q, char *ids,
		    int max, char *err, size_t len);
	/*
	 * cancel or retry id, pause or resume (id NULL), as the subcommand
	 * does; by goes in the log's note.  msg gets the line to show.
	 * Returns the subcommand's exit status.
	 */
	int	(*act)(void *st, enum web_act a, const char *id, const char *by,
		    char *msg, size_t len);
	void	(*close)(void *st);
	/* How long finished jobs are kept (queue/store.h), into *r. */
	int	(*retention)(void *st, struct retention *r);
};

/* ---- web_store.c: the store, over the store interface ---- */

/*
 * Open the store ops names target (a spool's path; a URI, for queue):
 * the pages' store, the hour h seeded from what it holds, and the live
 * source's store with its first reading.  0, or an exit status after
 * saying why.  name: what the pages call it (the URI without its
 * password).
 */
struct store_ops;
int	 web_store_open(const struct store_ops *ops, const char *target,
	    const char *queue, struct web_hour *h,
	    const struct web_store_ops **wops, void **st, const char **name);
/*
 * cancel or retry id, pause or resume s (id NULL), as the subcommands do
 * (queue/store.h); msg gets the line to show.  Returns the subcommand's
 * exit status.
 */
struct store;
int	 web_store_act(struct store *s, enum web_act a, const char *id,
	    const char *by, char *msg, size_t len);
/*
 * web_pg.c: the queue's store (queue/pg/store_pg.c, with libpq), linked
 * into chute-web-pgsql only: chute-web, the dashboard of a spool, is the
 * same objects but that one, so that a host that runs only spools
 * installs no libpq for its dashboard.  Weak: NULL in chute-web.  chute
 * execs chute-web-pgsql for a URI (cmd_exec_web); web_main.c says so to a
 * chute-web run by hand.
 */
const struct store_ops	*web_pg_store(void) __attribute__((weak));

/* ---- web_live.c: the main thread's reading of the overview ---- */

/* A job of state st (ST_DONE, ST_FAILED) finished in minute of when: n more. */
void	 web_hour_add(struct web_hour *h, int st, msec_t when, unsigned n);
/* The model's complete seconds not yet taken, into their minutes. */
void	 web_hour_fold(struct web_hour *h, const struct top *t, msec_t now);
/* The last WEB_HOUR minutes up to now's, oldest first. */
void	 web_hour_fill(const struct web_hour *h, msec_t now, unsigned *done,
	    unsigned *failed);

/* ---- web_html.c: text made safe for where it goes ---- */

struct buf {
	char	*p;
	size_t	 len, cap;
	bool	 oom;			/* an append failed: the page is an error */
};
/* Our own text, as it is. */
void	 buf_add(struct buf *b, const char *s);
void	 buf_addn(struct buf *b, const char *s, size_t n);
/* Our own format: numbers and our own strings only, never hostile text. */
void	 buf_fmt(struct buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * Hostile text (an ID, a reason, a log) into HTML, for an element's
 * content or a quoted attribute's value: & < > " ' as entities, and
 * what is not printable UTF-8 C-style escaped (\ooo) as `chute ls`
 * shows it.  id: a job's ID, whose spaces and backslashes are escaped
 * too (vis_name's rules); otherwise newlines and tabs stay (a log).
 */
void	 buf_html(struct buf *b, const char *s, size_t n, bool id);
/*
 * Text as it is, into a quoted attribute's value (a form's input): & < >
 * " ' as entities, nothing else changed.
 */
void	 buf_attr(struct buf *b, const char *s);
/* A query string's value: every byte but A-Z a-z 0-9 - . _ ~ as %XX. */
void	 buf_url(struct buf *b, const char *s);
/* A JSON string, quoted: the same text as buf_html shows, \u-escaped. */
void	 buf_json(struct buf *b, const char *s, bool id);
void	 buf_free(struct buf *b);
/* An age in words: 0s, 59s, 1m0s, 2h3m (top_age's), or "-". */
void	 buf_age(struct buf *b, msec_t ms);

/* ---- web_auth.c: who may act ---- */

struct web_auth;
/*
 * Read the users of path (lines "user:HASH", HASH one crypt(3) knows;
 * '#' comments): refused if others may read or write it, by its mode
 * or by an ACL entry for another user or group.  Returns NULL after one
 * line on stderr saying why.
 */
struct web_auth	*web_auth_load(const char *path);
/*
 * The user whose name and password these are, or -1.  A check costs
 * one crypt(3) at most: the user's hash, or for a name not in the file
 * the dearest user's; a refusal then waits out the rest of the dearest
 * hash's time, so that its time tells no names.  A success is remembered
 * for WEB_AUTH_TTL_MS, so that a page's requests do not each pay it.
 */
int	 web_auth_check(struct web_auth *a, const char *user, const char *pass);
/* User u's name, and the CSRF token of this process for u (hex). */
const char	*web_auth_name(struct web_auth *a, int u);
const char	*web_auth_token(struct web_auth *a, int u);
/* Is tok user u's token?  In constant time. */
bool	 web_auth_token_ok(struct web_auth *a, int u, const char *tok);
void	 web_auth_free(struct web_auth *a);

/* ---- web_main.c: the process ---- */

struct web {
	const struct web_store_ops *ops;
	void		*st;
	const char	*target;	/* the spool's path, or the URI without password */
	bool		 actions;	/* --allow-actions */
	struct web_auth	*auth;		/* the --auth-file's users */
	bool		 loopback;	/* listening on 127.0.0.0/8 or ::1 */
	char		 port[8];
	/* The overview, read by the main thread; mu guards what follows. */
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;		/* signalled on each new reading, and at the end */
	struct web_overview ov;
	uint64_t	 gen;		/* readings so far */
	bool		 stopping;
	int		 nsse;		/* live-update streams open */
	/* The main thread's own. */
	struct top_source *src;
	struct web_hour	 hour;
	msec_t		 sent_at;	/* when the streams were woken last */
	bool		 trouble;	/* the source's last update failed */
};

/* web_live.c: a reading of the overview for every page and stream. */
void	 web_publish(struct web *w);
/*
 * The main thread's loop: the source's descriptor and updates, a reading
 * published after each, until a signal comes on sigfd.  Returns 0, or an
 * exit status after saying why.
 */
int	 web_live_run(struct web *w, int sigfd);

/* ---- web_late.c: the time a request may take to arrive ---- */

struct web_late;
struct web_late_conn;
/* The thread that closes late connections.  NULL after saying why. */
struct web_late	*web_late_start(void);
void	 web_late_stop(struct web_late *l);
/*
 * A connection opened on socket fd: its request is due within
 * WEB_REQUEST_S.  NULL if WEB_CONN_MAX are open already.  The others take
 * NULL as a connection without a deadline.
 */
struct web_late_conn	*web_late_open(struct web_late *l, int fd);
/* Its request is whole: no deadline while it is answered. */
void	 web_late_whole(struct web_late_conn *k);
/* Answered: the next request on it is due within WEB_REQUEST_S. */
void	 web_late_again(struct web_late_conn *k);
/* Before its socket is closed: forgotten. */
void	 web_late_close(struct web_late_conn *k);

/* ---- web_http.c: requests ---- */

struct web_http;
/* Listen on fd (bound, listening).  NULL after saying why. */
struct web_http	*web_http_start(struct web *w, int fd);
/* Stop serving: every connection closed, its thread joined. */
void	 web_http_stop(struct web_http *h);

/* ---- web_pages.c: the pages, whole, into b ---- */

/* What a page knows of its request. */
struct web_req {
	struct web	*w;
	int		 user;		/* -1: none (no --auth-file) */
	const char	*path;
	/* A GET's query arguments, or a POST's fields: get(arg, "name"). */
	const char	*(*get)(void *arg, const char *name);
	void		*arg;
};
/*
 * Render the page for r->path into b: 200, 400, 404, 500... (the HTTP
 * status).  POST paths are the actions.
 */
int	 web_page_get(const struct web_req *r, struct buf *b);
int	 web_page_post(const struct web_req *r, struct buf *b);
/* A page that only says title and msg (our own words); returns status. */
int	 web_page_status(const struct web_req *r, struct buf *b, int status,
	    const char *title, const char *msg);
/* The overview as one JSON object: a live update's data. */
void	 web_overview_json(const struct web_overview *ov, struct buf *b);

/* ---- web_static.c: the script and the style sheet ---- */

/* The file named path ("/static/chute.js"...), or NULL; *type its type. */
const char	*web_static(const char *path, size_t *len, const char **type);

#endif
