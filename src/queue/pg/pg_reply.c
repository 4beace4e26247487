/*
 * pg_reply.c: the server's replies, read as input.  A reply may hold more
 * rows than the statement asked for (tables inheriting chute.jobs, a
 * hostile server or proxy), fewer columns, values of another length, and
 * job IDs that no spool would take; none of that may reach a path, an
 * array index or a log line unchecked.  No connection here: the fuzzer
 * (tests/fuzz/fuzz_claim.c) feeds these functions replies it made itself.
 */
#include <string.h>

#include "base/id.h"
#include "queue/pg/pg.h"

/*
 * The number of rows of r, a reply that must have ncols columns and at
 * most max rows: PQntuples(r), or -1 when it has another number of
 * columns.  Rows beyond max are not counted (*more says how many there
 * were; more may be NULL): a caller sizes its arrays by what it asked.
 */
int
pg_rows(const PGresult *r, int ncols, int max, int *more)
{
	int n = PQntuples(r);

	if (more != NULL)
		*more = 0;
	if (PQnfields(r) != ncols || n < 0)
		return -1;
	if (n > max) {
		if (more != NULL)
			*more = n - max;
		n = max;
	}
	return n;
}

int
pg_be_int(const PGresult *r, int row, int col, int len, uint64_t *x)
{
	const unsigned char *v = (const unsigned char *)PQgetvalue(r, row, col);

	*x = 0;
	if (v == NULL || PQgetisnull(r, row, col) ||
	    PQgetlength(r, row, col) != len)
		return -1;
	for (int i = 0; i < len; i++)
		*x = *x << 8 | v[i];
	return 0;
}

int
pg_claim_row(const PGresult *r, int i, struct claim *c, const char **why)
{
	const char *id = PQgetvalue(r, i, 0);
	uint64_t attempt;

	c->id[0] = '\0';
	if (pg_be_int(r, i, 1, 8, &c->token) == -1 || c->token == 0) {
		c->token = 0;
		*why = "no fencing token";
		return -1;
	}
	if (pg_be_int(r, i, 2, 4, &attempt) == -1 || attempt == 0 ||
	    attempt > INT32_MAX) {
		*why = "no attempt count";
		return 1;
	}
	c->attempt = (int)attempt;
	/* A NUL inside the value would hide the rest of it from id_valid. */
	if (id == NULL || PQgetisnull(r, i, 0) || (size_t)PQgetlength(r, i, 0)
	    != strlen(id) || !id_valid(id)) {
		*why = "its ID is not a valid job ID (1-200 bytes, no '/', no "
		    "leading '.', no control bytes)";
		return 1;
	}
	strlcpy(c->id, id, sizeof(c->id));
	*why = NULL;
	return 0;
}
