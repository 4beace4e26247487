/*
 * store_pg_page.c: the dashboard's pages of a queue (queue/page.h), as
 * the store's page, page_job, page_failures and page_matching answer
 * them, and the overview's oldest queued job and the hour before the
 * start: each statement an index's range under a LIMIT, read-only.  The
 * caller holds the connection and bounds its calls (pg.deadline).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/spool.h"
#include "queue/page.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/view.h"

#define LOG_ROWS	1000	/* a job's log rows looked at: the newest */
#define SEED_MAX	100000	/* finished rows the hour's start reads, at most */

/* A statement's rows, or NULL with err set. */
static PGresult *
query(struct pg *pg, const char *sql, int n, const char *const *p, bool bin,
    char *err, size_t len)
{
	PGresult *r = bin ? pg_exec_bin(pg, sql, n, p) : pg_exec(pg, sql, n, p);

	if (r == NULL)
		snprintf(err, len, "%s: %s", pg->name, pg->late ?
		    "no reply within 3s" : pg_error(pg));
	return r;
}

static long long
col_ll(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col),
	    NULL, 10);
}

/* ---- a page of one state, in the order of `chute ls URL` ---- */

/*
 * A time in microseconds since the epoch, as a bigint.  The last 800 or
 * so of the years a timestamptz holds (to 294276) are more microseconds
 * than a bigint does: a row dated there (finite: version 7's checks let
 * it by) failed its page, "bigint out of range".  Those are said as
 * US_MAX (year 293,500), which a page's cursor takes back; a cursor
 * there goes on to those of them whose ID is greater, so that the pages
 * end (some of those rows, dated past 293,500, may be left out).  An
 * infinity past the checks (dropped by the role that owns the tables)
 * is said as the first time or as US_MAX.
 */
#define US_MAX		"9200000000000000000"
#define EPOCH_US(t)	"least(greatest(extract(epoch FROM " t ") * 1000000," \
	" -210866803200000000), " US_MAX ")::bigint"
#define US_AT(us)	"(timestamptz 'epoch' + " us "::bigint * interval" \
	" '1 microsecond')"

/*
 * After the cursor (run_at, id), in that order, by the state's index
 * (jobs_due, jobs_finished, jobs_failed; cur is few), its range starting
 * at the cursor's run_at (the run_at >= makes it the index's range: the
 * row comparison alone would be a filter on an index without id); at
 * most PAGE_SCAN_MAX rows looked at for the prefix, then the page's rows.
 * The subquery's order is the outer one's, so nothing is sorted and the
 * scan stops at the page's LIMIT.  run_at goes both ways in microseconds
 * since the epoch, exactly (but past US_MAX, above).
 */
#define LIST_AFTER "queue = $1 AND state = $2 AND ($3::bigint IS NULL OR" \
	" (run_at >= " US_AT("$3") " AND (least(run_at, " US_AT(US_MAX) ")," \
	" id) > (" US_AT("$3") ", $4)))"
static const char list_sql[] = "SELECT id, " EPOCH_US("run_at") ","
    " attempts, last FROM (SELECT id, run_at, attempts,"
    " last FROM chute.jobs WHERE " LIST_AFTER " ORDER BY run_at, id LIMIT"
    " $5) x WHERE starts_with(id, $6) ORDER BY run_at, id LIMIT $7";
/* A short page with a prefix: did the scan stop at PAGE_SCAN_MAX rows? */
static const char scanned_sql[] = "SELECT count(*) FROM (SELECT 1 FROM"
    " chute.jobs WHERE " LIST_AFTER " ORDER BY run_at, id LIMIT $5) x";

static void
list_rows(PGresult *r, const struct page_query *q, struct page_list *l)
{
	int n = pg_rows(r, 4, q->rows + 1, NULL);

	for (int i = 0; i < n; i++) {
		strlcpy(l->v[i].id, PQgetvalue(r, i, 0), sizeof(l->v[i].id));
		l->v[i].us = col_ll(r, i, 1);
		l->v[i].attempts = (int)col_ll(r, i, 2);
		strlcpy(l->v[i].last, PQgetvalue(r, i, 3), sizeof(l->v[i].last));
	}
	l->more = n > q->rows;
	l->n = l->more ? q->rows : (n > 0 ? n : 0);
}

int
pg_page_list(struct pg *pg, const struct page_query *q, struct page_list *l,
    char *err, size_t len)
{
	char after[24], scan[16], rows[16];
	const char *p[7] = { NULL, state_names[q->state], q->after ? after :
	    NULL, q->after_id, scan, q->prefix, rows };
	PGresult *r;

	snprintf(after, sizeof(after), "%lld", (long long)q->after_us);
	snprintf(scan, sizeof(scan), "%d", PAGE_SCAN_MAX);
	snprintf(rows, sizeof(rows), "%d", q->rows + 1);
	p[0] = pg->queue;
	if ((r = query(pg, list_sql, 7, p, false, err, len)) == NULL)
		return -1;
	list_rows(r, q, l);
	PQclear(r);
	/* A failure here only leaves the note out. */
	if (!l->more && q->prefix[0] != '\0' &&
	    (r = query(pg, scanned_sql, 5, p, false, err, len)) != NULL) {
		l->cut = pg_rows(r, 1, 1, NULL) == 1 &&
		    col_ll(r, 0, 0) >= PAGE_SCAN_MAX;
		PQclear(r);
	}
	return 0;
}

/* ---- one job ---- */

static int
job_row(struct pg *pg, const char *id, struct page_job *j, char *err,
    size_t len)
{
	static const char sql[] = "SELECT state, attempts, last, worker, size,"
	    " " EPOCH_US(PG_NEAR("run_at")) ","
	    " (extract(epoch FROM " PG_NEAR("lease_until") " - now()) * 1000)"
	    "::bigint, priority, coalesce(key, '') FROM chute.jobs"
	    " WHERE queue = $1 AND id = $2";
	const char *p[2] = { pg->queue, id };
	PGresult *r = query(pg, sql, 2, p, false, err, len);

	if (r == NULL)
		return -1;
	if (pg_rows(r, 9, 1, NULL) != 1) {
		PQclear(r);
		return 1;
	}
	j->state = state_from_name(PQgetvalue(r, 0, 0));
	j->prio = (int)col_ll(r, 0, 7);
	strlcpy(j->key, PQgetvalue(r, 0, 8), sizeof(j->key));
	j->attempts = (int)col_ll(r, 0, 1);
	strlcpy(j->last, PQgetvalue(r, 0, 2), sizeof(j->last));
	if (j->state == ST_CUR && !PQgetisnull(r, 0, 3))
		snprintf(j->worker, sizeof(j->worker), "%s, lease %s %lld ms",
		    PQgetvalue(r, 0, 3), col_ll(r, 0, 6) >= 0 ? "for" :
		    "ran out", llabs(col_ll(r, 0, 6)));
	j->size = col_ll(r, 0, 4);
	j->us = col_ll(r, 0, 5);
	PQclear(r);
	return 0;
}

/*
 * Which of the newest LOG_ROWS rows of its log make its last PAGE_LOG_MAX
 * bytes: the first of them (*seq) and from where in it (*from, 1-based).
 */
static int
log_span(struct pg *pg, const char *id, struct page_job *j, long long *seq,
    long long *from, char *err, size_t len)
{
	static const char sql[] = "SELECT seq, octet_length(body) FROM"
	    " chute.job_logs WHERE queue = $1 AND id = $2 ORDER BY seq DESC"
	    " LIMIT 1000";
	const char *p[2] = { pg->queue, id };
	PGresult *r = query(pg, sql, 2, p, false, err, len);
	long long got = 0;
	int n;

	if (r == NULL)
		return -1;
	n = pg_rows(r, 2, LOG_ROWS, NULL);
	j->logsize = n > 0 ? 0 : -1;
	for (int i = 0; i < n; i++) {
		long long size = col_ll(r, i, 1);

		j->logsize += size;
		if (got < PAGE_LOG_MAX) {
			*seq = col_ll(r, i, 0);
			*from = got + size > PAGE_LOG_MAX ? got + size -
			    PAGE_LOG_MAX + 1 : 1;
			got += size - (*from - 1);
		}
	}
	PQclear(r);
	return 0;
}

static int
job_log(struct pg *pg, const char *id, struct page_job *j, char *err,
    size_t len)
{
	static const char sql[] = "SELECT CASE WHEN seq = $3::bigint THEN"
	    " substring(body FROM $4::integer) ELSE body END FROM chute.job_logs"
	    " WHERE queue = $1 AND id = $2 AND seq >= $3::bigint ORDER BY seq";
	long long seq = 0, from = 1;
	char s[24], f[24];
	const char *p[4] = { pg->queue, id, s, f };
	PGresult *r;

	if (log_span(pg, id, j, &seq, &from, err, len) == -1 || j->logsize < 0)
		return j->logsize < 0 ? 0 : -1;
	snprintf(s, sizeof(s), "%lld", seq);
	snprintf(f, sizeof(f), "%lld", from);
	if ((r = query(pg, sql, 4, p, true, err, len)) == NULL)
		return -1;
	if ((j->log = malloc(PAGE_LOG_MAX)) != NULL)
		for (int i = 0; i < PQntuples(r); i++) {
			size_t k = (size_t)PQgetlength(r, i, 0);

			if (j->loglen + k > PAGE_LOG_MAX)
				k = PAGE_LOG_MAX - j->loglen;
			memcpy(j->log + j->loglen, PQgetvalue(r, i, 0), k);
			j->loglen += k;
		}
	PQclear(r);
	return 0;
}

/*
 * The unique key it was submitted with (chute.payloads, schema 10; one of
 * ours, checked as status does): the page shows it, and does without it
 * when it cannot be read.
 */
static void
job_unique(struct pg *pg, const char *id, struct page_job *j)
{
	static const char sql[] = "SELECT unique_key FROM chute.payloads"
	    " WHERE queue = $1 AND id = $2 AND unique_key IS NOT NULL";
	const char *p[2] = { pg->queue, id };
	char err[160];
	const char *why;
	PGresult *r = query(pg, sql, 2, p, false, err, sizeof(err));

	if (r != NULL && pg_rows(r, 1, 1, NULL) == 1 &&
	    key_valid(PQgetvalue(r, 0, 0), &why))
		strlcpy(j->unique, PQgetvalue(r, 0, 0), sizeof(j->unique));
	PQclear(r);
}

int
pg_page_job(struct pg *pg, const char *id, struct page_job *j, char *err,
    size_t len)
{
	int rc;

	memset(j, 0, sizeof(*j));
	strlcpy(j->id, id, sizeof(j->id));
	j->logsize = -1;
	if ((rc = job_row(pg, id, j, err, len)) == 0 &&
	    (rc = job_log(pg, id, j, err, len)) == 0)
		job_unique(pg, id, j);
	return rc;
}

/* ---- failures by reason: the newest PAGE_FAIL_READ, by jobs_failed ---- */

static const char groups_sql[] = "SELECT last, count(*), (array_agg(id ORDER"
    " BY run_at DESC, id))[1], " EPOCH_US("max(run_at)") ","
    " sum(count(*)) OVER () FROM (SELECT id, last, run_at"
    " FROM chute.jobs WHERE queue = $1 AND state = 'failed' ORDER BY run_at"
    " DESC, id LIMIT $2) f GROUP BY last ORDER BY count(*) DESC, max(run_at)"
    " DESC";

int
pg_page_failures(struct pg *pg, struct page_failures *f, char *err,
    size_t len)
{
	char max[16];
	const char *p[2] = { NULL, max };
	PGresult *r;
	int n;

	memset(f, 0, sizeof(*f));
	snprintf(max, sizeof(max), "%d", PAGE_FAIL_READ);
	p[0] = pg->queue;
	if ((r = query(pg, groups_sql, 2, p, false, err, len)) == NULL)
		return -1;
	n = pg_rows(r, 5, PAGE_FAIL_READ, NULL);
	f->read = n > 0 ? col_ll(r, 0, 4) : 0;
	f->other = f->read;
	for (int i = 0; i < n && i < PAGE_GROUPS; i++, f->n++) {
		struct page_group *v = &f->v[i];

		strlcpy(v->reason, PQgetvalue(r, i, 0), sizeof(v->reason));
		v->n = col_ll(r, i, 1);
		strlcpy(v->id, PQgetvalue(r, i, 2), sizeof(v->id));
		v->us = col_ll(r, i, 3);
		f->other -= v->n;
	}
	PQclear(r);
	return 0;
}

/* ---- failed jobs matching a filter, for "retry matching" ---- */

static const char matching_sql[] = "SELECT id FROM (SELECT id, last, run_at"
    " FROM chute.jobs WHERE queue = $1 AND state = 'failed' ORDER BY run_at,"
    " id LIMIT $2) x WHERE starts_with(id, $3) AND ($4 = '' OR last = $4)"
    " ORDER BY run_at, id LIMIT $5";

int
pg_page_matching(struct pg *pg, const struct page_query *q, char *ids,
    int max, char *err, size_t len)
{
	char scan[16], lim[16];
	const char *p[5] = { NULL, scan, q->prefix, q->reason, lim };
	PGresult *r;
	int n;

	snprintf(scan, sizeof(scan), "%d", PAGE_SCAN_MAX);
	snprintf(lim, sizeof(lim), "%d", max);
	p[0] = pg->queue;
	if ((r = query(pg, matching_sql, 5, p, false, err, len)) == NULL)
		return -1;
	n = pg_rows(r, 1, max, NULL);
	for (int i = 0; i < n; i++)
		strlcpy(ids + (size_t)i * PAGE_ID_LEN, PQgetvalue(r, i, 0),
		    PAGE_ID_LEN);
	PQclear(r);
	return n < 0 ? 0 : n;
}

/* ---- the overview: the oldest queued job, the hour before the start ---- */

/*
 * The oldest job waiting, by the claim's index (jobs_due: queue, run_at,
 * id), first in its order: one row.  On the source's connection, between
 * its reads; a server that is gone is its to find and say.
 */
int
pg_top_oldest(struct pgtop *q, msec_t *at)
{
	static const char sql[] = "SELECT (extract(epoch FROM now() - "
	    PG_NEAR("run_at") ") * 1000)::bigint FROM chute.jobs WHERE queue = $1 AND state ="
	    " 'new' ORDER BY run_at, id LIMIT 1";
	struct pg *pg = pgtop_pg(q);
	const char *p[1] = { pg->queue };
	PGresult *r;

	if (!pg_ok(pg))
		return -1;
	pg->deadline = mono_ms() + PG_PAGE_WAIT_MS;
	r = pg_exec(pg, sql, 1, p);
	pg->deadline = 0;
	if (r == NULL)
		return -1;
	*at = PQntuples(r) == 1 ? now_ms() - col_ll(r, 0, 0) : 0;
	PQclear(r);
	return 0;
}

/*
 * The hour before the start, per minute ago, from jobs_finished: its
 * newest SEED_MAX rows at most (past them, the chart says so).
 */
int
pg_hour(struct pg *pg, void (*add)(void *, int, msec_t, unsigned), void *arg,
    msec_t *at, bool *part)
{
	static const char sql[] = "SELECT floor(extract(epoch FROM now() - "
	    PG_NEAR("run_at") ") / 60)::bigint, state = 'done', count(*),"
	    " sum(count(*))"
	    " OVER () FROM (SELECT run_at, state FROM chute.jobs WHERE queue ="
	    " $1 AND state IN ('done', 'failed') AND run_at > now() - interval"
	    " '1 hour' ORDER BY run_at DESC LIMIT 100000) x GROUP BY 1, 2";
	const char *p[1] = { pg->queue };
	msec_t now = now_ms();
	PGresult *r = pg_exec(pg, sql, 1, p);
	int n;

	_Static_assert(SEED_MAX == 100000, "the statement says 100000");
	if (r == NULL)
		return pg_fail(pg, "web");
	*at = now;
	n = pg_rows(r, 4, 2 * 60 + 2, NULL);	/* done and failed, per minute */
	for (int i = 0; i < n; i++)
		add(arg, strcmp(PQgetvalue(r, i, 1), "t") == 0 ? ST_DONE :
		    ST_FAILED, now - col_ll(r, i, 0) * 60000,
		    (unsigned)col_ll(r, i, 2));
	*part = n > 0 && col_ll(r, 0, 3) >= SEED_MAX;
	PQclear(r);
	return 0;
}
