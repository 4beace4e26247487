/*
 * fuzz_disk.c: the other things chute reads back from outside: owner.pid
 * and lines of /proc/locks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/lock.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[256];
	pid_t pid = lock_parse_pid((const char *)data, size);

	if (pid < 0 || pid > (1 << 30))
		abort();
	if (size >= sizeof(line))
		size = sizeof(line) - 1;
	memcpy(line, data, size);
	line[size] = '\0';
	pid = lock_parse_line(line, 0, 31, 1234);
	if (pid < -1 || pid > (1 << 30))
		abort();
	return 0;
}
