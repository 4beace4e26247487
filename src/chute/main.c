/*
 * main.c: the one table of subcommands, and dispatch of `chute SUBCOMMAND
 * ...` to one cmd_*.c file each by it.  Usage errors and --help read the
 * same table through cmd_register().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"

/*
 * `chute forward SPOOL URL` is chute-pgsql's alone; main() hands it over
 * when the URL is there, so reaching this means it is not.
 */
static int
cmd_forward(int argc, char **argv)
{
	return usage_error("forward", "no postgresql:// URI given (forward "
	    "moves a spool's jobs into a PostgreSQL queue)");
}

/*
 * `chute web SPOOL|URL ...` is chute-web's, for a spool and a URI alike:
 * the dashboard is a program of its own, so that a host without it needs
 * no libmicrohttpd.  Its command line is handed over as it is.
 */
static int
cmd_web(int argc, char **argv)
{
	char **full = calloc((size_t)argc + 2, sizeof(*full));
	int rc;

	if (full == NULL) {
		fprintf(stderr, "chute: web: out of memory\n");
		return EX_SOFTWARE;
	}
	full[0] = "chute";
	memcpy(full + 1, argv, (size_t)argc * sizeof(*argv));
	rc = cmd_exec_web(full);	/* only when the exec failed */
	free(full);
	return rc;
}

/* In the order `chute --help` lists them. */
static const struct cmd cmds[] = {
	{ "init", cmd_init, "SPOOL [--group NAME]" },
	{ "submit", cmd_submit,
	    "SPOOL [--id ID] [--delay DUR | --at EPOCH] [FILE...]" },
	{ "run", cmd_run, "SPOOL [-j N] [--timeout DUR] [--grace DUR]"
	    " [--max-attempts N] [--backoff BASE[:CAP]] [--drain] [--wait-lock]"
	    " [--persistent] [--if-unowned] [--syslog[=FACILITY]]"
	    " -- HANDLER [ARG...]" },
	{ "status", cmd_status, "SPOOL [ID...]" },
	{ "wait", cmd_wait, "SPOOL [--timeout DUR] ID..." },
	{ "cancel", cmd_cancel, "SPOOL ID..." },
	{ "retry", cmd_retry, "SPOOL ID..." },
	{ "ls", cmd_ls, "SPOOL [new|cur|defer|done|failed]" },
	{ "stats", cmd_stats, "SPOOL [--prometheus]" },
	{ "log", cmd_log, "SPOOL ID" },
	{ "purge", cmd_purge, "SPOOL --older-than DUR [--state done|failed]" },
	{ "top", cmd_top, "SPOOL" },
	{ "workers", cmd_workers, "SPOOL" },
	{ "pause", cmd_pause, "SPOOL" },
	{ "resume", cmd_resume, "SPOOL" },
	{ "forward", cmd_forward, "SPOOL URL [--queue NAME] [--batch N]"
	    " [--origin NAME] [--drain]" },
	{ "web", cmd_web, "SPOOL|URL --auth-file FILE [--queue NAME]"
	    " [--listen ADDR:PORT] [--allow-actions]" },
};

/*
 * The overview: the table's lines, then where the fleet's forms are.  A
 * subcommand given a postgresql:// URI for SPOOL runs chute-pgsql's own,
 * with options of its own (--queue, --lease, ...), which its --help
 * lists.
 */
static void
overview(FILE *f)
{
	cmd_usage_all(f);
	fprintf(f, "SPOOL may be a PostgreSQL URI (postgresql://..., a queue "
	    "that a fleet of workers\nshares): `chute COMMAND URL --help` "
	    "shows that form's options; see chute(1).\n");
}

int
main(int argc, char *argv[])
{
	const struct cmd *cmd;
	int rc;

	setprogname("chute");
	cmd_register(cmds, sizeof(cmds) / sizeof(cmds[0]));
	setproctitle_init(argc, argv, environ);
	/* `chute help NAME`: one subcommand's usage, as `chute NAME --help`. */
	if (argc == 3 && strcmp(argv[1], "help") == 0 && cmd_find(argv[2]))
		return cmd_help(argv[2]);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
		overview(stdout);
		return cmd_flush_stdout(0);
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("chute %s\n", CHUTE_VERSION);
		return cmd_flush_stdout(0);
	}
	if (argc >= 2 && (cmd = cmd_find(argv[1])) != NULL) {
		if (cmd->fn != cmd_web && cmd_wants_pgsql(argc, argv))
			return cmd_exec_pgsql(argv);
		/* run's parser knows where the handler's own arguments begin. */
		if (strcmp(cmd->name, "run") != 0 &&
		    (rc = cmd_check_args(cmd, argc - 1, argv + 1)) != -1)
			return rc;
		return cmd->fn(argc - 1, argv + 1);
	}
	if (argc < 2)
		fprintf(stderr, "chute: missing subcommand\n");
	else
		fprintf(stderr, "chute: unknown subcommand: %s\n", argv[1]);
	overview(stderr);
	return EX_USAGE;
}
