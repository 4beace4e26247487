/*
 * listing.h: what `chute ls` and `chute stats` read straight from the job
 * state directories: a count and the oldest mtime per state, and for ls
 * every entry too; for stats, when a running job started, and the
 * Prometheus text format its --prometheus prints.
 */
#ifndef LISTING_H
#define LISTING_H

#include <stdio.h>

#include "base/util.h"
#include "store/spool.h"

struct listing_entry {
	msec_t	 mtime;
	int	 state;
	char	*id;
};

struct listing {
	struct spool		*sp;
	bool			 keep;		/* remember every entry (ls) */
	bool			 new_only;	/* stats: a stat in new/ only */
	struct listing_entry	*v;		/* keep: oldest first */
	size_t			 n, cap;
	size_t			 count[ST_END];
	msec_t			 oldest[ST_END];	/* 0: none */
	int			 state;		/* the directory being read */
};

/*
 * Read every job state directory into l (l->sp and l->keep set by the
 * caller), or only the one state only if it is not ST_NONE.  Returns 0,
 * or an exit status after printing why.
 */
int	 listing_read(struct listing *l, int only);
void	 listing_free(struct listing *l);
/*
 * When the attempt of job id now running started: the time of the last
 * "@chute" line of log/ID, if that line is "attempt=N start".  The owner
 * writes it after the claim and before the spawn, and nothing of chute's
 * after it until the attempt ends, so only the handler's own output of
 * this attempt is read, backwards.  0 when the job has not started yet
 * (claimed, the line not yet written) or its log cannot be read: a stats
 * then leaves the job out of the longest running time, rather than fail.
 */
msec_t	 listing_started(struct spool *sp, const char *id);

/*
 * The Prometheus text exposition format, for `stats --prometheus` of a
 * spool (cmd_stats.c) and of a URL (pg_cmd.c).  One table of names and
 * HELP texts serves both, so that a node_exporter reading the files of
 * both finds each metric described once, the same way.
 */
enum prom_metric {
	PM_OLDEST,		/* chute_oldest_queued_seconds */
	PM_RUNNING,		/* chute_jobs_running */
	PM_LONGEST,		/* chute_longest_running_seconds */
	PM_OWNER_UP,		/* chute_owner_up */
	PM_OWNER_PID,		/* chute_owner_pid */
	PM_CLAIMING,		/* chute_workers_claiming */
	PM_CONNECTED,		/* chute_workers_connected */
	PM_ALIVE,		/* chute_workers_alive */
	PM_PAUSED,		/* chute_paused */
	PM_TIME,		/* chute_stats_timestamp_seconds */
	PM_N
};

struct prom_stats {
	const char	*label;		/* "spool" or "queue" */
	const char	*name;		/* its value: the path, the queue */
	double		 jobs[ST_END];	/* chute_jobs{state=...}, by state */
	bool		 has[PM_N];	/* a metric not known is not printed */
	double		 v[PM_N];
};

/* Every metric s has, each with its HELP and TYPE, labelled alike, to f. */
void	 prom_print(FILE *f, const struct prom_stats *s);

/*
 * `chute workers`, of a spool (its owner) and of a URL (chute.workers),
 * in one format: a header, a line per worker, and under a gone one a line
 * per job whose claim it still holds.  Every field is one word: the
 * caller passes text from elsewhere (a host, a queue's name) as it is,
 * and it is escaped here.
 */
struct worker_line {
	const char	*worker, *host, *queue, *version;	/* "-": not known */
	const char	*state;		/* alive, gone, stopped */
	long		 pid;
	int		 slots;		/* -1: not known */
	long		 running;
	msec_t		 started_ago, seen_ago;	/* -1: not known */
};
void	 workers_header(void);
void	 workers_line(const struct worker_line *w);
/*
 * "  holds ID lease=DUR", DUR negative once the lease has run out; a
 * spool's owner holds no lease: "  holds ID" (WORKERS_NO_LEASE).
 */
#define WORKERS_NO_LEASE	INT64_MIN
void	 workers_held(const char *id, msec_t lease_left);
/* A duration that may be negative ("-1.5s"), as ls's AGE shows it. */
void	 dur_signed(msec_t ms, char *buf, size_t len);

#endif
