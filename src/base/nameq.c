/*
 * nameq.c: an ordered set of names with a key each: the spool queue's
 * index of jobs known to be in new/ (oldest first), of files waiting for
 * their writer and of orphans (recheck time first).  It is only an index:
 * the directory is the truth, and a name popped from here that is gone
 * from new/ simply fails its claim.  Two red-black trees
 * over the same nodes (libbsd's sys/tree.h): one ordered by (age, name) for
 * popping the oldest, one by name so events and rescans never add twice.
 * Both are O(log n) per job, whatever the backlog.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/nameq.h"

/* libbsd's cdefs.h leaves __unused out (a glibc struct member has that
 * name); tree.h needs it for its static functions. */
#ifndef __unused
#define __unused __attribute__((__unused__))
#endif
#include <sys/tree.h>

struct qnode {
	RB_ENTRY(qnode)	 by_age;
	RB_ENTRY(qnode)	 by_name;
	int		 rank;		/* before the key: lower first */
	int64_t		 key;
	unsigned	 flags;
	char		 name[];
};

static int
cmp_age(struct qnode *a, struct qnode *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int
cmp_name(struct qnode *a, struct qnode *b)
{
	return strcmp(a->name, b->name);
}

RB_HEAD(agetree, qnode);
RB_HEAD(nametree, qnode);
RB_GENERATE_STATIC(agetree, qnode, by_age, cmp_age)
RB_GENERATE_STATIC(nametree, qnode, by_name, cmp_name)

struct nameq {
	struct agetree	 age;
	struct nametree	 names;
	size_t		 len;
	size_t		 nranked;	/* nodes of a rank other than 0 */
};

struct nameq *
nameq_new(void)
{
	struct nameq *q = calloc(1, sizeof(*q));

	if (q != NULL) {
		RB_INIT(&q->age);
		RB_INIT(&q->names);
	}
	return q;
}

static struct qnode *
find(struct nameq *q, const char *name)
{
	union {
		struct qnode	 n;
		char		 buf[sizeof(struct qnode) + NAME_MAX + 1];
	} key;

	if (strlcpy(key.n.name, name, NAME_MAX + 1) > NAME_MAX)
		return NULL;
	return RB_FIND(nametree, &q->names, &key.n);
}

int
nameq_add(struct nameq *q, const char *name, int64_t key, unsigned flags)
{
	return nameq_add_ranked(q, name, 0, key, flags);
}

int
nameq_add_ranked(struct nameq *q, const char *name, int rank, int64_t key,
    unsigned flags)
{
	size_t n = strlen(name);
	struct qnode *e;

	if ((e = find(q, name)) != NULL) {
		e->flags |= flags;
		return 0;
	}
	if ((e = malloc(sizeof(*e) + n + 1)) == NULL)
		return -1;
	e->rank = rank;
	e->key = key;
	e->flags = flags;
	memcpy(e->name, name, n + 1);
	RB_INSERT(agetree, &q->age, e);
	RB_INSERT(nametree, &q->names, e);
	q->len++;
	q->nranked += rank != 0;
	return 1;
}

bool
nameq_has(struct nameq *q, const char *name)
{
	return find(q, name) != NULL;
}

bool
nameq_key(struct nameq *q, const char *name, int64_t *key)
{
	struct qnode *e = find(q, name);

	if (e != NULL)
		*key = e->key;
	return e != NULL;
}

static void
unlink_node(struct nameq *q, struct qnode *e)
{
	RB_REMOVE(agetree, &q->age, e);
	RB_REMOVE(nametree, &q->names, e);
	q->len--;
	q->nranked -= e->rank != 0;
	free(e);
}

static int
pop_node(struct nameq *q, struct qnode *e, char *buf, size_t len,
    unsigned *flags, int *rank, int64_t *key)
{
	if (e == NULL)
		return 0;
	if (rank != NULL)
		*rank = e->rank;
	if (key != NULL)
		*key = e->key;
	if (buf != NULL)
		strlcpy(buf, e->name, len);
	if (flags)
		*flags = e->flags;
	unlink_node(q, e);
	return 1;
}

int
nameq_pop(struct nameq *q, char *buf, size_t len, unsigned *flags)
{
	return pop_node(q, RB_MIN(agetree, &q->age), buf, len, flags, NULL,
	    NULL);
}

int
nameq_pop_ranked(struct nameq *q, char *buf, size_t len, unsigned *flags,
    int *rank, int64_t *key)
{
	return pop_node(q, RB_MIN(agetree, &q->age), buf, len, flags, rank,
	    key);
}

/*
 * The lowest key whatever the rank: the first node of each rank is the
 * lowest key of that rank, and the next rank's first is found from the
 * one before (as many lookups as there are ranks in the queue).
 */
static struct qnode *
lowest_key(struct nameq *q)
{
	union {
		struct qnode	 n;
		char		 buf[sizeof(struct qnode) + 1];
	} probe;
	struct qnode *e = RB_MIN(agetree, &q->age), *best = e;

	if (q->nranked == 0)
		return e;
	while (e != NULL) {
		if (e->key < best->key || (e->key == best->key &&
		    strcmp(e->name, best->name) < 0))
			best = e;
		if (e->rank == INT_MAX)
			break;
		probe.n.rank = e->rank + 1;
		probe.n.key = INT64_MIN;
		probe.n.name[0] = '\0';
		e = RB_NFIND(agetree, &q->age, &probe.n);
	}
	return best;
}

int
nameq_pop_lowest_key(struct nameq *q, char *buf, size_t len, unsigned *flags,
    int *rank, int64_t *key)
{
	return pop_node(q, lowest_key(q), buf, len, flags, rank, key);
}

bool
nameq_after_max(struct nameq *q, int rank, int64_t key)
{
	struct qnode *e = RB_MAX(agetree, &q->age);

	if (e == NULL)
		return false;
	return rank != e->rank ? rank > e->rank : key >= e->key;
}

bool
nameq_ranked(struct nameq *q)
{
	return q->nranked > 0;
}

bool
nameq_take(struct nameq *q, const char *name, unsigned *flags)
{
	struct qnode *e = find(q, name);

	if (e == NULL)
		return false;
	if (flags)
		*flags = e->flags;
	unlink_node(q, e);
	return true;
}

int64_t
nameq_drop_max(struct nameq *q)
{
	struct qnode *e = RB_MAX(agetree, &q->age);
	int64_t key;

	if (e == NULL)
		return INT64_MAX;
	key = e->key;
	unlink_node(q, e);
	return key;
}

int64_t
nameq_max_key(struct nameq *q)
{
	struct qnode *e = RB_MAX(agetree, &q->age);

	return e ? e->key : INT64_MIN;
}

int64_t
nameq_min_key(struct nameq *q)
{
	struct qnode *e = RB_MIN(agetree, &q->age);

	return e ? e->key : INT64_MAX;
}

size_t
nameq_len(struct nameq *q)
{
	return q->len;
}

void
nameq_free(struct nameq *q)
{
	struct qnode *e;

	if (q == NULL)
		return;
	while ((e = RB_MIN(agetree, &q->age)) != NULL)
		unlink_node(q, e);
	free(q);
}
