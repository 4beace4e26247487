/*
 * pg_main.c: chute-pgsql's main: the queue's store for the one table of
 * subcommands (cli/cmd_main.c) and chute-pgsql's own, each taking a
 * postgresql:// URI where chute's take a SPOOL.  chute execs this program
 * when it sees such a URI, so users type `chute ... URL ...` either way.
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
#include "chute-pgsql/pg_cmd.h"

/*
 * chute-pgsql's own subcommands: the queue's write side, top (with
 * ncurses) and forward; the rest of the table is cmd_main.c's, over the
 * queue's store.
 */
static const struct cmd own[] = {
	{ "init", pgcmd_init, "URL" },
	{ "submit", pgcmd_submit,
	    "URL [--queue NAME] [--id ID] [--delay DUR | --at EPOCH] "
	    SCHED_USAGE " " UNIQUE_USAGE " [FILE...]" },
	{ "run", pgcmd_run, "URL [--queue NAME] [-j N] [--timeout DUR]"
	    " [--grace DUR] [--max-attempts N] [--backoff BASE[:CAP]] [--drain]"
	    " [--persistent] [--inline] [--lease DUR] [--prefetch N] [--poll DUR]"
	    " [--syslog[=FACILITY]]"
	    " -- HANDLER [ARG...]" },
	{ "top", cmd_top, "URL [--queue NAME]" },
	{ "schedule", pgcmd_schedule, "URL [--queue NAME] " SCHED_USAGE_ARGS },
	{ "tick", pgcmd_tick, "URL [--queue NAME] " TICK_USAGE_ARGS },
	{ "forward", pgcmd_forward, "SPOOL URL [--queue NAME] [--batch N]"
	    " [--origin NAME] [--drain]" },
};

int
main(int argc, char *argv[])
{
	static const struct cmd_prog prog = {
		.store = &store_pg_ops, .own = own,
		.nown = sizeof(own) / sizeof(own[0]), .title = "",
	};

	return cmd_main(argc, argv, &prog);
}
