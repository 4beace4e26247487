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
#include "queue/pg/pg_view.h"
#include "queue/queue.h"
#include "queue/pg/pgq.h"

static const struct queue_backend pg_backend;
static void reconnect(struct pgq *, msec_t);

/* ---- the loop's hooks ---- */

static int
pq_fd(struct queue *q)
{
	struct pgq *pq = (struct pgq *)q;

	return pq->up ? PQsocket(pq->pg.conn) : -1;
}

/* Is e "WORD QUEUE" for our queue? */
static bool
about_us(struct pgq *pq, const char *e, const char *word)
{
	size_t wl = strlen(word);

	return strncmp(e, word, wl) == 0 && e[wl] == ' ' &&
	    strcmp(e + wl + 1, pq->pg.queue) == 0;
}

/*
 * Notifications already read (by PQconsumeInput here, or while a
 * statement's reply was awaited): work in our queue, our queue paused or
 * resumed (pg_queues.c), or a cancel of a job we may hold.
 */
static void
notifies(struct pgq *pq)
{
	PGnotify *n;
	const char *id;

	while (pq->up && (n = PQnotifies(pq->pg.conn)) != NULL) {
		const char *e = n->extra;

		if (strcmp(e, pq->pg.queue) == 0)
			pq->wake = true;
		else if (about_us(pq, e, "pause") || about_us(pq, e, "resume"))
			pq->pause_heard = true;
		else if (about_us(pq, e, "retention"))
			pq->keep_heard = true;
		else if ((id = pg_cancel_of(e, pq->pg.queue)) != NULL)
			for (size_t i = 0; i < pq->nheld; i++)
				if (strcmp(pq->held[i]->id, id) == 0)
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
		pgq_down(pq, "connection");
		return pq->fatal ? -1 : 0;
	}
	notifies(pq);
	/* The statement in flight has its reply: take it. */
	if ((pq->flushing || pq->claiming) && !PQisBusy(pq->pg.conn)) {
		pgq_arm(pq, mono_ms());
		pgq_await_outcomes(pq);
	}
	return pq->fatal ? -1 : 0;
}

static void
pq_rescan(struct queue *q)
{
	((struct pgq *)q)->wake = true;
}

/*
 * Tell the views that jobs moved: one notification on their channel, sent
 * after what it is about was committed, at most once per PGV_NOTIFY_MS
 * however many batches a busy worker records; the last change of a burst
 * is told when the interval ends.  Workers do not listen there, so none
 * is woken by another's.  Without views it costs the server a statement
 * and a notification queued, twice a second at most (fleet.md).
 */
static void
tell_views(struct pgq *pq, msec_t mono)
{
	static const char sql[] = "SELECT pg_notify('" PGV_CHANNEL "', $1)";
	const char *p[1] = { pq->pg.queue };

	pq->view_owed = false;
	pq->view_at = mono;
	if (pgq_cmd(pq, sql, 1, p) == -1)
		pgq_failed(pq, "notify");
}

/* "pause QUEUE" or "resume QUEUE" was heard: what is it now? */
static void
pause_check(struct pgq *pq)
{
	char by[128];
	bool paused;

	pq->pause_heard = false;
	if (pg_paused(&pq->pg, pq->pg.queue, &paused, by, sizeof(by), NULL) ==
	    -1) {
		pgq_failed(pq, "paused");
		return;
	}
	pgq_set_paused(pq, paused, by);
}

/* Reconnect, renew, recover, expire, tell the views: whatever is due. */
static void
pq_due(struct queue *q, msec_t mono)
{
	struct pgq *pq = (struct pgq *)q;

	pgq_arm(pq, mono);
	if (!pq->up && mono >= pq->reconnect_at && !pq->fatal)
		reconnect(pq, mono);
	if (pq->up && pq->pause_heard) {
		pgq_await_outcomes(pq);	/* one statement at a time */
		if (pq->up)
			pause_check(pq);
	}
	if (pq->up && pq->keep_heard) {
		pgq_await_outcomes(pq);	/* one statement at a time */
		if (pq->up)
			pgq_keep_check(pq, mono);
	}
	if (pq->up && mono >= pq->next_sweep)
		pgq_sweep(pq, mono);
	if (pq->up && pq->next_renew != 0 && mono >= pq->next_renew) {
		pgq_renew(pq, mono);
		pgq_count_waiting(pq);	/* a busy worker's claims are never short */
	}
	if (pq->up && mono >= pq->next_recover)
		pgq_recover(pq, mono);
	/* Not while a statement is in flight: its reply wakes us. */
	if (pq->up && pq->nunheld > 0 && !pq->flushing && !pq->claiming)
		pgq_unheld_send(pq);
	pgq_expire(pq, mono);
	/*
	 * Not while outcomes are in flight: the statement would wait for
	 * them, and the loop goes on meanwhile only if nothing waits.  Their
	 * result wakes the loop (pq_wake), and then it is sent.
	 */
	if (pq->up && pq->view_owed && !pq->flushing && !pq->claiming &&
	    mono >= pq->view_at + PGV_NOTIFY_MS)
		tell_views(pq, mono);
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
		/*
		 * Work may be waiting (a wake-up), or the safety poll is due:
		 * a turn then only if slots wait for work and no statement is
		 * in flight.  With every slot busy the next one freed asks
		 * for work, and a statement's reply wakes us: a turn before
		 * would only spin (under a deep queue no claim comes back
		 * short, and next_poll stays in the past).
		 */
		if (!pq->starved || pq->flushing || pq->claiming)
			t = INT64_MAX;
		else
			t = pq->wake ? mono : pq->next_poll;
		if (t > pq->next_recover)
			t = pq->next_recover;
		if (t > pq->next_sweep)
			t = pq->next_sweep;
		if (pq->next_renew != 0 && t > pq->next_renew)
			t = pq->next_renew;
		if (pq->view_owed && !pq->flushing && !pq->claiming &&
		    t > pq->view_at + PGV_NOTIFY_MS)
			t = pq->view_at + PGV_NOTIFY_MS;
		if (pq->nunheld > 0 && !pq->flushing && !pq->claiming)
			t = mono;
	}
	/* Armed with no job running too: pgq_expire takes it back in time. */
	if (pq->renew_sent != 0 && (pq->nheld > 0 || pq->reaper_from != 0) &&
	    t > pq->renew_sent + pq->lease * 5 / 6)
		t = pq->renew_sent + pq->lease * 5 / 6;
	return t;
}

static int
pq_renew(struct queue *q, struct claim *const *c, int n)
{
	struct pgq *pq = (struct pgq *)q;
	msec_t mono = mono_ms();

	pgq_arm(pq, mono);
	return pq->up ? pgq_renew(pq, mono) : -1;
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
	static const char sql[] = "SELECT (SELECT run_at FROM chute.live"
	    " WHERE queue = $1 AND state IN ('new', 'defer') ORDER BY run_at"
	    " LIMIT 1) IS NULL AND (SELECT token FROM chute.live"
	    " WHERE queue = $1 AND state = 'cur' ORDER BY token LIMIT 1) IS NULL";
	struct pgq *pq = (struct pgq *)q;
	const char *p[1] = { pq->pg.queue };
	PGresult *r;
	bool empty;

	if (!pq->up || pq->nheld > 0 || pq->nahead > 0 || pq->npend > 0 ||
	    pq->claiming)
		return false;
	pgq_arm(pq, mono_ms());
	if ((r = pgq_exec(pq, sql, 1, p, false)) == NULL) {
		pgq_failed(pq, "drained");
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
	n->paused = pq->paused;
}

/*
 * A clean stop: chute.workers says so (gone at once, not after the
 * lease).  A worker killed is gone when its lease runs out instead.
 */
static void
stopped(struct pgq *pq)
{
	static const char sql[] = "UPDATE chute.workers SET stopped = now(),"
	    " seen = now() WHERE worker = $1";
	const char *p[1] = { pq->worker };

	if (!pq->up || !pq->registered)
		return;
	if (pgq_cmd(pq, sql, 1, p) == -1)
		pgq_failed(pq, "stopped");
	else
		pgq_moved(pq);
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
	pgq_arm(pq, mono_ms());
	if (pq->up && pq->npend > 0)
		pgq_flush(pq);
	if (pq->up && pq->nunheld > 0)
		pgq_unheld_send(pq);	/* else at the lease's end */
	pgq_hand_back(pq);
	stopped(pq);
	if (pq->up && pq->view_owed)
		tell_views(pq, mono_ms());	/* a draining worker's last jobs */
	for (size_t i = 0; i < pq->npend; i++)
		free(pq->pend[i].log);
	if (pq->npend > 0)
		say_err("%s: %zu outcome(s) not recorded: their jobs run again "
		    "after their leases", pq->pg.name, pq->npend);
	free(pq->pend);
	free(pq->unheld);
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

int
queue_pg_open(const struct pg *pg, const struct pgq_opts *o,
    const struct queue_conf *c, struct queue **qp)
{
	msec_t lease = o->lease;
	int slots = o->slots, prefetch = o->prefetch;
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
	pq->q.says_outcomes = true;	/* after each batch's commit */
	pq->pg = *pg;
	pq->pg.conn = NULL;
	pq->pg.nprep = 0;
	/* A handful of statements, run for every batch: prepared. */
	pq->pg.prepare = true;
	pq->pg.uri = strdup(pg->uri);
	pq->q.name = pq->pg.name;
	pq->c = *c;
	pq->lease = lease;
	pq->poll = o->poll;
	pq->nslots = slots;
	pq->slots = slots < prefetch ? slots : prefetch;
	pq->prefetch_max = prefetch;
	pq->capahead = (size_t)slots + (size_t)prefetch;
	pq->done_t0 = mono_ms();
	pq->claim_take = pgq_claim_take;
	pq->dirfd = -1;
	pq->keep.done = pq->keep.failed = KEEP_FOREVER;
	pq->next_sweep = INT64_MAX;
	pq->pumps = pumps_new(PG_LOG_CAP);
	gethostname(host, sizeof(host) - 1);
	snprintf(pq->worker, sizeof(pq->worker), "%s:%ld", host, (long)getpid());
	strlcpy(pq->host, host, sizeof(pq->host));
	snprintf(pq->pid, sizeof(pq->pid), "%ld", (long)getpid());
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

/*
 * An outcome only under a lease: past five sixths of it since the last
 * renewal (a handler the reaper killed while we were stopped, whose
 * SIGCHLD is read before our own deadline's turn of the loop) the claims
 * are given up first, so that its ending is refused (ESTALE), never
 * recorded as the job's failure.  Here, not in queue_pg_outcome.c: the
 * arrows between it and queue_pg_claim.c go one way.
 */
static int
pq_record_leased(struct queue *q, struct claim *c, const struct outcome *out,
    msec_t when)
{
	pgq_expire((struct pgq *)q, mono_ms());
	return pq_record(q, c, out, when);
}

/* The last job of ours released, none claimed ahead: no deadline. */
static void
pq_release_told(struct queue *q, struct claim *c)
{
	struct pgq *pq = (struct pgq *)q;

	pq_release(q, c);
	if (pq->nheld == 0 && pq->nahead == 0)
		pgq_tell_reaper(pq);
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
	.record = pq_record_leased,
	.release = pq_release_told,
	.commit = pq_commit,
	.drained = pq_drained,
	.counts = pq_counts,
	.close = pq_close,
};

/* ---- the connection, made again ---- */

/* Connect, check the schema, LISTEN, say who we are, and claim at once. */
static void
reconnect(struct pgq *pq, msec_t mono)
{
	int v;

	pgq_arm(pq, mono);
	if (pq->pg.deadline > mono + PG_CONNECT_SECS * 1000)
		pq->pg.deadline = mono + PG_CONNECT_SECS * 1000;
	if (pg_connect(&pq->pg, true, pq->lease / 3) == -1) {
		if (pq->pg.conn != NULL && (PQconnectionNeedsPassword(pq->pg.conn) ||
		    PQconnectionUsedPassword(pq->pg.conn))) {
			say_err("%s: %s", pq->pg.name, pg_error(&pq->pg));
			pq->fatal = true;
			pq->q.exit_status = EX_NOPERM;
		}
		pgq_down(pq, "connect");
		return;
	}
	/* The journal's, from the first statement: in say()'s order. */
	PQsetNoticeProcessor(pq->pg.conn, pgq_notice, pq);
	if ((v = pg_schema_version(&pq->pg)) == -1) {
		pgq_down(pq, "schema");
		return;
	}
	if (v != PG_SCHEMA_VERSION) {
		say_err("%s: schema version %d, this chute speaks %d: %s",
		    pq->pg.name, v, PG_SCHEMA_VERSION, v > PG_SCHEMA_VERSION ?
		    "upgrade chute" : "run chute init");
		pq->fatal = true;
		pq->q.exit_status = EX_CONFIG;
		return;
	}
	if (pg_cmd(&pq->pg, "LISTEN " PG_CHANNEL, 0, NULL) == -1) {
		pgq_down(pq, "LISTEN");
		return;
	}
	pgq_arm(pq, mono);		/* the rest of the turn: as any other */
	if (pq->said_down)
		say("%s: connected again", pq->pg.name);
	pq->said_down = false;
	pq->up = true;
	pq->reconnect_delay = 0;
	pq->flush_again = 0;	/* outcomes a lost connection kept: at once */
	pq->wake = true;
	pq->starved = true;	/* ask at once, whatever the slots did */
	pq->pause_heard = true;	/* paused or resumed while we were away? */
	pq->keep_heard = true;	/* its retention too */
	pq->next_recover = mono;
	/* Our row in chute.workers, and the leases we hold, at once. */
	pgq_renew(pq, mono);
}
