/*
 * worker-example.c: a persistent worker for `chute run --persistent`, in C.
 * Build: cc -O2 -o worker-example worker-example.c
 *
 * chute writes one job per line on stdin, "ID<TAB>PATH\n", and waits for
 * one line on stdout: "ok", "retry REASON" or "fail REASON".  stdout is
 * the protocol: print diagnostics to stderr.  Exit when stdin ends.
 *
 * Run with `--inline` (chute then sets CHUTE_INLINE=1), chute writes
 * "ID<TAB>LENGTH\n" and then LENGTH bytes, the job's payload itself, any
 * bytes (NULs too), and no file is opened.  Read all LENGTH bytes before
 * you answer: a worker that answers with some unread is stopped and
 * started again (its answer still counts).
 *
 * This one counts the bytes of each job and says ok, in either protocol.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The path protocol: open the job file and read it. */
static const char *
by_path(const char *path, size_t *total)
{
	char buf[65536];
	size_t n;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL)
		return "retry cannot open job";
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		*total += n;
	fclose(f);
	return "ok";
}

/* --inline: exactly len bytes from stdin; NULL if stdin ended first. */
static const char *
inline_payload(const char *len, size_t *total)
{
	char buf[65536], *end;
	unsigned long long want = strtoull(len, &end, 10);
	size_t n;

	if (end == len || *end != '\0')
		return NULL;	/* not a length: the framing is lost */
	while (want > 0) {
		n = fread(buf, 1, want < sizeof(buf) ? want : sizeof(buf), stdin);
		if (n == 0)
			return NULL;
		*total += n;
		want -= n;
	}
	return "ok";
}

int
main(void)
{
	const char *in = getenv("CHUTE_INLINE");
	int inline_jobs = in != NULL && strcmp(in, "1") == 0;
	char line[8192];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char *tab = strchr(line, '\t');
		const char *answer;
		size_t total = 0;

		line[strcspn(line, "\n")] = '\0';
		if (tab == NULL) {
			if (inline_jobs)
				return 1;	/* no way to find the next job */
			printf("fail malformed request\n");
			fflush(stdout);
			continue;
		}
		*tab = '\0';
		answer = inline_jobs ? inline_payload(tab + 1, &total) :
		    by_path(tab + 1, &total);
		if (answer == NULL)
			return 1;
		fprintf(stderr, "worker: job %s, %zu bytes\n", line, total);
		printf("%s\n", answer);
		fflush(stdout);		/* chute waits for this line */
	}
	return 0;
}
