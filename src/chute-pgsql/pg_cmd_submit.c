/*
 * pg_cmd_submit.c: chute submit URL: every input in, a batch per
 * statement, the IDs printed after the commit.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/sched.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "cli/listing.h"
#include "cli/submit_after.h"
#include "cli/submit_unique.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

#define SUBMIT_BATCH	1000		/* jobs per statement */
#define SUBMIT_BYTES	(32LL << 20)	/* payload bytes per statement (one job more) */

/*
 * The inputs of one submit go in batches, a statement each, so that a
 * thousand files cost one transaction, not a thousand commits.  ids holds
 * every input's ID in order; [first, first + did.n) is the batch being
 * gathered, and [0, ok) the IDs the database has, to be printed.
 */
struct submit {
	const char	*id;
	msec_t		 delay, at;	/* -1: not given */
	int		 prio;		/* --priority, PRIO_DEFAULT */
	const char	*key;		/* --key, NULL none */
	char		 (*ids)[NAME_MAX + 1];
	int		 ok, first;
	struct pg_arr	 did, body;	/* the batch */
	long long	 bytes;
	struct uq_opts	 u;		/* --unique and its modes */
	struct af_opts	 a;		/* --after and its mode */
};

/* The whole input, at most PG_MAX_JOB bytes.  NULL (errno EFBIG: too big). */
static char *
slurp(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t r;

	while (b != NULL) {
		if (n == cap) {
			if (cap > (size_t)PG_MAX_JOB) {
				free(b);
				errno = EFBIG;
				return NULL;
			}
			if ((nb = realloc(b, cap * 2)) == NULL)
				break;
			b = nb;
			cap *= 2;
		}
		if ((r = read(fd, b + n, cap - n)) == -1 && errno == EINTR)
			continue;
		if (r == -1)
			break;
		if (r == 0) {
			if (n > (size_t)PG_MAX_JOB) {
				free(b);
				errno = EFBIG;
				return NULL;
			}
			*len = n;
			return b;
		}
		n += (size_t)r;
	}
	free(b);
	return NULL;
}

/*
 * One statement for the batch: each job's row and payload, unless its ID
 * is taken (the payload goes in first: its key holds every job's ID,
 * waiting or finished, until purge), and one notification for the workers, sent with the commit
 * that makes the rows visible.  Rows: the position (1..) of each job
 * inserted.
 */
static const char insert_sql[] =
"WITH b AS MATERIALIZED (SELECT * FROM unnest($2::text[], $3::bytea[])"
" WITH ORDINALITY AS b(id, body, n)),"
" p AS (INSERT INTO chute.payloads (queue, id, body)"
" SELECT $1, id, body FROM b ORDER BY n ON CONFLICT DO NOTHING RETURNING id),"
" j AS (INSERT INTO chute.live (queue, id, state, run_at, size, priority,"
" key)"
" SELECT $1, b.id, CASE WHEN $4::bigint IS NULL AND $5::bigint IS NULL"
" THEN 'new' ELSE 'defer' END,"
" CASE WHEN $5::bigint IS NOT NULL THEN to_timestamp($5::bigint / 1000.0)"
" WHEN $4::bigint IS NOT NULL THEN now() + $4::bigint * interval"
" '1 millisecond' ELSE now() END, octet_length(b.body), $6::smallint, $7"
" FROM b"
" JOIN p ON p.id = b.id ORDER BY b.n RETURNING id),"
" w AS (SELECT pg_notify('" PG_CHANNEL "', $1) FROM (SELECT FROM j LIMIT 1) x)"
" SELECT b.n FROM b JOIN j ON j.id = b.id"
" WHERE (SELECT count(*) FROM w) >= 0 ORDER BY b.n";

static void
batch_begin(struct submit *sb)
{
	sb->first += sb->did.n;
	sb->bytes = 0;
	pg_arr_begin(&sb->did, PG_OID_TEXT);
	pg_arr_begin(&sb->body, PG_OID_BYTEA);
}

/*
 * Send the batch and take its answer: its jobs now in the database join
 * the IDs to print, the others' IDs were taken ("job exists").  Returns 0,
 * EXIT_NO when an ID was taken, or an exit status after saying why the
 * database did not take the batch (then none of it is there).
 */
static int
batch_send(struct pg *pg, struct submit *sb)
{
	static const Oid types[7] = { PG_OID_TEXT, PG_OID_TEXT_ARR,
	    PG_OID_BYTEA_ARR, 0, 0, 0, PG_OID_TEXT };
	static const int fmts[7] = { 0, 1, 1, 0, 0, 0, 0 };
	char delay[24], at[24], prio[16];
	const char *v[7] = { pg->queue, sb->did.b, sb->body.b,
	    sb->delay >= 0 ? delay : NULL, sb->at >= 0 ? at : NULL, prio,
	    sb->key };
	const int lens[7] = { 0, (int)sb->did.len, (int)sb->body.len, 0, 0, 0,
	    0 };
	int m = sb->did.n, rc = 0, k = 0;
	PGresult *r;

	if (m == 0)
		return 0;
	if (sb->did.b == NULL || sb->body.b == NULL) {
		fprintf(stderr, "chute: submit: %s\n", strerror(ENOMEM));
		return EX_SOFTWARE;
	}
	pg_arr_end(&sb->did);
	pg_arr_end(&sb->body);
	snprintf(delay, sizeof(delay), "%lld", (long long)sb->delay);
	snprintf(at, sizeof(at), "%lld", (long long)sb->at);
	snprintf(prio, sizeof(prio), "%d", sb->prio);
	r = pg_send(pg, insert_sql, 7, types, v, lens, fmts) == 0 ?
	    pg_await(pg) : NULL;
	if (pg_result(pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return pg_fail(pg, "submit");
	}
	for (int i = 0; i < m; i++) {
		const char *id = sb->ids[sb->first + i];

		if (k < PQntuples(r) && atoi(PQgetvalue(r, k, 0)) == i + 1) {
			k++;
			if (sb->ok != sb->first + i)
				memcpy(sb->ids[sb->ok], id, sizeof(sb->ids[0]));
			sb->ok++;
		} else {
			fprintf(stderr, "chute: %s: job exists\n", id);
			rc = EXIT_NO;
		}
	}
	PQclear(r);
	return rc;
}

/*
 * Read one input into the batch under a new ID (or --id): 0, 66 (said),
 * or 70 when out of memory (said; nothing more is sent).
 */
static int
submit_one(struct submit *sb, const char *file)
{
	bool is_stdin = strcmp(file, "-") == 0;
	char *body, *p;
	size_t len;
	int fd;

	if ((fd = is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC))
	    == -1) {
		fprintf(stderr, "chute: %s: %s\n", file, strerror(errno));
		return EX_NOINPUT;
	}
	body = slurp(fd, &len);
	if (!is_stdin)
		close(fd);
	if (body == NULL) {
		if (errno == EFBIG)
			fprintf(stderr, "chute: %s: larger than %lld MiB, the "
			    "limit of a job in a PostgreSQL queue\n", file,
			    PG_MAX_JOB >> 20);
		else
			fprintf(stderr, "chute: %s: %s\n", file, strerror(errno));
		return EX_NOINPUT;
	}
	if (sb->id != NULL)
		strlcpy(sb->ids[sb->first + sb->did.n], sb->id, sizeof(sb->ids[0]));
	else
		id_generate(sb->ids[sb->first + sb->did.n], sizeof(sb->ids[0]));
	/* Out of memory: the batch is short of this job, and is not sent. */
	if (pg_arr_str(&sb->did, sb->ids[sb->first + sb->did.n]) == -1 ||
	    (p = pg_arr_elem(&sb->body, len)) == NULL) {
		free(body);
		fprintf(stderr, "chute: submit: %s\n", strerror(ENOMEM));
		return EX_SOFTWARE;
	}
	memcpy(p, body, len);
	sb->bytes += (long long)len;
	free(body);
	return 0;
}

/*
 * The one input of --unique and --after (FILE, or - for stdin), read whole
 * into *body (free it): 0, or EX_NOINPUT after one line.
 */
static int
one_input(const char *file, char **body, size_t *len)
{
	bool is_stdin = strcmp(file, "-") == 0;
	int fd;

	if ((fd = is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC))
	    == -1) {
		fprintf(stderr, "chute: %s: %s\n", file, strerror(errno));
		return EX_NOINPUT;
	}
	*body = slurp(fd, len);
	if (!is_stdin)
		close(fd);
	if (*body == NULL) {
		fprintf(stderr, "chute: %s: %s\n", file, errno == EFBIG ?
		    "larger than the limit of a job in a PostgreSQL queue" :
		    strerror(errno));
		return EX_NOINPUT;
	}
	return 0;
}

/*
 * --unique: the one input, read whole, under its ID with ",u=KEY" (a
 * spool's name for it, so that a job forwarded and one submitted here
 * carry the key alike).  The exit status, after its line.
 */
static int
submit_unique(struct pg *pg, struct submit *sb, const char *file)
{
	char id[NAME_MAX + 1], *body;
	size_t len;
	int rc;

	if ((rc = uq_make_id(&sb->u, sb->id, id, sizeof(id))) != 0 ||
	    (rc = one_input(file, &body, &len)) != 0)
		return rc;
	rc = pgcmd_submit_unique(pg, &sb->u, id, body, len, sb->delay, sb->at,
	    sb->prio, sb->key);
	free(body);
	return rc;
}

/* --after: the one input, read whole, waiting for its jobs. */
static int
submit_after(struct pg *pg, struct submit *sb, const char *file)
{
	char id[NAME_MAX + 1], *body;
	size_t len;
	int rc;

	if (sb->id != NULL)
		strlcpy(id, sb->id, sizeof(id));
	else
		id_generate(id, sizeof(id));
	if ((rc = one_input(file, &body, &len)) != 0)
		return rc;
	rc = pgcmd_submit_after(pg, &sb->a, id, body, len, sb->prio, sb->key);
	free(body);
	return rc;
}

/* One option of submit; 0, or an exit status (said). */
static int
submit_option(void *arg, int c, char *v)
{
	struct submit *sb = arg;
	const char *err;
	int rc;

	/* base/sched.c says what is taken, and why not. */
	if (c == 'p')
		return prio_parse(v, &sb->prio, &err) == 0 ? 0 :
		    usage_error("submit", "--priority %s: %s", v, err);
	if (c == 'k') {
		if (!key_valid(v, &err))
			return usage_error("submit", "--key %s: %s", vis_id(v),
			    err);
		sb->key = v;
		return 0;
	}
	if ((rc = uq_option(&sb->u, c, v)) != 1 ||
	    (rc = af_option(&sb->a, c, v)) != 1)
		return rc;
	if (c == 'i') {
		sb->id = v;
		return check_ids(1, &v, "submit") != 0 ? EX_USAGE : 0;
	}
	if (c == 'd' && sb->at < 0 && sb->delay < 0 &&
	    dur_parse(v, &sb->delay) == 0)
		return 0;
	if (c == 'a' && sb->at < 0 && sb->delay < 0) {
		sb->at = strtonum(v, 1, 1LL << 40, &err) * 1000;
		return err == NULL ? 0 : usage_error("submit", "--at %s: not an "
		    "epoch time in seconds", v);
	}
	return usage_error("submit", "bad option, or --at and --delay together");
}

static int
submit_parse(int argc, char **argv, struct submit *sb)
{
	static const struct option longopts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "delay", required_argument, NULL, 'd' },
		{ "at", required_argument, NULL, 'a' },
		{ "priority", required_argument, NULL, 'p' },
		{ "key", required_argument, NULL, 'k' },
		UQ_LONGOPTS,
		AF_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int rc;

	if ((rc = pgcmd_options(argc, argv, "submit", longopts, submit_option,
	    sb)) != 0)
		return rc;
	if (sb->id != NULL && argc - optind > 1)
		return usage_error("submit", "--id with more than one input");
	if ((rc = af_check(&sb->a, argc - optind, sb->u.key != NULL,
	    sb->delay >= 0 || sb->at >= 0)) != 0)
		return rc;
	return uq_check(&sb->u, argc - optind);
}

/* Not worth going on: the database refused or lost a batch. */
static bool
fatal(int rc)
{
	return rc != 0 && rc != EXIT_NO && rc != EX_NOINPUT;
}

int
pgcmd_submit(int argc, char **argv)
{
	struct submit sb = { .delay = -1, .at = -1 };
	char *stdin_only[] = { "-" }, **files;
	struct pg pg;
	int rc, r, n;

	if ((rc = pgcmd_take(&argc, argv, "submit", &pg, true)) != 0)
		return rc;
	/* The URI parsed is freed on a usage error too (LeakSanitizer). */
	if ((rc = submit_parse(argc, argv, &sb)) != 0) {
		af_free(&sb.a);
		return pgcmd_done(&pg, rc);
	}
	files = optind < argc ? argv + optind : stdin_only;
	n = optind < argc ? argc - optind : 1;
	if ((sb.ids = calloc((size_t)n, sizeof(*sb.ids))) == NULL) {
		af_free(&sb.a);
		return pgcmd_done(&pg, EX_SOFTWARE);
	}
	if (pg_connect(&pg, false, 0) == -1 || (rc = pg_schema_check(&pg)) != 0) {
		free(sb.ids);
		af_free(&sb.a);
		return pgcmd_done(&pg, rc ? rc : pg_fail(&pg, "connect"));
	}
	if (sb.u.key != NULL || sb.a.given) {
		rc = sb.a.given ? submit_after(&pg, &sb, files[0]) :
		    submit_unique(&pg, &sb, files[0]);
		free(sb.ids);
		af_free(&sb.a);
		return pgcmd_done(&pg, rc);
	}
	batch_begin(&sb);
	for (int i = 0; i < n && !fatal(rc); i++) {
		if (sb.did.n == SUBMIT_BATCH || sb.bytes >= SUBMIT_BYTES) {
			if ((r = batch_send(&pg, &sb)) > rc)
				rc = r;
			if (fatal(r))
				break;
			batch_begin(&sb);
		}
		if ((r = submit_one(&sb, files[i])) > rc)
			rc = r;
	}
	if (!fatal(rc) && (r = batch_send(&pg, &sb)) > rc)
		rc = r;
	for (int i = 0; i < sb.ok; i++)
		printf("%s\n", sb.ids[i]);
	free(sb.ids);
	free(sb.did.b);
	free(sb.body.b);
	return pgcmd_done(&pg, rc);
}
