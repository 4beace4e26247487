/*
 * cmd_log.c: `chute log STORE ID`: the job's log to stdout as it is (on a
 * terminal, escaped: cmd_write_log): the handler's output and chute's own
 * "@chute" lines.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/store.h"

int
cmd_log(int argc, char **argv)
{
	struct store s;
	const char *queue;
	int rc;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	if (argc != 2 || s.target == NULL)
		return usage_error("log", "want %s and one ID", s.ops->noun);
	if ((rc = check_ids(1, argv + 1, "log")) != 0)
		return rc;
	if ((rc = cmd_store_open(&s, "log", queue)) != 0)
		return rc;
	/* No log yet is fine for a job that has not run. */
	if ((rc = s.ops->log(&s, argv[1], cmd_write_log)) == EXIT_NO)
		cmd_say_unknown(&s, argv[1]);
	else if (rc == -1) {
		fprintf(stderr, "chute: stdout: %s\n", strerror(errno));
		rc = EX_IOERR;
	}
	return cmd_store_done(&s, rc);
}
