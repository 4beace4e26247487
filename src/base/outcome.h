/*
 * outcome.h: what the end of one attempt means for its job.  A pure
 * function of how the handler ended and of the run's retry policy: the
 * README's outcome table, row by row, for every queue underneath.
 */
#ifndef OUTCOME_H
#define OUTCOME_H

#include "base/util.h"

/* Why the supervisor was stopping a handler when it ended, if it was. */
enum stop { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_SHUTDOWN };

enum end {
	END_EXIT,		/* the handler process ended: status */
	END_REPLY,		/* a persistent worker answered: reply */
	END_WORKER_DIED,	/* a persistent worker died before answering */
	END_SPAWN_FAILED,	/* the handler never started: error */
	END_ABANDONED,		/* its owner died while it ran */
};

struct attempt_end {
	enum end	 end;
	int		 status;	/* EXIT, WORKER_DIED: as from wait(2) */
	const char	*reply;		/* REPLY: the line, no newline */
	int		 error;		/* SPAWN_FAILED: an errno value */
	enum stop	 stop;
	int		 attempt;	/* 1 for the first */
	msec_t		 elapsed;	/* how long it ran; -1: not told */
};

struct retry_policy {
	int	 max_attempts;
	msec_t	 backoff_base, backoff_cap;
};

struct outcome {
	int	 to;		/* ST_DONE, ST_DEFER, ST_FAILED, ST_NEW */
	msec_t	 delay;		/* ST_DEFER: until the next attempt */
	bool	 counted;	/* false: the attempt does not count */
	char	 why[96];	/* for the owner's line: "exit=75" */
	char	 note[256];	/* for the job's log, after "attempt=N " */
};

/*
 * Fill out from e and p.  rnd(n) returns a number below n; it spreads the
 * backoff (arc4random_uniform in the owner, a fixed one in the tests).
 */
void	 outcome_decide(const struct attempt_end *e,
	    const struct retry_policy *p, uint32_t (*rnd)(uint32_t),
	    struct outcome *out);
/* "exit=3", "signal=KILL": a wait(2) status in the log's words. */
void	 outcome_status(int status, char *buf, size_t len);

#endif
