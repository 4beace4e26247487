/*
 * worker-example.c: a persistent worker for `chute run --persistent`, in C.
 * Build: cc -O2 -o worker-example worker-example.c
 *
 * chute writes one job per line on stdin, "ID<TAB>PATH\n", and waits for
 * one line on stdout: "ok", "retry REASON" or "fail REASON".  stdout is
 * the protocol: print diagnostics to stderr.  Exit when stdin ends.
 * This one counts the bytes of each job and says ok.
 */
#include <stdio.h>
#include <string.h>

int
main(void)
{
	char line[8192], buf[65536];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *tab = strchr(line, '\t'), *path;
		size_t n, total = 0;
		FILE *f;

		line[strcspn(line, "\n")] = '\0';
		if (tab == NULL) {
			printf("fail malformed request\n");
			fflush(stdout);
			continue;
		}
		*tab = '\0';
		path = tab + 1;
		if ((f = fopen(path, "re")) == NULL) {
			printf("retry cannot open job\n");
			fflush(stdout);
			continue;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			total += n;
		fclose(f);
		fprintf(stderr, "worker: job %s, %zu bytes\n", line, total);
		printf("ok\n");
		fflush(stdout);		/* chute waits for this line */
	}
	return 0;
}
