/*
 * worker.h: one persistent worker process and the two pipes to it.  This
 * file only moves bytes; what a reply means is the supervisor's.
 */
#ifndef WORKER_H
#define WORKER_H

#include "base/util.h"

struct worker {
	pid_t	 pid;			/* 0: not running */
	int	 in, out;		/* its stdin (we write), its stdout (we read) */
	char	 buf[1024];		/* a partial reply line */
	size_t	 len;
	msec_t	 started, restart_at;	/* monotonic */
	int	 fails;			/* deaths in a row, each younger than 1 s */
};

void	 worker_init(struct worker *w);
/*
 * Start worker i (path, argv), giving it fd3 as descriptor 3 unless it is
 * -1, and with pdeath, a SIGKILL when we die.  Returns 0, or -1 after
 * saying why; it is then due again later.
 */
int	 worker_start(struct worker *w, int i, const char *path,
	    char *const argv[], int fd3, bool pdeath);
/* Hand the job (id, path) to the worker.  Returns its pid, or -1. */
pid_t	 worker_send(struct worker *w, const char *id, const char *path);
/*
 * Read what worker i said and call fn(arg, i, line) for each complete
 * line.  A line too long to be a reply ends the worker (SIGKILL), which
 * is then started again.  Returns 0, or -1 once its stdout is closed.
 */
int	 worker_input(struct worker *w, int i, void (*fn)(void *, int,
	    const char *), void *arg);
/* No more jobs: closing its stdin asks the worker to exit. */
void	 worker_close(struct worker *w);
/*
 * Worker i broke the protocol (why; what it said, if anything): SIGKILL
 * to its process group, and its stdin closed at once, so that no job is
 * handed to it before it is reaped and started again (sup_idle_slots).
 */
void	 worker_kill(struct worker *w, int i, const char *why,
	    const char *line);
/*
 * Worker i exited with status: close its pipes and, if restart, schedule
 * its next start, later each time it dies young.
 */
void	 worker_exited(struct worker *w, int i, int status, bool restart);

#endif
