/*
 * listing.h: what `chute ls` and `chute stats` read straight from the job
 * state directories: a count and the oldest mtime per state, and for ls
 * every entry too.
 */
#ifndef LISTING_H
#define LISTING_H

#include "chute.h"

#define LISTING_NSTATES	5
extern const int listing_states[LISTING_NSTATES];	/* new/ to failed/ */

struct listing_entry {
	msec_t	 mtime;
	int	 state;
	char	*id;
};

struct listing {
	struct spool		*sp;
	bool			 keep;		/* remember every entry (ls) */
	struct listing_entry	*v;		/* keep: oldest first */
	size_t			 n, cap;
	size_t			 count[ST_NDIRS];
	msec_t			 oldest[ST_NDIRS];	/* 0: none */
	int			 state;		/* the directory being read */
};

int	 listing_read(struct listing *, int);
void	 listing_free(struct listing *);

#endif
