/*
 * worker.c: --persistent.  Instead of one process per job, the owner
 * starts one long-lived worker per slot and feeds it jobs over a line
 * protocol (spool-layout.md, "Persistent workers"):
 *
 *	owner -> worker stdin:	ID <TAB> PATH <LF>
 *	worker stdout -> owner:	ok | retry [REASON] | fail [REASON] <LF>
 *
 * Outcomes, timeouts, cancel and shutdown are those of the exec mode; a
 * worker that dies takes only its current job's attempt with it and is
 * started again, after a growing delay if it keeps dying young.
 *
 * Every worker inherits, as fd 3, a descriptor of SPOOL/.workers.PID on
 * which the owner took a flock.  The lock lives as long as any worker (or
 * anything it started) does, so a later owner can tell that workers of a
 * dead owner may still be running jobs it found in cur/.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "owner.h"

#define RESTART_MIN_MS	250
#define RESTART_MAX_MS	60000
#define YOUNG_MS	1000	/* a worker dying younger than this backs off */

/* The lock file the workers inherit; created once per owner. */
static int
workers_lock(struct owner *ow)
{
	char name[64];

	if (ow->wlock != -1)
		return ow->wlock;
	snprintf(name, sizeof(name), ".workers.%ld", (long)getpid());
	ow->wlock = openat(ow->sp.root, name, O_RDONLY | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (ow->wlock != -1 && flock(ow->wlock, LOCK_SH) == -1) {
		close(ow->wlock);
		ow->wlock = -1;
	}
	return ow->wlock;
}

/* stdin and stdout are the pipes; stderr stays the owner's; 3 is wlock. */
static pid_t
spawn_worker(struct owner *ow, int i, int in, int out)
{
	char slot[32], *add[1] = { slot }, **env;
	int fds[4] = { in, out, STDERR_FILENO, ow->wlock }, saved;
	pid_t pid;

	snprintf(slot, sizeof(slot), "CHUTE_WORKER=%d", i);
	if ((env = spawn_env(add, 1)) == NULL)
		return -1;
	pid = spawn_exec(ow->o->path, ow->o->argv, env, fds, 4);
	saved = errno;
	free(env);
	errno = saved;
	return pid;
}

/* Start worker i.  Returns 0, or -1 (it is retried later). */
int
worker_start(struct owner *ow, int i)
{
	struct worker *w = &ow->workers[i];
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	if (workers_lock(ow) == -1 || pipe2(in, O_CLOEXEC) == -1 ||
	    pipe2(out, O_CLOEXEC | O_NONBLOCK) == -1 ||
	    (pid = spawn_worker(ow, i, in[0], out[1])) == -1) {
		say("worker %d: cannot start %s: %s", i, ow->o->argv[0],
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

/* Hand the claimed job in slot i to worker i; the caller set s->id. */
int
worker_send(struct owner *ow, int i)
{
	struct worker *w = &ow->workers[i];
	char line[2 * PATH_MAX];
	int n;

	if (w->pid <= 0 || w->in == -1) {
		errno = ESRCH;
		return -1;
	}
	n = snprintf(line, sizeof(line), "%s\t%s/cur/%s\n", ow->slots[i].id,
	    ow->sp.path, ow->slots[i].id);
	/* One short line into an empty pipe: it cannot block or split. */
	if (n >= (int)sizeof(line) || write(w->in, line, n) != n)
		return -1;
	return w->pid;
}

static void
close_worker(struct worker *w)
{
	if (w->in != -1)
		close(w->in);
	if (w->out != -1)
		close(w->out);
	w->in = w->out = -1;
	w->len = 0;
}

/*
 * Worker i exited with status.  Its job, if it had one, is finished by
 * the caller; here it is only scheduled to start again.
 */
void
worker_exited(struct owner *ow, int i, int status)
{
	struct worker *w = &ow->workers[i];
	msec_t mono = mono_ms(), delay = 0;

	close_worker(w);
	w->pid = 0;
	if (ow->stopping || ow->closing)
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
		say("worker %d: killed by signal=%s; restart in %lldms", i,
		    sigabbrev_np(WTERMSIG(status)), (long long)delay);
	else
		say("worker %d: exit=%d; restart in %lldms", i,
		    WEXITSTATUS(status), (long long)delay);
}

/* Start the workers that are down and due; called from the timers. */
void
worker_restart_due(struct owner *ow, msec_t mono)
{
	if (ow->stopping || ow->closing)
		return;
	for (int i = 0; i < ow->o->jobs; i++)
		if (ow->workers[i].pid == 0 && ow->workers[i].restart_at <= mono)
			worker_start(ow, i);
}

/*
 * Read what worker i said.  Each complete line answers its current job
 * (owner_answered); a line with no job to answer, or an unreadable
 * stream, ends the worker, which is started again.
 */
void
worker_input(struct owner *ow, int i)
{
	struct worker *w = &ow->workers[i];
	ssize_t n;
	char *nl;

	n = read(w->out, w->buf + w->len, sizeof(w->buf) - 1 - w->len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {		/* closed its stdout: it is on its way out */
		close(w->out);
		w->out = -1;
		return;
	}
	w->len += n;
	w->buf[w->len] = '\0';
	while ((nl = memchr(w->buf, '\n', w->len)) != NULL) {
		*nl = '\0';
		owner_answered(ow, i, w->buf);
		w->len -= nl + 1 - w->buf;
		memmove(w->buf, nl + 1, w->len);
	}
	if (w->len == sizeof(w->buf) - 1) {
		say("worker %d: reply line too long; stopping it", i);
		kill(-w->pid, SIGKILL);
		w->len = 0;
	}
}

/* No more jobs: close every worker's stdin, which tells it to exit. */
void
worker_close_all(struct owner *ow)
{
	for (int i = 0; i < ow->o->jobs; i++) {
		struct worker *w = &ow->workers[i];
		if (w->in != -1) {
			close(w->in);
			w->in = -1;
		}
	}
}

int
workers_alive(struct owner *ow)
{
	int n = 0;

	for (int i = 0; ow->workers && i < ow->o->jobs; i++)
		n += ow->workers[i].pid > 0;
	return n;
}

/*
 * Workers of an earlier owner still running?  Each left a locked
 * .workers.PID file; a lock we can take means they are all gone, and the
 * file is removed.  Returns how many such files are still locked.
 */
int
workers_of_the_dead(struct owner *ow)
{
	int alive = 0;

	for (int k = 0; k < ow->nold; k++) {
		int fd = openat(ow->sp.root, ow->old[k], O_RDONLY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1) {
			ow->old[k][0] = '\0';
			continue;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			unlinkat(ow->sp.root, ow->old[k], 0);
			ow->old[k][0] = '\0';
		} else
			alive++;
		close(fd);
	}
	/* Compact the list. */
	int j = 0;
	for (int k = 0; k < ow->nold; k++)
		if (ow->old[k][0] != '\0')
			memmove(ow->old[j++], ow->old[k], sizeof(ow->old[0]));
	ow->nold = j;
	return alive;
}

/* At start-up: remember the .workers.PID files of earlier owners. */
void
workers_find_old(struct owner *ow)
{
	DIR *d;
	struct dirent *de;
	int fd = openat(ow->sp.root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL && ow->nold < OLD_MAX)
		if (strncmp(de->d_name, ".workers.", 9) == 0 &&
		    strlen(de->d_name) < sizeof(ow->old[0]))
			strlcpy(ow->old[ow->nold++], de->d_name,
			    sizeof(ow->old[0]));
	closedir(d);
	if (workers_of_the_dead(ow) > 0)
		say("workers of a previous owner are still running; jobs "
		    "left in cur/ wait for them to exit");
}
