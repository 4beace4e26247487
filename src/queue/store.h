/*
 * store.h: the read and admin side of a store of jobs, whatever it is: a
 * spool (src/queue/spool/store_spool.c) or a PostgreSQL queue
 * (src/queue/pg/store_pg.c).  queue.h is what the owner drives to run
 * jobs; this is what every other command asks and does: the state of a
 * job, its log, the jobs in a state, a wait, the numbers of `stats`, the
 * workers, cancel, retry, pause, purge, `top`'s live source and the
 * dashboard's pages.  The subcommands (src/cli/cmd_*.c, src/top/cmd_top.c)
 * and the dashboard (src/chute-web) are written once over it: they parse
 * the arguments, format the output and choose the exit status; a store
 * only answers, in a form both can give, and prints nothing on stdout.
 * Where the two differ in what they show, the difference is data here (a
 * field a store has or has not), not a second command.
 *
 * Unless its comment says otherwise (the acts fill msg, the pages err),
 * every function returning int returns 0, or an exit status (sysexits)
 * after one line on stderr saying why, naming the store; EXIT_NO is "no
 * such job", said by the caller.
 */
#ifndef QUEUE_STORE_H
#define QUEUE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jobstate.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/sched_spool.h"

struct store;
struct top;
struct top_source;
struct page_query;
struct page_list;
struct page_job;
struct page_failures;

/* One job, as `chute status` shows it. */
struct store_job {
	int		 state;		/* ST_NEW ... ST_FAILED */
	long long	 attempts;
	char		 last[1100];	/* the last outcome: stored text, not escaped */
	char		 next[48];	/* a deferred job's next try (ISO 8601), or "" */
	long		 held;		/* a spool's job in new/ flocked by this pid; 0 none */
	/* A spool's job forwarded to a queue: "to QUEUE at URI as ID", or "". */
	char		 forwarded[1024];
	int		 prio;		/* PRIO_DEFAULT unless given */
	char		 key[KEY_MAX + 1];	/* "" none */
	char		 unique[KEY_MAX + 1];	/* its unique key; "" none */
	/* What it waits (or waited) for: "ID,ID,ID,+N" and ",run", or "". */
	char		 after[700];
};

/* The store's pause, as status and stats show it. */
struct store_pause {
	bool		 paused;
	char		 by[512];	/* who: escaped, as it is shown */
	msec_t		 at;		/* ms since the epoch */
};

/*
 * The numbers of `chute stats`.  A store fills what it knows; has_* says
 * which of the optional lines it has (a spool has an owner and a longest
 * running time, a queue has workers), so that each store's output keeps
 * its own lines.
 */
struct store_stats {
	long long	 jobs[ST_END];	/* by state, ST_FIRST to ST_END */
	bool		 has_oldest;	/* a job is queued */
	msec_t		 oldest_ms;	/* ... since this long */
	double		 oldest_s;	/* ... in seconds, for Prometheus */
	long long	 running;
	bool		 has_longest;	/* a spool: the longest running attempt */
	msec_t		 longest_ms;
	bool		 has_owner;	/* a spool: its owner's pid, 0 none, -1 unknown */
	long		 owner;
	bool		 has_workers;	/* a queue: claiming, connected, alive */
	long long	 claiming, connected, alive;
	struct store_pause pause;
	msec_t		 now;		/* now_ms() of the reading */
};

/* One row of `chute ls`. */
struct store_row {
	int		 state;
	msec_t		 age;		/* since its time (mtime, run_at); negative: to come */
	long long	 attempts;
	const char	*id;		/* not escaped */
	/* A queue's claim (ls cur): its worker (NULL: none), the lease left. */
	const char	*worker;
	bool		 has_lease;
	msec_t		 lease;
	int		 prio;		/* PRIO_DEFAULT unless given */
	const char	*key;		/* "" none */
};

/*
 * `chute limit`: each rule of the store (rule true), then each key that
 * has jobs running or waiting (rule false: its usage, and the rule that
 * applies to it, if any, in lim).  running and waiting: -1 not known.
 */
struct store_limit_row {
	bool		 rule;
	struct limit	 lim;		/* a key's: scope LIM_KEY, its key */
	bool		 bounded;	/* a key's: a rule applies (lim holds it) */
	long long	 running, waiting;
};

/*
 * A change of one rule: set_max / set_rate say which of max, rate the
 * change sets (0 in either clears it); clear drops the rule whole.
 */
struct store_limit_set {
	enum limit_scope scope;
	const char	*key;
	bool		 set_max, set_rate, clear;
	long		 max;
	long		 rate_n;
	msec_t		 rate_ms;
};

/*
 * A worker, as `chute workers` shows it: a queue's (chute.workers), or a
 * spool's owner.  Every field is one word, given as it is (the caller
 * escapes it); "-": not known.
 */
struct store_worker {
	const char	*worker, *host, *queue, *version;
	const char	*state;		/* alive, gone, stopped */
	long		 pid;
	int		 slots;		/* -1: not known */
	long		 running;
	msec_t		 started_ago, seen_ago;	/* -1: not known */
};

/* What `chute workers` is told, in order. */
struct store_workers_out {
	void	(*worker)(void *arg, const struct store_worker *w);
	/* A job whose claim the worker above still holds (a gone one). */
	void	(*held)(void *arg, const char *id, bool has_lease,
		    msec_t lease_left);
	/* A persistent worker of the worker above (a spool's owner), by pid. */
	void	(*child)(void *arg, const char *pid);
	void	*arg;
};

/*
 * A store's operations.  target is what the command line named it by;
 * queue is --queue's value (a queue only, NULL when not given).
 */
struct store_ops {
	/*
	 * How the command line names it: "SPOOL", or "URL [--queue NAME]"
	 * (its usage lines), and what a missing one is called in the usage
	 * error ("no spool given").  uri: it is a postgresql:// URI found
	 * anywhere before "--", with --queue; else the first operand.
	 */
	const char	*usage;
	const char	*missing;
	const char	*noun;		/* "SPOOL" or "URL", in "want SPOOL and one ID" */
	bool		 uri;
	/* Its running jobs have claims: a worker and a lease (ls cur). */
	bool		 claims;
	/*
	 * `chute wait`: draw its progress line (a spool's); say each unknown
	 * ID (NULL), or this one line for all (a queue's).
	 */
	bool		 wait_progress;
	const char	*wait_unknown;
	int	(*open)(struct store *s, const char *target, const char *queue);
	void	(*close)(struct store *s);
	/* The name status prints before its pause: the path, the queue. */
	const char	*(*title)(struct store *s);
	/* Job id into *j: 0, EXIT_NO when there is no such job, or a status. */
	int	(*job)(struct store *s, const char *id, struct store_job *j);
	int	(*pause)(struct store *s, struct store_pause *p);
	/*
	 * Job id's log, in pieces, to out (which returns -1 with errno set
	 * to stop: the caller says why).  0 (a job without a log yet too),
	 * EXIT_NO for no such job, -1 when out failed, or a status.
	 */
	int	(*log)(struct store *s, const char *id,
		    int (*out)(const char *buf, size_t len));
	int	(*stats)(struct store *s, struct store_stats *st);
	/*
	 * The jobs in state (ST_NONE: all), oldest first (mtime, run_at;
	 * then the ID), each handed to row(arg, r).
	 */
	int	(*list)(struct store *s, int state,
		    void (*row)(void *arg, const struct store_row *r), void *arg);
	/*
	 * `chute wait`: the states of ids (ST_NONE: no such job) into st;
	 * and a wait for a change: wait_start before the first look (a
	 * spool's watch, so that a job finishing meanwhile is seen), then
	 * wait_nap until something may have changed or max ms passed
	 * (-1: no bound), wait_end.
	 */
	int	(*states)(struct store *s, char *const *ids, int n, int *st);
	int	(*wait_start)(struct store *s, void **w);
	int	(*wait_nap)(struct store *s, void *w, msec_t max);
	void	(*wait_end)(struct store *s, void *w);
	/*
	 * Cancel job id (new, defer or cur -> failed), retry it (failed ->
	 * new, attempts reset), as the subcommands do; by goes in its log's
	 * note.  msg gets one line: "ID STATE->failed", "ID failed->new", or
	 * why not (nothing is said on stderr: `chute top` and `chute web`
	 * show it).  Returns 0, EXIT_NO (unknown, already finished, not
	 * failed) or an exit status.
	 */
	int	(*cancel)(struct store *s, const char *id, const char *by,
		    char *msg, size_t len);
	int	(*retry)(struct store *s, const char *id, const char *by,
		    char *msg, size_t len);
	/*
	 * Pause (on) or resume the store; by says who.  *changed: false when
	 * it already was so (a pause keeps the first one's author).  When it
	 * fails, msg gets why, as cancel's does.  After a pause that changed
	 * it, paused_note (NULL: none) may say on stderr why it might not be
	 * the one meant.
	 */
	int	(*set_pause)(struct store *s, bool on, const char *by,
		    bool *changed, char *msg, size_t len);
	void	(*paused_note)(struct store *s);
	/*
	 * Remove the finished jobs (state ST_DONE, ST_FAILED, or ST_NONE for
	 * both) older than older ms, with their logs.  *removed: how many,
	 * or -1 when not even that can be said.
	 */
	int	(*purge)(struct store *s, int state, msec_t older,
		    long long *removed);
	/*
	 * A live view's source (queue/view.h) over the open store, for
	 * `chute top`: live, the source that keeps the model current (a
	 * spool's watch first, so nothing after the first look is missed;
	 * a queue's LISTEN, on the store's connection from then on), else
	 * one reading (the summary of a stdout that is no terminal), its
	 * model in src->t either way.  top_close frees what *h holds.
	 */
	int	(*top_open)(struct store *s, bool live, msec_t since,
		    struct top_source *src, void **h);
	void	(*top_close)(struct store *s, void *h);
	/*
	 * For the dashboard's overview, between two readings of the live
	 * source h: when the oldest queued job was queued (0: none), t its
	 * model.  0, or -1 (the source says what went wrong).
	 */
	int	(*top_oldest)(struct store *s, void *h, const struct top *t,
		    msec_t *at);
	/*
	 * The dashboard's chart before its start: the jobs that finished in
	 * the hour before since (a queue: now), each minute's to add(arg,
	 * st, when, n); *at the instant that hour ends, *part when not all
	 * of them were read.
	 */
	int	(*hour)(struct store *s, msec_t since, void (*add)(void *arg,
		    int st, msec_t when, unsigned n), void *arg, msec_t *at,
		    bool *part);
	/* What the dashboard names it by: a path, a URI without its password. */
	const char	*(*name)(struct store *s);
	/*
	 * Around each call the dashboard's threads make on a store with a
	 * connection (NULL: none; the spool's): the connection made again
	 * if it was lost, each call bounded by wait ms; -1 with err said.
	 */
	int	(*page_begin)(struct store *s, msec_t wait, char *err,
		    size_t len);
	void	(*page_end)(struct store *s);
	/*
	 * The dashboard's pages (queue/page.h): a page of one state after a
	 * cursor, one job with its log's end (1: no such job), the failures
	 * grouped by reason, up to max failed jobs matching a query (how
	 * many).  These return 0, or -1 with err saying why in a line for
	 * the page (nothing on stderr); any number of threads may call them
	 * on one store, each holding what guards the store's connection.
	 */
	int	(*page)(struct store *s, const struct page_query *q,
		    struct page_list *l, char *err, size_t len);
	int	(*page_job)(struct store *s, const char *id, struct page_job *j,
		    char *err, size_t len);
	int	(*page_failures)(struct store *s, struct page_failures *f,
		    char *err, size_t len);
	int	(*page_matching)(struct store *s, const struct page_query *q,
		    char *ids, int max, char *err, size_t len);
	/*
	 * The workers, each with what it holds; *cut: how many were shown
	 * when there were more (0: all).
	 */
	int	(*workers)(struct store *s, const struct store_workers_out *o,
		    int *cut);
	/*
	 * The limits (base/sched.h): the rules, then the keys in use, each
	 * to row(arg, r).  set_limit changes one rule, for every worker
	 * from its next start on; msg gets the line `chute limit` prints
	 * (the rule as it now is), or why not.
	 */
	int	(*limits)(struct store *s, void (*row)(void *arg,
		    const struct store_limit_row *r), void *arg);
	int	(*set_limit)(struct store *s, const struct store_limit_set *c,
		    char *msg, size_t len);
	/*
	 * How long finished jobs are kept (util.h: ms, KEEP_FOREVER), read
	 * into *r, or set to *r (a queue's workers and a spool's owner apply
	 * it); set says on stderr why not.
	 */
	int	(*retention)(struct store *s, struct retention *r);
	int	(*set_retention)(struct store *s, const struct retention *r);
	/*
	 * The recurring jobs (`chute schedule`), by name, each to row(arg,
	 * r) with its last and next tick: 0, or an exit status (said on
	 * stderr).
	 */
	int	(*schedules)(struct store *s, void (*row)(void *arg,
		    const struct sched_row *r), void *arg);
};

/* An open store: its operations and their state. */
struct store {
	const struct store_ops	*ops;
	const char		*target;	/* as given */
	void			*be;		/* the store's own */
};

/* store_spool.c and store_pg.c: the two stores. */
extern const struct store_ops store_spool_ops;
extern const struct store_ops store_pg_ops;

#endif
