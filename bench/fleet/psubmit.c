/*
 * psubmit: submit jobs to a chute queue on a fixed schedule over one open
 * connection, as the peers' latency drivers do (bench/fleet/chute.sh, issue 9).
 *
 *   psubmit URI COUNT GAP_MS OUT
 *
 * The i-th job is submitted at start + i * GAP_MS (CLOCK_MONOTONIC, absolute).
 * Each submit is what `chute submit URI FILE` does once connected, statement
 * for statement (src/pg_cmd.c, insert() and pgcmd_submit()): the job's row and
 * payload in one autocommitted INSERT, then `SELECT pg_notify('chute', queue)`.
 * What it leaves out is the process: exec of chute and chute-pgsql, loading
 * libpq, connecting, the schema check; graphile-worker's and pg-boss's
 * drivers also submit over a connection they keep open.
 *
 * One line per job to OUT: "ID START_MS END_MS", CLOCK_REALTIME in ms since
 * the epoch (3 decimals): START before the INSERT is sent (where lib.js takes
 * the peers' submit time), END after the notify's reply.
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

static double
real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
run(PGconn *c, const char *sql, int n, const char *const *p, const int *len, const int *fmt)
{
	PGresult *r = PQexecParams(c, sql, n, NULL, p, len, fmt, 0);

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
		errx(1, "%s", PQerrorMessage(c));
	PQclear(r);
}

int
main(int argc, char *argv[])
{
	/* chute submit's statement (src/chute-pgsql/pg_cmd_submit.c), for a job due now. */
	static const char insert[] =
	    "WITH p AS (INSERT INTO chute.payloads (queue, id, body)"
	    " VALUES ($1, $2, $4) ON CONFLICT DO NOTHING RETURNING queue, id)"
	    " INSERT INTO chute.live (queue, id, state, run_at, size)"
	    " SELECT queue, id, 'new', now(), $3::bigint FROM p";
	struct timespec t0, due;
	char host[64] = "localhost", id[128], body[64], size[24];
	long count, gap;
	PGconn *c;
	FILE *out;

	if (argc != 5)
		errx(64, "usage: psubmit URI COUNT GAP_MS OUT");
	count = atol(argv[2]);
	gap = atol(argv[3]);
	if (count <= 0 || gap < 0)
		errx(64, "bad COUNT or GAP_MS");
	if ((out = fopen(argv[4], "we")) == NULL)
		err(1, "%s", argv[4]);
	c = PQconnectdb(argv[1]);
	if (PQstatus(c) != CONNECTION_OK)
		errx(1, "%s", PQerrorMessage(c));
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, ".")] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < count; i++) {
		long long ns = (long long)t0.tv_nsec + (long long)i * gap * 1000000LL;
		const char *q[1] = { "default" };
		const char *p[4] = { "default", id, size, body };
		int len[4] = { 0, 0, 0, 0 }, fmt[4] = { 0, 0, 0, 1 };
		double start, end;

		due.tv_sec = t0.tv_sec + (time_t)(ns / 1000000000LL);
		due.tv_nsec = (long)(ns % 1000000000LL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
			;
		/* The shape of a generated ID: time, pid, counter, host. */
		start = real_ms();
		snprintf(id, sizeof(id), "%010lld.%06lld.%07ld_%04ld.%s", (long long)(start / 1e3),
		    (long long)(start * 1e3) % 1000000, (long)getpid(), i % 10000, host);
		len[3] = snprintf(body, sizeof(body), "{\"i\":%ld}", i);
		snprintf(size, sizeof(size), "%d", len[3]);
		run(c, insert, 4, p, len, fmt);
		run(c, "SELECT pg_notify('chute', $1)", 1, q, NULL, NULL);
		end = real_ms();
		fprintf(out, "%s %.3f %.3f\n", id, start, end);
	}
	PQfinish(c);
	if (fclose(out) == EOF)
		err(1, "%s", argv[4]);
	return 0;
}
