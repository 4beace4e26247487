/*
 * check_fault.c: chute under faults.  The real binary ($CHUTE_BIN) runs
 * with tests/fault.c preloaded ($CHUTE_FAULT_LIB), which fails one chosen
 * libc call, or on a tmpfs of 1 MiB that the test mounts, and an operator
 * removes job files at each point of their life.  The promise checked:
 * a failed submit exits 74 with the path and leaves nothing visible; the
 * owner logs the error, keeps running, retries later, and every job ends
 * in exactly one place, run once.
 *
 * Every shim test first checks, in the shim's own log, that the fault was
 * injected: a test whose fault never fired has tested nothing and fails.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"

static struct {
	const char	*lib;		/* CHUTE_FAULT_LIB, or NULL: skip */
	char		 mnt[PATH_MAX];	/* a tmpfs we mounted, or "" */
	char		*asan;		/* ASAN_OPTIONS before f_arm */
} F;

/* ---- the shim ---- */

/* In a START_TEST body, __func__ is the test's name with "_fn" appended. */
#define NEED_SHIM() do {						\
	if (F.lib == NULL) {						\
		fprintf(stderr, "check_fault: %.*s: skipped: CHUTE_FAULT_LIB"\
		    " is not set (the absolute path of build/libfault.so)\n",\
		    (int)strlen(__func__) - 3, __func__);		\
		return;							\
	}								\
} while (0)

/*
 * The next process we spawn gets the shim: spec is CALL:N[+]:ERR, path
 * (or NULL) restricts which calls count.  Call f_disarm() right after
 * spawning it: nothing else may run with the fault.
 */
static void
f_arm(const char *spec, const char *path)
{
	const char *asan = getenv("ASAN_OPTIONS");

	setenv("LD_PRELOAD", F.lib, 1);
	setenv("CHUTE_FAULT", spec, 1);
	if (path != NULL)
		setenv("CHUTE_FAULT_PATH", path, 1);
	else
		unsetenv("CHUTE_FAULT_PATH");
	setenv("CHUTE_FAULT_LOG", RP("faults"), 1);
	/* An ASan build (make check-asan) wants its runtime loaded first. */
	free(F.asan);
	F.asan = asan ? strdup(asan) : NULL;
	setenv("ASAN_OPTIONS", P("%s%sverify_asan_link_order=0", asan ? asan : "",
	    asan ? ":" : ""), 1);
}

static void
f_disarm(void)
{
	unsetenv("LD_PRELOAD");
	unsetenv("CHUTE_FAULT");
	unsetenv("CHUTE_FAULT_PATH");
	unsetenv("CHUTE_FAULT_LOG");
	if (F.asan != NULL)
		setenv("ASAN_OPTIONS", F.asan, 1);
	else
		unsetenv("ASAN_OPTIONS");
}

/* How many lines of the shim's log contain what (e.g. "injected"). */
static int
f_log_count(const char *what)
{
	char *text = t_slurp(RP("faults")), *l;
	int n = 0;

	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL; i++)
		if (strstr(l, what) != NULL)
			n++;
	free(text);
	return n;
}

static const char *
f_log(void)
{
	static char buf[1100];
	char *text = t_slurp(RP("faults"));

	snprintf(buf, sizeof buf, "%s", text ? t_snip(text) : "(no fault log: the"
	    " shim was not loaded, or no call matched)");
	free(text);
	return buf;
}

#define EXPECT_INJECTED(spec) EXPECT(f_log_count("injected") > 0,	\
	"the shim injected no fault for %s: this test tested nothing."	\
	" Shim log:\n%s", (spec), f_log())

/* ---- the owner's stderr, all of it ---- */

static char *
f_owner_text(pid_t owner)
{
	struct t_proc *p = t_proc_of(owner);
	char *text = p ? t_slurp(p->log) : NULL;

	return text ? text : strdup("");
}

static bool
f_owner_says(pid_t owner, const char *what)
{
	char *text = f_owner_text(owner);
	bool found = strstr(text, what) != NULL;

	free(text);
	return found;
}

/* Does a line of the owner's stderr contain both a and b? */
static bool
f_owner_line(pid_t owner, const char *a, const char *b)
{
	char *text = f_owner_text(owner), *l;
	bool found = false;

	for (int i = 0; !found && (l = t_line(text, i)) != NULL; i++)
		found = strstr(l, a) != NULL && strstr(l, b) != NULL;
	free(text);
	return found;
}

/* The owner is still running; fail with its output if not. */
static void
f_alive(pid_t owner, const char *after)
{
	int code;

	EXPECT(!t_poll_exit(owner, &code), "the owner exited with %d after %s:\n%s",
	    code, after, t_log_of(owner));
}

/* ---- fixture ---- */

static void
fault_setup(void)
{
	t_cli_setup();
	memset(&F, 0, sizeof F);
	F.lib = getenv("CHUTE_FAULT_LIB");
	if (F.lib != NULL && F.lib[0] == '\0')
		F.lib = NULL;
	if (F.lib != NULL) {
		EXPECT(F.lib[0] == '/', "CHUTE_FAULT_LIB=%s must be an absolute path",
		    F.lib);
		EXPECT(access(F.lib, R_OK) == 0, "CHUTE_FAULT_LIB=%s: %s", F.lib,
		    strerror(errno));
	}
}

static void
fault_teardown(void)
{
	t_kill_all();
	if (F.mnt[0] != '\0' && umount2(F.mnt, MNT_DETACH) == -1)
		fprintf(stderr, "check_fault: umount %s: %s\n", F.mnt, strerror(errno));
	F.mnt[0] = '\0';
	free(F.asan);
	F.asan = NULL;
	t_cli_teardown();
}

/* ------------------------------------------------------------------ */
/* The submit path                                                    */
/* ------------------------------------------------------------------ */

/* A file of len bytes, every one of them visible in a dump. */
static void
f_write_input(const char *path, size_t len)
{
	char *data = malloc(len + 1);

	EXPECT(data != NULL, "out of memory");
	for (size_t i = 0; i < len; i++)
		data[i] = "0123456789abcdef\n"[i % 17];
	data[len] = '\0';
	t_write(path, data);
	free(data);
}

/*
 * `chute submit` with the fault spec (calls restricted to path) must
 * exit 74 with one line naming the path and the reason, print no ID and
 * leave nothing in tmp/, new/ or defer/.  The same submit without the
 * fault then works: the failure left the spool usable.
 */
static void
f_submit_fails(const char *spec, const char *path, int err, size_t len,
    bool delayed)
{
	char *in = strdup(RP("input"));
	int code;

	unlink(RP("faults"));
	f_write_input(in, len);
	f_arm(spec, path);
	code = delayed ? CHUTE_IN(in, "submit", T.spool, "--delay", "1h") :
	    CHUTE_IN(in, "submit", T.spool);
	f_disarm();
	EXPECT_INJECTED(spec);
	EXPECT(code == 74, "chute submit%s with %s (on %s) exited %d, not 74;"
	    " stderr: '%s'", delayed ? " --delay" : "", spec, path, code, t_snip(T.err));
	EXPECT(t_nlines(T.err) == 1, "with %s, expected a one-line message, got:\n%s",
	    spec, t_snip(T.err));
	EXPECT(strncmp(T.err, "chute: ", 7) == 0 && strstr(T.err, T.spool) != NULL,
	    "with %s, the message does not name the path under %s: '%s'", spec,
	    T.spool, t_snip(T.err));
	EXPECT(strstr(T.err, strerror(err)) != NULL,
	    "with %s, the message does not give the reason '%s': '%s'", spec,
	    strerror(err), t_snip(T.err));
	EXPECT(T.out[0] == '\0', "with %s, a failed submit printed an ID: '%s'",
	    spec, t_snip(T.out));
	EXPECT(t_count_state("new") == 0 && t_count_state("tmp") == 0 &&
	    t_count_state("defer") == 0, "with %s, a failed submit left new/ %d,"
	    " tmp/ %d, defer/ %d file(s)", spec, t_count_state("new"),
	    t_count_state("tmp"), t_count_state("defer"));

	code = CHUTE_IN(in, "submit", T.spool, "--id", "afterwards");
	EXPECT(code == 0, "after a failed submit (%s), a plain one exited %d: %s",
	    spec, code, t_snip(T.err));
	EXPECT(unlink(SP("new", "afterwards")) == 0, "new/afterwards: %s",
	    strerror(errno));
	free(in);
}

START_TEST(test_submit_that_runs_out_of_space_exits_74_and_leaves_nothing)
{
	NEED_SHIM();
	/* the first write, then one in the middle of a 300 KiB file */
	f_submit_fails("write:1:ENOSPC", "/spool/tmp/", ENOSPC, 100, false);
	f_submit_fails("write:3:ENOSPC", "/spool/tmp/", ENOSPC, 300 * 1024, false);
	f_submit_fails("write:2:EDQUOT", "/spool/tmp/", EDQUOT, 300 * 1024, true);
}
END_TEST

START_TEST(test_submit_whose_fsync_fails_exits_74_and_leaves_nothing)
{
	NEED_SHIM();
	f_submit_fails("fsync:1:EIO", "/spool/tmp/", EIO, 100, false);
	f_submit_fails("fsync:1:EIO", "/spool/tmp/", EIO, 100, true);
}
END_TEST

START_TEST(test_submit_whose_close_fails_exits_74_and_leaves_nothing)
{
	NEED_SHIM();
	f_submit_fails("close:1:EIO", "/spool/tmp/", EIO, 100, false);
}
END_TEST

START_TEST(test_submit_that_cannot_create_its_tmp_file_exits_74_and_leaves_nothing)
{
	NEED_SHIM();
	f_submit_fails("openat:1:EMFILE", "/spool/tmp/", EMFILE, 100, false);
}
END_TEST

START_TEST(test_submit_whose_rename_fails_exits_74_and_leaves_nothing)
{
	NEED_SHIM();
	f_submit_fails("renameat2:1:EIO", "/spool/new/", EIO, 100, false);
	f_submit_fails("renameat2:1:EIO", "/spool/defer/", EIO, 100, true);
}
END_TEST

/*
 * The rename into new/ succeeded but the directory fsync failed: the
 * submission is not durable and submit says so, so it must not stay in
 * new/ either (the owner would run a job whose submitter was told it
 * failed, and who will submit it again).
 */
START_TEST(test_submit_whose_directory_fsync_fails_exits_74_and_leaves_nothing_in_new)
{
	NEED_SHIM();
	f_submit_fails("fsync:1:EIO", "/spool/new", EIO, 100, false);
}
END_TEST

START_TEST(test_submit_of_two_files_whose_second_fails_keeps_only_the_first)
{
	char *id, *content;
	int code;

	NEED_SHIM();
	t_write(RP("one"), "first\n");
	t_write(RP("two"), "second\n");
	f_arm("write:2:ENOSPC", "/spool/tmp/");
	code = CHUTE("submit", T.spool, RP("one"), RP("two"));
	f_disarm();
	EXPECT_INJECTED("write:2:ENOSPC");
	EXPECT(code == 74, "submit one two, the second failing, exited %d: %s",
	    code, t_snip(T.err));
	EXPECT(t_nlines(T.err) == 1 && strstr(T.err, strerror(ENOSPC)),
	    "expected one line with the reason, got '%s'", t_snip(T.err));
	EXPECT(t_nlines(T.out) == 1, "expected the first file's ID only, got '%s'",
	    t_snip(T.out));
	id = t_line(T.out, 0);
	content = t_slurp(SP("new", id));
	EXPECT(content && strcmp(content, "first\n") == 0,
	    "new/%s does not hold the first file: '%s'", id, content ? content : "");
	EXPECT(t_count_state("new") == 1 && t_count_state("tmp") == 0,
	    "expected only the first job (new/ %d, tmp/ %d)", t_count_state("new"),
	    t_count_state("tmp"));
	free(content);
}
END_TEST

/* ---- a real file system that fills up ---- */

/*
 * Mount a 1 MiB tmpfs at root/fs, in a mount namespace of this test's
 * own (so a test that dies leaves no mount behind), and move the spool
 * there.  false, with the reason printed, where mounting is not allowed.
 */
static bool
f_mount_small_fs(void)
{
	char *mnt = RP("fs");
	int code;

	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		fprintf(stderr, "check_fault: full file system test skipped: cannot"
		    " make a private mount namespace: %s (needs root or"
		    " CAP_SYS_ADMIN)\n", strerror(errno));
		return false;
	}
	EXPECT(mkdir(mnt, 0700) == 0, "mkdir %s: %s", mnt, strerror(errno));
	if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700")
	    == -1) {
		EXPECT(errno == EPERM || errno == EACCES || errno == ENODEV,
		    "mount -t tmpfs %s: %s", mnt, strerror(errno));
		fprintf(stderr, "check_fault: full file system test skipped: mount"
		    " -t tmpfs: %s\n", strerror(errno));
		return false;
	}
	snprintf(F.mnt, sizeof F.mnt, "%s", mnt);
	snprintf(T.spool, sizeof T.spool, "%s/spool", mnt);
	code = CHUTE("init", T.spool);
	EXPECT(code == 0, "chute init %s exited %d: %s", T.spool, code, t_snip(T.err));
	return true;
}

/* Fill the file system under path with one file, to the last byte. */
static void
f_fill(const char *path)
{
	static char chunk[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t size = sizeof chunk;
	ssize_t n;

	EXPECT(fd != -1, "open %s: %s", path, strerror(errno));
	memset(chunk, 'F', sizeof chunk);
	while (size > 0) {
		if ((n = write(fd, chunk, size)) == -1) {
			EXPECT(errno == ENOSPC, "write %s: %s", path, strerror(errno));
			size /= 2;
		}
	}
	close(fd);
}

START_TEST(test_submit_and_the_owner_on_a_full_file_system)
{
	pid_t owner;
	char *id;
	int code;

	if (!f_mount_small_fs())
		return;
	/* bigger than the file system */
	f_write_input(RP("big"), 2 * 1024 * 1024);
	code = CHUTE("submit", T.spool, RP("big"));
	EXPECT(code == 74, "submit of 2 MiB to a 1 MiB file system exited %d: %s",
	    code, t_snip(T.err));
	EXPECT(t_nlines(T.err) == 1 && strstr(T.err, T.spool) &&
	    strstr(T.err, strerror(ENOSPC)), "expected one line naming the path"
	    " and '%s', got '%s'", strerror(ENOSPC), t_snip(T.err));
	EXPECT(T.out[0] == '\0', "a failed submit printed '%s'", t_snip(T.out));
	EXPECT(t_count_state("new") == 0 && t_count_state("tmp") == 0,
	    "a failed submit left new/ %d, tmp/ %d", t_count_state("new"),
	    t_count_state("tmp"));

	/* a job queued before the disk filled up; then nothing fits */
	t_drop("early", "queued before the disk filled up\n");
	f_fill(P("%s/filler", F.mnt));
	t_write(RP("small"), "small\n");
	code = CHUTE("submit", T.spool, RP("small"));
	EXPECT(code == 74 && strstr(T.err, strerror(ENOSPC)),
	    "submit to a full file system exited %d: %s", code, t_snip(T.err));
	EXPECT(t_count_state("new") == 1 && t_count_state("tmp") == 0,
	    "a failed submit on a full disk left new/ %d (expected 1), tmp/ %d",
	    t_count_state("new"), t_count_state("tmp"));

	/* The owner cannot write logs or owner.pid; it still runs the job. */
	owner = OWNER(QUICK, "--", h_journal());
	EXPECT(t_await("early", 10000) == 0, "the queued job did not reach done/ on"
	    " a full file system");
	EXPECT(t_journal_count("early") == 1, "early ran %d times",
	    t_journal_count("early"));
	f_alive(owner, "running a job on a full file system");

	/* space again: work goes on without a restart */
	EXPECT(unlink(P("%s/filler", F.mnt)) == 0, "rm filler: %s", strerror(errno));
	code = CHUTE("submit", T.spool, RP("small"));
	EXPECT(code == 0, "submit after freeing space exited %d: %s", code,
	    t_snip(T.err));
	id = strdup(t_line(T.out, 0));
	EXPECT(t_await(id, 10000) == 0, "a job submitted after freeing space failed");
	EXPECT(t_stop(owner) == 0, "the owner did not exit 0 on SIGTERM:\n%s",
	    t_log_of(owner));
	free(id);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The owner under faults                                             */
/* ------------------------------------------------------------------ */

/* Start an owner with the fault armed; it holds the lock when this returns. */
static pid_t
f_owner(const char *spec, const char *path, const char *handler)
{
	pid_t owner;

	f_arm(spec, path);
	owner = OWNER(QUICK, "--", handler);
	f_disarm();
	t_await_lock(owner, 5000);
	return owner;
}

/* After a fault: one more job goes through, and SIGTERM ends it with 0. */
static void
f_owner_carries_on(pid_t owner, const char *after)
{
	f_alive(owner, after);
	t_submit_as("next-job", "x\n");
	EXPECT(t_await("next-job", 10000) == 0, "the owner stopped working after %s",
	    after);
	EXPECT(t_stop(owner) == 0, "the owner did not exit 0 on SIGTERM after %s:\n%s",
	    after, t_log_of(owner));
}

/* id ended in done/, alone, and its handler ran exactly once. */
static void
f_done_once(const char *id)
{
	const char *where;
	int n;

	EXPECT(t_await(id, 15000) == 0, "%s did not reach done/", id);
	n = t_where(id, &where);
	EXPECT(n == 1 && strcmp(where, "done") == 0, "%s is in %d directories,"
	    " last %s/", id, n, where);
	EXPECT(t_journal_count(id) == 1, "%s ran %d times, not once", id,
	    t_journal_count(id));
}

START_TEST(test_owner_retries_a_move_to_done_that_failed_with_eio)
{
	const char *where;
	pid_t owner;

	NEED_SHIM();
	owner = f_owner("renameat2:1:EIO", "/spool/done/", h_journal());
	t_submit_as("job1", "payload\n");
	WAIT_UNTIL(f_owner_line(owner, "job=job1", "will retry"), 10000,
	    "the owner did not log the failed move of job1 to done/:\n%s",
	    t_log_of(owner));
	EXPECT_INJECTED("renameat2:1:EIO");
	EXPECT(f_owner_line(owner, "job=job1", strerror(EIO)),
	    "the owner's error line does not give the reason:\n%s", t_log_of(owner));
	/* until the retry, the job stays where it was: claimed */
	EXPECT(t_where("job1", &where) == 1 && strcmp(where, "cur") == 0,
	    "while its move is retried, job1 is in %s/", where);
	f_done_once("job1");
	EXPECT(f_log_count("passed") >= 1, "the owner never tried the move again:\n%s",
	    f_log());
	f_owner_carries_on(owner, "a failed move to done/");
}
END_TEST

/*
 * An outcome that cannot be recorded never holds up a shutdown: SIGTERM
 * leaves the job in cur/, and the next owner runs it again.
 */
START_TEST(test_sigterm_does_not_wait_for_an_outcome_that_cannot_be_recorded)
{
	pid_t owner;
	int code;

	NEED_SHIM();
	owner = f_owner("renameat2:1+:EIO", "/spool/done/", h_journal());
	t_submit_as("stuck", "payload\n");
	WAIT_UNTIL(f_owner_line(owner, "job=stuck", "will retry"), 10000,
	    "the owner did not log the failed move of stuck to done/:\n%s",
	    t_log_of(owner));
	code = t_stop(owner);
	EXPECT(code == 0, "the owner exited %d:\n%s", code, t_log_of(owner));
	EXPECT(f_owner_line(owner, "job=stuck", "the next owner recovers it"),
	    "the owner did not say it left stuck behind:\n%s", t_log_of(owner));
	EXPECT(t_exists(SP("cur", "stuck")), "stuck is not in cur/");
	code = DRAIN(QUICK, "--", h_journal());
	EXPECT(code == 0, "the next owner's drain exited %d", code);
	EXPECT(t_exists(SP("done", "stuck")) && t_journal_count("stuck") == 2,
	    "stuck was not run again to done/ (%d runs)", t_journal_count("stuck"));
}
END_TEST

/*
 * defer/ is read once, not at each job's due time: 40 jobs due 50 ms
 * apart are promoted from the index (counted: the owner's opens of the
 * directory defer/, through the shim, which injects nothing here).
 */
START_TEST(test_deferred_jobs_due_one_after_another_do_not_rescan_defer)
{
	int64_t t0 = t_now() + 500;
	pid_t owner;
	int scans;

	NEED_SHIM();
	for (int i = 0; i < 40; i++) {
		t_write(RP("d"), "x\n");
		t_set_mtime(RP("d"), t0 + i * 50);
		EXPECT(rename(RP("d"), SP("defer", P("d%02d", i))) == 0, "mv d%d", i);
	}
	owner = f_owner("openat:1000000:EIO", "/spool/defer", h_journal());
	WAIT_UNTIL(t_count_state("done") == 40, 20000, "the 40 deferred jobs:\n%s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "the owner did not stop");
	scans = f_log_count("/spool/defer/.:") + f_log_count("/spool/defer:");
	EXPECT(scans >= 1 && scans <= 3, "defer/ was read %d times for 40 due "
	    "times:\n%s", scans, f_log());
}
END_TEST

START_TEST(test_owner_retries_a_claim_that_failed_with_eio)
{
	const char *where;
	pid_t owner;

	NEED_SHIM();
	/* renames into cur/: the claim is the first */
	owner = f_owner("renameat2:1:EIO", "/spool/cur/", h_journal());
	t_submit_as("job1", "payload\n");
	WAIT_UNTIL(f_owner_line(owner, "job1", "will retry"), 10000,
	    "the owner did not log the failed claim of job1:\n%s", t_log_of(owner));
	EXPECT_INJECTED("renameat2:1:EIO");
	EXPECT(t_where("job1", &where) == 1 && strcmp(where, "new") == 0,
	    "after a failed claim job1 is in %s/, not new/", where);
	f_done_once("job1");
	f_owner_carries_on(owner, "a failed claim");
}
END_TEST

START_TEST(test_owner_retries_an_fsync_of_done_that_failed_with_eio)
{
	pid_t owner;

	NEED_SHIM();
	owner = f_owner("fsync:1:EIO", "/spool/done", h_journal());
	t_submit_as("job1", "payload\n");
	f_done_once("job1");
	WAIT_UNTIL(f_log_count("injected") == 1, 5000,
	    "the owner never fsynced done/ after moving job1 there:\n%s", f_log());
	WAIT_UNTIL(f_owner_says(owner, "fsync") &&
	    f_owner_says(owner, strerror(EIO)), 5000,
	    "the owner did not log the failed fsync:\n%s", t_log_of(owner));
	WAIT_UNTIL(f_log_count("passed") >= 1, 10000,
	    "the owner did not fsync done/ again after the failure:\n%s", f_log());
	f_owner_carries_on(owner, "a failed fsync of done/");
}
END_TEST

/*
 * A disk that stalls in the fsync of done/ (the shim holds it until the
 * test opens a FIFO): the owner goes on meanwhile, and the next job runs
 * to done/ while that fsync still waits, because the fsyncs are the
 * keeper thread's (keeper.c), not the loop's; after 10 s the owner says
 * the fsync hangs.  Once the disk answers, done/ is fsynced again for the
 * second job and the owner exits 0.
 */
START_TEST(test_a_stalled_fsync_of_done_holds_up_no_job)
{
	pid_t owner;
	int fd;

	NEED_SHIM();
	EXPECT(mkfifo(RP("stall"), 0600) == 0, "mkfifo: %s", strerror(errno));
	setenv("CHUTE_FAULT_HOLD", RP("stall"), 1);
	owner = f_owner("fsync:1:HOLD", "/spool/done", h_journal());
	unsetenv("CHUTE_FAULT_HOLD");
	t_submit_as("job1", "payload\n");
	WAIT_UNTIL(f_log_count("injected HOLD") == 1, 10000,
	    "the owner never fsynced done/ after job1:\n%s", f_log());
	t_submit_as("job2", "payload\n");
	EXPECT(t_await("job2", 10000) == 0, "job2 did not reach done/ while the"
	    " fsync of done/ for job1 was held: the owner waits for the disk\n%s",
	    t_log_of(owner));
	EXPECT(f_log_count("passed") == 0, "an fsync of done/ ended while the"
	    " first was held:\n%s", f_log());
	/* A hung fsync is said in the journal (after SYNC_SLOW_MS, 10 s). */
	WAIT_UNTIL(f_owner_says(owner, "an fsync has not returned for"), 20000,
	    "the owner did not say that its fsync hangs:\n%s", t_log_of(owner));
	/* The disk answers. */
	EXPECT((fd = open(RP("stall"), O_WRONLY | O_CLOEXEC)) != -1,
	    "open %s: %s", RP("stall"), strerror(errno));
	close(fd);
	EXPECT(t_stop(owner) == 0, "the owner did not exit 0 on SIGTERM:\n%s",
	    t_log_of(owner));
	EXPECT(f_log_count("passed") >= 1, "done/ was not fsynced after job2"
	    " reached it:\n%s", f_log());
	f_done_once("job1");
	f_done_once("job2");
}
END_TEST

START_TEST(test_owner_retries_a_job_it_could_not_open_for_lack_of_descriptors)
{
	const char *where;
	pid_t owner;

	NEED_SHIM();
	owner = f_owner("openat:1:EMFILE", "/spool/new/job1", h_journal());
	t_submit_as("job1", "payload\n");
	WAIT_UNTIL(f_owner_line(owner, "job1", strerror(EMFILE)), 10000,
	    "the owner did not log that it could not open job1:\n%s",
	    t_log_of(owner));
	EXPECT_INJECTED("openat:1:EMFILE");
	EXPECT(t_where("job1", &where) == 1 && strcmp(where, "new") == 0,
	    "after a failed open job1 is in %s/, not new/", where);
	f_done_once("job1");
	f_owner_carries_on(owner, "running out of descriptors");
}
END_TEST

START_TEST(test_owner_retries_rejecting_a_fifo_whose_move_to_failed_failed)
{
	struct stat st;
	pid_t owner;

	NEED_SHIM();
	EXPECT(mkfifo(SP("new", "pipe"), 0644) == 0, "mkfifo: %s", strerror(errno));
	owner = f_owner("renameat2:1:EIO", "/spool/failed/", h_journal());
	WAIT_UNTIL(f_log_count("injected") == 1, 5000,
	    "the owner never tried to move new/pipe to failed/:\n%s\n%s", f_log(),
	    t_log_of(owner));
	WAIT_UNTIL(f_owner_line(owner, "job=pipe", strerror(EIO)), 5000,
	    "the owner did not log the failed move of new/pipe:\n%s", t_log_of(owner));
	WAIT_UNTIL(lstat(SP("failed", "pipe"), &st) == 0, 15000,
	    "the owner did not retry rejecting new/pipe within 15 s (it is still"
	    " in new/: %s); owner:\n%s", t_exists(SP("new", "pipe")) ? "yes" : "no",
	    t_log_of(owner));
	EXPECT(S_ISFIFO(st.st_mode) && !t_exists(SP("new", "pipe")),
	    "failed/pipe is not the FIFO, or new/pipe is still there");
	f_owner_carries_on(owner, "a failed rejection");
}
END_TEST

START_TEST(test_owner_runs_jobs_whose_log_cannot_be_written)
{
	pid_t owner;

	NEED_SHIM();
	owner = f_owner("write:1+:ENOSPC", "/spool/log/", h_journal());
	t_submit_as("job1", "payload\n");
	f_done_once("job1");
	EXPECT_INJECTED("write:1+:ENOSPC");
	f_owner_carries_on(owner, "failed writes to log/");
}
END_TEST

/* ------------------------------------------------------------------ */
/* An operator removes a job file                                     */
/* ------------------------------------------------------------------ */

START_TEST(test_job_removed_from_new_before_its_claim_is_skipped_and_logged)
{
	const char *where;
	pid_t owner;

	/* removed while no owner runs */
	t_drop("kept", "x\n");
	t_drop("removed-early", "x\n");
	EXPECT(unlink(SP("new", "removed-early")) == 0, "rm: %s", strerror(errno));
	owner = OWNER(QUICK, "--", h_block());
	t_await_lock(owner, 5000);
	WAIT_UNTIL(t_journal_count("kept") == 1, 10000,
	    "the owner did not start the job left in new/");

	/* queued behind kept (-j 1), then removed or moved out of the spool */
	t_drop("gone-rm", "x\n");
	t_drop("gone-mv", "x\n");
	WAIT_UNTIL(strstr(t_title(owner), "queued=2") != NULL, 10000,
	    "the owner did not queue gone-rm and gone-mv (its title does not say"
	    " queued=2)");
	EXPECT(unlink(SP("new", "gone-rm")) == 0, "rm new/gone-rm: %s",
	    strerror(errno));
	EXPECT(rename(SP("new", "gone-mv"), RP("gone-mv")) == 0,
	    "mv new/gone-mv out of the spool: %s", strerror(errno));
	t_release();
	EXPECT(t_await("kept", 10000) == 0, "kept did not finish");
	f_alive(owner, "jobs vanished from its queue");
	t_submit_as("after", "x\n");
	EXPECT(t_await("after", 10000) == 0, "the owner stopped after jobs vanished"
	    " from new/");

	EXPECT(t_where("gone-rm", &where) == 0 && t_where("gone-mv", &where) == 0 &&
	    t_where("removed-early", &where) == 0, "a removed job reappeared in %s/",
	    where);
	EXPECT(t_exists(RP("gone-mv")), "the file moved out of the spool is gone");
	EXPECT(t_journal_count("gone-rm") == 0 && t_journal_count("gone-mv") == 0 &&
	    t_journal_count("removed-early") == 0, "a handler ran on a removed job");
	EXPECT(f_owner_says(owner, "gone-rm") && f_owner_says(owner, "gone-mv"),
	    "the owner's stderr does not mention the jobs that left new/ before"
	    " their claim:\n%s", t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM:\n%s",
	    t_log_of(owner));
}
END_TEST

START_TEST(test_job_removed_from_cur_while_its_handler_runs_is_stopped_and_logged)
{
	pid_t owner, h1, h2;
	const char *where;
	char *log;

	owner = OWNER("-j", "2", QUICK, "--", h_block());
	t_submit_as("victim-rm", "x\n");
	t_submit_as("victim-mv", "x\n");
	WAIT_UNTIL(t_journal_count("victim-rm") == 1 &&
	    t_journal_count("victim-mv") == 1, 10000,
	    "the two handlers did not start");
	h1 = t_handler_pid("victim-rm");
	h2 = t_handler_pid("victim-mv");
	EXPECT(t_alive(h1) && t_alive(h2), "the handlers are not running");

	EXPECT(unlink(SP("cur", "victim-rm")) == 0, "rm cur/victim-rm: %s",
	    strerror(errno));
	EXPECT(rename(SP("cur", "victim-mv"), RP("victim-mv")) == 0,
	    "mv cur/victim-mv out of the spool: %s", strerror(errno));
	WAIT_UNTIL(!t_alive(h1) && !t_alive(h2), 5000,
	    "the handlers of the removed jobs still run after 5 s (pids %d %d)",
	    (int)h1, (int)h2);
	WAIT_UNTIL(f_owner_line(owner, "job=victim-rm", "cur->") &&
	    f_owner_line(owner, "job=victim-mv", "cur->"), 5000,
	    "the owner did not record what became of the removed jobs:\n%s",
	    t_log_of(owner));
	for (int i = 0; i < 2; i++) {
		const char *id = i == 0 ? "victim-rm" : "victim-mv";

		log = t_slurp(SP("log", id));
		EXPECT(log && strstr(log, "cancelled"), "log/%s does not record"
		    " that the job was taken away: '%s'", id, t_snip(log));
		free(log);
	}

	t_release();
	f_alive(owner, "jobs were removed from cur/");
	t_submit_as("after", "x\n");
	EXPECT(t_await("after", 10000) == 0, "the owner stopped after jobs were"
	    " removed from cur/");
	EXPECT(t_where("victim-rm", &where) == 0 && t_where("victim-mv", &where) == 0,
	    "a removed job reappeared in %s/", where);
	EXPECT(t_exists(RP("victim-mv")), "the job moved out of the spool is gone");
	EXPECT(t_journal_count("victim-rm") == 1 && t_journal_count("victim-mv") == 1,
	    "a removed job ran again");
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM:\n%s",
	    t_log_of(owner));
}
END_TEST

START_TEST(test_job_removed_from_defer_while_it_waits_never_runs_and_is_logged)
{
	const char *where;
	pid_t owner;
	int code;

	owner = OWNER(QUICK, "--", h_journal());
	t_await_lock(owner, 5000);
	t_write(RP("in"), "x\n");
	/* each removed at once, well before it is due */
	code = CHUTE_IN(RP("in"), "submit", T.spool, "--id", "later-rm",
	    "--delay", "1s");
	EXPECT(code == 0, "submit --delay exited %d: %s", code, t_snip(T.err));
	EXPECT(unlink(SP("defer", "later-rm")) == 0, "rm defer/later-rm: %s",
	    strerror(errno));
	code = CHUTE_IN(RP("in"), "submit", T.spool, "--id", "later-mv",
	    "--delay", "1s");
	EXPECT(code == 0, "submit --delay exited %d: %s", code, t_snip(T.err));
	EXPECT(rename(SP("defer", "later-mv"), RP("later-mv")) == 0,
	    "mv defer/later-mv out of the spool: %s", strerror(errno));
	/* due after the two: once it is done, the owner has been past them */
	code = CHUTE_IN(RP("in"), "submit", T.spool, "--id", "marker", "--delay",
	    "1500ms");
	EXPECT(code == 0, "submit --delay exited %d: %s", code, t_snip(T.err));

	EXPECT(t_await("marker", 10000) == 0, "the marker job did not finish");
	f_alive(owner, "jobs were removed from defer/");
	EXPECT(t_where("later-rm", &where) == 0 && t_where("later-mv", &where) == 0,
	    "a removed job reappeared in %s/", where);
	EXPECT(t_journal_count("later-rm") == 0 && t_journal_count("later-mv") == 0,
	    "a job removed from defer/ ran");
	EXPECT(t_exists(RP("later-mv")), "the job moved out of the spool is gone");
	EXPECT(f_owner_says(owner, "later-rm") && f_owner_says(owner, "later-mv"),
	    "the owner's stderr does not mention the jobs that left defer/:\n%s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "owner did not exit 0 on SIGTERM:\n%s",
	    t_log_of(owner));
}
END_TEST

/* ------------------------------------------------------------------ */


Suite *
fault_suite(void)
{
	Suite *s = suite_create("fault");
	TCase *tc;

	tc = t_tcase(fault_setup, fault_teardown, "submit", 60);
	tcase_add_test(tc, test_submit_that_runs_out_of_space_exits_74_and_leaves_nothing);
	tcase_add_test(tc, test_submit_whose_fsync_fails_exits_74_and_leaves_nothing);
	tcase_add_test(tc, test_submit_whose_close_fails_exits_74_and_leaves_nothing);
	tcase_add_test(tc, test_submit_that_cannot_create_its_tmp_file_exits_74_and_leaves_nothing);
	tcase_add_test(tc, test_submit_whose_rename_fails_exits_74_and_leaves_nothing);
	tcase_add_test(tc, test_submit_whose_directory_fsync_fails_exits_74_and_leaves_nothing_in_new);
	tcase_add_test(tc, test_submit_of_two_files_whose_second_fails_keeps_only_the_first);
	tcase_add_test(tc, test_submit_and_the_owner_on_a_full_file_system);
	suite_add_tcase(s, tc);

	tc = t_tcase(fault_setup, fault_teardown, "owner", 60);
	tcase_add_test(tc, test_owner_retries_a_move_to_done_that_failed_with_eio);
	tcase_add_test(tc, test_sigterm_does_not_wait_for_an_outcome_that_cannot_be_recorded);
	tcase_add_test(tc, test_deferred_jobs_due_one_after_another_do_not_rescan_defer);
	tcase_add_test(tc, test_owner_retries_a_claim_that_failed_with_eio);
	tcase_add_test(tc, test_owner_retries_an_fsync_of_done_that_failed_with_eio);
	tcase_add_test(tc, test_a_stalled_fsync_of_done_holds_up_no_job);
	tcase_add_test(tc, test_owner_retries_a_job_it_could_not_open_for_lack_of_descriptors);
	tcase_add_test(tc, test_owner_retries_rejecting_a_fifo_whose_move_to_failed_failed);
	tcase_add_test(tc, test_owner_runs_jobs_whose_log_cannot_be_written);
	suite_add_tcase(s, tc);

	tc = t_tcase(fault_setup, fault_teardown, "operator", 60);
	tcase_add_test(tc, test_job_removed_from_new_before_its_claim_is_skipped_and_logged);
	tcase_add_test(tc, test_job_removed_from_cur_while_its_handler_runs_is_stopped_and_logged);
	tcase_add_test(tc, test_job_removed_from_defer_while_it_waits_never_runs_and_is_logged);
	suite_add_tcase(s, tc);
	return s;
}
