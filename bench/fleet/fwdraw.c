/*
 * fwdraw: the database's own limit for `chute forward` (issue 10): the
 * batched INSERT that forward sends (src/chute-pgsql/pg_forward_db.c,
 * insert_sql), from memory, with no spool under it: no files, no renames, no logs.
 *
 *   fwdraw URI N BATCH SIZE
 *
 * Inserts N jobs of SIZE bytes into queue "default" of URI (chute init
 * done), BATCH per autocommitted statement (its pg_notify included, as
 * forward's), one statement after the other over one connection, the
 * arrays in binary as forward sends them, the statement prepared once
 * and planned generically, as forward's connection does (src/pg_conn.c).
 * Prints "N SECONDS JOBS_PER_S" on stdout.
 */
#include <arpa/inet.h>
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

/* The statement of src/chute-pgsql/pg_forward_db.c, word for word
 * (PG_CHANNEL is "chute"). */
static const char insert_sql[] =
"WITH b AS MATERIALIZED (SELECT * FROM unnest($4::text[], $5::text[],"
" $6::text[], $7::bytea[]) WITH ORDINALITY AS b(lid, birth, did, body, n)),"
" p AS (INSERT INTO chute.payloads (queue, id, body, origin, origin_spool,"
" origin_id, origin_birth) SELECT $1, did, body, $2, $3, lid, birth FROM b"
" ORDER BY n ON CONFLICT DO NOTHING RETURNING id, origin_id),"
" j AS (INSERT INTO chute.live (queue, id, state, size)"
" SELECT $1, p.id, 'new', octet_length(b.body) FROM p"
" JOIN b ON b.lid = p.origin_id ORDER BY b.n RETURNING id),"
" w AS (SELECT pg_notify('chute', $1) FROM (SELECT FROM j LIMIT 1) x)"
" SELECT b.n, p.id, f.queue, f.id FROM b"
" LEFT JOIN p ON p.origin_id = b.lid"
" LEFT JOIN LATERAL (SELECT o.queue, o.id FROM chute.payloads o"
" WHERE p.id IS NULL AND o.origin = $2 AND o.origin_spool = $3"
" AND o.origin_id = b.lid AND o.origin_birth = b.birth LIMIT 1) f ON true"
" WHERE (SELECT count(*) FROM w) >= 0"
" ORDER BY b.n";

struct arr {
	char	*b;
	size_t	 len, cap;
	int	 n;
};

static void
put32(char *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static char *
room(struct arr *a, size_t n)
{
	while (a->len + n > a->cap) {
		a->cap = a->cap ? a->cap * 2 : 65536;
		if ((a->b = realloc(a->b, a->cap)) == NULL)
			err(1, "realloc");
	}
	a->len += n;
	return a->b + a->len - n;
}

static void
begin(struct arr *a, uint32_t oid)
{
	char *p;

	a->len = 0;
	a->n = 0;
	p = room(a, 20);
	put32(p, 1);
	put32(p + 4, 0);
	put32(p + 8, oid);
	put32(p + 16, 1);
}

static void
elem(struct arr *a, const void *s, size_t n)
{
	char *p = room(a, 4 + n);

	put32(p, (uint32_t)n);
	memcpy(p + 4, s, n);
	a->n++;
}

static void
end(struct arr *a)
{
	put32(a->b + 12, (uint32_t)a->n);
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	static const Oid types[7] = { 25, 25, 25, 1009, 1009, 1009, 1001 };
	static const int fmts[7] = { 0, 0, 0, 1, 1, 1, 1 };
	struct arr lid = { 0 }, birth = { 0 }, did = { 0 }, body = { 0 };
	PGconn *c;
	PGresult *r;
	char *payload;
	int n, batch, size;
	double t0, t;

	if (argc != 5)
		errx(64, "usage: fwdraw URI N BATCH SIZE");
	n = atoi(argv[2]);
	batch = atoi(argv[3]);
	size = atoi(argv[4]);
	if (n < 1 || batch < 1 || size < 0 || (payload = malloc(size + 1)) == NULL)
		errx(64, "bad N, BATCH or SIZE");
	memset(payload, 'x', size);
	if (PQstatus(c = PQconnectdb(argv[1])) != CONNECTION_OK)
		errx(1, "%s", PQerrorMessage(c));
	r = PQexec(c, "SET plan_cache_mode = force_generic_plan");
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		errx(1, "set: %s", PQerrorMessage(c));
	PQclear(r);
	r = PQprepare(c, "ins", insert_sql, 7, types);
	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		errx(1, "prepare: %s", PQerrorMessage(c));
	PQclear(r);
	t0 = mono();
	for (int i = 0; i < n; i += batch) {
		int m = n - i < batch ? n - i : batch;
		const char *v[7] = { "default", "raw", "/raw" };
		int lens[7] = { 0 };

		begin(&lid, 25);
		begin(&birth, 25);
		begin(&did, 25);
		begin(&body, 17);
		for (int k = 0; k < m; k++) {
			char id[32], b[32];
			int l = snprintf(id, sizeof(id), "r%09d", i + k);

			snprintf(b, sizeof(b), "%d:0", i + k);
			elem(&lid, id, (size_t)l);
			elem(&birth, b, strlen(b));
			elem(&did, id, (size_t)l);
			elem(&body, payload, (size_t)size);
		}
		end(&lid);
		end(&birth);
		end(&did);
		end(&body);
		v[3] = lid.b, v[4] = birth.b, v[5] = did.b, v[6] = body.b;
		lens[3] = (int)lid.len, lens[4] = (int)birth.len;
		lens[5] = (int)did.len, lens[6] = (int)body.len;
		r = PQexecPrepared(c, "ins", 7, v, lens, fmts, 0);
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != m)
			errx(1, "insert: %s", PQerrorMessage(c));
		PQclear(r);
	}
	t = mono() - t0;
	printf("%d %.3f %.0f\n", n, t, n / t);
	PQfinish(c);
	return 0;
}
