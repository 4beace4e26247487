/*
 * stamp: take CLOCK_REALTIME first thing, then say it. The latency handler of
 * bench/run, and its way to time the start of a command.
 *
 *   stamp DIR [NAME]       write "SEC.NSEC\n" to DIR/NAME (NAME defaults to
 *                          $CHUTE_ID), through DIR/.NAME and a rename, so
 *                          a watcher of DIR sees one IN_MOVED_TO per stamp
 *   stamp -                print it on stdout
 *   stamp -x FILE CMD...   write it to FILE, then exec CMD
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct timespec ts;
	char line[64], tmp[4096], dst[4096];
	const char *name;
	int fd, len;

	clock_gettime(CLOCK_REALTIME, &ts);
	len = snprintf(line, sizeof(line), "%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
	if (argc >= 2 && strcmp(argv[1], "-") == 0)
		return write(1, line, len) == len ? 0 : 1;
	if (argc >= 4 && strcmp(argv[1], "-x") == 0) {
		if ((fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1 ||
		    write(fd, line, len) != len || close(fd) == -1)
			err(1, "%s", argv[2]);
		execvp(argv[3], argv + 3);
		err(127, "%s", argv[3]);
	}
	if (argc < 2 || argc > 3)
		errx(64, "usage: stamp DIR [NAME] | stamp - | stamp -x FILE CMD...");
	name = argc == 3 ? argv[2] : getenv("CHUTE_ID");
	if (name == NULL || *name == '\0' || strchr(name, '/') != NULL)
		errx(64, "no usable NAME and no CHUTE_ID");
	snprintf(tmp, sizeof(tmp), "%s/.%s", argv[1], name);
	snprintf(dst, sizeof(dst), "%s/%s", argv[1], name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1 ||
	    write(fd, line, len) != len || close(fd) == -1 || rename(tmp, dst) == -1)
		err(1, "%s", dst);
	return 0;
}
