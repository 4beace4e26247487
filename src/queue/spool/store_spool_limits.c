/*
 * store_spool_limits.c: `chute limit SPOOL` and the keys of stats, top
 * and the dashboard (queue/store.h's limits and set_limit): the rules of
 * SPOOL/limits (store/limits.c), and the keys in use, read from the names
 * in cur/ (running) and new/ (waiting), without the owner.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/limits.h"
#include "store/spool.h"
#include "queue/spool/store_spool.h"
#include "queue/store.h"

/* One job's key and whether it runs, as read from a name. */
struct use {
	char	 key[KEY_MAX + 1];
	bool	 running;
};

struct uses {
	struct use	*v;
	size_t		 n, cap;
	bool		 running;	/* the directory being read is cur/ */
};

static int
use_cb(void *arg, const char *name)
{
	struct uses *u = arg;
	struct jobattr a;
	const char *why;

	if (strchr(name, ',') == NULL || jobattr_parse(name, &a, &why) == -1 ||
	    a.key[0] == '\0')
		return 0;
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		struct use *v = reallocarray(u->v, cap, sizeof(*v));

		if (v == NULL)
			return -1;
		u->v = v;
		u->cap = cap;
	}
	strlcpy(u->v[u->n].key, a.key, sizeof(u->v[0].key));
	u->v[u->n++].running = u->running;
	return 0;
}

static int
cmp_use(const void *a, const void *b)
{
	return strcmp(((const struct use *)a)->key,
	    ((const struct use *)b)->key);
}

int
spool_key_use(struct spool *sp, void (*key)(void *arg, const char *k,
    long long running, long long waiting), void *arg)
{
	struct uses u = { 0 };
	int saved;

	u.running = true;
	if (spool_scan(sp, ST_CUR, use_cb, &u) == -1)
		goto bad;
	u.running = false;
	if (spool_scan(sp, ST_NEW, use_cb, &u) == -1)
		goto bad;
	if (u.n > 1)
		qsort(u.v, u.n, sizeof(u.v[0]), cmp_use);
	for (size_t i = 0, j; i < u.n; i = j) {
		long long run = 0, wait = 0;

		for (j = i; j < u.n && strcmp(u.v[j].key, u.v[i].key) == 0; j++)
			*(u.v[j].running ? &run : &wait) += 1;
		key(arg, u.v[i].key, run, wait);
	}
	free(u.v);
	return 0;
bad:
	saved = errno;
	free(u.v);
	errno = saved;
	return -1;
}

struct show {
	const struct limits	*l;
	void	(*row)(void *arg, const struct store_limit_row *r);
	void	*arg;
};

static void
show_key(void *arg, const char *k, long long running, long long waiting)
{
	struct show *sh = arg;
	const struct limit *r = limit_for_key(sh->l->v, sh->l->n, k);
	struct store_limit_row row = { .rule = false, .running = running,
	    .waiting = waiting, .bounded = r != NULL };

	if (r != NULL)
		row.lim = *r;
	row.lim.scope = r != NULL ? r->scope : LIM_KEY;
	strlcpy(row.lim.key, k, sizeof(row.lim.key));
	sh->row(sh->arg, &row);
}

int
spool_limits(struct spool *sp, void (*row)(void *arg,
    const struct store_limit_row *r), void *arg)
{
	struct limits l;
	struct show sh = { .l = &l, .row = row, .arg = arg };
	char why[256];
	int rc = 0;

	if (limits_read(sp, &l, why, sizeof(why)) == -1) {
		fprintf(stderr, "chute: %s/" LIMITS_FILE ": %s\n", sp->path, why);
		return errno == EINVAL ? EX_CONFIG : EX_IOERR;
	}
	for (int i = 0; i < l.n; i++) {
		struct store_limit_row r = { .rule = true, .lim = l.v[i],
		    .running = -1, .waiting = -1 };

		row(arg, &r);
	}
	if (spool_key_use(sp, show_key, &sh) == -1) {
		fprintf(stderr, "chute: %s: cannot read the keys in use: %s\n",
		    sp->path, strerror(errno));
		rc = EX_IOERR;
	}
	limits_free(&l);
	return rc;
}

int
spool_set_limit(struct spool *sp, const struct store_limit_set *c,
    char *msg, size_t len)
{
	struct limit ch = { .scope = c->scope, .max = c->max,
	    .rate_n = c->rate_n, .rate_ms = c->rate_ms }, now;
	char why[256], line[256];

	if (c->scope == LIM_KEY)
		strlcpy(ch.key, c->key, sizeof(ch.key));
	if (limits_change(sp, &ch, c->set_max, c->set_rate, c->clear, &now,
	    why, sizeof(why)) == -1) {
		snprintf(msg, len, "%s/" LIMITS_FILE ": %s", sp->path, why);
		return errno == EINVAL ? EX_CONFIG : errno == EACCES ||
		    errno == EPERM ? EX_NOPERM : EX_IOERR;
	}
	if (now.max == 0 && now.rate_n == 0) {
		now.max = now.rate_n = 0;
		limits_format(&now, line, sizeof(line));
		snprintf(msg, len, "%s: no rule", line);
	} else
		limits_format(&now, msg, len);
	return 0;
}
