/*
 * store_spool.c: a spool as the store of the read and admin side
 * (queue/store.h): a job's state from the directory it is in, its
 * attempts and last outcome from its log, where `chute forward` sent it;
 * the pause from SPOOL/paused; the log as it is.  The spool is opened
 * read-only (spool_open): no lock, no owner needed.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/after.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/retain.h"
#include "store/sched_spool.h"
#include "store/spool.h"
#include "store/watch.h"
#include "queue/page.h"
#include "queue/view.h"
#include "queue/spool/spool_list.h"
#include "queue/spool/top_spool.h"
#include "queue/spool/store_spool.h"
#include "queue/store.h"

#define FORWARDED	"forwarded to "

static struct spool *
sp_of(struct store *s)
{
	return s->be;
}

int
spool_open_or_say(struct spool *sp, const char *path)
{
	if (spool_open(sp, path) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR)
		fprintf(stderr, "chute: %s: not a spool (%s); create it with "
		    "`chute init %s`\n", path, strerror(errno), path);
	else
		fprintf(stderr, "chute: %s: cannot open the spool: %s\n", path,
		    strerror(errno));
	return EX_IOERR;
}

static int
ss_open(struct store *s, const char *path, const char *queue)
{
	struct spool *sp = calloc(1, sizeof(*sp));
	int rc;

	if (sp == NULL) {
		fprintf(stderr, "chute: %s: %s\n", path, strerror(errno));
		return EX_SOFTWARE;
	}
	if ((rc = spool_open_or_say(sp, path)) != 0) {
		free(sp);
		return rc;
	}
	s->be = sp;
	return 0;
}

static void
ss_close(struct store *s)
{
	if (s->be == NULL)
		return;
	spool_close(s->be);
	free(s->be);
	s->be = NULL;
}

static const char *
ss_title(struct store *s)
{
	return s->target;
}

/*
 * A job `chute forward` moved into a database queue is in done/ with a
 * "forwarded to QUEUE at URI as ID" line in its log (the last one counts:
 * a job sent again after a crash has two), or "... at URI under the same
 * ID", the line its log may share with the rest of its batch.  That
 * line's text after "forwarded " into buf, always with "as ID"; false if
 * the log has none.
 */
static bool
forwarded(struct spool *sp, const char *id, char *buf, size_t len)
{
	struct stat st;
	const char *p, *end, *found = NULL;
	char *map = MAP_FAILED;
	int fd;

	fd = openat(sp->dir[ST_LOG], id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	/* "@chute TIME forwarded to ...": our lines begin a line. */
	for (p = map, end = map + st.st_size; p < end; ) {
		const char *nl = memchr(p, '\n', end - p), *eol = nl ? nl : end;
		const char *sp1 = memchr(p, ' ', eol - p), *sp2;

		if (eol - p > 7 && memcmp(p, "@chute ", 7) == 0 && sp1 != NULL &&
		    (sp2 = memchr(sp1 + 1, ' ', eol - sp1 - 1)) != NULL &&
		    (size_t)(eol - sp2 - 1) > strlen(FORWARDED) &&
		    memcmp(sp2 + 1, FORWARDED, strlen(FORWARDED)) == 0) {
			size_t n, same = strlen(" " FWD_SAME_ID);

			found = sp2 + 1 + strlen("forwarded ");
			n = (size_t)(eol - found);
			if (n > same && memcmp(eol - same, " " FWD_SAME_ID,
			    same) == 0)
				snprintf(buf, len, "%.*s as %s",
				    (int)(n - same), found, id);
			else
				snprintf(buf, len, "%.*s", (int)n, found);
		}
		p = eol + 1;
	}
	munmap(map, st.st_size);
	return found != NULL;
}

/*
 * A job's priority, key and unique key, from its name's attributes (none
 * if they are bad: such a name is refused, never run).
 */
static void
name_attributes(const char *id, struct store_job *j)
{
	struct jobattr a;
	const char *why;

	j->prio = PRIO_DEFAULT;
	j->key[0] = '\0';
	j->unique[0] = '\0';
	if (strchr(id, ',') == NULL || jobattr_parse(id, &a, &why) == -1)
		return;
	j->prio = a.prio;
	strlcpy(j->key, a.key, sizeof(j->key));
	strlcpy(j->unique, a.unique, sizeof(j->unique));
}

/*
 * Its dependency list (after/ID), if any, as status shows it: the first
 * three IDs and how many more, then ",run" if it runs after a failure.
 */
static void
after_of(struct spool *sp, const char *id, char *buf, size_t len)
{
	struct after a;
	size_t at = 0;

	buf[0] = '\0';
	if (after_read(sp, id, &a) == -1)
		return;
	for (size_t i = 0; i < a.n && i < 3 && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "," : "",
		    vis_id(a.ids[i]));
	if (a.n > 3 && at < len)
		at += (size_t)snprintf(buf + at, len - at, ",+%zu", a.n - 3);
	if (a.mode == AFTER_RUN && at < len)
		snprintf(buf + at, len - at, ",run");
	after_free(&a);
}

/* The directory it is in, its log's attempts and last outcome. */
static int
ss_job(struct store *s, const char *id, struct store_job *j)
{
	struct joblog_info ji;
	struct stat st;
	pid_t holder;

	memset(j, 0, sizeof(*j));
	if ((j->state = spool_locate(sp_of(s), id, &st)) == ST_NONE)
		return EXIT_NO;
	joblog_read(sp_of(s), id, &ji);
	j->attempts = ji.attempts;
	strlcpy(j->last, ji.last, sizeof(j->last));
	if (j->state == ST_DEFER)
		iso_time((msec_t)st.st_mtim.tv_sec * 1000 +
		    st.st_mtim.tv_nsec / 1000000, j->next, sizeof(j->next));
	/* Flocked in new/: no owner runs it while that lock is held. */
	if (j->state == ST_NEW && (holder = lock_holder(st.st_dev,
	    st.st_ino)) > 0)
		j->held = (long)holder;
	if (j->state == ST_DONE)
		forwarded(sp_of(s), id, j->forwarded, sizeof(j->forwarded));
	name_attributes(id, j);
	after_of(sp_of(s), id, j->after, sizeof(j->after));
	return 0;
}

static int
ss_pause(struct store *s, struct store_pause *p)
{
	int r;

	memset(p, 0, sizeof(*p));
	if ((r = spool_paused(sp_of(s), p->by, sizeof(p->by), &p->at)) == -1) {
		fprintf(stderr, "chute: %s/%s: %s\n", s->target, PAUSE_FILE,
		    strerror(errno));
		return EX_IOERR;
	}
	p->paused = r == 1;
	return 0;
}

/* No log/ID: fine for a job that has not run yet, else an unknown job. */
static int
no_log(struct spool *sp, const char *id)
{
	if (errno != ENOENT) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	if (spool_locate(sp, id, NULL) != ST_NONE)
		return 0;
	return EXIT_NO;
}

static int
copy_log(struct spool *sp, const char *id, int fd,
    int (*out)(const char *, size_t))
{
	char buf[65536];
	ssize_t n;

	while ((n = read_full(fd, buf, sizeof(buf))) > 0)
		if (out(buf, (size_t)n) == -1)
			return -1;
	if (n == -1) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	return 0;
}

static int
ss_log(struct store *s, const char *id, int (*out)(const char *, size_t))
{
	struct spool *sp = sp_of(s);
	int fd, rc;

	fd = openat(sp->dir[ST_LOG], id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return no_log(sp, id);
	rc = copy_log(sp, id, fd, out);
	close(fd);
	return rc;
}

/* Every entry, oldest first, with its attempts from its log. */
static int
ss_list(struct store *s, int state,
    void (*row)(void *, const struct store_row *), void *arg)
{
	struct listing l = { .sp = sp_of(s), .keep = true };
	msec_t now = now_ms();
	int rc;

	if ((rc = listing_read(&l, state)) == 0)
		for (size_t i = 0; i < l.n; i++) {
			struct joblog_info ji;
			struct store_row r = { .state = l.v[i].state,
			    .age = now - l.v[i].mtime, .id = l.v[i].id };
			struct store_job a;

			name_attributes(r.id, &a);
			r.prio = a.prio;
			r.key = a.key;
			joblog_read(l.sp, l.v[i].id, &ji);
			r.attempts = ji.attempts;
			row(arg, &r);
		}
	listing_free(&l);
	return rc;
}

/* ---- wait ---- */

/*
 * What the wait's watch saw arrive in a terminal state, for the IDs it
 * waits for (one wait per process: the command's): a job removed by the
 * retention right after it ended (0) is gone by the next look, and its
 * arrival is then all that says how it ended.
 */
static struct {
	struct watch	*w;
	char *const	*ids;
	int		 n, *seen;
	bool		 lost, said;	/* events dropped; said so */
} ended;

static void
ended_event(void *arg, const struct watch_event *ev)
{
	if (ev->kind == W_OVERFLOW)
		ended.lost = true;
	if (ev->kind != W_ARRIVED || ev->state < ST_FIRST ||
	    !state_terminal(ev->state))
		return;
	for (int i = 0; i < ended.n; i++)
		if (strcmp(ended.ids[i], ev->name) == 0)
			ended.seen[i] = ev->state;
}

/* The watch's events so far: -1 with errno (EPROTO costs nothing). */
static int
ended_read(void)
{
	if (ended.w == NULL || watch_read(ended.w, ended_event, NULL) == 0 ||
	    errno == EPROTO)
		return 0;
	return -1;
}

static int
ss_states(struct store *s, char *const *ids, int n, int *st)
{
	if (ended.ids != ids) {
		free(ended.seen);
		if ((ended.seen = calloc(n, sizeof(*ended.seen))) == NULL) {
			fprintf(stderr, "chute: wait: %s\n", strerror(errno));
			return EX_SOFTWARE;
		}
		ended.ids = ids;
		ended.n = n;
	}
	/* Before the look: an arrival it would miss was already seen. */
	if (ended_read() == -1) {
		fprintf(stderr, "chute: %s: inotify: %s\n", sp_of(s)->path,
		    strerror(errno));
		return EX_IOERR;
	}
	for (int i = 0; i < n; i++) {
		if ((st[i] = spool_locate(sp_of(s), ids[i], NULL)) == ST_NONE &&
		    ended.seen[i] != 0)
			st[i] = ended.seen[i];
		/*
		 * The kernel dropped events (the wait did not read while
		 * more than fs.inotify.max_queued_events came): an end it
		 * would have seen may be among them.  Said before the
		 * answer, which cannot be more than "not found".
		 */
		if (st[i] == ST_NONE && ended.lost && !ended.said) {
			ended.said = true;
			fprintf(stderr, "chute: %s: inotify dropped events while"
			    " this wait was not reading: a job that ended and "
			    "was removed meanwhile is not known\n",
			    sp_of(s)->path);
		}
	}
	return 0;
}

/* The terminal states watched: each arrival there wakes the wait. */
static int
ss_wait_start(struct store *s, void **w)
{
	int watched[ST_NSTATES];

	if ((*w = watch_open(sp_of(s), watched, states_where(JS_TERMINAL,
	    JS_TERMINAL, watched))) != NULL) {
		ended.w = *w;
		return 0;
	}
	fprintf(stderr, "chute: %s: inotify: %s\n", sp_of(s)->path,
	    strerror(errno));
	return EX_IOERR;
}

/* Sleep on the watch; its events say: look again (and what arrived). */
static int
ss_wait_nap(struct store *s, void *w, msec_t max)
{
	struct pollfd pfd = { .fd = watch_fd(w), .events = POLLIN };

	if (poll(&pfd, 1, max > INT32_MAX ? INT32_MAX : (int)max) == -1 &&
	    errno != EINTR) {
		fprintf(stderr, "chute: %s: poll: %s\n", sp_of(s)->path,
		    strerror(errno));
		return EX_SOFTWARE;
	}
	return 0;
}

static void
ss_wait_end(struct store *s, void *w)
{
	watch_close(w);
	free(ended.seen);
	memset(&ended, 0, sizeof(ended));
}

/* ---- acts ---- */

static int
ss_cancel(struct store *s, const char *id, const char *by, char *msg,
    size_t len)
{
	return spool_cancel_job(sp_of(s), id, by, msg, len);
}

static int
ss_retry(struct store *s, const char *id, const char *by, char *msg,
    size_t len)
{
	return spool_retry_job(sp_of(s), id, by, msg, len);
}

static int
ss_set_pause(struct store *s, bool on, const char *by, bool *changed,
    char *msg, size_t len)
{
	return spool_set_pause(sp_of(s), s->target, on, by, changed, msg, len);
}

static int
ss_purge(struct store *s, int state, msec_t older, long long *removed)
{
	return spool_purge(sp_of(s), state, older, removed);
}

/* ---- top ---- */

#define OLDEST_MS	5000	/* new/ is read for its oldest job this often, at most */

struct ss_top {
	struct top_spool	 ts;	/* some 60 KiB, whatever the spool holds */
	struct watch		*w;
	/* The dashboard's oldest queued job, read again as top_oldest says. */
	struct spool		*sp;
	msec_t			 oldest;	/* new/'s oldest mtime; 0 none */
	long long		 old_count;	/* new/'s count when it was read */
	long long		 old_seen;	/* ... and the names read */
	msec_t			 old_read;	/* ... and when (mono_ms()) */
};

/*
 * The live view: the watch first, so nothing after the first look (since)
 * is missed.
 */
static int
ss_top_open(struct store *s, bool live, msec_t since, struct top_source *src,
    void **h)
{
	struct spool *sp = sp_of(s);
	struct ss_top *t;

	if ((*h = t = calloc(1, sizeof(*t))) == NULL) {
		fprintf(stderr, "chute: top: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	t->sp = sp;
	t->old_count = -1;
	if (live && (t->w = top_watch_open(sp)) == NULL) {
		fprintf(stderr, "chute: %s: inotify: %s\n", sp->path,
		    strerror(errno));
		return EX_IOERR;
	}
	if (top_init(&t->ts, sp, since) == -1) {
		fprintf(stderr, "chute: %s: %s\n", sp->path, strerror(errno));
		return EX_IOERR;
	}
	if (live)
		top_spool_source(&t->ts, t->w, src);
	else
		src->t = &t->ts.t;
	return 0;
}

static void
ss_top_close(struct store *s, void *h)
{
	struct ss_top *t = h;

	if (t != NULL)
		watch_close(t->w);
	free(t);
}

/* The oldest mtime so far; the pass stops after PAGE_SCAN_MAX names. */
static int
oldest_one(void *arg, const char *name)
{
	struct ss_top *t = arg;
	int64_t us = spool_page_mtime(t->sp, ST_NEW, name, NULL);

	if (us != -1 && (t->oldest == 0 || us / 1000 < t->oldest))
		t->oldest = us / 1000;
	return ++t->old_seen >= PAGE_SCAN_MAX;
}

/*
 * A stat of each job in new/, as `chute stats` makes: only when new/'s
 * count changed, at most every OLDEST_MS, and of PAGE_SCAN_MAX names at
 * most, so that a busy spool's dashboard does not stat a long queue
 * every second (past that many, the oldest of those read is shown).
 */
static int
ss_top_oldest(struct store *s, void *h, const struct top *tm, msec_t *at)
{
	struct ss_top *t = h;

	if (tm->count[ST_NEW] != t->old_count &&
	    mono_ms() - t->old_read >= OLDEST_MS) {
		t->oldest = 0;
		t->old_seen = 0;
		if (spool_scan(t->sp, ST_NEW, oldest_one, t) == -1)
			return -1;
		t->old_count = tm->count[ST_NEW];
		t->old_read = mono_ms();
	}
	*at = t->oldest;
	return 0;
}

/* ---- the hour before the start, from the mtimes ---- */

struct seed {
	struct spool	*sp;
	void		(*add)(void *, int, msec_t, unsigned);
	void		*arg;
	int		 st;
	msec_t		 since;
};

/*
 * A job in a terminal state (done/, failed/) got there at its mtime:
 * those of the hour before since (when the watch began; the model counts
 * what came after).
 */
static int
seed_one(void *arg, const char *name)
{
	struct seed *p = arg;
	int64_t us = spool_page_mtime(p->sp, p->st, name, NULL);
	msec_t ms = us / 1000;

	if (us != -1 && ms < p->since && p->since - ms < 3600000)
		p->add(p->arg, p->st, ms, 1);
	return 0;
}

static int
ss_hour(struct store *s, msec_t since, void (*add)(void *, int, msec_t,
    unsigned), void *arg, msec_t *at, bool *part)
{
	struct seed p = { .sp = sp_of(s), .add = add, .arg = arg,
	    .since = since };

	*at = since;
	*part = false;
	for (p.st = ST_FIRST; p.st < ST_END; p.st++)
		if (state_terminal(p.st) &&
		    spool_scan(p.sp, p.st, seed_one, &p) == -1) {
			fprintf(stderr, "chute: %s: %s\n", s->target,
			    strerror(errno));
			return EX_IOERR;
		}
	return 0;
}

static const char *
ss_name(struct store *s)
{
	return s->target;
}

/* ---- the dashboard's pages (store_spool_page.c) ---- */

static int
ss_page(struct store *s, const struct page_query *q, struct page_list *l,
    char *err, size_t len)
{
	return spool_page_list(sp_of(s), q, l, err, len);
}

static int
ss_page_job(struct store *s, const char *id, struct page_job *j, char *err,
    size_t len)
{
	return spool_page_job(sp_of(s), id, j, err, len);
}

static int
ss_page_failures(struct store *s, struct page_failures *f, char *err,
    size_t len)
{
	return spool_page_failures(sp_of(s), f, err, len);
}

static int
ss_page_matching(struct store *s, const struct page_query *q, char *ids,
    int max, char *err, size_t len)
{
	return spool_page_matching(sp_of(s), q, ids, max, err, len);
}

static int
ss_workers(struct store *s, const struct store_workers_out *o, int *cut)
{
	*cut = 0;
	return spool_workers(sp_of(s), o);
}

static int
ss_limits(struct store *s, void (*row)(void *, const struct store_limit_row *),
    void *arg)
{
	return spool_limits(sp_of(s), row, arg);
}

static int
ss_set_limit(struct store *s, const struct store_limit_set *c, char *msg,
    size_t len)
{
	return spool_set_limit(sp_of(s), c, msg, len);
}

static int
ss_stats(struct store *s, struct store_stats *st)
{
	return spool_stats_read(sp_of(s), st);
}

/* ---- retention ---- */

static int
ss_retention(struct store *s, struct retention *r)
{
	int err;

	if (spool_retention(sp_of(s), r) == 0)
		return 0;
	err = errno;
	fprintf(stderr, "chute: %s/" RETAIN_FILE ": %s%s\n", sp_of(s)->path,
	    spool_retention_error(err), err == EINVAL || err == ELOOP ?
	    "; `chute retention SPOOL --done DUR --failed DUR` writes it anew" :
	    "");
	return err == EINVAL || err == ELOOP ? EX_CONFIG : EX_IOERR;
}

static int
ss_set_retention(struct store *s, const struct retention *r)
{
	if (spool_retention_set(sp_of(s), r) == 0)
		return 0;
	fprintf(stderr, "chute: %s/" RETAIN_FILE ": %s%s\n", sp_of(s)->path,
	    strerror(errno), errno == EACCES || errno == EPERM ?
	    " (the spool's owner may, and root)" : "");
	return EX_IOERR;
}

static int
ss_schedules(struct store *s, void (*row)(void *, const struct sched_row *),
    void *arg)
{
	return sched_spool_list(sp_of(s), row, arg);
}

const struct store_ops store_spool_ops = {
	.usage = "SPOOL",
	.missing = "no spool given",
	.noun = "SPOOL",
	.uri = false,
	.wait_progress = true,
	.open = ss_open,
	.close = ss_close,
	.title = ss_title,
	.job = ss_job,
	.pause = ss_pause,
	.log = ss_log,
	.stats = ss_stats,
	.list = ss_list,
	.workers = ss_workers,
	.top_open = ss_top_open,
	.top_close = ss_top_close,
	.top_oldest = ss_top_oldest,
	.hour = ss_hour,
	.name = ss_name,
	.page = ss_page,
	.page_job = ss_page_job,
	.page_failures = ss_page_failures,
	.page_matching = ss_page_matching,
	.states = ss_states,
	.wait_start = ss_wait_start,
	.wait_nap = ss_wait_nap,
	.wait_end = ss_wait_end,
	.cancel = ss_cancel,
	.retry = ss_retry,
	.set_pause = ss_set_pause,
	.purge = ss_purge,
	.retention = ss_retention,
	.set_retention = ss_set_retention,
	.limits = ss_limits,
	.set_limit = ss_set_limit,
	.schedules = ss_schedules,
};
