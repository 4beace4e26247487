/*
 * check_cli.c: integration tests.  Each test drives the real binary
 * ($CHUTE_BIN, set by `make check`) against a fresh spool under mkdtemp(3)
 * and judges it only by what an operator could see: files in the state
 * directories, exit codes, output, and what the handlers recorded in a
 * journal kept outside the spool.  No sleep is used to synchronise: every
 * wait is bounded and says what it waited for (t_cli.h).
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"

/* ------------------------------------------------------------------ */
/* Submission                                                         */
/* ------------------------------------------------------------------ */

START_TEST(test_submit_reads_stdin_and_prints_the_new_id)
{
	char *id, *content;
	int code;

	t_write(RP("in"), "hello from stdin\n");
	code = CHUTE_IN(RP("in"), "submit", T.spool);
	EXPECT(code == 0, "chute submit exited %d: %s", code, T.err);
	EXPECT(t_nlines(T.out) == 1, "expected one ID line, got '%s'", T.out);
	id = t_line(T.out, 0);
	EXPECT(t_id_charset_ok(id), "generated ID '%s' has characters outside"
	    " [A-Za-z0-9._-] or starts with '.'", id);
	content = t_slurp(SP("new", id));
	EXPECT(content != NULL, "new/%s does not exist after submit", id);
	EXPECT(strcmp(content, "hello from stdin\n") == 0,
	    "new/%s holds '%s', not what was submitted", id, content);
	EXPECT(t_count_state("tmp") == 0, "submit left files in tmp/");

	/* "-" also means stdin */
	code = CHUTE_IN(RP("in"), "submit", T.spool, "-");
	EXPECT(code == 0, "chute submit - exited %d: %s", code, T.err);
	id = t_line(T.out, 0);
	EXPECT(id != NULL && t_exists(SP("new", id)), "submit - did not create new/%s",
	    id ? id : "(none)");
	EXPECT(t_count_state("new") == 2, "expected 2 jobs in new/, found %d",
	    t_count_state("new"));
}
END_TEST

START_TEST(test_submit_of_files_prints_one_id_per_file_in_submission_order)
{
	char id1[256], id2[256], id3[256];
	char *c1, *c2;
	int code;

	t_write(RP("a"), "first file");
	t_write(RP("b"), "second file");
	code = CHUTE("submit", T.spool, RP("a"), RP("b"));
	EXPECT(code == 0, "chute submit a b exited %d: %s", code, T.err);
	EXPECT(t_nlines(T.out) == 2, "expected two ID lines, got '%s'", T.out);
	snprintf(id1, sizeof id1, "%s", t_line(T.out, 0));
	snprintf(id2, sizeof id2, "%s", t_line(T.out, 1));
	EXPECT(strcmp(id1, id2) != 0, "both files got the ID %s", id1);
	c1 = t_slurp(SP("new", id1));
	c2 = t_slurp(SP("new", id2));
	EXPECT(c1 && strcmp(c1, "first file") == 0, "new/%s should hold the first file", id1);
	EXPECT(c2 && strcmp(c2, "second file") == 0, "new/%s should hold the second file", id2);

	/* IDs sort by submission time, across processes too */
	code = CHUTE("submit", T.spool, RP("a"));
	EXPECT(code == 0, "chute submit exited %d: %s", code, T.err);
	snprintf(id3, sizeof id3, "%s", t_line(T.out, 0));
	EXPECT(strcmp(id1, id2) < 0 && strcmp(id2, id3) < 0,
	    "IDs do not sort in submission order: %s, %s, %s", id1, id2, id3);
	EXPECT(t_id_charset_ok(id3), "generated ID '%s' has bad characters", id3);
}
END_TEST

START_TEST(test_submit_with_id_names_the_job)
{
	char id200[201];
	int code;

	t_submit_as("my-job_1.0", "payload");
	EXPECT(t_exists(SP("new", "my-job_1.0")), "new/my-job_1.0 missing");

	/* exactly 200 bytes is still a valid ID */
	memset(id200, 'a', 200);
	id200[200] = '\0';
	code = CHUTE_IN(RP("in.my-job_1.0"), "submit", T.spool, "--id", id200);
	EXPECT(code == 0, "a 200-byte --id was refused with %d: %s", code, T.err);
	EXPECT(t_exists(SP("new", id200)), "new/<200 a's> missing");

	/* --id with more than one input is a usage error */
	t_write(RP("x"), "x");
	code = CHUTE("submit", T.spool, "--id", "two", RP("x"), RP("x"));
	EXPECT(code == 64, "--id with two files should exit 64, got %d", code);
	EXPECT(!t_exists(SP("new", "two")), "a refused submit created new/two");
}
END_TEST

START_TEST(test_submit_with_an_existing_id_is_refused_with_exit_1)
{
	char *content;
	int code;

	t_submit_as("dup", "original");
	t_write(RP("other"), "impostor");
	code = CHUTE_IN(RP("other"), "submit", T.spool, "--id", "dup");
	EXPECT(code == 1, "duplicate --id (job in new/) should exit 1, got %d: %s",
	    code, T.err);
	EXPECT(strstr(T.err, "dup") != NULL, "the refusal does not name the ID: '%s'", T.err);
	content = t_slurp(SP("new", "dup"));
	EXPECT(content && strcmp(content, "original") == 0,
	    "new/dup was changed by a refused submit: '%s'", content ? content : "(gone)");
	EXPECT(t_count_state("tmp") == 0 && t_count_state("defer") == 0,
	    "a refused submit left files behind");

	/* a job that already finished also owns its name */
	t_write(SP("done", "finished"), "old result");
	code = CHUTE_IN(RP("other"), "submit", T.spool, "--id", "finished");
	EXPECT(code == 1, "duplicate --id (job in done/) should exit 1, got %d", code);
	EXPECT(!t_exists(SP("new", "finished")), "a job named like a done/ job was queued");
	code = CHUTE_IN(RP("other"), "submit", T.spool, "--id", "finished", "--delay", "1h");
	EXPECT(code == 1, "duplicate --id with --delay should exit 1, got %d", code);
	EXPECT(!t_exists(SP("defer", "finished")), "a duplicate was deferred");
}
END_TEST

START_TEST(test_submit_with_a_bad_id_is_a_usage_error_that_touches_nothing)
{
	char longid[202];
	const char *bad[] = { "a/b", ".hidden", "..", "tab\there", "nl\nx",
	    "del\x7f", "", longid };
	int code;

	memset(longid, 'b', 201);
	longid[201] = '\0';
	t_write(RP("in"), "x");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		code = CHUTE_IN(RP("in"), "submit", T.spool, "--id", bad[i]);
		EXPECT(code == 64, "submit --id '%s' should exit 64, got %d", bad[i], code);
		EXPECT(T.err[0] != '\0', "submit --id '%s' gave no reason on stderr", bad[i]);
	}
	EXPECT(t_count_state("new") == 0 && t_count_state("tmp") == 0 &&
	    t_count_state("defer") == 0, "a refused submit left a file in the spool");
	EXPECT(!t_exists(P("%s/b", T.root)), "submit --id a/b created a file outside new/");
}
END_TEST

START_TEST(test_bad_id_on_any_command_is_a_usage_error)
{
	const char *cmds[] = { "status", "wait", "cancel", "retry", "log" };
	int code;

	t_submit_as("ok", "x");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		code = CHUTE(cmds[i], T.spool, "ok", "../new/ok");
		EXPECT(code == 64, "chute %s with ID ../new/ok should exit 64, got %d",
		    cmds[i], code);
	}
	EXPECT(t_exists(SP("new", "ok")), "a usage error moved new/ok");
	EXPECT(t_count_state("failed") == 0, "a usage error cancelled a job");
}
END_TEST

START_TEST(test_submit_of_a_missing_file_exits_66_and_submits_the_rest)
{
	int code;

	t_write(RP("real"), "real content");
	code = CHUTE("submit", T.spool, RP("nonexistent"), RP("real"));
	EXPECT(code == 66, "submit of a missing file should exit 66, got %d", code);
	EXPECT(strstr(T.err, "nonexistent") != NULL,
	    "the error does not name the missing file: '%s'", T.err);
	EXPECT(t_nlines(T.out) == 1 && t_exists(SP("new", t_line(T.out, 0))),
	    "the readable file was not submitted (stdout '%s')", T.out);
}
END_TEST

START_TEST(test_job_dropped_by_tmp_and_rename_is_run)
{
	pid_t owner = OWNER(QUICK, "--", h_journal());
	char *seen;

	t_drop("mvjob", "moved in\n");
	EXPECT(t_await("mvjob", 10000) == 0, "mvjob failed");
	seen = t_slurp(RP("seen/mvjob"));
	EXPECT(seen && strcmp(seen, "moved in\n") == 0, "handler read '%s'",
	    seen ? seen : "(nothing)");
	EXPECT(t_journal_has("mvjob", 1), "journal lacks 'mvjob 1'");
	EXPECT(t_count_state("new") == 0 && t_count_state("cur") == 0,
	    "mvjob left a copy in new/ or cur/");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_job_linked_into_new_then_unlinked_is_run)
{
	pid_t owner = OWNER(QUICK, "--", h_journal());
	char *seen;

	/* qmail/nullmailer style: IN_CREATE only, never a close-after-write */
	t_write(SP("tmp", "lnjob"), "linked in\n");
	EXPECT(link(SP("tmp", "lnjob"), SP("new", "lnjob")) == 0, "link: %s",
	    strerror(errno));
	EXPECT(unlink(SP("tmp", "lnjob")) == 0, "unlink: %s", strerror(errno));
	EXPECT(t_await("lnjob", 10000) == 0, "lnjob failed");
	seen = t_slurp(RP("seen/lnjob"));
	EXPECT(seen && strcmp(seen, "linked in\n") == 0, "handler read '%s'",
	    seen ? seen : "(nothing)");
	EXPECT(t_journal_count("lnjob") == 1, "lnjob ran %d times", t_journal_count("lnjob"));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_file_written_in_place_is_not_run_before_its_writer_closes)
{
	pid_t owner = OWNER(QUICK, "--", h_journal());
	const char *where;
	char *seen;
	int fd;

	t_await_lock(owner, 5000);
	/* a writer like `cmd > new/slow`: create in new/, write, keep it open */
	fd = open(SP("new", "slow"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	EXPECT(fd != -1, "create new/slow: %s", strerror(errno));
	EXPECT(write(fd, "part1\n", 6) == 6, "write part1");

	/* a job submitted after it goes all the way through ... */
	t_submit_as("after", "x");
	EXPECT(t_await("after", 10000) == 0, "'after' failed");
	/* ... while the open file has not been touched */
	EXPECT(t_where("slow", &where) == 1 && strcmp(where, "new") == 0,
	    "the half-written job left new/ for %s/ while its writer held it open", where);
	EXPECT(!t_exists(RP("seen/slow")) && t_journal_count("slow") == 0,
	    "a handler ran on the half-written job");

	EXPECT(write(fd, "part2\n", 6) == 6, "write part2");
	EXPECT(close(fd) == 0, "close");
	EXPECT(t_await("slow", 15000) == 0, "slow failed");
	seen = t_slurp(RP("seen/slow"));
	EXPECT(seen && strcmp(seen, "part1\npart2\n") == 0,
	    "the handler saw '%s', not the complete file", seen ? seen : "(nothing)");
	EXPECT(t_journal_count("slow") == 1, "slow ran %d times", t_journal_count("slow"));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

/*
 * The same writer under a name a finished job has: the owner gives the
 * file a derived ID while it is still being written, and that rename must
 * not make it look complete (its IN_MOVED_TO is like a submitter's mv).
 */
START_TEST(test_file_written_in_place_under_a_taken_name_waits_for_its_writer)
{
	pid_t owner = OWNER(QUICK, "--", h_journal());
	char id[NAME_MAX + 1] = "", *c;
	int fd;

	t_await_lock(owner, 5000);
	t_submit_as("daily", "day1\n");
	EXPECT(t_await("daily", 10000) == 0, "day 1 failed");
	fd = open(SP("new", "daily"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644);
	EXPECT(fd != -1, "create new/daily: %s", strerror(errno));
	EXPECT(write(fd, "part1\n", 6) == 6, "write part1");
	/* "job=ID renamed from=daily (name taken by a job in done/)" */
	WAIT_UNTIL((c = strstr(t_log_of(owner), " renamed from=daily ")) !=
	    NULL, 10000, "waited 10 s for new/daily to get a derived ID");
	while (c > t_log_of(owner) && strncmp(c, "job=", 4) != 0)
		c--;
	EXPECT(sscanf(c, "job=%255s", id) == 1 && strncmp(id, "daily-", 6) == 0,
	    "derived ID '%s'", id);
	t_submit_as("after", "x");
	EXPECT(t_await("after", 10000) == 0, "'after' failed");
	EXPECT(t_exists(SP("new", id)) && t_journal_count(id) == 0,
	    "%s ran (or left new/) while its writer held it open", id);
	EXPECT(write(fd, "part2\n", 6) == 6, "write part2");
	EXPECT(close(fd) == 0, "close");
	EXPECT(t_await(id, 15000) == 0, "%s failed", id);
	c = t_slurp(RP(P("seen/%s", id)));
	EXPECT(c && strcmp(c, "part1\npart2\n") == 0, "the handler saw '%s', "
	    "not the complete file", c ? c : "(nothing)");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_dot_files_are_ignored)
{
	int code;

	t_write(SP("new", ".partial"), "rsync temp");
	t_submit_as("real", "x");
	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d (a dot file must not keep it waiting)", code);
	EXPECT(t_exists(SP("done", "real")), "real did not finish");
	EXPECT(t_exists(SP("new", ".partial")), "new/.partial was moved");
	EXPECT(t_journal_count(".partial") == 0, "a handler ran on .partial");
	EXPECT(t_journal_total() == 1, "expected 1 run, journal has %d", t_journal_total());
}
END_TEST

START_TEST(test_dropped_file_named_like_a_finished_job_gets_a_new_id)
{
	pid_t owner = OWNER(QUICK, "--", h_journal());
	char *c, *other, *seen;
	char newid[NAME_MAX + 1];

	t_drop("report.csv", "day1\n");
	EXPECT(t_await("report.csv", 10000) == 0, "day 1 report failed");
	/* the next day's cron drop uses the same name */
	t_drop("report.csv", "day2\n");
	WAIT_UNTIL(t_count_state("done") == 2, 10000,
	    "waited 10 s for the second report.csv to reach done/ (done/ has %d)",
	    t_count_state("done"));
	c = t_slurp(SP("done", "report.csv"));
	EXPECT(c && strcmp(c, "day1\n") == 0, "done/report.csv was overwritten: '%s'",
	    c ? c : "(gone)");
	other = t_other_entry(P("%s/done", T.spool), "report.csv");
	EXPECT(other != NULL, "expected exactly one other job in done/");
	snprintf(newid, sizeof newid, "%s", other);
	EXPECT(strncmp(newid, "report.csv", 10) == 0 && strlen(newid) > 10,
	    "the renamed job '%s' is not derived from report.csv", newid);
	EXPECT(t_id_charset_ok(newid), "derived ID '%s' has bad characters", newid);
	c = t_slurp(SP("done", newid));
	EXPECT(c && strcmp(c, "day2\n") == 0, "done/%s holds '%s'", newid, c ? c : "");
	seen = t_slurp(RP(P("seen/%s", newid)));
	EXPECT(seen && strcmp(seen, "day2\n") == 0, "the handler did not run day 2 as %s", newid);
	EXPECT(t_journal_count("report.csv") == 1, "report.csv ran %d times",
	    t_journal_count("report.csv"));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(strstr(t_log_of(owner), "renamed") != NULL &&
	    strstr(t_log_of(owner), newid) != NULL,
	    "the owner did not log the renaming:\n%s", t_log_of(owner));
}
END_TEST

/* The claim's RENAME_NOREPLACE is what finds a running job of the same name. */
START_TEST(test_dropped_file_named_like_a_running_job_gets_a_new_id)
{
	pid_t owner = OWNER(QUICK, "-j", "2", "--", h_block());
	const char *where;
	char other[NAME_MAX + 1] = "", *c;

	t_submit_as("nightly", "first\n");
	WAIT_UNTIL(t_journal_count("nightly") == 1, 10000,
	    "waited 10 s for the first nightly's handler to start");
	t_drop("nightly", "second\n");
	WAIT_UNTIL(t_count_state("cur") == 2, 10000,
	    "waited 10 s for the second nightly to start under a new ID "
	    "(cur/ has %d, new/ has %d)", t_count_state("cur"),
	    t_count_state("new"));
	c = t_other_entry(P("%s/cur", T.spool), "nightly");
	EXPECT(c != NULL, "no second job in cur/");
	strlcpy(other, c, sizeof(other));
	EXPECT(strncmp(other, "nightly", 7) == 0 && strlen(other) > 7,
	    "the second nightly runs as '%s'", other);
	c = t_slurp(SP("cur", "nightly"));
	EXPECT(c && strcmp(c, "first\n") == 0, "cur/nightly now holds '%s'",
	    c ? c : "(gone)");
	t_release();
	EXPECT(t_await("nightly", 10000) == 0, "the first nightly did not finish");
	EXPECT(t_await(other, 10000) == 0, "the second nightly did not finish");
	EXPECT(t_journal_count("nightly") == 1, "nightly ran %d times",
	    t_journal_count("nightly"));
	EXPECT(t_where("nightly", &where) == 1, "nightly is in more than one place");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(strstr(t_log_of(owner), "name taken by a job in cur/") != NULL,
	    "the owner did not say why it renamed the job:\n%s", t_log_of(owner));
}
END_TEST

START_TEST(test_dropped_file_with_a_control_character_in_its_name_gets_a_clean_id)
{
	char *other, *c;
	int code;

	t_drop("bad\tname", "tabbed\n");
	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_count_state("done") == 1, "expected 1 job in done/, found %d",
	    t_count_state("done"));
	other = t_other_entry(P("%s/done", T.spool), "");
	EXPECT(other && t_id_charset_ok(other) && strncmp(other, "bad_name", 8) == 0,
	    "the job is named '%s', expected a clean ID derived from bad<TAB>name",
	    other ? other : "(none)");
	c = t_slurp(SP("done", other));
	EXPECT(c && strcmp(c, "tabbed\n") == 0, "content changed: '%s'", c ? c : "");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Outcomes                                                           */
/* ------------------------------------------------------------------ */

START_TEST(test_handler_exit_0_moves_job_to_done)
{
	pid_t owner = OWNER(QUICK, "--", h_journal());
	const char *where;

	t_submit_as("ok", "fine");
	EXPECT(t_await("ok", 10000) == 0, "ok failed");
	EXPECT(t_where("ok", &where) == 1, "ok is in more than one directory");
	EXPECT_STATUS("ok", "done", 1);
	EXPECT(t_journal_count("ok") == 1, "ok ran %d times", t_journal_count("ok"));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(strstr(t_log_of(owner), "job=ok new->cur") != NULL &&
	    strstr(t_log_of(owner), "job=ok cur->done") != NULL,
	    "the owner did not log the transitions:\n%s", t_log_of(owner));
}
END_TEST

START_TEST(test_exit_75_defers_then_retry_succeeds)
{
	const char *h = t_handler("h_flaky",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "[ \"$CHUTE_ATTEMPT\" -ge 3 ] || exit 75\n");
	pid_t owner = OWNER(QUICK, "--", h);

	t_submit_as("flaky", "x");
	EXPECT(t_await("flaky", 15000) == 0, "flaky failed");
	EXPECT(t_journal_has("flaky", 1) && t_journal_has("flaky", 2) &&
	    t_journal_has("flaky", 3) && t_journal_count("flaky") == 3,
	    "expected attempts 1, 2, 3 in the journal");
	EXPECT_STATUS("flaky", "done", 3);
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(strstr(t_log_of(owner), "job=flaky cur->defer") != NULL &&
	    strstr(t_log_of(owner), "job=flaky defer->new") != NULL,
	    "the owner did not log the deferral:\n%s", t_log_of(owner));
}
END_TEST

START_TEST(test_retries_exhausted_fail_with_attempts_equal_to_max)
{
	const char *h = t_handler("h_tempfail",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "exit 75\n");
	int code;

	t_submit_as("never", "x");
	code = DRAIN(QUICK, "--max-attempts", "3", "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_await("never", 1000) == 1, "never did not end in failed/");
	EXPECT(t_journal_count("never") == 3 && t_journal_has("never", 3),
	    "expected exactly 3 attempts, journal has %d", t_journal_count("never"));
	EXPECT_STATUS("never", "failed", 3);
}
END_TEST

START_TEST(test_other_exit_status_fails_at_once)
{
	const char *h = t_handler("h_exit3",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "exit 3\n");
	char *st;
	int code;

	t_submit_as("broken", "x");
	code = DRAIN(QUICK, "--max-attempts", "5", "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_await("broken", 1000) == 1, "broken did not end in failed/");
	EXPECT(t_journal_count("broken") == 1, "exit 3 was retried (%d runs)",
	    t_journal_count("broken"));
	EXPECT_STATUS("broken", "failed", 1);
	st = t_status("broken");
	EXPECT(t_token(st, "exit=3"), "status does not report exit=3: '%s'", st);
}
END_TEST

START_TEST(test_death_by_signal_fails_at_once)
{
	const char *h = t_handler("h_suicide",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "kill -KILL $$\n");
	char *st;
	int code;

	t_submit_as("killed", "x");
	code = DRAIN(QUICK, "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_await("killed", 1000) == 1, "killed did not end in failed/");
	EXPECT(t_journal_count("killed") == 1, "death by signal was retried (%d runs)",
	    t_journal_count("killed"));
	st = t_status("killed");
	EXPECT(t_token(st, "signal=KILL") || t_token(st, "signal=9"),
	    "status does not report the signal: '%s'", st);
}
END_TEST

START_TEST(test_timeout_defers_then_fails_and_kills_a_handler_that_ignores_term)
{
	const char *h = t_handler("h_stubborn",
	    "echo $$ >> \"$R/hpids\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
	    "trap '' TERM\n"
	    "i=0\n"
	    "while [ ! -e \"$R/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n");
	pid_t owner, pids[8];
	char *log;
	int n;

	owner = OWNER("--timeout", "300ms", "--grace", "300ms", "--max-attempts", "2",
	    "--backoff", "50ms:100ms", "--", h);
	t_submit_as("slowpoke", "x");
	EXPECT(t_await("slowpoke", 20000) == 1, "slowpoke did not end in failed/");
	EXPECT(t_journal_has("slowpoke", 1) && t_journal_has("slowpoke", 2) &&
	    t_journal_count("slowpoke") == 2, "expected attempts 1 and 2, journal has %d",
	    t_journal_count("slowpoke"));
	EXPECT_STATUS("slowpoke", "failed", 2);
	n = t_read_pids("hpids", pids, 8);
	for (int i = 0; i < n; i++)
		WAIT_UNTIL(!t_alive(pids[i]), 5000, "handler %d (ignoring SIGTERM) is"
		    " still running 5 s after its timeout", (int)pids[i]);
	log = t_slurp(SP("log", "slowpoke"));
	EXPECT(log && strstr(log, "timeout"), "log/slowpoke does not record the timeout");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(strstr(t_log_of(owner), "job=slowpoke cur->defer") != NULL,
	    "a timeout did not defer the job first:\n%s", t_log_of(owner));
}
END_TEST

START_TEST(test_cancel_of_a_queued_job_means_it_never_runs)
{
	const char *where;
	int code;

	t_submit_as("queued", "x");
	code = CHUTE_IN(RP("in.queued"), "submit", T.spool, "--id", "later", "--delay", "1h");
	EXPECT(code == 0, "submit --delay exited %d: %s", code, T.err);
	EXPECT(t_exists(SP("defer", "later")), "delayed job not in defer/");

	code = CHUTE("cancel", T.spool, "queued", "later");
	EXPECT(code == 0, "chute cancel exited %d: %s", code, T.err);
	EXPECT(t_where("queued", &where) == 1 && strcmp(where, "failed") == 0,
	    "cancelled queued job is in %s/", where);
	EXPECT(t_where("later", &where) == 1 && strcmp(where, "failed") == 0,
	    "cancelled deferred job is in %s/", where);
	EXPECT_STATUS("queued", "failed", 0);

	code = CHUTE("cancel", T.spool, "queued");
	EXPECT(code == 1, "cancelling a failed job should exit 1, got %d", code);
	code = CHUTE("cancel", T.spool, "nosuch");
	EXPECT(code == 1, "cancelling an unknown job should exit 1, got %d", code);

	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_journal_total() == 0, "a cancelled job ran");
	EXPECT(t_exists(SP("failed", "queued")) && t_exists(SP("failed", "later")),
	    "the owner moved a cancelled job");
}
END_TEST

/* A running job is cancelled by `chute cancel` or by a hand mv out of cur/. */
static void
t_cancel_running(bool by_hand)
{
	pid_t owner = OWNER(QUICK, "--", h_block()), hpid;
	const char *where;
	char *log;
	int code;

	t_submit_as("victim", "x");
	WAIT_UNTIL(t_journal_count("victim") == 1, 10000,
	    "waited 10 s for victim's handler to start");
	hpid = t_handler_pid("victim");
	EXPECT(t_alive(hpid), "victim's handler is not running");
	if (by_hand) {
		EXPECT(rename(SP("cur", "victim"), SP("failed", "victim")) == 0,
		    "mv cur/victim failed/: %s", strerror(errno));
	} else {
		code = CHUTE("cancel", T.spool, "victim");
		EXPECT(code == 0, "chute cancel of a running job exited %d: %s", code, T.err);
	}
	EXPECT(t_await("victim", 5000) == 1, "cancelled job did not end in failed/");
	WAIT_UNTIL(!t_alive(hpid), 5000,
	    "the cancelled job's handler (pid %d) still runs after 5 s", (int)hpid);
	EXPECT(t_where("victim", &where) == 1 && strcmp(where, "failed") == 0,
	    "victim is in %s/ after its handler stopped", where);

	/* the owner carries on, and the cancelled job stays cancelled */
	t_release();
	t_submit_as("next", "x");
	EXPECT(t_await("next", 10000) == 0, "the owner stopped working after a cancel");
	EXPECT(t_where("victim", &where) == 1 && strcmp(where, "failed") == 0,
	    "victim moved to %s/ after the cancel", where);
	EXPECT(t_journal_count("victim") == 1, "a cancelled job was run again");
	log = t_slurp(SP("log", "victim"));
	EXPECT(log && strstr(log, "cancelled"), "log/victim does not record the cancel");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}

START_TEST(test_cancel_of_a_running_job_stops_the_handler_and_fails_it)
{
	t_cancel_running(false);
}
END_TEST

START_TEST(test_moving_a_running_job_out_of_cur_by_hand_cancels_it)
{
	t_cancel_running(true);
}
END_TEST

START_TEST(test_symlink_in_new_is_never_followed)
{
	struct stat before, after, calib;
	struct timespec old[2] = { { 1000000000, 0 }, { UTIME_OMIT, 0 } };
	bool atime_works;
	char *secret, *log;
	int code;

	/* Does reading a file update its atime here (relatime, atime < mtime)? */
	t_write(RP("calib"), "calibration");
	EXPECT(utimensat(AT_FDCWD, RP("calib"), old, 0) == 0, "utimensat calib");
	free(t_slurp(RP("calib")));
	EXPECT(stat(RP("calib"), &calib) == 0, "stat calib");
	atime_works = calib.st_atim.tv_sec != 1000000000;

	t_write(RP("secret"), "SECRET outside the spool\n");
	EXPECT(utimensat(AT_FDCWD, RP("secret"), old, 0) == 0, "utimensat secret");
	EXPECT(stat(RP("secret"), &before) == 0, "stat secret");
	EXPECT(symlink(RP("secret"), SP("new", "link")) == 0, "symlink: %s", strerror(errno));
	t_submit_as("after", "x");

	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_exists(SP("done", "after")), "the job after the symlink did not finish");
	EXPECT(t_await("link", 1000) == 1, "the symlink did not end in failed/");
	EXPECT(lstat(SP("failed", "link"), &after) == 0 && S_ISLNK(after.st_mode),
	    "failed/link is not the symlink itself");
	EXPECT(t_journal_count("link") == 0 && !t_exists(RP("seen/link")),
	    "a handler ran on the symlink");
	EXPECT(stat(RP("secret"), &after) == 0, "stat secret");
	EXPECT(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
	    "the symlink's target was written to");
	if (atime_works)
		EXPECT(after.st_atim.tv_sec == 1000000000,
		    "the symlink's target was read (its atime changed)");
	secret = t_slurp(RP("secret"));	/* only now: this read moves the atime */
	EXPECT(secret && strcmp(secret, "SECRET outside the spool\n") == 0,
	    "the symlink's target was changed");
	log = t_slurp(SP("log", "link"));
	EXPECT(log && strstr(log, "not a regular file"),
	    "log/link does not give the reason: '%s'", log ? log : "(no log)");
}
END_TEST

START_TEST(test_fifo_and_directory_in_new_fail_without_blocking_the_owner)
{
	struct stat st;
	int code;

	EXPECT(mkfifo(SP("new", "pipe"), 0644) == 0, "mkfifo: %s", strerror(errno));
	EXPECT(mkdir(SP("new", "adir"), 0755) == 0, "mkdir: %s", strerror(errno));
	t_submit_as("after", "x");
	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_exists(SP("done", "after")), "the job after the FIFO did not finish");
	EXPECT(lstat(SP("failed", "pipe"), &st) == 0 && S_ISFIFO(st.st_mode),
	    "the FIFO did not end in failed/");
	EXPECT(lstat(SP("failed", "adir"), &st) == 0 && S_ISDIR(st.st_mode),
	    "the directory did not end in failed/");
	EXPECT(t_journal_count("pipe") == 0 && t_journal_count("adir") == 0,
	    "a handler ran on a FIFO or a directory");
}
END_TEST

START_TEST(test_handler_gets_its_environment_and_the_braces_argument)
{
	const char *h = t_handler("h_env",
	    "{ printf 'SPOOL=%s\\n' \"$CHUTE_SPOOL\"; printf 'ID=%s\\n' \"$CHUTE_ID\";\n"
	    "  printf 'JOB=%s\\n' \"$CHUTE_JOB\"; printf 'ATTEMPT=%s\\n' \"$CHUTE_ATTEMPT\";\n"
	    "  printf 'ARGC=%s\\n' \"$#\"; printf 'ARG1=%s\\n' \"$1\";\n"
	    "  printf 'ARG2=%s\\n' \"$2\"; printf 'ARG3=%s\\n' \"$3\"; } > \"$R/env\"\n"
	    "cat > \"$R/stdin\"\n"
	    "cat \"$1\" > \"$R/arg\"\n");
	char *env, *in, *arg, want[4 * sizeof T.spool + 256];
	pid_t owner;
	int code;

	t_submit_as("envjob", "job body\n");
	/* a relative spool path: CHUTE_SPOOL must still be absolute */
	owner = t_owner(T.root, "spool", "--drain", QUICK, "--", h, "{}", "x{}", "plain",
	    (const char *)NULL);
	code = t_reap(owner, 30000, "chute run --drain");
	EXPECT(code == 0, "drain exited %d:\n%s", code, t_log_of(owner));
	EXPECT(t_exists(SP("done", "envjob")), "envjob did not finish");
	env = t_slurp(RP("env"));
	EXPECT(env != NULL, "the handler did not run");
	snprintf(want, sizeof want,
	    "SPOOL=%s\nID=envjob\nJOB=%s/cur/envjob\nATTEMPT=1\nARGC=3\n"
	    "ARG1=%s/cur/envjob\nARG2=x{}\nARG3=plain\n", T.spool, T.spool, T.spool);
	EXPECT(strcmp(env, want) == 0, "handler environment and arguments:\n%s\nexpected:\n%s",
	    env, want);
	in = t_slurp(RP("stdin"));
	arg = t_slurp(RP("arg"));
	EXPECT(in && strcmp(in, "job body\n") == 0, "stdin was '%s'", in ? in : "");
	EXPECT(arg && strcmp(arg, "job body\n") == 0, "{} file held '%s'", arg ? arg : "");
}
END_TEST

START_TEST(test_backlog_in_new_runs_oldest_first)
{
	char *j;
	int64_t now = t_now();
	int code;

	/* names in reverse order of age, so name order would be wrong */
	t_drop("z", "x");
	t_drop("y", "x");
	t_drop("x", "x");
	t_set_mtime(SP("new", "z"), now - 30000);
	t_set_mtime(SP("new", "y"), now - 20000);
	t_set_mtime(SP("new", "x"), now - 10000);
	code = DRAIN(QUICK, "-j", "1", "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	j = t_slurp(RP("journal"));
	EXPECT(j && strcmp(j, "z 1\ny 1\nx 1\n") == 0,
	    "backlog ran in the order:\n%s(expected z, y, x: oldest first)", j ? j : "");
}
END_TEST

START_TEST(test_no_more_than_j_handlers_run_at_once)
{
	const char *h = t_handler("h_count",
	    "echo $$ >> \"$R/hpids\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $(ls \"$CHUTE_SPOOL/cur\" | wc -l)\" >> \"$R/journal\"\n"
	    "i=0\n"
	    "while [ ! -e \"$R/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n");
	pid_t owner = OWNER("-j", "2", QUICK, "--", h);
	char *j, *l, id[16];

	for (int i = 0; i < 6; i++) {
		snprintf(id, sizeof id, "j%d", i);
		t_submit_as(id, "x");
	}
	WAIT_UNTIL(t_journal_total() == 2, 10000,
	    "waited 10 s for 2 handlers to run at once with -j 2 (journal has %d)",
	    t_journal_total());
	EXPECT(t_count_state("cur") == 2, "with -j 2 and 2 blocked handlers, cur/ has %d",
	    t_count_state("cur"));
	t_release();
	for (int i = 0; i < 6; i++) {
		snprintf(id, sizeof id, "j%d", i);
		EXPECT(t_await(id, 10000) == 0, "%s failed", id);
	}
	j = t_slurp(RP("journal"));
	for (int i = 0; (l = t_line(j, i)) != NULL; i++)
		EXPECT(atoi(t_last_word(l)) <= 2, "a handler saw %s jobs in cur/ with -j 2",
		    t_last_word(l));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Ownership, shutdown and crashes                                    */
/* ------------------------------------------------------------------ */

/*
 * An owner killed while starting a handler leaves the spool lock held for
 * a moment by the child that has not exec'd yet.  Simulated: a process
 * takes the lock and exits, leaving a child that shares the locked file
 * for 500 ms.  A new owner must wait that out, not exit 75.
 */
START_TEST(test_lock_held_by_a_dead_owners_straggler_child_is_waited_out)
{
	int ready[2];
	pid_t locker, owner;
	char c;

	EXPECT(pipe2(ready, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	if ((locker = fork()) == 0) {
		int fd = open(P("%s/owner.lock", T.spool), O_RDONLY | O_CLOEXEC);
		if (fd == -1 || flock(fd, LOCK_EX) == -1)
			_exit(1);
		if (fork() == 0) {	/* the straggler: holds fd, then exits */
			struct timespec ts = { 0, 500 * 1000 * 1000 };
			write(ready[1], "x", 1);
			nanosleep(&ts, NULL);
			_exit(0);
		}
		_exit(0);		/* the "owner" dies first */
	}
	/* Only the children hold the write end now: no straggler, no byte but EOF. */
	close(ready[1]);
	EXPECT(read(ready[0], &c, 1) == 1, "the straggler did not start");
	t_reap(locker, 5000, "the dead owner");
	t_submit_as("after", "x");
	owner = OWNER("--drain", QUICK, "--", h_journal());
	EXPECT(t_reap(owner, 10000, "owner after a straggler") == 0,
	    "the owner did not wait for the straggler:\n%s", t_log_of(owner));
	EXPECT(t_exists(SP("done", "after")), "the job did not run");
	close(ready[0]);
}
END_TEST

/* Refused before the spool is touched: no lock taken, no job claimed. */
START_TEST(test_run_with_a_handler_that_cannot_be_executed_is_a_usage_error)
{
	char notexec[1200];
	const char *bad[] = { "no-such-handler-anywhere", "/nonexistent/handler",
	    T.root, notexec };
	int code;

	snprintf(notexec, sizeof(notexec), "%s", RP("notexec"));
	t_write(notexec, "#!/bin/sh\nexit 0\n");
	EXPECT(chmod(notexec, 0644) == 0, "chmod %s: %s", notexec, strerror(errno));
	t_submit_as("waiting", "x");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		code = CHUTE("run", T.spool, "--drain", "--", bad[i]);
		EXPECT(code == 64, "run -- %s exited %d, not 64", bad[i], code);
		EXPECT(strstr(T.err, bad[i]) != NULL &&
		    strstr(T.err, "not found or not executable") != NULL,
		    "run -- %s: the message does not name it: %s", bad[i], T.err);
	}
	EXPECT(t_exists(SP("new", "waiting")), "a refused run moved the job");
}
END_TEST

START_TEST(test_second_owner_is_refused_with_75_naming_the_owner_pid)
{
	pid_t owner = OWNER(QUICK, "--", h_journal()), second;
	char *log;
	int code;

	t_await_lock(owner, 5000);
	second = OWNER(QUICK, "--", h_journal());
	code = t_reap(second, 10000, "a second chute run on an owned spool");
	log = strdup(t_log_of(second));
	EXPECT(code == 75, "a second owner exited %d, not 75:\n%s", code, log);
	EXPECT(t_number_in(log, (long)owner),
	    "the refusal does not name the owner's pid %d:\n%s", (int)owner, log);
	EXPECT(strstr(log, T.spool) != NULL, "the refusal does not name the spool:\n%s", log);
	EXPECT(t_lock_held_by(owner), "the refused owner disturbed the lock");

	/* the first owner still works */
	t_submit_as("still", "x");
	EXPECT(t_await("still", 10000) == 0, "the owner stopped working");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

/*
 * An owner of an earlier release locks only the spool directory and
 * writes its pid into owner.pid.  Simulated by a process of the spool
 * owner's user (root here) that does both: a new owner is refused with
 * 75 naming it (quietly with --if-unowned), `chute workers` names it, and
 * once it is gone the new owner starts.
 */
START_TEST(test_an_earlier_releases_owner_on_the_spool_directory_keeps_a_new_one_out)
{
	int64_t deadline;
	int hold[2];
	pid_t old, owner;
	char c;
	int code;

	EXPECT(pipe2(hold, O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
	if ((old = fork()) == 0) {
		int fd = open(T.spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		FILE *f = fopen(P("%s/owner.pid", T.spool), "we");

		close(hold[1]);
		if (fd == -1 || flock(fd, LOCK_EX) == -1 || f == NULL ||
		    fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0)
			_exit(1);
		read(hold[0], &c, 1);	/* EOF: the test let go */
		_exit(0);
	}
	close(hold[0]);
	deadline = t_mono() + 5000;
	while (!t_lock_held_by(old) || t_read_pids("spool/owner.pid", &owner,
	    1) != 1) {
		EXPECT(t_mono() < deadline, "the earlier owner %ld took no lock "
		    "or wrote no owner.pid in 5 s", (long)old);
		t_nap();
	}
	t_submit_as("later", "x");
	owner = OWNER(QUICK, "--", h_journal());
	code = t_reap(owner, 10000, "a new owner beside an earlier one");
	EXPECT(code == 75 && t_number_in(t_log_of(owner), (long)old),
	    "the new owner exited %d, not 75 naming %ld:\n%s", code,
	    (long)old, t_log_of(owner));
	code = CHUTE("run", T.spool, "--if-unowned", "--drain", "--",
	    h_journal());
	EXPECT(code == 0 && T.err[0] == '\0' && t_exists(SP("new", "later")),
	    "run --if-unowned beside an earlier owner: %d %s", code, T.err);
	code = CHUTE("workers", T.spool);
	EXPECT(code == 0 && strstr(T.out, P(":%ld ", (long)old)) != NULL,
	    "chute workers does not name the earlier owner %ld:\n%s",
	    (long)old, T.out);
	close(hold[1]);
	t_reap(old, 5000, "the earlier owner");
	owner = OWNER("--drain", QUICK, "--", h_journal());
	EXPECT(t_reap(owner, 10000, "the new owner") == 0 &&
	    t_exists(SP("done", "later")), "the new owner did not run later:\n%s",
	    t_log_of(owner));
}
END_TEST

/*
 * chute init makes owner.lock 0600; one that its group or others may
 * open (or not a regular file) is refused with one line, exit 78, the
 * job untouched: another user may hold it.
 */
START_TEST(test_an_owner_lock_others_could_open_is_refused_with_78)
{
	const char *lock = P("%s/owner.lock", T.spool);
	struct stat st;
	int code;

	EXPECT(lstat(lock, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & 07777) == 0600, "chute init made no owner.lock 0600");
	t_submit_as("kept", "x");
	EXPECT(chmod(lock, 0644) == 0, "chmod: %s", strerror(errno));
	code = CHUTE("run", T.spool, "--drain", "--", h_journal());
	EXPECT(code == 78 && strstr(T.err, "owner.lock: ") != NULL &&
	    strstr(T.err, "mode 0600") != NULL && t_nlines(T.err) == 1,
	    "run beside an owner.lock 0644: %d %s", code, T.err);
	EXPECT(t_exists(SP("new", "kept")), "the refused run moved the job");
	EXPECT(unlink(lock) == 0 && symlink("/etc/passwd", lock) == 0,
	    "symlink: %s", strerror(errno));
	code = CHUTE("run", T.spool, "--drain", "--", h_journal());
	EXPECT(code == 78, "run beside a symlinked owner.lock: %d %s", code,
	    T.err);
	EXPECT(unlink(lock) == 0, "unlink: %s", strerror(errno));
	code = CHUTE("run", T.spool, "--drain", "--", h_journal());
	EXPECT(code == 0 && t_exists(SP("done", "kept")) &&
	    lstat(lock, &st) == 0 && (st.st_mode & 07777) == 0600,
	    "run of a spool without owner.lock: %d %s", code, T.err);
}
END_TEST

START_TEST(test_wait_lock_standby_takes_over_when_the_owner_is_killed)
{
	pid_t owner = OWNER(QUICK, "--", h_journal()), standby;
	int code;

	t_await_lock(owner, 5000);
	standby = OWNER("--wait-lock", QUICK, "--", h_journal());
	t_submit_as("first", "x");
	EXPECT(t_await("first", 10000) == 0, "first failed");
	EXPECT(!t_poll_exit(standby, &code), "the --wait-lock standby exited with %d"
	    " while the owner lived:\n%s", code, t_log_of(standby));
	EXPECT(t_lock_held_by(owner) && !t_lock_held_by(standby),
	    "the lock moved while the owner lived");

	kill(owner, SIGKILL);
	t_reap(owner, 5000, "owner after SIGKILL");
	t_await_lock(standby, 10000);
	t_submit_as("second", "x");
	EXPECT(t_await("second", 10000) == 0, "the standby did not run 'second'");
	EXPECT(t_journal_count("second") == 1, "second ran %d times", t_journal_count("second"));
	code = CHUTE("stats", T.spool);
	EXPECT(code == 0 && t_line_of(T.out, "owner") &&
	    t_token(t_line_of(T.out, "owner"), P("%d", (int)standby)),
	    "stats does not name the standby %d as owner:\n%s", (int)standby, T.out);
	EXPECT(t_stop(standby) == 0, "standby did not exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_sigterm_returns_a_running_job_to_new_without_counting_the_attempt)
{
	pid_t owner = OWNER(QUICK, "--", h_block()), hpid;
	const char *where;
	char *log;
	int code;

	t_submit_as("longrun", "x");
	WAIT_UNTIL(t_journal_count("longrun") == 1, 10000,
	    "waited 10 s for longrun's handler to start");
	hpid = t_handler_pid("longrun");
	code = t_stop(owner);
	EXPECT(code == 0, "owner exited %d after SIGTERM, not 0:\n%s", code, t_log_of(owner));
	EXPECT(t_where("longrun", &where) == 1 && strcmp(where, "new") == 0,
	    "the interrupted job is in %s/, not new/", where);
	EXPECT(!t_alive(hpid), "the handler (pid %d) outlived the owner's shutdown", (int)hpid);
	EXPECT_STATUS("longrun", "new", 0);
	log = t_slurp(SP("log", "longrun"));
	EXPECT(log && strstr(log, "interrupted"), "log/longrun does not record the interruption");

	t_release();
	code = DRAIN(QUICK, "--", h_block());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_await("longrun", 1000) == 0, "longrun did not finish after a restart");
	EXPECT(t_journal_count("longrun") == 2 && !t_journal_has("longrun", 2),
	    "the interrupted attempt was counted (the rerun was not attempt 1)");
	EXPECT_STATUS("longrun", "done", 1);
}
END_TEST

START_TEST(test_sigterm_kills_a_handler_that_ignores_it_after_the_grace)
{
	const char *h = t_handler("h_deaf",
	    "echo $$ >> \"$R/hpids\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
	    "trap '' TERM\n"
	    "i=0\n"
	    "while [ ! -e \"$R/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n");
	pid_t owner = OWNER("--grace", "500ms", "--", h), hpid;
	const char *where;
	int64_t t0, took;
	int code;

	t_submit_as("deaf", "x");
	WAIT_UNTIL(t_journal_count("deaf") == 1, 10000, "waited 10 s for deaf's handler");
	hpid = t_handler_pid("deaf");
	t0 = t_mono();
	code = t_stop(owner);
	took = t_mono() - t0;
	EXPECT(code == 0, "owner exited %d after SIGTERM, not 0", code);
	EXPECT(took >= 400, "the owner exited after %lld ms, before the 500 ms grace",
	    (long long)took);
	EXPECT(took < 5000, "the owner took %lld ms to stop with a 500 ms grace",
	    (long long)took);
	EXPECT(!t_alive(hpid), "the handler ignoring SIGTERM survived the shutdown");
	EXPECT(t_where("deaf", &where) == 1 && strcmp(where, "new") == 0,
	    "the interrupted job is in %s/, not new/", where);
	EXPECT_STATUS("deaf", "new", 0);
}
END_TEST

/*
 * An attempt ends with its handler: what it left running in its process
 * group (here a sleep of 30 s holding a witness lock, which the job's
 * flock does not cover: a background command of sh has /dev/null as
 * stdin) is killed before the outcome is recorded, so the job's next
 * attempt never runs beside it.
 */
START_TEST(test_what_a_handler_leaves_in_its_group_dies_before_its_job_runs_again)
{
	const char *h = t_handler("h_leaves",
	    "exec 9>>\"$R/witness\"\n"
	    "flock -n 9 || { echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/overlap\"; exit 1; }\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
	    "[ \"$CHUTE_ATTEMPT\" = 1 ] || exit 0\n"
	    "sleep 30 &\n"
	    "echo $! >> \"$R/hpids\"; echo $! > \"$R/grandchild\"\n"
	    "exit 75\n");
	char *g;
	int code;
	long pid = 0;

	t_write(RP("witness"), "");
	t_submit_as("leaves", "x");
	code = DRAIN(QUICK, "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(!t_exists(RP("overlap")), "attempt 2 ran beside attempt 1's "
	    "child: %s", t_snip(t_slurp(RP("overlap"))));
	EXPECT_STATUS("leaves", "done", 2);
	g = t_slurp(RP("grandchild"));
	EXPECT(g != NULL && sscanf(g, "%ld", &pid) == 1 && pid > 0,
	    "attempt 1 recorded no child");
	free(g);
	EXPECT(!t_alive((pid_t)pid), "attempt 1's child %ld outlived it", pid);
}
END_TEST

START_TEST(test_kill_9_of_the_owner_loses_no_job_and_a_restart_finishes_all)
{
	const char *h = h_block(), *where;
	char ids[10][256], path[16];
	pid_t owner, restart;
	int code, n;

	for (int i = 0; i < 10; i++) {
		snprintf(path, sizeof path, "f%d", i);
		t_write(RP(path), path);
	}
	code = CHUTE("submit", T.spool, RP("f0"), RP("f1"), RP("f2"), RP("f3"), RP("f4"),
	    RP("f5"), RP("f6"), RP("f7"), RP("f8"), RP("f9"));
	EXPECT(code == 0 && t_nlines(T.out) == 10, "submit of 10 files: %d '%s'", code, T.err);
	for (int i = 0; i < 10; i++)
		snprintf(ids[i], sizeof ids[i], "%s", t_line(T.out, i));

	owner = OWNER("-j", "3", QUICK, "--", h);
	WAIT_UNTIL(t_journal_total() == 3, 10000,
	    "waited 10 s for 3 handlers to start (journal has %d)", t_journal_total());
	kill(owner, SIGKILL);
	t_reap(owner, 5000, "owner after SIGKILL");
	EXPECT(t_count_state("cur") == 3 && t_count_state("new") == 7,
	    "after kill -9: cur/ %d, new/ %d (expected 3 and 7)",
	    t_count_state("cur"), t_count_state("new"));

	/*
	 * Restart while the orphaned handlers still run: they must not hold the
	 * lock (it is close-on-exec), and their jobs go back to new/.
	 */
	restart = OWNER("--drain", "-j", "3", QUICK, "--", h);
	t_await_lock(restart, 5000);
	t_release();
	code = t_reap(restart, 30000, "restarted chute run --drain");
	EXPECT(code == 0, "the restarted owner exited %d:\n%s", code, t_log_of(restart));
	for (int i = 0; i < 10; i++) {
		n = t_where(ids[i], &where);
		EXPECT(n == 1, "job %s is in %d state directories", ids[i], n);
		EXPECT(strcmp(where, "done") == 0, "job %s ended in %s/, not done/",
		    ids[i], where);
		EXPECT(t_journal_count(ids[i]) >= 1, "job %s never ran", ids[i]);
	}
	EXPECT(t_count_state("done") == 10, "done/ has %d jobs, not 10",
	    t_count_state("done"));
	EXPECT(t_count_state("new") == 0 && t_count_state("cur") == 0 &&
	    t_count_state("defer") == 0 && t_count_state("failed") == 0 &&
	    t_count_state("tmp") == 0, "jobs left outside done/ after the drain");
	EXPECT(t_journal_total() >= 13, "the 3 interrupted jobs were not run again"
	    " (journal has %d lines)", t_journal_total());
}
END_TEST

START_TEST(test_job_left_in_cur_is_run_again_at_startup)
{
	const char *where;
	int code;

	/* what a dead owner leaves: a claimed job with no handler */
	t_write(SP("cur", "orphan"), "orphaned\n");
	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_where("orphan", &where) == 1 && strcmp(where, "done") == 0,
	    "the orphan from cur/ is in %s/", where);
	EXPECT(t_journal_count("orphan") == 1, "the orphan ran %d times",
	    t_journal_count("orphan"));
}
END_TEST

START_TEST(test_startup_removes_stale_tmp_files_but_keeps_fresh_ones)
{
	int code;

	t_write(SP("tmp", "stale"), "37 hours old");
	t_set_mtime(SP("tmp", "stale"), t_now() - 37LL * 3600 * 1000);
	t_write(SP("tmp", "fresh"), "being written");
	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(!t_exists(SP("tmp", "stale")), "a 37-hour-old tmp/ file was not removed");
	EXPECT(t_exists(SP("tmp", "fresh")), "a fresh tmp/ file was removed");
	EXPECT(t_journal_total() == 0, "a tmp/ file was run");
}
END_TEST

/* ------------------------------------------------------------------ */
/* The other commands                                                 */
/* ------------------------------------------------------------------ */

static const char *
h_fail_bad(void)
{
	/* jobs whose ID starts with "bad" fail with exit 3 */
	return t_handler("h_fail_bad",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "case \"$CHUTE_ID\" in bad*) exit 3;; esac\n"
	    "exit 0\n");
}

START_TEST(test_wait_exits_0_when_all_done_and_1_when_any_failed)
{
	int code;

	t_submit_as("good1", "x");
	t_submit_as("good2", "x");
	t_submit_as("bad1", "x");
	code = DRAIN(QUICK, "--", h_fail_bad());
	EXPECT(code == 0, "drain exited %d", code);
	code = CHUTE("wait", T.spool, "--timeout", "5s", "good1", "good2");
	EXPECT(code == 0, "wait on two done jobs exited %d: %s", code, T.err);
	code = CHUTE("wait", T.spool, "--timeout", "5s", "good1", "bad1");
	EXPECT(code == 1, "wait on a done and a failed job exited %d", code);
	code = CHUTE("wait", T.spool, "bad1");
	EXPECT(code == 1, "wait on a failed job exited %d", code);
}
END_TEST

START_TEST(test_wait_times_out_with_124)
{
	int64_t t0, took;
	int code;

	t_submit_as("stuck", "x");	/* no owner: it stays in new/ */
	t0 = t_mono();
	code = CHUTE("wait", T.spool, "--timeout", "300ms", "stuck");
	took = t_mono() - t0;
	EXPECT(code == 124, "wait on a queued job with no owner exited %d, not 124", code);
	EXPECT(took >= 250, "wait --timeout 300ms returned after %lld ms", (long long)took);
	EXPECT(took < 5000, "wait --timeout 300ms took %lld ms", (long long)took);
	EXPECT(t_exists(SP("new", "stuck")), "wait moved the job");
}
END_TEST

START_TEST(test_wait_on_an_unknown_id_exits_1_at_once)
{
	int64_t t0, took;
	int code;

	t_submit_as("known", "x");
	t0 = t_mono();
	code = CHUTE("wait", T.spool, "--timeout", "30s", "known", "nosuch");
	took = t_mono() - t0;
	EXPECT(code == 1, "wait on an unknown ID exited %d, not 1", code);
	EXPECT(took < 3000, "wait on an unknown ID took %lld ms instead of exiting at once",
	    (long long)took);
	EXPECT(strstr(T.err, "nosuch") && strstr(T.err, "unknown job"),
	    "the error does not say 'nosuch' is an unknown job: '%s'", T.err);
}
END_TEST

START_TEST(test_wait_returns_when_a_queued_job_finishes)
{
	const char *argv[] = { T.bin, "wait", T.spool, "--timeout", "20s", "queued",
	    NULL };
	pid_t waiter, owner;
	int code;

	t_submit_as("queued", "x");
	waiter = t_spawn(argv, NULL, RP("waiter.out"), RP("waiter.out"), NULL);
	/* with no owner the job stays queued, so the waiter must still be waiting */
	t_submit_as("marker", "x");
	EXPECT(t_exists(SP("new", "queued")), "queued left new/ with no owner");
	EXPECT(!t_poll_exit(waiter, &code), "chute wait exited %d while its job was"
	    " still queued", code);
	owner = OWNER(QUICK, "--", h_journal());
	code = t_reap(waiter, 15000, "chute wait on a job being run");
	EXPECT(code == 0, "chute wait exited %d after the job finished:\n%s", code,
	    t_log_of(waiter));
	EXPECT(t_exists(SP("done", "queued")), "wait returned 0 but queued is not in done/");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_status_reports_state_attempts_and_outcome)
{
	char *st;
	int code;

	t_submit_as("good", "x");
	t_submit_as("bad", "x");
	code = DRAIN(QUICK, "--", h_fail_bad());
	EXPECT(code == 0, "drain exited %d", code);
	code = CHUTE_IN(RP("in.good"), "submit", T.spool, "--id", "later", "--delay", "1h");
	EXPECT(code == 0, "submit --delay exited %d", code);
	t_submit_as("waiting", "x");

	code = CHUTE("status", T.spool, "good", "bad", "later", "waiting");
	EXPECT(code == 0, "chute status exited %d: %s", code, T.err);
	EXPECT(t_nlines(T.out) == 4, "expected 4 status lines, got:\n%s", T.out);
	EXPECT_STATUS("good", "done", 1);
	EXPECT_STATUS("bad", "failed", 1);
	st = t_status("bad");
	EXPECT(t_token(st, "exit=3"), "status of bad lacks exit=3: '%s'", st);
	EXPECT_STATUS("later", "defer", 0);
	st = t_status("later");
	EXPECT(strstr(st, " next=") != NULL, "status of a deferred job lacks next=: '%s'", st);
	EXPECT_STATUS("waiting", "new", 0);

	code = CHUTE("status", T.spool, "good", "nosuch", "waiting");
	EXPECT(code == 1, "status with an unknown ID exited %d, not 1", code);
	EXPECT(strstr(T.err, "nosuch") && strstr(T.err, "unknown job"),
	    "the error does not say 'nosuch' is unknown: '%s'", T.err);
	EXPECT(t_line_of(T.out, "good") && t_line_of(T.out, "waiting"),
	    "the known IDs were not printed next to the unknown one:\n%s", T.out);
}
END_TEST

START_TEST(test_purge_removes_old_finished_jobs_and_their_logs)
{
	int64_t old = t_now() - 2 * 3600 * 1000;
	int code;

	t_submit_as("olddone", "x");
	t_submit_as("newdone", "x");
	t_submit_as("badold", "x");
	code = DRAIN(QUICK, "--", h_fail_bad());
	EXPECT(code == 0, "drain exited %d", code);
	t_submit_as("queued", "x");
	EXPECT(t_exists(SP("log", "olddone")) && t_exists(SP("log", "badold")),
	    "finished jobs have no log");
	t_set_mtime(SP("done", "olddone"), old);
	t_set_mtime(SP("failed", "badold"), old);
	t_set_mtime(SP("new", "queued"), old);

	code = CHUTE("purge", T.spool, "--older-than", "1h", "--state", "done");
	EXPECT(code == 0, "purge --state done exited %d: %s", code, T.err);
	EXPECT(!t_exists(SP("done", "olddone")) && !t_exists(SP("log", "olddone")),
	    "an old done job or its log survived purge");
	EXPECT(t_exists(SP("done", "newdone")) && t_exists(SP("log", "newdone")),
	    "purge removed a recent done job");
	EXPECT(t_exists(SP("failed", "badold")), "purge --state done removed a failed job");

	code = CHUTE("purge", T.spool, "--older-than", "1h");
	EXPECT(code == 0, "purge exited %d: %s", code, T.err);
	EXPECT(!t_exists(SP("failed", "badold")) && !t_exists(SP("log", "badold")),
	    "an old failed job or its log survived purge");
	EXPECT(t_exists(SP("new", "queued")), "purge removed a queued job");
	EXPECT(t_exists(SP("done", "newdone")), "purge removed a recent done job");

	code = CHUTE("purge", T.spool, "--older-than", "1h", "--state", "new");
	EXPECT(code == 64, "purge --state new should be a usage error, got %d", code);
	code = CHUTE("purge", T.spool);
	EXPECT(code == 64, "purge without --older-than should be a usage error, got %d", code);
	EXPECT(t_exists(SP("new", "queued")), "a refused purge touched a job");
}
END_TEST

/* ---- retention (issue 38) ---- */

/* When the job in dir ended: its file's ctime (the rename into dir). */
static int64_t
t_ctime_ms(const char *path)
{
	struct stat st;

	if (stat(path, &st) == -1)
		return -1;
	return (int64_t)st.st_ctim.tv_sec * 1000 + st.st_ctim.tv_nsec / 1000000;
}

/* How many inotify watches pid holds (its /proc/PID/fdinfo). */
static int
t_inotify_watches(pid_t pid)
{
	DIR *d = opendir(P("/proc/%ld/fdinfo", (long)pid));
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *info = de->d_name[0] == '.' ? NULL :
		    t_slurp(P("/proc/%ld/fdinfo/%s", (long)pid, de->d_name));

		for (char *p = info; p != NULL && (p = strstr(p,
		    "inotify wd:")) != NULL; p++)
			n++;
		free(info);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/*
 * Done jobs kept 2 s by a running owner: each is removed with its log no
 * sooner than 2 s after it ended (its file's ctime), and no later than the
 * pass's period (an eighth, 250 ms at least) and the machine's delays
 * (2 s here) after that; a failed job (kept forever) stays, log and all.
 */
START_TEST(test_retention_removes_a_done_job_and_its_log_at_its_time_not_before)
{
	pid_t owner;
	int64_t ended, gone;

	EXPECT(CHUTE("retention", T.spool, "--done", "2s") == 0 &&
	    strcmp(T.out, "done 2s\nfailed forever\n") == 0 &&
	    strcmp(t_slurp(P("%s/retention", T.spool)), "done 2s\n"
	    "failed forever\n") == 0, "retention: %s%s", T.out, T.err);
	owner = OWNER(QUICK, "--", h_fail_bad());
	t_submit_as("a", "x");
	t_submit_as("bad", "x");
	WAIT_UNTIL(t_exists(SP("done", "a")) && t_exists(SP("failed", "bad")),
	    10000, "both jobs end");
	ended = t_ctime_ms(SP("done", "a"));
	EXPECT(ended > 0 && t_exists(SP("log", "a")), "a's end and log");
	while (t_exists(SP("done", "a"))) {
		EXPECT(t_now() < ended + 10000, "a still there 10 s after it "
		    "ended");
		t_nap();
	}
	gone = t_now();
	EXPECT(gone >= ended + 2000, "a removed %lld ms after its end, before"
	    " its 2 s", (long long)(gone - ended));
	EXPECT(gone <= ended + 2000 + 250 + 2000, "a removed %lld ms after its"
	    " end: past the bound", (long long)(gone - ended));
	WAIT_UNTIL(!t_exists(SP("log", "a")), 1000, "a's log goes with it");
	EXPECT(t_exists(SP("failed", "bad")) && t_exists(SP("log", "bad")),
	    "a failed job, kept forever, stays with its log");
	EXPECT(CHUTE("status", T.spool, "a") == 1 && strstr(T.err, "a: not "
	    "found: unknown, or finished and removed by the retention of ") &&
	    strstr(T.err, "(done 2s, failed forever)"), "status: %s", T.err);
	EXPECT(CHUTE("log", T.spool, "a") == 1 && strstr(T.err, "retention"),
	    "log: %s", T.err);
	EXPECT(CHUTE("stats", T.spool) == 0 && strstr(T.out, "\nretention "
	    "        done 2s, failed forever\n"), "stats: %s", T.out);
	EXPECT(t_stop(owner) == 0, "owner stops");
}
END_TEST

/*
 * Done jobs kept 0: a `chute wait` blocked on a running job gets its
 * success though the owner removed it at once (its arrival in done/ was
 * seen); a wait after that says it may have been removed.
 */
START_TEST(test_wait_blocked_on_a_job_kept_0_returns_its_outcome)
{
	const char *argv[] = { T.bin, "wait", T.spool, "--timeout", "20s", "b",
	    NULL };
	pid_t owner, waiter;

	EXPECT(CHUTE("retention", T.spool, "--done", "0") == 0, "retention: %s",
	    T.err);
	owner = OWNER(QUICK, "--", h_block());
	t_submit_as("b", "x");
	WAIT_UNTIL(t_handler_pid("b") > 0, 10000, "b runs");
	waiter = t_spawn(argv, NULL, RP("waiter.out"), RP("waiter.out"), NULL);
	/* Its watch of done/ and failed/ is there: no arrival is missed. */
	WAIT_UNTIL(t_inotify_watches(waiter) == 2, 10000, "the wait watches");
	/* Stopped, it looks again only once b is gone from done/. */
	EXPECT(kill(waiter, SIGSTOP) == 0, "SIGSTOP the wait");
	t_release();
	WAIT_UNTIL(!t_exists(SP("done", "b")) && !t_exists(SP("log", "b")) &&
	    !t_exists(SP("cur", "b")), 5000, "b and its log removed");
	EXPECT(kill(waiter, SIGCONT) == 0, "SIGCONT the wait");
	EXPECT(t_reap(waiter, 15000, "chute wait b") == 0, "wait: %s",
	    t_log_of(waiter));
	EXPECT(CHUTE("wait", T.spool, "b") == 1 && strstr(T.err, "b: not found:"
	    " unknown, or finished and removed by the retention") &&
	    strstr(T.err, "(done 0, failed forever)"), "wait: %s", T.err);
	EXPECT(t_stop(owner) == 0, "owner stops");
	/* Kept 0, a job done at the owner's last turns goes before it exits. */
	t_submit_as("c", "x");
	EXPECT(DRAIN(QUICK, "--", h_journal()) == 0 &&
	    !t_exists(SP("done", "c")) && !t_exists(SP("log", "c")),
	    "drained, c is not kept");
}
END_TEST

/*
 * Done jobs kept 0, and a wait stopped while more jobs end than the
 * kernel queues events for (fs.inotify.max_queued_events): the end of
 * the job it waits for is among the dropped events, so it cannot know
 * it; it says that events were lost, before "not found", exit 1.
 */
START_TEST(test_a_wait_that_lost_events_says_so)
{
	const char *argv[] = { T.bin, "wait", T.spool, "--timeout", "60s", "z",
	    NULL };
	const char *h = t_handler("h_pw", "while IFS=\"$(printf '\\t')\" "
	    "read -r id p; do echo ok; done\n");
	char *max = t_slurp("/proc/sys/fs/inotify/max_queued_events");
	long n = max != NULL ? atol(max) + 100 : 0;
	pid_t waiter;

	EXPECT(n > 100 && n < 1000000, "max_queued_events: %s", max);
	EXPECT(CHUTE("retention", T.spool, "--done", "0") == 0, "retention: %s",
	    T.err);
	for (long i = 0; i < n; i++)
		t_drop(P("a%06ld", i), "x");
	t_drop("z", "x");
	waiter = t_spawn(argv, NULL, RP("waiter.out"), RP("waiter.out"), NULL);
	WAIT_UNTIL(t_inotify_watches(waiter) == 2, 10000, "the wait watches");
	EXPECT(kill(waiter, SIGSTOP) == 0, "SIGSTOP the wait");
	EXPECT(t_reap(OWNER("--drain", "--persistent", "-j", "2", "--", h),
	    120000, "chute run --drain") == 0, "drained");
	EXPECT(t_entries(P("%s/done", T.spool)) == 0, "none kept");
	EXPECT(kill(waiter, SIGCONT) == 0, "SIGCONT the wait");
	EXPECT(t_reap(waiter, 15000, "chute wait z") == 1, "wait: %s",
	    t_log_of(waiter));
	EXPECT(t_log_count(waiter, "inotify dropped events while this wait "
	    "was not reading") == 1 && t_log_count(waiter, "z: not found") ==
	    1, "said: %s", t_log_of(waiter));
	free(max);
}
END_TEST

/* Not a duration: one line and the usage, exit 64, nothing written. */
START_TEST(test_retention_refuses_bad_durations_and_touches_nothing)
{
	const char *bad[] = { "-1", "1x", "", "forever1", "99999999999d",
	    "1.5h", "-0" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT(CHUTE("retention", T.spool, "--failed", "1h", "--done",
		    bad[i]) == 64 && strstr(T.err, P("--done %s: not a duration, "
		    "0 or forever", bad[i])) && T.out[0] == '\0', "--done '%s':"
		    " %s", bad[i], T.err);
		EXPECT(!t_exists(P("%s/retention", T.spool)), "--done '%s' wrote"
		    " the setting", bad[i]);
	}
	EXPECT(CHUTE("retention", T.spool, "--keep", "1h") == 64,
	    "an unknown option");
	EXPECT(CHUTE("retention", T.spool) == 0 && strcmp(T.out,
	    "done forever\nfailed forever\n") == 0, "the default: %s", T.out);
	EXPECT(CHUTE("stats", T.spool) == 0 && !strstr(T.out, "retention"),
	    "stats of the default shows no retention: %s", T.out);
	t_write(P("%s/retention", T.spool), "done soon\n");
	EXPECT(CHUTE("retention", T.spool) == 78 && strstr(T.err, "/retention:"
	    " line 1 is not 'done DUR' or 'failed DUR'; `chute retention SPOOL "
	    "--done DUR --failed DUR` writes it anew") && t_nlines(T.err) == 1,
	    "a file not in its form: %s", T.err);
	t_write(P("%s/retention", T.spool), "done 1h\nfailed 1h \n");
	EXPECT(CHUTE("retention", T.spool) == 78 && strstr(T.err, "/retention:"
	    " line 2 is not"), "its second line: %s", T.err);
	t_write(P("%s/retention", T.spool), "done 1h");
	EXPECT(CHUTE("retention", T.spool) == 78 && strstr(T.err, "/retention:"
	    " its last line has no newline;"), "no newline: %s", T.err);
	t_write(P("%s/retention", T.spool), "done soon\n");
	EXPECT(CHUTE("retention", T.spool, "--done", "7d") == 78,
	    "set one state over it: the other is not known");
	/* A FIFO and a symbolic link: said as such, and both set repairs. */
	unlink(P("%s/retention", T.spool));
	EXPECT(mkfifo(P("%s/retention", T.spool), 0644) == 0, "mkfifo");
	EXPECT(CHUTE("retention", T.spool) == 78 && strstr(T.err,
	    "/retention: not a regular file;") && t_nlines(T.err) == 1,
	    "a FIFO: %s", T.err);
	EXPECT(CHUTE("retention", T.spool, "--done", "7d", "--failed",
	    "forever") == 0 && strcmp(T.out, "done 7d\nfailed forever\n") ==
	    0, "both set over a FIFO: %s%s", T.out, T.err);
	unlink(P("%s/retention", T.spool));
	t_write(RP("target"), "done 1s\nfailed 1s\n");
	EXPECT(symlink(RP("target"), P("%s/retention", T.spool)) == 0,
	    "symlink");
	EXPECT(CHUTE("retention", T.spool) == 78 && strstr(T.err,
	    "/retention: a symbolic link, not followed;"), "a symlink: %s",
	    T.err);
	EXPECT(CHUTE("retention", T.spool, "--done", "7d", "--failed",
	    "forever") == 0, "both set over a symlink: %s", T.err);
	EXPECT(strcmp(t_slurp(RP("target")), "done 1s\nfailed 1s\n") == 0 &&
	    strcmp(t_slurp(P("%s/retention", T.spool)), "done 7d\nfailed "
	    "forever\n") == 0, "the link replaced, its target untouched");
	t_write(P("%s/retention", T.spool), "done soon\n");
	EXPECT(CHUTE("status", T.spool, "nosuch") == 1 && strstr(T.err,
	    "nosuch: unknown job"), "status of an unknown ID with a bad "
	    "setting: %s", T.err);
}
END_TEST

START_TEST(test_delayed_submission_is_not_run_before_its_time)
{
	const char *h = t_handler("h_clock",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $(date +%s%3N)\" >> \"$R/journal\"\n");
	pid_t owner = OWNER(QUICK, "--", h);
	char id[256], *j, *l;
	int64_t t0, due, ran;
	int code;

	t_await_lock(owner, 5000);
	t_write(RP("in"), "later");
	t0 = t_now();
	code = CHUTE_IN(RP("in"), "submit", T.spool, "--delay", "1s");
	EXPECT(code == 0 && t_nlines(T.out) == 1, "submit --delay 1s exited %d: %s", code, T.err);
	snprintf(id, sizeof id, "%s", t_line(T.out, 0));
	/* it waits in defer/ with its run time as mtime */
	EXPECT(t_exists(SP("defer", id)) || t_now() >= t0 + 1000,
	    "a job delayed by 1 s is not in defer/ right after submission");
	if (t_exists(SP("defer", id))) {
		due = t_mtime_ms(SP("defer", id));
		EXPECT(due >= t0 + 1000 - 10 && due <= t_now() + 1000 + 10,
		    "defer/%s has mtime %lld ms after submission, not ~1000",
		    id, (long long)(due - t0));
	}
	EXPECT(t_await(id, 10000) == 0, "the delayed job failed");
	j = t_slurp(RP("journal"));
	l = j ? t_line_of(j, id) : NULL;
	EXPECT(l != NULL, "the delayed job did not run");
	ran = atoll(t_last_word(l));
	EXPECT(ran >= t0 + 1000 - 20, "a job delayed by 1 s ran after %lld ms",
	    (long long)(ran - t0));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
}
END_TEST

START_TEST(test_submit_at_epoch_defers_until_that_time)
{
	char at[32], id[256];
	int64_t epoch = t_now() / 1000 + 3600;
	int code;

	snprintf(at, sizeof at, "%lld", (long long)epoch);
	t_write(RP("in"), "x");
	code = CHUTE_IN(RP("in"), "submit", T.spool, "--at", at);
	EXPECT(code == 0, "submit --at exited %d: %s", code, T.err);
	snprintf(id, sizeof id, "%s", t_line(T.out, 0));
	EXPECT(t_exists(SP("defer", id)), "submit --at did not put the job in defer/");
	EXPECT(t_mtime_ms(SP("defer", id)) / 1000 == epoch,
	    "defer/%s mtime is not the --at time", id);
	EXPECT(t_count_state("new") == 0, "submit --at also queued the job in new/");
}
END_TEST

START_TEST(test_retry_of_a_failed_job_runs_it_again_with_attempts_reset)
{
	const char *h = t_handler("h_fixable",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n"
	    "[ -e \"$R/fixed\" ] || exit 3\n");
	int code;

	t_submit_as("repairme", "x");
	code = DRAIN(QUICK, "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_await("repairme", 1000) == 1, "repairme did not fail");

	code = CHUTE("retry", T.spool, "repairme");
	EXPECT(code == 0, "chute retry exited %d: %s", code, T.err);
	EXPECT(t_exists(SP("new", "repairme")) && !t_exists(SP("failed", "repairme")),
	    "retry did not move failed/repairme to new/");
	EXPECT_STATUS("repairme", "new", 0);

	t_write(RP("fixed"), "");
	code = DRAIN(QUICK, "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT(t_await("repairme", 1000) == 0, "the retried job did not finish");
	EXPECT(t_journal_count("repairme") == 2 && !t_journal_has("repairme", 2),
	    "the retried run was not attempt 1");
	EXPECT_STATUS("repairme", "done", 1);

	code = CHUTE("retry", T.spool, "repairme");
	EXPECT(code == 1, "retry of a done job exited %d, not 1", code);
	EXPECT(t_exists(SP("done", "repairme")), "retry of a done job moved it");
	code = CHUTE("retry", T.spool, "nosuch");
	EXPECT(code == 1, "retry of an unknown job exited %d, not 1", code);
}
END_TEST

START_TEST(test_ls_lists_jobs_oldest_first_with_their_state)
{
	const char *want[] = { "c", "a", "b", "d" };
	const char *state[] = { "new", "new", "new", "done" };
	int64_t now = t_now();
	char *l;
	int code;

	t_submit_as("c", "x");
	t_submit_as("a", "x");
	t_submit_as("b", "x");
	t_write(SP("done", "d"), "x");
	t_set_mtime(SP("new", "c"), now - 300000);
	t_set_mtime(SP("new", "a"), now - 200000);
	t_set_mtime(SP("new", "b"), now - 100000);

	code = CHUTE("ls", T.spool);
	EXPECT(code == 0, "chute ls exited %d: %s", code, T.err);
	EXPECT(t_nlines(T.out) == 5, "expected a header and 4 rows:\n%s", T.out);
	l = t_line(T.out, 0);
	EXPECT(strstr(l, "STATE") && strstr(l, "ID"), "no header line:\n%s", T.out);
	for (int i = 0; i < 4; i++) {
		l = t_line(T.out, i + 1);
		EXPECT(strcmp(t_last_word(l), want[i]) == 0 && t_line_of(l, state[i]),
		    "row %d should be job %s in %s (oldest first):\n%s", i + 1, want[i],
		    state[i], T.out);
	}

	code = CHUTE("ls", T.spool, "new");
	EXPECT(code == 0 && t_nlines(T.out) == 4, "ls new should list 3 jobs:\n%s", T.out);
	EXPECT(strcmp(t_last_word(t_line(T.out, 1)), "c") == 0 &&
	    strcmp(t_last_word(t_line(T.out, 3)), "b") == 0, "ls new order:\n%s", T.out);
	code = CHUTE("ls", T.spool, "done");
	EXPECT(code == 0 && t_nlines(T.out) == 2 &&
	    strcmp(t_last_word(t_line(T.out, 1)), "d") == 0, "ls done:\n%s", T.out);
	code = CHUTE("ls", T.spool, "bogus");
	EXPECT(code == 64, "ls with a bad state exited %d, not 64", code);
}
END_TEST

START_TEST(test_stats_counts_jobs_and_names_the_owner)
{
	pid_t owner;
	char *l;
	int code;

	code = CHUTE("stats", T.spool);
	EXPECT(code == 0, "chute stats exited %d: %s", code, T.err);
	EXPECT(t_line_of(T.out, "owner") && strstr(t_line_of(T.out, "owner"), "no owner"),
	    "an unowned spool's stats lack 'no owner':\n%s", T.out);
	l = t_line_of(T.out, "oldest_queued_age");
	EXPECT(l && t_token(l, "-"), "empty queue: expected 'oldest_queued_age -':\n%s", T.out);

	t_submit_as("one", "x");
	t_submit_as("two", "x");
	t_set_mtime(SP("new", "one"), t_now() - 120000);
	code = CHUTE("stats", T.spool);
	EXPECT(t_line_of(T.out, "new") && t_token(t_line_of(T.out, "new"), "2"),
	    "stats should count 2 in new:\n%s", T.out);
	l = t_line_of(T.out, "oldest_queued_age");
	EXPECT(l && !t_token(l, "-"), "stats shows no oldest age with jobs queued:\n%s", T.out);

	owner = OWNER(QUICK, "--", h_block());
	WAIT_UNTIL(t_journal_total() == 1, 10000, "waited 10 s for the first handler");
	code = CHUTE("stats", T.spool);
	EXPECT(code == 0, "chute stats exited %d", code);
	EXPECT(t_token(t_line_of(T.out, "owner"), P("%d", (int)owner)),
	    "stats does not name the owner %d:\n%s", (int)owner, T.out);
	EXPECT(t_token(t_line_of(T.out, "cur"), "1") && t_token(t_line_of(T.out, "new"), "1") &&
	    t_token(t_line_of(T.out, "done"), "0") && t_token(t_line_of(T.out, "failed"), "0") &&
	    t_token(t_line_of(T.out, "defer"), "0"), "stats counts are wrong:\n%s", T.out);
	code = CHUTE("stats", T.spool, "--prometheus");
	EXPECT(code == 0, "stats --prometheus exited %d", code);
	EXPECT(strstr(T.out, P("chute_jobs{spool=\"%s\",state=\"cur\"} 1\n", T.spool)) &&
	    strstr(T.out, P("chute_jobs{spool=\"%s\",state=\"new\"} 1\n", T.spool)) &&
	    strstr(T.out, P("chute_owner_pid{spool=\"%s\"} %d\n", T.spool, (int)owner)) &&
	    strstr(T.out, P("chute_owner_up{spool=\"%s\"} 1\n", T.spool)),
	    "prometheus output:\n%s", T.out);

	/* kill -9 leaves a stale owner.pid; the lock tells the truth */
	kill(owner, SIGKILL);
	t_reap(owner, 5000, "owner after SIGKILL");
	code = CHUTE("stats", T.spool);
	EXPECT(t_line_of(T.out, "owner") && strstr(t_line_of(T.out, "owner"), "no owner"),
	    "stats names a dead owner:\n%s", T.out);
	code = CHUTE("stats", T.spool, "--prometheus");
	EXPECT(strstr(T.out, P("chute_owner_up{spool=\"%s\"} 0\n", T.spool)) &&
	    strstr(T.out, P("chute_owner_pid{spool=\"%s\"} 0\n", T.spool)),
	    "prometheus output names a dead owner:\n%s", T.out);
}
END_TEST

START_TEST(test_log_shows_attempt_lines_and_handler_output)
{
	const char *h = t_handler("h_chatty",
	    "echo \"out-$CHUTE_ATTEMPT\"\n"
	    "echo \"err-$CHUTE_ATTEMPT\" >&2\n"
	    "[ \"$CHUTE_ATTEMPT\" -ge 2 ] || exit 75\n");
	char *o1, *o2;
	int code;

	t_submit_as("chatty", "x");
	code = DRAIN(QUICK, "--", h);
	EXPECT(code == 0, "drain exited %d", code);
	code = CHUTE("log", T.spool, "chatty");
	EXPECT(code == 0, "chute log exited %d: %s", code, T.err);
	o1 = strstr(T.out, "out-1");
	o2 = strstr(T.out, "out-2");
	EXPECT(o1 && o2 && o1 < o2, "log lacks the handler's stdout in order:\n%s", T.out);
	EXPECT(strstr(T.out, "err-1") && strstr(T.out, "err-2"),
	    "log lacks the handler's stderr:\n%s", T.out);
	EXPECT(strstr(T.out, "attempt=1") && strstr(T.out, "attempt=2") &&
	    strstr(T.out, "exit=75") && strstr(T.out, "exit=0"),
	    "log lacks the attempt header lines:\n%s", T.out);

	t_submit_as("fresh", "x");
	code = CHUTE("log", T.spool, "fresh");
	EXPECT(code == 0 && T.out[0] == '\0', "log of a job not run yet: %d '%s'", code, T.out);
	code = CHUTE("log", T.spool, "nosuch");
	EXPECT(code == 1, "log of an unknown job exited %d, not 1", code);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Load                                                               */
/* ------------------------------------------------------------------ */

#define BURST 20000

START_TEST(test_burst_of_20000_files_is_drained_completely)
{
	char name[32];
	pid_t owner;
	int tmpfd, newfd, fd, code;

	tmpfd = open(P("%s/tmp", T.spool), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	newfd = open(P("%s/new", T.spool), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EXPECT(tmpfd != -1 && newfd != -1, "open spool dirs");
	for (int i = 0; i < BURST; i++) {
		snprintf(name, sizeof name, "b%05d", i);
		fd = openat(tmpfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		EXPECT(fd != -1 && write(fd, name, 6) == 6, "write tmp/%s", name);
		close(fd);
	}
	/* keeps --drain from finishing before the burst arrives */
	t_write(RP("in"), "gate");
	code = CHUTE_IN(RP("in"), "submit", T.spool, "--id", "gate", "--delay", "5s");
	EXPECT(code == 0, "submit of the gate job exited %d: %s", code, T.err);

	owner = OWNER("-j", "2", "--drain", QUICK, "--", "/bin/true");
	t_await_lock(owner, 5000);
	/* stopped, the owner cannot read events: the kernel queue overflows */
	kill(owner, SIGSTOP);
	EXPECT(t_exists(SP("defer", "gate")), "the gate job left defer/ too early");
	for (int i = 0; i < BURST; i++) {
		snprintf(name, sizeof name, "b%05d", i);
		EXPECT(renameat(tmpfd, name, newfd, name) == 0, "rename %s: %s", name,
		    strerror(errno));
	}
	close(tmpfd);
	close(newfd);
	kill(owner, SIGCONT);
	code = t_reap(owner, 200000, "chute run --drain on a burst of 20000 jobs");
	EXPECT(code == 0, "drain exited %d:\n%s", code, t_log_of(owner));
	EXPECT(t_count_state("done") == BURST + 1, "done/ has %d jobs, not %d",
	    t_count_state("done"), BURST + 1);
	EXPECT(t_count_state("new") == 0 && t_count_state("cur") == 0 &&
	    t_count_state("defer") == 0 && t_count_state("failed") == 0,
	    "jobs outside done/: new %d cur %d defer %d failed %d", t_count_state("new"),
	    t_count_state("cur"), t_count_state("defer"), t_count_state("failed"));
	EXPECT(t_exists(SP("done", "b00000")) && t_exists(SP("done", "b19999")),
	    "burst jobs were renamed");
}
END_TEST

/* ------------------------------------------------------------------ */
/* --persistent: long-lived workers and the line protocol               */

/*
 * A worker: records its pid once, then per job (ID<TAB>PATH) answers by
 * the job's first word: ok, fail, retry, die (exit without answering),
 * block (wait for root/release, then ok).
 */
static const char *
w_script(void)
{
	return t_handler("worker",
	    "echo $$ >> \"$R/wpids\"\n"
	    "tab=$(printf '\\t')\n"
	    "while IFS=\"$tab\" read -r id path; do\n"
	    "  echo \"$id\" >> \"$R/journal\"\n"
	    "  read -r what < \"$path\"\n"
	    "  case \"$what\" in\n"
	    "  fail) echo \"fail it said no\" ;;\n"
	    "  retry) echo \"retry later please\" ;;\n"
	    "  die) exit 3 ;;\n"
	    "  block) i=0; while [ ! -e \"$R/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo ok ;;\n"
	    "  *) echo ok ;;\n"
	    "  esac\n"
	    "done\n");
}

START_TEST(test_persistent_workers_answer_ok_fail_and_retry)
{
	const char *ids[] = { "p1", "p2", "p3", "p4", "p5", "p6" };
	int code;

	for (int i = 0; i < 6; i++)
		t_submit_as(ids[i], "ok\n");
	t_submit_as("nope", "fail\n");
	t_submit_as("later", "retry\n");
	code = DRAIN("--persistent", "-j", "2", "--max-attempts", "2", QUICK,
	    "--", w_script());
	EXPECT(code == 0, "drain exited %d", code);
	for (int i = 0; i < 6; i++)
		EXPECT_STATUS(ids[i], "done", 1);
	EXPECT_STATUS("nope", "failed", 1);
	EXPECT(strstr(t_status("nope"), "reply=fail it said no") != NULL,
	    "the worker's reason is not in the status: %s", t_status("nope"));
	EXPECT_STATUS("later", "failed", 2);
	/* Two workers served all ten attempts: no process per job. */
	char *pids = t_slurp(RP("wpids"));
	EXPECT(pids != NULL && t_nlines(pids) == 2,
	    "expected 2 worker starts, got:\n%s", pids ? pids : "(none)");
	free(pids);
}
END_TEST

START_TEST(test_a_dying_worker_takes_only_its_job_and_is_restarted)
{
	int code;

	t_submit_as("a", "ok\n");
	t_submit_as("boom", "die\n");
	t_submit_as("b", "ok\n");
	code = DRAIN("--persistent", "-j", "1", "--max-attempts", "2", QUICK,
	    "--", w_script());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT_STATUS("a", "done", 1);
	EXPECT_STATUS("b", "done", 1);
	EXPECT_STATUS("boom", "failed", 2);
	EXPECT(strstr(t_status("boom"), "worker-died") != NULL,
	    "status does not say the worker died: %s", t_status("boom"));
	/* b ran after boom's first death: on a restarted worker. */
	char *pids = t_slurp(RP("wpids"));
	EXPECT(pids != NULL && t_nlines(pids) >= 2,
	    "expected the worker to be restarted, got starts:\n%s", pids ? pids : "");
	free(pids);
}
END_TEST

/*
 * A worker that answers one job twice breaks the protocol: it is stopped
 * and started again, and no other job pays for it (each runs once,
 * attempts=1).
 */
START_TEST(test_a_persistent_worker_answering_twice_costs_no_other_job_an_attempt)
{
	const char *w = t_handler("w_twice",
	    "tab=$(printf '\\t')\n"
	    "while IFS=\"$tab\" read -r id path; do\n"
	    "  echo \"$id\" >> \"$R/journal\"\n"
	    "  if [ \"$id\" = j0 ] && [ ! -e \"$R/twice\" ]; then\n"
	    "    : > \"$R/twice\"; printf 'ok\\nok\\n'\n"
	    "  else echo ok; fi\n"
	    "done\n");
	int code;

	for (int i = 0; i < 10; i++)
		t_submit_as(P("j%d", i), "x\n");
	code = DRAIN("--persistent", "-j", "1", QUICK, "--", w);
	EXPECT(code == 0, "the drain exited %d", code);
	for (int i = 0; i < 10; i++)
		EXPECT_STATUS(P("j%d", i), "done", 1);
}
END_TEST

START_TEST(test_persistent_timeout_stops_the_worker_and_retries)
{
	int code;

	t_submit_as("slow", "block\n");
	t_submit_as("after", "ok\n");
	code = DRAIN("--persistent", "--timeout", "300ms", "--max-attempts", "2",
	    QUICK, "--", w_script());
	EXPECT(code == 0, "drain exited %d", code);
	EXPECT_STATUS("slow", "failed", 2);
	EXPECT(strstr(t_status("slow"), "timeout") != NULL,
	    "status does not say timeout: %s", t_status("slow"));
	EXPECT_STATUS("after", "done", 1);
}
END_TEST

START_TEST(test_cancel_of_a_job_in_a_persistent_worker)
{
	pid_t owner = OWNER("--persistent", QUICK, "--", w_script());
	int code;

	t_submit_as("stuck", "block\n");
	WAIT_UNTIL(t_journal_count("stuck") == 1, 10000,
	    "waited 10 s for the worker to take the job");
	code = CHUTE("cancel", T.spool, "stuck");
	EXPECT(code == 0, "cancel exited %d: %s", code, T.err);
	t_submit_as("next", "ok\n");
	EXPECT(t_await("next", 15000) == 0, "the job after a cancel did not finish");
	EXPECT(t_exists(SP("failed", "stuck")), "the cancelled job is not in failed/");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(t_count_state("cur") == 0, "cur/ is not empty");
}
END_TEST

START_TEST(test_sigterm_requeues_the_job_of_a_persistent_worker)
{
	pid_t owner = OWNER("--persistent", QUICK, "--", w_script()), wpid = 0;
	char *pids;

	t_submit_as("held", "block\n");
	WAIT_UNTIL(t_journal_count("held") == 1, 10000,
	    "waited 10 s for the worker to take the job");
	pids = t_slurp(RP("wpids"));
	EXPECT(pids != NULL && sscanf(pids, "%d", &wpid) == 1, "no worker pid");
	free(pids);
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM");
	EXPECT(t_exists(SP("new", "held")), "the interrupted job is not back in new/");
	EXPECT_STATUS("held", "new", 0);
	WAIT_UNTIL(kill(wpid, 0) == -1, 5000, "waited 5 s for worker %d to be gone",
	    (int)wpid);
}
END_TEST

/*
 * --inline: each job's bytes on the worker's pipe, framed by their
 * length.  NULs, an empty job, 1 MiB (more than the pipe holds: written
 * as the worker reads, the loop never waiting on it), and workers that
 * read half and answer, answer before reading, or die mid-read: each
 * one that left bytes unread is started again, so no job after it is
 * read from the middle of another's (t_inline_expect).
 */
START_TEST(test_inline_workers_get_hostile_payloads_whole_and_framed)
{
	pid_t p;

	t_inline_submit_all(T.spool);
	p = OWNER("--inline", "-j", "2", "--drain", "--max-attempts", "2",
	    "--timeout", "10s", QUICK, "--", t_inline_worker());
	EXPECT(t_reap(p, 30000, "drain") == 0, "drain: %s", t_log_of(p));
	t_inline_expect(T.spool, p, false);
}
END_TEST

/*
 * contrib's two example workers, each in both protocols: every job's
 * bytes counted as they are (the count each says on stderr, which is the
 * owner's), NULs and 1 MiB included, the path protocol as before.  _i:
 * 0 the shell worker, 1 the C one, built here.
 */
START_TEST(test_the_example_workers_speak_both_protocols)
{
	const char *src = getenv("CHUTE_SRCDIR");
	const char *ids[] = { "nul", "empty", "big", "x" };
	char w[PATH_MAX], *body;
	pid_t p;

	if (src == NULL)
		src = ".";	/* make check runs us from the top of the tree */
	snprintf(w, sizeof(w), "%s/contrib/worker-example.%s", src,
	    _i ? "c" : "sh");
	EXPECT(access(w, R_OK) == 0, "%s: %s (set CHUTE_SRCDIR)", w,
	    strerror(errno));
	if (_i) {
		p = t_spawn((const char *const[]){ "/usr/bin/cc", "-O2", "-o",
		    RP("wex"), w, NULL }, NULL, RP("cc.out"), RP("cc.out"),
		    NULL);
		EXPECT(t_reap(p, 60000, "cc worker-example.c") == 0, "cc: %s",
		    t_log_of(p));
		snprintf(w, sizeof(w), "%s", RP("wex"));
	}
	for (int proto = 0; proto < 2; proto++) {
		for (size_t k = 0; k < 4; k++)
			t_inline_submit(T.spool, P("%s-%d", ids[k], proto));
		p = proto ? OWNER("--inline", "--drain", QUICK, "--", w) :
		    OWNER("--persistent", "--drain", QUICK, "--", w);
		EXPECT(t_reap(p, 30000, "drain") == 0, "drain: %s", t_log_of(p));
		for (size_t k = 0; k < 4; k++) {
			const char *id = P("%s-%d", ids[k], proto);
			size_t len = t_inline_payload(id, &body);

			free(body);
			EXPECT_STATUS(id, "done", 1);
			EXPECT(t_log_count(p, P("job %s, %zu bytes", id, len)) ==
			    1, "%s %s: no \"job %s, %zu bytes\": %s", w,
			    proto ? "--inline" : "--persistent", id, len,
			    t_log_of(p));
		}
	}
}
END_TEST

/* ---- pause, resume and the owner as a worker ---- */

#define PAUSED_FILE	P("%s/paused", T.spool)

/*
 * chute pause SPOOL, then `touch SPOOL/paused` by hand: while the file is
 * there the owner claims nothing (the running job finishes; a job
 * submitted meanwhile is accepted and waits, counted in the owner's title
 * as queued with a slot free), it says so once in its journal, and claims
 * again as soon as the file goes (chute resume, or rm).
 */
START_TEST(test_a_paused_spool_claims_nothing_until_resumed_by_chute_or_by_hand)
{
	struct passwd *pw = getpwuid(geteuid());
	pid_t owner = OWNER("-j", "1", QUICK, "--", h_block());

	t_await_lock(owner, 10000);
	t_submit_as("a", "x");
	WAIT_UNTIL(t_handler_pid("a") > 0, 10000, "a to start");
	EXPECT(CHUTE("pause", T.spool) == 0 && strcmp(T.out, P("%s paused\n",
	    T.spool)) == 0, "pause: %s%s", T.out, T.err);
	EXPECT(t_exists(PAUSED_FILE) && CHUTE("pause", T.spool) == 0 &&
	    strstr(T.out, " already paused by "), "pause again: %s", T.out);
	WAIT_UNTIL(t_log_count(owner, ": paused by ") == 1, 10000, "the owner "
	    "to say so: %s", t_log_of(owner));
	t_submit_as("b", "x");
	t_release();
	EXPECT(t_await("a", 10000) == 0, "a finishes");
	WAIT_UNTIL(strstr(t_title(owner), "running=0 queued=1 deferred=0 paused"),
	    10000, "b waits, a slot free: %s", t_title(owner));
	EXPECT(t_exists(SP("new", "b")) && !t_journal_has("b", 1), "b claimed");
	EXPECT(CHUTE("status", T.spool) == 0 && strstr(T.out, P("%s paused by ",
	    T.spool)) == T.out && strstr(T.out, " since "), "status: %s", T.out);
	EXPECT(CHUTE("stats", T.spool) == 0 && strstr(t_line_of(T.out, "paused"),
	    " by "), "stats: %s", T.out);
	EXPECT(CHUTE("resume", T.spool) == 0 && strcmp(T.out, P("%s resumed\n",
	    T.spool)) == 0 && !t_exists(PAUSED_FILE), "resume: %s", T.out);
	EXPECT(t_await("b", 10000) == 0, "b runs once resumed");
	EXPECT(t_log_count(owner, ": resumed (") == 1, "said: %s",
	    t_log_of(owner));

	t_write(PAUSED_FILE, "");
	WAIT_UNTIL(t_log_count(owner, ": paused by ") == 2, 10000, "the owner to "
	    "see the file: %s", t_log_of(owner));
	EXPECT(CHUTE("status", T.spool) == 0 && strstr(T.out, P("paused by %s ",
	    pw->pw_name)), "by its owner: %s", T.out);
	t_submit_as("c", "x");
	WAIT_UNTIL(strstr(t_title(owner), "running=0 queued=1 deferred=0 paused"),
	    10000, "c waits: %s", t_title(owner));
	EXPECT(t_exists(SP("new", "c")) && !t_journal_has("c", 1), "c claimed");
	EXPECT(unlink(PAUSED_FILE) == 0, "rm paused");
	EXPECT(t_await("c", 10000) == 0, "c runs once the file is gone");
	EXPECT(CHUTE("resume", T.spool) == 0 && strcmp(T.out, P("%s not "
	    "paused\n", T.spool)) == 0 && CHUTE("status", T.spool) == 0 &&
	    strcmp(T.out, P("%s not paused\n", T.spool)) == 0, "not paused: %s",
	    T.out);
	EXPECT(t_stop(owner) == 0, "owner stops");
}
END_TEST

/*
 * An owner that starts on a paused spool still recovers what a dead owner
 * left in cur/ (back to new/), and runs nothing until the resume.
 */
START_TEST(test_an_owner_started_paused_recovers_cur_and_runs_nothing)
{
	pid_t owner;

	t_write(SP("cur", "orphan"), "orphaned\n");
	t_submit_as("queued", "x");
	EXPECT(CHUTE("pause", T.spool) == 0, "pause: %s", T.err);
	owner = OWNER(QUICK, "--", h_journal());
	WAIT_UNTIL(t_exists(SP("new", "orphan")), 10000, "the orphan back in "
	    "new/");
	WAIT_UNTIL(strstr(t_title(owner), "running=0 queued=2 deferred=0 paused"),
	    10000, "both wait: %s", t_title(owner));
	EXPECT(t_journal_total() == 0, "something ran while paused");
	EXPECT(CHUTE("resume", T.spool) == 0, "resume: %s", T.err);
	EXPECT(t_await("orphan", 10000) == 0 && t_await("queued", 10000) == 0,
	    "both run once resumed");
	EXPECT(t_stop(owner) == 0, "owner stops");
}
END_TEST

/*
 * chute workers SPOOL: the owner, by the lock (pid, host, the jobs in
 * cur/), alive; killed, gone, with the job it left in cur/ under it.
 */
START_TEST(test_workers_of_a_spool_names_its_owner_and_what_a_dead_one_left)
{
	char host[256] = "", *l;
	pid_t owner;

	gethostname(host, sizeof host - 1);
	EXPECT(CHUTE("workers", T.spool) == 0 && t_nlines(T.out) == 1 &&
	    strncmp(T.out, "WORKER ", 7) == 0, "never owned: %s", T.out);
	owner = OWNER("-j", "1", QUICK, "--", h_block());
	t_submit_as("a", "x");
	WAIT_UNTIL(t_handler_pid("a") > 0, 10000, "a to start");
	EXPECT(CHUTE("workers", T.spool) == 0 && (l = t_line_of(T.out,
	    P("%s:%d", host, (int)owner))) != NULL && t_token(l, host) &&
	    t_token(l, P("%d", (int)owner)) && t_token(l, "alive") &&
	    strstr(l, " 1 ") && strstr(T.out, "holds") == NULL, "alive, with "
	    "one running: %s", T.out);
	EXPECT(kill(owner, SIGKILL) == 0, "kill -9");
	t_reap(owner, 5000, "killed owner");
	EXPECT(CHUTE("workers", T.spool) == 0 && (l = t_line_of(T.out,
	    P("%s:%d", host, (int)owner))) != NULL && t_token(l, "gone") &&
	    strstr(T.out, "\n  holds a\n"), "gone, a left in cur/: %s", T.out);
	t_release();
}
END_TEST

/* ------------------------------------------------------------------ */


Suite *
cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc;

	tc = t_tcase(t_cli_setup, t_cli_teardown, "persistent", 60);
	tcase_add_test(tc, test_persistent_workers_answer_ok_fail_and_retry);
	tcase_add_test(tc, test_a_dying_worker_takes_only_its_job_and_is_restarted);
	tcase_add_test(tc, test_persistent_timeout_stops_the_worker_and_retries);
	tcase_add_test(tc, test_a_persistent_worker_answering_twice_costs_no_other_job_an_attempt);
	tcase_add_test(tc, test_cancel_of_a_job_in_a_persistent_worker);
	tcase_add_test(tc, test_sigterm_requeues_the_job_of_a_persistent_worker);
	tcase_add_test(tc, test_inline_workers_get_hostile_payloads_whole_and_framed);
	tcase_add_loop_test(tc, test_the_example_workers_speak_both_protocols, 0, 2);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, t_cli_teardown, "submit", 60);
	tcase_add_test(tc, test_submit_reads_stdin_and_prints_the_new_id);
	tcase_add_test(tc, test_submit_of_files_prints_one_id_per_file_in_submission_order);
	tcase_add_test(tc, test_submit_with_id_names_the_job);
	tcase_add_test(tc, test_submit_with_an_existing_id_is_refused_with_exit_1);
	tcase_add_test(tc, test_submit_with_a_bad_id_is_a_usage_error_that_touches_nothing);
	tcase_add_test(tc, test_bad_id_on_any_command_is_a_usage_error);
	tcase_add_test(tc, test_submit_of_a_missing_file_exits_66_and_submits_the_rest);
	tcase_add_test(tc, test_job_dropped_by_tmp_and_rename_is_run);
	tcase_add_test(tc, test_job_linked_into_new_then_unlinked_is_run);
	tcase_add_test(tc, test_file_written_in_place_is_not_run_before_its_writer_closes);
	tcase_add_test(tc, test_file_written_in_place_under_a_taken_name_waits_for_its_writer);
	tcase_add_test(tc, test_dot_files_are_ignored);
	tcase_add_test(tc, test_dropped_file_named_like_a_finished_job_gets_a_new_id);
	tcase_add_test(tc, test_dropped_file_named_like_a_running_job_gets_a_new_id);
	tcase_add_test(tc, test_dropped_file_with_a_control_character_in_its_name_gets_a_clean_id);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, t_cli_teardown, "outcomes", 60);
	tcase_add_test(tc, test_handler_exit_0_moves_job_to_done);
	tcase_add_test(tc, test_exit_75_defers_then_retry_succeeds);
	tcase_add_test(tc, test_retries_exhausted_fail_with_attempts_equal_to_max);
	tcase_add_test(tc, test_other_exit_status_fails_at_once);
	tcase_add_test(tc, test_death_by_signal_fails_at_once);
	tcase_add_test(tc, test_timeout_defers_then_fails_and_kills_a_handler_that_ignores_term);
	tcase_add_test(tc, test_what_a_handler_leaves_in_its_group_dies_before_its_job_runs_again);
	tcase_add_test(tc, test_cancel_of_a_queued_job_means_it_never_runs);
	tcase_add_test(tc, test_cancel_of_a_running_job_stops_the_handler_and_fails_it);
	tcase_add_test(tc, test_moving_a_running_job_out_of_cur_by_hand_cancels_it);
	tcase_add_test(tc, test_symlink_in_new_is_never_followed);
	tcase_add_test(tc, test_fifo_and_directory_in_new_fail_without_blocking_the_owner);
	tcase_add_test(tc, test_handler_gets_its_environment_and_the_braces_argument);
	tcase_add_test(tc, test_backlog_in_new_runs_oldest_first);
	tcase_add_test(tc, test_no_more_than_j_handlers_run_at_once);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, t_cli_teardown, "ownership", 90);
	tcase_add_test(tc, test_run_with_a_handler_that_cannot_be_executed_is_a_usage_error);
	tcase_add_test(tc, test_second_owner_is_refused_with_75_naming_the_owner_pid);
	tcase_add_test(tc, test_lock_held_by_a_dead_owners_straggler_child_is_waited_out);
	tcase_add_test(tc, test_an_earlier_releases_owner_on_the_spool_directory_keeps_a_new_one_out);
	tcase_add_test(tc, test_an_owner_lock_others_could_open_is_refused_with_78);
	tcase_add_test(tc, test_wait_lock_standby_takes_over_when_the_owner_is_killed);
	tcase_add_test(tc, test_sigterm_returns_a_running_job_to_new_without_counting_the_attempt);
	tcase_add_test(tc, test_sigterm_kills_a_handler_that_ignores_it_after_the_grace);
	tcase_add_test(tc, test_kill_9_of_the_owner_loses_no_job_and_a_restart_finishes_all);
	tcase_add_test(tc, test_job_left_in_cur_is_run_again_at_startup);
	tcase_add_test(tc, test_startup_removes_stale_tmp_files_but_keeps_fresh_ones);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, t_cli_teardown, "commands", 60);
	tcase_add_test(tc, test_wait_exits_0_when_all_done_and_1_when_any_failed);
	tcase_add_test(tc, test_wait_times_out_with_124);
	tcase_add_test(tc, test_wait_on_an_unknown_id_exits_1_at_once);
	tcase_add_test(tc, test_wait_returns_when_a_queued_job_finishes);
	tcase_add_test(tc, test_status_reports_state_attempts_and_outcome);
	tcase_add_test(tc, test_purge_removes_old_finished_jobs_and_their_logs);
	tcase_add_test(tc, test_retention_removes_a_done_job_and_its_log_at_its_time_not_before);
	tcase_add_test(tc, test_wait_blocked_on_a_job_kept_0_returns_its_outcome);
	tcase_add_test(tc, test_retention_refuses_bad_durations_and_touches_nothing);
	tcase_add_test(tc, test_a_wait_that_lost_events_says_so);
	tcase_add_test(tc, test_delayed_submission_is_not_run_before_its_time);
	tcase_add_test(tc, test_submit_at_epoch_defers_until_that_time);
	tcase_add_test(tc, test_retry_of_a_failed_job_runs_it_again_with_attempts_reset);
	tcase_add_test(tc, test_ls_lists_jobs_oldest_first_with_their_state);
	tcase_add_test(tc, test_stats_counts_jobs_and_names_the_owner);
	tcase_add_test(tc, test_log_shows_attempt_lines_and_handler_output);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, t_cli_teardown, "pause", 60);
	tcase_add_test(tc, test_a_paused_spool_claims_nothing_until_resumed_by_chute_or_by_hand);
	tcase_add_test(tc, test_an_owner_started_paused_recovers_cur_and_runs_nothing);
	tcase_add_test(tc, test_workers_of_a_spool_names_its_owner_and_what_a_dead_one_left);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, t_cli_teardown, "burst", 240);
	tcase_add_test(tc, test_burst_of_20000_files_is_drained_completely);
	suite_add_tcase(s, tc);
	return s;
}
