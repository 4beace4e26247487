/*
 * queue_pg.c: a PostgreSQL database as a queue (queue.h), for a fleet of
 * workers on many hosts.  A claim is an UPDATE of rows picked with
 * FOR UPDATE SKIP LOCKED, carrying a lease and a fencing token; the owner's
 * outcomes are recorded in batches, each only where the token still
 * matches, so a worker that lost its claim can never overwrite the outcome
 * of the one that took the job over.  fleet.md lists every statement and
 * what a crash or a lost connection at each step leaves behind.
 *
 * The handler sees the job as on a spool: a local regular file (written
 * here from the payload, in a private directory) as stdin and {}, and a
 * local log file (in memory under --persistent, where only chute writes
 * to it), whose first PG_LOG_CAP bytes per attempt are stored with the
 * outcome.  Every statement is short and autocommitted: no transaction
 * is ever open while a handler runs.
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

/* An outcome waiting for the next batch. */
struct pending {
	char		 id[NAME_MAX + 1];
	char		 token[24];
	const char	*to;
	msec_t		 delay;
	bool		 counted;
	char		 last[96];
	char		*log;		/* hex of the attempt's log, malloc'd */
	msec_t		 since;		/* monotonic */
};

struct pgq {
	struct queue	 q;
	struct pg	 pg;
	struct queue_conf c;
	msec_t		 lease;
	int		 slots;		/* the owner's */
	int		 prefetch_max;	/* --prefetch: claimed ahead, at most */
	unsigned	 done_n;	/* outcomes since done_t0 (the rate) */
	msec_t		 done_t0;
	double		 rate;		/* jobs finished per second, smoothed */
	char		 worker[300];	/* host:pid, in the claim's row */
	char		 dir[PATH_MAX];	/* the local copies of jobs and logs */
	int		 dirfd;
	bool		 up, said_down, fatal;
	msec_t		 reconnect_at, reconnect_delay;
	bool		 wake;		/* claim at the next chance */
	msec_t		 next_poll;	/* ...or at the latest then (mono) */
	msec_t		 next_renew, next_recover;
	msec_t		 renew_sent;	/* last renewal that succeeded, sent at */
	struct claim	**held;		/* handed to the owner, not released */
	size_t		 nheld, capheld;
	struct claim	*ahead;		/* prefetched, not yet handed out: */
	int		 first, nahead;	/* ahead[first .. first + nahead) */
	size_t		 capahead;	/* slots + prefetch_max */
	struct pending	*pend;
	size_t		 npend, cappend;
	/* pend[0, nsent) are in the statement in flight (flush_send): the
	 * loop goes on running jobs while the server commits them. */
	bool		 flushing;
	size_t		 nsent;
	msec_t		 flush_again;	/* a batch failed: not before then (mono) */
	struct pumps	*pumps;		/* exec'd handlers' output (pump.c) */
	size_t		 queued, deferred;	/* for the title, as last seen */
	msec_t		 next_count;	/* count them again then (count_waiting) */
};

static const struct queue_backend pg_backend;

/* ---- the connection ---- */

/* Lost it: say so once, try again after a growing delay. */
static void
down(struct pgq *pq, const char *what)
{
	msec_t mono = mono_ms();

	if (!pq->said_down)
		say_warn("%s: %s: %s; retrying, jobs keep running until their "
		    "leases need renewing", pq->pg.name, what, pg_error(&pq->pg));
	pq->said_down = true;
	pg_close(&pq->pg);
	pq->up = false;
	pq->flushing = false;	/* its outcomes stay pending: sent again */
	pq->nsent = 0;
	pq->reconnect_delay = pq->reconnect_delay == 0 ? PG_RECONNECT_MIN_MS :
	    pq->reconnect_delay * 2;
	if (pq->reconnect_delay > PG_RECONNECT_MAX_MS)
		pq->reconnect_delay = PG_RECONNECT_MAX_MS;
	pq->reconnect_at = mono + pq->reconnect_delay;
}

/*
 * A failed statement: the connection's fault, or the statement's?  A
 * server that refuses writes (a standby, a demoted primary) is the
 * connection's: the next one goes to the next host of the URI (pg.h).
 */
static void
failed(struct pgq *pq, const char *what)
{
	if (!pg_ok(&pq->pg) || strcmp(pq->pg.state, PG_READ_ONLY) == 0)
		down(pq, what);
	else
		say_err("%s: %s: %s", pq->pg.name, what, pg_error(&pq->pg));
}

static int renew(struct pgq *, msec_t);
static PGresult *q_exec(struct pgq *, const char *, int, const char *const *,
    bool);
static int q_cmd(struct pgq *, const char *, int, const char *const *);

/*
 * Bound every call of this turn of the loop (pg.h: deadline): a third of
 * the lease, like the server's statement_timeout, and while we hold
 * claims no later than the instant expire() must stop their handlers (a
 * twentieth of the lease at least, for a renewal that may still save
 * them).  A reply that comes later is not waited for: the connection is
 * dropped and made again.
 */
static void
arm(struct pgq *pq, msec_t mono)
{
	msec_t d = mono + pq->lease / 3;
	msec_t stop = pq->renew_sent + pq->lease * 5 / 6;

	if (pq->renew_sent != 0 && (pq->nheld > 0 || pq->nahead > 0) &&
	    stop < d)
		d = stop > mono + pq->lease / 20 ? stop : mono + pq->lease / 20;
	pq->pg.deadline = d;
}


/* The server's notices and warnings, as the owner's lines, on one line. */
static void
notice(void *arg, const char *msg)
{
	struct pgq *pq = arg;
	char line[512], *nl;

	strlcpy(line, msg, sizeof(line));
	while ((nl = strchr(line, '\n')) != NULL)
		*nl = nl[1] == '\0' ? '\0' : ' ';
	say_warn("%s: %s", pq->pg.name, line);
}

/* Connect, check the schema, LISTEN, and claim at once. */
static void
reconnect(struct pgq *pq, msec_t mono)
{
	int v;

	arm(pq, mono);
	if (pq->pg.deadline > mono + PG_CONNECT_SECS * 1000)
		pq->pg.deadline = mono + PG_CONNECT_SECS * 1000;
	if (pg_connect(&pq->pg, true, pq->lease / 3) == -1) {
		if (pq->pg.conn != NULL && (PQconnectionNeedsPassword(pq->pg.conn) ||
		    PQconnectionUsedPassword(pq->pg.conn))) {
			say_err("%s: %s", pq->pg.name, pg_error(&pq->pg));
			pq->fatal = true;
		}
		down(pq, "connect");
		return;
	}
	if ((v = pg_schema_version(&pq->pg)) == -1) {
		down(pq, "schema");
		return;
	}
	if (v != PG_SCHEMA_VERSION) {
		say_err("%s: schema version %d, this chute speaks %d (chute init %s)",
		    pq->pg.name, v, PG_SCHEMA_VERSION, pq->pg.name);
		pq->fatal = true;
		return;
	}
	if (pg_cmd(&pq->pg, "LISTEN " PG_CHANNEL, 0, NULL) == -1) {
		down(pq, "LISTEN");
		return;
	}
	PQsetNoticeProcessor(pq->pg.conn, notice, pq);
	arm(pq, mono);		/* the rest of the turn: as any other */
	if (pq->said_down)
		say("%s: connected again", pq->pg.name);
	pq->said_down = false;
	pq->up = true;
	pq->reconnect_delay = 0;
	pq->flush_again = 0;	/* outcomes a lost connection kept: at once */
	pq->wake = true;
	pq->next_recover = mono;
	if (pq->nheld > 0 || pq->nahead > 0 || pq->npend > 0)
		renew(pq, mono);
}

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
 * prefetched ones.  Returns how many, or -1 (the connection's state says
 * why).
 */
static int
claim_rows(struct pgq *pq, int n)
{
	/*
	 * Prepared, and planned once for every LIMIT (pg_conn.c): so the
	 * rows picked are updated by their ctid (a row we hold locked keeps
	 * it) and each payload is fetched by its key, where a join would be
	 * planned for a guessed number of rows and could scan both tables.
	 * A ctid is unique in one table only: where tables inherit from
	 * chute.jobs, rows of theirs at a picked ctid are updated too, so the
	 * update repeats the pick's conditions (never a finished job or
	 * another's claim), and its reply may hold more rows than asked for
	 * (queue_pg_take hands them back).
	 */
	static const char sql[] =
	    "WITH picked AS MATERIALIZED ("
	    " SELECT ctid FROM chute.jobs"
	    " WHERE queue = $1 AND state IN ('new', 'defer') AND run_at <= now()"
	    " ORDER BY run_at, id LIMIT $2::integer FOR UPDATE SKIP LOCKED),"
	    " claimed AS (UPDATE chute.jobs j SET state = 'cur',"
	    " attempts = j.attempts + 1, token = nextval('chute.fence'),"
	    " worker = $3, lease_until = now() + $4::bigint * interval"
	    " '1 millisecond', cancel = false"
	    " WHERE j.ctid = ANY (ARRAY(SELECT ctid FROM picked))"
	    " AND j.queue = $1 AND j.state IN ('new', 'defer')"
	    " AND j.run_at <= now()"
	    " RETURNING j.id, j.token, j.attempts, j.run_at)"
	    " SELECT c.id, c.token, c.attempts, (SELECT p.body FROM"
	    " chute.payloads p WHERE p.queue = $1 AND p.id = c.id)"
	    " FROM claimed c ORDER BY c.run_at, c.id";
	char nb[16], lease[24];
	const char *p[4] = { pq->pg.queue, nb, pq->worker, lease };
	PGresult *r;
	int got;

	snprintf(nb, sizeof(nb), "%d", n);
	snprintf(lease, sizeof(lease), "%lld", (long long)pq->lease);
	if ((r = q_exec(pq, sql, 4, p, true)) == NULL)
		return -1;
	got = queue_pg_take(&pq->q, r, n);
	PQclear(r);
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
	    "WITH back AS (UPDATE chute.jobs SET state = 'new',"
	    " attempts = attempts - 1, token = NULL, worker = NULL,"
	    " lease_until = NULL WHERE queue = $1 AND state = 'cur'"
	    " AND token = ANY($2::bigint[])),"
	    " bad AS (UPDATE chute.jobs j SET state = 'failed', run_at = now(),"
	    " last = 'refused: ' || o.why, token = NULL, worker = NULL,"
	    " lease_until = NULL FROM unnest($3::bigint[], $4::text[])"
	    " AS o(token, why) WHERE j.queue = $1 AND j.state = 'cur'"
	    " AND j.token = o.token RETURNING j.id, j.last)"
	    " INSERT INTO chute.logs (queue, id, body) SELECT $1, id,"
	    " convert_to('@chute ' || to_char(now() AT TIME ZONE 'UTC',"
	    " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\" ') || last || E'\\n', 'UTF8')"
	    " FROM bad";
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
	if (n > 0 && pq->up && p[1] && p[2] && p[3] && q_cmd(pq, sql, 4, p) ==
	    -1)
		failed(pq, "unclaim");
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
		if (PQgetisnull(r, i, 3) || write_job(pq, c, PQgetvalue(r, i, 3),
		    (size_t)PQgetlength(r, i, 3)) == -1) {
			say_err("job=%s: no local copy: %s; it goes back after its "
			    "lease", vis_id(c->id), PQgetisnull(r, i, 3) ?
			    "no payload" : strerror(errno));
			if (c->fd != -1)
				close(c->fd);
			free(c->path);
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

/*
 * How many wait, for the title: up to PG_COUNT_MAX of each kind (at the
 * cap, "at least"), so that a deep queue costs a bounded statement (1.5 us
 * a row here) that cannot reach the statement timeout of a short lease.
 * Asked after a short claim or a renewal, when due: again only after 100
 * times as long as the last count took (failed or not), at most once a
 * poll: at most 1% of this worker's time.
 */
static void
count_waiting(struct pgq *pq)
{
	static const char sql[] =
	    "SELECT (SELECT count(*) FROM (SELECT FROM chute.jobs"
	    " WHERE queue = $1 AND state IN ('new', 'defer') AND run_at <= now()"
	    " LIMIT $2::integer) d), (SELECT count(*) FROM (SELECT FROM"
	    " chute.jobs WHERE queue = $1 AND state IN ('new', 'defer')"
	    " AND run_at > now() LIMIT $2::integer) f)";
	char max[16];
	const char *p[2] = { pq->pg.queue, max };
	msec_t mono = mono_ms();
	PGresult *r;

	if (!pq->up || mono < pq->next_count)
		return;
	snprintf(max, sizeof(max), "%d", PG_COUNT_MAX);
	r = q_exec(pq, sql, 2, p, false);
	pq->next_count = mono + 100 * (mono_ms() - mono);
	if (pq->next_count < mono + PG_POLL_MS)
		pq->next_count = mono + PG_POLL_MS;
	if (r == NULL) {
		failed(pq, "count");
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
 * When is the next job due (for the poll): one step down jobs_due.  It
 * used to count every waiting row too, after every short claim: 36 counts
 * of 40,000 rows, 2.2 s of the server's CPU, while two workers drained
 * them in 4.5 s.
 */
static void
look_ahead(struct pgq *pq, msec_t mono)
{
	static const char sql[] =
	    "SELECT coalesce(extract(epoch FROM (SELECT run_at FROM chute.jobs"
	    " WHERE queue = $1 AND state IN ('new', 'defer') AND run_at > now()"
	    " ORDER BY run_at LIMIT 1) - now()) * 1000, -1)::bigint";
	const char *p[1] = { pq->pg.queue };
	PGresult *r = q_exec(pq, sql, 1, p, false);
	msec_t in;

	pq->next_poll = mono + PG_POLL_MS;
	if (r == NULL) {
		failed(pq, "look ahead");
		return;
	}
	if (pg_rows(r, 1, 1, NULL) != 1) {
		PQclear(r);
		return;
	}
	in = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	if (in >= 0 && mono + in + 1 < pq->next_poll)
		pq->next_poll = mono + in + 1;
	PQclear(r);
	count_waiting(pq);
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
	t = (int)(pq->rate * PG_PREFETCH_MS / 1000);
	if (t < pq->slots)
		t = pq->slots;
	return t < pq->prefetch_max ? t : pq->prefetch_max;
}

/*
 * Hand out n jobs: prefetched ones first, then a batch from the database
 * of the free slots plus the prefetch allowance, claimed only when a
 * notification, a finished job or the poll says there may be work.
 */
static int
pq_claim(struct queue *q, struct claim *const *c, int n)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t mono = mono_ms();
	int got = 0, want, ahead;

	arm(pq, mono);

	ahead = target_ahead(pq, mono);
	if (pq->nahead <= ahead / 4 && pq->up &&
	    (pq->wake || mono >= pq->next_poll)) {
		want = n + ahead - pq->nahead;
		if ((size_t)(want + pq->nahead) > pq->capahead)
			want = (int)pq->capahead - pq->nahead;
		pq->wake = false;
		if (want <= 0)
			pq->wake = true;
		else if ((got = claim_rows(pq, want)) == -1)
			failed(pq, "claim");
		else if (got > 0 && pq->renew_sent == 0)
			pq->renew_sent = mono;	/* the leases date from about now */
		else if (got == want)
			pq->wake = true;	/* there may be more */
		else
			look_ahead(pq, mono);
		if (pq->next_renew == 0 || pq->next_renew > mono + pq->lease / 3)
			pq->next_renew = mono + pq->lease / 3;
	}
	/*
	 * A prefetched claim is only started under a lease renewed lately:
	 * after a pause (SIGSTOP, a suspended VM) renew first, and what the
	 * database no longer gives us is dropped (drop_ahead).
	 */
	if (pq->nahead > 0 && mono - pq->renew_sent >= pq->lease / 3) {
		if (!pq->up || renew(pq, mono) == -1)
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
	return got;
}

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

/*
 * A claim we held is gone: stop its handler (at once when its lease is
 * running out); its outcome will be refused.
 */
static void
lost(struct pgq *pq, struct claim *c, const char *why, bool now)
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

/* A prefetched claim we will not start: its local copy goes. */
static void
forget_ahead(struct pgq *pq, struct claim *c)
{
	if (c->fd != -1)
		close(c->fd);
	unlinkat(pq->dirfd, c->id, 0);
	free(c->path);
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
		    "lease): not started", vis_id(c->id));
		forget_ahead(pq, c);
	}
	pq->nahead = j - pq->first;
}

/*
 * Extend every lease we hold, in one statement, sent well before they
 * expire.  A claim the database no longer gives us (cancelled, or
 * recovered by another worker after we lost touch) stops its handler.
 * The row must name us as well as hold our token: after a failover to an
 * asynchronous standby a token can be handed out again (fleet.md,
 * "Replication"), and another worker's claim must not pass for ours.
 */
static int
renew(struct pgq *pq, msec_t mono)
{
	static const char sql[] =
	    "UPDATE chute.jobs SET lease_until = now() + $3::bigint *"
	    " interval '1 millisecond' WHERE queue = $1 AND state = 'cur'"
	    " AND token = ANY($2::bigint[]) AND worker = $4 RETURNING token";
	struct pg_tarr b = { 0 };
	char lease[24];
	const char *p[4] = { pq->pg.queue, tokens(pq, &b), lease, pq->worker };
	PGresult *r;

	pq->next_renew = mono + pq->lease / 3;
	if (b.len <= 2 || p[1] == NULL) {
		free(b.p);
		pq->renew_sent = mono;
		return 0;
	}
	snprintf(lease, sizeof(lease), "%lld", (long long)pq->lease);
	r = q_exec(pq, sql, 4, p, false);
	free(b.p);
	if (r == NULL) {
		failed(pq, "renew");
		return -1;
	}
	pq->renew_sent = mono;
	for (size_t i = 0; i < pq->nheld; i++) {
		struct claim *c = pq->held[i];

		if (c->token != 0 && !token_back(r, c->token))
			lost(pq, c, "its claim was taken away (cancelled, or "
			    "recovered after its lease)", false);
	}
	drop_ahead(pq, r);
	PQclear(r);
	return 0;
}

/*
 * Cannot renew: before the leases run out (on our own monotonic clock,
 * from when the last good renewal was sent) stop every handler, so a job
 * another worker recovers never runs twice at once.
 */
static void
expire(struct pgq *pq, msec_t mono)
{
	if (pq->renew_sent == 0 || mono < pq->renew_sent + pq->lease * 5 / 6)
		return;
	for (size_t i = 0; i < pq->nheld; i++)
		if (pq->held[i]->token != 0)
			lost(pq, pq->held[i], "cannot renew its lease", true);
	for (int i = pq->first; i < pq->first + pq->nahead; i++)
		forget_ahead(pq, &pq->ahead[i]);
	pq->nahead = pq->first = 0;
	pq->renew_sent = 0;
}

/*
 * Any worker: claims whose lease ran out go back to new (or to failed when
 * their attempts are used up), picked SKIP LOCKED so that recovery never
 * races an outcome being recorded.
 */
static void
recover(struct pgq *pq, msec_t mono)
{
	static const char sql[] =
	    "WITH dead AS MATERIALIZED ("
	    " SELECT queue, id FROM chute.jobs WHERE queue = $1"
	    " AND state = 'cur' AND lease_until < now()"
	    " ORDER BY lease_until LIMIT 100 FOR UPDATE SKIP LOCKED)"
	    " UPDATE chute.jobs j SET state = CASE WHEN j.attempts >= $2::integer"
	    " THEN 'failed' ELSE 'new' END,"
	    " last = CASE WHEN j.attempts >= $2::integer THEN"
	    " 'abandoned: lease expired; attempts exhausted' ELSE j.last END,"
	    " run_at = CASE WHEN j.attempts >= $2::integer THEN now() ELSE"
	    " j.run_at END, token = NULL, worker = NULL, lease_until = NULL"
	    " FROM dead WHERE j.queue = dead.queue AND j.id = dead.id"
	    " RETURNING j.id, j.state, j.attempts";
	char max[16];
	const char *p[2] = { pq->pg.queue, max };
	PGresult *r;

	pq->next_recover = mono + pq->lease / 2;
	snprintf(max, sizeof(max), "%d", pq->c.policy.max_attempts);
	if ((r = q_exec(pq, sql, 2, p, false)) == NULL) {
		failed(pq, "recover");
		return;
	}
	for (int i = 0; i < PQntuples(r); i++) {
		say("job=%s cur->%s attempt=%s recovered: its worker's lease "
		    "expired", vis_id(PQgetvalue(r, i, 0)), PQgetvalue(r, i, 1),
		    PQgetvalue(r, i, 2));
		pq->wake = true;
	}
	PQclear(r);
}

/* ---- outcomes ---- */

/*
 * Record the pending outcomes in one statement: each where its token still
 * matches and the row still names us (renew), with its log.  A refusal means someone else decides that job
 * now; it is said, and nothing else is done.  The statement is sent
 * without waiting for it (flush_send): the owner goes on giving workers
 * their next jobs while the server commits, and the result is taken when
 * it comes (pq_wake) or before the next statement (await_outcomes).  Until then
 * the outcomes stay pending: their leases are renewed, and a lost
 * connection sends them again.
 */
static const char flush_sql[] =
    "WITH o AS (SELECT * FROM unnest($2::text[], $3::bigint[],"
    " $4::text[], $5::bigint[], $6::boolean[], $7::text[], $8::text[])"
    " AS o(id, token, state, delay, counted, last, log)),"
    " rec AS (UPDATE chute.jobs j SET state = o.state,"
    " run_at = CASE o.state WHEN 'new' THEN j.run_at"
    " ELSE now() + o.delay * interval '1 millisecond' END,"
    " attempts = j.attempts - CASE WHEN o.counted THEN 0 ELSE 1 END,"
    " last = o.last, token = NULL, worker = NULL, lease_until = NULL"
    " FROM o WHERE j.queue = $1 AND j.id = o.id AND j.token = o.token"
    " AND j.state = 'cur' AND j.worker = $9 RETURNING j.id),"
    " logged AS (INSERT INTO chute.logs (queue, id, body)"
    " SELECT $1, o.id, decode(o.log, 'hex') FROM o WHERE o.log <> '')"
    " SELECT id FROM rec";

/* Send the pending outcomes' statement: 0, or -1 (they stay pending). */
static int
flush_send(struct pgq *pq)
{
	struct pg_tarr a[7] = { { 0 } };
	const char *p[9];
	char d[24];
	int rc = 0;

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
	if (rc == 0 && pg_send(&pq->pg, flush_sql, 9, NULL, p, NULL, NULL) == 0) {
		pq->flushing = true;
		pq->nsent = pq->npend;
	} else {
		rc = -1;
		failed(pq, "record outcomes");
	}
	for (int k = 0; k < 7; k++)
		free(a[k].p);
	return rc;
}

/* The result r of the statement in flight (NULL: none came): 0, or -1. */
static int
flush_take(struct pgq *pq, PGresult *r)
{
	size_t n = pq->nsent;

	pq->flushing = false;
	pq->nsent = 0;
	if (pg_result(&pq->pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		failed(pq, "record outcomes");
		/* Kept: sent again after a reconnect, or after a pause. */
		pq->flush_again = mono_ms() + RETRY_MS;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int k;
		for (k = 0; k < PQntuples(r); k++)
			if (strcmp(PQgetvalue(r, k, 0), pq->pend[i].id) == 0)
				break;
		if (k == PQntuples(r))
			say_warn("job=%s outcome %s refused: its claim was lost "
			    "(cancelled, or recovered after its lease); "
			    "the job's current state stands",
			    vis_id(pq->pend[i].id), pq->pend[i].to);
		free(pq->pend[i].log);
	}
	PQclear(r);
	memmove(pq->pend, pq->pend + n, (pq->npend - n) * sizeof(*pq->pend));
	pq->npend -= n;
	pq->wake = true;	/* slots freed: there may be work waiting */
	return 0;
}

/*
 * Wait for the outcomes in flight, if any: every other statement on the
 * connection waits for them (one statement at a time), as does the end.
 * 0, or -1 (the batch was refused, or the connection went down: pq->up
 * tells which; the outcomes stay pending either way).
 */
static int
await_outcomes(struct pgq *pq)
{
	if (!pq->flushing)
		return 0;
	return flush_take(pq, pg_await(&pq->pg));
}

/*
 * Statements other than the outcomes' wait for those in flight first: one
 * statement at a time on the connection.  NULL or -1: as pg_exec and
 * pg_cmd (the connection may have gone down meanwhile).
 */
static PGresult *
q_exec(struct pgq *pq, const char *sql, int n, const char *const *p, bool bin)
{
	if (await_outcomes(pq) == -1 && !pq->up)
		return NULL;
	return bin ? pg_exec_bin(&pq->pg, sql, n, p) :
	    pg_exec(&pq->pg, sql, n, p);
}

static int
q_cmd(struct pgq *pq, const char *sql, int n, const char *const *p)
{
	PGresult *r = q_exec(pq, sql, n, p, false);
	int rc = r == NULL ? -1 : 0;

	PQclear(r);
	return rc;
}

/* Send the pending outcomes and wait for them: 0, or -1. */
static int
flush(struct pgq *pq)
{
	if (await_outcomes(pq) == -1)
		return -1;
	if (pq->npend == 0)
		return 0;
	if (flush_send(pq) == -1)
		return -1;
	return await_outcomes(pq);
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

/*
 * Queue the outcome for the next batch (commit sends it).  A claim we know
 * is lost is refused at once (ESTALE): its handler was stopped for it.
 */
static int
pq_record(struct queue *q, struct claim *c, const struct outcome *out,
    msec_t when)
{
	struct pgq *pq = (struct pgq *)q;
	struct pending *o;

	if (c->token == 0) {
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
	snprintf(o->token, sizeof(o->token), "%llu",
	    (unsigned long long)c->token);
	o->to = state_names[out->to];
	o->delay = out->delay;
	o->counted = out->counted;
	strlcpy(o->last, out->why, sizeof(o->last));
	o->log = read_log(pq, c);
	o->since = mono_ms();
	pq->done_n++;
	return 0;
}

static void
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
	unlinkat(pq->dirfd, c->id, 0);
	if (!pq->c.persistent) {
		snprintf(name, sizeof(name), ".%s.log", c->id);
		unlinkat(pq->dirfd, name, 0);
	}
	free(c->path);
	memset(c, 0, sizeof(*c));
	c->fd = c->logfd = -1;
}

/*
 * Send the batch: at once when nothing runs or PG_GROUP_MAX wait, else
 * once the oldest outcome has waited PG_GROUP_MS, so that a busy worker
 * records many per statement (each costs the server a commit and its
 * overhead, whatever it carries); and not while the last batch is in
 * flight (its result, on the connection's socket, wakes the loop:
 * pq_wake).
 */
static msec_t
pq_commit(struct queue *q, bool busy)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t mono;

	if (pq->npend == 0 || (pq->up && pq->flushing))
		return INT64_MAX;
	if (!pq->up)
		return pq->reconnect_at;
	mono = mono_ms();
	if (mono < pq->flush_again)
		return pq->flush_again;
	if (busy && pq->npend < PG_GROUP_MAX &&
	    mono - pq->pend[0].since < PG_GROUP_MS)
		return pq->pend[0].since + PG_GROUP_MS;
	arm(pq, mono);
	if (flush_send(pq) == -1)
		return pq->up ? mono + RETRY_MS : pq->reconnect_at;
	return INT64_MAX;
}

/* ---- the loop's hooks ---- */

static int
pq_fd(struct queue *q)
{
	struct pgq *pq = (struct pgq *)q;

	return pq->up ? PQsocket(pq->pg.conn) : -1;
}

/*
 * Notifications already read (by PQconsumeInput here, or while a
 * statement's reply was awaited): work in our queue, or a cancel of a job
 * we may hold.
 */
static void
notifies(struct pgq *pq)
{
	PGnotify *n;
	size_t ql = strlen(pq->pg.queue);

	while (pq->up && (n = PQnotifies(pq->pg.conn)) != NULL) {
		const char *e = n->extra;

		if (strcmp(e, pq->pg.queue) == 0)
			pq->wake = true;
		else if (strncmp(e, "cancel ", 7) == 0 &&
		    strncmp(e + 7, pq->pg.queue, ql) == 0 && e[7 + ql] == ' ')
			for (size_t i = 0; i < pq->nheld; i++)
				if (strcmp(pq->held[i]->id, e + 8 + ql) == 0)
					pq->c.cancelled(pq->c.arg,
					    pq->held[i]->id,
					    "cancelled from another process",
					    false);
		PQfreemem(n);
	}
}

static int
pq_wake(struct queue *q)
{
	struct pgq *pq = (struct pgq *)q;

	if (!pq->up)
		return pq->fatal ? -1 : 0;
	if (PQconsumeInput(pq->pg.conn) == 0) {
		down(pq, "connection");
		return pq->fatal ? -1 : 0;
	}
	notifies(pq);
	/* The outcomes in flight have their reply: take it. */
	if (pq->flushing && !PQisBusy(pq->pg.conn)) {
		arm(pq, mono_ms());
		await_outcomes(pq);
	}
	return pq->fatal ? -1 : 0;
}

static void
pq_rescan(struct queue *q)
{
	((struct pgq *)q)->wake = true;
}

/* Reconnect, renew, recover, expire: whatever is due. */
static void
pq_due(struct queue *q, msec_t mono)
{
	struct pgq *pq = (struct pgq *)q;

	arm(pq, mono);
	if (!pq->up && mono >= pq->reconnect_at && !pq->fatal)
		reconnect(pq, mono);
	if (pq->up && pq->next_renew != 0 && mono >= pq->next_renew) {
		renew(pq, mono);
		count_waiting(pq);	/* a busy worker's claims are never short */
	}
	if (pq->up && mono >= pq->next_recover)
		recover(pq, mono);
	expire(pq, mono);
}

static msec_t
pq_next(struct queue *q, msec_t mono)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t t;

	notifies(pq);	/* those a statement's reply came with */
	if (pq->fatal)
		return mono;
	if (!pq->up)
		t = pq->reconnect_at;
	else {
		t = pq->wake ? mono : pq->next_poll;
		if (t > pq->next_recover)
			t = pq->next_recover;
		if (pq->next_renew != 0 && t > pq->next_renew)
			t = pq->next_renew;
	}
	if (pq->renew_sent != 0 && pq->nheld > 0 &&
	    t > pq->renew_sent + pq->lease * 5 / 6)
		t = pq->renew_sent + pq->lease * 5 / 6;
	return t;
}

static int
pq_renew(struct queue *q, struct claim *const *c, int n)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t mono = mono_ms();

	arm(pq, mono);
	return pq->up ? renew(pq, mono) : -1;
}

/*
 * Nothing left in new, cur or defer, here or on any other worker.  Two
 * lookups, each in the order of a partial index (jobs_due, jobs_claimed)
 * and with its predicate: one EXISTS over the three states matches
 * neither index, and the planner, expecting a waiting row early, scanned
 * the whole table, a million finished jobs in half a second (fleet.md).
 */
static bool
pq_drained(struct queue *q)
{
	static const char sql[] = "SELECT (SELECT run_at FROM chute.jobs"
	    " WHERE queue = $1 AND state IN ('new', 'defer') ORDER BY run_at"
	    " LIMIT 1) IS NULL AND (SELECT token FROM chute.jobs"
	    " WHERE queue = $1 AND state = 'cur' ORDER BY token LIMIT 1) IS NULL";
	struct pgq *pq = (struct pgq *)q;
	const char *p[1] = { pq->pg.queue };
	PGresult *r;
	bool empty;

	if (!pq->up || pq->nheld > 0 || pq->nahead > 0 || pq->npend > 0)
		return false;
	arm(pq, mono_ms());
	if ((r = q_exec(pq, sql, 1, p, false)) == NULL) {
		failed(pq, "drained");
		return false;
	}
	empty = pg_rows(r, 1, 1, NULL) == 1 && strcmp(PQgetvalue(r, 0, 0),
	    "t") == 0;
	PQclear(r);
	if (!empty && pq->next_poll > mono_ms() + 100)
		pq->next_poll = mono_ms() + 100;	/* others' jobs: look again soon */
	return empty;
}

static void
pq_counts(struct queue *q, struct counts *n)
{
	struct pgq *pq = (struct pgq *)q;

	n->queued = pq->queued + (size_t)pq->nahead;
	n->deferred = pq->deferred;
	n->queued_more = pq->queued >= PG_COUNT_MAX;
	n->deferred_more = pq->deferred >= PG_COUNT_MAX;
}

/* Prefetched jobs we will not run go back, their attempt not counted. */
static void
hand_back(struct pgq *pq)
{
	static const char sql[] =
	    "UPDATE chute.jobs SET state = 'new', attempts = attempts - 1,"
	    " token = NULL, worker = NULL, lease_until = NULL"
	    " WHERE queue = $1 AND state = 'cur' AND token = ANY($2::bigint[])";
	struct pg_tarr b = { 0 };
	char t[24];
	const char *p[2] = { pq->pg.queue, NULL };

	for (int i = pq->first; i < pq->first + pq->nahead; i++) {
		snprintf(t, sizeof(t), "%llu",
		    (unsigned long long)pq->ahead[i].token);
		pg_tarr_add(&b, t);
		forget_ahead(pq, &pq->ahead[i]);
	}
	p[1] = pg_tarr_end(&b);
	if (pq->nahead > 0 && pq->up && p[1] != NULL &&
	    q_cmd(pq, sql, 2, p) == -1)
		failed(pq, "hand back");
	pq->nahead = pq->first = 0;
	free(b.p);
}

static void
pq_start(struct queue *q)
{
	struct pgq *pq = (struct pgq *)q;

	reconnect(pq, mono_ms());
}

static void
pq_close(struct queue *q)
{
	struct pgq *pq = (struct pgq *)q;

	if (pq == NULL)
		return;
	arm(pq, mono_ms());
	if (pq->up && pq->npend > 0)
		flush(pq);
	hand_back(pq);
	for (size_t i = 0; i < pq->npend; i++)
		free(pq->pend[i].log);
	if (pq->npend > 0)
		say_err("%s: %zu outcome(s) not recorded: their jobs run again "
		    "after their leases", pq->pg.name, pq->npend);
	free(pq->pend);
	free(pq->held);
	free(pq->ahead);
	pumps_free(pq->pumps);
	if (pq->dirfd != -1) {
		close(pq->dirfd);
		rmdir(pq->dir);
	}
	pg_close(&pq->pg);
	free(pq->pg.uri);
	free(pq);
}

/*
 * The local directories of workers that died without cleaning up (kill -9)
 * are removed: chute-pgsql.PID.XXXXXX whose PID is gone.  They hold only
 * files (job copies and logs) that no live process uses.  Only our own:
 * another user may plant a symlink by that name (to a directory whose
 * files we would delete) or a directory of theirs.  Each is opened with
 * O_NOFOLLOW and checked by the owner of what was opened, not of the name;
 * inside, unlinkat never follows a symlink, and a directory stays.
 */
static void
sweep_dead(const char *tmp)
{
	int tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	DIR *d = tfd == -1 ? NULL : fdopendir(tfd), *f;
	struct dirent *de, *fe;
	struct stat st;
	long pid;

	if (d == NULL) {
		if (tfd != -1)
			close(tfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (sscanf(de->d_name, "chute-pgsql.%ld.", &pid) != 1 || pid <= 0 ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		fd = openat(tfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (fd == -1)
			continue;
		if (fstat(fd, &st) == -1 || st.st_uid != geteuid() ||
		    (f = fdopendir(fd)) == NULL) {
			close(fd);
			continue;
		}
		while ((fe = readdir(f)) != NULL)
			if (strcmp(fe->d_name, ".") != 0 && strcmp(fe->d_name, "..") != 0)
				unlinkat(fd, fe->d_name, 0);
		closedir(f);
		unlinkat(tfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/*
 * Where the local copies go: systemd's RuntimeDirectory= (a tmpfs under
 * /run, private to the unit: no inode allocation on a disk per job, which
 * on a file system that has just freed many inodes costs more than the
 * rest of the job), else $TMPDIR, else /tmp.
 */
static const char *
local_base(void)
{
	static char first[PATH_MAX];
	const char *rt = getenv("RUNTIME_DIRECTORY"), *tmp = getenv("TMPDIR");

	if (rt != NULL && *rt == '/') {
		/* Several directories are separated by ':'; take the first. */
		strlcpy(first, rt, sizeof(first));
		first[strcspn(first, ":")] = '\0';
		return first;
	}
	return tmp != NULL && *tmp != '\0' ? tmp : "/tmp";
}

/*
 * A queue on the database pg names (parsed, not connected: start connects,
 * and keeps trying while the server is down).  lease: the claims' length;
 * slots: the owner's; prefetch: claims held beyond them, at most.  Returns 0 with *qp set, or an exit
 * status after one line saying why.
 */
int
queue_pg_open(const struct pg *pg, msec_t lease, int slots, int prefetch,
    const struct queue_conf *c, struct queue **qp)
{
	struct pgq *pq = calloc(1, sizeof(*pq));
	const char *tmp = local_base();
	char host[256] = "localhost";

	*qp = NULL;
	if (pq == NULL) {
		fprintf(stderr, "chute: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	pq->q.be = &pg_backend;
	pq->q.worker_fd = -1;
	pq->pg = *pg;
	pq->pg.conn = NULL;
	pq->pg.nprep = 0;
	/* A handful of statements, run for every batch: prepared. */
	pq->pg.prepare = true;
	pq->pg.uri = strdup(pg->uri);
	pq->q.name = pq->pg.name;
	pq->c = *c;
	pq->lease = lease;
	pq->slots = slots < prefetch ? slots : prefetch;
	pq->prefetch_max = prefetch;
	pq->capahead = (size_t)slots + (size_t)prefetch;
	pq->done_t0 = mono_ms();
	pq->dirfd = -1;
	pq->pumps = pumps_new(PG_LOG_CAP);
	gethostname(host, sizeof(host) - 1);
	snprintf(pq->worker, sizeof(pq->worker), "%s:%ld", host, (long)getpid());
	sweep_dead(tmp);
	if ((size_t)snprintf(pq->dir, sizeof(pq->dir), "%s/chute-pgsql.%ld."
	    "XXXXXX", tmp, (long)getpid()) >= sizeof(pq->dir)) {
		fprintf(stderr, "chute: %s: %s\n", tmp, strerror(ENAMETOOLONG));
		pq->dir[0] = '\0';
		pq_close(&pq->q);
		return EX_CONFIG;
	}
	if (pq->pg.uri == NULL || pq->pumps == NULL ||
	    (pq->ahead = calloc(pq->capahead,
	    sizeof(*pq->ahead))) == NULL || mkdtemp(pq->dir) == NULL ||
	    (pq->dirfd = open(pq->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		fprintf(stderr, "chute: %s: %s\n", pq->dir, strerror(errno));
		pq_close(&pq->q);
		return EX_IOERR;
	}
	*qp = &pq->q;
	return 0;
}

static const struct queue_backend pg_backend = {
	.name = "postgresql",
	.start = pq_start,
	.fd = pq_fd,
	.wake = pq_wake,
	.rescan = pq_rescan,
	.due = pq_due,
	.next = pq_next,
	.claim = pq_claim,
	.renew = pq_renew,
	.record = pq_record,
	.release = pq_release,
	.commit = pq_commit,
	.drained = pq_drained,
	.counts = pq_counts,
	.close = pq_close,
};
