/*
 * state.h, the interface of state.c: the only code that renames a job;
 * spool-layout.md lists each transition.
 */
#ifndef STORE_STATE_H
#define STORE_STATE_H

#include <stddef.h>
#include "base/util.h"
#include "store/spool.h"

/*
 * Submit: copy src into tmp/ID, fsync it, then rename it to new/ID (or to
 * defer/ID with mtime `at` when at > 0).  The directory fsync is the
 * caller's spool_sync(), once per batch.  On error nothing is left in
 * tmp/ or new/, and *where says which path failed (1 = the input).
 * Returns 0, or -1 with errno set; EEXIST: the ID is taken in new/defer.
 */
int	 state_submit(struct spool *sp, int src, const char *id, msec_t at,
	    int *where);

/*
 * Unique keys' submit (cli/cmd_submit_unique.c) in steps, so that the
 * key's lock is held only around the renames: write src to tmp/name (its
 * mtime at when at > 0) and fsync it, as state_submit does (*where the
 * same); then one of state_place (tmp/name -> new/ or defer/),
 * state_replace, or an unlinkat of tmp/name.  0, or -1 with errno set.
 */
int	 state_write_tmp(struct spool *sp, int src, const char *name, msec_t at,
	    int *where);
/* tmp/name -> new/name (at 0) or defer/name; EEXIST: the ID is taken. */
int	 state_place(struct spool *sp, const char *name, msec_t at);

/*
 * A waiting job's bytes and time replaced (--on-duplicate replace) by
 * tmp/tmpname's (state_write_tmp), under the same ID, in new/ (at 0) or
 * defer/.  In the same directory one renameat2(RENAME_EXCHANGE), whose
 * old bytes land in tmp/tmpname and go; from new/ to defer/, the old
 * job deferred first (time, then rename) and then exchanged; from defer/
 * to new/, exchanged, then moved on.  At no instant is the job out of
 * both (spool-layout.md, "Unique keys").  0, or -1 with errno
 * set, tmp/tmpname left for the caller; ENOENT: from/id is not there any
 * more (claimed, promoted, cancelled).
 */
int	 state_replace(struct spool *sp, const char *tmpname, const char *id,
	    int from, msec_t at);

/* new -> cur.  ENOENT means another process moved it first: not an error. */
int	 state_claim(struct spool *sp, const char *id);

/*
 * Take back a submission whose directory fsync failed: new/ID (or
 * defer/ID) -> tmp/ID, then unlink it, so a submitter told "failed" does
 * not see its job run.  ENOENT: an owner has already claimed it.
 */
int	 state_unsubmit(struct spool *sp, const char *id, int from);

/*
 * cur -> done, failed or defer.  `when` becomes the mtime: the time of the
 * transition for done/failed, the next-run time for defer.  fd is the job
 * file if the caller holds it (-1 otherwise).  Returns 0; 1 when the job
 * moved but its mtime could not be set (errno says why; the caller must
 * say so: a deferred job is then due at once); or -1 with errno set,
 * ENOENT meaning the job was cancelled or moved away while it ran.
 */
int	 state_finish(struct spool *sp, const char *id, int to, int fd,
	    msec_t when);

/*
 * new -> done or failed without passing through cur/: forward's claims,
 * which the spool lock alone keeps (queue_spool_in_place.c, take_in_place).  The
 * same stamp and durable move as state_finish.
 */
int	 state_finish_new(struct spool *sp, const char *id, int to, int fd,
	    msec_t when);

/* defer -> new, when its time has come. */
int	 state_promote(struct spool *sp, const char *id);

/* new -> failed for a file that is not a regular file; never opened. */
int	 state_reject(struct spool *sp, const char *id);

/* cur -> new: shutdown interrupted it, or its owner died. */
int	 state_requeue(struct spool *sp, const char *id);

/*
 * A live state (new, cur, defer: not terminal) -> failed.  Tries each in
 * the table's order, twice, since the job may move between them while we
 * look.  *from gets the state it left.
 * Returns 0, or -1 with errno ENOENT if it is in none of them.
 */
int	 state_cancel(struct spool *sp, const char *id, int *from);

/* failed -> new; the caller has written the "reset" log line first. */
int	 state_retry(struct spool *sp, const char *id);

/* new/name -> new/<derived ID> (state_aside). */
int	 state_rename_new(struct spool *sp, const char *name, char *out,
	    size_t len);

/*
 * st/name -> st/<derived ID>, written to out: in new/, a dropped file
 * whose name is taken by another job or is not a valid ID; in defer/,
 * done/ or failed/, a file that took the name a running job must move
 * to (a submitter's hard link or drop, an operator's mv).  A move out
 * of new/ is not synced (the file is still queued either way); one in
 * another state is, as the job's own move there will be.
 */
int	 state_aside(struct spool *sp, int st, const char *name, char *out,
	    size_t len);

/*
 * cur -> to: state_requeue for new/, state_finish otherwise (its returns).
 * The claim found the name free everywhere, so a file at to/id now is
 * not this job: a submitter's hard link or drop into defer/, an
 * operator's mv.  It moves aside first (state_aside), its new name in
 * aside ("" if none did); a few times, for an intruder who comes back.
 */
int	 state_leave(struct spool *sp, const char *id, int to, int fd,
	    msec_t when, char *aside, size_t len);

/*
 * A recurring job's tick, staged by `chute tick` in its schedule's plan
 * (directory dirfd, file id: spool-layout.md, "Recurring jobs") -> new/,
 * marked for spool_sync.  The staged file moves, so of two calls one
 * finds nothing (ENOENT: not an error, the tick is in new/ already);
 * EEXIST: new/ holds a job of that ID, and the staged file stays.
 */
int	 state_release_tick(struct spool *sp, int dirfd, const char *id);

#endif
