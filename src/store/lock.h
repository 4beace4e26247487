/*
 * lock.h, the interface of lock.c: one owner per spool: flock on
 * SPOOL/owner.lock (and, for earlier releases, on the spool root),
 * owner.pid, /proc/locks.
 */
#ifndef STORE_LOCK_H
#define STORE_LOCK_H

#include <sys/types.h>
#include <stddef.h>
#include "base/util.h"
#include "store/spool.h"

/* The owner's lock file in the spool root: only its owner's user opens it. */
#define LOCK_FILE	"owner.lock"
/* Why lock_make refused one (EPERM), for the line that names it. */
#define LOCK_UNSAFE	"not a regular file of the spool's owner's, mode " \
	"0600: another user could hold the spool's lock; remove it while no " \
	"owner runs"

/*
 * Open SPOOL/owner.lock (root: the spool root's descriptor), making it
 * if it is missing: mode 0600, O_EXCL, the spool directory's owner's
 * (chute init, and the first owner of a spool made before it).  Returns
 * the descriptor, or -1 with errno: EPERM when the file there is not
 * one only that user could have opened (not a regular file, or open to
 * its group or others, or another user's): another user may hold its
 * lock, and it must be removed while no owner runs.
 */
int	 lock_make(int root);

/*
 * Take the spool lock without waiting for a live owner: the flock on
 * owner.lock (kept open in sp->lock), then, when it is free, the one on
 * the spool root, which earlier releases take.  Returns 0, or -1 with
 * errno EWOULDBLOCK when another owner holds owner.lock, or an earlier
 * release's owner the root (an expected answer: the caller says so), or
 * another errno from lock_make or flock(2).  A flock on the root held by
 * anyone else (a submitter can open the root of a group spool) is said
 * once and does not stop the owner.
 */
int	 lock_take(struct spool *sp);

/* Block in the kernel until the owner dies (a warm standby); 0 or -1. */
int	 lock_wait(struct spool *sp);

/*
 * The pid of the process holding the spool lock, 0 if none, -1 if the
 * lock is held but the holder's pid cannot be told.  /proc/locks lists
 * every flock with device and inode; "->" lines are waiters (standbys).
 * The holder of owner.lock; without one, the holder of the root's flock
 * only if it is an earlier release's owner (the pid owner.pid names, of
 * the spool's owner's user): a submitter's hold on the root is no owner.
 */
pid_t	 lock_owner(struct spool *sp);

/*
 * Who holds a flock on the file (dev, ino): its pid, 0 if nobody, -1 if
 * somebody whose pid cannot be told (another pid namespace, or no
 * /proc/locks).  The pid is the process that took the lock; it may have
 * exited since, leaving the lock to a process that inherited it.
 */
pid_t	 lock_holder(dev_t dev, ino_t ino);

/*
 * Has a process of the spool directory's owner's user, or of ours, other
 * than this one, the file *file open (one of its /proc/PID/fd)?  Those
 * are the processes whose descriptors we may read, and a handler an
 * owner started runs as that owner.  true when /proc cannot be read.
 * *hint: the pid to look at first (0: none), set to the one found (0:
 * none), so that a look again costs one process's descriptors, not
 * every process's.
 */
bool	 lock_file_open_by_owner(struct spool *sp, const struct stat *file,
	    pid_t *hint);

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
