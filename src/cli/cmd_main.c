/*
 * cmd_main.c: the one table of subcommands, which chute and chute-pgsql
 * both serve, and the main() they (and chute-web) share.  A program only
 * chooses its store (queue/store.h: a spool, a PostgreSQL queue) and
 * gives the subcommands that are the store's own: the write side (init,
 * submit, run, forward), top (its screen links ncurses) and web.  Every
 * other subcommand is written once (cmd_<name>.c) over the store; its
 * usage line is the store's way of being named ("SPOOL", "URL [--queue
 * NAME]") and the row's arguments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/store.h"

/*
 * In the order `chute --help` lists them.  fn NULL: the program's own,
 * when it has one (web is chute's alone).
 */
static const struct cmd rows[] = {
	{ "init", NULL, NULL },
	{ "submit", NULL, NULL },
	{ "run", NULL, NULL },
	{ "status", cmd_status, "[ID...]" },
	{ "wait", cmd_wait, "[--timeout DUR] ID..." },
	{ "cancel", cmd_cancel, "ID..." },
	{ "retry", cmd_retry, "ID..." },
	{ "ls", cmd_ls, "[--key KEY] [wait|new|cur|defer|done|failed]" },
	{ "stats", cmd_stats, "[--prometheus]" },
	{ "log", cmd_log, "ID" },
	{ "purge", cmd_purge, "--older-than DUR [--state done|failed]" },
	{ "top", NULL, NULL },
	{ "workers", cmd_workers, "" },
	{ "pause", cmd_pause, "" },
	{ "resume", cmd_resume, "" },
	{ "limit", cmd_limit, "[--key KEY|--default|--all [--max N|none]"
	    " [--rate N/DUR|none] [--clear]]" },
	{ "schedule", NULL, NULL },
	{ "tick", NULL, NULL },
	{ "forward", NULL, NULL },
	{ "web", NULL, NULL },
	{ "retention", cmd_retention, "[--done DUR] [--failed DUR]" },
};
#define NROWS	(sizeof(rows) / sizeof(rows[0]))

static struct cmd table[NROWS];
static char usage[NROWS][256];

static const struct cmd *
own_cmd(const struct cmd_prog *p, const char *name)
{
	for (size_t i = 0; i < p->nown; i++)
		if (strcmp(p->own[i].name, name) == 0)
			return &p->own[i];
	return NULL;
}

/* The rows, each the store's or the program's own, into table. */
static void
build(const struct cmd_prog *p)
{
	const struct cmd *c;
	size_t n = 0;

	cmd_backend = p->store;
	for (size_t i = 0; i < NROWS; i++) {
		if ((c = own_cmd(p, rows[i].name)) != NULL) {
			table[n++] = *c;
		} else if (rows[i].fn != NULL && p->store != NULL) {
			snprintf(usage[n], sizeof(usage[n]), "%s%s%s",
			    p->store->usage, *rows[i].args ? " " : "",
			    rows[i].args);
			table[n] = rows[i];
			table[n].args = usage[n];
			n++;
		}
	}
	cmd_register(table, n);
}

int
cmd_main(int argc, char **argv, const struct cmd_prog *p)
{
	const struct cmd *cmd;
	int rc;

	setprogname("chute");
	build(p);
	setproctitle_init(argc, argv, environ);
	/* A URI may hold a password: the title never shows argv again. */
	if (p->title != NULL)
		setproctitle("%s", *p->title != '\0' ? p->title : argc >= 2 ?
		    argv[1] : "");
	if (p->help && (rc = p->help(argc, argv)) != -1)
		return rc;
	if (argc >= 2 && (cmd = cmd_find(argv[1])) != NULL) {
		if (p->before != NULL && (rc = p->before(cmd, argc, argv)) != -1)
			return rc;
		/* run's parser knows where the handler's own arguments begin. */
		if (strcmp(cmd->name, "run") != 0 &&
		    (rc = cmd_check_args(cmd, argc - 1, argv + 1)) != -1)
			return rc;
		return cmd->fn(argc - 1, argv + 1);
	}
	if (p->unknown != NULL)
		fprintf(stderr, "%s\n", p->unknown);
	else if (argc < 2)
		fprintf(stderr, "chute: missing subcommand\n");
	else
		fprintf(stderr, "chute: unknown subcommand: %s\n", argv[1]);
	if (p->overview != NULL)
		p->overview(stderr);
	else
		cmd_usage_all(stderr);
	return EX_USAGE;
}
