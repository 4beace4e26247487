/*
 * queue_spool_scan.c: how the owner finds work.  Names in new/ come from
 * inotify events and from scans; either way they go through spoolq_admit
 * into the ready queue, which holds a bounded window of the oldest.
 * defer/ is indexed by due time; a due time promotes from that index.
 */#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/nameq.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/lock.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/queue_spool.h"

static msec_t
stat_mtime(const struct stat *st)
{
	return (msec_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/*
 * A name's place in the ready queue: its priority, negated (higher runs
 * first), before its mtime.  A name whose attributes are bad comes first,
 * to be refused at once (take); k gets its key.  A name without a ','
 * (every ID chute makes without --priority and --key) is not parsed.
 */
static int
name_rank(const char *name, char *k, size_t len)
{
	struct jobattr a;
	const char *why;

	k[0] = '\0';
	if (strchr(name, ',') == NULL)
		return 0;
	if (jobattr_parse(name, &a, &why) == -1)
		return INT_MIN;
	strlcpy(k, a.key, len);
	return -a.prio;
}

/* Queue a name seen in new/ (by event or scan); the best (priority, then
 * oldest mtime) runs first.  may_park: a name of a key at its limit waits
 * off the ready queue, parked with its key's. */
static void
admit(struct spoolq *sq, const char *name, unsigned flags, bool may_park)
{
	char k[KEY_MAX + 1];
	unsigned before = 0;
	struct stat st;
	int64_t key;
	int rank;

	/* forward's claims stay in new/ (take_in_place): not twice. */
	if (sq->flight != NULL && nameq_has(sq->flight, name))
		return;
	if (fstatat(sq->sp.dir[ST_NEW], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	if (spoolq_refused(sq, name, &st))
		return;
	if (S_ISREG(st.st_mode))
		flags |= RF_REG;	/* ready_check need not look again */
	key = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	rank = name_rank(name, k, sizeof(k));
	if (k[0] != '\0' && !sq->c.in_place) {
		/* Parked, or given room and about to be admitted: not twice. */
		if (spoolq_parked(sq, k, name) || (may_park &&
		    nameq_has(sq->unparked, name)))
			return;
		if (may_park && spoolq_key_parking(sq, k)) {
			if (nameq_take(sq->waiting, name, &before) ||
			    nameq_take(sq->flocked, name, &before))
				flags |= before;
			if (spoolq_park(sq, k, name, rank, key, flags))
				return;
		}
	}
	/*
	 * Memory must not grow with the backlog: keep only the WINDOW oldest
	 * names.  Anything left out stays in new/ and is found again by the
	 * refill scan (spoolq_refill) once the window runs low.
	 */
	if (nameq_len(sq->ready) >= sq->window &&
	    nameq_after_max(sq->ready, rank, key)) {
		sq->truncated = true;
		return;
	}
	/* Waiting for its writer?  This event is worth a fresh look now. */
	if (nameq_take(sq->waiting, name, &before) ||
	    nameq_take(sq->flocked, name, &before))
		flags |= before;
	if (nameq_add_ranked(sq->ready, name, rank, key, flags) == -1) {
		sq->truncated = true;	/* out of memory: find it again later */
		return;
	}
	if (nameq_len(sq->ready) > sq->window) {
		nameq_drop_max(sq->ready);
		sq->truncated = true;
	}
}

void
spoolq_admit(struct spoolq *sq, const char *name, unsigned flags)
{
	admit(sq, name, flags, true);
}

void
spoolq_admit_unparked(struct spoolq *sq)
{
	char name[NAME_MAX + 1];
	unsigned flags;

	while (nameq_pop(sq->unparked, name, sizeof(name), &flags))
		admit(sq, name, flags, false);
}

bool
spoolq_refused(struct spoolq *sq, const char *name, const struct stat *st)
{
	int64_t ino;

	if (!nameq_key(sq->refused, name, &ino))
		return false;
	if (ino == (int64_t)st->st_ino)
		return true;
	nameq_take(sq->refused, name, NULL);
	return false;
}

static int
unrefused(void *arg, const char *name)
{
	struct spoolq *sq = arg;
	struct stat st;

	if (nameq_has(sq->flocked, name))
		return 0;	/* held: said, and not waited for */
	if (fstatat(sq->sp.dir[ST_NEW], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;	/* gone meanwhile */
	return !spoolq_refused(sq, name, &st);
}

bool
spoolq_new_empty(struct spoolq *sq)
{
	if (nameq_len(sq->refused) == 0 && nameq_len(sq->flocked) == 0)
		return spool_empty(&sq->sp, ST_NEW);
	return spool_scan(&sq->sp, ST_NEW, unrefused, sq) == 0;
}

#define BUSY_SAID	0x1

bool
spoolq_busy(struct spoolq *sq, const char *name, unsigned flags,
    const struct stat *st)
{
	msec_t mono = mono_ms();
	unsigned said = 0;
	int64_t since;

	if (!nameq_key(sq->busy, name, &since)) {
		nameq_add(sq->busy, name, mono, 0);	/* no memory: unsaid */
		return false;
	}
	/* A handler of an earlier attempt may close its stdin any moment. */
	if (mono - since < HELD_MS)
		return false;
	nameq_take(sq->busy, name, &said);
	if (nameq_add(sq->busy, name, since, BUSY_SAID) == -1 ||
	    nameq_add(sq->flocked, name, mono + RECHECK_MS, flags) == -1)
		return false;
	/*
	 * Its lock may be a handler's, left from an earlier attempt with the
	 * job's file as its stdin: never two at once, so it is not run.  It
	 * may as well be anyone's who can open the file (a submitter of a
	 * group spool can): said, then, and not waited for by --drain.
	 */
	if (!(said & BUSY_SAID))
		say_warn("job=%s held: new/%s is flocked by pid %ld (a process "
		    "left from an earlier attempt that keeps its stdin, or "
		    "another that opened it); not run while it is, and --drain "
		    "does not wait for it", vis_id(name), vis_id(name),
		    (long)lock_holder(st->st_dev, st->st_ino));
	return true;
}

void
spoolq_unbusy(struct spoolq *sq, const char *name)
{
	if (nameq_len(sq->busy) > 0)
		nameq_take(sq->busy, name, NULL);
}

void
spoolq_said_held(struct spoolq *sq)
{
	char name[NAME_MAX + 1];
	struct nameq *keep;
	struct stat st;
	unsigned flags;
	int64_t key;

	if (sq->held_left || nameq_len(sq->flocked) == 0 ||
	    (keep = nameq_new()) == NULL)
		return;
	sq->held_left = true;
	while ((key = nameq_min_key(sq->flocked)) != INT64_MAX &&
	    nameq_pop(sq->flocked, name, sizeof(name), &flags)) {
		if (fstatat(sq->sp.dir[ST_NEW], name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
			say_warn("job=%s left in new/: held (new/%s is flocked "
			    "by pid %ld)", vis_id(name), vis_id(name),
			    (long)lock_holder(st.st_dev, st.st_ino));
		nameq_add(keep, name, key, flags);
	}
	nameq_free(sq->flocked);
	sq->flocked = keep;
}

void
spoolq_refill(struct spoolq *sq)
{
	if (!sq->truncated || nameq_len(sq->ready) > sq->window / 2)
		return;
	sq->truncated = false;
	spoolq_scan_new(sq, true);
}

/*
 * Reading new/ is incremental: a directory of a million jobs takes seconds
 * to read and stat, and the owner must keep reaping, dispatching and
 * answering signals meanwhile.  spoolq_scan_new starts (or restarts) a
 * scan; the loop calls spoolq_scan_step for SCAN_CHUNK names per iteration
 * until the stream ends.  Until then the window holds the oldest of the
 * names read so far, so in a backlog larger than one chunk the first jobs
 * to start are the oldest of the first chunk, not of all of new/.
 */
static void
scan_finish(struct spoolq *sq)
{
	closedir(sq->scan);
	sq->scan = NULL;
	sq->new_mtime = sq->scan_mtime;
	sq->new_scanned = sq->scan_started;
	if (sq->scan_again) {
		sq->scan_again = false;
		spoolq_scan_new(sq, true);
	}
}

bool
spoolq_scan_step(struct spoolq *sq, size_t max)
{
	struct dirent *de;

	if (sq->scan == NULL)
		return true;
	for (size_t n = 0; n < max; n++) {
		errno = 0;
		if ((de = readdir(sq->scan)) == NULL) {
			if (errno != 0)
				say_err("new/: cannot read: %s", strerror(errno));
			scan_finish(sq);
			return sq->scan == NULL;
		}
		/* A name waiting for its writer gets its recheck on time. */
		if (de->d_name[0] != '.' && !nameq_has(sq->waiting, de->d_name) &&
		    !nameq_has(sq->flocked, de->d_name))
			spoolq_admit(sq, de->d_name, 0);
	}
	return false;
}

void
spoolq_scan_new(struct spoolq *sq, bool force)
{
	struct stat st;
	int fd;

	if (sq->scan != NULL) {
		sq->scan_again |= force;
		return;
	}
	if (fstat(sq->sp.dir[ST_NEW], &st) == -1)
		return;
	if (!force && st.st_mtim.tv_sec == sq->new_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == sq->new_mtime.tv_nsec &&
	    sq->new_scanned - stat_mtime(&st) > 2000)
		return;
	fd = openat(sq->sp.dir[ST_NEW], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (sq->scan = fdopendir(fd)) == NULL) {
		say_err("new/: cannot read: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	sq->scan_mtime = st.st_mtim;
	sq->scan_started = now_ms();
	spoolq_scan_step(sq, SCAN_CHUNK);
}

void
spoolq_said_aside(const char *id, int to, const char *aside)
{
	if (aside[0] != '\0')
		say_warn("job=%s %s/%s was taken by another file: moved aside to "
		    "%s/%s", vis_id(id), state_names[to], vis_id(id),
		    state_names[to], vis_id(aside));
}

/*
 * defer/ is indexed by due time (sq->deferred, the DEFER_WINDOW soonest),
 * so that a due time costs one lookup, not a read of the whole directory.
 * Files left out of a full index are all due after its last one: when the
 * index runs dry, defer/ is read again.  The safety rescan reads it whole
 * once per RESCAN_MS.
 */
static void
defer_next(struct spoolq *sq)
{
	int64_t t = nameq_min_key(sq->deferred);

	if (t != INT64_MAX)
		sq->next_defer = t;
	else
		sq->next_defer = sq->defer_truncated ? now_ms() : 0;
}

/* Remember that defer/name is due at due (bounded, like new/'s window). */
static void
defer_index(struct spoolq *sq, const char *name, msec_t due)
{
	nameq_take(sq->deferred, name, NULL);
	if (nameq_len(sq->deferred) >= DEFER_WINDOW &&
	    due >= nameq_max_key(sq->deferred)) {
		sq->defer_truncated = true;
		return;
	}
	if (nameq_add(sq->deferred, name, due, 0) == -1) {
		sq->defer_truncated = true;	/* no memory: the next scan */
		return;
	}
	if (nameq_len(sq->deferred) > DEFER_WINDOW) {
		nameq_drop_max(sq->deferred);
		sq->defer_truncated = true;
	}
}

/* defer -> new: its time has come. */
static void
promote(struct spoolq *sq, const char *name)
{
	char vis[1024];

	vis_name(name, vis, sizeof(vis));
	if (state_promote(&sq->sp, name) == 0) {
		say("job=%s defer->new", vis);
		/* Its IN_MOVED_FROM on defer/ is ours, not a removal. */
		nameq_add(sq->promoted, name, 0, 0);
		if (sq->ndefer > 0)
			sq->ndefer--;
		spoolq_admit(sq, name, RF_MOVED);
		return;
	}
	if (errno == ENOENT)
		return;
	say_warn("job=%s defer->new: %s; will retry", vis, strerror(errno));
	defer_index(sq, name, now_ms() + RETRY_MS);
}

static int
defer_cb(void *arg, const char *name)
{
	struct spoolq *sq = arg;
	struct stat st;
	msec_t due;

	if (fstatat(sq->sp.dir[ST_DEFER], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	sq->ndefer++;
	due = stat_mtime(&st);
	if (due <= sq->scan_now)
		promote(sq, name);
	else
		defer_index(sq, name, due);
	return 0;
}

void
spoolq_scan_defer(struct spoolq *sq)
{
	while (nameq_pop(sq->deferred, NULL, 0, NULL))
		;
	sq->defer_truncated = false;
	sq->ndefer = 0;
	sq->scan_now = now_ms();
	if (spool_scan(&sq->sp, ST_DEFER, defer_cb, sq) == -1)
		say_err("defer/: cannot read: %s", strerror(errno));
	defer_next(sq);
}

void
spoolq_defer_due(struct spoolq *sq)
{
	msec_t now = now_ms();
	char name[NAME_MAX + 1];
	struct stat st;

	if (nameq_len(sq->deferred) == 0 && sq->defer_truncated) {
		spoolq_scan_defer(sq);
		return;
	}
	while (nameq_min_key(sq->deferred) <= now &&
	    nameq_pop(sq->deferred, name, sizeof(name), NULL)) {
		if (fstatat(sq->sp.dir[ST_DEFER], name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (stat_mtime(&st) <= now)
			promote(sq, name);
		else
			defer_index(sq, name, stat_mtime(&st));
	}
	defer_next(sq);
}

void
spoolq_defer_arrived(struct spoolq *sq, const char *name)
{
	struct stat st;

	if (fstatat(sq->sp.dir[ST_DEFER], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	if (!nameq_has(sq->deferred, name))
		sq->ndefer++;
	defer_index(sq, name, stat_mtime(&st));
	defer_next(sq);
}

void
spoolq_defer_left(struct spoolq *sq, const char *name)
{
	char vis[1024];

	if (nameq_take(sq->promoted, name, NULL))
		return;
	nameq_take(sq->deferred, name, NULL);
	defer_next(sq);
	if (sq->ndefer > 0)
		sq->ndefer--;
	vis_name(name, vis, sizeof(vis));
	say("job=%s left defer/ (cancelled, moved or removed)", vis);
}
