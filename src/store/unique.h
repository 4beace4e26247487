/*
 * unique.h, the interface of unique.c: a spool's unique keys, one file
 * per key in SPOOL/unique/ naming the job that took it (spool-layout.md,
 * "Unique keys").  The file's flock serialises everyone who takes the
 * key: submitters and the owner.  A key is held while the job it names
 * is in the states it was taken for: nothing frees it but the job's own
 * moves, so a crash can leave no key taken by a job that is not there.
 * The owner removes the files of free keys (unique_sweep), under their
 * flock, and unique_lock opens a removed one again.
 */
#ifndef STORE_UNIQUE_H
#define STORE_UNIQUE_H

#include <stdbool.h>
#include <limits.h>

#include "base/sched.h"
#include "store/spool.h"

#define UNIQUE_DIR	"unique"

/*
 * key_valid()'s keys but for "." and "..", which name unique/ itself or
 * the spool as a file: false with *why a reason for one line.
 */
bool	 unique_key_valid(const char *key, const char **why);

/* A key file, open and flocked, and what it says. */
struct unique_hold {
	int			 fd;	/* -1: not open */
	enum unique_while	 w;	/* the states it was taken for */
	char			 id[NAME_MAX + 1];	/* its job; "" none */
};

/*
 * Open SPOOL/unique/key (the directory and the file made if need be),
 * flock it, and read the job it names into h.  wait false: 1 when another
 * process holds the flock.  Returns 0, 1, or -1 with errno set.
 */
int	 unique_lock(struct spool *sp, const char *key, bool wait,
	    struct unique_hold *h);

/*
 * The owner's sweep of one file of unique/ (dir, open on it): removed if
 * its key is free (no job named, or the job out of its states) and no
 * one holds its flock.  1 removed, 0 kept (held, busy, gone), -1 errno.
 */
int	 unique_sweep(struct spool *sp, int dir, const char *key);

/*
 * The job unique/key names into id ("" none, or no file), read without
 * the flock: enough to see that it names a given job in new/, which no
 * one may take from it.  0, or -1 with errno set.
 */
int	 unique_peek(struct spool *sp, const char *key, char *id, size_t len);

/*
 * Does h's job hold the key: is it in the states it was taken for?  *st
 * gets its state (ST_NONE: in none; tmp/ is none).
 */
bool	 unique_held(struct spool *sp, const struct unique_hold *h, int *st);

/* Name job id as the holder, taken for w: written and synced. 0 or -1. */
int	 unique_set(struct unique_hold *h, enum unique_while w, const char *id);

/* Name no holder if h names id (a submit taken back). 0 or -1. */
int	 unique_clear(struct unique_hold *h, const char *id);

/* Release the flock and close (h->fd -1 is a no-op). */
void	 unique_unlock(struct unique_hold *h);

#endif
