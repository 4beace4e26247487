/*
 * pg_forward_db.c: forward's batches on the database's side: the one
 * statement that inserts a batch idempotently, sent while the loop goes
 * on, its result, and the retries (a backoff said once) until the
 * database has every job of the batch.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/notify.h"
#include "base/util.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"
#include "chute-pgsql/pg_forward.h"

/*
 * One statement inserts a batch: each job under the ID in $6 (its local
 * ID, or a derived one when that was taken), unless a row of the same
 * origin is there already (sent before a crash or a lost connection) or
 * the ID is taken: the payload goes in first, and its key and its unique
 * origin (payloads_origin) decide, for a job waiting in chute.live and
 * one finished alike.  A job whose name has a unique key (,u=KEY) goes
 * in only if its key's row does (k: schema version 10, held while
 * active, as submit's default), unless it is there from an earlier try.
 * Rows: for each job in order, the ID it was inserted under now, or the
 * queue and ID of the row from an earlier try, or the job that holds its
 * key (h: refused), or none of them (the ID is taken, or the key's holder
 * committed after this statement began: derive an ID and send it again).  Workers are
 * told in the same statement (w, run once by the WHERE's subquery): one
 * round trip and one commit per batch, and the notification leaves with
 * the commit that makes the rows visible.
 */
static const char insert_sql[] =
"WITH b AS MATERIALIZED (SELECT * FROM unnest($4::text[], $5::text[],"
" $6::text[], $7::bytea[], $8::text[]) WITH ORDINALITY"
" AS b(lid, birth, did, body, ukey, n)),"
" k AS (INSERT INTO chute.unique_keys (queue, ukey, id, held_while)"
" SELECT $1, ukey, did, 'active' FROM b WHERE ukey <> ''"
" AND NOT EXISTS (SELECT FROM chute.payloads o WHERE o.queue = $1"
" AND o.id = b.did) AND NOT EXISTS (SELECT FROM chute.payloads o"
" WHERE o.origin = $2 AND o.origin_spool = $3 AND o.origin_id = b.lid"
" AND o.origin_birth = b.birth) ORDER BY n"
" ON CONFLICT (queue, ukey) DO NOTHING RETURNING id),"
" p AS (INSERT INTO chute.payloads (queue, id, body, origin, origin_spool,"
" origin_id, origin_birth, unique_key) SELECT $1, did, body, $2, $3, lid,"
" birth, NULLIF(ukey, '') FROM b WHERE ukey = '' OR did IN (SELECT id FROM k)"
" ORDER BY n ON CONFLICT DO NOTHING RETURNING id, origin_id),"
" j AS (INSERT INTO chute.live (queue, id, state, size, unique_key,"
" priority, key) SELECT $1, p.id, 'new', octet_length(b.body),"
" NULLIF(b.ukey, ''), a.prio::smallint, NULLIF(a.key, '') FROM p"
" JOIN b ON b.lid = p.origin_id"
" JOIN unnest($9::text[], $10::text[]) WITH ORDINALITY AS a(prio, key, n)"
" ON a.n = b.n ORDER BY b.n RETURNING id),"
" w AS (SELECT pg_notify('" PG_CHANNEL "', $1) FROM (SELECT FROM j LIMIT 1) x)"
" SELECT b.n, p.id, f.queue, f.id, h.id FROM b"
" LEFT JOIN p ON p.origin_id = b.lid"
" LEFT JOIN LATERAL (SELECT o.queue, o.id FROM chute.payloads o"
" WHERE p.id IS NULL AND o.origin = $2 AND o.origin_spool = $3"
" AND o.origin_id = b.lid AND o.origin_birth = b.birth LIMIT 1) f ON true"
" LEFT JOIN LATERAL (SELECT u.id FROM chute.unique_keys u"
" WHERE p.id IS NULL AND f.id IS NULL AND b.ukey <> '' AND u.queue = $1"
" AND u.ukey = b.ukey) h ON true"
" WHERE (SELECT count(*) FROM w) >= 0"
" ORDER BY b.n";

/*
 * Connected, with the schema checked: 0; -1 unreachable (try again
 * later); else an exit status after saying why retrying will not help
 * (a refused password, no schema or another version of it).
 */
static int
connected(struct fwd *f)
{
	int v;

	if (pg_ok(&f->pg) && f->checked)
		return 0;
	f->checked = false;
	if (!pg_ok(&f->pg) && pg_connect(&f->pg, false, 0) == -1) {
		if (f->pg.conn != NULL && (PQconnectionNeedsPassword(f->pg.conn)
		    || PQconnectionUsedPassword(f->pg.conn)))
			return pg_fail(&f->pg, "connect");
		return -1;
	}
	if ((v = pg_schema_version(&f->pg)) == -1)
		return pg_ok(&f->pg) ? pg_fail(&f->pg, "schema") : -1;
	if (v != PG_SCHEMA_VERSION)
		return pg_schema_check(&f->pg);
	f->checked = true;
	return 0;
}

/* Send b's statement for its jobs idx[0, m), not waiting: 0, or -1. */
static int
send_batch(struct fwd *f, struct batch *b)
{
	const char *v[10] = { f->pg.queue, f->origin, f->q->name,
	    b->lid.b, b->birth.b, b->did.b, b->body.b, b->ukey.b, b->prio.b,
	    b->key.b };
	static const Oid types[10] = { PG_OID_TEXT, PG_OID_TEXT, PG_OID_TEXT,
	    PG_OID_TEXT_ARR, PG_OID_TEXT_ARR, PG_OID_TEXT_ARR, PG_OID_BYTEA_ARR,
	    PG_OID_TEXT_ARR, PG_OID_TEXT_ARR, PG_OID_TEXT_ARR };
	const int lens[10] = { 0, 0, 0, (int)b->lid.len, (int)b->birth.len,
	    (int)b->did.len, (int)b->body.len, (int)b->ukey.len,
	    (int)b->prio.len, (int)b->key.len };
	static const int fmts[10] = { 0, 0, 0, 1, 1, 1, 1, 1, 1, 1 };

	return pg_send(&f->pg, insert_sql, 10, types, v, lens, fmts);
}

/*
 * The result of b's statement.  0: it ran, and each job that has its row
 * now is marked (the others' IDs were taken); -1: it did not, try again.
 */
static int
take_result(struct fwd *f, struct batch *b, PGresult *r)
{
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != b->m) {
		const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

		/* No SQLSTATE, class 08 or 57P: the server went away. */
		f->gone = st == NULL || strncmp(st, "08", 2) == 0 ||
		    strncmp(st, "57P", 3) == 0;
		PQclear(r);
		return -1;
	}
	for (int k = 0; k < b->m; k++) {
		int i = b->idx[k];

		if (!PQgetisnull(r, k, 1)) {
			strlcpy(b->dbid[i], PQgetvalue(r, k, 1), sizeof(b->dbid[i]));
			b->sent[i] = true;
		} else if (!PQgetisnull(r, k, 3)) {
			strlcpy(b->dbid[i], PQgetvalue(r, k, 3), sizeof(b->dbid[i]));
			b->sent[i] = b->again[i] = true;
		} else if (!PQgetisnull(r, k, 4)) {
			/* Its key is held: done with, refused (failed/). */
			strlcpy(b->dbid[i], PQgetvalue(r, k, 4), sizeof(b->dbid[i]));
			b->sent[i] = b->dup[i] = true;
		}
	}
	PQclear(r);
	return 0;
}

/*
 * Start b's statement while the rest of the loop runs, if the connection
 * is up and checked; otherwise fwd_complete() connects and sends it.
 */
void
fwd_launch(struct fwd *f, struct batch *b)
{
	b->inflight = pg_ok(&f->pg) && f->checked && send_batch(f, b) == 0;
}

/* Send b's statement and wait for it: as take_result. */
static int
send_now(struct fwd *f, struct batch *b)
{
	if (send_batch(f, b) == -1) {
		f->gone = true;
		return -1;
	}
	return take_result(f, b, pg_await(&f->pg));
}

/*
 * The database is unreachable (or refused the statement): say so once,
 * not per job nor per try, and wait out the backoff while the spool keeps
 * taking jobs in.
 */
static void
backoff(struct fwd *f, int n, const char *what)
{
	msec_t until;

	if (!f->down) {
		f->down = true;
		f->down_since = mono_ms();
		say_warn("%s: database %s (%s): retrying; %zu jobs waiting",
		    f->pg.name, what, pg_error(&f->pg), fwd_waiting(f, n));
		say_flush();
		f->wait = FWD_RETRY_MIN_MS;
	}
	pg_close(&f->pg);
	until = mono_ms() + f->wait;
	while (!f->stop && mono_ms() < until) {
		notify_tick(mono_ms());
		fwd_wait_for(f, until - mono_ms());
	}
	f->wait = f->wait * 2 > FWD_RETRY_MAX_MS ? FWD_RETRY_MAX_MS : f->wait * 2;
}

static void
back_up(struct fwd *f, int n)
{
	char d[32];

	if (!f->down)
		return;
	f->down = false;
	dur_format(mono_ms() - f->down_since, d, sizeof(d));
	say("%s: database reachable again after %s; %zu jobs waiting",
	    f->pg.name, d, fwd_waiting(f, n));
	say_flush();
}

/* ---- until the database has a batch ---- */

int
fwd_nomem(struct fwd *f)
{
	say_err("%s: %s", f->pg.name, strerror(ENOMEM));
	return EX_SOFTWARE;
}

/*
 * Until the database has every job of b: the result of its statement in
 * flight (if it was launched), then, for jobs whose ID was taken there,
 * the statement again under derived IDs; a statement that failed is sent
 * again, after a backoff when the database stays away.  Returns 0; -1
 * when stopped first (they are still claimed); or an exit status after
 * saying why the database will not take them.
 */
int
fwd_complete(struct fwd *f, struct batch *b)
{
	int ran = -1, rc;

	if (b->inflight) {
		b->inflight = false;
		ran = take_result(f, b, pg_await(&f->pg));
	}
	for (;;) {
		if (ran == 0) {
			back_up(f, b->n);
			if ((rc = fwd_batch_retake(b)) <= 0)
				return rc == 0 ? 0 : fwd_nomem(f);
		}
		if (f->stop)
			return -1;
		if ((rc = connected(f)) > 0)
			return rc;
		if (rc == 0 && (ran = send_now(f, b)) == 0)
			continue;
		if (f->drain && f->down)
			return EX_TEMPFAIL;
		backoff(f, b->n, rc == 0 && !f->gone && pg_ok(&f->pg) ?
		    "refused the batch" : "unreachable");
	}
}
