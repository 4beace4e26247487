/*
 * cmd_retry.c: `chute retry STORE ID...`: each failed job back to new, its
 * attempts reset, as the store does it (a spool: the reset noted, one
 * rename; a queue: one statement, the workers woken).
 */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/store.h"

static int
retry_one(struct store *s, const char *id)
{
	char by[64], msg[2 * PATH_MAX];

	snprintf(by, sizeof(by), "`chute retry` (uid %ld)", (long)getuid());
	return cmd_say_result(s->ops->retry(s, id, by, msg, sizeof(msg)), msg);
}

int
cmd_retry(int argc, char **argv)
{
	return cmd_store_each_id(argc, argv, retry_one);
}
