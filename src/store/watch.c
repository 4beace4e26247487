/*
 * watch.c: inotify on the state directories.  Events are wake-ups, never
 * the truth: a name from an event is checked against the directory before
 * anything is done to it, and IN_Q_OVERFLOW (events were dropped) is
 * passed on as "rescan everything".
 */
#include <sys/inotify.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/spool.h"
#include "store/watch.h"

struct watch {
	int	 fd;
	int	 wd[ST_NDIRS];
	int	 root;		/* watch_root's; -1: none */
};

static uint32_t
mask_for(int st)
{
	uint32_t m = IN_ONLYDIR | IN_DONT_FOLLOW | IN_DELETE_SELF |
	    IN_MOVE_SELF;

	switch (st) {
	case ST_NEW:
		/* rename in; link() or open(O_CREAT); a writer closing. */
		return m | IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE |
		    IN_ATTRIB;
	case ST_DEFER:
		/* the same, and a job leaving: promoted, cancelled, removed. */
		return m | IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE |
		    IN_ATTRIB | IN_MOVED_FROM | IN_DELETE;
	case ST_CUR:
		/* a cancel, or an operator moving a running job away. */
		return m | IN_MOVED_FROM | IN_DELETE;
	default:
		return m | IN_MOVED_TO | IN_CREATE;
	}
}

struct watch *
watch_open(struct spool *sp, const int *states, int n)
{
	struct watch *w = calloc(1, sizeof(*w));
	int saved;

	if (w == NULL)
		return NULL;
	w->fd = w->root = -1;
	for (int i = 0; i < ST_NDIRS; i++)
		w->wd[i] = -1;
	if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		goto fail;
	for (int i = 0; i < n; i++) {
		char *p = spool_jobpath(sp, states[i], "");
		if (p == NULL)
			goto fail;
		w->wd[states[i]] = inotify_add_watch(w->fd, p,
		    mask_for(states[i]));
		free(p);
		if (w->wd[states[i]] == -1)
			goto fail;
	}
	return w;
fail:
	saved = errno;
	watch_close(w);
	errno = saved;
	return NULL;
}

int
watch_root(struct watch *w, struct spool *sp)
{
	char path[32];

	/* The root by its descriptor: the path may have been renamed. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", sp->root);
	w->root = inotify_add_watch(w->fd, path, IN_ONLYDIR | IN_CREATE |
	    IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE);
	return w->root == -1 ? -1 : 0;
}

int
watch_fd(struct watch *w)
{
	return w->fd;
}

static enum watch_kind
kind_of(uint32_t mask)
{
	if (mask & IN_Q_OVERFLOW)
		return W_OVERFLOW;
	if (mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED))
		return W_GONE;
	if (mask & IN_MOVED_TO)
		return W_ARRIVED;
	if (mask & IN_CREATE)
		return W_CREATED;
	if (mask & (IN_CLOSE_WRITE | IN_ATTRIB))
		return W_WRITTEN;
	return W_LEFT;
}

int
watch_decode(struct watch *w, const char *buf, size_t len,
    void (*fn)(void *, const struct watch_event *), void *arg)
{
	size_t off = 0;

	while (off + sizeof(struct inotify_event) <= len) {
		struct inotify_event ie;
		struct watch_event ev = { .state = ST_NONE, .name = "" };
		const char *name = buf + off + sizeof(ie);

		memcpy(&ie, buf + off, sizeof(ie));
		/* A name must end inside its own record and the buffer. */
		if (ie.len > len - off - sizeof(ie) ||
		    (ie.len > 0 && memchr(name, '\0', ie.len) == NULL))
			return -1;
		off += sizeof(ie) + ie.len;
		ev.kind = kind_of(ie.mask);
		for (int i = 0; i < ST_NDIRS; i++)
			if (w->wd[i] != -1 && w->wd[i] == ie.wd)
				ev.state = i;
		if (w->root != -1 && w->root == ie.wd)
			ev.state = WATCH_ROOT;
		if (ev.kind != W_OVERFLOW && ev.state == ST_NONE)
			continue;
		if (ev.state == WATCH_ROOT && ev.kind == W_GONE)
			continue;
		if (ie.len > 0)
			ev.name = name;
		if (ev.kind == W_GONE && ie.len > 0)
			continue;
		/* Hidden names are editors' and rsync's temporaries. */
		if (ev.name[0] == '.')
			continue;
		if (ev.name[0] == '\0' && ev.kind != W_OVERFLOW &&
		    ev.kind != W_GONE)
			continue;
		fn(arg, &ev);
	}
	return 0;
}

int
watch_read(struct watch *w, void (*fn)(void *, const struct watch_event *),
    void *arg)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	for (;;) {
		n = read(w->fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		if (watch_decode(w, buf, n, fn, arg) == -1) {
			errno = EPROTO;
			return -1;
		}
	}
}

void
watch_close(struct watch *w)
{
	if (w == NULL)
		return;
	if (w->fd != -1)
		close(w->fd);
	free(w);
}
