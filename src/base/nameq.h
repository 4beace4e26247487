/*
 * nameq.h, the interface of nameq.c: an ordered set of names, each with a
 * key (the spool queue's indexes).
 */
#ifndef BASE_NAMEQ_H
#define BASE_NAMEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nameq;
struct nameq	*nameq_new(void);

void	 nameq_free(struct nameq *q);

/*
 * Returns 1 if added, 0 if already queued (its flags are or-ed in, its
 * place is kept), -1 (ENOMEM).
 */
int	 nameq_add(struct nameq *q, const char *name, int64_t key,
	    unsigned flags);

/*
 * nameq_add with a rank: the queue's order is (rank, key, name), lowest
 * first (a spool's ready jobs: the priority, negated, before the age).
 * nameq_add gives rank 0.
 */
int	 nameq_add_ranked(struct nameq *q, const char *name, int rank,
	    int64_t key, unsigned flags);

bool	 nameq_has(struct nameq *q, const char *name);

/* Is name queued?  Its key into *key if so. */
bool	 nameq_key(struct nameq *q, const char *name, int64_t *key);

/* Copy the lowest-key name to buf and drop it; returns 1, or 0 if empty. */
int	 nameq_pop(struct nameq *q, char *buf, size_t len, unsigned *flags);

/* nameq_pop, and the popped name's rank and key into *rank, *key. */
int	 nameq_pop_ranked(struct nameq *q, char *buf, size_t len,
	    unsigned *flags, int *rank, int64_t *key);

/*
 * Pop the name of the lowest (key, name), whatever its rank: as many
 * lookups as there are ranks queued, one when all are 0.
 */
int	 nameq_pop_lowest_key(struct nameq *q, char *buf, size_t len,
	    unsigned *flags, int *rank, int64_t *key);

/* Would (rank, key) come after the last name queued?  False when empty. */
bool	 nameq_after_max(struct nameq *q, int rank, int64_t key);

/* Does the queue hold a name of a rank other than 0? */
bool	 nameq_ranked(struct nameq *q);

/* Drop name if queued; its flags go to *flags.  True if it was there. */
bool	 nameq_take(struct nameq *q, const char *name, unsigned *flags);

/* The lowest key, or INT64_MAX when the queue is empty. */
int64_t	 nameq_min_key(struct nameq *q);

/* The highest key, or INT64_MIN when the queue is empty. */
int64_t	 nameq_max_key(struct nameq *q);

/* Drop the highest-key (newest) entry; returns its key, or INT64_MAX. */
int64_t	 nameq_drop_max(struct nameq *q);

size_t	 nameq_len(struct nameq *q);

#endif
