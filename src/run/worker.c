/*
 * worker.c: --persistent.  Instead of one process per job, the supervisor
 * keeps one long-lived worker per slot and feeds it jobs over a line
 * protocol (spool-layout.md, "Persistent workers"):
 *
 *	owner -> worker stdin:	ID <TAB> PATH <LF>
 *	worker stdout -> owner:	ok | retry [REASON] | fail [REASON] <LF>
 *
 * This file starts a worker, writes job lines, splits its output into
 * lines and schedules its restart when it dies, after a growing delay if
 * it keeps dying young.  What a line means is the supervisor's business.
 */
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/spawn.h"
#include "base/util.h"
#include "run/worker.h"

void
worker_init(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	w->in = w->out = -1;
}

/* stdin and stdout are the pipes; stderr stays the owner's; 3 is fd3. */
static pid_t
spawn_worker(int i, const char *path, char *const argv[], int in, int out,
    int fd3, bool pdeath)
{
	char slot[32], *add[1] = { slot }, **env;
	int fds[4] = { in, out, STDERR_FILENO, fd3 }, saved;
	pid_t pid;

	snprintf(slot, sizeof(slot), "CHUTE_WORKER=%d", i);
	if ((env = spawn_env(add, 1)) == NULL)
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
	    (pid = spawn_worker(i, path, argv, in[0], out[1], fd3, pdeath)) ==
	    -1) {
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
	*w = (struct worker){ .pid = pid, .in = in[1], .out = out[0],
	    .started = mono_ms(), .fails = w->fails };
	say("worker %d: pid=%ld started", i, (long)pid);
	return 0;
}

pid_t
worker_send(struct worker *w, const char *id, const char *path)
{
	char line[2 * PATH_MAX];
	int n;

	if (w->pid <= 0 || w->in == -1) {
		errno = ESRCH;
		return -1;
	}
	n = snprintf(line, sizeof(line), "%s\t%s\n", id, path);
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
	if (!restart)
		return;
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
