/*
 * queue_spool.c: the spool as a queue (queue.h).  A claim is the rename
 * new/ID -> cur/ID, an outcome the rename out of cur/, and wake-ups come
 * from inotify on new/, cur/ and defer/.  inotify only wakes us: the
 * directories are the truth, and a slow safety rescan catches anything an
 * event did not announce.  Every move is asked of state.c.  Here: the
 * events, the due work, opening and closing, and the table of operations;
 * claims are queue_spool_claim.c's, outcomes queue_spool_outcome.c's.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/nameq.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/retain.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/state.h"
#include "store/watch.h"
#include "queue/spool/queue_spool.h"

static const struct queue_backend spool_backend, spool_in_place_backend;

/* ---- events ---- */

/*
 * IN_MOVED_FROM/IN_DELETE on cur/: a cancel, if the job is one of ours
 * and not still there (a stale event from an earlier life of the job).
 */
static void
left_cur(struct spoolq *sq, const char *name)
{
	struct stat st;

	if (!spoolq_holds(sq, name) || fstatat(sq->sp.dir[ST_CUR], name,
	    &st, AT_SYMLINK_NOFOLLOW) == 0)
		return;
	sq->c.cancelled(sq->c.arg, name, "left cur/ while running", false);
}

/*
 * What an event in new/ says of the file.  A move in is complete by the
 * protocol, except our own rename of a dropped file (rename_dropped):
 * that one is as complete as the file was when we renamed it, and a
 * writer may still be writing it.
 */
static unsigned
arrival_flags(struct spoolq *sq, const struct watch_event *ev)
{
	unsigned found;

	if (ev->kind == W_WRITTEN)
		return RF_CLOSED;
	if (ev->kind != W_ARRIVED)
		return 0;
	if (nameq_take(sq->renamed, ev->name, &found))
		return found;
	return RF_MOVED;
}

/*
 * Is SPOOL/paused there (an event in the root, a rescan, the start)?  Said
 * once when that changes.  Paused, nothing is claimed: the jobs running
 * finish, jobs still arrive, the one recovery at start-up is made all the
 * same (recovery only puts jobs back in new/).
 */
static void
pause_look(struct spoolq *sq)
{
	char by[128];
	int p = spool_paused(&sq->sp, by, sizeof(by), NULL);

	if (p == -1) {
		if (!sq->pause_unknown)
			say_err("%s/" PAUSE_FILE ": %s; %s as it was", sq->sp.path,
			    strerror(errno), sq->paused ? "paused" : "not paused");
		sq->pause_unknown = true;
		return;
	}
	sq->pause_unknown = false;
	if ((p == 1) == sq->paused)
		return;
	if ((sq->paused = p == 1))
		say("%s: paused by %s (%s/" PAUSE_FILE "): no new claims; %zu "
		    "running job(s) finish", sq->sp.path, by, sq->sp.path,
		    sq->nheld);
	else
		say("%s: resumed (%s/" PAUSE_FILE " removed): claiming again",
		    sq->sp.path, sq->sp.path);
}

void
spoolq_on_event(void *arg, const struct watch_event *ev)
{
	struct spoolq *sq = arg;

	if (ev->state == WATCH_ROOT) {
		if (strcmp(ev->name, PAUSE_FILE) == 0)
			pause_look(sq);
		else if (strcmp(ev->name, RETAIN_FILE) == 0)
			spoolq_retain_look(sq);
		else if (strcmp(ev->name, LIMITS_FILE) == 0 && !sq->c.in_place)
			spoolq_limits_look(sq);
		return;
	}

	if (ev->kind == W_OVERFLOW) {
		say_warn("inotify queue overflowed; rescanning");
		sq->rescan = true;
		/* The events of our own promotions may be among the lost. */
		while (nameq_pop(sq->promoted, NULL, 0, NULL))
			;
		while (nameq_pop(sq->renamed, NULL, 0, NULL))
			;
		return;
	}
	if (ev->kind == W_GONE) {
		say_err("%s/: watched directory removed or moved",
		    state_names[ev->state]);
		sq->fatal = true;
		return;
	}
	switch (ev->state) {
	case ST_NEW:
		if (ev->kind == W_LEFT)
			break;
		spoolq_admit(sq, ev->name, arrival_flags(sq, ev));
		break;
	case ST_DEFER:
		if (ev->kind != W_LEFT)
			spoolq_defer_arrived(sq, ev->name);
		else
			spoolq_defer_left(sq, ev->name);
		break;
	case ST_CUR:
		if (ev->kind == W_LEFT)
			left_cur(sq, ev->name);
		break;
	case ST_WAIT:
		if (ev->kind != W_LEFT)
			spoolq_after_arrived(sq, ev->name);
		break;
	case ST_FAILED:
		/* Ours, or a cancel's: a job waited for may have ended. */
		if (ev->kind != W_LEFT)
			spoolq_after_ended(sq, ev->name);
		break;
	}
}

static int
sq_fd(struct queue *q)
{
	return watch_fd(((struct spoolq *)q)->w);
}

static int
sq_wake(struct queue *q)
{
	struct spoolq *sq = (struct spoolq *)q;

	if (watch_read(sq->w, spoolq_on_event, sq) == -1)
		sq->rescan = true;
	return sq->fatal ? -1 : 0;
}

static void
sq_rescan(struct queue *q)
{
	((struct spoolq *)q)->rescan = true;
}

/* Waiting writers and orphans whose recheck time has come. */
static void
recheck(struct spoolq *sq, msec_t mono)
{
	char name[NAME_MAX + 1];
	unsigned flags;

	while (nameq_min_key(sq->waiting) <= mono &&
	    nameq_pop(sq->waiting, name, sizeof(name), &flags))
		spoolq_admit(sq, name, flags);
	while (nameq_min_key(sq->flocked) <= mono &&
	    nameq_pop(sq->flocked, name, sizeof(name), &flags))
		spoolq_admit(sq, name, flags);
	while (nameq_min_key(sq->orphans) <= mono &&
	    nameq_pop(sq->orphans, name, sizeof(name), &flags))
		spoolq_recover_one(sq, name, flags);
}

static void
sq_due(struct queue *q, msec_t mono)
{
	struct spoolq *sq = (struct spoolq *)q;

	if (sq->scan != NULL)
		spoolq_scan_step(sq, SCAN_CHUNK);
	recheck(sq, mono);
	spoolq_retain_step(sq, mono);
	spoolq_unique_step(sq, mono);
	if (!sq->c.in_place)
		spoolq_keys_due(sq, mono);
	if (sq->next_defer != 0 && sq->next_defer <= now_ms())
		spoolq_defer_due(sq);
	if (mono >= sq->next_rescan) {
		sq->next_rescan = mono + RESCAN_MS;
		pause_look(sq);
		spoolq_retain_look(sq);
		if (!sq->c.in_place)
			spoolq_limits_recheck(sq);
		spoolq_scan_new(sq, false);
		spoolq_scan_defer(sq);
	}
	if (sq->rescan) {
		sq->rescan = false;
		pause_look(sq);
		spoolq_retain_look(sq);
		spoolq_scan_new(sq, true);
		spoolq_scan_defer(sq);
		spoolq_after_scan(sq);
	}
}

static msec_t
sq_next(struct queue *q, msec_t mono)
{
	struct spoolq *sq = (struct spoolq *)q;
	msec_t t;

	if (sq->scan != NULL || sq->rescan)
		return mono;
	t = min_ms(sq->next_rescan, nameq_min_key(sq->waiting));
	t = min_ms(t, nameq_min_key(sq->flocked));
	t = min_ms(t, nameq_min_key(sq->orphans));
	if (!sq->c.in_place)
		t = min_ms(t, spoolq_keys_next(sq));
	if (sq->next_defer != 0)
		t = min_ms(t, mono + (sq->next_defer - now_ms()));
	t = min_ms(t, spoolq_retain_next(sq, mono));
	t = min_ms(t, spoolq_unique_next(sq, mono));
	/* forward's loop waits for this, not for commit's answer. */
	return min_ms(t, sq->commit_due);
}

/*
 * --drain: done when nothing waits here and new/, cur/ and defer/ hold
 * no job.  The directories are read again rather than trusted to our
 * bookkeeping, and anything found there is picked up.
 */
static bool
sq_drained(struct queue *q)
{
	struct spoolq *sq = (struct spoolq *)q;

	if (sq->scan != NULL || nameq_len(sq->ready) > 0 ||
	    nameq_len(sq->waiting) > 0 || nameq_len(sq->orphans) > 0 ||
	    sq->nheld > 0)
		return false;
	/* Jobs of keys at their limit (a rate's window): known, not read again. */
	if (spoolq_nparked(sq) > 0 || nameq_len(sq->unparked) > 0)
		return false;
	if (!spoolq_new_empty(sq)) {
		spoolq_scan_new(sq, true);
		return false;
	}
	if (!spool_empty(&sq->sp, ST_CUR)) {
		spoolq_recover(sq);
		return false;
	}
	if (!spool_empty(&sq->sp, ST_DEFER)) {
		if (sq->next_defer == 0)
			spoolq_scan_defer(sq);
		return false;
	}
	/* Waiting jobs wait for jobs of this spool: they end too.  Not
	 * forward's: it leaves them in wait/ (queue_spool_after.c). */
	if (!sq->c.in_place && !spool_empty(&sq->sp, ST_WAIT)) {
		if (spoolq_after_waiting(sq) == 0)
			spoolq_after_scan(sq);
		return false;
	}
	spoolq_said_held(sq);
	return true;
}

static void
sq_counts(struct queue *q, struct counts *n)
{
	struct spoolq *sq = (struct spoolq *)q;

	*n = (struct counts){
		.queued = nameq_len(sq->ready) + nameq_len(sq->waiting) +
		    nameq_len(sq->flocked) + spoolq_nparked(sq) +
		    nameq_len(sq->unparked),
		.deferred = sq->ndefer > 0 ? (size_t)sq->ndefer : 0,
		.paused = sq->paused };
}

/* ---- opening and closing ---- */

static void
sq_close(struct queue *q)
{
	struct spoolq *sq = (struct spoolq *)q;

	if (sq == NULL)
		return;
	/* Its fsyncs end first; what it was not given is done here. */
	sq->sp.dirty |= keeper_stop(&sq->keeper);
	spool_sync(&sq->sp);
	if (sq->sp.root != -1)
		spoolq_retain_last(sq);
	joblog_pool_close(&sq->pool);
	if (sq->scan != NULL)
		closedir(sq->scan);
	spoolq_retain_close(sq);
	spoolq_unique_close(sq);
	spoolq_after_close(sq);
	watch_close(sq->w);
	nameq_free(sq->ready);
	nameq_free(sq->waiting);
	nameq_free(sq->orphans);
	nameq_free(sq->promoted);
	nameq_free(sq->renamed);
	nameq_free(sq->refused);
	nameq_free(sq->busy);
	nameq_free(sq->flocked);
	nameq_free(sq->deferred);
	nameq_free(sq->flight);
	nameq_free(sq->alive);
	nameq_free(sq->unparked);
	spoolq_keys_free(sq);
	free(sq->held);
	spoolq_workers_unlock(sq);
	if (sq->sp.root != -1 || sq->sp.path != NULL)
		spool_close(&sq->sp);
	free(sq);
}

/* The state, unopened: for queue_spool_open and the unit tests. */
struct spoolq *
spoolq_new(const struct queue_conf *c)
{
	struct spoolq *sq = calloc(1, sizeof(*sq));

	if (sq == NULL)
		return NULL;
	/* forward's claims have operations of their own: chosen once. */
	sq->q.be = c->in_place ? &spool_in_place_backend : &spool_backend;
	sq->q.worker_fd = -1;
	sq->c = *c;
	sq->sp.root = -1;
	sq->sp.lock = -1;
	sq->pool.dir = -1;
	sq->keep.done = sq->keep.failed = KEEP_FOREVER;
	sq->keep_next = INT64_MAX;
	sq->wlock = -1;
	sq->window = WINDOW;
	sq->commit_due = INT64_MAX;
	sq->next_rescan = mono_ms() + RESCAN_MS;
	if ((sq->ready = nameq_new()) == NULL ||
	    (sq->waiting = nameq_new()) == NULL ||
	    (sq->orphans = nameq_new()) == NULL ||
	    (sq->alive = nameq_new()) == NULL ||
	    (sq->unparked = nameq_new()) == NULL || spoolq_keys_new(sq) == -1 ||
	    (sq->promoted = nameq_new()) == NULL ||
	    (sq->renamed = nameq_new()) == NULL ||
	    (sq->refused = nameq_new()) == NULL ||
	    (sq->busy = nameq_new()) == NULL ||
	    (sq->flocked = nameq_new()) == NULL ||
	    (sq->deferred = nameq_new()) == NULL ||
	    (c->in_place && (sq->flight = nameq_new()) == NULL)) {
		sq_close(&sq->q);
		return NULL;
	}
	return sq;
}

/*
 * Recover what a dead owner left, then find the work already there.  The
 * watches were set up first, so nothing arriving meanwhile is missed.
 */
static void
sq_start(struct queue *q)
{
	struct spoolq *sq = (struct spoolq *)q;

	pause_look(sq);
	spoolq_retain_look(sq);
	if (!sq->c.in_place) {
		spoolq_limits_look(sq);
		spoolq_starts_load(sq);
	}
	spoolq_workers_find_old(sq);
	spoolq_recover(sq);
	spoolq_clean_tmp(sq);
	if (joblog_pool_open(&sq->pool, &sq->sp) == -1)
		say_warn("log/.pool/: %s; logs are created as jobs are claimed",
		    strerror(errno));
	else if (!sq->pool.linkable)
		say_warn("/proc/self/fd: %s; logs are created as jobs are claimed",
		    strerror(errno));
	/* After the pool is made: the keeper fills it. */
	if (keeper_start(&sq->keeper, &sq->sp, &sq->pool) == -1)
		say_err("%s: cannot start a thread (%s); fsyncs and log creates "
		    "are done between jobs", sq->sp.path, strerror(errno));
	if (sq->pool.dir != -1)
		sq_prepare(q);
	spoolq_scan_defer(sq);
	spoolq_scan_new(sq, true);
	/* After recovery: a job it moved to done/ or failed/ counts. */
	spoolq_after_scan(sq);
	sq->next_rescan = mono_ms() + RESCAN_MS;
}

/* Take the lock, or wait for it; 0, or -1 with errno (EWOULDBLOCK: owned). */
static int
lock_spool(struct spoolq *sq, bool wait)
{
	if (lock_take(&sq->sp) == 0)
		return 0;
	if (errno != EWOULDBLOCK || !wait)
		return -1;
	fprintf(stderr, "%s: %s: owned by pid %ld; waiting to take over\n",
	    getprogname(), sq->sp.path, (long)lock_owner(&sq->sp));
	return lock_wait(&sq->sp);
}

/* take_spool: another owner holds it and c.quiet_if_owned is set. */
#define OWNED_QUIETLY	(-1)

/* The spool, checked and locked; returns 0 or an exit status, said. */
static int
take_spool(struct spoolq *sq, const char *path, bool wait)
{
	const char *fs;

	if (spool_open(&sq->sp, path) == -1) {
		fprintf(stderr, "%s: %s: not a spool: %s (chute init %s)\n",
		    getprogname(), path, strerror(errno), path);
		return EX_IOERR;
	}
	if (spool_check_fs(&sq->sp, &fs) == -1) {
		if (errno != EREMOTE) {
			fprintf(stderr, "%s: %s: statfs: %s\n", getprogname(),
			    sq->sp.path, strerror(errno));
			return EX_IOERR;
		}
		fprintf(stderr, "%s: %s: spool is on %s, where flock(2) is not "
		    "enforced across hosts; one owner per spool cannot be "
		    "guaranteed\n", getprogname(), sq->sp.path, fs);
		return EX_CONFIG;
	}
	if (lock_spool(sq, wait) == -1) {
		if (errno != EWOULDBLOCK) {
			fprintf(stderr, "%s: %s/%s: %s\n", getprogname(),
			    sq->sp.path, LOCK_FILE, errno == EPERM ? LOCK_UNSAFE :
			    strerror(errno));
			return errno == EPERM ? EX_CONFIG : EX_IOERR;
		}
		if (sq->c.quiet_if_owned)
			return OWNED_QUIETLY;
		fprintf(stderr, "%s: %s: owned by pid %ld; not starting a "
		    "second owner\n", getprogname(), sq->sp.path,
		    (long)lock_owner(&sq->sp));
		return EX_TEMPFAIL;
	}
	if (lock_write_pid(&sq->sp) == -1)
		fprintf(stderr, "%s: %s/owner.pid: %s\n", getprogname(),
		    sq->sp.path, strerror(errno));
	return 0;
}

int
queue_spool_open(const char *path, bool wait, const struct queue_conf *c,
    struct queue **qp)
{
	int watched[ST_NSTATES + 1], nwatched;
	struct spoolq *sq;
	int rc;

	*qp = NULL;
	if ((sq = spoolq_new(c)) == NULL) {
		fprintf(stderr, "%s: %s\n", getprogname(), strerror(errno));
		return EX_SOFTWARE;
	}
	if ((rc = take_spool(sq, path, wait)) != 0)
		goto fail;
	/* Watches first, then the scans: nothing arriving between is missed. */
	nwatched = states_where(JS_TERMINAL, 0, watched);
	/* failed/ too: a cancel there may end a job others wait for. */
	watched[nwatched++] = ST_FAILED;
	if ((sq->w = watch_open(&sq->sp, watched, nwatched)) == NULL ||
	    watch_root(sq->w, &sq->sp) == -1) {
		fprintf(stderr, "%s: %s: inotify: %s\n", getprogname(),
		    sq->sp.path, strerror(errno));
		rc = EX_IOERR;
		goto fail;
	}
	if (c->persistent && (sq->q.worker_fd = spoolq_workers_lock(sq)) == -1) {
		fprintf(stderr, "%s: %s/.workers.%ld: %s\n", getprogname(),
		    sq->sp.path, (long)getpid(), strerror(errno));
		rc = EX_IOERR;
		goto fail;
	}
	sq->q.name = sq->sp.path;
	*qp = &sq->q;
	return 0;
fail:
	sq_close(&sq->q);
	/* Owned, and asked to say nothing: 0, with *qp NULL. */
	return rc == OWNED_QUIETLY ? 0 : rc;
}

static const struct queue_backend spool_backend = {
	.name = "spool",
	.start = sq_start,
	.fd = sq_fd,
	.wake = sq_wake,
	.rescan = sq_rescan,
	.due = sq_due,
	.next = sq_next,
	.claim = sq_claim,
	.prepare = sq_prepare,
	.renew = sq_renew,
	.record = sq_record,
	.release = sq_release,
	.commit = sq_commit,
	.drained = sq_drained,
	.counts = sq_counts,
	.close = sq_close,
};

/*
 * forward's (queue_conf.in_place): its claims stay in new/ until their
 * outcomes (queue_spool_in_place.c); all else is run's.
 */
static const struct queue_backend spool_in_place_backend = {
	.name = "spool",
	.start = sq_start,
	.fd = sq_fd,
	.wake = sq_wake,
	.rescan = sq_rescan,
	.due = sq_due,
	.next = sq_next,
	.claim = sq_claim_in_place,
	.prepare = sq_prepare,
	.renew = sq_renew,
	.record = sq_record_in_place,
	.release = sq_release_in_place,
	.commit = sq_commit,
	.drained = sq_drained,
	.counts = sq_counts,
	.close = sq_close,
};
