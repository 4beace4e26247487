/*
 * cmd_cancel.c: `chute cancel STORE ID...`: each job waiting or running
 * moves to failed, as the store does it (a spool: one rename; a queue:
 * one statement, its worker told).
 */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/store.h"

static int
cancel_one(struct store *s, const char *id)
{
	char by[64], msg[2 * PATH_MAX];

	snprintf(by, sizeof(by), "`chute cancel` (uid %ld)", (long)getuid());
	return cmd_say_result(s->ops->cancel(s, id, by, msg, sizeof(msg)),
	    msg);
}

int
cmd_cancel(int argc, char **argv)
{
	return cmd_store_each_id(argc, argv, cancel_one);
}
