/*
 * worker.c: --persistent.  Instead of one process per job, the supervisor
 * keeps one long-lived worker per slot and feeds it jobs over a line
 * protocol (spool-layout.md, "Persistent workers"):
 *
 *	owner -> worker stdin:	ID <TAB> PATH <LF>
 *	  or, with --inline:	ID <TAB> LENGTH <LF> and LENGTH bytes
 *	worker stdout -> owner:	ok | retry [REASON] | fail [REASON] <LF>
 *
 * This file starts a worker, writes job lines and frames, splits its
 * output into lines and schedules its restart when it dies, after a
 * growing delay if it keeps dying young.  What a line means is the
 * supervisor's business.
 */
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/spawn.h"
#include "base/util.h"
#include "run/worker.h"

/* A payload read from its file this much at a time: a pipe's default. */
#define CHUNK	65536

void
worker_init(struct worker *w, bool inline_jobs)
{
	memset(w, 0, sizeof(*w));
	w->in = w->out = w->fd = -1;
	w->inline_jobs = inline_jobs;
}

/* No frame being written (a new one, the worker gone or stopped). */
static void
frame_clear(struct worker *w)
{
	w->hlen = w->hoff = 0;
	w->mem = NULL;
	w->fd = -1;
	w->off = w->left = 0;
	w->clen = w->coff = 0;
}

/* stdin and stdout are the pipes; stderr stays the owner's; 3 is fd3. */
static pid_t
spawn_worker(int i, const char *path, char *const argv[], int in, int out,
    int fd3, bool pdeath, bool inline_jobs)
{
	char slot[32], inl[] = "CHUTE_INLINE=1", *add[2] = { slot, inl },
	    **env;
	int fds[4] = { in, out, STDERR_FILENO, fd3 }, saved;
	pid_t pid;

	snprintf(slot, sizeof(slot), "CHUTE_WORKER=%d", i);
	if ((env = spawn_env(add, inline_jobs ? 2 : 1)) == NULL)
		return -1;
	pid = spawn_exec(path, argv, env, fds, fd3 == -1 ? 3 : 4, pdeath);
	saved = errno;
	free(env);
	errno = saved;
	return pid;
}

int
worker_start(struct worker *w, int i, const char *path, char *const argv[],
    int fd3, bool pdeath)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) == -1 ||
	    pipe2(out, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (pid = spawn_worker(i, path, argv, in[0], out[1], fd3, pdeath,
	    w->inline_jobs)) == -1) {
		say_err("worker %d: cannot start %s: %s", i, argv[0],
		    strerror(errno));
		for (int k = 0; k < 2; k++) {
			if (in[k] != -1)
				close(in[k]);
			if (out[k] != -1)
				close(out[k]);
		}
		w->restart_at = mono_ms() + RESTART_MAX_MS / 4;
		return -1;
	}
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	w->pid = pid;
	w->in = in[1];
	w->out = out[0];
	w->len = 0;
	w->started = mono_ms();
	w->restart_at = 0;
	frame_clear(w);
	say("worker %d: pid=%ld started", i, (long)pid);
	return 0;
}

bool
worker_pending(const struct worker *w)
{
	return w->hoff < w->hlen || w->left > 0 || w->coff < w->clen;
}

/*
 * The next piece of the payload in iov: from memory, or what was read of
 * the file and not written yet, reading more when that is all written.
 * Returns 0, or -1 with *why.
 */
static int
payload_next(struct worker *w, struct iovec *iov, const char **why)
{
	ssize_t n;

	iov->iov_len = 0;
	if (w->mem != NULL) {
		/* writev only reads it: const in all but its type */
		iov->iov_base = (void *)(uintptr_t)(w->mem + w->off);
		iov->iov_len = (size_t)w->left;
		return 0;
	}
	if (w->coff == w->clen && w->left > 0) {
		if (w->chunk == NULL && (w->chunk = malloc(CHUNK)) == NULL) {
			*why = "out of memory";
			return -1;
		}
		do
			n = pread(w->fd, w->chunk, w->left < CHUNK ?
			    (size_t)w->left : CHUNK, w->off);
		while (n == -1 && errno == EINTR);
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			*why = n == 0 ? "its job file came short of its length" :
			    "its job file could not be read";
			return -1;
		}
		w->off += n;
		w->left -= n;
		w->clen = (size_t)n;
		w->coff = 0;
	}
	iov->iov_base = w->chunk + w->coff;
	iov->iov_len = w->clen - w->coff;
	return 0;
}

/* n more bytes of the frame were written: past the head, then the payload. */
static void
frame_advance(struct worker *w, size_t n)
{
	size_t h = w->hlen - w->hoff < n ? w->hlen - w->hoff : n;

	w->hoff += h;
	n -= h;
	if (w->mem != NULL) {
		w->off += (off_t)n;
		w->left -= (off_t)n;
	} else
		w->coff += n;
}

/*
 * As much of the frame as the pipe takes: the head and the payload in one
 * writev while both fit, so that a small job costs one system call (and a
 * pread from a spool's job file).  Never blocks: the worker may be busy
 * writing its answer to us.
 */
int
worker_flush(struct worker *w, const char **why)
{
	struct iovec iov[2];
	ssize_t n;

	while (worker_pending(w)) {
		iov[0] = (struct iovec){ w->head + w->hoff, w->hlen - w->hoff };
		if (payload_next(w, &iov[1], why) == -1)
			return -1;
		n = writev(w->in, iov, 2);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;	/* the rest at POLLOUT */
		if (n == -1) {
			*why = errno == EPIPE ? "closed its stdin with a job "
			    "not sent whole" : "its stdin cannot be written";
			return -1;
		}
		frame_advance(w, (size_t)n);
	}
	return 0;
}

off_t
worker_unread(const struct worker *w)
{
	int queued = 0;

	if (!w->inline_jobs)
		return 0;
	if (worker_pending(w))
		return (off_t)(w->hlen - w->hoff) + w->left +
		    (off_t)(w->clen - w->coff) + 1;
	/* The pipe's bytes: FIONREAD counts them from either end. */
	if (w->in != -1 && ioctl(w->in, FIONREAD, &queued) == -1)
		return 0;
	return queued;
}

/* "ID TAB LENGTH LF" and its payload, as far as the pipe takes it now. */
static int
send_frame(struct worker *w, const struct worker_job *j)
{
	const char *why = NULL;
	int n;

	frame_clear(w);
	n = snprintf(w->head, sizeof(w->head), "%s\t%lld\n", j->id,
	    (long long)j->size);
	if (n < 0 || n >= (int)sizeof(w->head)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	w->hlen = (size_t)n;
	w->mem = j->mem;
	w->fd = j->fd;
	w->left = j->size;
	if (j->mem == NULL && j->fd == -1 && j->size > 0) {
		errno = EBADF;
		return -1;
	}
	if (worker_flush(w, &why) == -1) {
		int saved = errno;

		say_warn("job=%s: worker pid=%ld: %s: %s", vis_id(j->id),
		    (long)w->pid, why, strerror(saved));
		/* Nothing of it written: the attempt fails as not started. */
		if (w->hoff == 0) {
			frame_clear(w);
			errno = saved;
			return -1;
		}
		/* Its stdin can no longer be framed: started again. */
		kill(-w->pid, SIGKILL);
		worker_close(w);
	}
	return 0;
}

pid_t
worker_send(struct worker *w, const struct worker_job *j)
{
	char line[2 * PATH_MAX];
	int n;

	if (w->pid <= 0 || w->in == -1) {
		errno = ESRCH;
		return -1;
	}
	if (w->inline_jobs)
		return send_frame(w, j) == -1 ? -1 : w->pid;
	n = snprintf(line, sizeof(line), "%s\t%s\n", j->id, j->path);
	if (n >= (int)sizeof(line)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* One short line into an empty pipe: it cannot block or split. */
	if (write(w->in, line, n) != n)
		return -1;
	return w->pid;
}

int
worker_input(struct worker *w, int i, void (*fn)(void *, int, const char *),
    void *arg)
{
	ssize_t n;
	char *nl;

	if (w->out == -1)
		return -1;
	n = read(w->out, w->buf + w->len, sizeof(w->buf) - 1 - w->len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {		/* closed its stdout: it is on its way out */
		close(w->out);
		w->out = -1;
		return -1;
	}
	w->len += n;
	w->buf[w->len] = '\0';
	while ((nl = memchr(w->buf, '\n', w->len)) != NULL) {
		*nl = '\0';
		fn(arg, i, w->buf);
		w->len -= nl + 1 - w->buf;
		memmove(w->buf, nl + 1, w->len);
	}
	if (w->len == sizeof(w->buf) - 1) {
		worker_kill(w, i, "reply line too long", NULL);
		w->len = 0;
	}
	return 0;
}

void
worker_kill(struct worker *w, int i, const char *why, const char *line)
{
	char vis[4 * 60 + 1], head[61];

	if (line != NULL) {
		strlcpy(head, line, sizeof(head));
		vis_text(head, vis, sizeof(vis));
		say_warn("worker %d: %s: %s; stopping it", i, why, vis);
	} else
		say_warn("worker %d: %s; stopping it", i, why);
	if (w->pid > 0)
		kill(-w->pid, SIGKILL);
	worker_close(w);
}

void
worker_close(struct worker *w)
{
	if (w->in != -1)
		close(w->in);
	w->in = -1;
	frame_clear(w);
}

void
worker_exited(struct worker *w, int i, int status, bool restart)
{
	msec_t mono = mono_ms(), delay = 0;

	worker_close(w);
	if (w->out != -1)
		close(w->out);
	w->out = -1;
	w->len = 0;
	w->pid = 0;
	if (!restart) {
		free(w->chunk);
		w->chunk = NULL;
		return;
	}
	if (mono - w->started < YOUNG_MS) {
		w->fails++;
		delay = RESTART_MIN_MS;
		for (int k = 1; k < w->fails && delay < RESTART_MAX_MS; k++)
			delay *= 2;
		if (delay > RESTART_MAX_MS)
			delay = RESTART_MAX_MS;
	} else
		w->fails = 0;
	w->restart_at = mono + delay;
	if (WIFSIGNALED(status))
		say_warn("worker %d: killed by signal=%s; restart in %lldms", i,
		    sigabbrev_np(WTERMSIG(status)), (long long)delay);
	else
		say_warn("worker %d: exit=%d; restart in %lldms", i,
		    WEXITSTATUS(status), (long long)delay);
}
