/*
 * supervise.c: the handler supervisor (supervise.h).  A slot is free,
 * running a handler, or ended: its handler is gone and the owner has not
 * released it yet (the outcome is still being recorded).  With
 * --persistent, slot i's handler is worker i, and a slot is only handed a
 * job while that worker is up.
 *
 * A handler's attempt ends with its process: when the handler (or a
 * worker) exits, whatever it left running in its process group gets
 * SIGKILL, while the exited leader is still our zombie (waitid WNOWAIT),
 * so that the group's id cannot have been reused, and only then is the
 * leader reaped and the ending reported.  Nothing a handler started in
 * its group outlives the attempt: not while its outcome is recorded, not
 * when the job runs again.  With die_with_owner a reaper (reaper.c) does
 * the same for every running group when we die.
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

#include "base/spawn.h"
#include "base/util.h"
#include "base/reaper.h"
#include "run/supervise.h"
#include "run/worker.h"

enum slot_state { SLOT_FREE, SLOT_RUNNING, SLOT_ENDED };

struct slot {
	enum slot_state	 state;
	pid_t		 pid;		/* the handler, or slot's worker */
	char		 id[NAME_MAX + 1];
	int		 attempt;
	msec_t		 started;	/* monotonic, all three */
	msec_t		 deadline;	/* --timeout; 0: none */
	msec_t		 killat;	/* SIGKILL after the grace; 0: none */
	enum stop	 stop;
};

struct sup {
	struct sup_conf	 c;
	struct slot	*slots;
	struct worker	*workers;	/* --persistent: one per slot */
	bool		 stopping;	/* shutdown: no restarts */
	bool		 closing;	/* workers told to exit */
	msec_t		 close_deadline;	/* then SIGKILL (monotonic) */
	msec_t		 reaper_checked;	/* monotonic */
	bool		 reaper_failed;	/* said so already */
};

/* Groups the reaper may have to know at once: one per slot, and spare. */
static int
reaper_size(const struct sup *s)
{
	return 2 * (s->c.slots > 0 ? s->c.slots : 1) + 16;
}

struct sup *
sup_new(const struct sup_conf *c)
{
	struct sup *s = calloc(1, sizeof(*s));
	size_t n = c->slots > 0 ? (size_t)c->slots : 1;

	if (s == NULL)
		return NULL;
	s->c = *c;
	if ((s->slots = calloc(n, sizeof(*s->slots))) == NULL ||
	    (c->persistent && (s->workers = calloc(n, sizeof(*s->workers))) ==
	    NULL)) {
		sup_free(s);
		return NULL;
	}
	/* restart_at 0: the workers start at the first sup_timers. */
	for (int i = 0; s->workers != NULL && i < c->slots; i++)
		worker_init(&s->workers[i], c->inline_jobs);
	/* Before any handler: each one's group is announced to it. */
	if (c->die_with_owner && reaper_start(reaper_size(s)) == -1) {
		int saved = errno;
		sup_free(s);
		errno = saved;
		return NULL;
	}
	if (c->die_with_owner)
		say("reaper pid=%ld: handlers' process groups die with us",
		    (long)reaper_pid());
	return s;
}

void
sup_free(struct sup *s)
{
	if (s == NULL)
		return;
	for (int i = 0; s->workers != NULL && i < s->c.slots; i++)
		worker_exited(&s->workers[i], i, 0, false);
	/* What still runs now dies with the reaper's EOF. */
	if (s->c.die_with_owner)
		reaper_stop();
	free(s->workers);
	free(s->slots);
	free(s);
}

int
sup_idle_slots(struct sup *s, int *slot, int max)
{
	int n = 0;

	for (int i = 0; i < s->c.slots && n < max; i++) {
		if (s->slots[i].state != SLOT_FREE)
			continue;
		if (s->workers != NULL && (s->workers[i].pid <= 0 ||
		    s->workers[i].in == -1))
			continue;
		slot[n++] = i;
	}
	return n;
}

/* The handler of slot i is gone: hold the slot and say how it ended. */
static void
end(struct sup *s, int i, enum end how, int status, const char *reply,
    int error)
{
	struct slot *sl = &s->slots[i];
	struct attempt_end e = { .end = how, .status = status, .reply = reply,
	    .error = error, .stop = sl->stop, .attempt = sl->attempt,
	    .elapsed = how == END_SPAWN_FAILED ? -1 : mono_ms() - sl->started };

	sl->state = SLOT_ENDED;
	sl->pid = 0;
	s->c.ended(s->c.arg, i, &e);
}

static char **
make_argv(char *const *tmpl, char *jobpath)
{
	size_t n = 0;
	char **argv;

	while (tmpl[n] != NULL)
		n++;
	if ((argv = reallocarray(NULL, n + 1, sizeof(*argv))) == NULL)
		return NULL;
	for (size_t i = 0; i <= n; i++)
		argv[i] = tmpl[i] && strcmp(tmpl[i], "{}") == 0 ? jobpath :
		    tmpl[i];
	return argv;
}

/*
 * One process for the job: the handler with "{}" replaced by the job's
 * path, the job file as stdin, its log as stdout and stderr, and the
 * CHUTE_* variables.  Returns the pid, or -1 with errno set.
 */
static pid_t
spawn_handler(struct sup *s, const struct sup_job *j)
{
	char *add[4] = { NULL }, **argv = NULL, **env = NULL;
	int fds[3] = { j->fd, j->logfd, j->logfd }, saved;
	pid_t pid = -1;

	errno = ENOMEM;
	if (asprintf(&add[0], "CHUTE_SPOOL=%s", s->c.queue) == -1 ||
	    asprintf(&add[1], "CHUTE_ID=%s", j->id) == -1 ||
	    asprintf(&add[2], "CHUTE_JOB=%s", j->path) == -1 ||
	    asprintf(&add[3], "CHUTE_ATTEMPT=%d", j->attempt) == -1 ||
	    (argv = make_argv(s->c.argv, j->path)) == NULL ||
	    (env = spawn_env(add, 4)) == NULL)
		goto out;
	/* The claim opened it O_NONBLOCK (a FIFO swapped in must not hang
	 * us); the handler gets a blocking stdin.  Persistent workers open
	 * their job by path: no system call for them. */
	if (j->fd != -1)
		fcntl(j->fd, F_SETFL, 0);
	pid = spawn_exec(s->c.path, argv, env, fds, 3, s->c.die_with_owner);
out:
	saved = errno;
	for (int i = 0; i < 4; i++)
		free(add[i]);
	free(argv);
	free(env);
	errno = saved;
	return pid;
}

/*
 * With die_with_owner: if the reaper is gone (killed by someone; nothing
 * of ours stops it), start another and tell it every group that runs.
 * Until then the handlers' leaders still die with us (PR_SET_PDEATHSIG),
 * what they started does not.  Tried again at the next check if it fails.
 */
static void
reaper_check(struct sup *s, bool probe)
{
	if (!s->c.die_with_owner ||
	    (reaper_running() && !reaper_lost(probe)))
		return;
	if (!reaper_running() && !probe)
		return;		/* a start that failed: retried from the timers */
	if (reaper_running())
		say("the reaper pid=%ld is gone", (long)reaper_pid());
	reaper_stop();
	if (reaper_start(reaper_size(s)) == -1) {
		if (!s->reaper_failed)
			say_err("reaper: cannot start it again: %s; until then "
			    "what handlers started does not die with us",
			    strerror(errno));
		s->reaper_failed = true;
		return;
	}
	s->reaper_failed = false;
	say("reaper pid=%ld started again", (long)reaper_pid());
	for (int i = 0; i < s->c.slots; i++) {
		pid_t pid = s->workers != NULL ? s->workers[i].pid :
		    s->slots[i].state == SLOT_RUNNING ? s->slots[i].pid : 0;

		if (pid > 0)
			reaper_add(pid);
	}
}

int
sup_start(struct sup *s, int i, const struct sup_job *j)
{
	struct slot *sl = &s->slots[i];
	pid_t pid;

	*sl = (struct slot){ .state = SLOT_RUNNING, .attempt = j->attempt,
	    .started = mono_ms() };
	strlcpy(sl->id, j->id, sizeof(sl->id));
	sl->deadline = s->c.timeout ? sl->started + s->c.timeout : 0;
	if (s->workers != NULL)
		pid = worker_send(&s->workers[i], &(struct worker_job){
		    .id = j->id, .path = j->path, .mem = j->payload,
		    .fd = j->fd, .size = j->size });
	else
		pid = spawn_handler(s, j);
	if (pid == -1) {
		end(s, i, END_SPAWN_FAILED, 0, NULL, errno);
		return -1;
	}
	sl->pid = pid;
	reaper_check(s, false);	/* the handler's own message was lost? */
	return 0;
}

void
sup_not_started(struct sup *s, int i, int attempt, int error)
{
	struct slot *sl = &s->slots[i];

	*sl = (struct slot){ .state = SLOT_RUNNING, .attempt = attempt };
	end(s, i, END_SPAWN_FAILED, 0, NULL, error);
}

void
sup_release(struct sup *s, int i)
{
	memset(&s->slots[i], 0, sizeof(s->slots[i]));
}

/* SIGTERM (then, after the grace, SIGKILL) to the handler's process group. */
static void
stop(struct sup *s, struct slot *sl, enum stop why, int sig)
{
	if (sl->state != SLOT_RUNNING || sl->pid <= 0)
		return;
	if (sl->stop == STOP_NONE || why == STOP_SHUTDOWN)
		sl->stop = why;
	/* The whole process group: whatever the handler started goes too. */
	if (kill(-sl->pid, sig) == -1)
		kill(sl->pid, sig);
	sl->killat = sig == SIGKILL ? 0 : mono_ms() + s->c.grace;
}

pid_t
sup_cancel(struct sup *s, const char *id, bool now)
{
	for (int i = 0; i < s->c.slots; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->state != SLOT_RUNNING || sl->pid <= 0 ||
		    sl->stop != STOP_NONE || strcmp(sl->id, id) != 0)
			continue;
		stop(s, sl, STOP_CANCEL, now ? SIGKILL : SIGTERM);
		return sl->pid;
	}
	return 0;
}

void
sup_shutdown(struct sup *s, bool now)
{
	s->stopping = true;
	for (int i = 0; i < s->c.slots; i++)
		stop(s, &s->slots[i], STOP_SHUTDOWN, now ? SIGKILL : SIGTERM);
	if (s->workers != NULL)
		sup_close_workers(s, now);
}

void
sup_close_workers(struct sup *s, bool now)
{
	if (!s->closing)
		s->close_deadline = mono_ms() + s->c.grace;
	s->closing = true;
	for (int i = 0; s->workers != NULL && i < s->c.slots; i++)
		worker_close(&s->workers[i]);
	if (now)
		s->close_deadline = mono_ms();
}

bool
sup_closing(struct sup *s)
{
	return s->closing;
}

static int
workers_alive(struct sup *s)
{
	int n = 0;

	for (int i = 0; s->workers != NULL && i < s->c.slots; i++)
		n += s->workers[i].pid > 0;
	return n;
}

bool
sup_done(struct sup *s)
{
	for (int i = 0; i < s->c.slots; i++)
		if (s->slots[i].state != SLOT_FREE)
			return false;
	if (workers_alive(s) == 0)
		return true;
	if (!s->closing)
		sup_close_workers(s, false);
	return false;
}

/* Children we have not reaped yet: handlers and workers. */
static int
children(struct sup *s)
{
	int n = workers_alive(s);

	for (int i = 0; s->workers == NULL && i < s->c.slots; i++)
		n += s->slots[i].state == SLOT_RUNNING && s->slots[i].pid > 0;
	return n;
}

/* Is pid the handler of a running slot, or a worker? */
static bool
ours(struct sup *s, pid_t pid)
{
	for (int i = 0; i < s->c.slots; i++)
		if ((s->workers == NULL && s->slots[i].state == SLOT_RUNNING &&
		    s->slots[i].pid == pid) ||
		    (s->workers != NULL && s->workers[i].pid == pid))
			return true;
	return false;
}

/*
 * Child pid has exited and is not reaped yet.  If it led a handler's or a
 * worker's group, what is left in that group gets SIGKILL now, while the
 * zombie keeps the group's id from being reused, and the reaper forgets
 * the group; then reap it and say how it ended.
 */
static void
reaped(struct sup *s, pid_t pid)
{
	int status = 0;

	if (ours(s, pid)) {
		kill(-pid, SIGKILL);
		reaper_forget(pid);
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	for (int i = 0; i < s->c.slots; i++) {
		if (s->slots[i].state == SLOT_RUNNING && s->slots[i].pid == pid)
			end(s, i, s->workers ? END_WORKER_DIED : END_EXIT,
			    status, NULL, 0);
		if (s->workers != NULL && s->workers[i].pid == pid)
			worker_exited(&s->workers[i], i, status,
			    !s->stopping && !s->closing);
	}
}

void
sup_reap(struct sup *s)
{
	siginfo_t si;

	while (children(s) > 0) {
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
		    si.si_pid == 0)
			break;
		reaped(s, si.si_pid);
	}
	reaper_check(s, false);
}

/*
 * Worker i answered its job.  A job being stopped (timeout, cancel,
 * shutdown) ignores late answers: its outcome comes from the worker's
 * exit, as in the exec mode.  A line with no job to answer ends the worker.
 * With --inline, an answer given with some of the payload unread stands
 * (as an exec'd handler's exit does, whatever it read), but what it left
 * in its pipe would be read as the next job's head: it is stopped and
 * started again before it can be handed another.
 */
static void
answered(void *arg, int i, const char *line)
{
	struct sup *s = arg;
	struct slot *sl = &s->slots[i];
	off_t unread;

	if (sl->state != SLOT_RUNNING) {
		if (s->workers[i].in == -1)
			return;	/* already stopping it, or told to exit */
		/* Only this worker pays: no other job is sent to it. */
		worker_kill(&s->workers[i], i, "reply with no job", line);
		return;
	}
	if (sl->stop != STOP_NONE)
		return;
	if ((unread = worker_unread(&s->workers[i])) > 0) {
		say_warn("job=%s: worker %d answered with %lld bytes or more of "
		    "its job unread", vis_id(sl->id), i, (long long)unread);
		worker_kill(&s->workers[i], i, "answer before its whole job",
		    line);
	}
	end(s, i, END_REPLY, 0, line, 0);
}

int
sup_pollfds(struct sup *s, struct pollfd *pfd)
{
	int n = s->c.slots;

	if (s->workers == NULL)
		return 0;
	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = s->workers[i].out,
		    .events = POLLIN };
	if (!s->c.inline_jobs)
		return n;
	/* A negative fd is skipped by poll(2): no frame waiting there. */
	for (int i = 0; i < n; i++)
		pfd[n + i] = (struct pollfd){ .fd =
		    worker_pending(&s->workers[i]) ? s->workers[i].in : -1,
		    .events = POLLOUT };
	return 2 * n;
}

/*
 * Answers first: one that came before its frame was written whole is
 * told apart by what is still to write.  Then more of each frame, as
 * its pipe takes it (the owner never blocks on a worker's full stdin
 * while that worker blocks writing its answer to us).
 */
void
sup_input(struct sup *s, const struct pollfd *pfd)
{
	const char *why;
	int n = s->c.slots;

	for (int i = 0; s->workers != NULL && i < n; i++)
		if (pfd[i].revents & (POLLIN | POLLHUP))
			worker_input(&s->workers[i], i, answered, s);
	for (int i = 0; s->c.inline_jobs && i < n; i++)
		if (pfd[n + i].fd != -1 &&
		    (pfd[n + i].revents & (POLLOUT | POLLERR | POLLHUP)) &&
		    worker_pending(&s->workers[i]) &&
		    worker_flush(&s->workers[i], &why) == -1)
			worker_kill(&s->workers[i], i, why, NULL);
}

static void
restart_due(struct sup *s, msec_t mono)
{
	if (s->stopping || s->closing)
		return;
	for (int i = 0; i < s->c.slots; i++)
		if (s->workers[i].pid == 0 && s->workers[i].restart_at <= mono)
			worker_start(&s->workers[i], i, s->c.path, s->c.argv,
			    s->c.worker_fd, s->c.die_with_owner);
}

void
sup_timers(struct sup *s, msec_t mono)
{
	if (mono - s->reaper_checked >= 1000) {
		s->reaper_checked = mono;
		reaper_check(s, true);
	}
	if (s->workers != NULL && s->closing && mono >= s->close_deadline)
		for (int i = 0; i < s->c.slots; i++)
			if (s->workers[i].pid > 0)
				kill(-s->workers[i].pid, SIGKILL);
	if (s->workers != NULL)
		restart_due(s, mono);
	for (int i = 0; i < s->c.slots; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->state != SLOT_RUNNING || sl->pid <= 0)
			continue;
		if (sl->killat != 0 && sl->killat <= mono) {
			say_warn("job=%s pid %ld still running after the grace "
			    "period: SIGKILL", vis_id(sl->id), (long)sl->pid);
			stop(s, sl, sl->stop, SIGKILL);
		} else if (sl->stop == STOP_NONE && sl->deadline != 0 &&
		    sl->deadline <= mono) {
			say_warn("job=%s timed out: SIGTERM to pid %ld", vis_id(sl->id),
			    (long)sl->pid);
			stop(s, sl, STOP_TIMEOUT, SIGTERM);
		}
	}
}

msec_t
sup_deadline(struct sup *s)
{
	msec_t t = INT64_MAX;

	for (int i = 0; s->workers != NULL && i < s->c.slots; i++) {
		struct worker *w = &s->workers[i];

		if (s->closing && w->pid > 0 && s->close_deadline < t)
			t = s->close_deadline;
		if (!s->closing && !s->stopping && w->pid == 0 &&
		    w->restart_at < t)
			t = w->restart_at;
	}
	for (int i = 0; i < s->c.slots; i++) {
		struct slot *sl = &s->slots[i];

		if (sl->state != SLOT_RUNNING)
			continue;
		if (sl->killat != 0 && sl->killat < t)
			t = sl->killat;
		if (sl->stop == STOP_NONE && sl->deadline != 0 &&
		    sl->deadline < t)
			t = sl->deadline;
	}
	return t;
}
