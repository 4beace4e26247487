/*
 * worker: the smallest persistent worker for `chute run --persistent`: for
 * each "ID PATH" line on stdin, answer "ok" on stdout, at once.
 */
#include <stdio.h>

int
main(void)
{
	char *line = NULL;
	size_t cap = 0;

	while (getline(&line, &cap, stdin) != -1) {
		if (fputs("ok\n", stdout) == EOF || fflush(stdout) == EOF)
			return 1;
	}
	return 0;
}
