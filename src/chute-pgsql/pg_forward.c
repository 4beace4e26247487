/*
 * pg_forward.c: `chute forward SPOOL URL`: a local spool as the fleet's
 * durable edge buffer.  It owns the spool as `chute run` does (the same
 * lock and recovery, through queue_spool.c) and moves each job into the
 * database's queue, a batch per statement.  Its claims stay in new/
 * (queue_conf.in_place: no rename to cur/ and back), and a job leaves new/
 * for done/ only after the statement that inserted it has committed.  fleet.md,
 * "Forwarding from a spool", lists the statements and their crash windows.
 *
 * Idempotent: every row carries its origin (host, spool, local ID, and the
 * file's inode and birth time, which no rename changes and no later job of
 * the same name shares), under a unique index; a batch sent again after a
 * kill -9 or a lost connection finds its jobs there and inserts nothing.
 * No attempt is counted: forwarding writes no `start` line, and a batch
 * that cannot be sent stays claimed in new/ and is sent again.
 */
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/notify.h"
#include "base/sigfd.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

#define FWD_BATCH	256		/* --batch default: jobs per statement */
#define FWD_BATCH_MAX	10000
#define FWD_BYTES	(32LL << 20)	/* payload bytes per statement (one job more) */
#define FWD_RETRY_MIN_MS 500		/* the database unreachable: first wait */
#define FWD_RETRY_MAX_MS 30000		/* ... doubling up to this */
#define FWD_IDLE_MS	1000		/* longest wait without a wake-up */
#define FWD_BIRTH	64		/* "INODE:SEC.NSEC" */


/*
 * The jobs of one statement.  Two take turns: while the server runs one's
 * statement, the other is claimed and read, and the one before is moved
 * to done/, so the spool's file operations overlap the server's work
 * instead of waiting for it.
 */
struct batch {
	struct claim	*slot;		/* --batch claims, [0, n) held */
	int		 n;
	long long	 bytes;
	bool		 inflight;	/* sent, its result not taken yet */
	struct pg_arr	 lid, birth, did, body;	/* jobs idx[0, m) */
	int		*idx, m;
	off_t		*size;
	char		 (*born)[FWD_BIRTH];	/* origin_birth */
	char		 (*dbid)[NAME_MAX + 1];	/* the ID it goes in under */
	bool		*sent;		/* inserted now or found from before */
	bool		*again;		/* found there from an earlier try */
};

struct fwd {
	struct pg	 pg;
	struct queue	*q;
	struct batch	 b[2];
	int		 batch;
	const char	*origin;
	bool		 drain;
	int		 sigfd;
	bool		 stop;
	bool		 checked;	/* the schema was checked on this connection */
	bool		 down;		/* "unreachable" was said */
	bool		 gone;		/* the last statement lost the server */
	msec_t		 down_since;
	msec_t		 wait;		/* the next wait before a retry */
	size_t		 forwarded;
	size_t		 title_queued;	/* what the title says while paused */
	bool		 title_paused;
};

/* ---- the spool side ---- */

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
}

static void
batch_end(struct batch *b)
{
	pg_arr_end(&b->lid);
	pg_arr_end(&b->birth);
	pg_arr_end(&b->did);
	pg_arr_end(&b->body);
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
	ssize_t got;
	char *p;

	if (pg_arr_str(&b->lid, c->id) == -1 ||
	    pg_arr_str(&b->birth, b->born[i]) == -1 ||
	    pg_arr_str(&b->did, b->dbid[i]) == -1 ||
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

/* Take claim c into b as job i; false when it went elsewhere at once. */
static bool
batch_take(struct fwd *f, struct batch *b, struct claim *c, int i)
{
	b->size[i] = c->size;
	identify(c, b->born[i], sizeof(b->born[i]));
	if (b->size[i] > PG_MAX_JOB) {
		too_large(f, c, b->size[i]);
		return false;
	}
	strlcpy(b->dbid[i], c->id, sizeof(b->dbid[i]));
	b->sent[i] = b->again[i] = false;
	return true;
}

/*
 * Claim jobs into b until it holds --batch of them or FWD_BYTES of
 * payloads (the job that passes it included), each read into the array
 * parameters as it comes.  Returns 0, or -1 out of memory (the jobs
 * claimed are in b).
 */
static int
gather(struct fwd *f, struct batch *b)
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
static int
batch_retake(struct batch *b)
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

/* ---- the database side ---- */

/*
 * One statement inserts a batch: each job under the ID in $6 (its local
 * ID, or a derived one when that was taken), unless a row of the same
 * origin is there already (sent before a crash or a lost connection) or
 * the ID is taken: the payload goes in first, and its key and its unique
 * origin (payloads_origin) decide, for a job waiting in chute.live and
 * one finished alike.  Rows: for each job in order, the ID it was inserted
 * under now, or the queue and ID of the row from an earlier try, or
 * neither (the ID is taken: derive one and send it again).  Workers are
 * told in the same statement (w, run once by the WHERE's subquery): one
 * round trip and one commit per batch, and the notification leaves with
 * the commit that makes the rows visible.
 */
static const char insert_sql[] =
"WITH b AS MATERIALIZED (SELECT * FROM unnest($4::text[], $5::text[],"
" $6::text[], $7::bytea[]) WITH ORDINALITY AS b(lid, birth, did, body, n)),"
" p AS (INSERT INTO chute.payloads (queue, id, body, origin, origin_spool,"
" origin_id, origin_birth) SELECT $1, did, body, $2, $3, lid, birth FROM b"
" ORDER BY n ON CONFLICT DO NOTHING RETURNING id, origin_id),"
" j AS (INSERT INTO chute.live (queue, id, state, size)"
" SELECT $1, p.id, 'new', octet_length(b.body) FROM p"
" JOIN b ON b.lid = p.origin_id ORDER BY b.n RETURNING id),"
" w AS (SELECT pg_notify('" PG_CHANNEL "', $1) FROM (SELECT FROM j LIMIT 1) x)"
" SELECT b.n, p.id, f.queue, f.id FROM b"
" LEFT JOIN p ON p.origin_id = b.lid"
" LEFT JOIN LATERAL (SELECT o.queue, o.id FROM chute.payloads o"
" WHERE p.id IS NULL AND o.origin = $2 AND o.origin_spool = $3"
" AND o.origin_id = b.lid AND o.origin_birth = b.birth LIMIT 1) f ON true"
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
	const char *v[7] = { f->pg.queue, f->origin, f->q->name,
	    b->lid.b, b->birth.b, b->did.b, b->body.b };
	static const Oid types[7] = { PG_OID_TEXT, PG_OID_TEXT, PG_OID_TEXT,
	    PG_OID_TEXT_ARR, PG_OID_TEXT_ARR, PG_OID_TEXT_ARR, PG_OID_BYTEA_ARR };
	const int lens[7] = { 0, 0, 0, (int)b->lid.len, (int)b->birth.len,
	    (int)b->did.len, (int)b->body.len };
	static const int fmts[7] = { 0, 0, 0, 1, 1, 1, 1 };

	return pg_send(&f->pg, insert_sql, 7, types, v, lens, fmts);
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
		}
	}
	PQclear(r);
	return 0;
}

/*
 * Start b's statement while the rest of the loop runs, if the connection
 * is up and checked; otherwise complete() connects and sends it.
 */
static void
launch(struct fwd *f, struct batch *b)
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
static void
wait_for(struct fwd *f, msec_t ms)
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
static size_t
waiting(struct fwd *f, int n)
{
	struct counts c;

	f->q->be->counts(f->q, &c);
	return c.queued + (size_t)n;
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
		    f->pg.name, what, pg_error(&f->pg), waiting(f, n));
		say_flush();
		f->wait = FWD_RETRY_MIN_MS;
	}
	pg_close(&f->pg);
	until = mono_ms() + f->wait;
	while (!f->stop && mono_ms() < until) {
		notify_tick(mono_ms());
		wait_for(f, until - mono_ms());
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
	    f->pg.name, d, waiting(f, n));
	say_flush();
}

/* ---- a batch ---- */

static int
nomem(struct fwd *f)
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
static int
complete(struct fwd *f, struct batch *b)
{
	int ran = -1, rc;

	if (b->inflight) {
		b->inflight = false;
		ran = take_result(f, b, pg_await(&f->pg));
	}
	for (;;) {
		if (ran == 0) {
			back_up(f, b->n);
			if ((rc = batch_retake(b)) <= 0)
				return rc == 0 ? 0 : nomem(f);
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
 * b is in the database: note where each job went, then done/.  A job
 * that kept its ID gets the batch's one line, "under the same ID"
 * (cmd_status.c reads it as "as ID"), which its log may share with the
 * rest of the batch (queue_spool_note); the others get lines of their own.
 */
static void
batch_done(struct fwd *f, struct batch *b)
{
	for (int i = 0; i < b->n; i++) {
		struct claim *c = &b->slot[i];
		bool derived = strcmp(c->id, b->dbid[i]) != 0;

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
	f->forwarded += (size_t)b->n;
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
static void
hand_back(struct fwd *f, struct batch *b)
{
	for (int i = 0; i < b->n; i++)
		finish(f, &b->slot[i], ST_NEW, "handed back");
	b->n = 0;
}

/* ---- the loop ---- */

/* The process title: what it forwards, and while paused how many wait. */
static void
title(struct fwd *f, const struct counts *c)
{
	if (c->paused == f->title_paused && (!c->paused ||
	    c->queued == f->title_queued))
		return;
	f->title_paused = c->paused;
	f->title_queued = c->queued;
	if (c->paused)
		setproctitle("forward %s -> %s (%s) queued=%zu paused",
		    f->q->name, f->pg.name, f->pg.queue, c->queued);
	else
		setproctitle("forward %s -> %s (%s)", f->q->name, f->pg.name,
		    f->pg.queue);
}

static void
tell_systemd(struct fwd *f)
{
	struct counts c;
	char st[112];

	f->q->be->counts(f->q, &c);
	snprintf(st, sizeof(st), "%zu forwarded; %zu waiting%s%s",
	    f->forwarded, c.queued, c.paused ? "; paused" : "", f->down ?
	    "; database unreachable" : "");
	notify_status(st);
	notify_tick(mono_ms());
	title(f, &c);
}

/*
 * A pipeline of two batches: next is claimed and read while sent's
 * statement runs; then sent's result is taken, next's statement started,
 * and sent's jobs moved to done/ while it runs.  A job reaches done/ only
 * after the commit of the statement that inserted it.  Returns 0 or an
 * exit status.
 */
static int
forward_loop(struct fwd *f)
{
	struct batch *next = &f->b[0], *sent = NULL;
	int rc = 0;

	f->q->be->start(f->q);
	/* systemd (Type=notify): ready once the spool is ours and recovered. */
	notify_send("READY=1");
	say_buffer(true);
	while (!f->stop) {
		tell_systemd(f);
		f->q->be->due(f->q, mono_ms());
		if (gather(f, next) == -1) {
			rc = nomem(f);
			break;
		}
		if (sent != NULL && (rc = complete(f, sent)) != 0) {
			hand_back(f, sent);
			sent = NULL;
			break;
		}
		if (next->n > 0)
			launch(f, next);
		if (sent != NULL)
			batch_done(f, sent);
		if (next->n > 0) {
			sent = next;
			next = sent == &f->b[0] ? &f->b[1] : &f->b[0];
			wait_for(f, 0);		/* signals, the spool's events */
			continue;
		}
		sent = NULL;
		f->q->be->commit(f->q, false);
		say_flush();
		if (f->drain && f->q->be->drained(f->q))
			break;
		wait_for(f, f->q->be->next(f->q, mono_ms()) - mono_ms());
	}
	if (sent != NULL && complete(f, sent) == 0)
		batch_done(f, sent);
	else if (sent != NULL)
		hand_back(f, sent);
	hand_back(f, next);
	f->q->be->commit(f->q, false);
	say_buffer(false);
	notify_send("STOPPING=1");
	return rc == -1 ? 0 : rc;
}

static int
signals_open(void)
{
	signal(SIGPIPE, SIG_IGN);
	return sigfd_open(SIGTERM, SIGINT, SIGHUP, 0);
}

/* One option of forward; 0, or an exit status (said). */
static int
option(void *arg, int c, char *v)
{
	struct fwd *f = arg;
	const char *err;

	if (c == 'b') {
		f->batch = (int)strtonum(v, 1, FWD_BATCH_MAX, &err);
		return err == NULL ? 0 : usage_error("forward", "--batch %s: not "
		    "a number from 1 to %d", v, FWD_BATCH_MAX);
	}
	if (c == 'o') {
		f->origin = v;
		return id_valid(v) && strlen(v) <= 253 ? 0 :
		    usage_error("forward", "--origin %s: not a host name", v);
	}
	f->drain = true;
	return 0;
}

static int
parse(int argc, char **argv, struct fwd *f, const char **spool)
{
	static const struct option longopts[] = {
		{ "batch", required_argument, NULL, 'b' },
		{ "origin", required_argument, NULL, 'o' },
		{ "drain", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	int rc;

	if ((rc = pgcmd_options(argc, argv, "forward", longopts, option, f)) != 0)
		return rc;
	if (argc - optind != 1)
		return usage_error("forward", argc == optind ? "no spool given" :
		    "more than one spool given");
	*spool = argv[optind];
	return 0;
}

static int
batch_alloc(struct batch *b, size_t n)
{
	b->slot = calloc(n, sizeof(*b->slot));
	b->idx = calloc(n, sizeof(*b->idx));
	b->size = calloc(n, sizeof(*b->size));
	b->born = calloc(n, sizeof(*b->born));
	b->dbid = calloc(n, sizeof(*b->dbid));
	b->sent = calloc(n, sizeof(*b->sent));
	b->again = calloc(n, sizeof(*b->again));
	return b->slot && b->idx && b->size && b->born && b->dbid && b->sent &&
	    b->again ? 0 : -1;
}

static void
batch_free(struct batch *b)
{
	free(b->slot);
	free(b->idx);
	free(b->size);
	free(b->born);
	free(b->dbid);
	free(b->sent);
	free(b->again);
	free(b->lid.b);
	free(b->birth.b);
	free(b->did.b);
	free(b->body.b);
}

static int
fwd_free(struct fwd *f, int rc)
{
	if (f->q != NULL)
		f->q->be->close(f->q);
	if (f->sigfd != -1)
		close(f->sigfd);
	notify_close();
	pg_close(&f->pg);
	free(f->pg.uri);
	batch_free(&f->b[0]);
	batch_free(&f->b[1]);
	return rc;
}

/*
 * chute forward SPOOL URL [--queue NAME] [--batch N] [--origin NAME]
 * [--drain].  Runs until SIGTERM (0), or with --drain until the spool is
 * empty (0) or the database is unreachable (75, the jobs back in new/).
 */
int
pgcmd_forward(int argc, char **argv)
{
	static char host[256];
	/* No attempt is counted, and a job left claimed is sent again. */
	struct queue_conf qc = { .policy = { .max_attempts = INT_MAX },
	    .in_place = true, .recovered = "resent after forward's restart" };
	struct fwd f = { .batch = FWD_BATCH, .sigfd = -1, .origin = host };
	const char *spool = NULL;
	int rc;

	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		strlcpy(host, "localhost", sizeof(host));
	if ((rc = pgcmd_take(&argc, argv, "forward", &f.pg, true)) != 0)
		return rc;
	if ((rc = parse(argc, argv, &f, &spool)) != 0)
		return fwd_free(&f, rc);
	/* One statement, run for every batch: prepared. */
	f.pg.prepare = true;
	if (batch_alloc(&f.b[0], (size_t)f.batch) == -1 ||
	    batch_alloc(&f.b[1], (size_t)f.batch) == -1 ||
	    (f.sigfd = signals_open()) == -1) {
		fprintf(stderr, "chute: forward: %s\n", strerror(errno));
		return fwd_free(&f, EX_SOFTWARE);
	}
	notify_init();
	if ((rc = queue_spool_open(spool, false, &qc, &f.q)) != 0)
		return fwd_free(&f, rc);
	setproctitle("forward %s -> %s (%s)", f.q->name, f.pg.name, f.pg.queue);
	say("forward %s -> %s queue=%s origin=%s batch=%d", f.q->name,
	    f.pg.name, f.pg.queue, f.origin, f.batch);
	rc = forward_loop(&f);
	say("forward %s: stopping; %zu jobs forwarded", f.q->name, f.forwarded);
	return fwd_free(&f, rc);
}
