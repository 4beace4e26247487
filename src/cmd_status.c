/*
 * cmd_status.c: `chute status SPOOL ID...`: one line per job, its state,
 * attempts, last outcome and, when deferred, the time of its next try.
 */
#include <stdio.h>
#include <string.h>

#include "chute.h"

/* "ID STATE attempts=N [last outcome] [next=TIME]", or "unknown job". */
static int
status_one(struct spool *sp, const char *id)
{
	struct joblog_info ji;
	struct stat st;
	char next[48] = "";
	int state;

	if ((state = spool_locate(sp, id, &st)) == ST_NONE) {
		fflush(stdout);		/* the lines before it come first */
		fprintf(stderr, "chute: %s: unknown job\n", id);
		return EXIT_NO;
	}
	joblog_read(sp, id, &ji);
	if (state == ST_DEFER) {
		strlcpy(next, " next=", sizeof(next));
		iso_time((msec_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000, next + 6, sizeof(next) - 6);
	}
	printf("%s %s attempts=%d%s%s%s\n", id, state_names[state],
	    ji.attempts, ji.last[0] ? " " : "", ji.last, next);
	return 0;
}

int
cmd_status(int argc, char **argv)
{
	return cmd_each_id(argc, argv, status_one);
}
