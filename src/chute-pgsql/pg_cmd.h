/*
 * pg_cmd.h: chute-pgsql's subcommands (pg_cmd.c, pg_cmd_run.c), one per
 * chute subcommand, with the same options, output and exit statuses.
 */
#ifndef PG_CMD_H
#define PG_CMD_H

int	 pgcmd_init(int, char **);
int	 pgcmd_submit(int, char **);
int	 pgcmd_run(int, char **);
int	 pgcmd_status(int, char **);
int	 pgcmd_wait(int, char **);
int	 pgcmd_cancel(int, char **);
int	 pgcmd_retry(int, char **);
int	 pgcmd_ls(int, char **);
int	 pgcmd_stats(int, char **);
int	 pgcmd_log(int, char **);
int	 pgcmd_purge(int, char **);
int	 pgcmd_top(int, char **);	/* pg_cmd_top.c: not supported yet */
int	 pgcmd_forward(int, char **);	/* pg_forward.c */

/* pg_cmd.c: what they share */
void	 pgcmd_compact(int *, char **, const bool *);
int	 pgcmd_take(int *, char **, const char *, struct pg *, bool);
int	 pgcmd_open(int *, char **, const char *, struct pg *);
struct option;
int	 pgcmd_options(int, char **, const char *, const struct option *,
	    int (*)(void *, int, char *), void *);

#endif
