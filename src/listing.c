/*
 * listing.c: read the job state directories for `chute ls` and `chute
 * stats`: one pass over each, counting, and keeping the entries if asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chute.h"
#include "listing.h"

const int listing_states[LISTING_NSTATES] = {
	ST_NEW, ST_CUR, ST_DEFER, ST_DONE, ST_FAILED,
};

static int
keep(struct listing *l, const char *name, msec_t mtime)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct listing_entry *v = reallocarray(l->v, cap, sizeof(*v));
		if (v == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	if ((l->v[l->n].id = strdup(name)) == NULL)
		return -1;
	l->v[l->n].mtime = mtime;
	l->v[l->n].state = l->state;
	l->n++;
	return 0;
}

static int
collect(void *arg, const char *name)
{
	struct listing *l = arg;
	struct stat st;
	msec_t m;

	if (fstatat(l->sp->dir[l->state], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;		/* moved on while we looked */
	m = (msec_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	l->count[l->state]++;
	if (l->oldest[l->state] == 0 || m < l->oldest[l->state])
		l->oldest[l->state] = m;
	return l->keep ? keep(l, name, m) : 0;
}

static int
by_mtime(const void *a, const void *b)
{
	const struct listing_entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->id, y->id);
}

/*
 * Read every job state directory into l (l->sp and l->keep set by the
 * caller), or only the one state only if it is not ST_NONE.  Returns 0,
 * or an exit status after printing why.
 */
int
listing_read(struct listing *l, int only)
{
	for (int i = 0; i < LISTING_NSTATES; i++) {
		if (only != ST_NONE && listing_states[i] != only)
			continue;
		l->state = listing_states[i];
		if (spool_scan(l->sp, l->state, collect, l) != 0) {
			fprintf(stderr, "chute: %s/%s: %s\n", l->sp->path,
			    state_names[l->state], strerror(errno));
			return EX_IOERR;
		}
	}
	if (l->n > 1)		/* qsort's base may not be NULL */
		qsort(l->v, l->n, sizeof(*l->v), by_mtime);
	return 0;
}

void
listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].id);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
