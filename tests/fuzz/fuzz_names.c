/*
 * fuzz_names.c: IDs and file names, as they arrive on command lines and
 * in new/.  Properties: id_derive always yields a valid, safe ID; a valid
 * ID never contains '/', a control byte or a leading '.'; vis_name never
 * lets a newline through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[512], id[512], vis[4 * 512 + 1];

	if (size >= sizeof(name))
		size = sizeof(name) - 1;
	memcpy(name, data, size);
	name[size] = '\0';
	if (id_valid(name)) {
		if (strchr(name, '/') || name[0] == '.' || strlen(name) > ID_MAX)
			abort();
		for (const unsigned char *p = (void *)name; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				abort();
	}
	id_derive(name, id, sizeof(id));
	if (!id_valid(id) || strspn(id, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(id))
		abort();
	vis_name(name, vis, sizeof(vis));
	if (strchr(vis, '\n') || strchr(vis, '\r'))
		abort();
	return 0;
}
