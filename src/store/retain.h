/*
 * retain.h, the interface of retain.c: SPOOL/retention, how long the
 * spool keeps its finished jobs (done/, failed/, with their logs); its
 * owner removes them when their time is up (queue_spool_retain.c).
 * spool-layout.md, "Retention".
 */
#ifndef STORE_RETAIN_H
#define STORE_RETAIN_H

#include "base/util.h"
#include "store/spool.h"

#define RETAIN_FILE	"retention"	/* in the spool root */

/*
 * Write r as SPOOL/retention, "done DUR\nfailed DUR\n" (keep_format),
 * into tmp/retention.PID first, fsynced, renamed over the old one (a
 * reader sees the old or the new, whole), then the root fsynced; both
 * forever (the default) removes it instead.  0, or -1 with errno set.
 */
int	 spool_retention_set(struct spool *sp, const struct retention *r);

/*
 * Read SPOOL/retention into *r: no file, or no line for a state, is
 * forever.  0, or -1 with errno set (EINVAL: not in that form; the owner
 * then keeps every job, and says so).  An open and a read of a few bytes.
 */
int	 spool_retention(struct spool *sp, struct retention *r);

/*
 * The reason spool_retention() failed with err, for one line: EINVAL's
 * says what is wrong with the file (the last call's), ELOOP's that it is
 * a symbolic link, the rest strerror's.
 */
const char	*spool_retention_error(int err);

#endif
