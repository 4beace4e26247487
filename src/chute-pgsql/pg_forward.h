/*
 * pg_forward.h: `chute forward`'s private state, shared by pg_forward.c
 * (the loop, the options), pg_forward_spool.c (the batches on the spool's
 * side, the waits) and pg_forward_db.c (the batches' statement).
 */
#ifndef CHUTE_PGSQL_PG_FORWARD_H
#define CHUTE_PGSQL_PG_FORWARD_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include "base/util.h"
#include "queue/pg/pg.h"
#include "queue/queue.h"

#define FWD_BATCH	256		/* --batch default: jobs per statement */
#define FWD_BATCH_MAX	10000
#define FWD_BYTES	(32LL << 20)	/* payload bytes per statement (one job more) */
#define FWD_RETRY_MIN_MS 500		/* the database unreachable: first wait */
#define FWD_RETRY_MAX_MS 30000		/* ... doubling up to this */
#define FWD_IDLE_MS	1000		/* longest wait without a wake-up */
#define FWD_BIRTH	64		/* "INODE:SEC.NSEC" */

/*
 * The jobs of one statement.  Two take turns: while the server runs one's
 * statement, the other is claimed and read, and the one before is moved
 * to done/, so the spool's file operations overlap the server's work
 * instead of waiting for it.
 */
struct batch {
	struct claim	*slot;		/* --batch claims, [0, n) held */
	int		 n;
	long long	 bytes;
	bool		 inflight;	/* sent, its result not taken yet */
	struct pg_arr	 lid, birth, did, body;	/* jobs idx[0, m) */
	struct pg_arr	 prio, key;	/* their names' ,p=N and ,k=KEY */
	int		*idx, m;
	off_t		*size;
	char		 (*born)[FWD_BIRTH];	/* origin_birth */
	char		 (*dbid)[NAME_MAX + 1];	/* the ID it goes in under */
	bool		*sent;		/* inserted now or found from before */
	bool		*again;		/* found there from an earlier try */
	struct pg_arr	 ukey;		/* each job's ,u=KEY, "" none */
	bool		*dup;		/* its key held there (dbid: the holder) */
};

struct fwd {
	struct pg	 pg;
	struct queue	*q;
	struct batch	 b[2];
	int		 batch;
	const char	*origin;
	bool		 drain;
	int		 sigfd;
	bool		 stop;
	bool		 checked;	/* the schema was checked on this connection */
	bool		 down;		/* "unreachable" was said */
	bool		 gone;		/* the last statement lost the server */
	msec_t		 down_since;
	msec_t		 wait;		/* the next wait before a retry */
	size_t		 forwarded;
	size_t		 title_queued;	/* what the title says while paused */
	bool		 title_paused;
};

/* pg_forward_spool.c */
/*
 * Claim jobs into b until it holds --batch of them or FWD_BYTES of
 * payloads, each read into the array parameters as it comes.  Returns 0,
 * or -1 out of memory (the jobs claimed are in b).
 */
int	 fwd_gather(struct fwd *f, struct batch *b);
/*
 * The jobs of b whose IDs were taken in the database, under derived IDs
 * in the array parameters again.  Returns how many, or -1 out of memory.
 */
int	 fwd_batch_retake(struct batch *b);
/* b is in the database: each job's line, then done/; the claims let go. */
void	 fwd_batch_done(struct fwd *f, struct batch *b);
/* Stopping: the claims go back to new/, no attempt counted. */
void	 fwd_hand_back(struct fwd *f, struct batch *b);
/* Room for n jobs in b: 0, or -1 out of memory (fwd_batch_free frees). */
int	 fwd_batch_alloc(struct batch *b, size_t n);
void	 fwd_batch_free(struct batch *b);
/* Wait up to ms for a signal or the spool's wake-up, and take them in. */
void	 fwd_wait_for(struct fwd *f, msec_t ms);
/* Jobs waiting locally: n claimed and what the spool has queued. */
size_t	 fwd_waiting(struct fwd *f, int n);

/* pg_forward_db.c */
/* Start b's statement while the loop goes on, if the connection is up. */
void	 fwd_launch(struct fwd *f, struct batch *b);
/*
 * Until the database has every job of b.  Returns 0; -1 when stopped
 * first (they are still claimed); or an exit status after saying why the
 * database will not take them.
 */
int	 fwd_complete(struct fwd *f, struct batch *b);
/* Out of memory, said: EX_SOFTWARE. */
int	 fwd_nomem(struct fwd *f);

#endif
