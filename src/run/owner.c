/*
 * owner.c: the owner's event loop.  One thread, one poll(2) over a
 * signalfd (children exit, we are asked to stop), the queue's wake-up
 * descriptor and the persistent workers' stdout, with a timeout computed
 * from the nearest deadline of the queue, the supervisor and the owner's
 * own retries.  Each turn it lets the queue make due jobs claimable,
 * claims into idle slots, and makes recorded outcomes durable.
 */
#include <sys/signalfd.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/notify.h"
#include "base/sigfd.h"
#include "base/spawn.h"
#include "base/util.h"
#include "run/opts.h"
#include "run/owner.h"

/* Signals arrive through the signalfd only; SIGIO and SIGPIPE never. */
static int
setup_signals(struct owner *ow)
{
	/* SIGIO: a lease break while we probe for writers; SIGPIPE: never. */
	spawn_ignore(SIGIO);
	spawn_ignore(SIGPIPE);
	ow->sigfd = sigfd_open(SIGCHLD, SIGTERM, SIGINT, SIGHUP, 0);
	return ow->sigfd == -1 ? -1 : 0;
}

/*
 * Set up ow to run o's handler on the jobs of q: the supervisor, the slot
 * table, the signals.  Returns 0, or -1 with errno set (ow is then freed).
 */
int
owner_init(struct owner *ow, const struct run_opts *o, struct queue *q)
{
	size_t n = o->jobs > 0 ? (size_t)o->jobs : 1;	/* 1..4096 */
	struct sup_conf sc = { .slots = o->jobs, .persistent = o->persistent,
	    .inline_jobs = o->inline_jobs,
	    .path = o->path, .argv = o->argv, .timeout = o->timeout,
	    .grace = o->grace, .queue = q->name, .worker_fd = q->worker_fd,
	    .die_with_owner = q->die_with_owner, .ended = owner_ended,
	    .arg = ow };

	*ow = (struct owner){ .o = o, .q = q, .sigfd = -1,
	    .policy = { o->max_attempts, o->backoff_base, o->backoff_cap } };
	if ((ow->jobs = calloc(n, sizeof(*ow->jobs))) == NULL ||
	    (ow->batch = calloc(n, sizeof(*ow->batch))) == NULL ||
	    (ow->pfd = calloc(2 + 2 * n, sizeof(*ow->pfd))) == NULL ||
	    (ow->sup = sup_new(&sc)) == NULL || setup_signals(ow) == -1) {
		int saved = errno;
		owner_free(ow);
		errno = saved;
		return -1;
	}
	for (int i = 0; i < o->jobs; i++)
		ow->jobs[i].c.fd = ow->jobs[i].c.logfd = -1;
	return 0;
}

void
owner_free(struct owner *ow)
{
	for (int i = 0; ow->jobs != NULL && i < ow->o->jobs; i++)
		if (ow->jobs[i].busy)
			ow->q->be->release(ow->q, &ow->jobs[i].c);
	sup_free(ow->sup);
	free(ow->jobs);
	free(ow->batch);
	free(ow->pfd);
	if (ow->sigfd != -1)
		close(ow->sigfd);
	ow->sup = NULL;
	ow->jobs = NULL;
	ow->batch = NULL;
	ow->pfd = NULL;
	ow->sigfd = -1;
}

/* SIGTERM/SIGINT: stop claiming, grace, then SIGKILL; twice: now. */
static void
shutdown_on(struct owner *ow, int sig)
{
	bool again = ow->stopping;

	ow->stopping = true;
	say_notice("signal %s: %s", sigabbrev_np(sig), again ?
	    "killing handlers now" : "stopping; handlers get the grace period");
	if (!again)
		notify_send("STOPPING=1");
	sup_shutdown(ow->sup, again);
}

/* A short read means the signalfd is empty: no second read to hear EAGAIN. */
static void
on_signals(struct owner *ow)
{
	struct signalfd_siginfo si[8];
	ssize_t n;

	do {
		n = read(ow->sigfd, si, sizeof(si));
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(si[0]); i++) {
			switch (si[i].ssi_signo) {
			case SIGCHLD:
				sup_reap(ow->sup);
				break;
			case SIGHUP:
				ow->q->be->rescan(ow->q);
				break;
			default:
				shutdown_on(ow, (int)si[i].ssi_signo);
				break;
			}
		}
	} while (n == (ssize_t)sizeof(si));
}

/* run --drain on a terminal: finished/total, failed, elapsed. */
static void
drain_progress(struct owner *ow, size_t queued, size_t deferred)
{
	unsigned long total = ow->finished + (unsigned long)ow->running +
	    queued + deferred;
	char el[32];

	dur_format(mono_ms() - ow->started, el, sizeof(el));
	progress("drain: %lu/%lu finished, %lu failed, %d running, %s elapsed",
	    ow->finished, total, ow->failed, ow->running, el);
}

/*
 * The counts, in the process title, under systemd as its STATUS=, and with
 * --drain on a terminal as a progress line.
 */
static void
title(struct owner *ow)
{
	static char shown[128];
	struct counts n;
	char counts[128];

	ow->q->be->counts(ow->q, &n);
	snprintf(counts, sizeof(counts), "running=%d queued=%zu%s deferred=%zu%s%s%s",
	    ow->running, n.queued, n.queued_more ? "+" : "", n.deferred,
	    n.deferred_more ? "+" : "", n.paused ? " paused" : "",
	    ow->stopping ? " stopping" : "");
	/* setproctitle rewrites the whole title: not for every turn of a job. */
	if (strcmp(counts, shown) != 0) {
		setproctitle("%s %s", ow->q->name, counts);
		strlcpy(shown, counts, sizeof(shown));
	}
	notify_status(counts);
	if (ow->o->drain)
		drain_progress(ow, n.queued, n.deferred);
}

static msec_t
min_ms(msec_t a, msec_t b)
{
	return a < b ? a : b;
}

/* Milliseconds from mono until the nearest deadline, for poll(2). */
static int
timeout_ms(msec_t t, msec_t mono)
{
	t -= mono;
	if (t < 0)
		return 0;
	return t > INT_MAX ? INT_MAX : (int)t;
}

/* Stopping or drained: done once no job is held and no child runs. */
static bool
finished_all(struct owner *ow)
{
	return ow->running == 0 && sup_done(ow->sup);
}

/* --drain: the queue has nothing left and nothing runs here. */
static bool
drained(struct owner *ow)
{
	if (sup_closing(ow->sup))
		return true;
	if (ow->running > 0 || !ow->q->be->drained(ow->q))
		return false;
	say("drained: new/, cur/ and defer/ are empty");
	return true;
}

/* One turn's waiting: poll, then what woke us.  Returns -1 on a fatal error. */
static int
wait_once(struct owner *ow, msec_t deadline)
{
	struct queue *q = ow->q;
	int n = 2;

	ow->pfd[0] = (struct pollfd){ .fd = ow->sigfd, .events = POLLIN };
	ow->pfd[1] = (struct pollfd){ .fd = q->be->fd(q), .events = POLLIN };
	n += sup_pollfds(ow->sup, ow->pfd + 2);
	if (poll(ow->pfd, n, timeout_ms(deadline, mono_ms())) == -1 &&
	    errno != EINTR) {
		say_err("poll: %s", strerror(errno));
		return -1;
	}
	sup_input(ow->sup, ow->pfd + 2);
	if (ow->pfd[0].revents & POLLIN)
		on_signals(ow);
	/*
	 * Without a descriptor (its connection down) the queue is asked each
	 * turn: it may have found that it cannot go on (a schema of another
	 * version, a refused password), and nothing else would tell us.
	 */
	if ((ow->pfd[1].fd < 0 || (ow->pfd[1].revents & POLLIN)) &&
	    q->be->wake(q) == -1)
		return -1;
	return 0;
}

int
owner_loop(struct owner *ow)
{
	struct queue *q = ow->q;
	msec_t mono, t;

	for (;;) {
		mono = mono_ms();
		sup_timers(ow->sup, mono);
		owner_retry_due(ow, mono);
		q->be->due(q, mono);
		if (!ow->stopping)
			owner_dispatch(ow);
		if (q->be->prepare != NULL)
			q->be->prepare(q);
		t = q->be->commit(q, ow->running > 0 && !ow->stopping);
		if (ow->fatal)
			break;
		if (ow->stopping)
			owner_give_up(ow);
		if (ow->stopping && finished_all(ow))
			break;
		if (ow->o->drain && !ow->stopping && drained(ow) &&
		    finished_all(ow))
			break;
		say_flush();
		title(ow);	/* after the lines: the progress line stays last */
		mono = mono_ms();
		/* The watchdog is pinged from here: a stuck loop stops it. */
		t = min_ms(t, notify_tick(mono));
		t = min_ms(t, q->be->next(q, mono));
		t = min_ms(t, min_ms(sup_deadline(ow->sup),
		    owner_retry_deadline(ow)));
		if (wait_once(ow, t) == -1)
			ow->fatal = true;
	}
	if (!ow->fatal)
		return 0;
	return q->exit_status != 0 ? q->exit_status : EX_IOERR;
}

int
owner_run(struct owner *ow, const struct run_opts *o, struct queue *q)
{
	int rc;

	/* First, so that no handler or worker inherits $NOTIFY_SOCKET. */
	notify_init();
	if (owner_init(ow, o, q) == -1) {
		fprintf(stderr, "%s: %s\n", getprogname(), strerror(errno));
		q->be->close(q);
		notify_close();
		return EX_SOFTWARE;
	}
	say("owner pid=%ld %s=%s jobs=%d", (long)getpid(), q->be->name, q->name,
	    o->jobs);
	q->be->start(q);
	/*
	 * Ready: the lock is held and the first scan has run.  A worker of
	 * the fleet is ready even if start could not reach the database: it
	 * keeps trying in its loop, which is where systemd should wait for it.
	 */
	notify_send("READY=1");
	say_buffer(true);
	ow->started = mono_ms();
	rc = owner_loop(ow);
	progress_clear();
	say_buffer(false);
	if (!ow->stopping)
		notify_send("STOPPING=1");
	q->be->commit(q, false);
	say("owner pid=%ld exiting", (long)getpid());
	owner_free(ow);
	q->be->close(q);
	notify_close();
	return rc;
}
