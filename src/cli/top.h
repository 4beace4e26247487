/*
 * top.h: what `chute top` draws, whatever it watches (struct top, the
 * model), the source that keeps it current (struct top_source: a spool
 * here, top_spool.c; a queue in chute-pgsql, pg_cmd_top.c), and what
 * the spool's source knows between two looks at it (struct top_spool).
 * Every part has a fixed size, so a spool or a queue of a million jobs
 * costs the view no more memory.  The screen itself is src/top/.
 */
#ifndef TOP_H
#define TOP_H

#include <limits.h>

#include "base/util.h"
#include "store/spool.h"
#include "store/watch.h"

#define TOP_RUN_MAX	64	/* running jobs kept: the longest-running */
#define TOP_FAIL_MAX	32	/* failures kept: the newest */
#define TOP_WORKER_MAX	32	/* workers kept: those alive first */
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

/* ---- a spool (top_spool.c) ---- */

struct top_spool {
	struct top	 t;
	struct spool	*sp;
	struct watch	*w;		/* NULL: no events are read */
	pid_t		 owner;		/* lock_owner(): 0 none, -1 unknown */
	/* Names that arrived in failed/ since the last rescan, a ring. */
	char		 arrived[TOP_FAIL_MAX][NAME_MAX + 1];
	size_t		 narrived;
	unsigned	 dirty;		/* 1 << state: an event in it since the last rescan */
	bool		 full;		/* the next rescan re-reads failed/ */
	msec_t		 scanned;	/* mono_ms() of the last rescan */
};

/*
 * The watch a live view of sp reads (`chute top`, `chute web`): every
 * state directory, for every arrival and departure.  Open it before
 * top_init, so that nothing after the first look is missed.  Returns
 * NULL with errno set (watch_open's).
 */
struct watch	*top_watch_open(struct spool *sp);
/*
 * Read sp in full into s: counts, running jobs, the newest failures, and
 * the jobs that finished in the TOP_WINDOW seconds before `since`, by the
 * mtimes in done/ and failed/; the owner and whether the spool is paused.
 * since is when the caller's watch started: the jobs finishing after it
 * are its events', counted once.  Returns 0, or -1 with errno set.
 */
int	 top_init(struct top_spool *s, struct spool *sp, msec_t since);
/*
 * Look again after events, only in the directories they came from: names
 * are counted, not statted, except in cur/ (a few jobs) and for the
 * failures kept.  Returns 0, or -1 with errno set.
 */
int	 top_rescan(struct top_spool *s);
/*
 * watch_read's callback (arg is the struct top_spool).  Every event makes
 * its directory dirty; an arrival in done/ or failed/ is a finished job,
 * counted now, so throughput needs no stat.  Lost events (an overflow)
 * make the next rescan read everything, failed/ in full; the jobs they
 * would have counted as finished are not known.
 */
void	 top_event(void *arg, const struct watch_event *ev);
/*
 * Cancel id as `chute cancel` does: one rename to failed/, a note in its
 * log, the directories synced.  msg gets one line for the user either
 * way.  Returns 0, or -1.
 */
int	 top_cancel(struct top_spool *s, const char *id, char *msg, size_t len);
/* Retry id as `chute retry` does: the reset note, then failed/ -> new/. */
int	 top_retry(struct top_spool *s, const char *id, char *msg, size_t len);
/*
 * s as the view's source, its events read from w (top_watch_open's) and
 * rescans coalesced to one per TOP_RESCAN_MS.
 */
void	 top_spool_source(struct top_spool *s, struct watch *w,
	    struct top_source *src);

#endif
