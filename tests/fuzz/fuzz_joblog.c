/*
 * fuzz_joblog.c: log/ID as chute reads it back (attempt counting).  The
 * handler writes most of this file, so any bytes at all must parse.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/joblog.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct joblog_info ji;

	joblog_parse((const char *)data, size, &ji);
	if (ji.attempts < 0 || strlen(ji.last) >= sizeof(ji.last))
		abort();
	return 0;
}
