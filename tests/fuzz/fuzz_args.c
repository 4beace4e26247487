/*
 * fuzz_args.c: `chute run` command lines (NUL-separated arguments).
 * Properties: a parse that succeeds has a spool, a handler and sane
 * limits; nothing crashes on any argument vector.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "run/opts.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[34];
	int argc = 1;
	struct run_opts o;
	const char *spool;

	if (size > 4096 || (buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "run";
	for (char *p = buf; p < buf + size && argc < 33; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	/* Usage errors are expected here; keep them off the fuzzer's
	 * stderr.  A crash still leaves its input in the artifact file. */
	int saved = dup(2), null = open("/dev/null", O_WRONLY);
	dup2(null, 2);
	int rc = run_parse_args(argc, argv, &o, &spool);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(null);
	if (rc == 0) {
		if (spool == NULL || o.argv == NULL || o.argv[0] == NULL ||
		    o.jobs < 1 || o.max_attempts < 1 || o.grace < 0 ||
		    o.backoff_base <= 0 || o.backoff_cap < o.backoff_base)
			abort();
	}
	free(buf);
	return 0;
}
