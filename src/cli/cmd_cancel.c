/*
 * cmd_cancel.c: `chute cancel SPOOL ID...`: move each job to failed/ by one
 * rename.  No owner is needed: one that runs the job learns of the cancel
 * from inotify (IN_MOVED_FROM on cur/) and stops its handler.
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
cancel_job(struct spool *sp, const char *id, const char *by, char *msg,
    size_t len)
{
	int from, st;

	if (state_cancel(sp, id, &from) == 0) {
		/* Only a cancel that won its rename leaves a note. */
		joblog_note(sp, id, "cancelled by %s in %s/", by,
		    state_names[from]);
		if (spool_sync(sp) == -1) {
			snprintf(msg, len, "%s: fsync: %s", sp->path,
			    strerror(errno));
			return EX_IOERR;
		}
		snprintf(msg, len, "%s %s->failed", id, state_names[from]);
		return 0;
	}
	if (errno != ENOENT) {
		snprintf(msg, len, "%s: cancel: %s", id, strerror(errno));
		return EX_IOERR;
	}
	if ((st = spool_locate(sp, id, NULL)) == ST_NONE)
		snprintf(msg, len, "%s: unknown job", id);
	else
		snprintf(msg, len, "%s: already %s", id, state_names[st]);
	return EXIT_NO;
}

static int
cancel_one(struct spool *sp, const char *id)
{
	char by[64], msg[2 * PATH_MAX];

	snprintf(by, sizeof(by), "`chute cancel` (uid %ld)", (long)getuid());
	return cmd_say_result(cancel_job(sp, id, by, msg, sizeof(msg)), msg);
}

int
cmd_cancel(int argc, char **argv)
{
	return cmd_each_id(argc, argv, cancel_one);
}
