/*
 * owner.h: the owner's private state, shared by run.c (the event loop)
 * and job.c (what happens to one job: start, finish, cancel, recover).
 */
#ifndef OWNER_H
#define OWNER_H

#include <limits.h>
#include "chute.h"

enum stop { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_SHUTDOWN };

/* One running handler.  pid 0: free; pid -1: a transition to retry. */
struct slot {
	pid_t	 pid;
	char	 id[NAME_MAX + 1];
	int	 fd;			/* the job file, flocked, the handler's stdin */
	int	 logfd;
	int	 attempt;
	msec_t	 started;		/* monotonic, all three */
	msec_t	 deadline;		/* --timeout; 0: none */
	msec_t	 killat;		/* SIGKILL, or retry the transition; 0: none */
	enum stop stop;
	int	 to;			/* pid -1: where the job should go */
	msec_t	 when;			/* pid -1: its mtime there */
};

struct owner {
	struct spool	 sp;
	const struct run_opts *o;
	struct watch	*w;
	int		 sigfd;
	struct queue	*ready;		/* in new/, key: mtime in ns */
	struct queue	*waiting;	/* in new/, not complete yet; key: recheck (mono) */
	struct queue	*orphans;	/* in cur/, an old handler runs; key: recheck (mono) */
	struct slot	*slots;
	int		 running;	/* slots in use */
	int		 ndefer;	/* jobs in defer/, as last counted */
	bool		 stopping, rescan, fatal;
	msec_t		 next_defer;	/* realtime; 0: nothing deferred */
	msec_t		 next_rescan;	/* monotonic */
	msec_t		 scan_now;
	struct timespec	 new_mtime;	/* new/'s mtime at the last full scan */
	msec_t		 new_scanned;
};

/* run.c */
void	 owner_admit(struct owner *, const char *, unsigned);
void	 owner_scan_new(struct owner *, bool);
void	 owner_scan_defer(struct owner *);
void	 owner_promote(struct owner *, const char *);
void	 owner_on_event(void *, const struct watch_event *);
void	 owner_on_timers(struct owner *);

/* job.c */
void	 owner_dispatch(struct owner *);
void	 owner_reap(struct owner *);
void	 owner_job_left(struct owner *, const char *);
void	 owner_shutdown(struct owner *, int);
void	 owner_check_slots(struct owner *, msec_t);
msec_t	 owner_slots_deadline(struct owner *);
void	 owner_recover(struct owner *);
void	 owner_recover_one(struct owner *, const char *);
void	 owner_clean_tmp(struct owner *);

#endif
