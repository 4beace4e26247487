/*
 * supervise.h: the handler supervisor.  It runs at most N handlers at
 * once, one per slot, either one process per job or through N persistent
 * workers; it enforces timeouts, the grace period, cancel and shutdown,
 * reaps children and restarts workers that die.  It knows a job only as
 * an ID, a file for stdin (or, for --inline workers, its payload), a log
 * for stdout and stderr, and an attempt number.  When a handler ends it says how (struct attempt_end) through
 * the callback it was given; what that means is outcome.c's, where the job
 * goes the queue's.
 */
#ifndef SUPERVISE_H
#define SUPERVISE_H

#include <poll.h>
#include "base/util.h"
#include "base/outcome.h"

struct sup_conf {
	int		 slots;
	bool		 persistent;
	bool		 inline_jobs;	/* the workers' payloads on their pipe */
	const char	*path;		/* the handler, resolved */
	char *const	*argv;		/* its arguments; "{}": the job's path */
	msec_t		 timeout;	/* 0: none */
	msec_t		 grace;		/* SIGTERM to SIGKILL */
	const char	*queue;		/* CHUTE_SPOOL */
	int		 worker_fd;	/* each worker's descriptor 3; -1: none */
	bool		 die_with_owner;	/* SIGKILL when the owner dies */
	/* Slot i's handler ended; the slot is held until sup_release. */
	void		(*ended)(void *, int, const struct attempt_end *);
	void		*arg;
};

struct sup_job {
	const char	*id;
	char		*path;		/* the job file: {}, CHUTE_JOB, workers */
	int		 fd;		/* stdin */
	int		 logfd;		/* stdout and stderr */
	int		 attempt;
	/* --inline: the payload, size bytes in memory, or NULL: from fd */
	const char	*payload;
	off_t		 size;
};

struct sup;

struct sup	*sup_new(const struct sup_conf *c);
void	 sup_free(struct sup *s);
/*
 * The slots free for a job (with --persistent, those whose worker is up
 * and idle), lowest first: up to max of them into slot[].  Returns how many.
 */
int	 sup_idle_slots(struct sup *s, int *slot, int max);
/*
 * Start job j in slot i (from sup_idle_slots).  Returns 0, or -1 when it
 * could not start: that ending (END_SPAWN_FAILED) has then already been
 * reported through the callback.
 */
int	 sup_start(struct sup *s, int i, const struct sup_job *j);
/*
 * Slot i's job (attempt) cannot even be tried, for the reason error:
 * report it at once as not started, as sup_start would.
 */
void	 sup_not_started(struct sup *s, int i, int attempt, int error);
/* The owner has recorded slot i's outcome: the slot is free again. */
void	 sup_release(struct sup *s, int i);
/*
 * Stop the running handler of job id: SIGTERM and the grace period, or
 * with now SIGKILL at once.  Returns its pid, or 0 if none.
 */
pid_t	 sup_cancel(struct sup *s, const char *id, bool now);
/* Stop every handler: SIGTERM and the grace period, or now SIGKILL. */
void	 sup_shutdown(struct sup *s, bool now);
/*
 * No more jobs for the workers: EOF on their stdin asks them to exit; any
 * still running after the grace period (or at once, if now) gets SIGKILL
 * from sup_timers.
 */
void	 sup_close_workers(struct sup *s, bool now);
bool	 sup_closing(struct sup *s);
/*
 * Nothing left running: no handler, no worker.  Workers still up are told
 * to exit (the owner calls this once it has no job left).
 */
bool	 sup_done(struct sup *s);
/*
 * Reap every child that has exited.  Once none of ours is left there is
 * nothing to wait for (saves a failing wait per job at -j 1); a child we
 * do not track would still raise SIGCHLD and be reaped then.  A worker
 * dying before it answered is never success: END_WORKER_DIED.
 */
void	 sup_reap(struct sup *s);
/*
 * Each worker's stdout, for poll(2), and with --inline its stdin while a
 * frame waits for room there: fills pfd[0..2*slots-1], returns how many.
 */
int	 sup_pollfds(struct sup *s, struct pollfd *pfd);
/* What poll(2) said of the descriptors sup_pollfds gave. */
void	 sup_input(struct sup *s, const struct pollfd *pfd);
/*
 * Timeouts, SIGKILL after the grace, workers to (re)start or to kill; at
 * most once a second, whether the reaper is still there.
 */
void	 sup_timers(struct sup *s, msec_t mono);
/* When sup_timers next has something to do (monotonic; INT64_MAX: never). */
msec_t	 sup_deadline(struct sup *s);

#endif
