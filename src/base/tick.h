/*
 * tick.h, the interface of tick.c: recurring jobs' arithmetic, said once
 * for both stores: a schedule's name, its grid of ticks (tick k is at the
 * Unix epoch + offset + k * every, in UTC: no drift, the next tick follows
 * from the last target, never from now), which due ticks a pass makes
 * (the catch-up modes), and a tick's job ID, NAME@YYYYMMDDTHHMMSS.mmmZ.
 */
#ifndef BASE_TICK_H
#define BASE_TICK_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* A schedule's name: 1 to SCHED_NAME_MAX bytes of [A-Za-z0-9_-], not '-' first. */
#define SCHED_NAME_MAX	64
/* The interval: at least TICK_EVERY_MIN ms, at most 3660 days. */
#define TICK_EVERY_MIN	50
#define TICK_EVERY_MAX	(3660LL * 86400 * 1000)
/* Mode all: at most this many ticks a pass makes; the rest in the next. */
#define TICK_BATCH	1000
/* A tick's ID: the name, '@', 20 bytes of time. */
#define TICK_ID_MAX	(SCHED_NAME_MAX + 1 + 20)

/*
 * What happens to the due ticks that are not the latest (missed: every
 * scheduler was down, or the clock jumped forward): skip (only the latest
 * due tick is made), once (one catch-up job, for the oldest missed tick,
 * then the latest), all (every one, oldest first).
 */
enum catchup { CATCHUP_SKIP, CATCHUP_ONCE, CATCHUP_ALL };

struct tick_sched {
	msec_t		 every, offset;	/* 0 <= offset < every */
	enum catchup	 mode;
};

/* Is name a schedule's name?  Else why is a phrase. */
bool	 sched_name_valid(const char *name, const char **why);

/*
 * --every and --offset checked together: 0, or -1 with why (a phrase): an
 * interval out of bounds, an offset not below it.
 */
int	 tick_sched_check(const struct tick_sched *s, const char **why);

/* "skip", "once", "all" into *m: 0, or -1. */
int	 catchup_parse(const char *s, enum catchup *m);
const char	*catchup_name(enum catchup m);

/* The latest tick at or before t; the first tick after t. */
msec_t	 tick_floor(const struct tick_sched *s, msec_t t);
msec_t	 tick_next(const struct tick_sched *s, msec_t t);

/*
 * The ticks a pass at now makes, the last tick made (or the tick at or
 * before the declaration, for a schedule that never ticked) being last:
 * the due ticks are those after last and at or before now, and the mode
 * chooses among them, into out (at most max, oldest first).  *missed: the
 * due ticks not made and not to be made (skip, once).  Returns how many.
 * Nothing is due when now is before the first tick after last (a clock
 * set back: nothing is made until it passes that tick again).
 */
int	 tick_plan(const struct tick_sched *s, msec_t last, msec_t now,
	    msec_t *out, int max, long long *missed);

/*
 * What a pass says of the missed ticks (tick_plan's *missed) of a schedule
 * whose first due tick was first, into buf: one phrase, "" when none.
 */
void	 tick_missed_text(const struct tick_sched *s, long long missed,
	    msec_t first, char *buf, size_t len);

/* A tick's job ID into buf (TICK_ID_MAX + 1 bytes at least). */
void	 tick_id(const char *name, msec_t tick, char *buf, size_t len);

/* The tick of an ID tick_id made for name: 0, or -1 when it is not one. */
int	 tick_of_id(const char *name, const char *id, msec_t *tick);

#endif
