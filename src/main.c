/*
 * main.c: dispatch `chute SUBCOMMAND ...` to one cmd_*.c file each, by
 * the table of subcommands in cmd.c (which usage errors read too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

int
main(int argc, char *argv[])
{
	const struct cmd *cmd;

	setprogname("chute");
	setproctitle_init(argc, argv, environ);
	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)) {
		cmd_usage_all(stdout);
		return cmd_flush_stdout(0);
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("chute %s\n", CHUTE_VERSION);
		return cmd_flush_stdout(0);
	}
	if (argc >= 2 && (cmd = cmd_find(argv[1])) != NULL)
		return cmd->fn(argc - 1, argv + 1);
	if (argc < 2)
		fprintf(stderr, "chute: missing subcommand\n");
	else
		fprintf(stderr, "chute: unknown subcommand: %s\n", argv[1]);
	cmd_usage_all(stderr);
	return EX_USAGE;
}
