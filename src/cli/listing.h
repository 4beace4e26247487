/*
 * listing.h: the Prometheus text format `chute stats --prometheus` prints,
 * and the lines of `chute workers`; and, from queue/spool/spool_list.h,
 * what `chute ls` and `chute stats` read from a spool's directories.
 */
#ifndef LISTING_H
#define LISTING_H

#include <stdio.h>

#include "base/util.h"
#include "store/spool.h"
#include "queue/spool/spool_list.h"
#include "queue/store.h"

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
 * The keys in use, per key: running, waiting, and the limit that bounds
 * it (max running; not printed when none), at most PROM_KEYS of them (the
 * most waiting first, then the most running), and chute_keys: how many
 * keys are in use in all.  Nothing when none is.
 */
#define PROM_KEYS	100

/* A key in use, from the store's limits op. */
struct key_use {
	char		 key[KEY_MAX + 1];
	double		 running, waiting;	/* -1 read as 0 */
	long		 max, rate_n;		/* its rule's; 0: none */
	msec_t		 rate_ms;
};

void	 prom_print_keys(FILE *f, const struct prom_stats *s,
	    const struct key_use *k, size_t shown, size_t total);

/*
 * Every key in use in store s into a malloc'ed *v (*n of them), the most
 * waiting first, then the most running, then by name: 0 (none when the
 * store has no limits op), or an exit status after one line on stderr.
 */
struct store;
int	 keys_read(struct store *s, struct key_use **v, size_t *n);

/*
 * The schedules of store s (its schedules op), by name, into a malloc'ed
 * *v (*n of them): 0 (none when the store has no such op), or an exit
 * status after one line on stderr.  And in Prometheus's format: how many
 * (chute_schedules), and each one's interval, next tick and last tick
 * made (Unix time; absent when none was).  Nothing when there is none.
 */
struct top_sched;
int	 scheds_read(struct store *s, struct top_sched **v, size_t *n);
void	 prom_print_schedules(FILE *f, const struct prom_stats *s,
	    const struct top_sched *v, size_t n);

/*
 * t's keys (queue/view.h: the TOP_KEY_MAX most waiting, and how many in
 * all), and its schedules (the first TOP_SCHED_MAX by name), read again from s once the monotonic clock reaches *next, which
 * is then set TOP_KEY_MS on, or ten times what the reading took if more
 * (a spool of 100,000 keys takes about 0.3 s to read: a view must not
 * spend its time on it).  0, or -1 (t keeps the keys it had).
 */
struct top;
int	 top_keys_read(struct store *s, struct top *t, msec_t *next);

/*
 * `chute workers`, of a spool (its owner) and of a URL (chute.workers),
 * in one format: a header, a line per worker, and under a gone one a line
 * per job whose claim it still holds.  Every field is one word: the
 * caller passes text from elsewhere (a host, a queue's name) as it is,
 * and it is escaped here.
 */
void	 workers_header(void);
void	 workers_line(const struct store_worker *w);
/*
 * "  holds ID lease=DUR", DUR negative once the lease has run out; a
 * spool's owner holds no lease: "  holds ID" (WORKERS_NO_LEASE).
 */
#define WORKERS_NO_LEASE	INT64_MIN
void	 workers_held(const char *id, msec_t lease_left);
/* A duration that may be negative ("-1.5s"), as ls's AGE shows it. */
void	 dur_signed(msec_t ms, char *buf, size_t len);

#endif
