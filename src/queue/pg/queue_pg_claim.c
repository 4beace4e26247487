/*
 * queue_pg_claim.c: claims (FOR UPDATE SKIP LOCKED, a lease and a fencing
 * token per row), the jobs' local copies, the look-ahead, a pause; the
 * leases once held are queue_pg_lease.c's.
 */
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/pump.h"
#include "base/reaper.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/queue.h"
#include "queue/pg/pgq.h"

/* ---- local copies ---- */

/*
 * A new file dir/name, open for mode; a leftover of an earlier claim of the
 * same job (one whose handler was stopped as its lease ran out) is
 * replaced.
 */
static int
fresh(struct pgq *pq, const char *name, int mode)
{
	int fd, flags = mode | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;

	if ((fd = openat(pq->dirfd, name, flags, 0600)) == -1 &&
	    errno == EEXIST && unlinkat(pq->dirfd, name, 0) == 0)
		fd = openat(pq->dirfd, name, flags, 0600);
	return fd;
}

/*
 * dir/ID with the payload, opened read-only for the handler's stdin.  A
 * persistent worker is only given the path (worker_send), so there it is
 * not opened again: two system calls per job fewer, and c->fd stays -1.
 */
static int
write_job(struct pgq *pq, struct claim *c, const char *body, size_t len)
{
	int fd;

	fd = fresh(pq, c->id, O_WRONLY);
	if (fd == -1)
		return -1;
	if (write_all(fd, body, len) == -1 || close(fd) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	if (!pq->c.persistent &&
	    (c->fd = openat(pq->dirfd, c->id, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if (asprintf(&c->path, "%s/%s", pq->dir, c->id) == -1) {
		c->path = NULL;
		return -1;
	}
	return 0;
}

/*
 * An --inline worker gets the payload on its pipe: kept in memory until
 * the claim is released, and no local file at all (the three system
 * calls of write_job and release's unlink, and an inode, per job).
 */
static int
keep_job(struct claim *c, const char *body, size_t len)
{
	if ((c->payload = malloc(len > 0 ? len : 1)) == NULL)
		return -1;
	memcpy(c->payload, body, len);
	c->size = (off_t)len;
	return 0;
}

/*
 * The attempt's log, fresh.  Under --persistent only chute writes to it
 * (its own short lines: the worker's stderr stays the owner's), so it is
 * kept in memory (claim.logmem): a file in dir costs an inode of the
 * local file system per job, and on ext4 without a journal each new
 * inode is searched for past every inode freed in the last 5 to 10
 * seconds, which at a few thousand jobs a second made the worker's CPU
 * per job grow with the length of a run (fleet.md, Local copies); a
 * memfd, which was next, still cost six system calls per job.  An
 * exec'd handler writes its output to a pipe, which pump.c's thread reads
 * into dir/.ID.log, keeping what the database keeps and no more (chute's
 * own lines of the attempt go the same way, in order).
 */
static void
open_log(struct pgq *pq, struct claim *c)
{
	char name[NAME_MAX + 8];
	int fd;

	c->logend = 0;
	c->logerr = 0;
	c->logfd = -1;
	c->logbuf = NULL;
	c->loglen = 0;
	if ((c->logmem = pq->c.persistent))
		return;
	snprintf(name, sizeof(name), ".%s.log", c->id);
	if ((fd = fresh(pq, name, O_RDWR | O_APPEND)) == -1 ||
	    (c->logfd = pumps_add(pq->pumps, c, fd)) == -1)
		c->logerr = errno;
}

/* ---- claiming ---- */

/*
 * Claim up to n jobs due now, oldest first, with a lease and a fresh
 * fencing token each, and their payloads, in one round trip (binary
 * results: the payload's bytes as they are).  The picking is SKIP LOCKED,
 * so workers never wait for one another.  The claims are appended to the
 * prefetched ones (pgq_claim_take).
 *
 * Sent without waiting for its reply (claim_send), as the outcomes are:
 * the loop goes on handing out the jobs claimed ahead while the server
 * claims more, and takes the reply when it comes (pq_wake) or before the
 * next statement (pgq_await_outcomes).  A worker that waited for each
 * claim left its slots idle meanwhile: its handlers finished their jobs
 * and found nothing handed to them until the reply came.
 */
/*
 * Prepared, and planned once for every LIMIT (pg_conn.c): so the
 * rows picked are updated by their ctid (a row we hold locked keeps
 * it) and each payload is fetched by its key, where a join would be
 * planned for a guessed number of rows and could scan both tables.
 * A ctid is unique in one table only: where tables inherit from
 * chute.live, rows of theirs at a picked ctid are updated too, so the
 * update repeats the pick's conditions (never a finished job or
 * another's claim), and its reply may hold more rows than asked for
 * (queue_pg_take hands them back).  A paused queue gives nothing:
 * the pick's NOT EXISTS names only parameters, so it is planned as
 * a one-time filter, one lookup of chute.queues' key per claim
 * before any row of chute.live is read (fleet.md, "Pause").
 */
/*
 * The rows that may be claimed are those of live_ready (schema version
 * 8): waiting and not parked (a keyed job whose key is at its limit is
 * parked, off this index, by the triggers of fleet.md's "Priorities, keys
 * and limits"), taken in the order of the index: priority, then run_at.
 */
#define READY	"queue = $1 AND state IN ('new', 'defer') AND NOT parked"
#define CLAIM_SQL(PICK, ORDER) \
    "WITH " PICK "," \
    " claimed AS (UPDATE chute.live j SET state = 'cur'," \
    " attempts = j.attempts + 1, token = nextval('chute.fence')," \
    " worker = $3, lease_until = now() + $4::bigint * interval" \
    " '1 millisecond', cancel = false, claimed = now()" \
    " WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked))" \
    " AND j.queue = $1 AND j.state IN ('new', 'defer') AND NOT j.parked" \
    " AND j.run_at <= now()" \
    " RETURNING j.id, j.token, j.attempts, j.run_at, j.priority)" \
    " SELECT c.id, c.token, c.attempts, (SELECT p.body FROM" \
    " chute.payloads p WHERE p.queue = $1 AND p.id = c.id)" \
    " FROM claimed c ORDER BY " ORDER
/* Nothing from a paused queue, nor from a limited one (claim_lim_sql). */
#define NOT_PAUSED	" AND NOT EXISTS (SELECT FROM chute.queues q" \
    " WHERE q.queue = $1 AND (q.paused OR q.limited))"
static const char claim_sql[] = CLAIM_SQL(
    "picked AS MATERIALIZED (SELECT ctid FROM chute.live"
    " WHERE " READY " AND run_at <= now()" NOT_PAUSED
    " ORDER BY priority DESC, run_at, id LIMIT $2::integer"
    " FOR UPDATE SKIP LOCKED)", "c.priority DESC, c.run_at, c.id");
/*
 * No starvation: one claim in SCHED_FIFO_EVERY of each worker takes the
 * oldest jobs that may start, whatever their priority, in the order of
 * live_due (the same rows as live_ready, by age).
 */
static const char claim_fifo_sql[] = CLAIM_SQL(
    "picked AS MATERIALIZED (SELECT ctid FROM chute.live"
    " WHERE " READY " AND run_at <= now()" NOT_PAUSED
    " ORDER BY run_at, id LIMIT $2::integer"
    " FOR UPDATE SKIP LOCKED)", "c.run_at, c.id");
#undef CLAIM_SQL
/*
 * A queue with a rule for the whole queue or a rate (chute.queues.limited,
 * which the look-ahead reads): the claim decides them itself, in the
 * function of schema version 8, the same columns back.
 */
static const char claim_lim_sql[] =
    "SELECT * FROM chute.claim_limited($1, $2::integer, $3, $4::bigint,"
    " $5::boolean)";

/* Send the claim of n rows: 0, or -1 (the connection's state says why). */
static int
claim_send(struct pgq *pq, int n, msec_t mono)
{
	char nb[16], lease[24];
	bool fifo = ++pq->nclaims % SCHED_FIFO_EVERY == 0;
	const char *p[5] = { pq->pg.queue, nb, pq->worker, lease,
	    fifo ? "t" : "f" };

	snprintf(nb, sizeof(nb), "%d", n);
	snprintf(lease, sizeof(lease), "%lld", (long long)pq->lease);
	/* One claim in SCHED_FIFO_EVERY in age order (claim_fifo_sql). */
	if (pg_send_bin(&pq->pg, pq->limited ? claim_lim_sql : fifo ?
	    claim_fifo_sql : claim_sql, pq->limited ? 5 : 4, p) == -1)
		return -1;
	pq->claiming = true;
	pq->claim_want = n;
	pq->claim_sent = mono;
	return 0;
}

static void	look_ahead(struct pgq *pq, msec_t mono);

int
pgq_claim_take(struct pgq *pq, PGresult *r)
{
	int want = pq->claim_want, got;
	msec_t mono = mono_ms();

	pq->claiming = false;
	if (pg_result(&pq->pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		pgq_failed(pq, "claim");
		return -1;
	}
	got = queue_pg_take(&pq->q, r, want);
	PQclear(r);
	if (got > 0) {
		pgq_moved(pq);
		pgq_set_paused(pq, false, "");	/* a paused queue gives none */
	}
	if (got > 0 && pq->renew_sent == 0)
		pq->renew_sent = pq->claim_sent;	/* the leases date from then */
	else if (got == want)
		pq->wake = true;	/* there may be more */
	else if (pq->up)
		look_ahead(pq, mono);
	if (got > 0)
		pgq_tell_reaper(pq);	/* armed before any of them starts */
	return got;
}

/*
 * Claims of a reply that will not run, by token: tok[0, nback) were more
 * rows than asked for and go back to new, their attempt not counted;
 * tok[nback, n) go to failed, last saying why[k - nback] (their IDs
 * cannot name a file here), with a line in their log.
 */
static void
unclaim(struct pgq *pq, const uint64_t *tok, int nback, int n,
    const char *const *why)
{
	static const char sql[] =
	    "WITH back AS (UPDATE chute.live SET state = 'new',"
	    " attempts = attempts - 1, token = NULL, worker = NULL,"
	    " lease_until = NULL WHERE queue = $1 AND state = 'cur'"
	    " AND token = ANY($2::bigint[])),"
	    " bad AS (DELETE FROM chute.live j USING unnest($3::bigint[],"
	    " $4::text[]) AS o(token, why) WHERE j.queue = $1"
	    " AND j.state = 'cur' AND j.token = o.token RETURNING j.id,"
	    " j.attempts, j.size, j.created, j.claimed, j.priority, j.key,"
	    " 'refused: ' || o.why AS last),"
	    " fin AS (INSERT INTO chute.finished (" PG_FINISHED_COLS ")"
	    " SELECT $1, id, 'failed', now(), attempts, last, size, created,"
	    " claimed, priority, key FROM bad" PG_FINISHED_STRAY ")"
	    " INSERT INTO chute.logs (queue, id, body) SELECT $1, id,"
	    " convert_to('@chute ' || to_char(now() AT TIME ZONE 'UTC',"
	    " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\" ') || last || E'\\n', 'UTF8')"
	    " FROM bad" PG_LOGS_STRAY;
	struct pg_tarr b[3] = { { 0 } };
	const char *p[5] = { pq->pg.queue };
	char t[24];

	for (int i = 0; i < n; i++) {
		snprintf(t, sizeof(t), "%llu", (unsigned long long)tok[i]);
		pg_tarr_add(&b[i >= nback], t);
		if (i >= nback)
			pg_tarr_add(&b[2], why[i - nback]);
	}
	for (int k = 0; k < 3; k++)
		p[k + 1] = pg_tarr_end(&b[k]);
	if (n > 0 && pq->up && p[1] && p[2] && p[3] && pgq_cmd(pq, sql, 4, p) ==
	    -1)
		pgq_failed(pq, "unclaim");
	for (int k = 0; k < 3; k++)
		free(b[k].p);
}

int
queue_pg_take(struct queue *q, PGresult *r, int n)
{
	struct pgq *pq = (struct pgq *)q;
	int room = (int)pq->capahead - pq->nahead, rows, more, nun = 0, nbad;
	uint64_t *tok;
	const char **why;

	if (n > room)
		n = room;
	if ((rows = pg_rows(r, 4, n, &more)) == -1) {
		say_warn("%s: claim: a reply of %d columns, not 4: its rows go back "
		    "after their leases", pq->pg.name, PQnfields(r));
		return 0;
	}
	if (pq->first + pq->nahead + rows > (int)pq->capahead) {
		memmove(pq->ahead, pq->ahead + pq->first, (size_t)pq->nahead *
		    sizeof(pq->ahead[0]));
		pq->first = 0;
	}
	tok = calloc((size_t)(rows + more) + 1, sizeof(*tok));
	why = calloc((size_t)rows + 1, sizeof(*why));
	if (tok != NULL)
		for (int i = rows; i < rows + more; i++)
			if (pg_be_int(r, i, 1, 8, &tok[nun]) == 0)
				nun++;
	if (more > 0)
		say_warn("%s: claim: %d rows for %d asked: %d handed back", pq->pg.name,
		    rows + more, n, nun);
	nbad = nun;
	for (int i = 0; i < rows; i++) {
		struct claim *c = &pq->ahead[pq->first + pq->nahead];
		const char *bad;
		int k;

		memset(c, 0, sizeof(*c));
		c->fd = c->logfd = -1;
		if ((k = pg_claim_row(r, i, c, &bad)) != 0) {
			say_warn("job=%s claimed: %s: %s", vis_id(PQgetvalue(r, i, 0)),
			    bad, k == 1 ? "failed, never run" : "it goes back "
			    "after its lease");
			if (k == 1 && tok != NULL && why != NULL) {
				why[nbad - nun] = bad;
				tok[nbad++] = c->token;
			}
			continue;
		}
		if (PQgetisnull(r, i, 3) || (pq->c.inline_jobs ?
		    keep_job(c, PQgetvalue(r, i, 3),
		    (size_t)PQgetlength(r, i, 3)) :
		    write_job(pq, c, PQgetvalue(r, i, 3),
		    (size_t)PQgetlength(r, i, 3))) == -1) {
			say_err("job=%s: no %s: %s; it goes back after its "
			    "lease", vis_id(c->id), pq->c.inline_jobs ?
			    "copy in memory" : "local copy", PQgetisnull(r, i, 3) ?
			    "no payload" : strerror(errno));
			if (c->fd != -1)
				close(c->fd);
			free(c->path);
			free(c->payload);
			continue;
		}
		pq->nahead++;
	}
	if (tok != NULL && why != NULL)
		unclaim(pq, tok, nun, nbad, why);
	free(tok);
	free(why);
	return rows;
}

void
pgq_count_waiting(struct pgq *pq)
{
	static const char sql[] =
	    "SELECT (SELECT count(*) FROM (SELECT FROM chute.live"
	    " WHERE queue = $1 AND state IN ('new', 'defer') AND run_at <= now()"
	    " LIMIT $2::integer) d), (SELECT count(*) FROM (SELECT FROM"
	    " chute.live WHERE queue = $1 AND state IN ('new', 'defer')"
	    " AND run_at > now() LIMIT $2::integer) f)";
	char max[16];
	const char *p[2] = { pq->pg.queue, max };
	msec_t mono = mono_ms();
	PGresult *r;

	if (!pq->up || mono < pq->next_count)
		return;
	snprintf(max, sizeof(max), "%d", PG_COUNT_MAX);
	r = pgq_exec(pq, sql, 2, p, false);
	pq->next_count = mono + 100 * (mono_ms() - mono);
	if (pq->next_count < mono + PG_POLL_MS)
		pq->next_count = mono + PG_POLL_MS;
	if (r == NULL) {
		pgq_failed(pq, "count");
		return;
	}
	if (pg_rows(r, 2, 1, NULL) != 1) {
		PQclear(r);
		return;
	}
	pq->queued = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	pq->deferred = strtoull(PQgetvalue(r, 0, 1), NULL, 10);
	PQclear(r);
}

/*
 * The queue has (or no longer has) a rule the plain claim cannot decide:
 * claim with claim_lim_sql (or claim_sql) from now on, at once.
 */
static void
set_limited(struct pgq *pq, bool on)
{
	if (on == pq->limited)
		return;
	pq->limited = on;
	pq->wake = true;
	say("%s: queue %s %s", pq->pg.name, vis_id(pq->pg.queue), on ?
	    "has a rate or a rule for the whole queue: each claim decides "
	    "them, nothing claimed ahead" : "has no rate or rule for the "
	    "whole queue now: claims as before");
}

/*
 * When is the next job due (for the poll): one step down jobs_due, which
 * holds the parked jobs too, so that the worker wakes when a deferred
 * keyed job's time comes, and chute.keys_due admits it.  It
 * used to count every waiting row too, after every short claim: 36 counts
 * of 40,000 rows, 2.2 s of the server's CPU, while two workers drained
 * them in 4.5 s.  And is the queue paused (a short claim's other reason):
 * one lookup of chute.queues' key, NULL when it is not, so that a pause
 * whose notification was lost is seen by the next claim.
 */
static void
look_ahead(struct pgq *pq, msec_t mono)
{
	static const char sql[] =
	    "SELECT coalesce(extract(epoch FROM (SELECT run_at FROM chute.live"
	    " WHERE queue = $1 AND state IN ('new', 'defer') AND run_at > now()"
	    " ORDER BY run_at LIMIT 1) - now()) * 1000, -1)::bigint,"
	    " (SELECT coalesce(paused_by, '') FROM chute.queues"
	    " WHERE queue = $1 AND paused),"
	    " coalesce((SELECT limited FROM chute.queues WHERE queue = $1),"
	    " false), chute.keys_due($1)";
	const char *p[1] = { pq->pg.queue };
	PGresult *r = pgq_exec(pq, sql, 1, p, false);
	msec_t in;

	pq->next_poll = mono + pq->poll;
	if (r == NULL) {
		pgq_failed(pq, "look ahead");
		return;
	}
	if (pg_rows(r, 4, 1, NULL) != 1) {
		PQclear(r);
		return;
	}
	set_limited(pq, strcmp(PQgetvalue(r, 0, 2), "t") == 0);
	if (atoi(PQgetvalue(r, 0, 3)) > 0)
		pq->wake = true;	/* parked jobs whose time came, admitted */
	in = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	if (in >= 0 && mono + in + 1 < pq->next_poll)
		pq->next_poll = mono + in + 1;
	pgq_set_paused(pq, !PQgetisnull(r, 0, 1), PQgetvalue(r, 0, 1));
	PQclear(r);
	pgq_count_waiting(pq);
}

static void
hold(struct pgq *pq, struct claim *c)
{
	if (pq->nheld == pq->capheld) {
		size_t cap = pq->capheld ? pq->capheld * 2 : 16;
		struct claim **v = reallocarray(pq->held, cap, sizeof(*v));

		if (v == NULL)
			return;		/* not renewed: its lease runs out */
		pq->held = v;
		pq->capheld = cap;
	}
	pq->held[pq->nheld++] = c;
}

/*
 * How many claims to hold beyond the free slots: what this worker finishes
 * in the next PG_PREFETCH_MS at its recent rate, at least a slot's worth
 * (as before), at most --prefetch.  A fast worker thus claims in batches
 * large enough to amortise the round trip, while a slow one does not sit
 * on jobs another worker could start now.
 */
static int
target_ahead(struct pgq *pq, msec_t mono)
{
	msec_t span = mono - pq->done_t0;
	int t;

	if (span >= PG_PREFETCH_MS) {
		double r = pq->done_n * 1000.0 / (double)span;

		pq->rate = pq->rate == 0 ? r : (pq->rate + r) / 2;
		pq->done_n = 0;
		pq->done_t0 = mono;
	}
	/*
	 * A limited queue's claims start at once: a job claimed ahead would
	 * start later than the claim that counted it against a rate.
	 */
	if (pq->limited)
		return 0;
	t = (int)(pq->rate * PG_PREFETCH_MS / 1000);
	if (t < pq->slots)
		t = pq->slots;
	return t < pq->prefetch_max ? t : pq->prefetch_max;
}

int
pq_claim(struct queue *q, struct claim *const *c, int n)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t mono = mono_ms();
	int got = 0, want, ahead;

	pgq_arm(pq, mono);

	ahead = target_ahead(pq, mono);
	/*
	 * Not while a statement is in flight (one at a time): after the
	 * outcomes' reply, which wakes the loop, or the claim's own.
	 */
	if (pq->nahead <= ahead / 4 && pq->up && !pq->claiming &&
	    !pq->flushing && (pq->wake || mono >= pq->next_poll)) {
		want = n + ahead - pq->nahead;
		if ((size_t)(want + pq->nahead) > pq->capahead)
			want = (int)pq->capahead - pq->nahead;
		pq->wake = false;
		if (want <= 0)
			pq->wake = true;
		else if (claim_send(pq, want, mono) == -1)
			pgq_failed(pq, "claim");
		if (pq->next_renew == 0 || pq->next_renew > mono + pq->lease / 3)
			pq->next_renew = mono + pq->lease / 3;
	}
	/*
	 * A prefetched claim is only started under a lease renewed lately:
	 * after a pause (SIGSTOP, a suspended VM) renew first, and what the
	 * database no longer gives us is dropped (drop_ahead).
	 */
	pq->starved = true;
	if (pq->nahead > 0 && mono - pq->renew_sent >= pq->lease / 3) {
		if (!pq->up || pgq_renew(pq, mono) == -1)
			return 0;
	}
	got = 0;
	while (got < n && pq->nahead > 0) {
		*c[got] = pq->ahead[pq->first++];
		if (--pq->nahead == 0)
			pq->first = 0;
		open_log(pq, c[got]);
		hold(pq, c[got]);
		got++;
	}
	pq->starved = got < n;
	return got;
}

/* ---- a pause ---- */

void
pgq_hand_back(struct pgq *pq)
{
	static const char sql[] =
	    "UPDATE chute.live SET state = 'new', attempts = attempts - 1,"
	    " token = NULL, worker = NULL, lease_until = NULL"
	    " WHERE queue = $1 AND state = 'cur' AND token = ANY($2::bigint[])";
	struct pg_tarr b = { 0 };
	char t[24];
	const char *p[2] = { pq->pg.queue, NULL };

	pgq_await_outcomes(pq);	/* a claim in flight: its rows go back too */
	for (int i = pq->first; i < pq->first + pq->nahead; i++) {
		snprintf(t, sizeof(t), "%llu",
		    (unsigned long long)pq->ahead[i].token);
		pg_tarr_add(&b, t);
		pgq_forget_ahead(pq, &pq->ahead[i]);
	}
	p[1] = pg_tarr_end(&b);
	if (pq->nahead > 0 && pq->up && p[1] != NULL) {
		if (pgq_cmd(pq, sql, 2, p) == -1)
			pgq_failed(pq, "hand back");
		else
			pgq_moved(pq);
	}
	pq->nahead = pq->first = 0;
	free(b.p);
}

void
pgq_set_paused(struct pgq *pq, bool paused, const char *by)
{
	/*
	 * A claim in flight first: rows it brings were claimed before the
	 * pause (they go back with the rest), and its reply must not say
	 * "resumed" in the middle of this.
	 */
	if (paused && pq->claiming)
		pgq_await_outcomes(pq);
	if (paused == pq->paused)
		return;
	pq->paused = paused;
	if (!paused) {
		say("%s: queue %s resumed: claiming again", pq->pg.name,
		    vis_id(pq->pg.queue));
		pq->paused_by[0] = '\0';
		pq->wake = true;
		return;
	}
	vis_text(by, pq->paused_by, sizeof(pq->paused_by));
	say("%s: queue %s paused%s%s: no new claims; %zu running job(s) "
	    "finish%s", pq->pg.name, vis_id(pq->pg.queue), *by ? " by " : "",
	    pq->paused_by, pq->nheld, pq->nahead > 0 ? ", those claimed ahead "
	    "go back" : "");
	pgq_hand_back(pq);
}
