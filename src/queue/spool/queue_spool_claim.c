/*
 * queue_spool_claim.c: the spool's claims.  The oldest ready names of
 * new/ are checked (ready.c) and renamed into cur/ (state_claim); a name
 * that cannot be a job's is renamed, rejected or looked at again later.
 * Each claim gets its log, from the pool of empty ones where it can.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/nameq.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/queue_spool.h"

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

/*
 * Is the name used by a job in another state directory?  Every state but
 * new/, where the name is, and cur/, which is not looked at: the claim's
 * RENAME_NOREPLACE finds that one for free.
 */
int
spoolq_taken_elsewhere(struct spoolq *sq, const char *name)
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
void
spoolq_rename_dropped(struct spoolq *sq, const char *name, unsigned flags,
    int other)
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
	spoolq_reject(sq, name, st, why);
}

/*
 * A name whose attributes are bad is refused, never run without what it
 * asked for (a priority, a key and so its limit): true when it was.
 */
static bool
bad_attributes(struct spoolq *sq, const char *name, int fd,
    const struct stat *st)
{
	struct jobattr a;
	const char *why;
	char text[160];

	if (strchr(name, ',') == NULL || jobattr_parse(name, &a, &why) == 0)
		return false;
	close(fd);
	snprintf(text, sizeof(text), "bad attributes in its name: %s", why);
	spoolq_reject(sq, name, st, text);
	return true;
}

/* Not ready yet: look again at the given time (or on its next event). */
void
spoolq_later(struct spoolq *sq, const char *name, unsigned flags, enum ready r,
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
void
spoolq_open_log(struct spoolq *sq, struct claim *c)
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

void
spoolq_hold(struct spoolq *sq, struct claim *c, const char *name, int fd)
{
	memset(c, 0, sizeof(*c));
	strlcpy(c->id, name, sizeof(c->id));
	c->fd = fd;
	sq->held[sq->nheld++] = c;	/* room made by spoolq_claim */
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
 * Open and check new/name for a claim (ready_checkb, with flags).  True
 * with *fd, *st and *btime filled in when the job is ready; otherwise it
 * went where it had to (rejected, back to wait) or was gone.
 */
bool
spoolq_ready(struct spoolq *sq, const char *name, unsigned flags, int *fd,
    struct stat *st, struct timespec *btime)
{
	enum ready r;

	r = ready_checkb(&sq->sp, name, flags, fd, st, btime);
	if (r != READY_BUSY)
		spoolq_unbusy(sq, name);
	if (r == READY_GONE) {
		say("job=%s left new/ before its claim (cancelled or moved "
		    "away)", vis_id(name));
		return false;
	}
	if (r == READY_NOTREG || r == READY_DENIED || r == READY_LINKED) {
		reject(sq, name, st, r);
		return false;
	}
	if (r != READY_YES) {
		spoolq_later(sq, name, flags, r, st);
		return false;
	}
	return true;
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
	int fd, other = ST_NONE;

	/* A job of ours runs under that name: a hard link to it (ln cur/X
	 * new/X) or a new file; either way, another job. */
	if (id_valid(name) && spoolq_holds(sq, name))
		other = ST_CUR;
	if (!id_valid(name) || other != ST_NONE ||
	    (other = spoolq_taken_elsewhere(sq, name)) != ST_NONE) {
		spoolq_rename_dropped(sq, name, flags, id_valid(name) ? other :
		    ST_NONE);
		return false;
	}
	if (!spoolq_ready(sq, name, flags, &fd, &st, &btime))
		return false;
	if (bad_attributes(sq, name, fd, &st))
		return false;
	if (!spoolq_unique_ok(sq, name, flags)) {
		close(fd);
		return false;
	}
	if (state_claim(&sq->sp, name) == -1) {
		int saved = errno;

		close(fd);
		if (saved == EEXIST)
			spoolq_rename_dropped(sq, name, flags, ST_CUR);
		else if (saved != ENOENT) {
			errno = saved;
			spoolq_later(sq, name, flags, READY_ERR, &st);
		}
		return false;
	}
	if (!claimed_checked(sq, name, &st)) {
		close(fd);
		swapped(sq, name);
		return false;
	}
	spoolq_hold(sq, c, name, fd);
	c->size = st.st_size;	/* an --inline worker's LENGTH */
	c->path = spool_jobpath(&sq->sp, ST_CUR, name);
	spoolq_open_log(sq, c);
	if (c->path == NULL && c->logfd != -1) {
		/* Out of memory: the attempt fails like a failed spawn. */
		close(c->logfd);
		c->logfd = -1;
		c->logerr = ENOMEM;
	}
	return true;
}

/*
 * The next name to claim: the best (priority, then age), except that
 * each SCHED_FIFO_EVERYth start goes to the oldest, whatever its
 * priority, so that no job waits for ever behind higher ones.  Forward's
 * claims have no starts to share.
 */
static int
pop_next(struct spoolq *sq, char *name, size_t len, unsigned *flags,
    int *rank, int64_t *age)
{
	if (!sq->c.in_place && sq->nstarts % SCHED_FIFO_EVERY ==
	    SCHED_FIFO_EVERY - 1 && nameq_ranked(sq->ready))
		return nameq_pop_lowest_key(sq->ready, name, len, flags, rank,
		    age);
	return nameq_pop_ranked(sq->ready, name, len, flags, rank, age);
}

int
spoolq_claim(struct spoolq *sq, struct claim *const *c, int n,
    spoolq_take_fn *take_one)
{
	char name[NAME_MAX + 1], k[KEY_MAX + 1];
	bool limited = !sq->c.in_place;
	unsigned flags;
	int64_t age;
	int got = 0, rank;

	if (sq->paused)
		return 0;
	/* As many spare logs as one turn claims, for the next turn. */
	joblog_pool_want(&sq->pool, n);
	if (reserve(sq, (size_t)n) == -1) {
		say_warn("%s: %s; will retry", sq->sp.path, strerror(errno));
		return 0;
	}
	if (nameq_len(sq->unparked) > 0)
		spoolq_admit_unparked(sq);
	while (got < n) {
		spoolq_refill(sq);
		if (limited && !spoolq_all_room(sq))
			break;
		if (!pop_next(sq, name, sizeof(name), &flags, &rank, &age))
			break;
		k[0] = '\0';
		if (limited)
			spoolq_name_key(name, k, sizeof(k));
		if (limited && k[0] != '\0' && !spoolq_key_room(sq, k) &&
		    spoolq_park(sq, k, name, rank, age, flags))
			continue;
		if (!take_one(sq, name, flags, c[got]))
			continue;
		got++;
		if (limited) {
			sq->nstarts++;
			spoolq_key_run(sq, k, false);
		}
	}
	return got;
}

/* The oldest ready jobs in new/, up to n of them, each renamed to cur/. */
int
sq_claim(struct queue *q, struct claim *const *c, int n)
{
	return spoolq_claim((struct spoolq *)q, c, n, take);
}

/*
 * After the turn's handlers have started: make the spare logs the next
 * claims will take, so that no claim waits for an inode allocation.
 */
void
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
int
sq_renew(struct queue *q, struct claim *const *c, int n)
{
	return 0;
}
