/*
 * pg_main.c: chute-pgsql's main: the table of its subcommands, each taking
 * a postgresql:// URI where chute's take a SPOOL.  chute execs this program
 * when it sees such a URI, so users type `chute ... URL ...` either way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

static const struct cmd cmds[] = {
	{ "init", pgcmd_init, "URL" },
	{ "submit", pgcmd_submit,
	    "URL [--queue NAME] [--id ID] [--delay DUR | --at EPOCH] [FILE...]" },
	{ "run", pgcmd_run, "URL [--queue NAME] [-j N] [--timeout DUR]"
	    " [--grace DUR] [--max-attempts N] [--backoff BASE[:CAP]] [--drain]"
	    " [--persistent] [--lease DUR] [--prefetch N] [--poll DUR]"
	    " [--syslog[=FACILITY]]"
	    " -- HANDLER [ARG...]" },
	{ "status", pgcmd_status, "URL [--queue NAME] [ID...]" },
	{ "wait", pgcmd_wait, "URL [--queue NAME] [--timeout DUR] ID..." },
	{ "cancel", pgcmd_cancel, "URL [--queue NAME] ID..." },
	{ "retry", pgcmd_retry, "URL [--queue NAME] ID..." },
	{ "ls", pgcmd_ls, "URL [--queue NAME] [new|cur|defer|done|failed]" },
	{ "stats", pgcmd_stats, "URL [--queue NAME] [--prometheus]" },
	{ "log", pgcmd_log, "URL [--queue NAME] ID" },
	{ "purge", pgcmd_purge,
	    "URL [--queue NAME] --older-than DUR [--state done|failed]" },
	{ "top", pgcmd_top, "URL [--queue NAME]" },
	{ "workers", pgcmd_workers, "URL [--queue NAME]" },
	{ "pause", pgcmd_pause, "URL [--queue NAME]" },
	{ "resume", pgcmd_resume, "URL [--queue NAME]" },
	{ "forward", pgcmd_forward, "SPOOL URL [--queue NAME] [--batch N]"
	    " [--origin NAME] [--drain]" },
};

int
main(int argc, char *argv[])
{
	const struct cmd *cmd;
	int rc;

	setprogname("chute");
	/* The URI may hold a password: the title never shows argv again. */
	setproctitle_init(argc, argv, environ);
	setproctitle("%s", argc >= 2 ? argv[1] : "");
	cmd_register(cmds, sizeof(cmds) / sizeof(cmds[0]));
	if (argc >= 2 && (cmd = cmd_find(argv[1])) != NULL) {
		/* --help and unknown options as chute's main answers them. */
		if (strcmp(cmd->name, "run") != 0 &&
		    (rc = cmd_check_args(cmd, argc - 1, argv + 1)) != -1)
			return rc;
		return cmd->fn(argc - 1, argv + 1);
	}
	if (argc < 2)
		fprintf(stderr, "chute: missing subcommand\n");
	else
		fprintf(stderr, "chute: unknown subcommand: %s\n", argv[1]);
	cmd_usage_all(stderr);
	return EX_USAGE;
}
