/*
 * usubmit: chute's submit statement, with a unique key or without, from PROCS
 * processes in parallel, each over one open connection (issue 37's bench).
 *
 *   usubmit URI N PROCS plain|keyed
 *
 * N single-job submits split over PROCS forked processes (job i goes to
 * process i mod PROCS). plain is `chute submit URI FILE`'s statement for one
 * job due now (src/chute-pgsql/pg_cmd_submit.c, insert_sql); keyed is
 * `chute submit URI --unique KEY FILE`'s (pg_cmd_unique.c, take_sql, with
 * --unique-while active), key "u<i>": a distinct key per job, so every take
 * succeeds and the holder look-up never runs. Both NOTIFY in the statement,
 * as chute's do. Their delay and time CASEs are folded to what they give
 * for a job due now ('new', now()), and the priority 0 and no key are
 * written in as chute sends them as parameters. What it leaves out is the process: exec of chute and
 * chute-pgsql, loading libpq, connecting, the schema check.
 *
 * Prints "SECONDS JOBS_PER_S" on stdout: from the moment every process is
 * connected (a pipe each says so) to the last one's exit. A statement that
 * fails, or a keyed take that inserts no row, exits 1.
 */
#include <sys/wait.h>

#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

static const char plain_sql[] =
    "WITH b AS MATERIALIZED (SELECT * FROM unnest($2::text[], $3::bytea[])"
    " WITH ORDINALITY AS b(id, body, n)),"
    " p AS (INSERT INTO chute.payloads (queue, id, body)"
    " SELECT $1, id, body FROM b ORDER BY n ON CONFLICT DO NOTHING RETURNING id),"
    " j AS (INSERT INTO chute.live (queue, id, state, run_at, size, priority, key)"
    " SELECT $1, b.id, 'new', now(), octet_length(b.body), 0::smallint, NULL"
    " FROM b JOIN p ON p.id = b.id ORDER BY b.n RETURNING id),"
    " w AS (SELECT pg_notify('chute', $1) FROM (SELECT FROM j LIMIT 1) x)"
    " SELECT b.n FROM b JOIN j ON j.id = b.id"
    " WHERE (SELECT count(*) FROM w) >= 0 ORDER BY b.n";

static const char keyed_sql[] =
    "WITH k AS (INSERT INTO chute.unique_keys (queue, ukey, id, held_while)"
    " VALUES ($1, $4, $2, 'active') ON CONFLICT (queue, ukey) DO NOTHING RETURNING id),"
    " p AS (INSERT INTO chute.payloads (queue, id, body, unique_key)"
    " SELECT $1, id, $3, $4 FROM k RETURNING id),"
    " j AS (INSERT INTO chute.live (queue, id, state, run_at, size, unique_key,"
    " priority, key) SELECT $1, id, 'new', now(), octet_length($3),"
    " $4, 0::smallint, NULL FROM p RETURNING id),"
    " w AS (SELECT pg_notify('chute', $1) FROM (SELECT FROM j LIMIT 1) x)"
    " SELECT count(*) FROM j WHERE (SELECT count(*) FROM w) >= 0";

static double
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One submitter: its share of the N jobs, one statement each. */
static void
submitter(const char *uri, long n, int procs, int me, int keyed, int ready, int go)
{
	char host[64] = "localhost", id[128], body[64], arr_id[160], arr_body[160], key[32];
	char c;
	PGconn *pg = PQconnectdb(uri);

	if (PQstatus(pg) != CONNECTION_OK)
		errx(1, "%s", PQerrorMessage(pg));
	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, ".")] = '\0';
	/* go: the driver closes its end, and read returns 0 in every submitter at once. */
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 0)
		err(1, "pipe");
	for (long i = me; i < n; i += procs) {
		struct timespec ts;
		PGresult *r;
		int blen;

		clock_gettime(CLOCK_REALTIME, &ts);
		/* The shape of a generated ID: time, pid, counter, host. */
		snprintf(id, sizeof(id), "%010lld.%06ld.%07ld_%04ld.%s", (long long)ts.tv_sec,
		    ts.tv_nsec / 1000, (long)getpid(), i % 10000, host);
		blen = snprintf(body, sizeof(body), "{\"i\":%ld}", i);
		if (keyed) {
			const char *p[4] = { "default", id, body, key };
			const int len[4] = { 0, 0, blen, 0 }, fmt[4] = { 0, 0, 1, 0 };

			snprintf(key, sizeof(key), "u%ld", i);
			r = PQexecParams(pg, keyed_sql, 4, NULL, p, len, fmt, 0);
		} else {
			const char *p[3] = { "default", arr_id, arr_body };

			snprintf(arr_id, sizeof(arr_id), "{\"%s\"}", id);
			snprintf(arr_body, sizeof(arr_body), "{\"\\\\x");
			for (int k = 0; k < blen; k++)
				snprintf(arr_body + strlen(arr_body), 3, "%02x", (unsigned char)body[k]);
			strcat(arr_body, "\"}");
			r = PQexecParams(pg, plain_sql, 3, NULL, p, NULL, NULL, 0);
		}
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
			errx(1, "submit %ld: %s", i, PQerrorMessage(pg));
		if (keyed && strcmp(PQgetvalue(r, 0, 0), "1") != 0)
			errx(1, "submit %ld: key %s not taken", i, key);
		PQclear(r);
	}
	PQfinish(pg);
	exit(0);
}

int
main(int argc, char *argv[])
{
	int ready[2], go[2], keyed, procs, status, failed = 0;
	long n;
	double t0, s;
	char c;

	if (argc != 5 || (strcmp(argv[4], "plain") != 0 && strcmp(argv[4], "keyed") != 0))
		errx(64, "usage: usubmit URI N PROCS plain|keyed");
	n = atol(argv[2]);
	procs = atoi(argv[3]);
	keyed = strcmp(argv[4], "keyed") == 0;
	if (n <= 0 || procs <= 0 || procs > 64)
		errx(64, "bad N or PROCS");
	if (pipe2(ready, O_CLOEXEC) == -1 || pipe2(go, O_CLOEXEC) == -1)
		err(1, "pipe");
	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid == -1)
			err(1, "fork");
		if (pid == 0) {
			close(ready[0]);
			close(go[1]);
			submitter(argv[1], n, procs, i, keyed, ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (int i = 0; i < procs; i++)
		if (read(ready[0], &c, 1) != 1)
			errx(1, "a submitter did not connect");
	t0 = mono_s();
	close(go[1]);
	for (int i = 0; i < procs; i++) {
		if (wait(&status) == -1)
			err(1, "wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	}
	s = mono_s() - t0;
	if (failed)
		errx(1, "a submitter failed");
	printf("%.3f %.0f\n", s, (double)n / s);
	return 0;
}
