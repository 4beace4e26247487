/*
 * sched.h, the interface of sched.c: what decides which job runs next,
 * said once for both stores: a job's priority and key, how a spool's file
 * name carries them (spool-layout.md, "Priority and key"), and the limits
 * of a store (per key, a default for every key, the whole store): at most
 * N running at once, at most N starts per interval.
 */
#ifndef BASE_SCHED_H
#define BASE_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* Higher runs first; equal priorities keep the order of submission. */
#define PRIO_MIN	(-100)
#define PRIO_MAX	100
#define PRIO_DEFAULT	0

/*
 * No starvation: of every SCHED_FIFO_EVERY jobs a store starts, one is
 * the oldest job that may start, whatever its priority (both stores; the
 * fleet counts per worker).  A waiting job is promised a start within
 * SCHED_FIFO_EVERY times the starts it would wait for without priorities.
 */
#define SCHED_FIFO_EVERY	4

/* A key: 1 to KEY_MAX bytes of [A-Za-z0-9._:@+-]. */
#define KEY_MAX		64

/* Limits: 1 to LIMIT_MAX running; rates of 1 to LIMIT_MAX starts per
 * 1 ms to 1 day. */
#define LIMIT_MAX	100000
#define RATE_PER_MAX	(86400LL * 1000)

/* The flags of submit, of both programs. */
#define SCHED_USAGE	"[--priority N] [--key KEY]"

/* Is k a key?  Else why points at the reason, a phrase. */
bool	 key_valid(const char *k, const char **why);

/* A priority from text: 0, or -1 with why (out of range, not a number). */
int	 prio_parse(const char *s, int *prio, const char **why);

/*
 * A spool's job file name: BASE, then attributes, each ",L=VALUE" (L a
 * lowercase letter, VALUE without ','), read from the end.  Known: p (the
 * priority), k (the key) and u (the unique key), each at most once.  An attribute of another
 * letter, or a bad value, is an error: the owner refuses the job to
 * failed/ with why, rather than run it without what its name asked for.
 */
struct jobattr {
	int	 prio;			/* PRIO_DEFAULT when not given */
	char	 key[KEY_MAX + 1];	/* "" when not given */
	size_t	 baselen;		/* the name before the attributes */
	char	 unique[KEY_MAX + 1];	/* ,u=KEY: "" when not given */
};

/* Name's attributes into *a: 0, or -1 with why (a phrase, static). */
int	 jobattr_parse(const char *name, struct jobattr *a, const char **why);

/*
 * BASE with a's attributes (",p=N" when not the default, ",k=KEY" when
 * there is one) into buf: 0, or -1 (ENAMETOOLONG) when it does not fit
 * or makes a name longer than an ID may be.
 */
int	 jobattr_name(const char *base, int prio, const char *key, char *buf,
	    size_t len);

/*
 * Unique keys (issue 37): while a job holding key K is in the states its
 * submitter chose, no second job with K is made.  Keys are key_valid()'s.
 */
enum unique_while {
	UQ_ACTIVE,	/* new, cur, defer (the default) */
	UQ_WAITING,	/* new, defer */
	UQ_KEPT,	/* any state, until purged */
};
/* What a submit with a held key does instead of making a job. */
enum unique_dup {
	UQ_REFUSE,	/* exit EXIT_HELD, the holder's ID on stdout (default) */
	UQ_KEEP,	/* exit 0, the holder's ID on stdout */
	UQ_REPLACE,	/* a waiting holder's payload and time replaced */
};
/* submit's status when its unique key is held (--on-duplicate refuse). */
#define EXIT_HELD	3
#define UNIQUE_USAGE	"[--unique KEY [--unique-while active|waiting|kept]" \
	" [--on-duplicate refuse|keep|replace]]"

extern const char *const unique_while_names[3];	/* "active", ... */

/* "active", "waiting", "kept" into *w: 0, or -1 (not one of them). */
int	 unique_while_parse(const char *s, enum unique_while *w);
/* "refuse", "keep", "replace" into *d: 0, or -1. */
int	 unique_dup_parse(const char *s, enum unique_dup *d);
/* Does a job in state st (ST_NEW...) hold a key taken for w? */
bool	 unique_holds(enum unique_while w, int st);
/*
 * name with ",u=KEY" appended into buf: 0, or -1 (ENAMETOOLONG) when it
 * does not fit or makes a name longer than an ID may be.
 */
int	 unique_name(const char *name, const char *key, char *buf, size_t len);

/* What a limit applies to. */
enum limit_scope {
	LIM_KEY,	/* the jobs of one key */
	LIM_DEFAULT,	/* each key that has no rule of its own */
	LIM_ALL,	/* the whole spool or queue, keys or not */
};

/*
 * One rule.  max: at most that many running at once, 0 for no bound;
 * rate_n starts per rate_ms, 0 for no bound.
 */
struct limit {
	enum limit_scope scope;
	char		 key[KEY_MAX + 1];	/* LIM_KEY's */
	long		 max;
	long		 rate_n;
	msec_t		 rate_ms;
};

/* "N" into *max (1..LIMIT_MAX), "none" into 0: 0, or -1 with why. */
int	 limit_parse_max(const char *s, long *max, const char **why);

/*
 * "N/DUR" (DUR as dur_parse takes it: 10/1s, 100/1m), or "none" (both
 * 0): 0, or -1 with why.
 */
int	 limit_parse_rate(const char *s, long *n, msec_t *per,
	    const char **why);

/* "N/DUR" for a rate, "-" for none, into buf. */
void	 limit_format_rate(long n, msec_t per, char *buf, size_t len);

/*
 * The rule that applies to the jobs of key among n rules (its own, else
 * the default), or NULL: none bounds it but LIM_ALL's.
 */
const struct limit	*limit_for_key(const struct limit *v, int n,
			    const char *key);

#endif
