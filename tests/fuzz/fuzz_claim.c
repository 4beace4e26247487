/*
 * fuzz_claim.c: a claim's reply, made here from the input without a
 * server (libpq's PQmakeEmptyPGresult and PQsetvalue), through
 * queue_pg_take, the worker's reading of it: any number of rows and
 * columns, NULLs, values of any length and bytes.  Taken claims must never
 * outnumber what was asked, a row taken must have an ID id_valid accepts,
 * and nothing may be written outside the look-ahead array (ASan).
 *
 * Input: asked (1 byte), slots, prefetch, columns, rows; then for each
 * value a length byte (255: NULL) and that many bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/id.h"
#include "queue/pg/pg.h"

static struct pg pg;

static void
cancelled(void *arg, const char *id, const char *why, bool now)
{
}

static PGresult *
reply(const uint8_t **d, size_t *size, int ncols, int nrows)
{
	PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	PGresAttDesc att[8];

	memset(att, 0, sizeof(att));
	for (int i = 0; i < ncols; i++) {
		att[i].name = (char *)"c";
		att[i].format = 1;
	}
	if (r == NULL || !PQsetResultAttrs(r, ncols, att))
		abort();
	for (int row = 0; row < nrows; row++)
		for (int col = 0; col < ncols; col++) {
			int len = *size > 0 ? **d : 0;

			if (*size > 0)
				(*d)++, (*size)--;
			if (len == 255)
				len = -1;
			else if ((size_t)len > *size)
				len = (int)*size;
			if (!PQsetvalue(r, row, col, (char *)*d, len))
				abort();
			if (len > 0)
				*d += len, *size -= (size_t)len;
		}
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct queue_conf c = { .cancelled = cancelled,
	    .policy = { .max_attempts = 3 } };
	struct queue *q;
	PGresult *r;
	int asked, slots, prefetch, ncols, nrows, got;

	if (pg.uri == NULL) {
		char dir[] = "/tmp/chute-fuzz.XXXXXX";

		/* queue_pg_open sweeps its base: a directory of our own. */
		if (mkdtemp(dir) == NULL || setenv("TMPDIR", dir, 1) == -1 ||
		    pg_parse(&pg, "postgresql:///fuzz", "default") == -1)
			abort();
		unsetenv("RUNTIME_DIRECTORY");
	}
	if (size < 5)
		return 0;
	asked = data[0] % 16 + 1;
	slots = data[1] % 4 + 1;
	prefetch = data[2] % 8;
	ncols = data[3] % 7;
	nrows = data[4];
	data += 5;
	size -= 5;
	r = reply(&data, &size, ncols, nrows);
	for (int i = 0; i < PQntuples(r) && ncols == 4; i++) {
		struct claim cl;
		const char *why;

		if (pg_claim_row(r, i, &cl, &why) == 0 && !id_valid(cl.id))
			abort();
	}
	struct pgq_opts o = { .lease = 30000, .poll = 1000, .slots = slots,
	    .prefetch = prefetch };

	if (queue_pg_open(&pg, &o, &c, &q) != 0)
		abort();
	if ((got = queue_pg_take(q, r, asked)) > asked || got > slots + prefetch)
		abort();
	q->be->close(q);
	PQclear(r);
	return 0;
}
