/*
 * limits.h, the interface of limits.c: a spool's limits, the text file
 * `limits` in its root (spool-layout.md, "Limits"), one rule a line:
 *
 *	all max=N rate=N/DUR
 *	default max=N rate=N/DUR
 *	key KEY max=N rate=N/DUR
 *
 * max= and rate= each optional (not given: no bound), in either order;
 * blank lines and lines starting with '#' are ignored.  A line names each
 * scope (or key) at most once.  Written by `chute limit`, readable with
 * cat and editable by hand; the owner reads it at start and whenever it
 * is renamed or written into the root.
 */
#ifndef STORE_LIMITS_H
#define STORE_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include "base/sched.h"
#include "store/spool.h"

#define LIMITS_FILE	"limits"	/* in the spool root */
#define LIMITS_LOCK	".limits.lock"	/* flocked by a change */
#define LIMITS_RULES	4096		/* most rules a file may hold */

/* The rules of a file, in its order. */
struct limits {
	struct limit	*v;
	int		 n;
};

/*
 * Parse text (len bytes) into *l (freed with limits_free; empty when no
 * rule).  0, or -1 with why: "line N: REASON", errno EINVAL (ENOMEM).
 */
int	 limits_parse(const char *text, size_t len, struct limits *l,
	    char *why, size_t wlen);

/*
 * Read SPOOL/limits into *l: 0 (no file: no rules), or -1 with errno and
 * why (a line's reason for EINVAL, else the error's text).
 */
int	 limits_read(struct spool *sp, struct limits *l, char *why,
	    size_t wlen);

/*
 * Change one rule of SPOOL/limits, under LIMITS_LOCK's flock so that two
 * changes never lose each other's: the rule for (scope, key) gets max
 * (when set_max) and the rate (when set_rate); clear drops it.  A rule
 * left with no bound is dropped.  The file is written whole into tmp/,
 * fsynced, renamed into the root, and the root fsynced.  *now gets the
 * rule as it is after the change (max and rate_n 0: no rule).  0, or -1
 * with errno and why.
 */
int	 limits_change(struct spool *sp, const struct limit *c, bool set_max,
	    bool set_rate, bool clear, struct limit *now, char *why,
	    size_t wlen);

/* One rule as a line of the file, without its newline. */
void	 limits_format(const struct limit *r, char *buf, size_t len);

void	 limits_free(struct limits *l);

#endif
