/*
 * check_metrics.c: `chute stats --prometheus` of a spool and of a
 * postgresql:// queue, with jobs in every state: the output passes
 * `promtool check metrics` (Debian's prometheus package), and its values
 * are those the test made: the oldest job's age, the one handler it keeps
 * blocked on a FIFO, the owner or worker it starts and kills.  Where
 * promtool is missing, one line says so and only its check is skipped;
 * where PostgreSQL is missing, t_pg_skip() says so.
 */
#include <sys/stat.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"
#include "t_pg.h"

static char *uri;		/* the PostgreSQL test's database */

/*
 * The handler: "ok" exits 0, "bad" exits 1, anything else records its
 * start and blocks until the test writes a line into root/fifo.
 */
static const char *
h_fifo(void)
{
	return t_handler("h_fifo",
	    "read -r what\n"
	    "case $what in ok) exit 0 ;; bad) exit 1 ;; esac\n"
	    "echo $$ >> \"$R/hpids\"\n"
	    "echo \"$CHUTE_ID\" >> \"$R/started\"\n"
	    "read -r line < \"$R/fifo\"\n");
}

/* Has the blocking handler of h_fifo started for id? */
static bool
started(const char *id)
{
	char *text = t_slurp(RP("started"));
	bool yes = text != NULL && t_line_of(text, id) != NULL;

	free(text);
	return yes;
}

/* Let the blocked handler go: a line into the FIFO, once it reads it. */
static void
release_fifo(void)
{
	int fd = -1;

	/* ENXIO: no reader has the FIFO open yet. */
	WAIT_UNTIL((fd = open(RP("fifo"), O_WRONLY | O_NONBLOCK | O_CLOEXEC))
	    != -1 || errno != ENXIO, 10000, "no handler opened the FIFO");
	EXPECT(fd != -1, "open the FIFO: %s", strerror(errno));
	EXPECT(write(fd, "go\n", 3) == 3, "write the FIFO: %s", strerror(errno));
	close(fd);
}

/* ---- promtool ---- */

/* promtool's path, or NULL; the first miss prints one line. */
static const char *
promtool(void)
{
	static char path[PATH_MAX];
	static bool said;
	const char *env = getenv("PATH");
	char *dirs = strdup(env != NULL ? env : "/usr/bin:/bin");

	path[0] = '\0';
	for (char *d = strtok(dirs, ":"); d != NULL; d = strtok(NULL, ":")) {
		snprintf(path, sizeof(path), "%s/promtool", d);
		if (access(path, X_OK) == 0)
			break;
		path[0] = '\0';
	}
	free(dirs);
	if (path[0] == '\0' && !said) {
		fprintf(stderr, "check_metrics: skipping promtool check metrics:"
		    " no promtool in PATH (apt-get install prometheus)\n");
		said = true;
	}
	return path[0] != '\0' ? path : NULL;
}

/* `promtool check metrics` must accept text: no problem, no lint. */
static void
expect_promtool_accepts(const char *text)
{
	const char *tool = promtool();
	char *said;
	pid_t pid;
	int code;

	if (tool == NULL)
		return;
	t_write(RP("metrics.prom"), text);
	pid = t_spawn((const char *const[]){ tool, "check", "metrics", NULL },
	    RP("metrics.prom"), RP("promtool.out"), RP("promtool.out"), NULL);
	code = t_reap(pid, 20000, "promtool check metrics");
	said = t_slurp(RP("promtool.out"));
	EXPECT(code == 0 && said != NULL && said[0] == '\0', "promtool check "
	    "metrics exited %d: %s\non:\n%s", code, t_snip(said), t_snip(text));
	free(said);
}

/* ---- reading the output ---- */

/* The value of the sample "series value" in text; fails if it is absent. */
static double
sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p != NULL && *p != '\0'; ) {
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		p = p != NULL ? p + 1 : NULL;
	}
	EXPECT(0, "no sample %s in:\n%s", series, t_snip(text));
	return -1;
}

/* Has text a sample of the metric name at all? */
static bool
has_metric(const char *text, const char *name)
{
	return strstr(text, P("\n%s{", name)) != NULL;
}

/* chute_jobs{LABEL,state="..."}: each of the five states must hold n. */
static void
expect_one_per_state(const char *text, const char *label)
{
	static const char *const states[] = {
		"new", "cur", "defer", "done", "failed",
	};

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		EXPECT(sample(text, P("chute_jobs{%s,state=\"%s\"}", label,
		    states[i])) == 1, "one job in %s expected:\n%s", states[i],
		    t_snip(text));
}

/* Every metric name in text has its HELP and TYPE lines before it. */
static void
expect_help_and_type(const char *text)
{
	for (int i = 0; i < t_nlines(text); i++) {
		char *l = t_line(text, i), name[128];

		if (l[0] == '#' || sscanf(l, "%127[^{ ]", name) != 1)
			continue;
		EXPECT(strstr(text, P("# HELP %s ", name)) != NULL &&
		    strstr(text, P("# TYPE %s gauge\n", name)) != NULL,
		    "%s has no HELP or TYPE:\n%s", name, t_snip(text));
	}
}

/* ---- a spool ---- */

static void
spool_setup(void)
{
	t_cli_setup();
	EXPECT(mkfifo(RP("fifo"), 0600) == 0, "mkfifo: %s", strerror(errno));
}

/* chute stats SPOOL --prometheus; the output, checked by promtool. */
static const char *
spool_stats(void)
{
	int code = CHUTE("stats", T.spool, "--prometheus");

	EXPECT(code == 0, "stats --prometheus exited %d: %s", code, T.err);
	expect_promtool_accepts(T.out);
	expect_help_and_type(T.out);
	return T.out;
}

/*
 * One job in each state: done and failed first, then one that blocks on
 * the FIFO (cur), then one in new/ whose mtime says two minutes old (the
 * only slot is busy), and one deferred by an hour.
 */
static pid_t
spool_in_every_state(int64_t *before_block, int64_t *seen)
{
	pid_t owner = OWNER(QUICK, "-j", "1", "--", h_fifo());

	t_await_lock(owner, 10000);
	t_submit_as("ok", "ok\n");
	t_submit_as("bad", "bad\n");
	EXPECT(t_await("ok", 20000) == 0 && t_await("bad", 20000) == 1,
	    "ok and bad did not end in done and failed");
	*before_block = t_now();
	t_submit_as("block", "block\n");
	WAIT_UNTIL(started("block"), 10000, "the blocking handler did not start");
	*seen = t_now();
	t_submit_as("queued", "queued\n");
	t_set_mtime(SP("new", "queued"), t_now() - 120000);
	EXPECT(CHUTE("submit", T.spool, "--id", "later", "--delay", "1h") == 0,
	    "submit --delay: %s", T.err);
	return owner;
}

START_TEST(test_spool_metrics_pass_promtool_and_say_what_the_spool_holds)
{
	int64_t before_block, seen, before, after;
	pid_t owner = spool_in_every_state(&before_block, &seen);
	const char *out;
	char l[2048];

	snprintf(l, sizeof(l), "spool=\"%s\"", T.spool);
	before = t_now();
	out = spool_stats();
	after = t_now();
	expect_one_per_state(out, l);
	EXPECT(sample(out, P("chute_oldest_queued_seconds{%s}", l)) >= 120.0,
	    "the oldest queued job is 2 minutes old:\n%s", out);
	EXPECT(sample(out, P("chute_jobs_running{%s}", l)) == 1,
	    "one handler is blocked:\n%s", out);
	/* It started after before_block, and before we saw it had (seen). */
	double run = sample(out, P("chute_longest_running_seconds{%s}", l));
	EXPECT(run >= (before - seen) / 1000.0 - 0.001 &&
	    run <= (after - before_block) / 1000.0 + 0.001,
	    "longest running %.3f s, not within [%.3f, %.3f]", run,
	    (before - seen) / 1000.0, (after - before_block) / 1000.0);
	EXPECT(sample(out, P("chute_owner_up{%s}", l)) == 1 &&
	    sample(out, P("chute_owner_pid{%s}", l)) == owner,
	    "owner %d is up:\n%s", (int)owner, out);
	double at = sample(out, P("chute_stats_timestamp_seconds{%s}", l));
	EXPECT(at >= (before / 1000) && at <= after / 1000.0 + 0.001,
	    "scrape time %.3f not within [%lld, %lld] ms", at,
	    (long long)before, (long long)after);
	EXPECT(!has_metric(out, "chute_workers_connected") &&
	    !has_metric(out, "chute_workers_alive"),
	    "a spool has no workers:\n%s", out);
	EXPECT(sample(out, P("chute_paused{%s}", l)) == 0, "not paused:\n%s",
	    out);
	EXPECT(CHUTE("pause", T.spool) == 0, "pause: %s", T.err);
	out = spool_stats();
	EXPECT(sample(out, P("chute_paused{%s}", l)) == 1, "paused:\n%s", out);
	EXPECT(CHUTE("resume", T.spool) == 0, "resume: %s", T.err);

	/* A killed owner: its job stays in cur/, but nothing runs it. */
	kill(owner, SIGKILL);
	t_reap(owner, 5000, "owner after SIGKILL");
	out = spool_stats();
	EXPECT(sample(out, P("chute_jobs{%s,state=\"cur\"}", l)) == 1 &&
	    sample(out, P("chute_jobs_running{%s}", l)) == 0 &&
	    sample(out, P("chute_longest_running_seconds{%s}", l)) == 0 &&
	    sample(out, P("chute_owner_up{%s}", l)) == 0 &&
	    sample(out, P("chute_owner_pid{%s}", l)) == 0,
	    "a dead owner's job is not running:\n%s", out);
}
END_TEST

START_TEST(test_text_stats_show_the_running_job)
{
	int64_t before_block, seen;
	pid_t owner = spool_in_every_state(&before_block, &seen);

	EXPECT(CHUTE("stats", T.spool) == 0, "stats: %s", T.err);
	EXPECT(t_token(t_line_of(T.out, "running"), "1") &&
	    !t_token(t_line_of(T.out, "longest_running"), "-"),
	    "stats shows one job running, for a time:\n%s", T.out);
	release_fifo();
	EXPECT(t_await("block", 20000) == 0, "block did not finish");
	EXPECT(t_stop(owner) == 0, "owner did not stop cleanly");
	EXPECT(CHUTE("stats", T.spool) == 0 && t_token(t_line_of(T.out,
	    "running"), "0") && t_token(t_line_of(T.out, "longest_running"),
	    "-"), "nothing runs any more:\n%s", T.out);
}
END_TEST

/*
 * A label value is UTF-8 with \, " and newline escaped; a path need not
 * be UTF-8, and its other bytes become '?'.
 */
START_TEST(test_an_odd_spool_path_is_escaped_into_a_valid_label)
{
	char odd[2048];
	int code;

	snprintf(odd, sizeof(odd), "%s/say \"hi\"\\\nthere-\xff-\xc3\xa9",
	    T.root);

	EXPECT(CHUTE("init", odd) == 0, "init %s: %s", odd, T.err);
	code = CHUTE("stats", odd, "--prometheus");
	EXPECT(code == 0, "stats exited %d: %s", code, T.err);
	expect_promtool_accepts(T.out);
	EXPECT(strstr(T.out, P("chute_owner_up{spool=\"%s/say \\\"hi\\\"\\\\\\n"
	    "there-?-\xc3\xa9\"} 0\n", T.root)) != NULL,
	    "the label is not escaped:\n%s", T.out);
}
END_TEST

/* ---- contrib/chute-metrics.sh, the textfile collector's writer ---- */

static pid_t pid_sh;	/* the last chute-metrics.sh, for its output */

/* contrib/chute-metrics.sh SPOOL into root/textfile; its exit status. */
static int
metrics_sh(const char *spool)
{
	const char *src = getenv("CHUTE_SRCDIR");
	char script[PATH_MAX], env_bin[PATH_MAX + 8], env_dir[PATH_MAX + 32];

	/* make check runs us from the top of the tree. */
	snprintf(script, sizeof(script), "%s/contrib/chute-metrics.sh",
	    src != NULL ? src : ".");
	EXPECT(access(script, R_OK) == 0, "%s: %s (set CHUTE_SRCDIR)", script,
	    strerror(errno));
	snprintf(env_bin, sizeof(env_bin), "CHUTE=%s", T.bin);
	snprintf(env_dir, sizeof(env_dir), "CHUTE_METRICS_DIR=%s",
	    RP("textfile"));
	pid_sh = t_spawn((const char *const[]){ "/usr/bin/env", env_bin,
	    env_dir, "/bin/sh", script, spool, NULL }, NULL, RP("sh.out"),
	    RP("sh.out"), NULL);
	return t_reap(pid_sh, 20000, "chute-metrics.sh");
}

/*
 * The file appears whole under its name, nothing else is left in the
 * directory, and a spool that cannot be read writes nothing.
 */
/*
 * The keys in use: 150 keys, at most 100 shown (the most waiting first),
 * chute_keys says 150, a key's limit where a rule bounds it.
 */
START_TEST(test_spool_metrics_show_at_most_100_keys)
{
	char name[64], *l;
	int shown = 0;

	EXPECT(CHUTE("limit", T.spool, "--key", "k000", "--max", "2") == 0,
	    "limit: %s", T.err);
	for (int i = 0; i < 150; i++) {
		snprintf(name, sizeof(name), "j%03d,k=k%03d", i, i);
		t_drop(name, "x\n");
	}
	/* k149 waits most: two more jobs. */
	t_drop("more1,k=k149", "x\n");
	t_drop("more2,k=k149", "x\n");
	EXPECT(CHUTE("stats", T.spool, "--prometheus") == 0, "stats: %s",
	    T.err);
	expect_promtool_accepts(T.out);
	for (int i = 0; (l = t_line(T.out, i)) != NULL; i++)
		if (strncmp(l, "chute_key_waiting{", 18) == 0)
			shown++;
	EXPECT(shown == 100, "%d keys shown", shown);
	EXPECT(strstr(T.out, P("chute_keys{spool=\"%s\"} 150\n", T.spool)) !=
	    NULL, "chute_keys: %s", t_snip(T.out));
	EXPECT(strstr(T.out, "key=\"k149\"} 3\n") != NULL, "k149 first");
	EXPECT(strstr(T.out, P("chute_key_limit{spool=\"%s\",key=\"k000\"} "
	    "2\n", T.spool)) != NULL, "k000's limit: %s", t_snip(T.out));
}
END_TEST

/*
 * The schedules (issue 37), on either store: "slow" every hour, never
 * ticked (its next tick the hour after its declaration, no last tick);
 * "fast" every 100 ms, ticked by `chute tick` (polled until one was
 * made): its next tick 100 ms after its last.  In promtool's format and
 * as text; chute_schedules says 2.
 */
static void
expect_schedules(const char *store, const char *given)
{
	char label[PATH_MAX + 32], slow[PATH_MAX + 64], fast[PATH_MAX + 64];
	int64_t before = t_now(), after;
	double next, last;
	char *text;
	int code;

	/* Kept: P's buffers are a ring. */
	snprintf(label, sizeof(label), "%s", given);
	snprintf(slow, sizeof(slow), "{%s,schedule=\"slow\"}", label);
	snprintf(fast, sizeof(fast), "{%s,schedule=\"fast\"}", label);
	EXPECT(CHUTE("schedule", store, "slow", "--every", "1h", "--", "x")
	    == 0 && CHUTE("schedule", store, "fast", "--every", "100ms", "--",
	    "y") == 0, "schedule: %s", T.err);
	after = t_now();
	EXPECT(CHUTE("stats", store, "--prometheus") == 0, "stats: %s", T.err);
	expect_promtool_accepts(T.out);
	expect_help_and_type(T.out);
	EXPECT(!has_metric(T.out, "chute_schedule_last_tick_seconds"),
	    "no tick made yet, no last tick:\n%s", t_snip(T.out));
	next = sample(T.out, P("chute_schedule_next_tick_seconds%s", slow));
	EXPECT((int64_t)next % 3600 == 0 && next * 1000 > before &&
	    next * 1000 <= after + 3600000, "slow's next tick %.3f: the hour "
	    "after [%lld, %lld] ms", next, (long long)before,
	    (long long)after);
	EXPECT(sample(T.out, P("chute_schedule_interval_seconds%s", slow)) ==
	    3600 && sample(T.out, P("chute_schedule_interval_seconds%s", fast))
	    == 0.1, "the intervals:\n%s", t_snip(T.out));
	EXPECT(sample(T.out, P("chute_schedules{%s}", label)) == 2,
	    "chute_schedules");
	WAIT_UNTIL((code = CHUTE("tick", store)) == 0 &&
	    CHUTE("stats", store, "--prometheus") == 0 &&
	    has_metric(T.out, "chute_schedule_last_tick_seconds"), 10000,
	    "chute tick made no tick of fast (%d): %s", code, T.err);
	expect_promtool_accepts(T.out);
	expect_help_and_type(T.out);
	last = sample(T.out, P("chute_schedule_last_tick_seconds%s", fast));
	next = sample(T.out, P("chute_schedule_next_tick_seconds%s", fast));
	EXPECT(last * 1000 >= before && (long long)(next * 1000 + 0.5) ==
	    (long long)(last * 1000 + 0.5) + 100, "fast: last %.3f, next %.3f", last,
	    next);
	EXPECT(CHUTE("stats", store) == 0, "stats: %s", T.err);
	text = strstr(T.out, "\nschedule          fast every=100ms next=");
	EXPECT(text != NULL && strstr(text, " last=20") != NULL &&
	    strstr(T.out, "\nschedule          slow every=1h0m next=") !=
	    NULL && strstr(T.out, ":00:00.000Z last=-\n") != NULL,
	    "text stats:\n%s", t_snip(T.out));
}

START_TEST(test_spool_metrics_show_the_schedules_next_and_last_tick)
{
	expect_schedules(T.spool, P("spool=\"%s\"", T.spool));
}
END_TEST

START_TEST(test_chute_metrics_sh_writes_one_whole_file_per_spool)
{
	char *text;
	int code;

	EXPECT(mkdir(RP("textfile"), 0755) == 0, "mkdir: %s", strerror(errno));
	code = metrics_sh(T.spool);
	EXPECT(code == 0, "chute-metrics.sh exited %d: %s", code,
	    t_log_of(pid_sh));
	text = t_slurp(RP("textfile/chute-spool.prom"));
	EXPECT(text != NULL && t_entries(RP("textfile")) == 1, "expected only "
	    "textfile/chute-spool.prom, found %d entries", t_entries(RP("textfile")));
	expect_promtool_accepts(text);
	EXPECT(strstr(text, P("chute_owner_up{spool=\"%s\"} 0\n", T.spool)) !=
	    NULL, "the file is not this spool's stats:\n%s", t_snip(text));
	free(text);

	code = metrics_sh(RP("gone"));
	EXPECT(code != 0 && t_entries(RP("textfile")) == 1, "a missing spool: "
	    "exit %d, %d entries (a temporary file left?)", code,
	    t_entries(RP("textfile")));
}
END_TEST

/* ---- a postgresql:// queue ---- */

static void
cluster_up(void)
{
	ck_assert_msg(t_pg_start() == 0, "%s", t_pg_skip_reason());
}

static void
pg_setup(void)
{
	spool_setup();
	uri = t_pg_newdb();
	EXPECT(CHUTE("init", uri) == 0, "chute init: %s", T.err);
}

static void
pg_teardown(void)
{
	t_cli_teardown();
	free(uri);
}

static void
psql(const char *q)
{
	EXPECT(t_pg_sql(uri, q, NULL, 0) == 0, "psql %s: %s", q, t_pg_error());
}

static long
psql_n(const char *q)
{
	char out[64];

	EXPECT(t_pg_sql(uri, q, out, sizeof(out)) == 0, "psql %s: %s", q,
	    t_pg_error());
	return atol(out);
}

static void
pg_submit(const char *id, const char *content)
{
	const char *in = RP(P("in.%s", id));

	t_write(in, content);
	EXPECT(CHUTE_IN(in, "submit", uri, "--id", id) == 0, "submit %s: %s",
	    id, T.err);
}

static const char *
pg_stats(void)
{
	int code = CHUTE("stats", uri, "--prometheus");

	EXPECT(code == 0, "stats URL --prometheus exited %d: %s", code, T.err);
	expect_promtool_accepts(T.out);
	expect_help_and_type(T.out);
	return T.out;
}

/*
 * done and failed by a drained worker; then a worker with one slot, which
 * claims only for a free slot, runs "block": "queued" stays new.
 */
static pid_t
pg_in_every_state(void)
{
	pid_t w;

	pg_submit("ok", "ok\n");
	pg_submit("bad", "bad\n");
	EXPECT(t_reap(t_owner(NULL, uri, "--drain", "-j", "1", "--", h_fifo(),
	    (const char *)NULL), 30000, "drain") == 0, "drain");
	pg_submit("block", "block\n");
	w = t_owner(NULL, uri, "-j", "1", "--lease", "2s", "--", h_fifo(),
	    (const char *)NULL);
	WAIT_UNTIL(started("block"), 20000, "the blocking handler did not start");
	pg_submit("queued", "queued\n");
	psql("UPDATE chute.live SET run_at = now() - interval '120 seconds'"
	    " WHERE id = 'queued'");
	EXPECT(CHUTE("submit", uri, "--id", "later", "--delay", "1h") == 0,
	    "submit --delay: %s", T.err);
	return w;
}

START_TEST(test_queue_metrics_pass_promtool_and_say_what_the_queue_holds)
{
	const char *out, *l = "queue=\"default\"";
	int64_t before, after;
	pid_t w = pg_in_every_state();

	before = t_now();
	out = pg_stats();
	after = t_now();
	expect_one_per_state(out, l);
	EXPECT(sample(out, P("chute_oldest_queued_seconds{%s}", l)) >= 120.0,
	    "the oldest queued job is 2 minutes old:\n%s", out);
	EXPECT(sample(out, P("chute_jobs_running{%s}", l)) == 1 &&
	    sample(out, P("chute_workers_claiming{%s}", l)) == 1 &&
	    sample(out, P("chute_workers_connected{%s}", l)) == 1 &&
	    sample(out, P("chute_workers_alive{%s}", l)) == 1 &&
	    sample(out, P("chute_paused{%s}", l)) == 0,
	    "one worker runs one job, not paused:\n%s", out);
	double at = sample(out, P("chute_stats_timestamp_seconds{%s}", l));
	EXPECT(at >= (before / 1000) && at <= after / 1000.0 + 0.001,
	    "scrape time %.3f not within [%lld, %lld] ms", at,
	    (long long)before, (long long)after);
	EXPECT(!has_metric(out, "chute_owner_up") &&
	    !has_metric(out, "chute_longest_running_seconds"),
	    "a queue has no owner and keeps no start times:\n%s", out);

	/*
	 * A killed worker: the server ends its session; its claim holds
	 * until its lease (2 s) runs out, and then nothing runs the job.
	 * Waited for through psql (each chute is a process of the test's 32).
	 */
	kill(w, SIGKILL);
	t_reap(w, 5000, "worker after SIGKILL");
	WAIT_UNTIL(psql_n("SELECT count(*) FROM pg_stat_activity WHERE"
	    " application_name = 'chute-worker'") == 0, 10000,
	    "the killed worker's session stayed");
	WAIT_UNTIL(psql_n("SELECT count(*) FROM chute.jobs WHERE"
	    " lease_until > now()") == 0, 10000, "the lease did not run out");
	out = pg_stats();
	EXPECT(sample(out, P("chute_jobs{%s,state=\"cur\"}", l)) == 1 &&
	    sample(out, P("chute_jobs_running{%s}", l)) == 0 &&
	    sample(out, P("chute_workers_claiming{%s}", l)) == 0 &&
	    sample(out, P("chute_workers_connected{%s}", l)) == 0 &&
	    sample(out, P("chute_workers_alive{%s}", l)) == 0,
	    "the job waits in cur for recovery, run by no one:\n%s", out);
	EXPECT(CHUTE("pause", uri) == 0, "pause: %s", T.err);
	out = pg_stats();
	EXPECT(sample(out, P("chute_paused{%s}", l)) == 1, "paused:\n%s", out);
}
END_TEST

START_TEST(test_queue_metrics_show_the_schedules_next_and_last_tick)
{
	expect_schedules(uri, "queue=\"default\"");
}
END_TEST

Suite *
metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc;

	tc = t_tcase(spool_setup, t_cli_teardown, "spool", 60);
	tcase_add_test(tc, test_spool_metrics_pass_promtool_and_say_what_the_spool_holds);
	tcase_add_test(tc, test_text_stats_show_the_running_job);
	tcase_add_test(tc, test_an_odd_spool_path_is_escaped_into_a_valid_label);
	tcase_add_test(tc, test_chute_metrics_sh_writes_one_whole_file_per_spool);
	tcase_add_test(tc, test_spool_metrics_show_at_most_100_keys);
	tcase_add_test(tc, test_spool_metrics_show_the_schedules_next_and_last_tick);
	suite_add_tcase(s, tc);
	if (t_pg_skip())
		return s;
	tc = t_tcase(pg_setup, pg_teardown, "queue", 120);
	tcase_add_unchecked_fixture(tc, cluster_up, t_pg_stop);
	tcase_add_test(tc, test_queue_metrics_pass_promtool_and_say_what_the_queue_holds);
	tcase_add_test(tc, test_queue_metrics_show_the_schedules_next_and_last_tick);
	suite_add_tcase(s, tc);
	return s;
}
