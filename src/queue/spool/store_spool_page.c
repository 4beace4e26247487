/*
 * store_spool_page.c: the dashboard's pages of a spool (queue/page.h),
 * read straight from its directories as `chute ls` and `chute status`
 * read them.  A directory
 * has no order and no index: a page is one pass over its names (at most
 * PAGE_SCAN_MAX of them, said on the page when cut) that keeps, in fixed
 * memory, only the rows it will show.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/spool.h"
#include "queue/page.h"
#include "queue/spool/store_spool.h"

/*
 * The best max rows of a pass, by (us, id): the smallest (oldest first),
 * or with newest the largest.  v is sorted; a row that would fall off
 * the end is never copied in.
 */
struct keep {
	struct page_row	*v;
	int		 n, max;
	bool		 newest;
};

static int
row_cmp(int64_t us, const char *id, const struct page_row *r)
{
	if (us != r->us)
		return us < r->us ? -1 : 1;
	return strcmp(id, r->id);
}

/* Would (us, id) be kept?  Its place in k->v, or -1. */
static int
keep_place(const struct keep *k, int64_t us, const char *id)
{
	int lo = 0, hi = k->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2, c = row_cmp(us, id, &k->v[mid]);

		if (k->newest ? c > 0 : c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < k->max ? lo : -1;
}

static void
keep_put(struct keep *k, int at, int64_t us, const char *id)
{
	if (k->n == k->max)
		k->n--;
	memmove(&k->v[at + 1], &k->v[at], (size_t)(k->n - at) * sizeof(*k->v));
	memset(&k->v[at], 0, sizeof(k->v[at]));
	strlcpy(k->v[at].id, id, sizeof(k->v[at].id));
	k->v[at].us = us;
	k->n++;
}

int64_t
spool_page_mtime(struct spool *sp, int st, const char *name, long long *size)
{
	struct stat sb;

	if (fstatat(sp->dir[st], name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	if (size != NULL)
		*size = (long long)sb.st_size;
	/* To the millisecond, as `chute ls` orders them (listing.c). */
	return ((int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec /
	    1000000) * 1000;
}

/* ---- a page of one state, in the order of `chute ls` ---- */

struct pass {
	struct spool		*sp;
	const struct page_query	*q;
	struct keep		 k;
	long long		 seen;
	bool			 cut;
	/* matching: the reason each kept one must have */
	const char		*reason;
};

/* After the page's cursor, in (us, id) order? */
static bool
after_cursor(const struct page_query *q, int64_t us, const char *name)
{
	return !q->after || us > q->after_us ||
	    (us == q->after_us && strcmp(name, q->after_id) > 0);
}

static bool
reason_is(struct pass *p, const char *name)
{
	struct joblog_info ji;

	if (p->reason == NULL || p->reason[0] == '\0')
		return true;
	return joblog_read(p->sp, name, &ji) == 0 &&
	    strcmp(ji.last, p->reason) == 0;
}

static int
take(void *arg, const char *name)
{
	struct pass *p = arg;
	int64_t us;
	int at;

	if (++p->seen > PAGE_SCAN_MAX) {
		p->cut = true;
		return 1;
	}
	if (strncmp(name, p->q->prefix, strlen(p->q->prefix)) != 0 ||
	    strlen(name) >= PAGE_ID_LEN)
		return 0;
	if ((us = spool_page_mtime(p->sp, p->q->state, name, NULL)) == -1 ||
	    !after_cursor(p->q, us, name))
		return 0;
	if ((at = keep_place(&p->k, us, name)) != -1 && reason_is(p, name))
		keep_put(&p->k, at, us, name);
	return 0;
}

static int
scan(struct pass *p, int st, char *err, size_t len)
{
	if (spool_scan(p->sp, st, take, p) == -1) {
		snprintf(err, len, "%s/%s: %s", p->sp->path, state_names[st],
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
spool_page_list(struct spool *sp, const struct page_query *q,
    struct page_list *l, char *err, size_t len)
{
	/* One row more than shown: whether there is a next page. */
	struct pass p = { .sp = sp, .q = q,
	    .k = { .v = l->v, .max = q->rows + 1 } };
	struct joblog_info ji;

	if (scan(&p, q->state, err, len) == -1)
		return -1;
	l->more = p.k.n > q->rows;
	l->n = l->more ? q->rows : p.k.n;
	l->seen = p.seen;
	l->cut = p.cut;
	for (int i = 0; i < l->n; i++) {
		joblog_read(p.sp, l->v[i].id, &ji);
		l->v[i].attempts = ji.attempts;
		strlcpy(l->v[i].last, ji.last, sizeof(l->v[i].last));
	}
	return 0;
}

int
spool_page_matching(struct spool *sp, const struct page_query *q, char *ids,
    int max, char *err, size_t len)
{
	struct page_row *v = calloc((size_t)max, sizeof(*v));
	struct page_query all = *q;
	struct pass p = { .sp = sp, .q = &all, .k = { .v = v, .max = max },
	    .reason = q->reason };

	if (v == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	all.state = ST_FAILED;
	all.after = false;
	if (scan(&p, ST_FAILED, err, len) == -1) {
		free(v);
		return -1;
	}
	for (int i = 0; i < p.k.n; i++)
		strlcpy(ids + (size_t)i * PAGE_ID_LEN, v[i].id, PAGE_ID_LEN);
	free(v);
	return p.k.n;
}

/* ---- one job ---- */

/* The last PAGE_LOG_MAX bytes of log/ID, from a line's start if cut. */
static void
read_log(struct spool *sp, struct page_job *j)
{
	int fd = openat(sp->dir[ST_LOG], j->id, O_RDONLY | O_NOFOLLOW |
	    O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	off_t from;
	ssize_t n;
	char *nl;

	j->logsize = -1;
	if (fd == -1)
		return;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (j->log = malloc(PAGE_LOG_MAX)) != NULL) {
		from = sb.st_size > PAGE_LOG_MAX ? sb.st_size - PAGE_LOG_MAX : 0;
		n = pread(fd, j->log, (size_t)(sb.st_size - from), from);
		j->logsize = (long long)sb.st_size;
		j->loglen = n > 0 ? (size_t)n : 0;
		if (from > 0 && (nl = memchr(j->log, '\n', j->loglen)) != NULL) {
			j->loglen -= (size_t)(nl + 1 - j->log);
			memmove(j->log, nl + 1, j->loglen);
		}
	}
	close(fd);
}

/* Its priority, key and unique key, from its name (none when they are bad). */
static void
page_attributes(const char *id, struct page_job *j)
{
	struct jobattr a;
	const char *why;

	if (strchr(id, ',') == NULL || jobattr_parse(id, &a, &why) == -1)
		return;
	j->prio = a.prio;
	strlcpy(j->key, a.key, sizeof(j->key));
	strlcpy(j->unique, a.unique, sizeof(j->unique));
}

int
spool_page_job(struct spool *sp, const char *id, struct page_job *j,
    char *err, size_t len)
{
	struct joblog_info ji;
	pid_t owner;

	memset(j, 0, sizeof(*j));
	strlcpy(j->id, id, sizeof(j->id));
	if ((j->state = spool_locate(sp, id, NULL)) == ST_NONE)
		return 1;
	if ((j->us = spool_page_mtime(sp, j->state, id, &j->size)) == -1)
		j->size = -1;	/* moved on between the two looks */
	if (joblog_read(sp, id, &ji) == -1)
		snprintf(ji.last, sizeof(ji.last), "log: %s", strerror(errno));
	j->attempts = ji.attempts;
	strlcpy(j->last, ji.last, sizeof(j->last));
	page_attributes(id, j);
	if (j->state == ST_CUR) {
		owner = lock_owner(sp);
		if (owner > 0)
			snprintf(j->worker, sizeof(j->worker), "the owner, pid "
			    "%ld", (long)owner);
		else
			snprintf(j->worker, sizeof(j->worker), "%s",
			    owner == 0 ? "none: its owner died (the next one "
			    "runs it again)" : "the owner (pid unknown)");
	}
	read_log(sp, j);
	return 0;
}

/* ---- failures by reason ---- */

static void
group_add(struct page_failures *f, const char *reason, const struct page_row *r)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->v[i].reason, reason) == 0)
			break;
	if (i == f->n) {
		if (f->n == PAGE_GROUPS) {
			f->other++;
			return;
		}
		strlcpy(f->v[i].reason, reason, sizeof(f->v[i].reason));
		strlcpy(f->v[i].id, r->id, sizeof(f->v[i].id));
		f->v[i].us = r->us;
		f->n++;
	}
	f->v[i].n++;
}

static int
by_count(const void *a, const void *b)
{
	const struct page_group *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->us > y->us ? -1 : x->us < y->us;
}

int
spool_page_failures(struct spool *sp, struct page_failures *f, char *err,
    size_t len)
{
	struct page_row *v = calloc(PAGE_FAIL_READ, sizeof(*v));
	struct page_query q = { .state = ST_FAILED };
	struct pass p = { .sp = sp, .q = &q,
	    .k = { .v = v, .max = PAGE_FAIL_READ, .newest = true } };
	struct joblog_info ji;

	memset(f, 0, sizeof(*f));
	if (v == NULL) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	if (scan(&p, ST_FAILED, err, len) == -1) {
		free(v);
		return -1;
	}
	f->total = p.seen;
	f->cut = p.cut;
	f->read = p.k.n;
	/* Newest first: each group's first is its newest. */
	for (int i = 0; i < p.k.n; i++) {
		if (joblog_read(p.sp, v[i].id, &ji) == -1)
			snprintf(ji.last, sizeof(ji.last), "log: %s",
			    strerror(errno));
		group_add(f, ji.last[0] ? ji.last : "-", &v[i]);
	}
	qsort(f->v, (size_t)f->n, sizeof(f->v[0]), by_count);
	free(v);
	return 0;
}
