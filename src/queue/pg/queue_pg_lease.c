/*
 * queue_pg_lease.c: the leases a worker holds (queue_pg_claim.c takes
 * them): renewals and the worker's heartbeat, claims lost or handed back,
 * the reaper's deadline, handlers stopped before a lease runs out, expired
 * claims of other workers recovered, parked jobs whose time came admitted.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/reaper.h"
#include "base/util.h"
#include "queue/pg/pg.h"
#include "queue/queue.h"
#include "queue/pg/pgq.h"

/* ---- leases ---- */

/* Every token we answer for: running, prefetched, outcome not yet sent. */
static const char *
tokens(struct pgq *pq, struct pg_tarr *b)
{
	char t[24];

	for (size_t i = 0; i < pq->nheld; i++)
		if (pq->held[i]->token != 0) {
			snprintf(t, sizeof(t), "%llu",
			    (unsigned long long)pq->held[i]->token);
			pg_tarr_add(b, t);
		}
	for (int i = pq->first; i < pq->first + pq->nahead; i++) {
		snprintf(t, sizeof(t), "%llu",
		    (unsigned long long)pq->ahead[i].token);
		pg_tarr_add(b, t);
	}
	for (size_t i = 0; i < pq->npend; i++)
		pg_tarr_add(b, pq->pend[i].token);
	return pg_tarr_end(b);
}

void
pgq_lost(struct pgq *pq, struct claim *c, const char *why, bool now)
{
	c->token = 0;
	pq->c.cancelled(pq->c.arg, c->id, why, now);
}

/* Did the renewal's result give token back? */
static bool
token_back(PGresult *r, uint64_t token)
{
	for (int k = 0; k < PQntuples(r); k++)
		if (strtoull(PQgetvalue(r, k, 0), NULL, 10) == token)
			return true;
	return false;
}

void
pgq_forget_ahead(struct pgq *pq, struct claim *c)
{
	if (c->fd != -1)
		close(c->fd);
	if (!pq->c.inline_jobs)
		unlinkat(pq->dirfd, c->id, 0);
	free(c->path);
	free(c->payload);
}

/*
 * Prefetched claims the renewal did not give back (a worker frozen past
 * its lease: another worker has recovered them and may be running them)
 * are forgotten, never started.
 */
static void
drop_ahead(struct pgq *pq, PGresult *r)
{
	int j = pq->first;

	for (int i = pq->first; i < pq->first + pq->nahead; i++) {
		struct claim *c = &pq->ahead[i];

		if (token_back(r, c->token)) {
			pq->ahead[j++] = *c;
			continue;
		}
		say_warn("job=%s prefetched, then taken away (recovered after its "
		    "lease, or cancelled): not started", vis_id(c->id));
		pgq_unheld(pq, c->id);
		pgq_forget_ahead(pq, c);
	}
	pq->nahead = j - pq->first;
}

/*
 * The renewal is also the worker's heartbeat: its row in chute.workers
 * (made at the first connect, started then; made again if it was deleted
 * while we were away) gets seen = now(), in the same statement and
 * commit, and is sent every lease/3 whether we hold claims or not.  The
 * row's update touches no indexed column: heap-only (fleet.md, "Workers").
 */
static const char renew_sql[] =
    "WITH beat AS (INSERT INTO chute.workers AS w (worker, queue, host, pid,"
    " slots, version, lease_ms) VALUES ($4, $1, $5, $6::integer, $7::integer,"
    " $8, $3::bigint) ON CONFLICT (worker) DO UPDATE SET queue = $1,"
    " slots = $7::integer, version = $8, lease_ms = $3::bigint, seen = now(),"
    " stopped = NULL, started = CASE WHEN $9::boolean THEN now()"
    " ELSE w.started END)"
    " UPDATE chute.live SET lease_until = now() + $3::bigint *"
    " interval '1 millisecond' WHERE queue = $1 AND state = 'cur'"
    " AND token = ANY($2::bigint[]) AND worker = $4 RETURNING token";

int
pgq_renew(struct pgq *pq, msec_t mono)
{
	struct pg_tarr b = { 0 };
	char lease[24], slots[16];
	const char *p[9] = { pq->pg.queue, NULL, lease, pq->worker,
	    pq->host, pq->pid, slots, CHUTE_VERSION, pq->registered ? "f" : "t" };
	PGresult *r;

	pq->next_renew = mono + pq->lease / 3;
	/* A claim in flight first: its rows are renewed with the rest. */
	if (pgq_await_outcomes(pq) == -1 && !pq->up)
		return -1;
	if ((p[1] = tokens(pq, &b)) == NULL) {
		free(b.p);
		return -1;	/* out of memory: the next turn tries again */
	}
	snprintf(lease, sizeof(lease), "%lld", (long long)pq->lease);
	snprintf(slots, sizeof(slots), "%d", pq->nslots);
	r = pgq_exec(pq, renew_sql, 9, p, false);
	free(b.p);
	if (r == NULL) {
		pgq_failed(pq, "renew");
		return -1;
	}
	if (!pq->registered)
		pgq_moved(pq);		/* the views see a new worker at once */
	pq->registered = true;
	pq->renew_sent = mono;
	pgq_tell_reaper(pq);
	for (size_t i = 0; i < pq->nheld; i++) {
		struct claim *c = pq->held[i];

		if (c->token != 0 && !token_back(r, c->token))
			pgq_lost(pq, c, "its claim was taken away (cancelled, or "
			    "recovered after its lease)", false);
	}
	drop_ahead(pq, r);
	PQclear(r);
	return 0;
}

void
pgq_tell_reaper(struct pgq *pq)
{
	msec_t from = pq->nheld > 0 || pq->nahead > 0 ? pq->renew_sent : 0;

	if (from == pq->reaper_from)
		return;		/* told already */
	pq->reaper_from = from;
	reaper_deadline(from != 0 ? from + PGQ_REAPER_AT(pq->lease) -
	    mono_ms() : -1);
}

/*
 * Back from a stop past the reaper's deadline, with handlers running: they
 * were killed by it, not by us (as soon as it ran, if it was stopped too:
 * a whole host suspended).  One line says so; each job's own says the
 * lease was lost.
 */
static void
say_frozen(struct pgq *pq, msec_t mono)
{
	if (pq->nheld == 0 || !reaper_running() ||
	    mono < pq->renew_sent + PGQ_REAPER_AT(pq->lease))
		return;
	say_warn("%s: not renewed for %lld ms, past the reaper's deadline of "
	    "%lld ms (this worker was stopped or frozen): reaper pid=%ld has "
	    "killed the process groups of its %zu running job(s), whose "
	    "leases are lost", pq->pg.name, (long long)(mono - pq->renew_sent),
	    (long long)PGQ_REAPER_AT(pq->lease), (long)reaper_pid(), pq->nheld);
}

void
pgq_expire(struct pgq *pq, msec_t mono)
{
	if (pq->renew_sent == 0 || mono < pq->renew_sent + pq->lease * 5 / 6)
		return;
	say_frozen(pq, mono);
	for (size_t i = 0; i < pq->nheld; i++)
		if (pq->held[i]->token != 0)
			pgq_lost(pq, pq->held[i], "cannot renew its lease", true);
	for (int i = pq->first; i < pq->first + pq->nahead; i++)
		pgq_forget_ahead(pq, &pq->ahead[i]);
	pq->nahead = pq->first = 0;
	pq->renew_sent = 0;
	pgq_tell_reaper(pq);	/* no lease left to outlive: none */
}

/*
 * Parked jobs of keys whose time came (deferred, or submitted for later)
 * are admitted where their key has room, and keys without jobs are
 * forgotten (chute.keys_due, schema version 8); dependents held by the
 * cancel of a running job whose lease has run out are released
 * (chute.after_release_due, version 13: its worker died or froze, and its
 * reaper killed the handler): a statement of its own, after the
 * recovery's, whose triggers it must see.
 */
static void
keys_due(struct pgq *pq)
{
	const char *p[1] = { pq->pg.queue };
	PGresult *r = pgq_exec(pq, "SELECT chute.keys_due($1),"
	    " chute.after_release_due($1)", 1, p, false);

	if (r == NULL) {
		pgq_failed(pq, "admit");
		return;
	}
	if (pg_rows(r, 1, 2, NULL) == 1 && (atoi(PQgetvalue(r, 0, 0)) > 0 ||
	    atoi(PQgetvalue(r, 0, 1)) > 0))
		pq->wake = true;
	PQclear(r);
}

/*
 * Recovery also deletes, once a PG_REAP_MS ($3), up to a hundred rows of
 * chute.workers gone for an hour (stopped, or not seen within their
 * lease), whichever queue they served: the table keeps the workers alive
 * and those gone lately, whose held jobs `chute workers` shows.  Rows
 * another worker is deleting are skipped, not waited for.
 */
void
pgq_recover(struct pgq *pq, msec_t mono)
{
	static const char sql[] =
	    "WITH gone AS (DELETE FROM chute.workers WHERE worker IN ("
	    " SELECT worker FROM chute.workers WHERE $3::boolean"
	    " AND coalesce(stopped, seen + " PG_WORKER_LEASE("") ")"
	    " < now() - interval '1 hour' LIMIT 100 FOR UPDATE SKIP LOCKED)),"
	    " dead AS MATERIALIZED ("
	    " SELECT id, attempts >= $2::integer AS spent FROM chute.live"
	    " WHERE queue = $1 AND state = 'cur' AND lease_until < now()"
	    " ORDER BY lease_until LIMIT 100 FOR UPDATE SKIP LOCKED),"
	    " back AS (UPDATE chute.live j SET state = 'new', token = NULL,"
	    " worker = NULL, lease_until = NULL FROM dead WHERE j.queue = $1"
	    " AND j.id = dead.id AND NOT dead.spent"
	    " RETURNING j.id, j.state, j.attempts),"
	    " spent AS (DELETE FROM chute.live j USING dead WHERE j.queue = $1"
	    " AND j.id = dead.id AND dead.spent RETURNING j.*),"
	    " fin AS (INSERT INTO chute.finished (" PG_FINISHED_COLS ")"
	    " SELECT $1, id, 'failed', now(), attempts,"
	    " 'abandoned: lease expired; attempts exhausted', size, created,"
	    " claimed, priority, key FROM spent" PG_FINISHED_STRAY ")"
	    " SELECT id, state, attempts FROM back UNION ALL"
	    " SELECT id, 'failed', attempts FROM spent";
	char max[16];
	const char *p[3] = { pq->pg.queue, max, mono >= pq->next_reap ? "t" :
	    "f" };
	PGresult *r;

	pq->next_recover = mono + pq->lease / 2;
	if (mono >= pq->next_reap)
		pq->next_reap = mono + PG_REAP_MS;
	snprintf(max, sizeof(max), "%d", pq->c.policy.max_attempts);
	if ((r = pgq_exec(pq, sql, 3, p, false)) == NULL) {
		pgq_failed(pq, "recover");
		return;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		say("job=%s cur->%s attempt=%s recovered: its worker's lease "
		    "expired", vis_id(PQgetvalue(r, i, 0)), PQgetvalue(r, i, 1),
		    PQgetvalue(r, i, 2));
		pq->wake = true;
		pgq_moved(pq);
	}
	PQclear(r);
	keys_due(pq);
}

/* ---- dependents held by a cancel ---- */

void
pgq_unheld_send(struct pgq *pq)
{
	struct pg_tarr b = { 0 };
	const char *p[2] = { pq->pg.queue, NULL };
	PGresult *r;

	for (size_t i = 0; i < pq->nunheld; i++)
		pg_tarr_add(&b, pq->unheld[i]);
	pq->nunheld = 0;
	if ((p[1] = pg_tarr_end(&b)) == NULL) {
		free(b.p);
		return;
	}
	r = pgq_exec(pq, "SELECT chute.after_release($1, $2::text[])", 2, p,
	    false);
	free(b.p);
	if (r == NULL) {
		pgq_failed(pq, "release dependents");
		return;
	}
	if (pg_rows(r, 1, 1, NULL) == 1 && atoi(PQgetvalue(r, 0, 0)) > 0)
		pq->wake = true;	/* a dependent of ours may be new */
	PQclear(r);
}
