/*
 * worker: the smallest persistent worker for `chute run --persistent`: for
 * each "ID PATH" line on stdin, answer "ok" on stdout, at once.  Under
 * `--inline` (CHUTE_INLINE=1) each line is "ID LENGTH", followed by
 * LENGTH bytes, which it reads and drops before answering.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read and drop the payload whose length ends the head line. */
static int
skip(const char *line)
{
	const char *tab = strchr(line, '\t');
	unsigned long long n;
	char buf[65536];
	size_t k;

	if (tab == NULL)
		return -1;
	for (n = strtoull(tab + 1, NULL, 10); n > 0; n -= k)
		if ((k = fread(buf, 1, n < sizeof(buf) ? n : sizeof(buf),
		    stdin)) == 0)
			return -1;
	return 0;
}

int
main(void)
{
	const char *in = getenv("CHUTE_INLINE");
	int inline_jobs = in != NULL && strcmp(in, "1") == 0;
	char *line = NULL;
	size_t cap = 0;

	while (getline(&line, &cap, stdin) != -1) {
		if (inline_jobs && skip(line) == -1)
			return 1;
		if (fputs("ok\n", stdout) == EOF || fflush(stdout) == EOF)
			return 1;
	}
	return 0;
}
