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

static msec_t
stat_mtime(const struct stat *st)
{
	return (msec_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* Queue a name seen in new/ (by event or scan); oldest mtime runs first. */
void
owner_admit(struct owner *ow, const char *name, unsigned flags)
{
	struct stat st;
	int64_t key;

	unsigned before = 0;

	/* Waiting for its writer?  This event is worth a fresh look now. */
	if (queue_take(ow->waiting, name, &before))
		flags |= before;
	if (fstatat(ow->sp.dir[ST_NEW], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	key = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (queue_add(ow->ready, name, key, flags) == -1)
		ow->rescan = true;	/* out of memory: find it again later */
}

static int
admit_cb(void *arg, const char *name)
{
	struct owner *ow = arg;

	if (!queue_has(ow->ready, name) && !queue_has(ow->waiting, name))
		owner_admit(ow, name, 0);
	return 0;
}

/*
 * Read new/ again, unless it has not changed since the last full scan.
 * The mtime test is only trusted when the last scan started well after
 * the directory's last change (coarse time stamps).
 */
void
owner_scan_new(struct owner *ow, bool force)
{
	struct stat st;
	msec_t start = now_ms();

	if (fstat(ow->sp.dir[ST_NEW], &st) == -1)
		return;
	if (!force && st.st_mtim.tv_sec == ow->new_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == ow->new_mtime.tv_nsec &&
	    ow->new_scanned - stat_mtime(&st) > 2000)
		return;
	if (spool_scan(&ow->sp, ST_NEW, admit_cb, ow) == -1) {
		say("new/: cannot read: %s", strerror(errno));
		return;
	}
	ow->new_mtime = st.st_mtim;
	ow->new_scanned = start;
}

static int
defer_cb(void *arg, const char *name)
{
	struct owner *ow = arg;
	struct stat st;
	msec_t due;

	if (fstatat(ow->sp.dir[ST_DEFER], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	due = stat_mtime(&st);
	if (due <= ow->scan_now) {
		owner_promote(ow, name);
		return 0;
	}
	ow->ndefer++;
	if (ow->next_defer == 0 || due < ow->next_defer)
		ow->next_defer = due;
	return 0;
}

/* Move every due job from defer/ to new/, and find the next due time. */
void
owner_scan_defer(struct owner *ow)
{
	ow->next_defer = 0;
	ow->ndefer = 0;
	ow->scan_now = now_ms();
	if (spool_scan(&ow->sp, ST_DEFER, defer_cb, ow) == -1)
		say("defer/: cannot read: %s", strerror(errno));
}

void
owner_promote(struct owner *ow, const char *name)
{
	char vis[1024];

	vis_name(name, vis, sizeof(vis));
	if (state_promote(&ow->sp, name) == 0) {
		say("job=%s defer->new", vis);
		owner_admit(ow, name, RF_MOVED);
		return;
	}
	if (errno == ENOENT)
		return;
	say("job=%s defer->new: %s; will retry", vis, strerror(errno));
	ow->next_defer = now_ms() + RETRY_MS;
}

/* A file landed in defer/: remember when it is due. */
static void
defer_arrived(struct owner *ow, const char *name)
{
	struct stat st;
	msec_t due;

	if (fstatat(ow->sp.dir[ST_DEFER], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	due = stat_mtime(&st);
	ow->ndefer++;
	if (ow->next_defer == 0 || due < ow->next_defer)
		ow->next_defer = due;
}

/* One inotify event; also called by the unit tests. */
void
owner_on_event(void *arg, const struct watch_event *ev)
{
	struct owner *ow = arg;

	if (ev->kind == W_OVERFLOW) {
		say("inotify queue overflowed; rescanning");
		ow->rescan = true;
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
			defer_arrived(ow, ev->name);
		break;
	case ST_CUR:
		if (ev->kind == W_LEFT)
			owner_job_left(ow, ev->name);
		break;
	}
}

static void
on_signals(struct owner *ow)
{
	struct signalfd_siginfo si;

	while (read(ow->sigfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			owner_reap(ow);
			break;
		case SIGHUP:
			ow->rescan = true;
			break;
		default:
			owner_shutdown(ow, si.ssi_signo);
			break;
		}
	}
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
	t = min_ms(t, queue_min_key(ow->waiting));
	t = min_ms(t, queue_min_key(ow->orphans));
	if (ow->next_defer != 0)
		t = min_ms(t, mono + (ow->next_defer - now_ms()));
	if (ow->rescan)
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
	if (ow->running > 0 || queue_len(ow->ready) > 0 ||
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

static int
loop(struct owner *ow)
{
	struct pollfd pfd[2] = {
		{ .fd = ow->sigfd, .events = POLLIN },
		{ .fd = watch_fd(ow->w), .events = POLLIN },
	};

	for (;;) {
		if (!ow->stopping)
			owner_dispatch(ow);
		if (spool_sync(&ow->sp) == -1)
			say("%s: fsync: %s; will retry", ow->sp.path,
			    strerror(errno));
		if (ow->fatal)
			return EX_IOERR;
		if (ow->stopping && ow->running == 0)
			return 0;
		if (ow->o->drain && !ow->stopping && drained(ow)) {
			say("drained: new/, cur/ and defer/ are empty");
			return 0;
		}
		title(ow);
		if (poll(pfd, 2, next_timeout(ow)) == -1 && errno != EINTR) {
			say("poll: %s", strerror(errno));
			return EX_SOFTWARE;
		}
		if (pfd[0].revents & POLLIN)
			on_signals(ow);
		if ((pfd[1].revents & POLLIN) &&
		    watch_read(ow->w, owner_on_event, ow) == -1)
			ow->rescan = true;
		owner_on_timers(ow);
	}
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
	signal(SIGIO, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
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
	struct owner ow = { .o = o, .sigfd = -1, .sp = { .root = -1 } };
	int rc;

	if ((rc = take_spool(&ow, path)) != 0)
		goto out;
	if (setup_signals(&ow) == -1 ||
	    (ow.slots = calloc(o->jobs, sizeof(*ow.slots))) == NULL ||
	    (ow.ready = queue_new()) == NULL ||
	    (ow.waiting = queue_new()) == NULL ||
	    (ow.orphans = queue_new()) == NULL) {
		fprintf(stderr, "%s: %s\n", getprogname(), strerror(errno));
		rc = EX_SOFTWARE;
		goto out;
	}
	for (int i = 0; i < o->jobs; i++)
		ow.slots[i].fd = ow.slots[i].logfd = -1;
	/* Watches first, then the scans: nothing arriving between is missed. */
	if ((ow.w = watch_open(&ow.sp, watched, 3)) == NULL) {
		fprintf(stderr, "%s: %s: inotify: %s\n", getprogname(),
		    ow.sp.path, strerror(errno));
		rc = EX_IOERR;
		goto out;
	}
	say("owner pid=%ld spool=%s jobs=%d", (long)getpid(), ow.sp.path,
	    o->jobs);
	owner_recover(&ow);
	owner_clean_tmp(&ow);
	owner_scan_defer(&ow);
	owner_scan_new(&ow, true);
	ow.next_rescan = mono_ms() + RESCAN_MS;
	rc = loop(&ow);
	spool_sync(&ow.sp);
	say("owner pid=%ld exiting", (long)getpid());
out:
	watch_close(ow.w);
	queue_free(ow.ready);
	queue_free(ow.waiting);
	queue_free(ow.orphans);
	free(ow.slots);
	if (ow.sigfd != -1)
		close(ow.sigfd);
	if (ow.sp.root != -1 || ow.sp.path != NULL)
		spool_close(&ow.sp);
	return rc;
}
