/*
 * sched_spool.h, the interface of sched_spool.c: a spool's schedules on
 * disk (spool-layout.md, "Recurring jobs"), for `chute schedule` and
 * `chute tick` (cli/cmd_schedule.c) and the spool's store, which lists
 * them for stats, top and the dashboard.  Each says its own errors.
 */
#ifndef STORE_SCHED_SPOOL_H
#define STORE_SCHED_SPOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/tick.h"
#include "base/util.h"

struct spool;

/* One schedule as the list shows it. */
struct sched_row {
	const char	*name;
	struct tick_sched ts;
	msec_t		 last;		/* the last tick made; -1 none yet */
	msec_t		 next;		/* the next tick to make */
};

/*
 * Declare or change schedule name (its payload, len bytes): 0, or an exit
 * status after one line naming the path.  *created: it was new.
 */
int	 sched_spool_declare(struct spool *sp, const char *name,
	    const struct tick_sched *ts, const char *payload, size_t len,
	    bool *created);
/* Remove it (its made ticks released first): 0, EXIT_NO (none), or a status. */
int	 sched_spool_remove(struct spool *sp, const char *name);
/* Each schedule, by name, to row: 0, or an exit status. */
int	 sched_spool_list(struct spool *sp, void (*row)(void *,
	    const struct sched_row *), void *arg);
/*
 * One pass over every schedule at the clock's now: each due tick's job
 * made exactly once.  *next: the earliest next tick (-1: no schedule).
 * 0, or the highest exit status of a schedule that failed (said).
 */
int	 sched_spool_tick(struct spool *sp, msec_t *next);

#endif
