/*
 * mkqueue: make a backlog fast. Creates N empty files DIR/PREFIX.NNNNNNNNN
 * (O_EXCL, no fsync), in name order, so their mtimes are in that order too.
 *
 * usage: mkqueue DIR N [PREFIX]
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	const char *prefix = argc > 3 ? argv[3] : "q";
	char name[256];
	long n, i;
	int dir, fd;

	if (argc < 3 || argc > 4 || (n = atol(argv[2])) < 0)
		errx(64, "usage: mkqueue DIR N [PREFIX]");
	if ((dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", argv[1]);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s.%09ld", prefix, i);
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd == -1 || close(fd) == -1)
			err(1, "%s/%s", argv[1], name);
	}
	return 0;
}
