/*
 * ready.h, the interface of ready.c: is a file in new/ complete, and safe
 * to hand to a handler?
 */
#ifndef STORE_READY_H
#define STORE_READY_H

#include <sys/stat.h>
#include <time.h>
#include "base/util.h"
#include "store/spool.h"

enum ready {
	READY_YES,	/* complete; *fdp is the open, flocked job file */
	READY_WRITER,	/* a process still has it open for writing */
	READY_QUIET,	/* no lease possible and modified < QUIET_MS ago */
	READY_BUSY,	/* a handler from an earlier owner holds its lock */
	READY_GONE,	/* vanished: someone else moved it */
	READY_NOTREG,	/* not a regular file: never opened, never followed */
	READY_DENIED,	/* the owner may not read it (a group spool's umask) */
	READY_LINKED,	/* other hard links than its tmp/ name: refused */
	READY_ERR,
};
#define RF_MOVED	0x1	/* arrived by rename: complete by protocol */
#define RF_CLOSED	0x2	/* a writer was seen closing it */
#define RF_TMPLINK	0x4	/* still linked as tmp/NAME: link-style submitter */
#define RF_REG		0x8	/* a regular file when admitted (spoolq_admit) */
#define RF_PEEK		0x10	/* read by us, run by no handler: not locked */
/*
 * Check new/name.  On READY_YES, *fdp is the job file, open read-only,
 * still O_NONBLOCK (spawn_handler clears that for a handler's stdin) and
 * (unless RF_PEEK) flock()ed: the lock travels with the descriptor into
 * the handler, so a later owner can see that a handler for this job still
 * runs (READY_BUSY).  Never follows a symlink and never opens anything but a
 * regular file (READY_NOTREG, with st filled in for the message), and
 * refuses one with other hard links (READY_LINKED).
 */
enum ready	 ready_check(struct spool *sp, const char *name,
	    unsigned flags, int *fdp, struct stat *st);

/* ready_check, and the file's birth time ({ -1, 0 }: not kept). */
enum ready	 ready_checkb(struct spool *sp, const char *name,
	    unsigned flags, int *fdp, struct stat *st, struct timespec *btime);

/*
 * Without a lease: a file renamed in, or whose writer was seen closing it,
 * or that still has its tmp/ link (RF_TMPLINK: link-style submitters), is
 * complete; anything else must have been left alone for QUIET_MS.
 */
enum ready	 ready_fallback(const struct stat *st, unsigned flags,
	    msec_t now);

#endif
