/*
 * worker.h: one persistent worker process and the two pipes to it.  This
 * file only moves bytes; what a reply means is the supervisor's.
 */
#ifndef WORKER_H
#define WORKER_H

#include "base/chute.h"

struct worker {
	pid_t	 pid;			/* 0: not running */
	int	 in, out;		/* its stdin (we write), its stdout (we read) */
	char	 buf[1024];		/* a partial reply line */
	size_t	 len;
	msec_t	 started, restart_at;	/* monotonic */
	int	 fails;			/* deaths in a row, each younger than 1 s */
};

void	 worker_init(struct worker *);
int	 worker_start(struct worker *, int, const char *, char *const [], int,
	    bool);
pid_t	 worker_send(struct worker *, const char *, const char *);
int	 worker_input(struct worker *, int, void (*)(void *, int, const char *),
	    void *);
void	 worker_close(struct worker *);
void	 worker_kill(struct worker *, int, const char *, const char *);
void	 worker_exited(struct worker *, int, int, bool);

#endif
