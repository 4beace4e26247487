/*
 * queue_spool_outcome.c: the spool's outcomes.  A finished job is renamed
 * out of cur/ (state_leave), and the renames are made durable by a group
 * commit: the directories' fsyncs, batched while handlers run, done by the
 * keeper thread (keeper.c) off the loop.  And a job refused before it ran
 * (spoolq_reject: a name that cannot be a job's, a unique key held).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/queue_spool.h"

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
int
sq_record(struct queue *q, struct claim *c, const struct outcome *out,
    msec_t when)
{
	struct spoolq *sq = (struct spoolq *)q;
	int rc;

	if ((rc = move_out(sq, c, out->to, when)) == 1) {
		say_err("job=%s cur->%s: cannot set its time stamp (%s): %s",
		    vis_id(c->id), state_names[out->to], strerror(errno),
		    out->to == ST_DEFER ? "it is due at once, without its "
		    "backoff" : "its age will be wrong");
		rc = 0;
	}
	if (rc == 0) {
		/* Its dependents: at sq_release, which follows. */
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

/* ---- jobs refused before they ran ---- */

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

void
spoolq_reject(struct spoolq *sq, const char *name, const struct stat *st,
    const char *why)
{
	if (state_reject(&sq->sp, name) == -1) {
		if (st != NULL && (errno == EACCES || errno == EPERM))
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

/* ---- outcomes ---- */

static void
unhold(struct spoolq *sq, struct claim *c)
{
	for (size_t i = 0; i < sq->nheld; i++)
		if (sq->held[i] == c) {
			sq->held[i] = sq->held[--sq->nheld];
			return;
		}
}

void
sq_release(struct queue *q, struct claim *c)
{
	struct spoolq *sq = (struct spoolq *)q;
	char k[KEY_MAX + 1];

	unhold(sq, c);
	/* Its handler is gone: its slot, and its key's, are free. */
	spoolq_name_key(c->id, k, sizeof(k));
	spoolq_key_done(sq, k);
	/*
	 * And the jobs waiting for it may go on, if it ended (done/, or
	 * failed/ by its outcome or by a cancel while it ran): not before,
	 * so that a dependent run anyway never starts beside its handler.
	 */
	spoolq_after_ended(sq, c->id);
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
msec_t
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
