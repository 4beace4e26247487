/*
 * opts.h: how `chute run` was asked to run handlers (cli/cmd_run.c parses
 * it, run/ uses it).
 */
#ifndef RUN_OPTS_H
#define RUN_OPTS_H

#include <stdbool.h>
#include "base/util.h"

struct run_opts {
	int	 jobs;
	msec_t	 timeout;		/* 0: none */
	msec_t	 grace;
	int	 max_attempts;
	msec_t	 backoff_base, backoff_cap;
	bool	 drain, wait_lock;
	bool	 if_unowned;		/* owned by another: exit 0, silently */
	int	 syslog;		/* --syslog's facility; -1: stderr */
	bool	 persistent;		/* long-lived workers, line protocol */
	bool	 inline_jobs;		/* --inline: each payload on their pipe */
	char	**argv;			/* the handler */
	char	 *path;			/* argv[0] resolved on PATH, once */
};

#endif
