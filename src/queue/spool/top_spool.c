/*
 * top_spool.c: what `chute top` and `chute web` read from a spool into
 * the model (queue/view.h), as the spool store's live source.  An inotify
 * event only marks its directory dirty and counts a finished job; a
 * rescan, at most once per TOP_RESCAN_MS however many events came, counts
 * the names in the dirty directories, stats cur/ and the failures kept,
 * and reads all of failed/ again only when a kept failure left it or
 * events were lost.  The owner and the pause file, which no event of a
 * state directory tells of, are looked at every TOP_LOOK_MS as well.
 */
#include <sys/inotify.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/joblog.h"
#include "store/lock.h"
#include "store/pause.h"
#include "store/spool.h"
#include "store/state.h"
#include "store/watch.h"
#include "queue/view.h"
#include "queue/spool/top_spool.h"

#define TOP_LOOK_MS	2000	/* the owner and the pause file: looked at this often */

/* One pass over a state directory, for spool_scan's callback. */
struct pass {
	struct top_spool *s;
	int		 st;
	size_t		 n;		/* names seen */
	struct top_job	*v;		/* NULL: count (and seed) only */
	size_t		*nv, max;
	bool		 newest_first;
	bool		 seed;		/* count recent ones as finished */
	msec_t		 now;
};

static msec_t
ms_of(const struct timespec *ts)
{
	return (msec_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* ---- the kept jobs: sorted arrays of a fixed size ---- */

static void
job_remove(struct top_job *v, size_t *n, size_t i)
{
	memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
	(*n)--;
}

/* Insert j in order of since; when v is full the last one falls off. */
static void
job_insert(struct top_job *v, size_t *n, size_t max, const struct top_job *j,
    bool newest_first)
{
	size_t p = 0;

	while (p < *n && (newest_first ? v[p].since >= j->since :
	    v[p].since <= j->since))
		p++;
	if (p == max)
		return;
	if (*n == max)
		(*n)--;
	memmove(&v[p + 1], &v[p], (*n - p) * sizeof(*v));
	v[p] = *j;
	(*n)++;
}

static ssize_t
job_find(const struct top_job *v, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].id, id) == 0)
			return (ssize_t)i;
	return -1;
}

/* Attempts and last outcome, as `chute status` reads them from log/ID. */
static void
job_reason(struct top_spool *s, struct top_job *j)
{
	struct joblog_info ji;

	if (joblog_read(s->sp, j->id, &ji) == -1)
		snprintf(ji.last, sizeof(ji.last), "log: %s", strerror(errno));
	j->attempts = ji.attempts;
	strlcpy(j->reason, ji.last[0] ? ji.last : "-", sizeof(j->reason));
}

/* ---- passes over the directories ---- */

static int
count_name(void *arg, const char *name)
{
	((struct pass *)arg)->n++;
	return 0;
}

/*
 * Stat one name.  A claim is a rename, and a rename sets the file's ctime:
 * in cur/ that is when the job started.  In done/ and failed/ the mtime is
 * when the job got there (spool-layout.md).
 */
static int
stat_name(void *arg, const char *name)
{
	struct pass *p = arg;
	struct top_job j = { .attempts = 0 };
	struct stat st;

	p->n++;
	if (fstatat(p->s->sp->dir[p->st], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;		/* moved on while we looked */
	j.since = ms_of(p->st == ST_CUR ? &st.st_ctim : &st.st_mtim);
	if (p->seed && j.since < p->now && p->now - j.since <
	    TOP_WINDOW * 1000)
		top_finished(&p->s->t, p->st, j.since);
	if (p->v == NULL || strlen(name) >= sizeof(j.id))
		return 0;
	strlcpy(j.id, name, sizeof(j.id));
	job_insert(p->v, p->nv, p->max, &j, p->newest_first);
	return 0;
}

/* One pass over state st with fn; the count goes to t.count[st]. */
static int
pass_run(struct top_spool *s, int st, struct pass *p,
    int (*fn)(void *, const char *))
{
	p->s = s;
	p->st = st;
	p->n = 0;
	if (spool_scan(s->sp, st, fn, p) != 0)
		return -1;
	s->t.count[st] = (long long)p->n;
	return 0;
}

static int
read_running(struct top_spool *s)
{
	struct pass p = { .v = s->t.run, .nv = &s->t.nrun, .max = TOP_RUN_MAX };

	s->t.nrun = 0;
	return pass_run(s, ST_CUR, &p, stat_name);
}

/*
 * All of failed/: its newest TOP_FAIL_MAX, with their reasons; with
 * seed_before > 0, the jobs that failed in the window before it count as
 * finished.
 */
static int
read_failed(struct top_spool *s, msec_t seed_before)
{
	struct top *t = &s->t;
	struct pass p = { .v = t->fail, .nv = &t->nfail, .max = TOP_FAIL_MAX,
	    .newest_first = true, .seed = seed_before > 0, .now = seed_before };

	t->nfail = 0;
	s->narrived = 0;	/* this pass sees them all */
	s->full = false;
	if (pass_run(s, ST_FAILED, &p, stat_name) == -1)
		return -1;
	for (size_t i = 0; i < t->nfail; i++)
		job_reason(s, &t->fail[i]);
	return 0;
}

/*
 * The failures kept that are still in failed/ (a retry or purge takes
 * them out), then the names that arrived since the last look.  Returns
 * true when a kept one left and failed/ holds more than are kept: only a
 * full read can tell which one is next.
 */
static bool
update_failed(struct top_spool *s)
{
	struct top *t = &s->t;
	size_t first = s->narrived > TOP_FAIL_MAX ? s->narrived - TOP_FAIL_MAX : 0;
	struct stat st;
	bool lost = false;

	for (size_t i = 0; i < t->nfail; )
		if (fstatat(s->sp->dir[ST_FAILED], t->fail[i].id, &st,
		    AT_SYMLINK_NOFOLLOW) == -1) {
			job_remove(t->fail, &t->nfail, i);
			lost = true;
		} else
			i++;
	for (size_t k = first; k < s->narrived; k++) {
		struct top_job j = { .since = 0 };
		ssize_t old;

		strlcpy(j.id, s->arrived[k % TOP_FAIL_MAX], sizeof(j.id));
		if (fstatat(s->sp->dir[ST_FAILED], j.id, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if ((old = job_find(t->fail, t->nfail, j.id)) != -1)
			job_remove(t->fail, &t->nfail, (size_t)old);
		j.since = ms_of(&st.st_mtim);
		job_reason(s, &j);
		job_insert(t->fail, &t->nfail, TOP_FAIL_MAX, &j, true);
	}
	s->narrived = 0;
	return lost && t->count[ST_FAILED] > (long long)t->nfail;
}

/* ---- the owner and the pause: no event tells of them ---- */

/*
 * When process pid started, by the wall clock: its start in clock ticks
 * after boot (field 22 of /proc/PID/stat, after the name in parentheses,
 * which may hold anything) plus the boot time; 0 when it cannot be told.
 */
static msec_t
started_at(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks = 0, boot = 0;
	int fd, field = 2;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return 0;
	while (field < 22 && (p = strchr(p + 1, ' ')) != NULL)
		field++;
	if (p == NULL || sscanf(p, " %llu", &ticks) != 1 ||
	    (f = fopen("/proc/stat", "re")) == NULL)
		return 0;
	while (fgets(buf, sizeof(buf), f) != NULL)
		if (sscanf(buf, "btime %llu", &boot) == 1)
			break;
	fclose(f);
	return boot == 0 ? 0 : (msec_t)(boot * 1000 + ticks * 1000 /
	    (unsigned long long)sysconf(_SC_CLK_TCK));
}

/* The spool's one worker, its owner: named host:pid, as a queue's are. */
static void
look_owner(struct top_spool *s)
{
	struct top_worker *w = &s->t.worker[0];
	char host[64] = "localhost";
	pid_t was = s->owner;

	s->owner = lock_owner(s->sp);
	s->t.unknown_owner = s->owner == -1;
	s->t.nworker = s->owner > 0;
	s->t.workers_alive = s->t.workers_all = (int)s->t.nworker;
	if (s->owner <= 0)
		return;
	if (s->owner != was) {
		memset(w, 0, sizeof(*w));
		gethostname(host, sizeof(host) - 1);
		snprintf(w->name, sizeof(w->name), "%s:%ld", host,
		    (long)s->owner);
		w->pid = (long)s->owner;
		w->slots = -1;
		w->started = started_at(s->owner);
		w->alive = true;
	}
	w->running = (int)s->t.count[ST_CUR];
}

/* SPOOL/paused (pause.c); when that cannot be told, what was known stays. */
static void
look_paused(struct top_spool *s)
{
	int p = spool_paused(s->sp, s->t.paused_by, sizeof(s->t.paused_by),
	    NULL);

	if (p != -1)
		s->t.paused = p == 1;
	if (p == 0)
		s->t.paused_by[0] = '\0';
}

/* ---- the interface ---- */

/*
 * watch.c watches what the owner needs to see; the view needs every
 * arrival and departure in every state: claims into cur/, retries and
 * purges out of failed/ and done/.  IN_MASK_ADD on the same descriptor
 * widens a watch and keeps its watch descriptor, so watch.c still
 * decodes the events; the bits a state's watch has already are no-ops.
 */
static int
widen_watch(struct watch *w, struct spool *sp)
{
	for (int st = ST_FIRST; st < ST_END; st++) {
		char *p = spool_jobpath(sp, st, "");
		int rc;

		if (p == NULL)
			return -1;
		rc = inotify_add_watch(watch_fd(w), p, IN_MASK_ADD |
		    IN_ONLYDIR | IN_DONT_FOLLOW | IN_MOVED_TO | IN_CREATE |
		    IN_MOVED_FROM | IN_DELETE);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

struct watch *
top_watch_open(struct spool *sp)
{
	int states[ST_NSTATES], saved;
	struct watch *w = watch_open(sp, states, states_where(0, 0, states));

	if (w != NULL && widen_watch(w, sp) == -1) {
		saved = errno;
		watch_close(w);
		errno = saved;
		return NULL;
	}
	return w;
}

/*
 * The states counted by their names: every one but cur/, read as the
 * running jobs, and failed/, read as the newest failures.
 */
static bool
counted(int st)
{
	return st != ST_CUR && st != ST_FAILED;
}

int
top_init(struct top_spool *s, struct spool *sp, msec_t since)
{
	struct pass p = { .seed = true, .now = since };

	memset(s, 0, sizeof(*s));
	s->sp = sp;
	strlcpy(s->t.title, sp->path, sizeof(s->t.title));
	for (int st = ST_FIRST; st < ST_END; st++)
		if (counted(st) && pass_run(s, st, &p, st == ST_DONE ?
		    stat_name : count_name) == -1)
			return -1;
	if (read_running(s) == -1 || read_failed(s, since) == -1)
		return -1;
	look_owner(s);
	look_paused(s);
	s->scanned = mono_ms();
	return 0;
}

int
top_rescan(struct top_spool *s)
{
	unsigned dirty = s->dirty;
	struct pass p = { .v = NULL };

	s->dirty = 0;
	s->scanned = mono_ms();
	for (int st = ST_FIRST; st < ST_END; st++)
		if (counted(st) && (dirty & 1u << st) &&
		    pass_run(s, st, &p, count_name) == -1)
			return -1;
	if ((dirty & 1u << ST_CUR) && read_running(s) == -1)
		return -1;
	if (!s->full && (dirty & 1u << ST_FAILED)) {
		if (pass_run(s, ST_FAILED, &p, count_name) == -1)
			return -1;
		s->full = update_failed(s);
	}
	if (s->full && read_failed(s, 0) == -1)
		return -1;
	look_owner(s);
	look_paused(s);
	return 0;
}

void
top_event(void *arg, const struct watch_event *ev)
{
	struct top_spool *s = arg;

	if (ev->kind == W_OVERFLOW || ev->state == ST_NONE) {
		s->dirty = TOP_ALL;
		s->full = true;
		return;
	}
	s->dirty |= 1u << ev->state;
	if (ev->kind != W_ARRIVED || !state_terminal(ev->state))
		return;
	top_finished(&s->t, ev->state, now_ms());
	if (ev->state == ST_FAILED)
		strlcpy(s->arrived[s->narrived++ % TOP_FAIL_MAX], ev->name,
		    sizeof(s->arrived[0]));
}

int
top_cancel(struct top_spool *s, const char *id, char *msg, size_t len)
{
	int from;

	if (state_cancel(s->sp, id, &from) == -1) {
		if (errno == ENOENT)
			snprintf(msg, len, "%s: already finished", vis_id(id));
		else
			snprintf(msg, len, "%s: cancel: %s", vis_id(id),
			    strerror(errno));
		return -1;
	}
	s->dirty = TOP_ALL;
	/* Only a cancel that won its rename leaves a note. */
	joblog_note(s->sp, id, "cancelled by `chute top` (uid %ld) in %s/",
	    (long)getuid(), state_names[from]);
	if (spool_sync(s->sp) == -1) {
		snprintf(msg, len, "%s: fsync: %s", s->sp->path,
		    strerror(errno));
		return -1;
	}
	snprintf(msg, len, "%s %s->failed", vis_id(id), state_names[from]);
	return 0;
}

int
top_retry(struct top_spool *s, const char *id, char *msg, size_t len)
{
	int st = spool_locate(s->sp, id, NULL);

	if (st != ST_FAILED) {
		snprintf(msg, len, "%s: not failed (%s)", vis_id(id),
		    st == ST_NONE ? "gone" : state_names[st]);
		return -1;
	}
	/* The reset goes first: a crash between leaves it failed, reset. */
	if (joblog_note(s->sp, id, "reset by `chute top` (uid %ld)",
	    (long)getuid()) == -1 && errno != ENOENT) {
		snprintf(msg, len, "%s/log/%s: %s", s->sp->path, vis_id(id),
		    strerror(errno));
		return -1;
	}
	if (state_retry(s->sp, id) == -1) {
		snprintf(msg, len, "%s: retry: %s", vis_id(id), strerror(errno));
		return -1;
	}
	s->dirty = TOP_ALL;
	if (spool_sync(s->sp) == -1) {
		snprintf(msg, len, "%s: fsync: %s", s->sp->path,
		    strerror(errno));
		return -1;
	}
	snprintf(msg, len, "%s failed->new", vis_id(id));
	return 0;
}

/* ---- the spool as the view's source ---- */

static int
src_fd(void *arg)
{
	return watch_fd(((struct top_spool *)arg)->w);
}

/* Read the events so far.  A malformed buffer (EPROTO) costs a rescan. */
static int
src_input(void *arg)
{
	struct top_spool *s = arg;

	if (watch_read(s->w, top_event, s) == 0)
		return 0;
	if (errno != EPROTO)
		return -1;
	s->dirty = TOP_ALL;
	s->full = true;
	return 0;
}

static msec_t
src_due(void *arg)
{
	struct top_spool *s = arg;

	return s->scanned + (s->dirty ? TOP_RESCAN_MS : TOP_LOOK_MS);
}

/*
 * The events first: a job we just cancelled must be among the failed/
 * arrivals of this rescan, or the selection loses it.
 */
static int
src_update(void *arg)
{
	struct top_spool *s = arg;

	if (src_input(s) == -1)
		return -1;
	return top_rescan(s);
}

static int
src_cancel(void *arg, const char *id, char *msg, size_t len)
{
	return top_cancel(arg, id, msg, len);
}

static int
src_retry(void *arg, const char *id, char *msg, size_t len)
{
	return top_retry(arg, id, msg, len);
}

void
top_spool_source(struct top_spool *s, struct watch *w, struct top_source *src)
{
	s->w = w;
	*src = (struct top_source){ .t = &s->t, .arg = s, .fd = src_fd,
	    .input = src_input, .due = src_due, .update = src_update,
	    .cancel = src_cancel, .retry = src_retry };
}
