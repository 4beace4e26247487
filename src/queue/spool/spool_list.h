/*
 * spool_list.h: what `chute ls` and `chute stats` read straight from a
 * spool's job state directories: a count and the oldest mtime per state,
 * and for ls every entry too; for stats, when a running job started.
 */
#ifndef QUEUE_SPOOL_LIST_H
#define QUEUE_SPOOL_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "store/spool.h"

struct listing_entry {
	msec_t	 mtime;
	int	 state;
	char	*id;
};

struct listing {
	struct spool		*sp;
	bool			 keep;		/* remember every entry (ls) */
	bool			 new_only;	/* stats: a stat in new/ only */
	struct listing_entry	*v;		/* keep: oldest first */
	size_t			 n, cap;
	size_t			 count[ST_END];
	msec_t			 oldest[ST_END];	/* 0: none */
	int			 state;		/* the directory being read */
};

/*
 * Read every job state directory into l (l->sp and l->keep set by the
 * caller), or only the one state only if it is not ST_NONE.  Returns 0,
 * or an exit status after printing why.
 */
int	 listing_read(struct listing *l, int only);
void	 listing_free(struct listing *l);
/*
 * When the attempt of job id now running started: the time of the last
 * "@chute" line of log/ID, if that line is "attempt=N start".  The owner
 * writes it after the claim and before the spawn, and nothing of chute's
 * after it until the attempt ends, so only the handler's own output of
 * this attempt is read, backwards.  0 when the job has not started yet
 * (claimed, the line not yet written) or its log cannot be read: a stats
 * then leaves the job out of the longest running time, rather than fail.
 */
msec_t	 listing_started(struct spool *sp, const char *id);

#endif
