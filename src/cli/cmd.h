/*
 * cmd.c and cli/cmd_*.c: the subcommands, and what they share.
 */
#ifndef CLI_CMD_H
#define CLI_CMD_H

#include <stdbool.h>
#include <stdio.h>
#include "base/util.h"
#include "store/spool.h"
#include "run/opts.h"

int	 cmd_init(int argc, char **argv);

int	 cmd_submit(int argc, char **argv);

int	 cmd_run(int argc, char **argv);

int	 cmd_status(int argc, char **argv);

int	 cmd_wait(int argc, char **argv);

int	 cmd_cancel(int argc, char **argv);

int	 cmd_retry(int argc, char **argv);

int	 cmd_ls(int argc, char **argv);

int	 cmd_stats(int argc, char **argv);
/*
 * What `chute stats STORE --prometheus` prints, to f: s open (a spool's
 * label is its path as given, a queue's its name).  Returns 0, or an exit
 * status after saying why on stderr.  `chute web` calls it too.
 */
struct store;
int	 cmd_stats_prometheus(FILE *f, struct store *s);

int	 cmd_log(int argc, char **argv);

int	 cmd_purge(int argc, char **argv);

/*
 * src/top/cmd_top.c: `chute top STORE`, over the store's live source; in
 * both programs with the screen (ncurses), so not in libchute.a: each
 * program gives it in its own rows.
 */
int	 cmd_top(int argc, char **argv);

struct cmd {
	const char	*name;
	int		(*fn)(int, char **);	/* argv[0] is the name */
	const char	*args;			/* usage, after "chute NAME " */
};
void	 cmd_register(const struct cmd *table, size_t n);

/* The subcommand called name, or NULL. */
const struct cmd	*cmd_find(const char *name);

void	 cmd_usage_all(FILE *f);

/* "chute: reason" and the command's usage line on stderr; returns 64. */
int	 usage_error(const char *cmd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* Every ID on the command line is checked before anything is touched. */
int	 check_ids(int n, char **ids, const char *cmd);

/*
 * A job's command's result line: msg on stdout when rc is 0, else
 * "chute: msg" on stderr; nothing when msg is "" (said already).
 * Returns rc.
 */
int	 cmd_say_result(int rc, const char *msg);

/*
 * Flush stdout.  Output that did not get there is a failed command: say
 * so and return EX_IOERR (or rc, if it is higher); else return rc.
 */
int	 cmd_flush_stdout(int rc);

/*
 * A job's log to stdout: as it is into a file or a pipe (`chute log ID >
 * copy` stays byte for byte); on a terminal escaped as the journal's lines
 * (vis_text), a line at a time so that its newlines stay, since a handler
 * writes its log and could send the terminal escape codes.  Returns 0, or
 * -1 with errno set.
 */
int	 cmd_write_log(const char *buf, size_t len);

/* `chute NAME --help`: NAME's usage on stdout; 0 (74 if stdout failed). */
int	 cmd_help(const char *name);

/*
 * Before a subcommand parses its arguments (argv[0] is its name): --help
 * or -h before "--" prints its usage on stdout, and an option its usage
 * line does not show is a usage error, so that every subcommand answers
 * both alike.  Returns -1 to go on, or the exit status.
 */
int	 cmd_check_args(const struct cmd *c, int argc, char **argv);
/*
 * Does arg, an option of c's usage line, take the next argument as its
 * value ("--timeout DUR", not "--timeout=DUR")?
 */
bool	 cmd_opt_has_value(const struct cmd *c, const char *arg);

/*
 * A postgresql:// or postgres:// URI where a SPOOL goes (before any "--"):
 * the command is chute-pgsql's.
 */
bool	 cmd_wants_pgsql(int argc, char **argv);
/* Is s a postgresql:// or postgres:// URI?  (pg_is_uri, without libpq.) */
bool	 cmd_is_pg_uri(const char *s);

/*
 * Hand the command line to chute-pgsql: the one next to this chute (a
 * build tree, or an installed pair), else the first on PATH.  Returns only
 * on failure, with the exit status (69: not installed).
 */
int	 cmd_exec_pgsql(char **argv);
/*
 * The same for `chute web ...` (argv[1] is "web", argv NULL-terminated):
 * chute-web's for a spool, chute-web-pgsql's for a URI.
 */
int	 cmd_exec_web(char **argv);

/* Who runs this command, for a pause's author: "user@host". */
void	 cmd_who(char *buf, size_t len);

/*
 * A queue's pause, as status and stats print it: "paused by WHO since
 * TIME" (at: ms since the epoch), or "not paused".
 */
void	 cmd_paused_text(bool paused, const char *by, msec_t at, char *buf,
	    size_t len);

/* ---- cmd_main.c: the one table, and the programs' main ---- */

/* What a program chooses; main() is cmd_main(argc, argv, &prog). */
struct cmd_prog {
	const struct store_ops	*store;	/* the store of the table's rows; NULL none */
	const struct cmd	*own;	/* the program's own subcommands */
	size_t			 nown;
	/* The process title after the start: NULL argv's, "" argv[1]. */
	const char		*title;
	/* Before the table: -1 to go on, or the exit status (--help...). */
	int	(*help)(int argc, char **argv);
	/* Before cmd runs: -1 to go on, or the exit status. */
	int	(*before)(const struct cmd *cmd, int argc, char **argv);
	const char		*unknown;	/* the line for no subcommand; NULL chute's */
	void	(*overview)(FILE *f);		/* NULL: cmd_usage_all */
};
int	 cmd_main(int argc, char **argv, const struct cmd_prog *p);

/* ---- cmd_store.c: the subcommands over a store (queue/store.h) ---- */

struct store;
struct store_ops;
/* The program's store: store_spool_ops in chute, store_pg_ops in chute-pgsql. */
extern const struct store_ops *cmd_backend;
/*
 * Keep the arguments keep[] says, in order, then the NULL, then the others:
 * they stay in the array (setproctitle_init made them copies that only
 * argv points to), out of the command's sight.
 */
void	 cmd_compact(int *argc, char **argv, const bool *keep);
/*
 * Take the store's own arguments out of argv (argv[0] is the command):
 * a spool's path, its first argument (after "--", if that is first); a
 * queue's URI, anywhere before
 * "--", and --queue NAME (*queue; NULL when not given).  s->target is
 * NULL when a spool's is missing: the command's own usage error comes
 * first, then cmd_store_open's.  Returns 0, or a usage error's status.
 */
int	 cmd_store_take(int *argc, char **argv, struct store *s,
	    const char **queue);
/*
 * The same for a command whose options may come before a spool's path
 * (options: its first operand, as getopt_long would find it).
 */
int	 cmd_store_take_opts(int *argc, char **argv, struct store *s,
	    const char **queue, bool options);
/* Open s (taken): 0, or an exit status after saying why. */
int	 cmd_store_open(struct store *s, const char *cmd, const char *queue);
/* Close s, flush stdout: rc, or 74. */
int	 cmd_store_done(struct store *s, int rc);
/*
 * `chute CMD STORE ID...`: take the store, check every ID, open it and
 * call fn on each ID in turn; fn prints its own result and returns an
 * exit status.  Returns the highest of those, as cmd_flush_stdout sees it.
 */
int	 cmd_store_each_id(int argc, char **argv, int (*fn)(struct store *,
	    const char *));

/*
 * Say on stderr that id (NULL: one of several, the store's wait_unknown)
 * is not in s: "unknown job", or, when s keeps finished jobs for a while
 * only (retention), that it may have ended and been removed, and how
 * long each state is kept.
 */
void	 cmd_say_unknown(struct store *s, const char *id);

/*
 * The same for a wait's unknown IDs, all said in one line (a queue's):
 * id is the one ID when the wait is for one, named where a retention may
 * have removed it; the plain answer stays the store's wait_unknown.
 */
void	 cmd_say_unknown_wait(struct store *s, const char *id);

/* cmd_retention.c: `chute retention STORE [--done DUR] [--failed DUR]` */
int	 cmd_retention(int argc, char **argv);

/* cmd_pause.c: `chute pause SPOOL`, `chute resume SPOOL` */
int	 cmd_pause(int argc, char **argv);
int	 cmd_resume(int argc, char **argv);

/* cmd_limit.c: `chute limit SPOOL [...]` */
int	 cmd_limit(int argc, char **argv);

/* cmd_schedule.c: `chute schedule SPOOL [NAME ...]`, `chute tick SPOOL` */
int	 cmd_schedule(int argc, char **argv);
int	 cmd_tick(int argc, char **argv);

/* cmd_workers.c: `chute workers SPOOL` */
int	 cmd_workers(int argc, char **argv);

/* cmd_run.c */
/*
 * Own the spool at path and run jobs until told to stop (or, with drain,
 * until it is empty).  Returns the exit status.
 */
int	 run_main(const char *path, const struct run_opts *o);

/*
 * Parse `run` arguments (argv[0] is "run") into o and *spool, after
 * setting the defaults.  Returns 0, the exit status of a usage error, or
 * -1 for --help (the caller prints the usage: its own table's).  Split
 * from cmd_run so the fuzzer can drive it.
 */
int	 run_parse_args(int argc, char **argv, struct run_opts *o,
	    const char **spool);

#endif
