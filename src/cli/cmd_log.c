/*
 * cmd_log.c: `chute log SPOOL ID`: copy log/ID to stdout as it is (on a
 * terminal, escaped: cmd_write_log): the handler's output and chute's own
 * "@chute" lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"

/* No log/ID: fine for a job that has not run yet, else an unknown job. */
static int
no_log(struct spool *sp, const char *id)
{
	if (errno != ENOENT) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	if (spool_locate(sp, id, NULL) != ST_NONE)
		return 0;
	fprintf(stderr, "chute: %s: unknown job\n", id);
	return EXIT_NO;
}

static int
copy_log(struct spool *sp, const char *id, int fd)
{
	char buf[65536];
	ssize_t n;

	while ((n = read_full(fd, buf, sizeof(buf))) > 0)
		if (cmd_write_log(buf, (size_t)n) == -1) {
			fprintf(stderr, "chute: stdout: %s\n", strerror(errno));
			return EX_IOERR;
		}
	if (n == -1) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	return 0;
}

int
cmd_log(int argc, char **argv)
{
	struct spool sp;
	int fd, rc;

	if (argc != 3)
		return usage_error("log", "want SPOOL and one ID");
	if ((rc = check_ids(1, argv + 2, "log")) != 0)
		return rc;
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	fd = openat(sp.dir[ST_LOG], argv[2], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		rc = no_log(&sp, argv[2]);
	else {
		rc = copy_log(&sp, argv[2], fd);
		close(fd);
	}
	spool_close(&sp);
	return rc;
}
