/*
 * cmd_retry.c: `chute retry SPOOL ID...`: reset the attempt count of each
 * job in failed/ and move it back to new/, by one rename; no owner needed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/state.h"

static int
retry_one(struct spool *sp, const char *id)
{
	int st = spool_locate(sp, id, NULL), saved;

	if (st != ST_FAILED) {
		if (st == ST_NONE)
			fprintf(stderr, "chute: %s: unknown job\n", id);
		else
			fprintf(stderr, "chute: %s: not failed (%s)\n", id,
			    state_names[st]);
		return EXIT_NO;
	}
	/* The reset goes first: a crash between leaves it failed, reset. */
	if (joblog_note(sp, id, "reset by `chute retry` (uid %ld)",
	    (long)getuid()) == -1 && errno != ENOENT) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	if (state_retry(sp, id) == -1) {
		saved = errno;
		fprintf(stderr, "chute: %s: retry: %s\n", id, strerror(saved));
		return saved == ENOENT || saved == EEXIST ? EXIT_NO : EX_IOERR;
	}
	if (spool_sync(sp) == -1) {
		fprintf(stderr, "chute: %s: fsync: %s\n", sp->path,
		    strerror(errno));
		return EX_IOERR;
	}
	printf("%s failed->new\n", id);
	return 0;
}

int
cmd_retry(int argc, char **argv)
{
	return cmd_each_id(argc, argv, retry_one);
}
