/*
 * queue_spool.c: the spool as a queue (queue.h).  A claim is the rename
 * new/ID -> cur/ID, an outcome the rename out of cur/, and wake-ups come
 * from inotify on new/, cur/ and defer/.  inotify only wakes us: the
 * directories are the truth, and a slow safety rescan catches anything an
 * event did not announce.  Every move is asked of state.c.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/nameq.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/state.h"
#include "store/watch.h"
#include "queue/spool/queue_spool.h"

static const struct queue_backend spool_backend;

static const char *
file_type(mode_t m)
{
	if (S_ISLNK(m)) return "symlink";
	if (S_ISDIR(m)) return "directory";
	if (S_ISFIFO(m)) return "FIFO";
	if (S_ISSOCK(m)) return "socket";
	if (S_ISCHR(m)) return "character device";
	if (S_ISBLK(m)) return "block device";
	return "unknown type";
}

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

/* ---- due work: rechecks, deferred jobs, rescans ---- */

static msec_t
min_ms(msec_t a, msec_t b)
{
	return a < b ? a : b;
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
	    nameq_pop(sq->orphans, name, sizeof(name), NULL))
		spoolq_recover_one(sq, name);
}

static void
sq_due(struct queue *q, msec_t mono)
{
	struct spoolq *sq = (struct spoolq *)q;

	if (sq->scan != NULL)
		spoolq_scan_step(sq, SCAN_CHUNK);
	recheck(sq, mono);
	if (sq->next_defer != 0 && sq->next_defer <= now_ms())
		spoolq_defer_due(sq);
	if (mono >= sq->next_rescan) {
		sq->next_rescan = mono + RESCAN_MS;
		pause_look(sq);
		spoolq_scan_new(sq, false);
		spoolq_scan_defer(sq);
	}
	if (sq->rescan) {
		sq->rescan = false;
		pause_look(sq);
		spoolq_scan_new(sq, true);
		spoolq_scan_defer(sq);
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
	if (sq->next_defer != 0)
		t = min_ms(t, mono + (sq->next_defer - now_ms()));
	/* forward's loop waits for this, not for commit's answer. */
	return min_ms(t, sq->commit_due);
}

/* ---- claiming ---- */

/*
 * Is the name used by a job in another state directory?  Every state but
 * new/, where the name is, and cur/, which is not looked at: the claim's
 * RENAME_NOREPLACE finds that one for free.
 */
static int
taken_elsewhere(struct spoolq *sq, const char *name)
{
	struct stat st;

	for (int s = ST_FIRST; s < ST_END; s++)
		if (s != ST_NEW && s != ST_CUR && fstatat(sq->sp.dir[s], name,
		    &st, AT_SYMLINK_NOFOLLOW) == 0)
			return s;
	return ST_NONE;
}

/*
 * A dropped file whose name is not a valid ID, or is already some other
 * job's, gets a derived ID; nothing is ever overwritten.
 */
static void
rename_dropped(struct spoolq *sq, const char *name, unsigned flags, int other)
{
	char id[NAME_MAX + 1], reason[64];

	if (other != ST_NONE)
		snprintf(reason, sizeof(reason), "name taken by a job in %s/",
		    state_names[other]);
	else
		strlcpy(reason, "not a valid job ID", sizeof(reason));
	if (state_rename_new(&sq->sp, name, id, sizeof(id)) == -1) {
		if (errno != ENOENT) {
			say_err("job=%s cannot rename (%s): %s; will retry",
			    vis_id(name), reason, strerror(errno));
			nameq_add(sq->waiting, name, mono_ms() + RETRY_MS, flags);
		}
		return;
	}
	say("job=%s renamed from=%s (%s)", vis_id(id), vis_id(name),
	    reason);
	joblog_note(&sq->sp, id, "renamed from %s (%s)", vis_id(name),
	    reason);
	/*
	 * Our rename is no sign of completion: a file written straight into
	 * new/ may still be open (cp, a shell redirect).  Its IN_MOVED_TO
	 * must not say "complete by protocol" either (arrival_flags).
	 */
	flags &= RF_MOVED | RF_CLOSED;
	if (nameq_add(sq->renamed, id, 0, flags) == -1)
		flags = 0;	/* no memory: it waits like an unseen writer */
	spoolq_admit(sq, id, flags);
}

/*
 * A refused entry the owner may not move: a directory of another user's
 * (moving a directory needs write permission on it, to change its "..").
 * It stays in new/, said once, and is passed over for as long as that
 * inode is there (spoolq_refused); --drain does not wait for it.
 */
static void
refuse_in_place(struct spoolq *sq, const char *name, const struct stat *st,
    const char *why)
{
	int saved = errno;

	if (nameq_add(sq->refused, name, (int64_t)st->st_ino, 0) == -1) {
		nameq_add(sq->waiting, name, mono_ms() + RETRY_MS, 0);
		return;
	}
	joblog_note(&sq->sp, name, "rejected: %s; cannot be moved to failed/ "
	    "(%s): left in new/", why, strerror(saved));
	say_err("job=%s rejected: %s; cannot be moved to failed/ (%s): left in "
	    "new/ and passed over", vis_id(name), why, strerror(saved));
}

/* new -> failed without ever running it (nor following a symlink). */
static void
reject(struct spoolq *sq, const char *name, const struct stat *st,
    enum ready r)
{
	char why[96];

	if (r == READY_DENIED)
		strlcpy(why, "unreadable by the owner (permission denied)",
		    sizeof(why));
	else if (r == READY_LINKED)
		snprintf(why, sizeof(why), "has other hard links (st_nlink=%lu)",
		    (unsigned long)st->st_nlink);
	else
		snprintf(why, sizeof(why), "not a regular file (%s)",
		    file_type(st->st_mode));
	if (state_reject(&sq->sp, name) == -1) {
		if (errno == EACCES || errno == EPERM)
			refuse_in_place(sq, name, st, why);
		else if (errno != ENOENT) {
			say_warn("job=%s new->failed: %s; will retry",
			    vis_id(name), strerror(errno));
			nameq_add(sq->waiting, name, mono_ms() + RETRY_MS, 0);
		}
		return;
	}
	joblog_note(&sq->sp, name, "rejected: %s", why);
	say_warn("job=%s new->failed rejected: %s", vis_id(name), why);
}

/* Not ready yet: look again at the given time (or on its next event). */
static void
later(struct spoolq *sq, const char *name, unsigned flags, enum ready r,
    const struct stat *st)
{
	msec_t at = mono_ms() + RECHECK_MS;

	if (r == READY_QUIET) {
		msec_t age = now_ms() - ((msec_t)st->st_mtim.tv_sec * 1000 +
		    st->st_mtim.tv_nsec / 1000000);
		at = mono_ms() + (QUIET_MS - age > 0 ? QUIET_MS - age : 0) + 1;
	} else if (r == READY_ERR) {
		say_warn("job=%s: %s; will retry", vis_id(name), strerror(errno));
		at = mono_ms() + RETRY_MS;
	} else if (r == READY_BUSY && spoolq_busy(sq, name, flags, st))
		return;
	nameq_add(sq->waiting, name, at, flags);
}

/*
 * Open log/ID and read the attempts so far from it.  A job without a log
 * gets one of the pool's empty logs (joblog_pool_take), or a new one.  A
 * log that is not a regular file is never written to: the job cannot
 * start, and c->logerr says why.
 */
static void
open_log(struct spoolq *sq, struct claim *c)
{
	struct joblog_info ji;

	c->attempt = 1;
	c->logend = -1;
	c->logerr = 0;
	if ((c->logfd = joblog_pool_take(&sq->pool, &sq->sp, c->id)) != -1) {
		/* A new empty log of our own: attempt 1, nothing to read. */
		c->logend = 0;
		return;
	}
	if ((c->logfd = joblog_open(&sq->sp, c->id)) == -1) {
		c->logerr = errno;
		say_err("job=%s log/: %s", vis_id(c->id), strerror(errno));
		return;
	}
	if (joblog_fread(c->logfd, &ji, &c->logend) == -1) {
		c->logerr = errno;
		say_err("job=%s log/: %s", vis_id(c->id), errno == EINVAL ?
		    "not a regular file" : strerror(errno));
		close(c->logfd);
		c->logfd = -1;
		return;
	}
	c->attempt = ji.attempts + 1;
}

/*
 * The claims we handed out and not yet got back, by pointer: a handful
 * (one per slot), searched in a line, as the slots themselves would be.
 */
static int
reserve(struct spoolq *sq, size_t n)
{
	size_t cap = sq->capheld ? sq->capheld : 16;
	struct claim **v;

	while (cap < sq->nheld + n)
		cap *= 2;
	if (cap == sq->capheld)
		return 0;
	if ((v = reallocarray(sq->held, cap, sizeof(*v))) == NULL)
		return -1;
	sq->held = v;
	sq->capheld = cap;
	return 0;
}

static void
unhold(struct spoolq *sq, struct claim *c)
{
	for (size_t i = 0; i < sq->nheld; i++)
		if (sq->held[i] == c) {
			sq->held[i] = sq->held[--sq->nheld];
			return;
		}
}

static void
hold(struct spoolq *sq, struct claim *c, const char *name, int fd)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->id, name, sizeof(c->id));
	c->fd = fd;
	sq->held[sq->nheld++] = c;	/* room made by sq_claim */
}

/*
 * forward's claim (queue_conf.in_place): the job stays in new/, read by
 * us and run by no handler.  cur/ would only say "claimed", and nobody
 * needs telling: the spool lock keeps every other owner out, and a job
 * a kill -9 leaves in new/ is simply sent again (the database's unique
 * key finds it there).  When it has no log, the name is not some older
 * job's (whose log it would share): the three lookups in defer/, done/
 * and failed/ are saved, and its log is made only with its outcome's
 * line (queue_spool_note); the final RENAME_NOREPLACE still catches a job
 * there without a log (record_in_place).
 */
static bool
take_in_place(struct spoolq *sq, const char *name, unsigned flags, int fd,
    struct claim *c)
{
	struct stat st;
	int other = ST_NONE;
	bool haslog;

	haslog = fstatat(sq->sp.dir[ST_LOG], name, &st, AT_SYMLINK_NOFOLLOW) ==
	    0 || errno != ENOENT;
	if (haslog && (other = taken_elsewhere(sq, name)) != ST_NONE) {
		close(fd);
		rename_dropped(sq, name, flags, other);
		return false;
	}
	if (nameq_add(sq->flight, name, 0, 0) == -1) {
		close(fd);
		errno = ENOMEM;
		later(sq, name, flags, READY_ERR, NULL);
		return false;
	}
	hold(sq, c, name, fd);
	if (haslog) {
		open_log(sq, c);	/* there already: read its attempts */
		return true;
	}
	c->logfd = -1;
	c->logend = 0;
	c->attempt = 1;
	c->lognew = true;
	return true;
}

/*
 * forward: append "@chute TIME text" to c's log.  A claim that found no
 * log (take_in_place) has none open: with share, log/ID becomes a name of
 * one file holding this line for every job that gets it until the next
 * commit (a batch: joblog_pool_link); otherwise, or where that cannot be,
 * the line is appended by name.
 */
void
queue_spool_note(struct queue *q, struct claim *c, bool share,
    const char *fmt, ...)
{
	struct spoolq *sq = (struct spoolq *)q;
	char text[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (c->logfd != -1) {
		joblog_lnote(c->logfd, &c->logend, false, "%s", text);
		return;
	}
	if (c->lognew && share &&
	    joblog_pool_link(&sq->pool, &sq->sp, c->id, text) == 0) {
		c->lognew = false;
		return;
	}
	c->lognew = false;
	if (joblog_note(&sq->sp, c->id, "%s", text) == -1)
		say_err("job=%s log/: %s", vis_id(c->id), strerror(errno));
}

/*
 * Is cur/name, just renamed there by name, the inode ready_check opened
 * and checked (st)?  A submitter can exchange new/name with another
 * entry of new/ (renameat2 RENAME_EXCHANGE) between the check and the
 * claim, and a symlink to a file only the owner may read would then be
 * run.  cur/ is the owner's alone: once this holds, the path stays the
 * checked file, for a handler's {} and a persistent worker's line too.
 */
static bool
claimed_checked(struct spoolq *sq, const char *name, const struct stat *st)
{
	struct stat now;

	return fstatat(sq->sp.dir[ST_CUR], name, &now, AT_SYMLINK_NOFOLLOW) ==
	    0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

/*
 * The claim took something that was not checked: back to new/, where
 * it is looked at afresh (a symlink or a hard link is then refused with
 * its reason); if new/name is taken again meanwhile, to failed/ unrun.
 */
static void
swapped(struct spoolq *sq, const char *name)
{
	say_warn("job=%s was replaced in new/ between its check and its claim; "
	    "not run, looked at again", vis_id(name));
	joblog_note(&sq->sp, name, "claim refused: new/%s was replaced "
	    "between its check and its claim", vis_id(name));
	if (state_requeue(&sq->sp, name) == 0)
		return;
	if (errno == EEXIST && state_finish(&sq->sp, name, ST_FAILED, -1,
	    now_ms()) != -1) {
		say_warn("job=%s cur->failed rejected: replaced between its check "
		    "and its claim", vis_id(name));
		return;
	}
	/* Still in cur/ and not ours: recovery's rules apply to it. */
	nameq_add(sq->orphans, name, mono_ms() + RETRY_MS, 0);
}

/*
 * Try to claim new/name into c.  Returns true when it is ours; otherwise
 * the name went where it had to (renamed, rejected, back to wait).
 */
static bool
take(struct spoolq *sq, const char *name, unsigned flags, struct claim *c)
{
	struct timespec btime;
	struct stat st;
	enum ready r;
	int fd, other = ST_NONE;

	/* A job of ours runs under that name: a hard link to it (ln cur/X
	 * new/X) or a new file; either way, another job.  (forward's claims
	 * stay in new/ under their names: flight keeps them out of here.) */
	if (!sq->c.in_place && id_valid(name) && spoolq_holds(sq, name))
		other = ST_CUR;
	if (!id_valid(name) || other != ST_NONE || (!sq->c.in_place &&
	    (other = taken_elsewhere(sq, name)) != ST_NONE)) {
		rename_dropped(sq, name, flags, id_valid(name) ? other : ST_NONE);
		return false;
	}
	if (sq->c.in_place)
		flags |= RF_PEEK;
	r = ready_checkb(&sq->sp, name, flags, &fd, &st, &btime);
	if (r != READY_BUSY)
		spoolq_unbusy(sq, name);
	if (r == READY_GONE) {
		say("job=%s left new/ before its claim (cancelled or moved "
		    "away)", vis_id(name));
		return false;
	}
	if (r == READY_NOTREG || r == READY_DENIED || r == READY_LINKED) {
		reject(sq, name, &st, r);
		return false;
	}
	if (r != READY_YES) {
		later(sq, name, flags, r, &st);
		return false;
	}
	if (sq->c.in_place && !take_in_place(sq, name, flags, fd, c))
		return false;
	if (sq->c.in_place) {
		c->size = st.st_size;
		c->ino = st.st_ino;
		c->btime = btime;
		return true;
	}
	if (state_claim(&sq->sp, name) == -1) {
		int saved = errno;

		close(fd);
		if (saved == EEXIST)
			rename_dropped(sq, name, flags, ST_CUR);
		else if (saved != ENOENT) {
			errno = saved;
			later(sq, name, flags, READY_ERR, &st);
		}
		return false;
	}
	if (!claimed_checked(sq, name, &st)) {
		close(fd);
		swapped(sq, name);
		return false;
	}
	hold(sq, c, name, fd);
	c->path = spool_jobpath(&sq->sp, ST_CUR, name);
	open_log(sq, c);
	if (c->path == NULL && c->logfd != -1) {
		/* Out of memory: the attempt fails like a failed spawn. */
		close(c->logfd);
		c->logfd = -1;
		c->logerr = ENOMEM;
	}
	return true;
}

/* The oldest ready jobs in new/, up to n of them. */
static int
sq_claim(struct queue *q, struct claim *const *c, int n)
{
	struct spoolq *sq = (struct spoolq *)q;
	char name[NAME_MAX + 1];
	unsigned flags;
	int got = 0;

	if (sq->paused)
		return 0;
	/* As many spare logs as one turn claims, for the next turn. */
	joblog_pool_want(&sq->pool, n);
	if (reserve(sq, (size_t)n) == -1) {
		say_warn("%s: %s; will retry", sq->sp.path, strerror(errno));
		return 0;
	}
	while (got < n) {
		spoolq_refill(sq);
		if (!nameq_pop(sq->ready, name, sizeof(name), &flags))
			break;
		if (take(sq, name, flags, c[got]))
			got++;
	}
	return got;
}

/*
 * After the turn's handlers have started: make the spare logs the next
 * claims will take, so that no claim waits for an inode allocation.
 */
static void
sq_prepare(struct queue *q)
{
	struct spoolq *sq = (struct spoolq *)q;
	int err = 0;

	if (sq->pool_off)
		return;
	if (sq->keeper.on) {
		/* Waking the keeper costs two context switches: only if needed. */
		if (joblog_pool_short(&sq->pool))
			keeper_fill(&sq->keeper);
		err = keeper_fill_error(&sq->keeper);
	} else if (joblog_pool_fill(&sq->pool, &sq->sp) == -1)
		err = errno;
	if (err != 0 && !sq->pool_failed) {
		say_warn("log/.pool/: %s; logs are created as jobs are claimed",
		    strerror(err));
		sq->pool_failed = true;
	}
	/* No O_TMPFILE here: asking again would only fail again. */
	if (err == EOPNOTSUPP || err == EISDIR)
		sq->pool_off = true;
}

/* The spool lock is ours as long as we live: no claim expires. */
static int
sq_renew(struct queue *q, struct claim *const *c, int n)
{
	return 0;
}

/* ---- outcomes ---- */

/*
 * The name of an in_place claim was taken in out->to by a job without a
 * log (an operator's mv): it goes there under a derived ID instead, its
 * log with it.  0, or -1 with errno.
 */
static int
finish_derived(struct spoolq *sq, struct claim *c, const struct outcome *out,
    msec_t when)
{
	char id[NAME_MAX + 1];

	if (state_rename_new(&sq->sp, c->id, id, sizeof(id)) == -1)
		return -1;
	/* Only ours can be there: our note made it, or we read it as this
	 * job's. */
	if (renameat2(sq->sp.dir[ST_LOG], c->id, sq->sp.dir[ST_LOG], id,
	    RENAME_NOREPLACE) == -1 && errno != ENOENT)
		say_err("job=%s log/: cannot rename to %s: %s", vis_id(c->id),
		    vis_id(id), strerror(errno));
	if (c->logfd != -1)
		joblog_lnote(c->logfd, &c->logend, false, "renamed to %s (name "
		    "taken by a job in %s/)", vis_id(id), state_names[out->to]);
	else
		joblog_note(&sq->sp, id, "renamed to %s (name taken by a job "
		    "in %s/)", vis_id(id), state_names[out->to]);
	say("job=%s renamed to=%s (name taken by a job in %s/)",
	    vis_id(c->id), vis_id(id), state_names[out->to]);
	nameq_take(sq->flight, c->id, NULL);
	strlcpy(c->id, id, sizeof(c->id));
	nameq_add(sq->flight, c->id, 0, 0);
	return state_finish_new(&sq->sp, c->id, out->to, c->fd, when);
}

/*
 * An in_place claim's outcome: from new/ to done/ or failed/, or left in
 * new/ (handed back) to be looked at again after a pause.  ENOENT: a
 * cancel or an operator's mv took it out of new/ first.
 */
static int
record_in_place(struct spoolq *sq, struct claim *c, const struct outcome *out,
    msec_t when)
{
	int rc;

	if (out->to == ST_NEW)
		return nameq_add(sq->waiting, c->id, mono_ms() + RETRY_MS, 0) ==
		    -1 ? -1 : 0;
	rc = state_finish_new(&sq->sp, c->id, out->to, c->fd, when);
	if (rc == -1 && errno == EEXIST)
		rc = finish_derived(sq, c, out, when);
	if (rc == 1) {
		say_err("job=%s new->%s: cannot set its time stamp (%s): its age "
		    "will be wrong", vis_id(c->id), state_names[out->to],
		    strerror(errno));
		rc = 0;
	}
	if (rc == -1 && errno != ENOENT) {
		/* Still in new/, and no event will say so: look again. */
		int saved = errno;

		nameq_add(sq->waiting, c->id, mono_ms() + RETRY_MS, 0);
		errno = saved;
	}
	return rc;
}

/* state_leave, and a line for the file it moved aside. */
static int
move_out(struct spoolq *sq, struct claim *c, int to, msec_t when)
{
	char aside[NAME_MAX + 1];
	int rc, saved;

	rc = state_leave(&sq->sp, c->id, to, c->fd, when, aside, sizeof(aside));
	saved = errno;
	spoolq_said_aside(c->id, to, aside);
	errno = saved;
	return rc;
}

/*
 * Move the finished job out of cur/.  ENOENT: a cancel (or an operator's
 * mv) got there first and wins; it is noted in the job's log.
 */
static int
sq_record(struct queue *q, struct claim *c, const struct outcome *out,
    msec_t when)
{
	struct spoolq *sq = (struct spoolq *)q;
	int rc;

	if (sq->c.in_place)
		return record_in_place(sq, c, out, when);
	if ((rc = move_out(sq, c, out->to, when)) == 1) {
		say_err("job=%s cur->%s: cannot set its time stamp (%s): %s",
		    vis_id(c->id), state_names[out->to], strerror(errno),
		    out->to == ST_DEFER ? "it is due at once, without its "
		    "backoff" : "its age will be wrong");
		rc = 0;
	}
	if (rc == 0) {
		if (out->to == ST_DEFER)
			spoolq_defer_arrived(sq, c->id);
		return 0;
	}
	if (errno == ENOENT && c->logfd != -1) {
		joblog_lnote(c->logfd, &c->logend, c->logshared,
		    "cancelled: moved out of cur/ while its handler ran");
		errno = ENOENT;
	}
	return -1;
}

static void
sq_release(struct queue *q, struct claim *c)
{
	struct spoolq *sq = (struct spoolq *)q;

	unhold(sq, c);
	if (sq->flight != NULL)
		nameq_take(sq->flight, c->id, NULL);
	if (c->fd != -1)
		close(c->fd);
	if (c->logfd != -1)
		close(c->logfd);
	free(c->path);
	memset(c, 0, sizeof(*c));
	c->fd = c->logfd = -1;
}

static void
sync_failed(struct spoolq *sq, int err, msec_t mono)
{
	say_err("%s: fsync: %s; will retry", sq->sp.path, strerror(err));
	sq->dirty_since = mono;
	sq->sync_failed = true;
}

/*
 * Take back what the keeper could not fsync; true if it holds nothing.
 * Jobs go on running while an fsync hangs (a dying disk, a hung NFS
 * server), so the journal says so, once per fsync: their transitions are
 * not durable until it returns, and a power loss would run them again.
 */
static bool
kept(struct spoolq *sq, msec_t mono)
{
	unsigned failed;
	msec_t since;
	bool idle;
	int err;

	idle = keeper_idle(&sq->keeper, &failed, &err, &since);
	if (failed != 0) {
		sq->sp.dirty |= failed;
		sync_failed(sq, err, mono);
	}
	if (since != 0 && mono - since >= SYNC_SLOW_MS && sq->slow_since != since) {
		say_warn("%s: an fsync has not returned for %lld s; jobs go on, and "
		    "their moves are not durable until it does", sq->sp.path,
		    (long long)(mono - since) / 1000);
		sq->slow_since = since;
	}
	return idle;
}

/* The fsyncs themselves: handed to the keeper, or done here. */
static msec_t
sync_now(struct spoolq *sq, msec_t mono)
{
	if (sq->keeper.on) {
		keeper_sync(&sq->keeper, sq->sp.dirty);
		sq->sp.dirty = 0;
	} else if (spool_sync(&sq->sp) == -1) {
		sync_failed(sq, errno, mono);
		return mono + SYNC_DELAY_MS;
	}
	sq->dirty_since = 0;
	sq->sync_failed = false;
	/* Look back soon for a failure to retry. */
	return sq->keeper.on ? mono + SYNC_CHECK_MS : INT64_MAX;
}

/*
 * Make finished transitions durable.  While handlers run, the fsyncs wait
 * up to SYNC_DELAY_MS so that one fsync of done/ covers every job that
 * finished meanwhile (an fsync costs more than a no-op job's whole run);
 * when nothing runs they start at once.  They are the keeper's (keeper.c):
 * the loop goes on to the next job while the disk works, and what failed
 * comes back here to be tried again after the delay.  A power loss before
 * an fsync ends can only make a finished job run again (spool-layout.md).
 * Returns when to be called again.
 */
static msec_t
sq_commit(struct queue *q, bool busy)
{
	struct spoolq *sq = (struct spoolq *)q;
	msec_t mono = mono_ms(), check = INT64_MAX;

	/* The batch's shared line is done with (queue_spool_note). */
	joblog_pool_unnote(&sq->pool);
	if (sq->keeper.on && !kept(sq, mono))
		check = mono + SYNC_CHECK_MS;
	if (sq->sp.dirty == 0) {
		sq->dirty_since = 0;
		return sq->commit_due = check;
	}
	if (sq->dirty_since == 0)
		sq->dirty_since = mono;
	if ((busy || sq->sync_failed) && mono - sq->dirty_since < SYNC_DELAY_MS)
		return sq->commit_due = min_ms(check,
		    sq->dirty_since + SYNC_DELAY_MS);
	return sq->commit_due = sync_now(sq, mono);
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
	spoolq_said_held(sq);
	return true;
}

static void
sq_counts(struct queue *q, struct counts *n)
{
	struct spoolq *sq = (struct spoolq *)q;

	*n = (struct counts){
		.queued = nameq_len(sq->ready) + nameq_len(sq->waiting) +
		    nameq_len(sq->flocked),
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
	joblog_pool_close(&sq->pool);
	if (sq->scan != NULL)
		closedir(sq->scan);
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
	sq->q.be = &spool_backend;
	sq->q.worker_fd = -1;
	sq->c = *c;
	sq->sp.root = -1;
	sq->sp.lock = -1;
	sq->pool.dir = -1;
	sq->wlock = -1;
	sq->window = WINDOW;
	sq->commit_due = INT64_MAX;
	sq->next_rescan = mono_ms() + RESCAN_MS;
	if ((sq->ready = nameq_new()) == NULL ||
	    (sq->waiting = nameq_new()) == NULL ||
	    (sq->orphans = nameq_new()) == NULL ||
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
	int watched[ST_NSTATES], nwatched;
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
