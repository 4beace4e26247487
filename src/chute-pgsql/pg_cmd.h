/*
 * pg_cmd.h: chute-pgsql's subcommands (pg_cmd_<name>.c), one per chute
 * subcommand, with the same options, output and exit statuses, and what
 * they share (pg_cmd.c).
 */
#ifndef PG_CMD_H
#define PG_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct pg;

/* ---- init ---- */
int	 pgcmd_init(int argc, char **argv);
/*
 * chute submit URL [--id ID] [--delay DUR | --at EPOCH] [FILE...]: every
 * input that can be read goes in, a batch per statement; the IDs the
 * database has are printed at the end, in input order.
 */
int	 pgcmd_submit(int argc, char **argv);
struct uq_opts;
/*
 * pg_cmd_unique.c: submit with u's unique key the one job body under id
 * (delay, at: -1 not given); prints the ID (the job's, or the holder's)
 * and returns the exit status (EXIT_HELD: refused) after its line.
 */
int	 pgcmd_submit_unique(struct pg *pg, const struct uq_opts *u,
	    const char *id, const char *body, size_t len, long long delay,
	    long long at, int prio, const char *key);
int	 pgcmd_run(int argc, char **argv);
/* pg_cmd_schedule.c: chute schedule URL [NAME ...], chute tick URL [--follow] */
int	 pgcmd_schedule(int argc, char **argv);
int	 pgcmd_tick(int argc, char **argv);
/* ---- ls, stats ---- */
int	 pgcmd_forward(int argc, char **argv);	/* pg_forward.c */

/* pg_cmd.c: what they share */
/*
 * Take the URI and --queue NAME out of argv (before any "--"), leaving the
 * rest for the command's own options, and parse the URI.  Returns 0, or an
 * exit status after saying why.
 */
int	 pgcmd_take(int *argc, char **argv, const char *cmd, struct pg *pg,
	    bool need_url);
/* pgcmd_take, then connect and check the schema. */
int	 pgcmd_open(int *argc, char **argv, const char *cmd, struct pg *pg);
struct option;
/*
 * Read a subcommand's options (getopt_long, from the start, quietly),
 * handing each to take(arg, c, optarg): 0 to go on, or an exit status
 * after its own line.  An unknown option, or one without its argument, is
 * a usage error.  Returns 0 with optind at the first operand, or the
 * status.
 */
int	 pgcmd_options(int argc, char **argv, const char *cmd,
	    const struct option *longopts, int (*take)(void *, int, char *),
	    void *arg);
/* Close the connection, flush stdout: the exit status rc, or 74. */
int	 pgcmd_done(struct pg *pg, int rc);
#endif
