/*
 * fuzz_names.c: IDs and file names, as they arrive on command lines and
 * in new/.  Properties: id_derive always yields a valid, safe ID; a valid
 * ID never contains '/', a control byte or a leading '.'; vis_name never
 * lets a newline through.  A derived ID is made of safe bytes up to its
 * attributes (",L=VALUE" at its end, base/sched.h), which may hold the
 * bytes a key may, and '%' for any other (a bad one stays bad).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"

#define SAFE	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[512], id[512], vis[4 * 512 + 1];
	size_t n;

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
	n = strspn(id, SAFE);
	if (!id_valid(id) || (id[n] != '\0' && id[n] != ',') ||
	    strspn(id + n, SAFE ",=:@+%") != strlen(id + n))
		abort();
	vis_name(name, vis, sizeof(vis));
	if (strchr(vis, '\n') || strchr(vis, '\r'))
		abort();
	return 0;
}
