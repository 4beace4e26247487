/*
 * after.h, the interface of after.c: a waiting job's dependency list,
 * SPOOL/after/ID (spool-layout.md, "Dependencies").
 */
#ifndef STORE_AFTER_H
#define STORE_AFTER_H

#include <stdbool.h>
#include <stddef.h>
#include "store/spool.h"

#define AFTER_DIR	"after"

/* What a waiting job does when a job it waits for ends in failed/. */
enum after_mode { AFTER_FAIL, AFTER_RUN };

struct after {
	enum after_mode	 mode;
	char		**ids;		/* into buf */
	size_t		 n;
	char		*buf;		/* the file, its newlines made NULs */
};

/*
 * Write after/ID: the mode's line, then one ID a line; to after/.ID
 * first, fsynced, renamed over after/ID, and after/ fsynced, so that the
 * list is durable before the job it belongs to enters wait/.  after/ is
 * made (with new/'s mode) in a spool made before it.  0, or -1 with
 * errno set; *where then names what failed ("after/.ID" or "after/").
 */
int	 after_write(struct spool *sp, const char *id, enum after_mode mode,
	    char *const *ids, size_t n, const char **where);

/*
 * Read after/ID into a (after_free it).  0; -1 with errno set: ENOENT
 * (none: the job waits for nothing), EBADMSG (not a list this wrote).
 */
int	 after_read(struct spool *sp, const char *id, struct after *a);

void	 after_free(struct after *a);

/* Remove after/ID, if there is one (purge, retention).  0 or -1/errno. */
int	 after_remove(struct spool *sp, const char *id);

/* "fail" / "run", and back (-1: neither). */
const char *after_mode_name(enum after_mode m);
int	 after_mode_parse(const char *s);

#endif
