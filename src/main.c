/*
 * main.c: dispatch `chute SUBCOMMAND ...` to one cmd_*.c file each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

extern char **environ;

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "init", cmd_init }, { "submit", cmd_submit }, { "run", cmd_run },
	{ "status", cmd_status }, { "wait", cmd_wait },
	{ "cancel", cmd_cancel }, { "retry", cmd_retry }, { "ls", cmd_ls },
	{ "stats", cmd_stats }, { "log", cmd_log }, { "purge", cmd_purge },
};

int
main(int argc, char *argv[])
{
	setprogname("chute");
	setproctitle_init(argc, argv, environ);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
		cmd_usage_all(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("chute %s\n", CHUTE_VERSION);
		return 0;
	}
	for (size_t i = 0; argc >= 2 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	if (argc < 2)
		fprintf(stderr, "chute: missing subcommand\n");
	else
		fprintf(stderr, "chute: unknown subcommand: %s\n", argv[1]);
	cmd_usage_all(stderr);
	return EX_USAGE;
}
