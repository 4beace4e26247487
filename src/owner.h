/*
 * owner.h: the owner's private state, shared by run.c (the event loop)
 * and job.c (what happens to one job: start, finish, cancel, recover).
 */
#ifndef OWNER_H
#define OWNER_H

#include <dirent.h>
#include <limits.h>
#include "chute.h"

enum stop { STOP_NONE, STOP_TIMEOUT, STOP_CANCEL, STOP_SHUTDOWN };

/* One running handler.  pid 0: free; pid -1: a transition to retry. */
struct slot {
	pid_t	 pid;
	char	 id[NAME_MAX + 1];
	int	 fd;			/* the job file, flocked, the handler's stdin */
	int	 logfd;
	off_t	 logend;		/* log size after our last line; -1: unknown */
	bool	 logshared;		/* a handler writes to the log too */
	int	 attempt;
	msec_t	 started;		/* monotonic, all three */
	msec_t	 deadline;		/* --timeout; 0: none */
	msec_t	 killat;		/* SIGKILL, or retry the transition; 0: none */
	enum stop stop;
	int	 to;			/* pid -1: where the job should go */
	msec_t	 when;			/* pid -1: its mtime there */
};

/* --persistent: the long-lived worker of one slot. */
struct worker {
	pid_t	 pid;			/* 0: not running */
	int	 in, out;		/* its stdin (we write), its stdout (we read) */
	char	 buf[1024];		/* a partial reply line */
	size_t	 len;
	msec_t	 started, restart_at;	/* monotonic */
	int	 fails;			/* deaths in a row, each younger than 1 s */
};

#define OLD_MAX	16

struct owner {
	struct spool	 sp;
	const struct run_opts *o;
	struct watch	*w;
	int		 sigfd;
	struct queue	*ready;		/* in new/, key: mtime in ns */
	struct queue	*waiting;	/* in new/, not complete yet; key: recheck (mono) */
	struct queue	*orphans;	/* in cur/, an old handler runs; key: recheck (mono) */
	struct queue	*promoted;	/* moved defer/ -> new/ by us, event not seen yet */
	struct slot	*slots;
	struct worker	*workers;	/* --persistent: one per slot */
	int		 wlock;		/* .workers.PID, inherited by workers */
	char		 old[OLD_MAX][40];	/* .workers.PID of dead owners */
	int		 nold;
	bool		 closing;	/* --drain done: workers told to exit */
	msec_t		 close_deadline;	/* then SIGKILL (monotonic) */
	int		 running;	/* slots in use */
	int		 ndefer;	/* jobs in defer/, as last counted */
	bool		 stopping, rescan, fatal;
	bool		 truncated;	/* new/ holds jobs the window left out */
	size_t		 window;	/* most names of new/ held in ready */
	msec_t		 next_defer;	/* realtime; 0: nothing deferred */
	msec_t		 next_rescan;	/* monotonic */
	msec_t		 dirty_since;	/* monotonic: oldest unsynced transition; 0: none */
	msec_t		 scan_now;
	struct timespec	 new_mtime;	/* new/'s mtime at the last full scan */
	msec_t		 new_scanned;	/* realtime that scan started */
	DIR		*scan;		/* a scan of new/ in progress */
	bool		 scan_again;	/* restart it when it ends */
	struct timespec	 scan_mtime;
	msec_t		 scan_started;
};

#define WINDOW		65536	/* default: most names of new/ held in memory */
#define SCAN_CHUNK	4096	/* names of new/ read per loop iteration */

/* scan.c */
void	 owner_admit(struct owner *, const char *, unsigned);
void	 owner_scan_new(struct owner *, bool);
bool	 owner_scan_step(struct owner *, size_t);
void	 owner_refill(struct owner *);
void	 owner_scan_defer(struct owner *);
void	 owner_promote(struct owner *, const char *);
void	 owner_defer_arrived(struct owner *, const char *);
void	 owner_defer_left(struct owner *, const char *);

/* run.c */
void	 owner_on_event(void *, const struct watch_event *);
void	 owner_on_timers(struct owner *);

/* worker.c */
int	 worker_start(struct owner *, int);
int	 worker_send(struct owner *, int);
void	 worker_exited(struct owner *, int, int);
void	 worker_restart_due(struct owner *, msec_t);
void	 worker_input(struct owner *, int);
void	 worker_close_all(struct owner *);
int	 workers_alive(struct owner *);
int	 workers_of_the_dead(struct owner *);
void	 workers_find_old(struct owner *);

/* job.c */
void	 owner_answered(struct owner *, int, const char *);
void	 owner_dispatch(struct owner *);
void	 owner_reap(struct owner *);
void	 owner_job_left(struct owner *, const char *);
void	 owner_shutdown(struct owner *, int);
void	 owner_close_workers(struct owner *, bool);
void	 owner_check_slots(struct owner *, msec_t);
msec_t	 owner_slots_deadline(struct owner *);
void	 owner_recover(struct owner *);
void	 owner_recover_one(struct owner *, const char *);
void	 owner_clean_tmp(struct owner *);

#endif
