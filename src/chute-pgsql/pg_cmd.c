/*
 * pg_cmd.c: chute-pgsql's subcommands other than run (pg_cmd_run.c).
 * Each is a few short autocommitted statements; the output and exit
 * statuses are those of the same command on a spool.  fleet.md lists the
 * statements that change a job's state.
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
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "cli/listing.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/*
 * Keep the arguments keep[] says, in order, then the NULL, then the others:
 * they stay in the array (setproctitle_init made them copies that only
 * argv points to), out of the command's sight.
 */
void
pgcmd_compact(int *argc, char **argv, const bool *keep)
{
	char **gone = reallocarray(NULL, (size_t)*argc + 1, sizeof(*gone));
	int j = 0, k = 0;

	for (int i = 0; i < *argc; i++) {
		if (keep[i])
			argv[j++] = argv[i];
		else if (gone != NULL)
			gone[k++] = argv[i];
	}
	argv[j] = NULL;
	for (int i = 0; i < k; i++)
		argv[j + 1 + i] = gone[i];
	free(gone);
	*argc = j;
}

int
pgcmd_take(int *argc, char **argv, const char *cmd, struct pg *pg,
    bool need_url)
{
	const char *url = NULL, *queue = "default";
	bool *keep = calloc((size_t)*argc + 1, sizeof(*keep)), more = false;
	int n = *argc;

	if (keep == NULL)
		return EX_SOFTWARE;
	keep[0] = true;
	for (int i = 1; i < n; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < n)
				keep[i++] = true;
			break;
		}
		if (strcmp(argv[i], "--queue") == 0 && i + 1 < n)
			queue = argv[++i];
		else if (strncmp(argv[i], "--queue=", 8) == 0)
			queue = argv[i] + 8;
		else if (pg_is_uri(argv[i]) && url == NULL)
			url = argv[i];
		else if (pg_is_uri(argv[i]))
			more = true;	/* not echoed: it may hold a password */
		else
			keep[i] = true;
	}
	pgcmd_compact(argc, argv, keep);
	free(keep);
	if (more)
		return usage_error(cmd, "more than one postgresql:// URI given");
	if (url == NULL)
		return need_url ? usage_error(cmd, "no postgresql:// URI given") :
		    0;
	return pg_parse(pg, url, queue) == -1 ? EX_USAGE : 0;
}

int
pgcmd_open(int *argc, char **argv, const char *cmd, struct pg *pg)
{
	int rc;

	if ((rc = pgcmd_take(argc, argv, cmd, pg, true)) != 0)
		return rc;
	if (pg_connect(pg, false, 0) == -1)
		return pg_fail(pg, "connect");
	return pg_schema_check(pg);
}

int
pgcmd_options(int argc, char **argv, const char *cmd,
    const struct option *longopts, int (*take)(void *, int, char *),
    void *arg)
{
	int c, rc;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return usage_error(cmd, "bad option: %s",
			    argv[optind - 1]);
		if ((rc = take(arg, c, optarg)) != 0)
			return rc;
	}
	return 0;
}

static int
done_with(struct pg *pg, int rc)
{
	pg_close(pg);
	free(pg->uri);
	return cmd_flush_stdout(rc);
}

/* An "@chute TIME text" line in the job's log, as on a spool. */
static int
note(struct pg *pg, const char *id, const char *text)
{
	static const char sql[] = "INSERT INTO chute.logs (queue, id, body)"
	    " VALUES ($1, $2, convert_to('@chute ' || to_char(now() AT TIME"
	    " ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || $3 ||"
	    " E'\\n', 'UTF8'))";
	const char *p[3] = { pg->queue, id, text };

	return pg_cmd(pg, sql, 3, p);
}


int
pgcmd_init(int argc, char **argv)
{
	struct pg pg;
	int rc;

	if ((rc = pgcmd_take(&argc, argv, "init", &pg, true)) != 0)
		return rc;
	if (argc != 1)
		return usage_error("init", "unexpected argument: %s", argv[1]);
	if (pg_connect(&pg, false, 0) == -1)
		return done_with(&pg, pg_fail(&pg, "connect"));
	return done_with(&pg, pg_schema_init(&pg));
}

/* ---- submit ---- */

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
	char		 (*ids)[NAME_MAX + 1];
	int		 ok, first;
	struct pg_arr	 did, body;	/* the batch */
	long long	 bytes;
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
 * is taken, and one notification for the workers, sent with the commit
 * that makes the rows visible.  Rows: the position (1..) of each job
 * inserted.
 */
static const char insert_sql[] =
"WITH b AS MATERIALIZED (SELECT * FROM unnest($2::text[], $3::bytea[])"
" WITH ORDINALITY AS b(id, body, n)),"
" j AS (INSERT INTO chute.jobs (queue, id, state, run_at, size)"
" SELECT $1, id, CASE WHEN $4::bigint IS NULL AND $5::bigint IS NULL"
" THEN 'new' ELSE 'defer' END,"
" CASE WHEN $5::bigint IS NOT NULL THEN to_timestamp($5::bigint / 1000.0)"
" WHEN $4::bigint IS NOT NULL THEN now() + $4::bigint * interval"
" '1 millisecond' ELSE now() END, octet_length(body) FROM b ORDER BY n"
" ON CONFLICT DO NOTHING RETURNING id),"
" p AS (INSERT INTO chute.payloads (queue, id, body)"
" SELECT $1, b.id, b.body FROM b JOIN j ON j.id = b.id),"
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
	static const Oid types[5] = { PG_OID_TEXT, PG_OID_TEXT_ARR,
	    PG_OID_BYTEA_ARR, 0, 0 };
	static const int fmts[5] = { 0, 1, 1, 0, 0 };
	char delay[24], at[24];
	const char *v[5] = { pg->queue, sb->did.b, sb->body.b,
	    sb->delay >= 0 ? delay : NULL, sb->at >= 0 ? at : NULL };
	const int lens[5] = { 0, (int)sb->did.len, (int)sb->body.len, 0, 0 };
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
	r = pg_send(pg, insert_sql, 5, types, v, lens, fmts) == 0 ?
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

/* One option of submit; 0, or an exit status (said). */
static int
submit_option(void *arg, int c, char *v)
{
	struct submit *sb = arg;
	const char *err;

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
		{ NULL, 0, NULL, 0 },
	};
	int rc;

	if ((rc = pgcmd_options(argc, argv, "submit", longopts, submit_option,
	    sb)) != 0)
		return rc;
	if (sb->id != NULL && argc - optind > 1)
		return usage_error("submit", "--id with more than one input");
	return 0;
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

	if ((rc = pgcmd_take(&argc, argv, "submit", &pg, true)) != 0 ||
	    (rc = submit_parse(argc, argv, &sb)) != 0)
		return rc;
	files = optind < argc ? argv + optind : stdin_only;
	n = optind < argc ? argc - optind : 1;
	if ((sb.ids = calloc((size_t)n, sizeof(*sb.ids))) == NULL)
		return done_with(&pg, EX_SOFTWARE);
	if (pg_connect(&pg, false, 0) == -1 || (rc = pg_schema_check(&pg)) != 0) {
		free(sb.ids);
		return done_with(&pg, rc ? rc : pg_fail(&pg, "connect"));
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
	return done_with(&pg, rc);
}

/* ---- status, cancel, retry: one ID after another ---- */

static int
each_id(int argc, char **argv, const char *cmd,
    int (*fn)(struct pg *, const char *))
{
	struct pg pg;
	int rc, r;

	if ((rc = pgcmd_open(&argc, argv, cmd, &pg)) != 0)
		return done_with(&pg, rc);
	if ((rc = check_ids(argc - 1, argv + 1, cmd)) != 0)
		return done_with(&pg, rc);
	for (int i = 1; i < argc; i++)
		if ((r = fn(&pg, argv[i])) != 0 && r > rc)
			rc = r;
	return done_with(&pg, rc);
}

static int
status_one(struct pg *pg, const char *id)
{
	static const char sql[] = "SELECT state, attempts, last,"
	    " to_char(run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
	    " FROM chute.jobs WHERE queue = $1 AND id = $2";
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);
	char last[4 * 256 + 1];

	if (r == NULL)
		return pg_fail(pg, "status");
	if (PQntuples(r) == 0 || PQnfields(r) != 4) {
		PQclear(r);
		fflush(stdout);
		fprintf(stderr, "chute: %s: unknown job\n", id);
		return EXIT_NO;
	}
	/* Stored text, as the journal shows it: one line, no escape codes. */
	vis_text(PQgetvalue(r, 0, 2), last, sizeof(last));
	printf("%s %s attempts=%s%s%s%s%s\n", id, PQgetvalue(r, 0, 0),
	    PQgetvalue(r, 0, 1), *last ? " " : "", last,
	    strcmp(PQgetvalue(r, 0, 0), "defer") == 0 ? " next=" : "",
	    strcmp(PQgetvalue(r, 0, 0), "defer") == 0 ? PQgetvalue(r, 0, 3) : "");
	PQclear(r);
	return 0;
}

int
pgcmd_status(int argc, char **argv)
{
	return each_id(argc, argv, "status", status_one);
}

/* Unknown, or already finished: the spool's words and status. */
static int
not_there(struct pg *pg, const char *id, const char *cmd)
{
	static const char sql[] =
	    "SELECT state FROM chute.jobs WHERE queue = $1 AND id = $2";
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);

	if (r == NULL)
		return pg_fail(pg, cmd);
	if (PQntuples(r) == 0)
		fprintf(stderr, "chute: %s: unknown job\n", id);
	else if (strcmp(cmd, "retry") == 0)
		fprintf(stderr, "chute: %s: not failed (%s)\n", id,
		    PQgetvalue(r, 0, 0));
	else
		fprintf(stderr, "chute: %s: already %s\n", id, PQgetvalue(r, 0, 0));
	PQclear(r);
	return EXIT_NO;
}

/*
 * new, defer or cur -> failed, in one statement; the claim's token goes,
 * so the outcome of a handler still running is refused.  Its worker is
 * told at once (NOTIFY), and at its next lease renewal at the latest.
 */
static int
cancel_one(struct pg *pg, const char *id)
{
	static const char sql[] =
	    "WITH old AS (SELECT state FROM chute.jobs WHERE queue = $1"
	    " AND id = $2 AND state IN ('new', 'cur', 'defer') FOR UPDATE)"
	    " UPDATE chute.jobs j SET state = 'failed', last = 'cancelled',"
	    " run_at = now(), token = NULL, worker = NULL, lease_until = NULL"
	    " FROM old WHERE j.queue = $1 AND j.id = $2 RETURNING old.state";
	const char *p[2] = { pg->queue, id };
	char text[128], msg[NAME_MAX + 160];
	const char *n[1] = { msg };
	PGresult *r = pg_exec(pg, sql, 2, p);

	if (r == NULL)
		return pg_fail(pg, "cancel");
	if (PQntuples(r) == 0) {
		PQclear(r);
		return not_there(pg, id, "cancel");
	}
	snprintf(text, sizeof(text), "cancelled by `chute cancel` (uid %ld) in "
	    "%s", (long)getuid(), PQgetvalue(r, 0, 0));
	note(pg, id, text);
	snprintf(msg, sizeof(msg), "cancel %s %s", pg->queue, id);
	if (strcmp(PQgetvalue(r, 0, 0), "cur") == 0)
		pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	printf("%s %s->failed\n", id, PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

int
pgcmd_cancel(int argc, char **argv)
{
	return each_id(argc, argv, "cancel", cancel_one);
}

/* failed -> new, attempts reset, as `chute retry` does on a spool. */
static int
retry_one(struct pg *pg, const char *id)
{
	static const char sql[] =
	    "UPDATE chute.jobs SET state = 'new', attempts = 0, last = '',"
	    " run_at = now() WHERE queue = $1 AND id = $2 AND state = 'failed'";
	const char *p[2] = { pg->queue, id }, *n[1] = { pg->queue };
	char text[64];
	PGresult *r = pg_exec(pg, sql, 2, p);
	int rows;

	if (r == NULL)
		return pg_fail(pg, "retry");
	rows = atoi(PQcmdTuples(r));
	PQclear(r);
	if (rows == 0)
		return not_there(pg, id, "retry");
	snprintf(text, sizeof(text), "reset by `chute retry` (uid %ld)",
	    (long)getuid());
	note(pg, id, text);
	pg_cmd(pg, "SELECT pg_notify('" PG_CHANNEL "', $1)", 1, n);
	printf("%s failed->new\n", id);
	return 0;
}

int
pgcmd_retry(int argc, char **argv)
{
	return each_id(argc, argv, "retry", retry_one);
}

/* ---- wait ---- */

static int
wait_done(struct pg *pg, char *arr, int rc)
{
	free(arr);
	return done_with(pg, rc);
}

int
pgcmd_wait(int argc, char **argv)
{
	static const char sql[] = "SELECT id, state FROM chute.jobs"
	    " WHERE queue = $1 AND id = ANY($2::text[])";
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	msec_t timeout = -1, start = mono_ms(), nap = 50;
	struct pg pg;
	const char *p[2] = { NULL, NULL };
	char *arr;
	int rc, c;

	if ((rc = pgcmd_open(&argc, argv, "wait", &pg)) != 0)
		return done_with(&pg, rc);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if (c != 't' || dur_parse(optarg, &timeout) == -1)
			return done_with(&pg, usage_error("wait", "bad option "
			    "or --timeout value"));
	if ((rc = check_ids(argc - optind, argv + optind, "wait")) != 0)
		return done_with(&pg, rc);
	p[0] = pg.queue;
	if ((p[1] = arr = pg_text_array((const char *const *)argv + optind,
	    argc - optind)) == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		return done_with(&pg, EX_SOFTWARE);
	}
	for (;;) {
		int left = 0, failed = 0, known;
		PGresult *r;

		if ((r = pg_exec(&pg, sql, 2, p)) == NULL)
			return wait_done(&pg, arr, pg_fail(&pg, "wait"));
		known = PQntuples(r);
		for (int i = 0; i < known; i++) {
			const char *st = PQgetvalue(r, i, 1);
			left += strcmp(st, "done") != 0 && strcmp(st, "failed") != 0;
			failed += strcmp(st, "failed") == 0;
		}
		PQclear(r);
		if (known < argc - optind) {
			fprintf(stderr, "chute: unknown job among the IDs\n");
			return wait_done(&pg, arr, EXIT_NO);
		}
		if (left == 0)
			return wait_done(&pg, arr, failed ? EXIT_NO : 0);
		if (timeout >= 0 && mono_ms() - start >= timeout)
			return wait_done(&pg, arr, EXIT_TIMEOUT);
		usleep((useconds_t)nap * 1000);
		nap = nap * 2 > 1000 ? 1000 : nap * 2;
	}
}


int
pgcmd_ls(int argc, char **argv)
{
	static const char sql[] = "SELECT state, (extract(epoch FROM now() -"
	    " run_at) * 1000)::bigint, attempts, id FROM chute.jobs"
	    " WHERE queue = $1 AND ($2::text IS NULL OR state = $2)"
	    " ORDER BY run_at, id";
	struct pg pg;
	const char *p[2];
	PGresult *r;
	int rc, st;

	if ((rc = pgcmd_open(&argc, argv, "ls", &pg)) != 0)
		return done_with(&pg, rc);
	if (argc > 2 || (argc == 2 && ((st = state_from_name(argv[1])) ==
	    ST_NONE || st == ST_TMP || st == ST_LOG)))
		return done_with(&pg, usage_error("ls", "want URL and at most "
		    "one STATE"));
	p[0] = pg.queue;
	p[1] = argc == 2 ? argv[1] : NULL;
	if ((r = pg_exec(&pg, sql, 2, p)) == NULL)
		return done_with(&pg, pg_fail(&pg, "ls"));
	printf("%-7s %10s %8s  %s\n", "STATE", "AGE", "ATTEMPTS", "ID");
	for (int i = 0; i < PQntuples(r); i++) {
		msec_t age = strtoll(PQgetvalue(r, i, 1), NULL, 10);
		char a[32], v[1024];

		a[0] = '-';
		dur_format(age < 0 ? -age : age, a + (age < 0), sizeof(a) - 1);
		vis_name(PQgetvalue(r, i, 3), v, sizeof(v));
		printf("%-7s %10s %8s  %s\n", PQgetvalue(r, i, 0), a,
		    PQgetvalue(r, i, 2), v);
	}
	PQclear(r);
	return done_with(&pg, 0);
}

/*
 * stats URL: one statement, one snapshot.  Columns: the counts in new,
 * cur, defer, done, failed (listing_states' order), then the SC_* below.
 * A job in cur whose lease has run out belongs to a worker that died or
 * lost the database, and waits for recovery: it is not running.  Workers
 * are counted by their sessions (pg_connect names a worker's
 * chute-worker), as the server knows no other list of them, nor which
 * queue a session serves.  There is no longest running time: the schema
 * keeps no start of an attempt (a claim leaves run_at alone, a renewal
 * moves lease_until, the log arrives with the outcome).
 */
enum { SC_OLDEST = LISTING_NSTATES, SC_RUNNING, SC_CLAIMING, SC_CONNECTED };

static const char stats_sql[] = "SELECT"
    " count(*) FILTER (WHERE state = 'new'),"
    " count(*) FILTER (WHERE state = 'cur'),"
    " count(*) FILTER (WHERE state = 'defer'),"
    " count(*) FILTER (WHERE state = 'done'),"
    " count(*) FILTER (WHERE state = 'failed'),"
    " greatest(0, coalesce(extract(epoch FROM now() -"
    "  min(run_at) FILTER (WHERE state = 'new'))::float8, 0)),"
    " count(*) FILTER (WHERE state = 'cur' AND lease_until > now()),"
    " count(DISTINCT worker) FILTER (WHERE state = 'cur'"
    "  AND lease_until > now()),"
    " (SELECT count(*) FROM pg_stat_activity"
    "  WHERE datname = current_database()"
    "  AND application_name = 'chute-worker')"
    " FROM chute.jobs WHERE queue = $1";

static double
stats_col(PGresult *r, int col)
{
	return strtod(PQgetvalue(r, 0, col), NULL);
}

static void
stats_prometheus(PGresult *r, const char *queue)
{
	struct prom_stats p = { .label = "queue", .name = queue };

	for (int i = 0; i < LISTING_NSTATES; i++)
		p.jobs[i] = stats_col(r, i);
	p.v[PM_OLDEST] = stats_col(r, SC_OLDEST);
	p.v[PM_RUNNING] = stats_col(r, SC_RUNNING);
	p.v[PM_CLAIMING] = stats_col(r, SC_CLAIMING);
	p.v[PM_CONNECTED] = stats_col(r, SC_CONNECTED);
	p.v[PM_TIME] = now_ms() / 1000.0;
	p.has[PM_OLDEST] = p.has[PM_RUNNING] = p.has[PM_CLAIMING] = true;
	p.has[PM_CONNECTED] = p.has[PM_TIME] = true;
	prom_print(&p);
}

static void
stats_text(PGresult *r)
{
	char age[32] = "-";

	for (int i = 0; i < LISTING_NSTATES; i++)
		printf("%-17s %s\n", state_names[listing_states[i]],
		    PQgetvalue(r, 0, i));
	if (stats_col(r, 0) > 0)
		dur_format((msec_t)(stats_col(r, SC_OLDEST) * 1000), age,
		    sizeof(age));
	printf("%-17s %s\n%-17s %s\n%-17s %s\n%-17s %s\n",
	    "oldest_queued_age", age, "running", PQgetvalue(r, 0, SC_RUNNING),
	    "workers", PQgetvalue(r, 0, SC_CLAIMING), "workers_connected",
	    PQgetvalue(r, 0, SC_CONNECTED));
}

int
pgcmd_stats(int argc, char **argv)
{
	const char *p[1];
	struct pg pg;
	PGresult *r;
	bool prom;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "stats", &pg)) != 0)
		return done_with(&pg, rc);
	prom = argc == 2 && strcmp(argv[1], "--prometheus") == 0;
	if (argc > 2 || (argc == 2 && !prom))
		return done_with(&pg, usage_error("stats", "want URL "
		    "[--prometheus]"));
	p[0] = pg.queue;
	if ((r = pg_exec(&pg, stats_sql, 1, p)) == NULL)
		return done_with(&pg, pg_fail(&pg, "stats"));
	if (prom)
		stats_prometheus(r, pg.queue);
	else
		stats_text(r);
	PQclear(r);
	return done_with(&pg, 0);
}

/* ---- log ---- */

/* 1 if the job is there, 0 if not, -1 on error. */
static int
job_exists(struct pg *pg, const char *id)
{
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, "SELECT 1 FROM chute.jobs WHERE queue = $1"
	    " AND id = $2", 2, p);
	int n;

	if (r == NULL)
		return -1;
	n = PQntuples(r);
	PQclear(r);
	return n > 0;
}

int
pgcmd_log(int argc, char **argv)
{
	static const char sql[] = "SELECT body FROM chute.logs"
	    " WHERE queue = $1 AND id = $2 ORDER BY seq";
	const char *p[2];
	struct pg pg;
	PGresult *r;
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "log", &pg)) != 0)
		return done_with(&pg, rc);
	if (argc != 2)
		return done_with(&pg, usage_error("log", "want URL and one ID"));
	if ((rc = check_ids(1, argv + 1, "log")) != 0)
		return done_with(&pg, rc);
	p[0] = pg.queue;
	p[1] = argv[1];
	r = PQexecParams(pg.conn, sql, 2, NULL, p, NULL, NULL, 1);
	if (pg_result(&pg, r) != PGRES_TUPLES_OK) {
		PQclear(r);
		return done_with(&pg, pg_fail(&pg, "log"));
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		/* No log yet is fine for a job that has not run. */
		if ((rc = job_exists(&pg, argv[1])) == -1)
			return done_with(&pg, pg_fail(&pg, "log"));
		if (rc == 0)
			fprintf(stderr, "chute: %s: unknown job\n", argv[1]);
		return done_with(&pg, rc == 1 ? 0 : EXIT_NO);
	}
	for (int i = 0; i < PQntuples(r); i++)
		if (cmd_write_log(PQgetvalue(r, i, 0),
		    (size_t)PQgetlength(r, i, 0)) == -1) {
			rc = EX_IOERR;
			break;
		}
	PQclear(r);
	return done_with(&pg, rc);
}

/* ---- purge ---- */

int
pgcmd_purge(int argc, char **argv)
{
	static const char sql[] =
	    "WITH gone AS (DELETE FROM chute.jobs WHERE queue = $1"
	    " AND state IN ('done', 'failed') AND ($3::text IS NULL OR state = $3)"
	    " AND run_at < now() - $2::bigint * interval '1 millisecond'"
	    " RETURNING id),"
	    " p AS (DELETE FROM chute.payloads WHERE queue = $1"
	    " AND id IN (SELECT id FROM gone)),"
	    " l AS (DELETE FROM chute.logs WHERE queue = $1"
	    " AND id IN (SELECT id FROM gone))"
	    " SELECT count(*) FROM gone";
	static const struct option longopts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *p[3];
	char age[24];
	msec_t older = -1;
	struct pg pg;
	PGresult *r;
	int rc, c;

	if ((rc = pgcmd_open(&argc, argv, "purge", &pg)) != 0)
		return done_with(&pg, rc);
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'o' && dur_parse(optarg, &older) == 0)
			continue;
		if (c == 's' && (strcmp(optarg, "done") == 0 ||
		    strcmp(optarg, "failed") == 0)) {
			state = optarg;
			continue;
		}
		return done_with(&pg, usage_error("purge", "bad option or "
		    "value"));
	}
	if (older < 0)
		return done_with(&pg, usage_error("purge", "--older-than DUR "
		    "is required"));
	snprintf(age, sizeof(age), "%lld", (long long)older);
	p[0] = pg.queue;
	p[1] = age;
	p[2] = state;
	if ((r = pg_exec(&pg, sql, 3, p)) == NULL)
		return done_with(&pg, pg_fail(&pg, "purge"));
	printf("purged %s\n", PQgetvalue(r, 0, 0));
	PQclear(r);
	return done_with(&pg, 0);
}
