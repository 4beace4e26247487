/*
 * cmd_purge.c: `chute purge STORE --older-than DUR [--state STATE]`:
 * remove finished jobs older than a duration, and their logs, as the
 * store does it (store_spool_act.c: the log first; a queue: one
 * statement), and say how many.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "queue/store.h"

static int
parse(int argc, char **argv, msec_t *age, int *only, bool uri)
{
	static const struct option longopts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'o' && dur_parse(optarg, age) == 0)
			continue;
		if (c == 's' && (*only = state_from_name(optarg)) != ST_NONE &&
		    state_terminal(*only))
			continue;
		if (uri)
			return usage_error("purge", "bad option or value");
		return usage_error("purge", "bad option or value%s%s",
		    optarg ? ": " : "", optarg ? optarg : "");
	}
	if (*age < 0)
		return usage_error("purge", "--older-than DUR is required");
	if (argc - optind != 0 && !uri)
		return usage_error("purge", "want exactly one SPOOL");
	return 0;
}

int
cmd_purge(int argc, char **argv)
{
	struct store s;
	const char *queue;
	long long removed = -1;
	msec_t age = -1;
	int only = ST_NONE, rc;

	if ((rc = cmd_store_take_opts(&argc, argv, &s, &queue, true)) != 0)
		return rc;
	if ((rc = parse(argc, argv, &age, &only, s.ops->uri)) != 0)
		return rc;
	if (s.target == NULL)
		return usage_error("purge", "want exactly one SPOOL");
	if ((rc = cmd_store_open(&s, "purge", queue)) != 0)
		return rc;
	rc = s.ops->purge(&s, only, age, &removed);
	if (removed >= 0)
		printf("purged %lld\n", removed);
	return cmd_store_done(&s, rc);
}
