/*
 * fuzz_events.c: raw inotify buffers through watch_decode.  The kernel is
 * trusted, but a decoder that reads past a short or odd buffer is a bug
 * worth finding cheaply.
 */
#include <sys/inotify.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/spool.h"
#include "store/watch.h"

static struct spool sp;
static struct watch *w;

static void
check(void *arg, const struct watch_event *ev)
{
	if (ev->name == NULL || ev->name[0] == '.')
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int states[] = { ST_NEW, ST_CUR, ST_DEFER };
	char *buf;

	if (w == NULL) {
		char dir[] = "/tmp/chute-fuzz.XXXXXX";
		if (mkdtemp(dir) == NULL || spool_init(dir, NULL) == -1 ||
		    spool_open(&sp, dir) == -1 ||
		    (w = watch_open(&sp, states, 3)) == NULL)
			abort();
	}
	/* The kernel always NUL-terminates names within len; so do we. */
	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	watch_decode(w, buf, size, check, NULL);
	free(buf);
	return 0;
}
