/*
 * cmd_init.c: `chute init SPOOL [--group NAME]`.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "store/spool.h"

int
cmd_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	const char *group = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "g:", longopts, NULL)) != -1) {
		if (c != 'g')
			return usage_error("init", "unknown option");
		group = optarg;
	}
	if (argc - optind != 1)
		return usage_error("init", "want exactly one SPOOL");
	if (spool_init(argv[optind], group) == -1) {
		if (errno == ESRCH)
			fprintf(stderr, "chute: init: %s: no such group\n",
			    group);
		else
			fprintf(stderr, "chute: %s: %s\n", argv[optind],
			    strerror(errno));
		return errno == ESRCH ? EX_USAGE : EX_IOERR;
	}
	return 0;
}
