/*
 * worker.h: one persistent worker process and the two pipes to it.  This
 * file only moves bytes; what a reply means is the supervisor's.
 */
#ifndef WORKER_H
#define WORKER_H

#include <limits.h>
#include <sys/types.h>
#include "base/util.h"

/* A job as a worker is handed it. */
struct worker_job {
	const char	*id;
	const char	*path;		/* the path protocol's PATH */
	/* --inline: size bytes, from mem, or else read from fd (at 0) */
	const char	*mem;
	int		 fd;
	off_t		 size;
};

struct worker {
	pid_t	 pid;			/* 0: not running */
	int	 in, out;		/* its stdin (we write), its stdout (we read) */
	char	 buf[1024];		/* a partial reply line */
	size_t	 len;
	msec_t	 started, restart_at;	/* monotonic */
	int	 fails;			/* deaths in a row, each younger than 1 s */
	/*
	 * --inline: the frame being written to its stdin, "ID TAB LENGTH
	 * LF" (head, hoff written) and the payload (left bytes of it from
	 * off on, of mem or of fd through chunk), while its pipe is full.
	 */
	bool	 inline_jobs;
	char	 head[NAME_MAX + 32];
	size_t	 hlen, hoff;
	const char *mem;
	int	 fd;
	off_t	 off, left;
	char	*chunk;			/* fd's bytes read, not yet written */
	size_t	 clen, coff;
};

void	 worker_init(struct worker *w, bool inline_jobs);
/*
 * Start worker i (path, argv), giving it fd3 as descriptor 3 unless it is
 * -1, and with pdeath, a SIGKILL when we die.  Returns 0, or -1 after
 * saying why; it is then due again later.
 */
int	 worker_start(struct worker *w, int i, const char *path,
	    char *const argv[], int fd3, bool pdeath);
/*
 * Hand job j to the worker: "ID TAB PATH LF", or with --inline the frame,
 * as much of it as its pipe takes now (worker_flush writes the rest).
 * j's payload must stay until the worker answers or is gone.  Returns
 * its pid, or -1 with errno.
 */
pid_t	 worker_send(struct worker *w, const struct worker_job *j);
/* Some of the frame is still to be written (POLLOUT on w->in). */
bool	 worker_pending(const struct worker *w);
/*
 * Write more of the frame.  Returns 0 (done, or the pipe is full again),
 * or -1 with *why when the frame cannot be finished: the worker closed its
 * stdin, or the job file could not be read or came short.
 */
int	 worker_flush(struct worker *w, const char **why);
/*
 * Bytes of the job's frame the worker has not read (still to be written,
 * or still in its pipe): it answered before reading its payload whole.
 */
off_t	 worker_unread(const struct worker *w);
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
