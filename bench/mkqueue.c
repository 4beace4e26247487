/*
 * mkqueue: make a backlog fast. Creates N empty files DIR/PREFIX.NNNNNNNNN
 * (O_EXCL, no fsync), in name order, so their mtimes are in that order too.
 *
 * usage: mkqueue [-p] [-k K | -K KEY] DIR N [PREFIX]
 *
 * The scheduling rows (issue 36) give the names the attributes a submitter
 * without chute gives (spool-layout.md, "Priority and key"): -p a priority
 * ",p=P", P = (i * 7) mod 5 - 2 for the ith file (none where P is 0), -k K
 * a key ",k=kJ", J = i mod K, and -K KEY the key KEY for every file.
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	const char *prefix, *key = NULL;
	char name[256], prio[16], k[96];
	long n, i, keys = 0;
	int dir, fd, c, p = 0;

	while ((c = getopt(argc, argv, "pk:K:")) != -1) {
		switch (c) {
		case 'p': p = 1; break;
		case 'k': keys = atol(optarg); break;
		case 'K': key = optarg; break;
		default: goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || argc > 3 || (n = atol(argv[1])) < 0 || keys < 0 || (keys && key))
		goto usage;
	prefix = argc > 2 ? argv[2] : "q";
	if ((dir = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", argv[0]);
	for (i = 0; i < n; i++) {
		int pv = (int)((i * 7) % 5) - 2;

		prio[0] = k[0] = '\0';
		if (p && pv != 0)
			snprintf(prio, sizeof(prio), ",p=%d", pv);
		if (keys)
			snprintf(k, sizeof(k), ",k=k%ld", i % keys);
		else if (key)
			snprintf(k, sizeof(k), ",k=%.64s", key);
		snprintf(name, sizeof(name), "%s.%09ld%s%s", prefix, i, prio, k);
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd == -1 || close(fd) == -1)
			err(1, "%s/%s", argv[0], name);
	}
	return 0;
usage:
	errx(64, "usage: mkqueue [-p] [-k K | -K KEY] DIR N [PREFIX]");
}
