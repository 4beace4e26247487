/*
 * store_pg.h: a PostgreSQL queue's read and admin side, as library code
 * that chute-pgsql's subcommands, `chute top URL` and `chute web URL`
 * share: a job cancelled or retried (store_pg_act.c), the queue's numbers
 * for `stats` (store_pg_stats.c), and its live source for a view
 * (pg_top_source.c).  Nothing here prints on stdout: the callers format.
 */
#ifndef QUEUE_STORE_PG_H
#define QUEUE_STORE_PG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct pg;

/* ---- store_pg_act.c: a job acted on ---- */

/*
 * Cancel job id of pg's queue as `chute cancel URL` does: new, defer or
 * cur -> failed in one statement, a note in its log ("cancelled by BY in
 * STATE"), its worker told (a job that waited: the views).  msg gets one
 * line: "ID STATE->failed", or why not, or why the server failed
 * ("NAME: cancel: reason"; nothing is said on stderr: `chute top URL`
 * draws it on its screen).  Returns 0, EXIT_NO (unknown, or already
 * finished), or pg_fail's status.
 */
int	 pg_cancel_job(struct pg *pg, const char *id, const char *by,
	    char *msg, size_t len);
/*
 * Retry job id as `chute retry URL` does: failed -> new, attempts reset,
 * a "reset by BY" note, the workers woken.  msg and the returns as for
 * pg_cancel_job.
 */
int	 pg_retry_job(struct pg *pg, const char *id, const char *by,
	    char *msg, size_t len);
/*
 * Why cmd ("cancel", "retry") did not take job id: unknown, or already
 * finished (not failed, for retry), in the spool's words, into msg.
 * Returns EXIT_NO, or pg_fail's status with msg saying why (pg_fail_msg).
 */
int	 pg_why_not(struct pg *pg, const char *id, const char *cmd,
	    char *msg, size_t len);
/* An "@chute TIME text" line in the job's log, as on a spool. */
int	 pg_note(struct pg *pg, const char *id, const char *text);
/*
 * After a pause: a queue that has no job and no worker is most likely a
 * misspelt name; a note on stderr says so.
 */
void	 pg_note_if_unknown(struct pg *pg);
/*
 * Finished jobs of state ("done", "failed"; NULL both) older than older
 * ms removed, with their payloads and logs, at once: *removed how many
 * (-1 on failure).  0, or pg_fail's status after saying why.
 */
int	 pg_purge(struct pg *pg, const char *state, msec_t older,
	    long long *removed);

/* ---- store_pg_limit.c: the limits (store.h's limits, set_limit) ---- */

struct store_limit_row;
struct store_limit_set;
/* The rules, then the keys in use, each to row(arg, r): 0, or a status. */
int	 pg_limits_read(struct pg *pg, void (*row)(void *arg,
	    const struct store_limit_row *r), void *arg);
/* One rule changed, as store.h's set_limit says. */
int	 pg_limit_set(struct pg *pg, const struct store_limit_set *c,
	    char *msg, size_t len);

/* ---- store_pg_stats.c: the numbers of `chute stats URL` ---- */

/*
 * One snapshot of the queue, one statement.  A job in cur whose lease has
 * run out is not running.  There is no longest running time: the schema
 * keeps no start of an attempt.  Returns 0, or pg_fail's status after
 * saying why (what: "stats").
 */
struct store_stats;
int	 pg_stats_read(struct pg *pg, struct store_stats *s);

/* ---- store_pg_workers.c: the workers of `chute workers URL` ---- */

/* Returns 0, or pg_fail's status after saying why (what: "workers"). */
struct store_workers_out;
int	 pg_workers_read(struct pg *pg, const struct store_workers_out *o,
	    int *cut);

/* ---- store_pg_page.c: the dashboard's pages (queue/page.h) ---- */

/*
 * As queue/store.h's page, page_job, page_failures and page_matching:
 * 0 (page_job: 1, no such job; page_matching: how many), or -1 with err
 * saying why ("NAME: reason", or "no reply within 3s" past pg.deadline).
 */
struct page_query;
struct page_list;
struct page_job;
struct page_failures;
int	 pg_page_list(struct pg *pg, const struct page_query *q,
	    struct page_list *l, char *err, size_t len);
int	 pg_page_job(struct pg *pg, const char *id, struct page_job *j,
	    char *err, size_t len);
int	 pg_page_failures(struct pg *pg, struct page_failures *f, char *err,
	    size_t len);
int	 pg_page_matching(struct pg *pg, const struct page_query *q, char *ids,
	    int max, char *err, size_t len);
#define PG_PAGE_WAIT_MS	3000	/* a page's statements wait this long, at most */
/*
 * When the oldest queued job was queued (0: none), on the live source q's
 * connection between its reads (a server that is gone is its to find and
 * say): 0, or -1.  The hour before now (queue/store.h's hour): 0, or
 * pg_fail's status after saying why.
 */
struct pgtop;
int	 pg_top_oldest(struct pgtop *q, msec_t *at);
int	 pg_hour(struct pg *pg, void (*add)(void *, int, msec_t, unsigned),
	    void *arg, msec_t *at, bool *part);

/* ---- pg_top_source.c: a queue as a live view's source ---- */

/*
 * For `chute top URL` and `chute web URL`.  pgtop_new takes pg (parsed
 * and connected: its connection is the source's from then on; pgtop_pg
 * gives it back) and returns NULL when out of memory.  pgtop_start fills
 * src, LISTENs and makes the first reading: 0, or pg_fail's status after
 * saying why.  pgtop_read makes one reading (the summary of a stdout that
 * is no terminal): 0, or -1 (pg_error).  pgtop_model is what it keeps
 * current.  The keys act through pg_cancel_job and pg_retry_job.
 */
struct pgtop;
struct top;
struct top_source;
struct pgtop	*pgtop_new(const struct pg *pg);
int	 pgtop_start(struct pgtop *q, struct top_source *src);
int	 pgtop_read(struct pgtop *q);
struct top	*pgtop_model(struct pgtop *q);
struct pg	*pgtop_pg(struct pgtop *q);
/* The store's own struct pg, which the source's is copied back into. */
void		 pgtop_set_home(struct pgtop *q, struct pg *home);
struct pg	*pgtop_home(struct pgtop *q);
void	 pgtop_free(struct pgtop *q);

#endif
