/*
 * run.c: the owner.  One single-threaded event loop over poll(2): an
 * inotify descriptor (work arrives, jobs are cancelled), a signalfd
 * (children exit, we are asked to stop) and a timeout computed from the
 * nearest deadline.  inotify only wakes us; the directories are the truth,
 * and a slow safety rescan catches anything an event did not announce.
 */
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "owner.h"

#define RESCAN_MS	60000	/* the safety rescan */
#define RECHECK_MS	1000	/* a writer still busy, an orphan still running */
#define RETRY_MS	5000	/* a transition that failed with an I/O error */
#define SYNC_DELAY_MS	20	/* group commit: longest a finished job waits for fsync */

/* One inotify event; also called by the unit tests. */
void
owner_on_event(void *arg, const struct watch_event *ev)
{
	struct owner *ow = arg;

	if (ev->kind == W_OVERFLOW) {
		say("inotify queue overflowed; rescanning");
		ow->rescan = true;
		/* The events of our own promotions may be among the lost. */
		while (queue_pop(ow->promoted, NULL, 0, NULL))
			;
		return;
	}
	if (ev->kind == W_GONE) {
		say("%s/: watched directory removed or moved",
		    state_names[ev->state]);
		ow->fatal = true;
		return;
	}
	switch (ev->state) {
	case ST_NEW:
		if (ev->kind == W_LEFT)
			break;
		owner_admit(ow, ev->name, ev->kind == W_ARRIVED ? RF_MOVED :
		    ev->kind == W_WRITTEN ? RF_CLOSED : 0);
		break;
	case ST_DEFER:
		if (ev->kind != W_LEFT)
			owner_defer_arrived(ow, ev->name);
		else
			owner_defer_left(ow, ev->name);
		break;
	case ST_CUR:
		if (ev->kind == W_LEFT)
			owner_job_left(ow, ev->name);
		break;
	}
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
				owner_reap(ow);
				break;
			case SIGHUP:
				ow->rescan = true;
				break;
			default:
				owner_shutdown(ow, si[i].ssi_signo);
				break;
			}
		}
	} while (n == (ssize_t)sizeof(si));
}

/* Waiting writers and orphans whose recheck time has come. */
static void
recheck(struct owner *ow, msec_t mono)
{
	char name[NAME_MAX + 1];
	unsigned flags;

	while (queue_min_key(ow->waiting) <= mono &&
	    queue_pop(ow->waiting, name, sizeof(name), &flags))
		owner_admit(ow, name, flags);
	while (queue_min_key(ow->orphans) <= mono &&
	    queue_pop(ow->orphans, name, sizeof(name), NULL))
		owner_recover_one(ow, name);
}

void
owner_on_timers(struct owner *ow)
{
	msec_t mono = mono_ms();

	owner_check_slots(ow, mono);
	recheck(ow, mono);
	if (ow->next_defer != 0 && ow->next_defer <= now_ms())
		owner_scan_defer(ow);
	if (mono >= ow->next_rescan) {
		ow->next_rescan = mono + RESCAN_MS;
		owner_scan_new(ow, false);
		owner_scan_defer(ow);
	}
	if (ow->rescan) {
		ow->rescan = false;
		owner_scan_new(ow, true);
		owner_scan_defer(ow);
	}
}

static msec_t
min_ms(msec_t a, msec_t b)
{
	return a < b ? a : b;
}

/* Milliseconds until the nearest deadline, for poll(2). */
static int
next_timeout(struct owner *ow)
{
	msec_t mono = mono_ms(), t = ow->next_rescan;

	t = min_ms(t, owner_slots_deadline(ow));
	if (ow->dirty_since != 0)
		t = min_ms(t, ow->dirty_since + SYNC_DELAY_MS);
	t = min_ms(t, queue_min_key(ow->waiting));
	t = min_ms(t, queue_min_key(ow->orphans));
	if (ow->next_defer != 0)
		t = min_ms(t, mono + (ow->next_defer - now_ms()));
	if (ow->rescan || ow->scan != NULL)
		t = mono;
	t -= mono;
	if (t < 0)
		return 0;
	return t > INT_MAX ? INT_MAX : (int)t;
}

/*
 * --drain: done when nothing runs or waits here and new/, cur/ and defer/
 * hold no job.  The directories are read again rather than trusted to our
 * bookkeeping, and anything found there is picked up.
 */
static bool
drained(struct owner *ow)
{
	if (ow->running > 0 || ow->scan != NULL || queue_len(ow->ready) > 0 ||
	    queue_len(ow->waiting) > 0 || queue_len(ow->orphans) > 0)
		return false;
	if (!spool_empty(&ow->sp, ST_NEW)) {
		owner_scan_new(ow, true);
		return false;
	}
	if (!spool_empty(&ow->sp, ST_CUR)) {
		owner_recover(ow);
		return false;
	}
	if (!spool_empty(&ow->sp, ST_DEFER)) {
		if (ow->next_defer == 0)
			owner_scan_defer(ow);
		return false;
	}
	return true;
}

static void
title(struct owner *ow)
{
	setproctitle("%s running=%d queued=%zu deferred=%d%s", ow->sp.path,
	    ow->running, queue_len(ow->ready) + queue_len(ow->waiting),
	    ow->ndefer, ow->stopping ? " stopping" : "");
}

/*
 * Make finished transitions durable.  While handlers run, the fsyncs wait
 * up to SYNC_DELAY_MS so that one fsync of done/ covers every job that
 * finished meanwhile (an fsync costs more than a no-op job's whole run);
 * when nothing runs they happen at once.  A power loss inside the delay
 * can only make a finished job run again (spool-layout.md).
 */
static void
group_commit(struct owner *ow)
{
	msec_t mono;

	if (ow->sp.dirty == 0) {
		ow->dirty_since = 0;
		return;
	}
	mono = mono_ms();
	if (ow->dirty_since == 0)
		ow->dirty_since = mono;
	if (ow->running > 0 && !ow->stopping && mono - ow->dirty_since < SYNC_DELAY_MS)
		return;
	if (spool_sync(&ow->sp) == -1) {
		say("%s: fsync: %s; will retry", ow->sp.path, strerror(errno));
		ow->dirty_since = mono;
		return;
	}
	ow->dirty_since = 0;
}

/* The signalfd, inotify, and each worker's stdout. */
static int
poll_set(struct owner *ow, struct pollfd *pfd)
{
	int n = 2;

	pfd[0] = (struct pollfd){ .fd = ow->sigfd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = watch_fd(ow->w), .events = POLLIN };
	for (int i = 0; ow->workers != NULL && i < ow->o->jobs; i++)
		pfd[n++] = (struct pollfd){ .fd = ow->workers[i].out,
		    .events = POLLIN };
	return n;
}

/* Stopping or drained: done once nothing runs, workers included. */
static bool
finished_all(struct owner *ow)
{
	if (ow->running > 0)
		return false;
	if (ow->workers != NULL && workers_alive(ow) > 0) {
		if (!ow->closing)
			owner_close_workers(ow, false);
		return false;
	}
	return true;
}

static int
loop(struct owner *ow)
{
	struct pollfd *pfd = calloc(2 + (size_t)ow->o->jobs, sizeof(*pfd));
	int n;

	if (pfd == NULL)
		return EX_SOFTWARE;
	for (;;) {
		if (ow->scan != NULL)
			owner_scan_step(ow, SCAN_CHUNK);
		if (!ow->stopping)
			owner_dispatch(ow);
		group_commit(ow);
		if (ow->fatal)
			break;
		if (ow->stopping && finished_all(ow))
			break;
		if (ow->o->drain && !ow->stopping && (ow->closing ||
		    drained(ow))) {
			if (!ow->closing)
				say("drained: new/, cur/ and defer/ are empty");
			if (finished_all(ow))
				break;
		}
		title(ow);
		say_flush();
		n = poll_set(ow, pfd);
		if (poll(pfd, n, next_timeout(ow)) == -1 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			ow->fatal = true;
			break;
		}
		for (int i = 2; i < n; i++)
			if (pfd[i].revents & (POLLIN | POLLHUP))
				worker_input(ow, i - 2);
		if (pfd[0].revents & POLLIN)
			on_signals(ow);
		if ((pfd[1].revents & POLLIN) &&
		    watch_read(ow->w, owner_on_event, ow) == -1)
			ow->rescan = true;
		owner_on_timers(ow);
	}
	free(pfd);
	return ow->fatal ? EX_IOERR : 0;
}

static int
setup_signals(struct owner *ow)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	/* SIGIO: a lease break while we probe for writers; SIGPIPE: never. */
	spawn_ignore(SIGIO);
	spawn_ignore(SIGPIPE);
	ow->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return ow->sigfd == -1 ? -1 : 0;
}

static int
take_spool(struct owner *ow, const char *path)
{
	if (spool_open(&ow->sp, path) == -1) {
		fprintf(stderr, "%s: %s: not a spool: %s (chute init %s)\n",
		    getprogname(), path, strerror(errno), path);
		return EX_IOERR;
	}
	if (spool_check_fs(&ow->sp) == -1)
		return errno == EREMOTE ? EX_CONFIG : EX_IOERR;
	if (lock_take(&ow->sp, ow->o->wait_lock) == -1) {
		if (errno != EWOULDBLOCK) {
			fprintf(stderr, "%s: %s: flock: %s\n", getprogname(),
			    ow->sp.path, strerror(errno));
			return EX_IOERR;
		}
		fprintf(stderr, "%s: %s: owned by pid %ld; not starting a "
		    "second owner\n", getprogname(), ow->sp.path,
		    (long)lock_owner(&ow->sp));
		return EX_TEMPFAIL;
	}
	if (lock_write_pid(&ow->sp) == -1)
		fprintf(stderr, "%s: %s/owner.pid: %s\n", getprogname(),
		    ow->sp.path, strerror(errno));
	return 0;
}

/*
 * Own the spool at path and run jobs until told to stop (or, with drain,
 * until it is empty).  Returns the exit status.
 */
int
run_main(const char *path, const struct run_opts *o)
{
	static const int watched[] = { ST_NEW, ST_DEFER, ST_CUR };
	struct owner ow = { .o = o, .sigfd = -1, .sp = { .root = -1 },
	    .window = WINDOW, .wlock = -1 };
	size_t njobs = o->jobs > 0 ? (size_t)o->jobs : 1;	/* 1..4096 */
	int rc;

	if ((rc = take_spool(&ow, path)) != 0)
		goto out;
	if (setup_signals(&ow) == -1 ||
	    (ow.slots = calloc(njobs, sizeof(*ow.slots))) == NULL ||
	    (ow.ready = queue_new()) == NULL ||
	    (ow.waiting = queue_new()) == NULL ||
	    (ow.orphans = queue_new()) == NULL ||
	    (ow.promoted = queue_new()) == NULL) {
		fprintf(stderr, "%s: %s\n", getprogname(), strerror(errno));
		rc = EX_SOFTWARE;
		goto out;
	}
	for (int i = 0; i < o->jobs; i++)
		ow.slots[i].fd = ow.slots[i].logfd = -1;
	if (o->persistent &&
	    (ow.workers = calloc(njobs, sizeof(*ow.workers))) == NULL) {
		rc = EX_SOFTWARE;
		goto out;
	}
	for (int i = 0; ow.workers != NULL && i < o->jobs; i++)
		ow.workers[i].in = ow.workers[i].out = -1;
	/* Watches first, then the scans: nothing arriving between is missed. */
	if ((ow.w = watch_open(&ow.sp, watched, 3)) == NULL) {
		fprintf(stderr, "%s: %s: inotify: %s\n", getprogname(),
		    ow.sp.path, strerror(errno));
		rc = EX_IOERR;
		goto out;
	}
	say("owner pid=%ld spool=%s jobs=%d", (long)getpid(), ow.sp.path,
	    o->jobs);
	workers_find_old(&ow);
	owner_recover(&ow);
	owner_clean_tmp(&ow);
	owner_scan_defer(&ow);
	owner_scan_new(&ow, true);
	ow.next_rescan = mono_ms() + RESCAN_MS;
	say_buffer(true);
	rc = loop(&ow);
	say_buffer(false);
	spool_sync(&ow.sp);
	say("owner pid=%ld exiting", (long)getpid());
out:
	if (ow.scan != NULL)
		closedir(ow.scan);
	watch_close(ow.w);
	queue_free(ow.ready);
	queue_free(ow.waiting);
	queue_free(ow.orphans);
	queue_free(ow.promoted);
	free(ow.slots);
	free(ow.workers);
	if (ow.wlock != -1) {
		char name[64];
		snprintf(name, sizeof(name), ".workers.%ld", (long)getpid());
		unlinkat(ow.sp.root, name, 0);
		close(ow.wlock);
	}
	if (ow.sigfd != -1)
		close(ow.sigfd);
	if (ow.sp.root != -1 || ow.sp.path != NULL)
		spool_close(&ow.sp);
	return rc;
}
