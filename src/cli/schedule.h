/*
 * schedule.h: recurring jobs on the command line, for both programs:
 * `chute schedule STORE [NAME ...]` parsed once (sched_args.c, which
 * also prints the list and sleeps between passes of `tick --follow`).
 * A spool's schedules on disk are store/sched_spool.h; a queue's,
 * src/chute-pgsql/pg_cmd_schedule.c.
 */
#ifndef CLI_SCHEDULE_H
#define CLI_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/tick.h"
#include "base/util.h"
#include "store/sched_spool.h"

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

/* One line of `chute schedule STORE` on stdout. */
void	 sched_print_row(const struct sched_row *r);

/*
 * Sleep until the realtime clock reads at, or max ms have passed,
 * whichever is first (a clock set back is noticed within max).
 */
void	 sched_sleep_until(msec_t at, msec_t max);

#endif
