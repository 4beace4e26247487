/*
 * pause.h, the interface of pause.c: a spool paused by the file `paused`
 * in its root.  While it exists the owner claims nothing (running jobs
 * finish, submissions are accepted); an operator may create it by hand
 * (`touch SPOOL/paused`) as well as with `chute pause`.  spool-layout.md,
 * "Paused".
 */
#ifndef STORE_PAUSE_H
#define STORE_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include "base/util.h"
#include "store/spool.h"

#define PAUSE_FILE	"paused"	/* in the spool root */

/*
 * Pause (on) or resume the spool.  Pausing writes SPOOL/paused holding
 * "BY TIME\n" (BY: who, "user@host", or "-" when by is NULL or empty;
 * TIME: now, ISO 8601 UTC) into tmp/paused.PID first, fsynced, renamed
 * into place (a reader never sees half of it), then fsyncs the root so that
 * the pause outlives a crash; resuming removes it and fsyncs the root.
 * Returns 0 when the state changed, 1 when it was already so (a pause
 * leaves a `paused` that is there as it is, whoever made it), -1 with
 * errno set (EACCES: the root is not ours to write).
 */
int	 spool_pause(struct spool *sp, bool on, const char *by);

/*
 * Is the spool paused: does SPOOL/paused exist (whatever its type and
 * content)?  Returns 1 with by (len bytes; may be NULL) set to who paused
 * it, escaped: the file's first word, or, when it has none (a `touch`),
 * the name of the user who owns it; and *at (may be NULL) to its mtime in
 * ms since the epoch.  0 when it is not paused; -1 with errno set when
 * that cannot be told (the owner then keeps what it knew, and says so).
 * One fstatat, and a read of at most a line when it exists.
 */
int	 spool_paused(struct spool *sp, char *by, size_t len, msec_t *at);

#endif
