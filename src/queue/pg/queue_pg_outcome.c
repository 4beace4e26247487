/*
 * queue_pg_outcome.c: outcomes, batched into one statement that takes only
 * rows whose token and worker still match, and the attempt's log with
 * them.
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
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/queue.h"
#include "queue/pg/pgq.h"

/* ---- outcomes ---- */

/*
 * Record the pending outcomes in one statement: each where its token still
 * matches and the row still names us (renew), with its log.  A job that
 * ends (done, failed) moves to chute.finished with the attempt's log in
 * its row: a DELETE of the hot row, which touches no index, and an
 * append, where an UPDATE of a state its indexes name was a new row
 * version and an entry in each (fleet.md, "Version 5").  Each row is
 * found by one probe of jobs_claimed per token (a LATERAL subquery the
 * planner cannot flatten, so no plan but that one), then changed by its
 * ctid, its outcome taken from its token's place in the arrays: no join
 * for the planner to choose.  The generic plan of a join chose, whenever
 * the statistics said the table was nearly empty (as a drained queue's
 * are), a nested loop of the queue's every claim by the batch, 40 ms a
 * batch of 200; of a token = ANY(), a scan of every claim of the queue
 * (the planner takes the array's probes for dearer than one range); of
 * the ctids with the queue and state beside them, the same scan.  So the
 * change names no indexed column but the ctid, and its guards (a ctid is
 * unique in one table only: see the claim) are the worker and the token
 * at that place.  The tokens are sent in ascending order (flush_send),
 * so a token's place is a binary search (width_bucket), where
 * array_position() read the array from its start for every row: a batch
 * of 250 cost 30,000 comparisons, 5% of the server's time (perf).  The
 * reply is each changed row's place, so the worker finds its pending
 * outcome without a search either.  A refusal means someone else decides
 * that job now; it is said, and nothing else is done.  A row of
 * chute.finished already holding an ending job's ID is a stray (planted
 * by a role that shares ours): the job's end replaces it
 * (PG_FINISHED_STRAY) and the reply names it, where its unique
 * violation failed the whole batch, every time it was sent.  Each
 * outcome's `cur->STATE` line is said once the reply is in (flush_take),
 * never before: a batch that fails claims nothing.  The statement is
 * sent
 * without waiting for it (flush_send): the owner goes on giving workers
 * their next jobs while the server commits, and the result is taken when
 * it comes (pq_wake) or before the next statement (await_outcomes).  Until then
 * the outcomes stay pending: their leases are renewed, and a lost
 * connection sends them again.
 */
#define K	"width_bucket(j.token, $3::bigint[])"	/* the row's outcome */
#define HIT(f)	"j.ctid = ANY (ARRAY(SELECT ctid FROM hit WHERE " f "))" \
		" AND j.worker = $9 AND j.token = ($3::bigint[])[" K "]"
/*
 * FLUSH_SQL(KEEP, FIN, DROP, LOGS, STRAYS): the statement, in four forms.  The plain
 * one (flush_sql) is every batch's; a stray row under an ending job's ID
 * (in chute.finished, or in chute.logs ahead of its sequence) fails it
 * with unique_violation, and that batch is sent again at once in the
 * form that replaces such rows and names them (flush_sql_stray).  The
 * ON CONFLICT and the RETURNING it needs cost every job about 3 us of
 * the server's CPU when every batch paid them (persistent-2x2, 100,000
 * jobs: 31 against 28), for rows only a role sharing ours can plant.
 * A queue that keeps done or failed jobs 0 (chute.queues, version 9:
 * $10, the states not kept, pgq_dropped) has the forms that leave those
 * jobs out of chute.finished (KEEP) and delete their payloads and the
 * logs of their earlier attempts (DROP), each end told on
 * PG_ENDED_CHANNEL for `chute wait` (pg.h); a queue that keeps both
 * sends the plain form, as before, at the same cost.
 */
#define FLUSH_SQL(KEEP, FIN, DROP, LOGS, STRAYS) \
    /* Each token's row: one probe of jobs_claimed (queue, token) each. */ \
    "WITH hit AS MATERIALIZED (SELECT x.ctid, o.t IN ('done', 'failed')" \
    " AS ends FROM unnest($3::bigint[], $4::text[]) AS o(token, t)" \
    " CROSS JOIN LATERAL (SELECT ctid FROM chute.live x" \
    " WHERE x.queue = $1 AND x.token = o.token AND x.state = 'cur'" \
    " OFFSET 0) x)," \
    /* done and failed: out of chute.live, appended to chute.finished. */ \
    " gone AS (DELETE FROM chute.live j WHERE " HIT("ends") \
    " RETURNING j.id, j.attempts, j.size, j.created, j.claimed," \
    " j.priority, j.key, " K " AS k)," \
    " fin AS (INSERT INTO chute.finished (" PG_FINISHED_COLS ", log)" \
    " SELECT $1, id, ($4::text[])[k], now() + ($5::bigint[])[k] *" \
    " interval '1 millisecond', attempts - CASE WHEN ($6::boolean[])[k]" \
    " THEN 0 ELSE 1 END, ($7::text[])[k], size, created, claimed," \
    " priority, key," \
    " CASE WHEN ($8::text[])[k] <> '' THEN decode(($8::text[])[k], 'hex')" \
    " END FROM gone" KEEP FIN ")" DROP "," \
    /* defer, or new (handed back): the row stays, its log in chute.logs. */ \
    " rec AS (UPDATE chute.live j SET state = ($4::text[])[" K "]," \
    " run_at = CASE ($4::text[])[" K "] WHEN 'new' THEN j.run_at" \
    " ELSE now() + ($5::bigint[])[" K "] * interval '1 millisecond' END," \
    " attempts = j.attempts - CASE WHEN ($6::boolean[])[" K "] THEN 0" \
    " ELSE 1 END, last = ($7::text[])[" K "], token = NULL, worker = NULL," \
    " lease_until = NULL WHERE " HIT("NOT ends") " RETURNING j.id)," \
    /* A refused outcome's log is kept too, as before: chute.logs. */ \
    " logged AS (INSERT INTO chute.logs (queue, id, body)" \
    " SELECT $1, o.id, decode(o.log, 'hex') FROM unnest($2::text[]," \
    " $8::text[]) WITH ORDINALITY AS o(id, log, n) WHERE o.log <> ''" \
    " AND o.n NOT IN (SELECT k FROM gone)" LOGS ")" \
    /* \
     * rec's places by ID: its RETURNING sees the row as updated, token \
     * NULL, whose place (K) was NULL, and every defer or hand-back was \
     * said refused though it was recorded.  A job is in one outcome of a \
     * batch at most: its row stays ours, cur, until the batch commits. \
     */ \
    " SELECT o.n, NULL::text FROM unnest($2::text[]) WITH ORDINALITY AS" \
    " o(id, n) WHERE o.id IN (SELECT id FROM rec)" \
    " UNION ALL SELECT k, NULL FROM gone" STRAYS
/* Which rows replaced a stray one: only those are updated, and an
 * updated row's version carries our transaction's lock in xmax. */
#define FIN_STRAY	PG_FINISHED_STRAY " RETURNING id, xmax <> '0'::xid AS stray"
#define STRAYS		" UNION ALL SELECT NULL, id FROM fin WHERE stray"
#define NOT_KEPT(k)	"($4::text[])[" k "] = ANY ($10::text[])"
#define KEEP		" WHERE NOT " NOT_KEPT("k")
#define DROP \
    ", dropped AS (DELETE FROM chute.payloads x USING gone WHERE" \
    " x.queue = $1 AND x.id = gone.id AND " NOT_KEPT("gone.k") \
    " RETURNING pg_notify('" PG_ENDED_CHANNEL "', 'ended/' ||" \
    " ($4::text[])[gone.k] || '/' || $1 || '/' || x.id))," \
    " unlogged AS (DELETE FROM chute.logs x USING gone WHERE" \
    " x.queue = $1 AND x.id = gone.id AND " NOT_KEPT("gone.k") ")"
static const char flush_sql[] = FLUSH_SQL("", "", "", "", "");
static const char flush_sql_stray[] = FLUSH_SQL("", FIN_STRAY, "",
    PG_LOGS_STRAY, STRAYS);
static const char flush_sql_drop[] = FLUSH_SQL(KEEP, "", DROP, "", "");
static const char flush_sql_drop_stray[] = FLUSH_SQL(KEEP, FIN_STRAY, DROP,
    PG_LOGS_STRAY, STRAYS);
#undef FIN_STRAY
#undef STRAYS
#undef NOT_KEPT
#undef KEEP
#undef DROP
#undef FLUSH_SQL
#undef HIT
#undef K

/*
 * The states the queue keeps 0 (queue_pg_retain.c read them), as the
 * text[] of flush_sql_drop, or NULL: it keeps both (the plain form).
 */
static const char *
dropped(const struct pgq *pq)
{
	if (pq->keep.done == 0)
		return pq->keep.failed == 0 ? "{done,failed}" : "{done}";
	return pq->keep.failed == 0 ? "{failed}" : NULL;
}

/* Pending outcomes in the order of their tokens (flush_sql's search). */
static int
by_token(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->tok < y->tok ? -1 : x->tok > y->tok;
}

/* Send the pending outcomes' statement: 0, or -1 (they stay pending). */
static int
flush_send(struct pgq *pq)
{
	struct pg_tarr a[7] = { { 0 } };
	const char *p[10], *sql;
	char d[24];
	int rc = 0;

	/* Also after a send that failed: those pending may have grown. */
	qsort(pq->pend, pq->npend, sizeof(*pq->pend), by_token);
	for (size_t i = 0; i < pq->npend; i++) {
		struct pending *o = &pq->pend[i];

		pg_tarr_add(&a[0], o->id);
		pg_tarr_add(&a[1], o->token);
		pg_tarr_add(&a[2], o->to);
		snprintf(d, sizeof(d), "%lld", (long long)o->delay);
		pg_tarr_add(&a[3], d);
		pg_tarr_add(&a[4], o->counted ? "t" : "f");
		pg_tarr_add(&a[5], o->last);
		pg_tarr_add(&a[6], o->log ? o->log : "");
	}
	p[0] = pq->pg.queue;
	for (int k = 0; k < 7; k++)
		if ((p[k + 1] = pg_tarr_end(&a[k])) == NULL)
			rc = -1;
	p[8] = pq->worker;
	/* libpq copies the parameters into its buffer: a[] can go. */
	pq->flush_stray = pq->stray_next;
	if ((p[9] = dropped(pq)) != NULL)
		sql = pq->flush_stray ? flush_sql_drop_stray : flush_sql_drop;
	else
		sql = pq->flush_stray ? flush_sql_stray : flush_sql;
	if (rc == 0 && pg_send(&pq->pg, sql, p[9] != NULL ? 10 : 9, NULL, p,
	    NULL, NULL) == 0) {
		pq->flushing = true;
		pq->nsent = pq->npend;
	} else {
		rc = -1;
		pgq_failed(pq, "record outcomes");
	}
	for (int k = 0; k < 7; k++)
		free(a[k].p);
	return rc;
}

/*
 * The line of a recorded outcome, said once its commit is known (the
 * owner leaves it to us: queue.says_outcomes).  The owner used to say it
 * when the outcome was queued, and a batch that then failed left a
 * `cur->done` in the journal for a job still in cur.
 */
static void
said_recorded(const struct pending *o)
{
	char next[40];

	if (strcmp(o->to, "defer") == 0) {
		iso_time(o->when, next, sizeof(next));
		say("job=%s cur->%s attempt=%d %s next=%s", vis_id(o->id), o->to,
		    o->attempt, o->last, next);
	} else
		say("job=%s cur->%s attempt=%d %s", vis_id(o->id), o->to,
		    o->attempt, o->last);
	if (o->stray)
		say_warn("job=%s: a stray row of chute.finished held its ID "
		    "(not chute's: a job is in one table at a time): replaced "
		    "by this outcome, its last saying so", vis_id(o->id));
}

/*
 * The reply's rows: each taken outcome's place (k), and the ID of each
 * that replaced a stray row of chute.finished (PG_FINISHED_STRAY).
 */
static void
flush_mark(struct pgq *pq, PGresult *r, size_t n)
{
	for (int t = 0; PQnfields(r) == 2 && t < PQntuples(r); t++) {
		long k = strtol(PQgetvalue(r, t, 0), NULL, 10);

		if (k >= 1 && (size_t)k <= n)
			pq->pend[k - 1].took = true;
		for (size_t i = 0; PQgetisnull(r, t, 0) && i < n; i++)
			if (strcmp(pq->pend[i].id, PQgetvalue(r, t, 1)) == 0)
				pq->pend[i].stray = true;
	}
}

/* The result r of the statement in flight (NULL: none came): 0, or -1. */
static int
flush_take(struct pgq *pq, PGresult *r)
{
	size_t n = pq->nsent;
	ExecStatusType st;

	pq->flushing = false;
	pq->nsent = 0;
	st = pg_result(&pq->pg, r);
	if (st == PGRES_FATAL_ERROR && !pq->flush_stray &&
	    strcmp(pq->pg.state, PG_UNIQUE_VIOLATION) == 0) {
		/* A stray row (FLUSH_SQL): the same batch again, at once, in
		 * the form that replaces it.  Nothing was said yet. */
		PQclear(r);
		pq->stray_next = true;
		pq->wake = true;
		return 0;
	}
	if (st != PGRES_TUPLES_OK) {
		PQclear(r);
		pgq_failed(pq, "record outcomes");
		/* Kept: sent again after a reconnect, or after a pause. */
		pq->flush_again = mono_ms() + RETRY_MS;
		return -1;
	}
	pq->stray_next = false;
	flush_mark(pq, r, n);
	for (size_t i = 0; i < n; i++) {
		if (pq->pend[i].took)
			said_recorded(&pq->pend[i]);
		else {
			say_warn("job=%s outcome %s refused: its claim was lost "
			    "(cancelled, or recovered after its lease); "
			    "the job's current state stands",
			    vis_id(pq->pend[i].id), pq->pend[i].to);
			pgq_unheld(pq, pq->pend[i].id);	/* its handler ended */
		}
		free(pq->pend[i].log);
	}
	if (PQntuples(r) > 0)
		pgq_moved(pq);
	PQclear(r);
	memmove(pq->pend, pq->pend + n, (pq->npend - n) * sizeof(*pq->pend));
	pq->npend -= n;
	pq->wake = true;	/* slots freed: there may be work waiting */
	return 0;
}

int
pgq_await_outcomes(struct pgq *pq)
{
	if (pq->claiming && pq->claim_take(pq, pg_await(&pq->pg)) == -1 &&
	    !pq->up)
		return -1;
	if (!pq->flushing)
		return 0;
	return flush_take(pq, pg_await(&pq->pg));
}

PGresult *
pgq_exec(struct pgq *pq, const char *sql, int n, const char *const *p, bool bin)
{
	if (pgq_await_outcomes(pq) == -1 && !pq->up)
		return NULL;
	return bin ? pg_exec_bin(&pq->pg, sql, n, p) :
	    pg_exec(&pq->pg, sql, n, p);
}

int
pgq_cmd(struct pgq *pq, const char *sql, int n, const char *const *p)
{
	PGresult *r = pgq_exec(pq, sql, n, p, false);
	int rc = r == NULL ? -1 : 0;

	PQclear(r);
	return rc;
}

int
pgq_flush(struct pgq *pq)
{
	if (pgq_await_outcomes(pq) == -1)
		return -1;
	if (pq->npend == 0)
		return 0;
	if (flush_send(pq) == -1)
		return -1;
	return pgq_await_outcomes(pq);
}

/*
 * The first keep bytes of a log of n, hex-encoded for decode(), with a
 * marker after them if n was more.
 */
static char *
hex_log(const char *raw, size_t keep, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	static const char marker[] = "\n@chute log truncated: the first "
	    "bytes of the attempt are kept\n";
	size_t mark = n > keep ? sizeof(marker) - 1 : 0, i;
	char *out;

	if ((out = malloc(2 * (keep + mark) + 1)) == NULL)
		return NULL;
	for (i = 0; i < keep + mark; i++) {
		unsigned char ch = i < keep ? raw[i] : marker[i - keep];

		out[2 * i] = hex[ch >> 4];
		out[2 * i + 1] = hex[ch & 15];
	}
	out[2 * i] = '\0';
	return out;
}

/*
 * The attempt's log, read back (capped) and hex-encoded for decode(): what
 * its pipe still holds first (the handler has ended; a child it left
 * running may still write, so this too is bounded).
 */
static char *
read_log(struct pgq *pq, struct claim *c)
{
	struct stat st;
	size_t n, keep;
	char *raw, *out;
	int fd;

	if (c->logmem)
		return hex_log(c->logbuf, c->loglen > PG_LOG_CAP ? PG_LOG_CAP :
		    c->loglen, c->loglen);
	if ((fd = pumps_drain(pq->pumps, c)) == -1 || fstat(fd, &st) == -1)
		return NULL;
	n = (size_t)st.st_size;
	keep = n > PG_LOG_CAP ? PG_LOG_CAP : n;
	if ((raw = malloc(keep + 1)) == NULL)
		return NULL;
	if (pread(fd, raw, keep, 0) != (ssize_t)keep) {
		free(raw);
		return NULL;
	}
	out = hex_log(raw, keep, n);
	free(raw);
	return out;
}

/* Here, not in queue_pg_lease.c: the outcomes note them, and the
 * objects' arrows go one way (tests/build/layers.sh). */
void
pgq_unheld(struct pgq *pq, const char *id)
{
	if (pq->nunheld == pq->capunheld) {
		size_t cap = pq->capunheld ? pq->capunheld * 2 : 8;
		void *v = reallocarray(pq->unheld, cap, sizeof(*pq->unheld));

		if (v == NULL)
			return;	/* the lease's end releases them */
		pq->unheld = v;
		pq->capunheld = cap;
	}
	strlcpy(pq->unheld[pq->nunheld++], id, sizeof(*pq->unheld));
}

int
pq_record(struct queue *q, struct claim *c, const struct outcome *out,
    msec_t when)
{
	struct pgq *pq = (struct pgq *)q;
	struct pending *o;

	if (c->token == 0) {
		pgq_unheld(pq, c->id);	/* lost, and its handler ended */
		errno = ESTALE;
		return -1;
	}
	if (pq->npend == pq->cappend) {
		size_t cap = pq->cappend ? pq->cappend * 2 : 64;
		struct pending *v = reallocarray(pq->pend, cap, sizeof(*v));

		if (v == NULL)
			return -1;	/* errno ENOMEM: the owner retries */
		pq->pend = v;
		pq->cappend = cap;
	}
	o = &pq->pend[pq->npend++];
	memset(o, 0, sizeof(*o));
	strlcpy(o->id, c->id, sizeof(o->id));
	o->tok = c->token;
	snprintf(o->token, sizeof(o->token), "%llu",
	    (unsigned long long)c->token);
	o->to = state_names[out->to];
	o->delay = out->delay;
	o->counted = out->counted;
	strlcpy(o->last, out->why, sizeof(o->last));
	o->attempt = c->attempt;
	o->when = when;
	o->log = read_log(pq, c);
	o->since = mono_ms();
	pq->done_n++;
	return 0;
}

void
pq_release(struct queue *q, struct claim *c)
{
	struct pgq *pq = (struct pgq *)q;
	char name[NAME_MAX + 8];

	for (size_t i = 0; i < pq->nheld; i++)
		if (pq->held[i] == c) {
			pq->held[i] = pq->held[--pq->nheld];
			break;
		}
	if (c->fd != -1)
		close(c->fd);
	pumps_drop(pq->pumps, c);
	if (c->logfd != -1)
		close(c->logfd);
	free(c->logbuf);
	free(c->payload);
	/* An --inline worker's job had no local copy: nothing to remove. */
	if (!pq->c.inline_jobs)
		unlinkat(pq->dirfd, c->id, 0);
	if (!pq->c.persistent) {
		snprintf(name, sizeof(name), ".%s.log", c->id);
		unlinkat(pq->dirfd, name, 0);
	}
	free(c->path);
	memset(c, 0, sizeof(*c));
	c->fd = c->logfd = -1;
}

msec_t
pq_commit(struct queue *q, bool busy)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t mono;

	/* The reply to the statement in flight wakes the loop: then. */
	if (pq->npend == 0 || (pq->up && (pq->flushing || pq->claiming)))
		return INT64_MAX;
	if (!pq->up)
		return pq->reconnect_at;
	mono = mono_ms();
	if (mono < pq->flush_again)
		return pq->flush_again;
	if (busy && pq->npend < PG_GROUP_MAX &&
	    mono - pq->pend[0].since < PG_GROUP_MS)
		return pq->pend[0].since + PG_GROUP_MS;
	pgq_arm(pq, mono);
	if (flush_send(pq) == -1)
		return pq->up ? mono + RETRY_MS : pq->reconnect_at;
	return INT64_MAX;
}
