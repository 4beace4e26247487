/*
 * cmd_status.c: `chute status SPOOL ID...`: one line per job, its state,
 * attempts, last outcome and, when deferred, the time of its next try;
 * for a job forwarded to a database queue, where it went.  Without an ID,
 * the spool's own state: paused or not.
 */
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/spool.h"

#define FORWARDED	"forwarded to "

/*
 * A job `chute forward` moved into a database queue is in done/ with a
 * "forwarded to QUEUE at URI as ID" line in its log (the last one counts:
 * a job sent again after a crash has two), or "... at URI under the same
 * ID", the line its log may share with the rest of its batch.  That
 * line's text after "forwarded " into buf, always with "as ID"; false if
 * the log has none.
 */
static bool
forwarded(struct spool *sp, const char *id, char *buf, size_t len)
{
	struct stat st;
	const char *p, *end, *found = NULL;
	char *map = MAP_FAILED;
	int fd;

	fd = openat(sp->dir[ST_LOG], id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	/* "@chute TIME forwarded to ...": our lines begin a line. */
	for (p = map, end = map + st.st_size; p < end; ) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;
		const char *sp1 = memchr(p, ' ', eol - p), *sp2;

		if (eol - p > 7 && memcmp(p, "@chute ", 7) == 0 && sp1 != NULL &&
		    (sp2 = memchr(sp1 + 1, ' ', eol - sp1 - 1)) != NULL &&
		    (size_t)(eol - sp2 - 1) > strlen(FORWARDED) &&
		    memcmp(sp2 + 1, FORWARDED, strlen(FORWARDED)) == 0) {
			size_t n, same = strlen(" " FWD_SAME_ID);

			found = sp2 + 1 + strlen("forwarded ");
			n = (size_t)(eol - found);
			if (n > same && memcmp(eol - same, " " FWD_SAME_ID,
			    same) == 0)
				snprintf(buf, len, "%.*s as %s",
				    (int)(n - same), found, id);
			else
				snprintf(buf, len, "%.*s", (int)n, found);
		}
		p = eol + 1;
	}
	munmap(map, st.st_size);
	return found != NULL;
}

/*
 * "ID STATE attempts=N [last outcome] [next=TIME]", or "unknown job"; a
 * job forwarded to a database queue says so, and where:
 * "ID forwarded attempts=N to QUEUE at URI as ID".
 */
static int
status_one(struct spool *sp, const char *id)
{
	struct joblog_info ji;
	struct stat st;
	char next[48] = "", fwd[1024], text[4 * sizeof(fwd) + 1];
	pid_t holder;
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
	/* Flocked in new/: no owner runs it while that lock is held. */
	if (state == ST_NEW && (holder = lock_holder(st.st_dev, st.st_ino)) > 0)
		snprintf(next, sizeof(next), " held=%ld", (long)holder);
	/*
	 * The log's text, as the journal shows it: a handler writes to its
	 * log, so it could forge a line or send the terminal escape codes.
	 */
	if (state == ST_DONE && forwarded(sp, id, fwd, sizeof(fwd))) {
		vis_text(fwd, text, sizeof(text));
		printf("%s forwarded attempts=%d %s\n", id, ji.attempts, text);
		return 0;
	}
	vis_text(ji.last, text, sizeof(text));
	printf("%s %s attempts=%d%s%s%s\n", id, state_names[state],
	    ji.attempts, ji.last[0] ? " " : "", text, next);
	return 0;
}

/* "SPOOL paused by WHO since TIME", or "SPOOL not paused". */
static int
status_spool(const char *path)
{
	struct spool sp;
	char by[128], text[256];
	msec_t at = 0;
	int rc, p;

	if ((rc = open_spool_or_exit(&sp, path)) != 0)
		return rc;
	if ((p = spool_paused(&sp, by, sizeof(by), &at)) == -1) {
		fprintf(stderr, "chute: %s/%s: %s\n", path, PAUSE_FILE,
		    strerror(errno));
		spool_close(&sp);
		return EX_IOERR;
	}
	cmd_paused_text(p == 1, by, at, text, sizeof(text));
	printf("%s %s\n", path, text);
	spool_close(&sp);
	return cmd_flush_stdout(0);
}

int
cmd_status(int argc, char **argv)
{
	if (argc == 2)
		return status_spool(argv[1]);
	return cmd_each_id(argc, argv, status_one);
}
