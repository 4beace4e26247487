/*
 * schedule.h: recurring jobs on the command line, for both programs:
 * `chute schedule STORE [NAME ...]` parsed once (sched_args.c, which
 * also prints the list and sleeps between passes of `tick --follow`),
 * and a spool's schedules on disk (sched_spool.c; spool-layout.md,
 * "Recurring jobs").  A queue's are src/chute-pgsql/pg_cmd_schedule.c.
 */
#ifndef CLI_SCHEDULE_H
#define CLI_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/tick.h"
#include "base/util.h"

struct spool;

/* The options of `schedule`, in the usage lines of both programs. */
#define SCHED_USAGE_ARGS	"[NAME [--every DUR] [--offset DUR]" \
	" [--catch-up skip|once|all] [--file FILE] [--remove] [-- WORDS...]]"
#define TICK_USAGE_ARGS		"[--follow]"

/* What `chute schedule` was asked. */
struct sched_args {
	const char	*name;		/* NULL: list them */
	bool		 remove;
	struct tick_sched ts;		/* with --every */
	char		*payload;	/* malloc'd: --file's, the words', or "" */
	size_t		 len;
};

/*
 * argv[0] the subcommand, the store taken out already: [NAME] [options]
 * [-- WORDS...].  A name with --remove alone, or with --every (and the
 * rest), or nothing.  The payload: --file's content (- for stdin), or
 * the words after -- joined by spaces and a newline, or empty.  0, or an
 * exit status after one line (64: usage, 66: the file).
 */
int	 sched_args_parse(int argc, char **argv, struct sched_args *a);
void	 sched_args_free(struct sched_args *a);

/* `tick`: --follow or not; 0, or 64 after its line. */
int	 tick_args_parse(int argc, char **argv, bool *follow);

/* One schedule as the list shows it. */
struct sched_row {
	const char	*name;
	struct tick_sched ts;
	msec_t		 last;		/* the last tick made; -1 none yet */
	msec_t		 next;		/* the next tick to make */
};

/* One line of `chute schedule STORE` on stdout. */
void	 sched_print_row(const struct sched_row *r);

/*
 * Sleep until the realtime clock reads at, or max ms have passed,
 * whichever is first (a clock set back is noticed within max).
 */
void	 sched_sleep_until(msec_t at, msec_t max);

/* ---- sched_spool.c: a spool's schedules; each says its own errors ---- */

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
