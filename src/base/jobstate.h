/*
 * jobstate.h: the job states, one row each, and everything that is said
 * about a state in more than one place.  Every list of states is derived
 * from JOBSTATES: a loop over ST_FIRST..ST_END with a predicate below.
 */
#ifndef BASE_JOBSTATE_H
#define BASE_JOBSTATE_H

#include <stdbool.h>

/*
 * X(enum, name, flags), in the order jobs flow, which is the order every
 * listing shows them in.  The name is the state's directory on a spool
 * and its value of chute.jobs.state in the database; it is on disk and in
 * the schema, and is printed as it is.
 *   JS_TERMINAL  a job's end: `wait` waits for it, `purge` removes from
 *                it; a job in any other state is live: the owner watches
 *                it and `cancel` takes it from there to failed
 *   JS_SUBMIT    a submitter renames into it (wait/, new/, defer/): its
 *                directory is group-writable when the spool is shared
 *                with a group
 * wait: a job submitted with --after, until the jobs it waits for end
 * (spool-layout.md, "Dependencies").
 */
#define JOBSTATES(X) \
	X(ST_WAIT,	"wait",		JS_SUBMIT) \
	X(ST_NEW,	"new",		JS_SUBMIT) \
	X(ST_CUR,	"cur",		0) \
	X(ST_DEFER,	"defer",	JS_SUBMIT) \
	X(ST_DONE,	"done",		JS_TERMINAL) \
	X(ST_FAILED,	"failed",	JS_TERMINAL)

#define JS_TERMINAL	0x1
#define JS_SUBMIT	0x2

#define JS_ENUM_(st, name, flags)	st,
enum state {
	ST_ZERO_,	/* not a state: 0 is a spool's tmp/ (store/spool.h) */
	JOBSTATES(JS_ENUM_)
	ST_END		/* one past the last state */
};
#undef JS_ENUM_
#define ST_FIRST	(ST_ZERO_ + 1)
#define ST_NSTATES	(ST_END - ST_FIRST)
#define ST_NONE		(-1)

struct jobstate {
	const char	*name;
	unsigned	 flags;
};

/* Indexed by the state; ST_ZERO_'s row is empty. */
extern const struct jobstate jobstates[ST_END];

/* The state of that name (new, cur, ...), or ST_NONE. */
int	 state_from_name(const char *s);

static inline bool
state_terminal(int st)
{
	return (jobstates[st].flags & JS_TERMINAL) != 0;
}

/*
 * The states whose flags, masked by mask, are want, in the table's order,
 * into v (room for ST_NSTATES): the live ones are (JS_TERMINAL, 0).
 * Returns how many.
 */
int	 states_where(unsigned mask, unsigned want, int *v);

#endif
