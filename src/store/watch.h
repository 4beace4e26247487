/*
 * watch.h, the interface of watch.c: inotify on state directories, decoded
 * into struct watch_event.
 */
#ifndef STORE_WATCH_H
#define STORE_WATCH_H

#include <stddef.h>
#include "store/spool.h"

enum watch_kind { W_ARRIVED, W_CREATED, W_WRITTEN, W_LEFT, W_OVERFLOW, W_GONE };
#define WATCH_ROOT	(-2)	/* an event's state: the spool root (watch_root) */
struct watch_event {
	int		 state;		/* ST_NEW, ST_CUR, ST_DEFER, ..., WATCH_ROOT */
	enum watch_kind	 kind;
	const char	*name;
};
struct watch;
/*
 * Watch the given state directories.  Returns NULL with errno set; EMFILE
 * or ENOSPC here usually mean fs.inotify.max_user_instances/watches.
 */
struct watch	*watch_open(struct spool *sp, const int *states, int n);

/*
 * Watch the spool root too, for names created, moved in, moved out and
 * removed there (SPOOL/paused: pause.h), as events of state WATCH_ROOT;
 * hidden names are left out as everywhere.  Its removal is no event: the
 * state directories' own say that the spool went.  0, or -1 with errno.
 */
int	 watch_root(struct watch *w, struct spool *sp);

int	 watch_fd(struct watch *w);

/* Drain the inotify descriptor.  Returns 0, or -1 with errno set. */
int	 watch_read(struct watch *w, void (*fn)(void *,
	    const struct watch_event *), void *arg);

/*
 * Decode a buffer of struct inotify_event and call fn for each one on a
 * watched directory.  Split from watch_read so tests can feed events.
 * Returns 0, or -1 for a malformed buffer (the caller rescans).
 */
int	 watch_decode(struct watch *w, const char *buf, size_t len,
	    void (*fn)(void *, const struct watch_event *), void *arg);

void	 watch_close(struct watch *w);

#endif
