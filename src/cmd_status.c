/*
 * cmd_status.c: `chute status` and `chute log`: read-only looks at a job.
 */
#include <errno.h>
#include <fcntl.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

/* "ID STATE attempts=N [last outcome] [next=TIME]"; unknown: -1. */
static int
status_line(struct spool *sp, const char *id)
{
	struct joblog_info ji;
	struct stat st;
	char next[48] = "";
	int state;

	if ((state = spool_locate(sp, id, &st)) == ST_NONE)
		return -1;
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
	struct spool sp;
	int rc = 0;

	if (argc < 2)
		return usage_error("status", "no spool given");
	if ((rc = check_ids(argc - 2, argv + 2, "status")) != 0)
		return rc;
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	for (int i = 2; i < argc; i++) {
		if (status_line(&sp, argv[i]) == -1) {
			fflush(stdout);
			fprintf(stderr, "chute: %s: unknown job\n", argv[i]);
			rc = EXIT_NO;
		}
	}
	spool_close(&sp);
	return rc;
}

int
cmd_log(int argc, char **argv)
{
	struct spool sp;
	char buf[65536];
	ssize_t n;
	int fd, rc;

	if (argc != 3)
		return usage_error("log", "want SPOOL and one ID");
	if ((rc = check_ids(1, argv + 2, "log")) != 0)
		return rc;
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	fd = openat(sp.dir[ST_LOG], argv[2], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1) {
		/* A job that has not run yet has no log, and that is fine. */
		rc = errno == ENOENT && spool_locate(&sp, argv[2], NULL) != ST_NONE
		    ? 0 : errno == ENOENT ? EXIT_NO : EX_IOERR;
		if (rc == EXIT_NO)
			fprintf(stderr, "chute: %s: unknown job\n", argv[2]);
		else if (rc != 0)
			fprintf(stderr, "chute: %s/log/%s: %s\n", sp.path,
			    argv[2], strerror(errno));
		spool_close(&sp);
		return rc;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n == -1 && errno == EINTR))
		if (n > 0 && write_all(STDOUT_FILENO, buf, n) == -1) {
			rc = EX_IOERR;
			break;
		}
	close(fd);
	spool_close(&sp);
	return rc;
}
