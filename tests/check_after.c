/*
 * check_after.c: dependencies and batches (issue 37), end to end: a batch
 * of 1,000 jobs and a final job submitted --after all of them runs once,
 * after all, while its owner is killed -9 twice and started again; a job
 * waited for that fails fails its dependents naming it (and a chain of
 * them), or lets them run with --after-failed run; a job finished before
 * the submit counts at once; cancel of a waiting job and of a job waited
 * for; retry of a dependent; unknown IDs and bad lists refused with one
 * line and nothing written; on a spool and in a real PostgreSQL queue,
 * whose workers are killed -9 meanwhile.
 */
#include <sys/stat.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"

#define NBATCH	1000

/* Records "ID ATTEMPT" in the journal; a job whose ID starts bad fails. */
static const char *
h_order(void)
{
	return t_handler("h_order",
	    "cat > /dev/null\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "case $CHUTE_ID in bad*) exit 1;; esac\n");
}

/* The journal's line number (0 first) of id's first start; -1 none. */
static int
first_line(char *const *lines, int n, const char *id)
{
	size_t l = strlen(id);

	for (int i = 0; i < n; i++)
		if (strncmp(lines[i], id, l) == 0 && lines[i][l] == ' ')
			return i;
	return -1;
}

/* The journal split into lines (*n of them); free(*text) after. */
static char **
journal_lines(char **text, int *n)
{
	char **v = NULL, *p, *save = NULL;

	*n = 0;
	*text = t_slurp(RP("journal"));
	EXPECT(*text != NULL, "no journal");
	for (p = strtok_r(*text, "\n", &save); p; p = strtok_r(NULL, "\n",
	    &save)) {
		v = realloc(v, sizeof(*v) * (size_t)(*n + 1));
		v[(*n)++] = p;
	}
	return v;
}

static int
count_entries(const char *dir)
{
	return t_entries(P("%s/%s", T.spool, dir));
}

/* 1,000 jobs into store in one submit, their IDs into root/ids; then
 * the final job --after-file them. */
static void
submit_batch(const char *store)
{
	char *text;
	FILE *argf;
	int code;

	argf = fopen(RP("batch.sh"), "we");
	EXPECT(argf != NULL, "batch.sh");
	fprintf(argf, "#!/bin/sh\nset -e\ncd '%s'\nmkdir -p in\n"
	    "i=0; while [ $i -lt %d ]; do echo $i > in/$i; i=$((i+1)); done\n"
	    "'%s' submit '%s' in/* > ids\n", T.root, NBATCH, T.bin, store);
	fclose(argf);
	EXPECT(system(P("sh '%s'", RP("batch.sh"))) == 0, "the batch");
	text = t_slurp(RP("ids"));
	EXPECT(text && t_nlines(text) == NBATCH, "%d IDs printed",
	    text ? t_nlines(text) : -1);
	free(text);
	t_write(RP("final.in"), "final\n");
	code = CHUTE("submit", store, "--id", "final", "--after-file",
	    RP("ids"), RP("final.in"));
	EXPECT(code == 0 && strcmp(T.out, "final\n") == 0, "final: %d %s",
	    code, T.err);
	EXPECT(CHUTE("status", store, "final") == 0 && strstr(T.out,
	    " wait ") && strstr(T.out, ",+997"), "status: %s", T.out);
}

/* Every job of the batch started before the final, which started once. */
static void
expect_final_last(void)
{
	char *text, **lines, ids[64];
	int n, last = -1, fin;

	lines = journal_lines(&text, &n);
	char *idtext = t_slurp(RP("ids"));
	for (int i = 0; i < NBATCH; i++) {
		char *l = t_line(idtext, i);
		int at;

		snprintf(ids, sizeof(ids), "%.*s", (int)strcspn(l, "\n"), l);
		at = first_line(lines, n, ids);
		EXPECT(at >= 0, "%s never ran", ids);
		if (at > last)
			last = at;
	}
	fin = first_line(lines, n, "final");
	EXPECT(fin > last, "final started at line %d, the batch's last at %d",
	    fin, last);
	EXPECT(t_journal_count("final") == 1, "final ran %d times",
	    t_journal_count("final"));
	free(lines);
	free(text);
	free(idtext);
}

START_TEST(test_a_batch_of_1000_then_one_final_job_runs_once_after_all)
{
	int kills = 0;
	pid_t owner;

	submit_batch(T.spool);
	EXPECT(t_exists(SP("wait", "final")) && t_exists(P("%s/after/final",
	    T.spool)), "final waits, its list beside it");
	/* Killed -9 twice while the batch runs, then let drain. */
	for (int at = 300; at <= 700; at += 400) {
		owner = OWNER("-j", "4", "--", h_order());
		WAIT_UNTIL(t_journal_total() >= at, 60000, "%d started",
		    at);
		EXPECT(kill(owner, SIGKILL) == 0, "kill -9");
		t_reap(owner, 10000, "the killed owner");
		kills++;
		EXPECT(t_exists(SP("wait", "final")), "final still waits "
		    "after kill %d", kills);
	}
	EXPECT(DRAIN("-j", "4", "--", h_order()) == 0, "drain");
	expect_final_last();
	EXPECT(t_exists(SP("done", "final")), "final done");
	EXPECT(count_entries("wait") == 0, "wait/ empty");
}
END_TEST

START_TEST(test_a_failed_dependency_fails_its_dependents_or_lets_them_run)
{
	char *st;

	t_submit_as("bad1", "x\n");
	t_submit_as("ok1", "x\n");
	t_write(RP("in"), "w\n");
	EXPECT(CHUTE("submit", T.spool, "--id", "w1", "--after", "bad1,ok1",
	    RP("in")) == 0, "w1: %s", T.err);
	EXPECT(CHUTE("submit", T.spool, "--id", "w2", "--after", "bad1",
	    "--after-failed", "run", RP("in")) == 0, "w2: %s", T.err);
	/* A chain: w3 waits for w1, which will fail. */
	EXPECT(CHUTE("submit", T.spool, "--id", "w3", "--after", "w1",
	    RP("in")) == 0, "w3: %s", T.err);
	EXPECT(DRAIN("--", h_order()) == 0, "drain");
	st = t_status("w1");
	EXPECT(t_token(st, "failed") && strstr(st, "dependency failed: bad1"),
	    "w1: %s", st);
	EXPECT(t_journal_count("w1") == 0, "w1 never ran");
	st = t_status("w3");
	EXPECT(t_token(st, "failed") && strstr(st, "dependency failed: w1"),
	    "w3: %s", st);
	EXPECT(t_exists(SP("done", "w2")) && t_journal_count("w2") == 1,
	    "w2 ran anyway: %s", t_status("w2"));
	/* Finished before the submit: counts at once. */
	EXPECT(CHUTE("submit", T.spool, "--id", "w4", "--after", "ok1",
	    RP("in")) == 0 && CHUTE("submit", T.spool, "--id", "w5",
	    "--after", "bad1", RP("in")) == 0, "w4, w5: %s", T.err);
	EXPECT(DRAIN("--", h_order()) == 0, "drain");
	EXPECT(t_exists(SP("done", "w4")), "w4: %s", t_status("w4"));
	EXPECT(t_exists(SP("failed", "w5")), "w5: %s", t_status("w5"));
	/* Retry of a dependent: it waits again (failed -> wait), and as
	 * bad1 is still failed, fails again naming it. */
	EXPECT(CHUTE("retry", T.spool, "w5") == 0 &&
	    strstr(T.out, "failed->wait"), "retry w5: %s %s", T.out, T.err);
	EXPECT(t_exists(SP("wait", "w5")), "w5 waits again");
	EXPECT(DRAIN("--", h_order()) == 0, "drain");
	EXPECT(strstr(t_status("w5"), "dependency failed: bad1"), "w5: %s",
	    t_status("w5"));
}
END_TEST

START_TEST(test_cancel_of_a_waiting_job_and_of_a_job_waited_for)
{
	pid_t owner;
	char *st;

	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", T.spool, "--id", "later", "--delay", "1h",
	    RP("in")) == 0, "later: %s", T.err);
	EXPECT(CHUTE("submit", T.spool, "--id", "w1", "--after", "later",
	    RP("in")) == 0 && CHUTE("submit", T.spool, "--id", "w2",
	    "--after", "later", RP("in")) == 0, "w1, w2: %s", T.err);
	owner = OWNER("--", h_order());
	t_await_lock(owner, 10000);
	/* A waiting job cancelled: wait -> failed, never run. */
	EXPECT(CHUTE("cancel", T.spool, "w1") == 0 &&
	    strstr(T.out, "wait->failed"), "cancel w1: %s %s", T.out, T.err);
	/* The job waited for cancelled by another process: w2 follows. */
	EXPECT(CHUTE("cancel", T.spool, "later") == 0, "cancel: %s", T.err);
	WAIT_UNTIL(t_exists(SP("failed", "w2")), 10000, "w2 failed: %s",
	    t_log_of(owner));
	st = t_status("w2");
	EXPECT(strstr(st, "dependency failed: later"), "w2: %s", st);
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	EXPECT(t_journal_total() == 0, "nothing ran");
}
END_TEST

/* Is job id of store in state (status's word)? */
static bool
in_state(const char *store, const char *id, const char *state)
{
	return CHUTE("status", store, id) == 0 && strstr(T.out,
	    P(" %s ", state)) != NULL;
}

/*
 * A job cancelled while it runs ends for its dependents when its handler
 * has: one run anyway (--after-failed run) must not start beside a
 * handler still in its grace period.  The handler here outlives its
 * SIGTERM until told to go.  A queue's lease is long (60 s): the dependent
 * must be released by the worker that saw the handler end, not by the
 * lease's.
 */
static void
cancel_holds_dependents(const char *store)
{
	const char *h = t_handler("h_long",
	    "cat > /dev/null\n"
	    "case $CHUTE_ID in\n"
	    "long) trap 'echo term > \"$R/term\"' TERM\n"
	    "  echo 'long start' >> \"$R/journal\"\n"
	    "  while [ ! -e \"$R/go\" ]; do sleep 0.05; done\n"
	    "  echo 'long exit' >> \"$R/journal\";;\n"
	    "*) echo \"$CHUTE_ID start\" >> \"$R/journal\";;\n"
	    "esac\n");
	char *text, **lines;
	pid_t owner;
	int n, exit_at, w_at;

	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", store, "--id", "long", RP("in")) == 0 &&
	    CHUTE("submit", store, "--id", "w", "--after", "long",
	    "--after-failed", "run", RP("in")) == 0, "submits: %s", T.err);
	if (store == T.spool)
		owner = OWNER("-j", "2", "--grace", "60s", "--", h);
	else
		owner = t_spawn((const char *const[]){ T.bin, "run", store,
		    "-j", "2", "--grace", "60s", "--lease", "60s", "--", h,
		    NULL }, NULL, RP("owner.log"), RP("owner.log"), NULL);
	WAIT_UNTIL(t_journal_count("long") == 1, 10000, "long runs: %s",
	    t_log_of(owner));
	EXPECT(CHUTE("cancel", store, "long") == 0 && strstr(T.out,
	    "cur->failed"), "cancel: %s %s", T.out, T.err);
	WAIT_UNTIL(t_exists(RP("term")), 10000, "long's SIGTERM: %s",
	    t_log_of(owner));
	/* Every event before it heeded: a job submitted after runs. */
	EXPECT(CHUTE("submit", store, "--id", "probe", RP("in")) == 0,
	    "probe: %s", T.err);
	WAIT_UNTIL(t_journal_count("probe") == 1, 10000, "probe ran: %s",
	    t_log_of(owner));
	EXPECT(in_state(store, "w", "wait") && t_journal_count("w") == 0,
	    "w waits while long's handler lives: %s", t_log_of(owner));
	t_write(RP("go"), "");
	WAIT_UNTIL(in_state(store, "w", "done"), 10000, "w ran: %s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	lines = journal_lines(&text, &n);
	exit_at = w_at = -1;
	for (int i = 0; i < n; i++) {
		if (strcmp(lines[i], "long exit") == 0)
			exit_at = i;
		if (strcmp(lines[i], "w start") == 0)
			w_at = i;
	}
	EXPECT(exit_at >= 0 && w_at > exit_at, "w started at line %d, long "
	    "exited at %d", w_at, exit_at);
	EXPECT(in_state(store, "long", "failed"), "long failed (cancelled)");
	free(lines);
	free(text);
}

START_TEST(test_a_running_job_s_cancel_wakes_its_dependents_once_its_handler_ended)
{
	cancel_holds_dependents(T.spool);
}
END_TEST

START_TEST(test_unknown_ids_and_bad_lists_are_refused_with_nothing_written)
{
	char big[10 * 1024 + 1], ctl[] = "a\001b";
	int code;

	t_submit_as("there", "x\n");
	t_write(RP("in"), "x\n");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	code = CHUTE("submit", T.spool, "--after", "there,nope", RP("in"));
	EXPECT(code == 1 && t_nlines(T.err) == 1 && strstr(T.err, "nope") &&
	    strstr(T.err, "no such job"), "unknown: %d %s", code, T.err);
	code = CHUTE("submit", T.spool, "--after", ctl, RP("in"));
	EXPECT(code == 64 && t_nlines(T.err) == 1 && !strchr(T.err, '\001'),
	    "control bytes: %d %s", code, T.err);
	code = CHUTE("submit", T.spool, "--after", big, RP("in"));
	EXPECT(code == 64 && t_nlines(T.err) == 1 && strlen(T.err) < 200,
	    "10 kB: %d %s", code, t_snip(T.err));
	t_write(RP("list"), "there\n../x\n");
	code = CHUTE("submit", T.spool, "--after-file", RP("list"), RP("in"));
	EXPECT(code == 64 && strstr(T.err, "ID number 2"), "a bad line: %d "
	    "%s", code, T.err);
	code = CHUTE("submit", T.spool, "--after", "there", "--unique", "k",
	    RP("in"));
	EXPECT(code == 64, "--after with --unique: %d", code);
	code = CHUTE("submit", T.spool, "--after-failed", "run", RP("in"));
	EXPECT(code == 64, "--after-failed alone: %d", code);
	code = CHUTE("submit", T.spool, "--after", "there", "--after-failed",
	    "maybe", RP("in"));
	EXPECT(code == 64, "--after-failed maybe: %d", code);
	code = CHUTE("submit", T.spool, "--after", "there", "--id", "there",
	    RP("in"));
	EXPECT(code == 1 && strstr(T.err, "job exists"), "its own ID: %d %s",
	    code, T.err);
	EXPECT(count_entries("wait") == 0 && count_entries("tmp") == 0 &&
	    count_entries("after") == 0 && count_entries("new") == 1,
	    "nothing written: wait %d tmp %d after %d new %d",
	    count_entries("wait"), count_entries("tmp"),
	    count_entries("after"), count_entries("new"));
}
END_TEST


/*
 * A spool made before wait/ and after/: the first chute that may makes
 * them (here the submit; an owner always may), and nothing else changes.
 */
/*
 * IDs given to --after as submit printed them: a spool's ID ends with
 * its attributes (",p=5,k=k1", ",u=u1"), whose commas are the ID's own.
 */
static void
after_ids_with_attributes(const char *store)
{
	char one[256], two[256];

	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", store, "--priority", "5", "--key", "k1",
	    RP("in")) == 0, "one: %s", T.err);
	snprintf(one, sizeof(one), "%.*s", (int)strcspn(T.out, "\n"), T.out);
	EXPECT(CHUTE("submit", store, "--unique", "u1", RP("in")) == 0,
	    "two: %s", T.err);
	snprintf(two, sizeof(two), "%.*s", (int)strcspn(T.out, "\n"), T.out);
	EXPECT(CHUTE("submit", store, "--id", "w", "--after", P("%s,%s", one,
	    two), RP("in")) == 0, "--after %s,%s: %s", one, two, T.err);
	EXPECT(CHUTE("status", store, "w") == 0 && strstr(T.out, " wait ") &&
	    strstr(T.out, one) && strstr(T.out, two), "w: %s", T.out);
	/* A bad attribute is still an unknown ID, named whole. */
	EXPECT(CHUTE("submit", store, "--after", P("%s,z=1", one), RP("in")) ==
	    1 && strstr(T.err, ",z=1"), "%s", T.err);
}

START_TEST(test_ids_with_attributes_are_given_to_after_as_printed)
{
	after_ids_with_attributes(T.spool);
}
END_TEST

START_TEST(test_a_spool_made_before_wait_gets_it)
{
	pid_t owner;

	EXPECT(rmdir(P("%s/wait", T.spool)) == 0 &&
	    rmdir(P("%s/after", T.spool)) == 0, "an older spool");
	t_submit_as("a", "x\n");
	EXPECT(CHUTE("ls", T.spool) == 0 && strstr(T.out, " a"), "ls: %s",
	    T.err);
	t_write(RP("in"), "w\n");
	EXPECT(CHUTE("submit", T.spool, "--id", "w", "--after", "a",
	    RP("in")) == 0, "w: %s", T.err);
	EXPECT(t_exists(SP("wait", "w")) && t_exists(P("%s/after/w",
	    T.spool)), "made, and w waits");
	owner = OWNER("--", h_order());
	WAIT_UNTIL(t_exists(SP("done", "w")), 10000, "w ran: %s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	EXPECT(t_journal_count("a") == 1 && t_journal_count("w") == 1,
	    "each ran once");
}
END_TEST

/* The fault shim holds the call it was told to (its log says so). */
static bool
shim_held(void)
{
	char *log = t_slurp(RP("faults"));
	bool held = log != NULL && strstr(log, "injected HOLD") != NULL;

	free(log);
	return held;
}

/*
 * submit --after killed -9 at each of its two renames (after/.ID ->
 * after/ID, tmp/ID -> wait/ID), held there by the fault shim: no job is
 * left waiting, nothing was printed, an owner runs nothing for it, and
 * the same --id goes in afterwards (the orphan list is overwritten, and
 * its tmp/ file gone as an owner removes it after 36 h).
 */
START_TEST(test_a_submit_killed_at_either_rename_leaves_no_job)
{
	static const char *const call[] = { "renameat:1:HOLD",
	    "renameat2:1:HOLD" };
	static const char *const path[] = { "/after/", "/wait/" };
	const char *lib = getenv("CHUTE_FAULT_LIB");
	int code;
	pid_t p, owner;

	if (lib == NULL) {
		fprintf(stderr, "check_after: the crash of submit: skipped: "
		    "CHUTE_FAULT_LIB is not set\n");
		return;
	}
	EXPECT(mkfifo(RP("stall"), 0600) == 0, "mkfifo: %s", strerror(errno));
	t_submit_as("a", "x\n");
	t_write(RP("in"), "w\n");
	for (int i = 0; i < 2; i++) {
		unlink(RP("faults"));
		setenv("LD_PRELOAD", lib, 1);
		setenv("CHUTE_FAULT", call[i], 1);
		setenv("CHUTE_FAULT_PATH", path[i], 1);
		setenv("CHUTE_FAULT_HOLD", RP("stall"), 1);
		setenv("CHUTE_FAULT_LOG", RP("faults"), 1);
		p = t_spawn((const char *const[]){ T.bin, "submit", T.spool,
		    "--id", "w", "--after", "a", RP("in"), NULL }, NULL,
		    RP("out"), RP("out.err"), NULL);
		unsetenv("LD_PRELOAD");
		unsetenv("CHUTE_FAULT");
		unsetenv("CHUTE_FAULT_PATH");
		unsetenv("CHUTE_FAULT_HOLD");
		unsetenv("CHUTE_FAULT_LOG");
		WAIT_UNTIL(t_poll_exit(p, &code) || shim_held(), 10000,
		    "rename %d held, or the submit done", i);
		EXPECT(shim_held(), "rename %d was held: %s", i,
		    t_slurp(RP("out.err")));
		kill(p, SIGKILL);
		t_reap(p, 5000, "the killed submit");
		char *out = t_slurp(RP("out"));
		EXPECT(!t_exists(SP("wait", "w")) && (out == NULL ||
		    out[0] == '\0'), "kill at rename %d: no job waits, no ID "
		    "printed", i);
		free(out);
	}
	owner = OWNER("--", h_order());
	WAIT_UNTIL(t_exists(SP("done", "a")), 10000, "a ran");
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	EXPECT(t_journal_count("w") == 0 && !t_exists(SP("new", "w")) &&
	    !t_exists(SP("done", "w")) && !t_exists(SP("failed", "w")),
	    "nothing ran for w, and there is no job w");
	/* tmp/w, as the owner removes it after 36 h; after/w is left. */
	unlink(SP("tmp", "w"));
	EXPECT(t_exists(P("%s/after/w", T.spool)), "the orphan list");
	EXPECT(CHUTE("submit", T.spool, "--id", "w", "--after", "a",
	    RP("in")) == 0 && t_exists(SP("wait", "w")), "w goes in: %s",
	    T.err);
	EXPECT(DRAIN("--", h_order()) == 0 && t_exists(SP("done", "w")),
	    "and runs: %s", t_status("w"));
}
END_TEST

/* ---- a queue ---- */

/* A worker of the queue: -j 4, a 2 s lease (a killed one's jobs soon run). */
static pid_t
qworker(const char *log, bool drain)
{
	if (drain)
		return t_spawn((const char *const[]){ T.bin, "run", t_uri,
		    "-j", "4", "--lease", "2s", "--drain", "--", h_order(),
		    NULL }, NULL, RP(log), RP(log), NULL);
	return t_spawn((const char *const[]){ T.bin, "run", t_uri, "-j", "4",
	    "--lease", "2s", "--", h_order(), NULL }, NULL, RP(log), RP(log),
	    NULL);
}

START_TEST(test_a_batch_of_1000_then_one_final_job_runs_once_in_a_queue)
{
	pid_t a, b, d;

	submit_batch(t_uri);
	EXPECT(t_sqln("SELECT waiting FROM chute.live WHERE id = 'final'"
	    " AND state = 'wait'") == NBATCH, "final waits for 1,000");
	/* Two workers, each killed -9 in turn while the batch runs. */
	a = qworker("wa.log", false);
	b = qworker("wb.log", false);
	WAIT_UNTIL(t_journal_total() >= 300, 60000, "300 started");
	EXPECT(kill(a, SIGKILL) == 0, "kill -9 a");
	t_reap(a, 10000, "worker a");
	WAIT_UNTIL(t_journal_total() >= 650, 60000, "650 started");
	EXPECT(kill(b, SIGKILL) == 0, "kill -9 b");
	t_reap(b, 10000, "worker b");
	EXPECT(t_sqln("SELECT count(*) FROM chute.live WHERE id = 'final'"
	    " AND state = 'wait'") == 1, "final still waits");
	d = qworker("wd.log", true);
	EXPECT(t_reap(d, 120000, "the draining worker") == 0, "drain: %s",
	    t_log_of(d));
	expect_final_last();
	EXPECT(t_sqln("SELECT count(*) FROM chute.finished WHERE id = 'final'"
	    " AND state = 'done'") == 1, "final done");
	EXPECT(t_sqln("SELECT count(*) FROM chute.after WHERE id = 'final'"
	    " AND NOT settled") == 0, "every edge settled");
}
END_TEST

START_TEST(test_a_failed_dependency_fails_its_dependents_or_lets_them_run_in_a_queue)
{
	pid_t d;

	t_fleet_submit("default", "bad1", "x\n");
	t_fleet_submit("default", "ok1", "x\n");
	t_write(RP("in"), "w\n");
	EXPECT(CHUTE("submit", t_uri, "--id", "w1", "--after", "bad1,ok1",
	    RP("in")) == 0, "w1: %s", T.err);
	EXPECT(CHUTE("submit", t_uri, "--id", "w2", "--after", "bad1",
	    "--after-failed", "run", RP("in")) == 0, "w2: %s", T.err);
	EXPECT(CHUTE("submit", t_uri, "--id", "w3", "--after", "w1",
	    RP("in")) == 0, "w3: %s", T.err);
	d = qworker("wd.log", true);
	EXPECT(t_reap(d, 60000, "drain") == 0, "drain: %s", t_log_of(d));
	EXPECT(CHUTE("status", t_uri, "w1") == 0 && strstr(T.out,
	    " failed ") && strstr(T.out, "dependency failed: bad1"), "w1: %s",
	    T.out);
	EXPECT(CHUTE("status", t_uri, "w3") == 0 && strstr(T.out,
	    "dependency failed: w1"), "w3: %s", T.out);
	EXPECT(t_journal_count("w1") == 0 && t_journal_count("w3") == 0,
	    "neither ran");
	EXPECT(t_journal_count("w2") == 1 && t_sqln("SELECT count(*) FROM"
	    " chute.finished WHERE id = 'w2' AND state = 'done'") == 1,
	    "w2 ran anyway");
	/* Ended before the submit: at once, without a worker. */
	EXPECT(CHUTE("submit", t_uri, "--id", "w4", "--after", "ok1",
	    RP("in")) == 0 && t_sqln("SELECT count(*) FROM chute.live WHERE"
	    " id = 'w4' AND state = 'new'") == 1, "w4 new: %s", T.err);
	EXPECT(CHUTE("submit", t_uri, "--id", "w5", "--after", "bad1",
	    RP("in")) == 0 && t_sqln("SELECT count(*) FROM chute.finished"
	    " WHERE id = 'w5' AND state = 'failed'") == 1, "w5 failed: %s",
	    T.err);
	/* Retry of a dependent: waits again; fails again while bad1 has. */
	EXPECT(CHUTE("retry", t_uri, "w1") == 0 && strstr(T.out,
	    "failed->wait") && t_sqln("SELECT count(*) FROM chute.finished"
	    " WHERE id = 'w1' AND state = 'failed'") == 1, "w1 again: %s %s",
	    T.out, T.err);
	EXPECT(CHUTE("retry", t_uri, "bad1") == 0 && CHUTE("retry", t_uri,
	    "w1") == 0 && t_sqln("SELECT waiting FROM chute.live WHERE"
	    " id = 'w1' AND state = 'wait'") == 1, "w1 waits for bad1: %s",
	    T.err);
}
END_TEST

/*
 * Keys and dependencies together (schema versions 8 and 12): key K runs
 * at most 1.  x (K) runs, held; c (K) and b (K, priority 9, --after c) are
 * parked behind it.  When x ends, K's place goes to c, which may run,
 * never to b, which waits for c: when a job in wait could be admitted, b
 * took the place by its priority and waited for c, parked behind it, for
 * ever.
 */
START_TEST(test_a_keyed_job_that_waits_takes_no_place_of_its_key)
{
	pid_t w;

	EXPECT(CHUTE("limit", t_uri, "--key", "K", "--max", "1") == 0,
	    "limit: %s", T.err);
	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", t_uri, "--id", "x", "--key", "K", RP("in")) ==
	    0, "x: %s", T.err);
	w = t_spawn((const char *const[]){ T.bin, "run", t_uri, "-j", "2",
	    "--", h_block(), NULL }, NULL, RP("w.log"), RP("w.log"), NULL);
	WAIT_UNTIL(t_handler_pid("x") > 0, 30000, "x to run: %s",
	    t_log_of(w));
	EXPECT(CHUTE("submit", t_uri, "--id", "c", "--key", "K", RP("in")) ==
	    0, "c: %s", T.err);
	EXPECT(CHUTE("submit", t_uri, "--id", "b", "--key", "K", "--priority",
	    "9", "--after", "c", RP("in")) == 0, "b: %s", T.err);
	EXPECT(CHUTE("status", t_uri, "b") == 0 && strstr(T.out, " wait ") &&
	    strstr(T.out, "priority=9 key=K"), "b waits: %s", T.out);
	t_release();
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.finished WHERE id IN"
	    " ('x', 'c', 'b') AND state = 'done'") == 3, 30000, "x, c and b "
	    "done: %s", t_sql("SELECT string_agg(id || ':' || state || ':' ||"
	    " parked::text, ' ') FROM chute.live"));
	EXPECT(t_sqln("SELECT count(*) FROM chute.finished WHERE id = 'b'"
	    " AND priority = 9 AND key = 'K'") == 1, "b kept its priority and "
	    "key");
	kill(w, SIGTERM);
	t_reap(w, 20000, "worker");
}
END_TEST

START_TEST(test_cancel_and_bad_lists_in_a_queue)
{
	char ctl[] = "a\001b";
	int code;

	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", t_uri, "--id", "later", "--delay", "1h",
	    RP("in")) == 0, "later: %s", T.err);
	EXPECT(CHUTE("submit", t_uri, "--id", "w1", "--after", "later",
	    RP("in")) == 0 && CHUTE("submit", t_uri, "--id", "w2", "--after",
	    "later", RP("in")) == 0, "w1, w2: %s", T.err);
	EXPECT(CHUTE("cancel", t_uri, "w1") == 0 && strstr(T.out,
	    "wait->failed"), "cancel w1: %s %s", T.out, T.err);
	/* The job waited for cancelled: w2 fails in the same transaction. */
	EXPECT(CHUTE("cancel", t_uri, "later") == 0, "cancel: %s", T.err);
	EXPECT(CHUTE("status", t_uri, "w2") == 0 && strstr(T.out, " failed ")
	    && strstr(T.out, "dependency failed: later"), "w2: %s", T.out);
	/* Refused, nothing written. */
	code = CHUTE("submit", t_uri, "--after", "later,nope", RP("in"));
	EXPECT(code == 1 && t_nlines(T.err) == 1 && strstr(T.err, "nope"),
	    "unknown: %d %s", code, T.err);
	code = CHUTE("submit", t_uri, "--after", ctl, RP("in"));
	EXPECT(code == 64 && t_nlines(T.err) == 1, "control bytes: %d %s",
	    code, T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.payloads") == 3 &&
	    t_sqln("SELECT count(*) FROM chute.after") == 2, "nothing written");
}
END_TEST

START_TEST(test_ids_with_attributes_are_given_to_after_as_printed_in_a_queue)
{
	after_ids_with_attributes(t_uri);
}
END_TEST

START_TEST(test_a_running_job_s_cancel_wakes_its_dependents_once_its_handler_ended_in_a_queue)
{
	cancel_holds_dependents(t_uri);
}
END_TEST

/*
 * The worker of a cancelled running job dies before it can say the
 * handler ended (kill -9: its reaper kills the handler): the held edge is
 * released by another worker's recovery once the lease has run out.
 */
START_TEST(test_a_cancel_s_held_dependents_are_released_at_the_lease_s_end)
{
	pid_t a, b;

	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", t_uri, "--id", "slow", RP("in")) == 0 &&
	    CHUTE("submit", t_uri, "--id", "w", "--after", "slow",
	    "--after-failed", "run", RP("in")) == 0, "submits: %s", T.err);
	a = t_spawn((const char *const[]){ T.bin, "run", t_uri, "--lease",
	    "2s", "--grace", "60s", "--", h_block(), NULL }, NULL, RP("a.log"),
	    RP("a.log"), NULL);
	WAIT_UNTIL(in_state(t_uri, "slow", "cur"), 10000, "slow runs: %s",
	    t_log_of(a));
	EXPECT(kill(a, SIGSTOP) == 0, "stop a");
	EXPECT(CHUTE("cancel", t_uri, "slow") == 0, "cancel: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.after WHERE id = 'w'"
	    " AND held_until IS NOT NULL AND NOT settled") == 1, "w's edge held");
	EXPECT(kill(a, SIGKILL) == 0, "kill -9 a");
	t_reap(a, 10000, "worker a");
	b = qworker("b.log", false);
	WAIT_UNTIL(in_state(t_uri, "w", "done"), 20000, "w ran after the "
	    "lease: %s", t_log_of(b));
	EXPECT(t_sqln("SELECT count(*) FROM chute.after WHERE id = 'w'"
	    " AND NOT settled") == 0, "w's edge settled");
	EXPECT(t_stop(b) == 0, "b: %s", t_log_of(b));
	t_release();
}
END_TEST

/*
 * chute forward leaves a spool's waiting job in wait/, saying so: its
 * dependencies are the spool's jobs, not the queue's.
 */
START_TEST(test_forward_leaves_waiting_jobs_in_the_spool)
{
	pid_t fw;

	t_submit_as("a", "x\n");
	t_write(RP("in"), "w\n");
	EXPECT(CHUTE("submit", T.spool, "--id", "w", "--after", "a",
	    RP("in")) == 0, "w: %s", T.err);
	fw = t_spawn((const char *const[]){ T.bin, "forward", T.spool, t_uri,
	    "--drain", NULL }, NULL, RP("fw.log"), RP("fw.log"), NULL);
	EXPECT(t_reap(fw, 30000, "forward") == 0, "forward: %s",
	    t_log_of(fw));
	EXPECT(t_exists(SP("done", "a")) && t_exists(SP("wait", "w")),
	    "a forwarded, w left waiting");
	EXPECT(strstr(t_log_of(fw), "job=w waits in wait/") &&
	    strstr(t_log_of(fw), "not forwarded"), "its line: %s",
	    t_log_of(fw));
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 1, "only a in the "
	    "queue");
}
END_TEST

/*
 * The race the submit's lock closes: a submit --after whose transaction
 * is still open while the job it waits for ends.  The end (here a cancel)
 * must wait for the submit's commit, and its trigger then sees the new
 * edge: the waiting job fails naming it.  Without the FOR KEY SHARE the
 * cancel went through at once and the waiting job waited forever.
 */
START_TEST(test_an_end_during_a_submit_waits_for_it_and_settles_its_edge)
{
	char *out;
	pid_t psql, c;
	FILE *f = NULL;
	int fd;

	t_fleet_submit("default", "d", "x\n");
	EXPECT(mkfifo(RP("sql"), 0600) == 0, "mkfifo: %s", strerror(errno));
	/* A writer before the reader: psql never finds the FIFO at EOF. */
	signal(SIGPIPE, SIG_IGN);
	fd = open(RP("sql"), O_RDWR | O_CLOEXEC);
	EXPECT(fd != -1 && (f = fdopen(fd, "w")) != NULL, "open the fifo: %s",
	    strerror(errno));
	psql = t_spawn((const char *const[]){ "/bin/sh", "-c",
	    "exec psql -X -q -At -w \"$1\"", "sh", t_uri, NULL }, RP("sql"),
	    RP("psql.out"), RP("psql.err"), NULL);
	setvbuf(f, NULL, _IONBF, 0);
	EXPECT(fprintf(f, "BEGIN;\nSELECT chute.submit_after('default', 'w',"
	    " 'x', ARRAY['d'], false, 0::smallint, NULL);\n") > 0, "psql: %s",
	    t_slurp(RP("psql.err")));
	/* Its answer is in psql's buffer: the session idle in its
	 * transaction says the call returned. */
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM pg_stat_activity WHERE"
	    " datname = current_database() AND state = 'idle in transaction'"
	    " AND query LIKE '%submit_after%'") == 1, 20000, "the submit's "
	    "call: %s; psql %s; %s", t_slurp(RP("psql.err")), t_alive(psql) ?
	    "alive" : "gone", t_sql("SELECT string_agg(state || ':' || query,"
	    " ' | ') FROM pg_stat_activity WHERE datname = current_database()"));
	c = t_spawn((const char *const[]){ T.bin, "cancel", t_uri, "d", NULL },
	    NULL, RP("cancel.out"), RP("cancel.out"), NULL);
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM pg_stat_activity WHERE"
	    " wait_event_type = 'Lock' AND query LIKE '%DELETE FROM chute.live%'")
	    == 1, 20000, "the cancel waits for the submit's commit");
	fprintf(f, "COMMIT;\n");
	fclose(f);
	EXPECT(t_reap(c, 20000, "cancel") == 0, "cancel: %s",
	    t_log_of(c));
	t_reap(psql, 20000, "psql");
	out = t_slurp(RP("psql.out"));
	EXPECT(out != NULL && strcmp(out, "wait\n") == 0, "the submit "
	    "said: %s", out);
	free(out);
	EXPECT(CHUTE("status", t_uri, "w") == 0 && strstr(T.out, " failed ") &&
	    strstr(T.out, "dependency failed: d"), "w: %s", T.out);
}
END_TEST

Suite *
after_suite(void)
{
	Suite *s = suite_create("after");
	TCase *tc = t_tcase(t_cli_setup, t_cli_teardown, "after_spool", 300);

	tcase_add_test(tc, test_a_batch_of_1000_then_one_final_job_runs_once_after_all);
	tcase_add_test(tc, test_a_failed_dependency_fails_its_dependents_or_lets_them_run);
	tcase_add_test(tc, test_cancel_of_a_waiting_job_and_of_a_job_waited_for);
	tcase_add_test(tc, test_a_running_job_s_cancel_wakes_its_dependents_once_its_handler_ended);
	tcase_add_test(tc, test_unknown_ids_and_bad_lists_are_refused_with_nothing_written);
	tcase_add_test(tc, test_a_spool_made_before_wait_gets_it);
	tcase_add_test(tc, test_ids_with_attributes_are_given_to_after_as_printed);
	tcase_add_test(tc, test_a_submit_killed_at_either_rename_leaves_no_job);
	suite_add_tcase(s, tc);
	if (t_pg_skip())
		return s;
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "after_pg", 300);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_a_batch_of_1000_then_one_final_job_runs_once_in_a_queue);
	tcase_add_test(tc, test_a_failed_dependency_fails_its_dependents_or_lets_them_run_in_a_queue);
	tcase_add_test(tc, test_cancel_and_bad_lists_in_a_queue);
	tcase_add_test(tc, test_a_keyed_job_that_waits_takes_no_place_of_its_key);
	tcase_add_test(tc, test_forward_leaves_waiting_jobs_in_the_spool);
	tcase_add_test(tc, test_a_cancel_s_held_dependents_are_released_at_the_lease_s_end);
	tcase_add_test(tc, test_a_running_job_s_cancel_wakes_its_dependents_once_its_handler_ended_in_a_queue);
	tcase_add_test(tc, test_ids_with_attributes_are_given_to_after_as_printed_in_a_queue);
	tcase_add_test(tc, test_an_end_during_a_submit_waits_for_it_and_settles_its_edge);
	suite_add_tcase(s, tc);
	return s;
}
