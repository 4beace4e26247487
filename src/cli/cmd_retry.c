/*
 * cmd_retry.c: `chute retry SPOOL ID...`: reset the attempt count of each
 * job in failed/ and move it back to new/, by one rename; no owner needed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/state.h"

int
retry_job(struct spool *sp, const char *id, const char *by, char *msg,
    size_t len)
{
	int st = spool_locate(sp, id, NULL), saved;

	if (st != ST_FAILED) {
		if (st == ST_NONE)
			snprintf(msg, len, "%s: unknown job", id);
		else
			snprintf(msg, len, "%s: not failed (%s)", id,
			    state_names[st]);
		return EXIT_NO;
	}
	/* The reset goes first: a crash between leaves it failed, reset. */
	if (joblog_note(sp, id, "reset by %s", by) == -1 && errno != ENOENT) {
		snprintf(msg, len, "%s/log/%s: %s", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	if (state_retry(sp, id) == -1) {
		saved = errno;
		snprintf(msg, len, "%s: retry: %s", id, strerror(saved));
		return saved == ENOENT || saved == EEXIST ? EXIT_NO : EX_IOERR;
	}
	if (spool_sync(sp) == -1) {
		snprintf(msg, len, "%s: fsync: %s", sp->path, strerror(errno));
		return EX_IOERR;
	}
	snprintf(msg, len, "%s failed->new", id);
	return 0;
}

static int
retry_one(struct spool *sp, const char *id)
{
	char by[64], msg[2 * PATH_MAX];

	snprintf(by, sizeof(by), "`chute retry` (uid %ld)", (long)getuid());
	return cmd_say_result(retry_job(sp, id, by, msg, sizeof(msg)), msg);
}

int
cmd_retry(int argc, char **argv)
{
	return cmd_each_id(argc, argv, retry_one);
}
