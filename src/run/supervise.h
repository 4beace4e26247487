/*
 * supervise.h: the handler supervisor.  It runs at most N handlers at
 * once, one per slot, either one process per job or through N persistent
 * workers; it enforces timeouts, the grace period, cancel and shutdown,
 * reaps children and restarts workers that die.  It knows a job only as
 * an ID, a file for stdin, a log for stdout and stderr, and an attempt
 * number.  When a handler ends it says how (struct attempt_end) through
 * the callback it was given; what that means is outcome.c's, where the job
 * goes the queue's.
 */
#ifndef SUPERVISE_H
#define SUPERVISE_H

#include <poll.h>
#include "base/chute.h"
#include "base/outcome.h"

struct sup_conf {
	int		 slots;
	bool		 persistent;
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
};

struct sup;

struct sup *sup_new(const struct sup_conf *);
void	 sup_free(struct sup *);
int	 sup_idle_slots(struct sup *, int *, int);
int	 sup_start(struct sup *, int, const struct sup_job *);
void	 sup_hold(struct sup *, int, int, int);
void	 sup_release(struct sup *, int);
pid_t	 sup_cancel(struct sup *, const char *, bool);
void	 sup_shutdown(struct sup *, bool);
void	 sup_close_workers(struct sup *, bool);
bool	 sup_closing(struct sup *);
bool	 sup_done(struct sup *);
void	 sup_reap(struct sup *);
int	 sup_pollfds(struct sup *, struct pollfd *);
void	 sup_input(struct sup *, const struct pollfd *);
void	 sup_timers(struct sup *, msec_t);
msec_t	 sup_deadline(struct sup *);

#endif
