/*
 * store_pg_limit.c: a queue's limits (schema version 8, fleet.md
 * "Priorities, keys and limits"): `chute limit URL` reads chute.limits and
 * the keys in use; a change of a rule is one transaction under the
 * queue's keys_lock, which also takes back or gives the admissions the
 * new rule calls for (chute.keys_recap), and wakes the workers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/sched.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "queue/store.h"

static const char *const scope_name[] = { "key", "default", "all" };

static int
scope_of(const char *s)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, scope_name[i]) == 0)
			return i;
	return -1;
}

/* The rules of the queue into *v (malloc'd), *n of them: 0, or -1. */
static int
read_rules(struct pg *pg, struct limit **v, int *n)
{
	static const char sql[] = "SELECT scope, key, max, rate_n, rate_ms"
	    " FROM chute.limits WHERE queue = $1"
	    " ORDER BY CASE scope WHEN 'all' THEN 0 WHEN 'default' THEN 1"
	    " ELSE 2 END, key";
	const char *p[1] = { pg->queue };
	PGresult *r = pg_exec(pg, sql, 1, p);
	int rows;

	*v = NULL;
	*n = 0;
	if (r == NULL)
		return -1;
	rows = PQntuples(r);
	if (PQnfields(r) != 5 || (*v = calloc((size_t)rows + 1,
	    sizeof(**v))) == NULL) {
		PQclear(r);
		return -1;
	}
	for (int i = 0; i < rows; i++) {
		struct limit *l = &(*v)[*n];
		int sc = scope_of(PQgetvalue(r, i, 0));

		if (sc == -1)
			continue;	/* the table's CHECK forbids it */
		l->scope = (enum limit_scope)sc;
		strlcpy(l->key, PQgetvalue(r, i, 1), sizeof(l->key));
		l->max = atol(PQgetvalue(r, i, 2));
		l->rate_n = atol(PQgetvalue(r, i, 3));
		l->rate_ms = strtoll(PQgetvalue(r, i, 4), NULL, 10);
		(*n)++;
	}
	PQclear(r);
	return 0;
}

int
pg_limits_read(struct pg *pg, void (*row)(void *,
    const struct store_limit_row *), void *arg)
{
	static const char sql[] = "SELECT key, count(*) FILTER (WHERE state ="
	    " 'cur'), count(*) FILTER (WHERE state <> 'cur') FROM chute.live"
	    " WHERE queue = $1 AND key IS NOT NULL GROUP BY key ORDER BY key";
	const char *p[1] = { pg->queue };
	struct limit *v;
	PGresult *r;
	int n;

	if (read_rules(pg, &v, &n) == -1)
		return pg_fail(pg, "limit");
	for (int i = 0; i < n; i++) {
		struct store_limit_row w = { .rule = true, .lim = v[i],
		    .running = -1, .waiting = -1 };

		row(arg, &w);
	}
	if ((r = pg_exec(pg, sql, 1, p)) == NULL) {
		free(v);
		return pg_fail(pg, "limit");
	}
	for (int i = 0; i < PQntuples(r) && PQnfields(r) == 3; i++) {
		const char *key = PQgetvalue(r, i, 0);
		const struct limit *l = limit_for_key(v, n, key);
		struct store_limit_row w = {
			.bounded = l != NULL,
			.running = strtoll(PQgetvalue(r, i, 1), NULL, 10),
			.waiting = strtoll(PQgetvalue(r, i, 2), NULL, 10),
		};

		/* The rule that applies (its scope: key or default), and
		 * the key's name. */
		if (l != NULL)
			w.lim = *l;
		strlcpy(w.lim.key, key, sizeof(w.lim.key));
		row(arg, &w);
	}
	PQclear(r);
	free(v);
	return 0;
}

/*
 * The change, in one transaction: the queue's keys_lock first (every
 * admission waits for it, so none is decided under the old rule after
 * the new one is in), the rule's row (a rule left with neither bound is
 * deleted), the admissions of the keys it bounds, and a NOTIFY that makes
 * every worker claim again at once.  Its reply: the rule as it now is.
 */
static const char set_sql[] =
    "INSERT INTO chute.limits AS l (queue, scope, key, max, rate_n,"
    " rate_ms) VALUES ($1, $2, $3, coalesce($4::integer, 0),"
    " coalesce($5::integer, 0), coalesce($6::bigint, 0))"
    " ON CONFLICT (queue, scope, key) DO UPDATE SET"
    " max = coalesce($4::integer, l.max), rate_n = coalesce($5::integer,"
    " l.rate_n), rate_ms = coalesce($6::bigint, l.rate_ms)"
    " RETURNING max, rate_n, rate_ms";
static const char drop_sql[] =
    "DELETE FROM chute.limits WHERE queue = $1 AND scope = $2 AND key = $3"
    " AND ($4::boolean OR (max = 0 AND rate_n = 0))";

/* Does the plain claim do, or must it leave the queue to claim_limited? */
static const char limited_sql[] =
    "INSERT INTO chute.queues AS x (queue, limited) SELECT $1, EXISTS (SELECT"
    " FROM chute.limits WHERE queue = $1 AND (scope = 'all' OR rate_n > 0))"
    " ON CONFLICT (queue) DO UPDATE SET limited = excluded.limited";

static void
say_rule(const struct store_limit_set *c, long max, long rate_n,
    msec_t rate_ms, bool gone, char *msg, size_t len)
{
	char rate[48];

	limit_format_rate(rate_n, rate_ms, rate, sizeof(rate));
	if (gone)
		snprintf(msg, len, "%s%s%s: no rule", scope_name[c->scope],
		    c->scope == LIM_KEY ? " " : "", c->scope == LIM_KEY ?
		    c->key : "");
	else if (max == 0)
		snprintf(msg, len, "%s%s%s: max -, rate %s",
		    scope_name[c->scope], c->scope == LIM_KEY ? " " : "",
		    c->scope == LIM_KEY ? c->key : "", rate);
	else
		snprintf(msg, len, "%s%s%s: max %ld, rate %s",
		    scope_name[c->scope], c->scope == LIM_KEY ? " " : "",
		    c->scope == LIM_KEY ? c->key : "", max, rate);
}

int
pg_limit_set(struct pg *pg, const struct store_limit_set *c, char *msg,
    size_t len)
{
	char max[24], rn[24], rms[24];
	const char *key = c->scope == LIM_KEY ? c->key : "";
	const char *p[6] = { pg->queue, scope_name[c->scope], key,
	    c->set_max ? max : NULL, c->set_rate ? rn : NULL,
	    c->set_rate ? rms : NULL };
	const char *d[4] = { pg->queue, scope_name[c->scope], key,
	    c->clear ? "t" : "f" };
	const char *rc[2] = { pg->queue, c->scope == LIM_KEY ? key : NULL };
	const char *n[1] = { pg->queue };
	long m = 0, r_n = 0;
	msec_t r_ms = 0;
	bool gone = c->clear;
	PGresult *r;

	snprintf(max, sizeof(max), "%ld", c->max);
	snprintf(rn, sizeof(rn), "%ld", c->rate_n);
	snprintf(rms, sizeof(rms), "%lld", (long long)c->rate_ms);
	if (pg_cmd(pg, "BEGIN", 0, NULL) == -1 ||
	    pg_cmd(pg, "SELECT chute.keys_lock($1)", 1, n) == -1)
		goto fail;
	if (!c->clear) {
		if ((r = pg_exec(pg, set_sql, 6, p)) == NULL)
			goto fail;
		if (PQntuples(r) == 1 && PQnfields(r) == 3) {
			m = atol(PQgetvalue(r, 0, 0));
			r_n = atol(PQgetvalue(r, 0, 1));
			r_ms = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
			gone = m == 0 && r_n == 0;
		}
		PQclear(r);
	}
	if (pg_cmd(pg, drop_sql, 4, d) == -1 ||
	    pg_cmd(pg, limited_sql, 1, n) == -1 ||
	    pg_cmd(pg, "SELECT chute.keys_recap($1, $2)", 2,
	    rc) == -1 || pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)",
	    1, n) == -1 || pg_cmd(pg, "COMMIT", 0, NULL) == -1)
		goto fail;
	say_rule(c, m, r_n, r_ms, gone, msg, len);
	return 0;
fail:
	{
		int st = pg_fail_msg(pg, "limit", msg, len);

		pg_cmd(pg, "ROLLBACK", 0, NULL);
		return st;
	}
}
