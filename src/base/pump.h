/*
 * pump.h, the interface of pump.c: pipes read into files, each kept to a
 * cap, by a thread of its own.
 */
#ifndef BASE_PUMP_H
#define BASE_PUMP_H

#include <stddef.h>

struct pumps;
/* Pipes pumped into files of at most cap bytes and one more; NULL, errno. */
struct pumps	*pumps_new(size_t cap);

/*
 * A new pipe for key (a claim), pumped into the file fd, which ps owns
 * from now on.  Returns the pipe's write end (close-on-exec, blocking),
 * for the caller to hand out and close; or -1 with errno set, fd closed.
 */
int	 pumps_add(struct pumps *ps, const void *key, int fd);

/*
 * What key's pipe still holds, into its file (the writer has ended; a
 * child it left may still write, so this too is bounded).  Returns the
 * file, which stays ps's, or -1 when key has no pipe here.
 */
int	 pumps_drain(struct pumps *ps, const void *key);

/* key's pipe and file go, if it has them (its write end is the caller's). */
void	 pumps_drop(struct pumps *ps, const void *key);

/* The thread stopped, every pipe and file closed, ps freed. */
void	 pumps_free(struct pumps *ps);

#endif
