/*
 * fuzz_dur.c: durations (--timeout, --grace, --delay, --backoff,
 * --older-than).  Properties: accepted values are non-negative and within
 * the documented bound; the formatter never overruns.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static uint32_t half(uint32_t n) { return n / 2; }

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[64], out[32];
	msec_t v;

	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = '\0';
	if (dur_parse(s, &v) == 0) {
		if (v < 0 || v > 100LL * 365 * 86400 * 1000)
			abort();
		dur_format(v, out, sizeof(out));
		if (v > 0) {
			msec_t d = backoff_delay(v, v * 2, (int)(v % 100) + 1, half);
			if (d < v / 2 || d > v * 2)
				abort();
		}
	}
	return 0;
}
