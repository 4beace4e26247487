/*
 * pstamp: a persistent worker for `chute run --persistent` that stamps each
 * job on receipt (bench/fleet/chute.sh, issue 9).
 *
 *   pstamp STAMPS [COUNT N]
 *
 * For each "ID<TAB>PATH" line on stdin: take CLOCK_REALTIME first thing,
 * append "ID MS\n" (MS: milliseconds since the epoch, 3 decimals) to STAMPS,
 * answer "ok". STAMPS is opened O_APPEND, so the -j N workers of one owner
 * can share it (one write(2) per line).
 *
 * With COUNT N: also append one byte per job to COUNT (shared the same way);
 * the worker whose byte is the Nth sends SIGTERM to its owner (its parent)
 * after answering. That stops the owner after about N jobs without anyone
 * polling the database.
 */
#include <err.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	char *line = NULL, out[512];
	size_t cap = 0;
	ssize_t len;
	long long stop = 0;
	int fd, cfd = -1;

	if (argc != 2 && argc != 4)
		errx(64, "usage: pstamp STAMPS [COUNT N]");
	if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1)
		err(1, "%s", argv[1]);
	if (argc == 4) {
		if ((cfd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1)
			err(1, "%s", argv[2]);
		stop = atoll(argv[3]);
	}
	while ((len = getline(&line, &cap, stdin)) != -1) {
		struct timespec ts;
		size_t idlen = strcspn(line, "\t\n");
		int n;

		clock_gettime(CLOCK_REALTIME, &ts);
		if (idlen > 400)
			idlen = 400;
		n = snprintf(out, sizeof(out), "%.*s %lld.%03ld\n", (int)idlen, line,
		    (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, (ts.tv_nsec / 1000) % 1000);
		if (write(fd, out, (size_t)n) != n)
			err(1, "%s", argv[1]);
		if (fputs("ok\n", stdout) == EOF || fflush(stdout) == EOF)
			return 1;
		if (cfd != -1) {
			off_t at;

			if (write(cfd, "x", 1) != 1 || (at = lseek(cfd, 0, SEEK_CUR)) == -1)
				err(1, "%s", argv[2]);
			if (at == stop)
				kill(getppid(), SIGTERM);
		}
	}
	return 0;
}
