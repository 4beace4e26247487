/*
 * pg_forward_spool.c: forward's batches on the spool's side: claimed in
 * place and read into the statement's array parameters, moved to done/
 * (or back) once the database has them, and the waits between, for a
 * signal or the spool's wake-up.
 */
#include <sys/signalfd.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/id.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/spool.h"
#include "store/unique.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"
#include "chute-pgsql/pg_forward.h"

/*
 * The job's identity in its spool for the unique key: inode and birth
 * time, which the spool's renames keep and a later file of the same name
 * (after a purge) does not share.  Where the file system keeps no birth
 * time, the inode alone (fleet.md says what that risks).  The claim's
 * statx saw both (queue_conf.in_place).
 */
static void
identify(const struct claim *c, char *buf, size_t len)
{
	if (c->btime.tv_sec != -1)
		snprintf(buf, len, "%llu:%lld.%09ld", (unsigned long long)c->ino,
		    (long long)c->btime.tv_sec, (long)c->btime.tv_nsec);
	else
		snprintf(buf, len, "%llu", (unsigned long long)c->ino);
}

/*
 * Send the claim where out says (the claim is kept).  Returns false when
 * it had left new/ first (cancelled or moved away).
 */
static bool
finish_local(struct fwd *f, struct claim *c, int to, const char *why)
{
	struct outcome out = { .to = to };

	strlcpy(out.why, why, sizeof(out.why));
	if (f->q->be->record(f->q, c, &out, now_ms()) == 0)
		return true;
	if (errno == ENOENT)
		return false;
	say_warn("job=%s new->%s: %s; will retry", vis_id(c->id), state_names[to],
	    strerror(errno));
	return true;
}

/* finish_local, and let the claim go. */
static void
finish(struct fwd *f, struct claim *c, int to, const char *why)
{
	finish_local(f, c, to, why);
	f->q->be->release(f->q, c);
}

/*
 * A name whose attributes (,p=N ,k=KEY: base/sched.h) cannot be read:
 * failed/, with the reason, as the owner refuses it, rather than sent
 * without the priority or key it asked for.
 */
static void
bad_attrs(struct fwd *f, struct claim *c, const char *bad)
{
	char why[256];

	snprintf(why, sizeof(why), "refused: its name's attributes: %s", bad);
	queue_spool_note(f->q, c, false, "%s", why);
	say_warn("job=%s new->failed %s", vis_id(c->id), why);
	finish(f, c, ST_FAILED, why);
}

/* Too large for the database: failed/, with the reason, as run would. */
static void
too_large(struct fwd *f, struct claim *c, off_t size)
{
	char why[160];

	snprintf(why, sizeof(why), "rejected: %lld bytes, larger than %lld "
	    "MiB, the limit of a job in a PostgreSQL queue", (long long)size,
	    PG_MAX_JOB >> 20);
	queue_spool_note(f->q, c, false, "%s", why);
	say_warn("job=%s new->failed %s", vis_id(c->id), why);
	finish(f, c, ST_FAILED, "rejected: too large");
}

static void
batch_begin(struct batch *b)
{
	b->m = 0;
	pg_arr_begin(&b->lid, PG_OID_TEXT);
	pg_arr_begin(&b->birth, PG_OID_TEXT);
	pg_arr_begin(&b->did, PG_OID_TEXT);
	pg_arr_begin(&b->body, PG_OID_BYTEA);
	pg_arr_begin(&b->prio, PG_OID_TEXT);
	pg_arr_begin(&b->key, PG_OID_TEXT);
	pg_arr_begin(&b->ukey, PG_OID_TEXT);
}

static void
batch_end(struct batch *b)
{
	pg_arr_end(&b->lid);
	pg_arr_end(&b->birth);
	pg_arr_end(&b->did);
	pg_arr_end(&b->body);
	pg_arr_end(&b->prio);
	pg_arr_end(&b->key);
	pg_arr_end(&b->ukey);
}

/*
 * The unique key of a job's name (,u=KEY), "" none: the database applies
 * it as chute submit --unique would (fleet.md, "Unique keys").  A name
 * with bad attributes carries none here.
 */
static const char *
unique_key(const char *id)
{
	static struct jobattr a;
	const char *why;

	return jobattr_parse(id, &a, &why) == 0 ? a.unique : "";
}

/*
 * Add job i of b to the array parameters, reading its file into place:
 * the one copy of its bytes this side of libpq.  0, or -1 out of memory.
 */
static int
batch_put(struct batch *b, int i)
{
	struct claim *c = &b->slot[i];
	size_t len = (size_t)b->size[i];
	struct jobattr a;
	const char *why;
	char prio[16];
	ssize_t got;
	char *p;

	/* Read once already by batch_take, which refused a bad one. */
	if (jobattr_parse(c->id, &a, &why) == -1)
		a = (struct jobattr){ .prio = PRIO_DEFAULT };
	snprintf(prio, sizeof(prio), "%d", a.prio);
	if (pg_arr_str(&b->prio, prio) == -1 ||
	    pg_arr_str(&b->key, a.key) == -1 ||
	    pg_arr_str(&b->lid, c->id) == -1 ||
	    pg_arr_str(&b->birth, b->born[i]) == -1 ||
	    pg_arr_str(&b->did, b->dbid[i]) == -1 ||
	    pg_arr_str(&b->ukey, unique_key(c->id)) == -1 ||
	    (p = pg_arr_elem(&b->body, len)) == NULL)
		return -1;
	/* pread: the offset is left as the claim gave it. */
	if ((got = pread(c->fd, p, len, 0)) == -1)
		got = 0;
	if ((size_t)got < len)
		pg_arr_shrink(&b->body, len, (size_t)got);
	b->idx[b->m++] = i;
	return 0;
}

/*
 * A name whose unique key no submit may take (".."): failed/, with the
 * reason, as the spool's owner refuses it, rather than a key in the
 * queue that chute submit refuses.  True when it went there.
 */
static bool
bad_unique(struct fwd *f, struct claim *c)
{
	const char *key = unique_key(c->id), *why;

	if (key[0] == '\0' || unique_key_valid(key, &why))
		return false;
	queue_spool_note(f->q, c, false, "rejected: %s", why);
	say_warn("job=%s new->failed rejected: %s", vis_id(c->id), why);
	finish(f, c, ST_FAILED, "rejected: not a unique key");
	return true;
}

/* Take claim c into b as job i; false when it went elsewhere at once. */
static bool
batch_take(struct fwd *f, struct batch *b, struct claim *c, int i)
{
	struct jobattr a;
	const char *why;

	b->size[i] = c->size;
	identify(c, b->born[i], sizeof(b->born[i]));
	if (jobattr_parse(c->id, &a, &why) == -1) {
		bad_attrs(f, c, why);
		return false;
	}
	if (b->size[i] > PG_MAX_JOB) {
		too_large(f, c, b->size[i]);
		return false;
	}
	if (bad_unique(f, c))
		return false;
	strlcpy(b->dbid[i], c->id, sizeof(b->dbid[i]));
	b->sent[i] = b->again[i] = b->dup[i] = false;
	return true;
}

/*
 * Claim jobs into b until it holds --batch of them or FWD_BYTES of
 * payloads (the job that passes it included), each read into the array
 * parameters as it comes.  Returns 0, or -1 out of memory (the jobs
 * claimed are in b).
 */
int
fwd_gather(struct fwd *f, struct batch *b)
{
	b->n = 0;
	b->bytes = 0;
	batch_begin(b);
	while (b->n < f->batch && b->bytes < FWD_BYTES) {
		struct claim *c = &b->slot[b->n];

		if (f->q->be->claim(f->q, &c, 1) != 1)
			break;
		if (!batch_take(f, b, c, b->n))
			continue;
		b->bytes += b->size[b->n];
		if (batch_put(b, b->n++) == -1)
			return -1;
	}
	batch_end(b);
	return 0;
}

/*
 * A statement ran and some jobs' IDs were taken there: those get derived
 * IDs, by the spool's rule, and go into the array parameters again (read
 * once more).  Returns how many, or -1 out of memory.
 */
int
fwd_batch_retake(struct batch *b)
{
	batch_begin(b);
	for (int i = 0; i < b->n; i++) {
		if (b->sent[i])
			continue;
		id_derive(b->slot[i].id, b->dbid[i], sizeof(b->dbid[i]));
		if (batch_put(b, i) == -1)
			return -1;
	}
	batch_end(b);
	return b->m;
}

/*
 * A job left new/ (chute cancel, an operator's mv) while its batch was in
 * flight: the database has it all the same.  Its log (which the cancel
 * wrote to as well) and the journal say so, and how to stop it there.
 */
static void
left_meanwhile(struct fwd *f, struct claim *c, const char *dbid)
{
	queue_spool_note(f->q, c, false, "left new/ while being forwarded, "
	    "after it reached %s at %s as %s: it runs there unless cancelled "
	    "there too", f->pg.queue, f->pg.name, vis_id(dbid));
	say("job=%s left new/ while being forwarded; it is in %s as %s: "
	    "chute cancel URL %s to stop it there", vis_id(c->id), f->pg.queue,
	    vis_id(dbid), vis_id(dbid));
}

/*
 * The database refused job c: its unique key is held there by job
 * holder.  failed/, as the owner refuses a job dropped in with a held
 * key (spool-layout.md, "Unique keys").
 */
static void
refuse_held(struct fwd *f, struct claim *c, const char *holder)
{
	const char *key = unique_key(c->id);

	queue_spool_note(f->q, c, false, "rejected: unique key %s is held in "
	    "%s at %s by job %s", key, f->pg.queue, f->pg.name,
	    vis_id(holder));
	say_warn("job=%s new->failed rejected: unique key %s is held in %s by "
	    "job %s", vis_id(c->id), key, f->pg.queue, vis_id(holder));
	finish(f, c, ST_FAILED, "rejected: unique key held");
}

/*
 * b is in the database: note where each job went, then done/.  A job
 * that kept its ID gets the batch's one line, "under the same ID"
 * (cmd_status.c reads it as "as ID"), which its log may share with the
 * rest of the batch (queue_spool_note); the others get lines of their own.
 */
void
fwd_batch_done(struct fwd *f, struct batch *b)
{
	int refused = 0;

	for (int i = 0; i < b->n; i++) {
		struct claim *c = &b->slot[i];
		bool derived = strcmp(c->id, b->dbid[i]) != 0;

		if (b->dup[i]) {
			refuse_held(f, c, b->dbid[i]);
			refused++;
			continue;
		}
		if (!derived && !b->again[i])
			queue_spool_note(f->q, c, true, "forwarded to %s at %s "
			    FWD_SAME_ID, f->pg.queue, f->pg.name);
		else
			queue_spool_note(f->q, c, false, "forwarded to %s at %s "
			    "as %s%s%s", f->pg.queue, f->pg.name,
			    vis_id(b->dbid[i]), derived ?
			    " (its ID was taken there)" : "", b->again[i] ?
			    " (found there from an earlier try)" : "");
		say("job=%s new->done forwarded to %s as %s%s", vis_id(c->id),
		    f->pg.queue, vis_id(b->dbid[i]), b->again[i] ?
		    " (found there from an earlier try)" : "");
		if (!finish_local(f, c, ST_DONE, "forwarded"))
			left_meanwhile(f, c, b->dbid[i]);
		f->q->be->release(f->q, c);
	}
	f->forwarded += (size_t)(b->n - refused);
	b->n = 0;
	/*
	 * Group commit across batches while more keep coming (the loop
	 * commits at once when it runs out): a power loss inside the delay
	 * only puts jobs back in new/, sent again and found there by their
	 * origin key.
	 */
	f->q->be->commit(f->q, true);
	say_flush();
}

/* Stopping: the claims go back to new/, no attempt counted. */
void
fwd_hand_back(struct fwd *f, struct batch *b)
{
	for (int i = 0; i < b->n; i++)
		finish(f, &b->slot[i], ST_NEW, "handed back");
	b->n = 0;
}

int
fwd_batch_alloc(struct batch *b, size_t n)
{
	b->slot = calloc(n, sizeof(*b->slot));
	b->idx = calloc(n, sizeof(*b->idx));
	b->size = calloc(n, sizeof(*b->size));
	b->born = calloc(n, sizeof(*b->born));
	b->dbid = calloc(n, sizeof(*b->dbid));
	b->sent = calloc(n, sizeof(*b->sent));
	b->again = calloc(n, sizeof(*b->again));
	b->dup = calloc(n, sizeof(*b->dup));
	return b->slot && b->idx && b->size && b->born && b->dbid && b->sent &&
	    b->again && b->dup ? 0 : -1;
}

void
fwd_batch_free(struct batch *b)
{
	free(b->slot);
	free(b->idx);
	free(b->size);
	free(b->born);
	free(b->dbid);
	free(b->sent);
	free(b->again);
	free(b->dup);
	free(b->ukey.b);
	free(b->lid.b);
	free(b->birth.b);
	free(b->did.b);
	free(b->body.b);
	free(b->prio.b);
	free(b->key.b);
}

/* ---- waiting: signals, the spool's wake-ups, the retry's time ---- */

static void
on_signals(struct fwd *f)
{
	struct signalfd_siginfo si[8];
	ssize_t n = read(f->sigfd, si, sizeof(si));

	for (ssize_t i = 0; i < n / (ssize_t)sizeof(si[0]); i++) {
		if (si[i].ssi_signo == SIGHUP)
			f->q->be->rescan(f->q);
		else
			f->stop = true;
	}
}

/* Wait up to ms for a signal or the spool's wake-up, and take them in. */
void
fwd_wait_for(struct fwd *f, msec_t ms)
{
	struct pollfd pfd[2] = {
		{ .fd = f->sigfd, .events = POLLIN },
		{ .fd = f->q->be->fd(f->q), .events = POLLIN },
	};

	if (ms < 0)
		ms = 0;
	if (poll(pfd, 2, (int)(ms > FWD_IDLE_MS ? FWD_IDLE_MS : ms)) <= 0)
		return;
	if (pfd[0].revents & POLLIN)
		on_signals(f);
	if ((pfd[1].revents & POLLIN) && f->q->be->wake(f->q) == -1) {
		say_err("%s: the spool cannot be watched any more; stopping",
		    f->q->name);
		f->stop = true;
	}
}

/* Jobs waiting locally: the claimed batch and what the spool has queued. */
size_t
fwd_waiting(struct fwd *f, int n)
{
	struct counts c;

	f->q->be->counts(f->q, &c);
	return c.queued + (size_t)n;
}
