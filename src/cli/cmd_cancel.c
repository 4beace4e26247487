/*
 * cmd_cancel.c: `chute cancel SPOOL ID...`: move each job to failed/ by one
 * rename.  No owner is needed: one that runs the job learns of the cancel
 * from inotify (IN_MOVED_FROM on cur/) and stops its handler.
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
cancel_one(struct spool *sp, const char *id)
{
	int from, st;

	if (state_cancel(sp, id, &from) == 0) {
		/* Only a cancel that won its rename leaves a note. */
		joblog_note(sp, id, "cancelled by `chute cancel` (uid %ld) "
		    "in %s/", (long)getuid(), state_names[from]);
		if (spool_sync(sp) == -1) {
			fprintf(stderr, "chute: %s: fsync: %s\n", sp->path,
			    strerror(errno));
			return EX_IOERR;
		}
		printf("%s %s->failed\n", id, state_names[from]);
		return 0;
	}
	if (errno != ENOENT) {
		fprintf(stderr, "chute: %s: cancel: %s\n", id, strerror(errno));
		return EX_IOERR;
	}
	if ((st = spool_locate(sp, id, NULL)) == ST_NONE)
		fprintf(stderr, "chute: %s: unknown job\n", id);
	else
		fprintf(stderr, "chute: %s: already %s\n", id, state_names[st]);
	return EXIT_NO;
}

int
cmd_cancel(int argc, char **argv)
{
	return cmd_each_id(argc, argv, cancel_one);
}
