/*
 * main.c: chute's main: the spool's store for the one table of
 * subcommands (cli/cmd_main.c), chute's own subcommands, --help and
 * --version, and a URI handed to chute-pgsql.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sched.h"
#include "base/chute.h"
#include "cli/cmd.h"
#include "cli/schedule.h"
#include "queue/store.h"

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

/*
 * chute's own subcommands: the spool's write side, top (with ncurses), and
 * those that are other programs'; the rest of the table is cmd_main.c's,
 * over the spool's store.
 */
static const struct cmd own[] = {
	{ "init", cmd_init, "SPOOL [--group NAME]" },
	{ "submit", cmd_submit,
	    "SPOOL [--id ID] [--delay DUR | --at EPOCH] " SCHED_USAGE
	    " " UNIQUE_USAGE " [FILE...]" },
	{ "run", cmd_run, "SPOOL [-j N] [--timeout DUR] [--grace DUR]"
	    " [--max-attempts N] [--backoff BASE[:CAP]] [--drain] [--wait-lock]"
	    " [--persistent] [--inline] [--if-unowned] [--syslog[=FACILITY]]"
	    " -- HANDLER [ARG...]" },
	{ "top", cmd_top, "SPOOL" },
	{ "schedule", cmd_schedule, "SPOOL " SCHED_USAGE_ARGS },
	{ "tick", cmd_tick, "SPOOL " TICK_USAGE_ARGS },
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

/* `chute help NAME`, --help, --version: before the table. */
static int
help(int argc, char **argv)
{
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
	return -1;
}

/* A URI where the SPOOL goes: the command is chute-pgsql's. */
static int
before(const struct cmd *cmd, int argc, char **argv)
{
	if (cmd->fn != cmd_web && cmd_wants_pgsql(argc, argv))
		return cmd_exec_pgsql(argv);
	return -1;
}

int
main(int argc, char *argv[])
{
	static const struct cmd_prog prog = {
		.store = &store_spool_ops, .own = own,
		.nown = sizeof(own) / sizeof(own[0]), .help = help,
		.before = before, .overview = overview,
	};

	return cmd_main(argc, argv, &prog);
}
