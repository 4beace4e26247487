/*
 * queue_spool_after.c: jobs that wait for others (submit --after).  A
 * waiting job sits in wait/ with its list in after/ID (store/after.c).
 * The owner keeps, in memory, an edge from each job still waited for to
 * each job waiting for it, made when it first sees the waiting job (its
 * event in wait/, or the scan of wait/ at start and after an inotify
 * overflow), and settles a job's edges when that job ends: its claim
 * released once its handler is gone (sq_release), or a move into failed/
 * by another process of a job not running (chute cancel: the owner
 * watches failed/ for it; a running one's cancel waits for its
 * handler).  A job whose last edge is settled moves to new/ (state_wake);
 * one whose job failed moves to failed/ with the reason
 * (state_wait_fail), unless it runs anyway (--after-failed run).  Nothing polls: a waiting job costs one
 * read when it is seen, and one lookup per job it waits for.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/after.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/queue_spool.h"

#define NBUCKETS	4096

struct waiter {
	char		 id[NAME_MAX + 1];
	enum after_mode	 mode;
	size_t		 total;		/* jobs it waits for */
	size_t		 pending;	/* edges not settled yet */
	size_t		 refs;		/* edges still pointing here */
	bool		 done;		/* woken, failed or gone: edges ignored */
	struct waiter	*next;		/* every waiter, for "seen already" */
};

struct edge {
	struct edge	*next;
	struct waiter	*w;
	char		 dep[];
};

struct after_index {
	struct edge	*bucket[NBUCKETS];
	struct waiter	*waiters;
	size_t		 nwaiting;	/* not done */
};

static unsigned
hash(const char *s)
{
	unsigned h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % NBUCKETS;
}

static struct after_index *
index_of(struct spoolq *sq)
{
	if (sq->after == NULL)
		sq->after = calloc(1, sizeof(*sq->after));
	return sq->after;
}

void
spoolq_after_close(struct spoolq *sq)
{
	struct after_index *ix = sq->after;
	struct waiter *w, *nw;
	struct edge *e, *ne;

	if (ix == NULL)
		return;
	for (int b = 0; b < NBUCKETS; b++)
		for (e = ix->bucket[b]; e != NULL; e = ne) {
			ne = e->next;
			free(e);
		}
	for (w = ix->waiters; w != NULL; w = nw) {
		nw = w->next;
		free(w);
	}
	free(ix);
	sq->after = NULL;
}

static struct waiter *
find_waiter(struct after_index *ix, const char *id)
{
	for (struct waiter *w = ix->waiters; w != NULL; w = w->next)
		if (!w->done && strcmp(w->id, id) == 0)
			return w;
	return NULL;
}

/* Forget the waiters that are done and that no edge points to. */
static void
sweep(struct after_index *ix)
{
	struct waiter **pp = &ix->waiters, *w;

	while ((w = *pp) != NULL) {
		if (w->done && w->refs == 0) {
			*pp = w->next;
			free(w);
		} else
			pp = &w->next;
	}
}

static int
add_edge(struct after_index *ix, const char *dep, struct waiter *w)
{
	size_t len = strlen(dep) + 1;
	struct edge *e = malloc(sizeof(*e) + len);
	unsigned h = hash(dep);

	if (e == NULL)
		return -1;
	memcpy(e->dep, dep, len);
	e->w = w;
	e->next = ix->bucket[h];
	ix->bucket[h] = e;
	w->pending++;
	w->refs++;
	return 0;
}

/* wait/ID -> new/: each job it waited for ended. */
static void
wake(struct spoolq *sq, struct waiter *w)
{
	size_t n = w->total;

	w->done = true;
	sq->after->nwaiting--;
	if (state_wake(&sq->sp, w->id) == -1) {
		if (errno != ENOENT)
			say_err("job=%s wait->new: %s", vis_id(w->id),
			    strerror(errno));
		return;		/* ENOENT: cancelled while it waited */
	}
	joblog_note(&sq->sp, w->id, "waited: the %zu job%s it waited for "
	    "ended", n, n == 1 ? "" : "s");
	say("job=%s wait->new: the %zu job%s it waited for ended",
	    vis_id(w->id), n, n == 1 ? "" : "s");
}

/*
 * wait/ID -> failed/, why naming the job it waited for.  True when it
 * moved there: its own dependents are settled next (the caller's).
 */
static bool
fail(struct spoolq *sq, struct waiter *w, const char *why, const char *dep)
{
	w->done = true;
	sq->after->nwaiting--;
	if (state_wait_fail(&sq->sp, w->id) == -1) {
		if (errno != ENOENT)
			say_err("job=%s wait->failed: %s", vis_id(w->id),
			    strerror(errno));
		return false;
	}
	joblog_note(&sq->sp, w->id, "dependency %s: %s", why, dep);
	say_warn("job=%s wait->failed: the job it waited for %s %s",
	    vis_id(w->id), vis_id(dep), why);
	return true;
}

/*
 * One job it waits for, where it is now: 0 ended (done, or failed and the
 * job runs anyway), 1 still live (an edge is made), -1 the waiting job
 * failed because of it (*why says how).
 */
static int
look_dep(struct spoolq *sq, struct waiter *w, const char *dep,
    const char **why)
{
	int st = spool_locate(&sq->sp, dep, NULL);

	/* Ours, its handler alive (cancelled meanwhile): not ended yet. */
	if (spoolq_holds(sq, dep))
		st = ST_CUR;
	if (st == ST_DONE)
		return 0;
	if (st == ST_FAILED || st == ST_NONE) {
		*why = st == ST_FAILED ? "failed" : "is gone (purged)";
		return w->mode == AFTER_RUN ? 0 : -1;
	}
	return add_edge(sq->after, dep, w) == -1 ? -2 : 1;
}

/* Settled jobs to look up, an explicit stack: a chain is not recursion. */
struct settle_stack {
	char	(*id)[NAME_MAX + 1];
	size_t	 n, cap;
};

static void
push(struct settle_stack *s, const char *id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		void *v = reallocarray(s->id, cap, sizeof(*s->id));
		if (v == NULL) {
			say_err("job=%s: its dependents are looked at after "
			    "a rescan: %s", vis_id(id), strerror(errno));
			return;
		}
		s->id = v;
		s->cap = cap;
	}
	strlcpy(s->id[s->n++], id, sizeof(*s->id));
}

/*
 * A waiting job seen in wait/ (its event, or a scan): its list read and
 * each job it waits for looked up.  A waiting job already known is left.
 */
static void
look(struct spoolq *sq, const char *name, struct settle_stack *s)
{
	struct after_index *ix = index_of(sq);
	const char *why = NULL;
	struct waiter *w;
	struct after a;
	int r = 0;

	if (ix == NULL || find_waiter(ix, name) != NULL)
		return;
	if (sq->c.in_place) {
		say_warn("job=%s waits in wait/ for other jobs of the spool: "
		    "not forwarded (dependencies stay within a spool)",
		    vis_id(name));
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    strlcpy(w->id, name, sizeof(w->id)) >= sizeof(w->id)) {
		free(w);
		return;
	}
	w->next = ix->waiters;
	ix->waiters = w;
	ix->nwaiting++;
	if (after_read(&sq->sp, name, &a) == -1) {
		/* Its list is made before it enters wait/: an operator's mv. */
		if (fail(sq, w, errno == ENOENT ? "list missing" :
		    "list unreadable", "after/"))
			push(s, w->id);
		return;
	}
	w->mode = a.mode;
	w->total = a.n;
	for (size_t i = 0; i < a.n && r >= 0; i++)
		if ((r = look_dep(sq, w, a.ids[i], &why)) == -1 &&
		    fail(sq, w, why, a.ids[i]))
			push(s, w->id);
	if (r == -2)
		say_err("job=%s: its dependencies: %s; looked at again at the "
		    "next rescan", vis_id(name), strerror(errno));
	else if (!w->done && w->pending == 0)
		wake(sq, w);
	after_free(&a);
}

/* Each edge from dep, settled: dep is in state st (done, failed, gone). */
static void
settle(struct spoolq *sq, const char *dep, int st, struct settle_stack *s)
{
	struct after_index *ix = sq->after;
	struct edge **pp = &ix->bucket[hash(dep)], *e;
	struct waiter *w;

	while ((e = *pp) != NULL) {
		if (strcmp(e->dep, dep) != 0) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		w = e->w;
		free(e);
		w->refs--;
		if (w->done)
			continue;
		w->pending--;
		if (st != ST_DONE && w->mode == AFTER_FAIL) {
			if (fail(sq, w, st == ST_FAILED ? "failed" :
			    "is gone (purged)", dep))
				push(s, w->id);
		} else if (w->pending == 0)
			wake(sq, w);
	}
}

static void
settle_all(struct spoolq *sq, struct settle_stack *s)
{
	char dep[NAME_MAX + 1];
	int st;

	while (s->n > 0) {
		strlcpy(dep, s->id[--s->n], sizeof(dep));
		st = spool_locate(&sq->sp, dep, NULL);
		/*
		 * Still live (retried meanwhile), or ours with its handler
		 * alive (a cancel moved it to failed/ and we are stopping the
		 * handler): its edges wait on, for sq_release in the second
		 * case, so that no dependent starts beside a dying handler.
		 */
		if ((st != ST_DONE && st != ST_FAILED && st != ST_NONE) ||
		    spoolq_holds(sq, dep))
			continue;
		settle(sq, dep, st, s);
	}
	sweep(sq->after);
}

static bool
has_edges(struct spoolq *sq, const char *id)
{
	if (sq->after == NULL)
		return false;
	for (struct edge *e = sq->after->bucket[hash(id)]; e; e = e->next)
		if (strcmp(e->dep, id) == 0)
			return true;
	return false;
}

void
spoolq_after_ended(struct spoolq *sq, const char *id)
{
	struct settle_stack s = { 0 };

	if (!has_edges(sq, id))
		return;
	push(&s, id);
	settle_all(sq, &s);
	free(s.id);
}

void
spoolq_after_arrived(struct spoolq *sq, const char *name)
{
	struct settle_stack s = { 0 };

	look(sq, name, &s);
	settle_all(sq, &s);
	free(s.id);
}

struct scan_arg {
	struct spoolq		*sq;
	struct settle_stack	*s;
};

static int
scan_cb(void *arg, const char *name)
{
	struct scan_arg *a = arg;

	look(a->sq, name, a->s);
	return 0;
}

void
spoolq_after_scan(struct spoolq *sq)
{
	struct settle_stack s = { 0 };
	struct scan_arg a = { sq, &s };

	/* Built afresh: an overflow may have hidden any of its events. */
	spoolq_after_close(sq);
	if (index_of(sq) == NULL) {
		say_err("%s/wait/: %s", sq->sp.path, strerror(errno));
		return;
	}
	if (spool_scan(&sq->sp, ST_WAIT, scan_cb, &a) == -1)
		say_err("%s/wait/: %s", sq->sp.path, strerror(errno));
	settle_all(sq, &s);
	free(s.id);
}

size_t
spoolq_after_waiting(struct spoolq *sq)
{
	return sq->after != NULL ? sq->after->nwaiting : 0;
}
