/*
 * view.h: what a live view of a store shows (struct top, the model that
 * `chute top` draws and `chute web` publishes) and the source that keeps
 * it current (struct top_source), whatever the store: a spool's source
 * (queue/spool/top_spool.c) or a queue's (queue/pg/pg_top_source.c)
 * fills it; and the model's arithmetic (view.c).  Every part has a fixed
 * size, so a spool or a queue of a million jobs costs the view no more
 * memory.
 */
#ifndef QUEUE_VIEW_H
#define QUEUE_VIEW_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jobstate.h"
#include "base/sched.h"
#include "base/tick.h"
#include "base/util.h"
#include "store/spool.h"

#define TOP_RUN_MAX	64	/* running jobs kept: the longest-running */
#define TOP_FAIL_MAX	32	/* failures kept: the newest */
#define TOP_WORKER_MAX	32	/* workers kept: those alive first */
#define TOP_KEY_MAX	16	/* keys kept: the most waiting first */
#define TOP_SCHED_MAX	8	/* schedules kept: the first by name */
#define TOP_KEY_MS	1000	/* the keys are read again at most this often */
#define TOP_WINDOW	60	/* seconds of throughput */
#define TOP_RESCAN_MS	250	/* a spool's events are coalesced into one rescan per this */
#define TOP_ALL		((1u << ST_END) - (1u << ST_FIRST))	/* every state */

/* How far a count can be trusted: a queue's may be bounded or estimated. */
enum top_kind { TOP_EXACT, TOP_ATLEAST, TOP_ABOUT };

struct top_job {
	char	 id[NAME_MAX + 1];
	msec_t	 since;			/* running: claimed (0: not known); failed: failed */
	int	 attempts;		/* failed only */
	char	 reason[96];		/* failed only: the last outcome */
	char	 worker[128];		/* a queue's running job: whose claim */
	msec_t	 lease_until;		/* ... and until when (wall clock) */
};

struct top_worker {
	char	 name[128];		/* host:pid */
	long	 pid;
	char	 version[32];		/* "" when not known */
	int	 slots;			/* -1 when not known */
	int	 running;
	msec_t	 started, seen;		/* wall clock; 0 when not known */
	bool	 alive;
	bool	 stopped;		/* not alive: it said it stopped */
};

/* A key in use (the store's limits op), as top and the dashboard show it. */
struct top_key {
	char		 key[KEY_MAX + 1];
	long long	 running, waiting;	/* -1: not known */
	long		 max;			/* its limit; 0: none */
	long		 rate_n;		/* ... starts per rate_ms; 0: none */
	msec_t		 rate_ms;
};

/* A schedule (the store's schedules op), as stats, top and the dashboard show it. */
struct top_sched {
	char		 name[SCHED_NAME_MAX + 1];
	msec_t		 every;
	msec_t		 next, last;	/* wall clock; last -1: none made yet */
};

struct top {
	char		 title[PATH_MAX];	/* the spool's path; the queue's URI and name */
	/* Why what is shown may be behind (a lost server), or "". */
	char		 trouble[256];
	long long	 count[ST_END];
	enum top_kind	 kind[ST_END];
	bool		 claims;	/* running jobs have workers and leases (a queue) */
	struct top_job	 run[TOP_RUN_MAX];	/* the longest-running first */
	size_t		 nrun;
	struct top_job	 fail[TOP_FAIL_MAX];	/* the newest first */
	size_t		 nfail;
	struct top_worker worker[TOP_WORKER_MAX];	/* a spool's: its owner */
	size_t		 nworker;
	int		 workers_alive;	/* of all, not only those kept */
	int		 workers_all;
	bool		 unknown_owner;	/* a spool's lock is held by a pid we cannot see */
	bool		 paused;
	char		 paused_by[128];
	/*
	 * Jobs finished in each of the last TOP_WINDOW seconds, a ring; the
	 * seconds before rate_from are not counted in full (a queue's read
	 * was bounded): the rate is over the seconds since.
	 */
	int64_t		 sec[TOP_WINDOW];
	unsigned	 done[TOP_WINDOW], failed[TOP_WINDOW];
	int64_t		 rate_from;
	/* The keys in use (cli's top_keys_read), the most waiting first. */
	struct top_key	 key[TOP_KEY_MAX];
	size_t		 nkey;
	long long	 keys_all;	/* of all, not only those kept */
	/* The schedules (read with the keys, by top_keys_read), by name. */
	struct top_sched sched[TOP_SCHED_MAX];
	size_t		 nsched;
	long long	 scheds_all;	/* of all, not only those kept */
};

/*
 * What the view asks of what it watches.  The view polls fd (when not
 * -1) and calls input when it is readable; it calls update once the
 * monotonic clock reaches due, and only then; the keys call cancel and
 * retry.  Each returns 0, or -1 with errno set when the view must end
 * (cancel and retry: -1 when the job was not moved; msg says why either
 * way, in one line for the screen).
 */
struct top_source {
	struct top	*t;		/* the model it keeps current */
	void		*arg;
	int		(*fd)(void *arg);
	int		(*input)(void *arg);
	msec_t		(*due)(void *arg);
	int		(*update)(void *arg);
	int		(*cancel)(void *arg, const char *id, char *msg, size_t len);
	int		(*retry)(void *arg, const char *id, char *msg, size_t len);
};
#define TOP_NEVER	INT64_MAX	/* a due that never comes */

/* ---- view.c: the model's arithmetic ---- */

/* A job reached done/ (st is ST_DONE) or failed/ at when. */
void	 top_finished(struct top *t, int st, msec_t when);
/*
 * Jobs finished in the TOP_WINDOW seconds up to now, and over how many
 * seconds they were counted (TOP_WINDOW, or fewer since rate_from).
 */
int	 top_rate(const struct top *t, msec_t now, unsigned *done,
	    unsigned *failed);
/* A running time or an age to the second: 0s, 59s, then 1m0s, 2h3m... */
void	 top_age(msec_t ms, char *buf, size_t len);
/* A count as it may be shown: 1234, 10000+ (at least), ~1.2M (about). */
void	 top_count(const struct top *t, int st, char *buf, size_t len);

#endif
