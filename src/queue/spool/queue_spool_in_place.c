/*
 * queue_spool_in_place.c: forward's claims (queue_conf.in_place), as their
 * own operations: claim, record and release of a job that stays in new/
 * until its outcome moves it from there, and its log's lines.  The table
 * that uses them is queue_spool.c's, chosen once at open.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/nameq.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/ready.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/queue_spool.h"

/*
 * forward's claim (queue_conf.in_place): the job stays in new/, read by
 * us and run by no handler.  cur/ would only say "claimed", and nobody
 * needs telling: the spool lock keeps every other owner out, and a job
 * a kill -9 leaves in new/ is simply sent again (the database's unique
 * key finds it there).  When it has no log, the name is not some older
 * job's (whose log it would share): the three lookups in defer/, done/
 * and failed/ are saved, and its log is made only with its outcome's
 * line (queue_spool_note); the final RENAME_NOREPLACE still catches a job
 * there without a log (sq_record_in_place).
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
	if (haslog && (other = spoolq_taken_elsewhere(sq, name)) != ST_NONE) {
		close(fd);
		spoolq_rename_dropped(sq, name, flags, other);
		return false;
	}
	if (nameq_add(sq->flight, name, 0, 0) == -1) {
		close(fd);
		errno = ENOMEM;
		spoolq_later(sq, name, flags, READY_ERR, NULL);
		return false;
	}
	spoolq_hold(sq, c, name, fd);
	if (haslog) {
		spoolq_open_log(sq, c);	/* there already: read its attempts */
		return true;
	}
	c->logfd = -1;
	c->logend = 0;
	c->attempt = 1;
	c->lognew = true;
	return true;
}

/*
 * take() of queue_spool_claim.c, in place: the file is checked without a
 * lease (RF_PEEK: no handler will hold it) and left in new/, and the
 * claim keeps what forward's origin key needs of it.
 */
static bool
take_unmoved(struct spoolq *sq, const char *name, unsigned flags,
    struct claim *c)
{
	struct timespec btime;
	struct stat st;
	int fd;

	if (!id_valid(name)) {
		spoolq_rename_dropped(sq, name, flags, ST_NONE);
		return false;
	}
	flags |= RF_PEEK;
	if (!spoolq_ready(sq, name, flags, &fd, &st, &btime) ||
	    !take_in_place(sq, name, flags, fd, c))
		return false;
	c->size = st.st_size;
	c->ino = st.st_ino;
	c->btime = btime;
	return true;
}

/* The oldest ready jobs in new/, up to n of them, each left there. */
int
sq_claim_in_place(struct queue *q, struct claim *const *c, int n)
{
	return spoolq_claim((struct spoolq *)q, c, n, take_unmoved);
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
int
sq_record_in_place(struct queue *q, struct claim *c, const struct outcome *out,
    msec_t when)
{
	struct spoolq *sq = (struct spoolq *)q;
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

/* The name leaves flight with the claim: it may be claimed again. */
void
sq_release_in_place(struct queue *q, struct claim *c)
{
	nameq_take(((struct spoolq *)q)->flight, c->id, NULL);
	sq_release(q, c);
}
