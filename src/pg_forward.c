/*
 * pg_forward.c: `chute forward SPOOL URL`: a local spool as the fleet's
 * durable edge buffer.  It owns the spool as `chute run` does (the same
 * lock, recovery and claims, through queue_spool.c) and moves each job into
 * the database's queue, a batch per statement; a job leaves cur/ for done/
 * only after the statement that inserted it has committed.  fleet.md,
 * "Forwarding from a spool", lists the statements and their crash windows.
 *
 * Idempotent: every row carries its origin (host, spool, local ID, and the
 * file's inode and birth time, which no rename changes and no later job of
 * the same name shares), under a unique index; a batch sent again after a
 * kill -9 or a lost connection finds its jobs there and inserts nothing.
 * No attempt is counted: forwarding writes no `start` line, and a batch
 * that cannot be sent stays claimed in cur/ and is sent again.
 */
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <arpa/inet.h>
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

#include "chute.h"
#include "pg.h"
#include "pg_cmd.h"

#define FWD_BATCH	256		/* --batch default: jobs per statement */
#define FWD_BATCH_MAX	10000
#define FWD_BYTES	(32LL << 20)	/* payload bytes per statement (one job more) */
#define FWD_RETRY_MIN_MS 500		/* the database unreachable: first wait */
#define FWD_RETRY_MAX_MS 30000		/* ... doubling up to this */
#define FWD_IDLE_MS	1000		/* longest wait without a wake-up */

#define OID_BYTEA_ARR	1001
#define OID_TEXT_ARR	1009
#define OID_TEXT	25
#define OID_BYTEA	17

/*
 * One array parameter in PostgreSQL's binary format: a header, then a
 * length and the bytes of each element.  Job files are read straight into
 * it, so a payload is copied once on its way to libpq.
 */
struct arr {
	char	*b;
	size_t	 len, cap;
	int	 n;
};

struct fwd {
	struct pg	 pg;
	struct queue	*q;
	struct claim	*slot;		/* FWD_BATCH claims */
	struct claim	**cv;
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
	struct arr	 lid, birth, did, body;
	char		 (*dbid)[NAME_MAX + 1];	/* per job of the batch */
	bool		*sent;		/* inserted now or found from before */
	bool		*again;		/* found there from an earlier try */
	int		*idx;		/* the jobs of a statement */
	size_t		 forwarded;
};

/* ---- array parameters ---- */

static void
put32(char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static char *
arr_room(struct arr *a, size_t n)
{
	if (a->len + n > a->cap) {
		size_t cap = a->cap ? a->cap : 4096;
		char *b;

		while (cap < a->len + n)
			cap *= 2;
		if ((b = realloc(a->b, cap)) == NULL)
			return NULL;
		a->b = b;
		a->cap = cap;
	}
	a->len += n;
	return a->b + a->len - n;
}

/* Start an empty one-dimensional array of elements of type oid. */
static void
arr_begin(struct arr *a, uint32_t oid)
{
	a->len = 0;
	a->n = 0;
	if (arr_room(a, 20) == NULL)
		return;
	put32(a->b, 1);		/* dimensions */
	put32(a->b + 4, 0);	/* no NULLs */
	put32(a->b + 8, oid);
	put32(a->b + 12, 0);	/* its length, set by arr_end */
	put32(a->b + 16, 1);	/* lower bound */
}

/* Room for an element of len bytes; NULL when out of memory. */
static char *
arr_elem(struct arr *a, size_t len)
{
	char *p;

	if (a->b == NULL || (p = arr_room(a, 4 + len)) == NULL)
		return NULL;
	put32(p, (uint32_t)len);
	a->n++;
	return p + 4;
}

static int
arr_str(struct arr *a, const char *s)
{
	size_t n = strlen(s);
	char *p = arr_elem(a, n);

	if (p == NULL)
		return -1;
	memcpy(p, s, n);
	return 0;
}

/* The last element was given len bytes but got only got: shrink it. */
static void
arr_shrink(struct arr *a, size_t len, size_t got)
{
	put32(a->b + a->len - len - 4, (uint32_t)got);
	a->len -= len - got;
}

static void
arr_end(struct arr *a)
{
	if (a->b != NULL)
		put32(a->b + 12, (uint32_t)a->n);
}

/* ---- the spool side ---- */

/*
 * The job's identity in its spool, for the unique key: inode and birth
 * time, which the spool's renames keep and a later file of the same name
 * (after a purge) does not share.  Where the file system keeps no birth
 * time, the inode alone (fleet.md says what that risks).
 */
static void
birth_of(int fd, char *buf, size_t len)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &sx) == -1) {
		struct stat st;

		if (fstat(fd, &st) == -1)
			st.st_ino = 0;
		snprintf(buf, len, "%llu", (unsigned long long)st.st_ino);
		return;
	}
	if (sx.stx_mask & STATX_BTIME)
		snprintf(buf, len, "%llu:%lld.%09u",
		    (unsigned long long)sx.stx_ino,
		    (long long)sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec);
	else
		snprintf(buf, len, "%llu", (unsigned long long)sx.stx_ino);
}

/* Send the claim where out says, note it, and let it go. */
static void
finish(struct fwd *f, struct claim *c, int to, const char *why)
{
	struct outcome out = { .to = to };

	strlcpy(out.why, why, sizeof(out.why));
	if (f->q->be->record(f->q, c, &out, now_ms()) == -1 && errno != ENOENT)
		say("job=%s cur->%s: %s; it stays in cur/ until the next start",
		    vis_id(c->id), state_names[to], strerror(errno));
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
	if (c->logfd != -1)
		joblog_lnote(c->logfd, &c->logend, false, "%s", why);
	say("job=%s cur->failed %s", vis_id(c->id), why);
	finish(f, c, ST_FAILED, "rejected: too large");
}

/* How many of claims [0, n) fit in one statement's bytes (at least one). */
static int
span(struct claim *const *cv, int n)
{
	long long bytes = 0;
	int k;

	for (k = 0; k < n; k++) {
		struct stat st;

		if (fstat(cv[k]->fd, &st) == -1)
			st.st_size = 0;
		if (k > 0 && bytes + st.st_size > FWD_BYTES)
			break;
		bytes += st.st_size;
	}
	return k;
}

/*
 * Put the claims cv[idx[0..m)] into the array parameters, reading each
 * file into place: the one copy of its bytes this side of libpq.
 * Returns 0, or -1 when out of memory.
 */
static int
fill(struct fwd *f, struct claim *const *cv, const int *idx, int m)
{
	char birth[96];

	arr_begin(&f->lid, OID_TEXT);
	arr_begin(&f->birth, OID_TEXT);
	arr_begin(&f->did, OID_TEXT);
	arr_begin(&f->body, OID_BYTEA);
	for (int k = 0; k < m; k++) {
		struct claim *c = cv[idx[k]];
		struct stat st;
		char *p;
		ssize_t got;

		if (fstat(c->fd, &st) == -1)
			st.st_size = 0;
		birth_of(c->fd, birth, sizeof(birth));
		if (arr_str(&f->lid, c->id) == -1 ||
		    arr_str(&f->birth, birth) == -1 ||
		    arr_str(&f->did, f->dbid[idx[k]]) == -1 ||
		    (p = arr_elem(&f->body, (size_t)st.st_size)) == NULL)
			return -1;
		/* pread: the descriptor's offset is the handler's, in chute run. */
		if ((got = pread(c->fd, p, (size_t)st.st_size, 0)) == -1)
			got = 0;
		if (got < st.st_size)
			arr_shrink(&f->body, (size_t)st.st_size, (size_t)got);
	}
	arr_end(&f->lid);
	arr_end(&f->birth);
	arr_end(&f->did);
	arr_end(&f->body);
	return 0;
}

/* ---- the database side ---- */

/*
 * One statement inserts a batch: each job under the ID in $6 (its local
 * ID, or a derived one when that was taken), unless a row of the same
 * origin is there already (sent before a crash or a lost connection) or
 * the ID is taken.  Rows: for each job in order, the ID it was inserted
 * under now, or the queue and ID of the row from an earlier try, or
 * neither (the ID is taken: derive one and send it again).
 */
static const char insert_sql[] =
"WITH b AS MATERIALIZED (SELECT * FROM unnest($4::text[], $5::text[],"
" $6::text[], $7::bytea[]) WITH ORDINALITY AS b(lid, birth, did, body, n)),"
" j AS (INSERT INTO chute.jobs (queue, id, state, size, origin,"
" origin_spool, origin_id, origin_birth)"
" SELECT $1, did, 'new', octet_length(body), $2, $3, lid, birth FROM b"
" ORDER BY n ON CONFLICT DO NOTHING RETURNING id, origin_id),"
" p AS (INSERT INTO chute.payloads (queue, id, body)"
" SELECT $1, j.id, b.body FROM j JOIN b ON b.lid = j.origin_id)"
" SELECT b.n, j.id, f.queue, f.id FROM b"
" LEFT JOIN j ON j.origin_id = b.lid"
" LEFT JOIN chute.jobs f ON j.id IS NULL AND f.origin = $2"
" AND f.origin_spool = $3 AND f.origin_id = b.lid AND f.origin_birth = b.birth"
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

/*
 * Run the statement for the jobs idx[0..m) once.  0: sent, and each job
 * that has its row now is marked (the others' IDs were taken); -1: not
 * sent, try again.
 */
static int
send_once(struct fwd *f, const int *idx, int m)
{
	const char *v[7] = { f->pg.queue, f->origin, f->q->name,
	    f->lid.b, f->birth.b, f->did.b, f->body.b };
	const Oid types[7] = { OID_TEXT, OID_TEXT, OID_TEXT, OID_TEXT_ARR,
	    OID_TEXT_ARR, OID_TEXT_ARR, OID_BYTEA_ARR };
	const int lens[7] = { 0, 0, 0, (int)f->lid.len, (int)f->birth.len,
	    (int)f->did.len, (int)f->body.len };
	const int fmts[7] = { 0, 0, 0, 1, 1, 1, 1 };
	PGresult *r = PQexecParams(f->pg.conn, insert_sql, 7, types, v, lens,
	    fmts, 0);

	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != m) {
		const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

		/* No SQLSTATE, class 08 or 57P: the server went away. */
		f->gone = st == NULL || strncmp(st, "08", 2) == 0 ||
		    strncmp(st, "57P", 3) == 0;
		PQclear(r);
		return -1;
	}
	for (int k = 0; k < m; k++) {
		int i = idx[k];

		if (!PQgetisnull(r, k, 1)) {
			strlcpy(f->dbid[i], PQgetvalue(r, k, 1), sizeof(f->dbid[i]));
			f->sent[i] = true;
		} else if (!PQgetisnull(r, k, 3)) {
			strlcpy(f->dbid[i], PQgetvalue(r, k, 3), sizeof(f->dbid[i]));
			f->sent[i] = f->again[i] = true;
		}
	}
	PQclear(r);
	return 0;
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
		say("%s: the spool cannot be watched any more; stopping",
		    f->q->name);
		f->stop = true;
	}
}

/* Jobs waiting locally: the claimed batch and what the spool has queued. */
static size_t
waiting(struct fwd *f, int n)
{
	size_t queued, deferred;

	f->q->be->counts(f->q, &queued, &deferred);
	return queued + (size_t)n;
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
		say("%s: database %s (%s): retrying; %zu jobs waiting",
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

/*
 * Send claims [0, n) until the database has every one of them.  Each file
 * is read once; only a job whose ID was taken there is read again, to go
 * under a derived ID.  Returns 0; -1 when stopped first (they are still
 * claimed); or an exit status after saying why the database will not
 * take them.
 */
static int
send_all(struct fwd *f, struct claim *const *cv, int n)
{
	int *idx = f->idx, m = n, rc;

	for (int i = 0; i < n; i++) {
		strlcpy(f->dbid[i], cv[i]->id, sizeof(f->dbid[i]));
		f->sent[i] = f->again[i] = false;
		idx[i] = i;
	}
	if (fill(f, cv, idx, m) == -1)
		goto nomem;
	while (m > 0) {
		if (f->stop)
			return -1;
		if ((rc = connected(f)) > 0)
			return rc;
		if (rc == -1 || send_once(f, idx, m) == -1) {
			if (f->drain && f->down)
				return EX_TEMPFAIL;
			backoff(f, n, rc == 0 && !f->gone && pg_ok(&f->pg) ?
			    "refused the batch" : "unreachable");
			continue;
		}
		back_up(f, n);
		/* A taken ID gets a derived one, by the spool's rule. */
		m = 0;
		for (int i = 0; i < n; i++)
			if (!f->sent[i]) {
				id_derive(cv[i]->id, f->dbid[i], sizeof(f->dbid[i]));
				idx[m++] = i;
			}
		if (m > 0 && fill(f, cv, idx, m) == -1)
			goto nomem;
	}
	return 0;
nomem:
	say("%s: %s", f->pg.name, strerror(ENOMEM));
	return EX_SOFTWARE;
}

/* The batch is in the database: note where each job went, then done/. */
static void
finish_batch(struct fwd *f, struct claim *const *cv, int n)
{
	for (int i = 0; i < n; i++) {
		struct claim *c = cv[i];
		bool derived = strcmp(c->id, f->dbid[i]) != 0;

		if (c->logfd != -1)
			joblog_lnote(c->logfd, &c->logend, false,
			    "forwarded to %s at %s as %s%s%s", f->pg.queue,
			    f->pg.name, vis_id(f->dbid[i]), derived ?
			    " (its ID was taken there)" : "", f->again[i] ?
			    " (found there from an earlier try)" : "");
		say("job=%s cur->done forwarded to %s as %s", vis_id(c->id),
		    f->pg.queue, vis_id(f->dbid[i]));
		finish(f, c, ST_DONE, "forwarded");
	}
	f->forwarded += (size_t)n;
}

/* Stopping: the claims go back to new/, no attempt counted. */
static void
hand_back(struct fwd *f, struct claim *const *cv, int n)
{
	for (int i = 0; i < n; i++)
		finish(f, cv[i], ST_NEW, "handed back");
}

/*
 * One claimed batch: jobs too large go to failed/ at once; the others
 * are sent, in pieces of at most FWD_BYTES, then moved to done/.
 */
static int
forward_batch(struct fwd *f, int n)
{
	struct claim **cv = f->cv;
	const char *q[1] = { f->pg.queue };
	int rc, m = 0;

	for (int i = 0; i < n; i++) {
		struct stat st;

		if (fstat(cv[i]->fd, &st) == 0 && st.st_size > PG_MAX_JOB)
			too_large(f, cv[i], st.st_size);
		else
			cv[m++] = cv[i];
	}
	while (m > 0) {
		int k = span(cv, m);

		if ((rc = send_all(f, cv, k)) != 0) {
			hand_back(f, cv, m);
			return rc == -1 ? 0 : rc;
		}
		/* Workers hear of the batch; one notification per batch. */
		if (pg_cmd(&f->pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1,
		    q) == -1)
			say("%s: notify: %s (workers find the jobs at their next "
			    "poll)", f->pg.name, pg_error(&f->pg));
		finish_batch(f, cv, k);
		f->q->be->commit(f->q, false);
		say_flush();
		memmove(cv, cv + k, (size_t)(m - k) * sizeof(*cv));
		m -= k;
	}
	return 0;
}

/* ---- the loop ---- */

static int
forward_loop(struct fwd *f)
{
	int n, rc = 0;

	f->q->be->start(f->q);
	/* systemd (Type=notify): ready once the spool is ours and recovered. */
	notify_send("READY=1");
	say_buffer(true);
	while (!f->stop) {
		msec_t mono = mono_ms();
		char st[96];

		snprintf(st, sizeof(st), "%zu forwarded; %zu waiting%s",
		    f->forwarded, waiting(f, 0), f->down ?
		    "; database unreachable" : "");
		notify_status(st);
		notify_tick(mono);
		f->q->be->due(f->q, mono);
		for (int i = 0; i < f->batch; i++)
			f->cv[i] = &f->slot[i];
		if ((n = f->q->be->claim(f->q, f->cv, f->batch)) > 0) {
			if ((rc = forward_batch(f, n)) != 0)
				break;
			continue;
		}
		f->q->be->commit(f->q, false);
		say_flush();
		if (f->drain && f->q->be->drained(f->q))
			break;
		wait_for(f, f->q->be->next(f->q, mono_ms()) - mono_ms());
	}
	say_buffer(false);
	notify_send("STOPPING=1");
	return rc;
}

static int
signals_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
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
	const char *err;
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'b') {
			f->batch = (int)strtonum(optarg, 1, FWD_BATCH_MAX, &err);
			if (err != NULL)
				return usage_error("forward", "--batch %s: not a "
				    "number from 1 to %d", optarg, FWD_BATCH_MAX);
		} else if (c == 'o') {
			if (!id_valid(optarg) || strlen(optarg) > 253)
				return usage_error("forward", "--origin %s: not "
				    "a host name", optarg);
			f->origin = optarg;
		} else if (c == 'd')
			f->drain = true;
		else
			return usage_error("forward", "bad option: %s",
			    argv[optind - 1]);
	}
	if (argc - optind != 1)
		return usage_error("forward", argc == optind ? "no spool given" :
		    "more than one spool given");
	*spool = argv[optind];
	return 0;
}

static int
fwd_alloc(struct fwd *f)
{
	size_t n = (size_t)f->batch;

	f->slot = calloc(n, sizeof(*f->slot));
	f->cv = calloc(n, sizeof(*f->cv));
	f->dbid = calloc(n, sizeof(*f->dbid));
	f->sent = calloc(n, sizeof(*f->sent));
	f->again = calloc(n, sizeof(*f->again));
	f->idx = calloc(n, sizeof(*f->idx));
	return f->slot && f->cv && f->dbid && f->sent && f->again && f->idx ?
	    0 : -1;
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
	free(f->slot);
	free(f->cv);
	free(f->dbid);
	free(f->sent);
	free(f->again);
	free(f->idx);
	free(f->lid.b);
	free(f->birth.b);
	free(f->did.b);
	free(f->body.b);
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
	struct queue_conf qc = { .policy = { .max_attempts = INT_MAX } };
	struct fwd f = { .batch = FWD_BATCH, .sigfd = -1, .origin = host };
	const char *spool = NULL;
	int rc;

	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		strlcpy(host, "localhost", sizeof(host));
	if ((rc = pgcmd_take(&argc, argv, "forward", &f.pg, true)) != 0)
		return rc;
	if ((rc = parse(argc, argv, &f, &spool)) != 0)
		return fwd_free(&f, rc);
	if (fwd_alloc(&f) == -1 || (f.sigfd = signals_open()) == -1) {
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
