/*
 * lock.h, the interface of lock.c: one owner per spool: flock on the spool
 * root, owner.pid, /proc/locks.
 */
#ifndef STORE_LOCK_H
#define STORE_LOCK_H

#include <sys/types.h>
#include <stddef.h>
#include "base/util.h"
#include "store/spool.h"

/*
 * Take the spool lock without waiting for a live owner.  Returns 0, or -1
 * with errno EWOULDBLOCK when another process owns the spool (an expected
 * answer: the caller says so), or another errno from flock(2).
 */
int	 lock_take(struct spool *sp);

/* Block in the kernel until the owner dies (a warm standby); 0 or -1. */
int	 lock_wait(struct spool *sp);

/*
 * The pid of the process holding the spool lock, 0 if none, -1 if the
 * lock is held but the holder's pid cannot be told.  /proc/locks lists
 * every flock with device and inode; "->" lines are waiters (standbys).
 */
pid_t	 lock_owner(struct spool *sp);

/*
 * The pid owner.pid names (0: none, or not a pid), and its mtime in ms
 * into *mtime (may be NULL; 0 when it cannot be read): when that owner
 * took the lock.  The lock's holder is lock_owner's to tell.
 */
pid_t	 lock_pidfile(struct spool *sp, msec_t *mtime);

/* owner.pid's contents: a decimal pid and a newline; 0 if not that. */
pid_t	 lock_parse_pid(const char *data, size_t len);

/*
 * One line of /proc/locks.  Returns the holder's pid if it is a granted
 * FLOCK on (maj:min, ino), -1 if it is but the pid is not known (another
 * pid namespace), 0 if the line is about something else.  "->" lines are
 * waiters (standbys), not holders.
 */
pid_t	 lock_parse_line(const char *line, unsigned dmaj, unsigned dmin,
	    unsigned long dino);

/* Written after the lock is taken: tmp name, fsync, rename over the old. */
int	 lock_write_pid(struct spool *sp);

#endif
