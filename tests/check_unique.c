/*
 * check_unique.c: unique keys (issue 37), end to end on both stores:
 * eight submitters at once per --on-duplicate mode make one job per key
 * (the others' exit statuses as chute.1 says), a key frees when its job
 * leaves the states its submitter chose, a submit that fails leaves no
 * key taken, a job dropped in by mv with a held key is refused, two
 * spools forwarding the same key into one queue make one job, and bad
 * keys are refused with one line and nothing written.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/spool.h"
#include "store/unique.h"
#include "suites.h"
#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"

#define NSUB		8	/* concurrent submitters per mode */
#define EXIT_HELD_	3	/* chute.1: submit's key held, refused */

/* Entries of dir whose name ends with ",u=KEY". */
static int
keyed(const char *dir, const char *key)
{
	const char *tail = P(",u=%s", key);
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	EXPECT(d != NULL, "opendir %s", dir);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name), tl = strlen(tail);
		if (l >= tl && strcmp(e->d_name + l - tl, tail) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* The spool's jobs with that key, in every state. */
static int
spool_jobs(const char *key)
{
	static const char *const st[] = { "new", "cur", "defer", "done",
	    "failed" };
	int n = 0;

	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		n += keyed(P("%s/%s", T.spool, st[i]), key);
	return n;
}

/* The queue's jobs with that key. */
static long
queue_jobs(const char *key)
{
	return t_sqln(P("SELECT count(*) FROM chute.jobs WHERE id LIKE"
	    " '%%,u=%s'", key));
}

/*
 * NSUB `chute submit STORE --unique key --on-duplicate mode` at once,
 * each with its own payload; their exit codes into code[], what each
 * printed into out[] (one line: an ID).
 */
static void
submit_at_once(const char *store, const char *key_, const char *mode,
    int *code, char out[][256])
{
	char key[128], in[NSUB][PATH_MAX], o[NSUB][PATH_MAX], e[NSUB][PATH_MAX];
	pid_t pid[NSUB];

	/* P()'s ring of buffers turns over in this loop: copies. */
	snprintf(key, sizeof(key), "%s", key_);
	for (int i = 0; i < NSUB; i++) {
		snprintf(in[i], PATH_MAX, "%s/in.%s.%d", T.root, key, i);
		snprintf(o[i], PATH_MAX, "%s/out.%s.%d", T.root, key, i);
		snprintf(e[i], PATH_MAX, "%s/err.%s.%d", T.root, key, i);
		t_write(in[i], P("payload %d of %s\n", i, key));
	}
	for (int i = 0; i < NSUB; i++)
		pid[i] = t_spawn((const char *const[]){ T.bin, "submit", store,
		    "--unique", key, "--on-duplicate", mode, in[i], NULL }, NULL,
		    o[i], e[i], NULL);
	for (int i = 0; i < NSUB; i++) {
		char *text;

		code[i] = t_reap(pid[i], 30000, "chute submit --unique");
		text = t_slurp(o[i]);
		EXPECT(text != NULL && t_nlines(text) == 1, "submitter %d of %s"
		    " (%s) printed '%s', exit %d: %s", i, key, mode,
		    text ? text : "", code[i], t_slurp(e[i]));
		snprintf(out[i], 256, "%.*s", (int)strcspn(text, "\n"), text);
		free(text);
	}
}

/*
 * The promise, per mode: refuse, one exits 0 and seven EXIT_HELD_; keep
 * and replace, all 0; every one printed the one job's ID.
 */
static void
expect_one_job(const char *key, const char *mode, const int *code,
    char out[][256])
{
	int ok = 0, held = 0;

	for (int i = 0; i < NSUB; i++) {
		ok += code[i] == 0;
		held += code[i] == EXIT_HELD_;
		EXPECT(strcmp(out[i], out[0]) == 0, "%s (%s): submitter %d "
		    "printed %s, submitter 0 %s", key, mode, i, out[i], out[0]);
	}
	if (strcmp(mode, "refuse") == 0)
		EXPECT(ok == 1 && held == NSUB - 1, "%s refuse: %d exited 0, "
		    "%d exited 3", key, ok, held);
	else
		EXPECT(ok == NSUB, "%s %s: %d of %d exited 0", key, mode, ok,
		    NSUB);
}

static const char *const modes[] = { "refuse", "keep", "replace" };

/* ---- a spool ---- */

START_TEST(test_eight_submitters_at_once_make_one_job_per_key_on_a_spool)
{
	for (size_t m = 0; m < 3; m++) {
		char key[32], out[NSUB][256], *body;
		int code[NSUB], n;

		snprintf(key, sizeof(key), "k-%s", modes[m]);
		submit_at_once(T.spool, key, modes[m], code, out);
		expect_one_job(key, modes[m], code, out);
		EXPECT((n = spool_jobs(key)) == 1, "%s: %d jobs", key, n);
		EXPECT(t_exists(SP("new", out[0])), "%s: new/%s", key, out[0]);
		body = t_slurp(SP("new", out[0]));
		EXPECT(body && strncmp(body, "payload ", 8) == 0 &&
		    strstr(body, key), "%s: its payload: %s", key, body);
		free(body);
	}
	EXPECT(t_entries(P("%s/tmp", T.spool)) == 0, "tmp/ is empty");
}
END_TEST

/* Submit one job with key and the given flags: its exit code. */
static int
submit_key(const char *store, const char *key, const char *w)
{
	const char *in = RP("in");

	t_write(in, "x\n");
	return CHUTE("submit", store, "--unique", key, "--unique-while", w,
	    in);
}

START_TEST(test_a_key_frees_when_its_job_leaves_the_chosen_states_on_a_spool)
{
	pid_t owner;

	/* All three held while waiting (new/). */
	EXPECT(submit_key(T.spool, "w", "waiting") == 0 &&
	    submit_key(T.spool, "a", "active") == 0 &&
	    submit_key(T.spool, "k", "kept") == 0, "first submits: %s", T.err);
	EXPECT(submit_key(T.spool, "w", "waiting") == EXIT_HELD_ &&
	    submit_key(T.spool, "a", "active") == EXIT_HELD_ &&
	    submit_key(T.spool, "k", "kept") == EXIT_HELD_, "held in new/");
	owner = OWNER("-j", "3", "--", h_block());
	WAIT_UNTIL(t_count_state("cur") == 3, 10000, "three running");
	/* Running: only "waiting" is free. */
	EXPECT(submit_key(T.spool, "w", "waiting") == 0, "w free: %s", T.err);
	EXPECT(submit_key(T.spool, "a", "active") == EXIT_HELD_ &&
	    strstr(T.err, "(cur)"), "a held while it runs: %s", T.err);
	EXPECT(submit_key(T.spool, "k", "kept") == EXIT_HELD_, "k held");
	t_release();
	WAIT_UNTIL(t_count_state("done") == 4, 20000, "all four done");
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	/* Finished: "active" is free, "kept" is not, until purged. */
	EXPECT(submit_key(T.spool, "a", "active") == 0, "a free: %s", T.err);
	EXPECT(submit_key(T.spool, "k", "kept") == EXIT_HELD_ &&
	    strstr(T.err, "(done)"), "k kept while done: %s", T.err);
	EXPECT(CHUTE("purge", T.spool, "--older-than", "0s") == 0, "purge: %s",
	    T.err);
	EXPECT(submit_key(T.spool, "k", "kept") == 0, "k free: %s", T.err);
}
END_TEST

START_TEST(test_a_failed_submit_leaves_no_key_taken_on_a_spool)
{
	const char *lib = getenv("CHUTE_FAULT_LIB");
	int code;

	/* An ID that exists: refused before anything is taken. */
	t_drop("a,u=k", "by hand\n");
	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", T.spool, "--id", "a", "--unique", "k",
	    RP("in")) == 1 && strstr(T.err, "job exists"), "taken: %s", T.err);
	EXPECT(!t_exists(P("%s/unique/k", T.spool)) ||
	    t_slurp(P("%s/unique/k", T.spool))[0] == '\0', "no holder");
	if (lib == NULL) {
		fprintf(stderr, "check_unique: the fsync fault: skipped: "
		    "CHUTE_FAULT_LIB is not set\n");
		return;
	}
	/* The fsync of new/ fails after the key was taken: given back. */
	setenv("LD_PRELOAD", lib, 1);
	setenv("CHUTE_FAULT", "fsync:1:EIO", 1);
	setenv("CHUTE_FAULT_PATH", P("%s/new", T.spool), 1);
	code = CHUTE("submit", T.spool, "--unique", "f", RP("in"));
	unsetenv("LD_PRELOAD");
	unsetenv("CHUTE_FAULT");
	unsetenv("CHUTE_FAULT_PATH");
	EXPECT(code == 74 && T.out[0] == '\0' && t_nlines(T.err) == 1,
	    "the failed submit: %d '%s' '%s'", code, T.out, T.err);
	EXPECT(spool_jobs("f") == 0, "no job");
	EXPECT(CHUTE("submit", T.spool, "--unique", "f", RP("in")) == 0,
	    "the key is free: %s", T.err);
}
END_TEST

START_TEST(test_a_job_dropped_in_by_mv_with_a_held_key_is_refused)
{
	pid_t owner;
	char *log;

	t_write(RP("in"), "x\n");
	EXPECT(CHUTE("submit", T.spool, "--unique", "m", "--delay", "1h",
	    RP("in")) == 0, "submit: %s", T.err);
	T.out[strcspn(T.out, "\n")] = '\0';
	char holder[256];
	snprintf(holder, sizeof(holder), "%.255s", T.out);
	t_drop("by-mv,u=m", "dropped\n");
	t_drop("free,u=n", "dropped\n");
	owner = OWNER("--", h_journal());
	WAIT_UNTIL(t_exists(SP("failed", "by-mv,u=m")) &&
	    t_exists(SP("done", "free,u=n")), 10000, "refused, and run: %s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	log = t_slurp(SP("log", "by-mv,u=m"));
	EXPECT(log && strstr(log, "rejected: unique key m is held by job") &&
	    strstr(log, holder), "its log: %s", log);
	EXPECT(t_exists(SP("done", "free,u=n")), "a free key runs");
	EXPECT(strstr(t_status("free,u=n"), " unique=n"), "status: %s",
	    t_status("free,u=n"));
	EXPECT(t_exists(SP("defer", holder)), "the holder still waits");
}
END_TEST

/*
 * A name's key that cannot be a file of unique/ ("..", "."): the job is
 * refused to failed/ with the reason in its log, not retried forever in
 * new/, and the others run.
 */
START_TEST(test_a_job_dropped_in_with_a_dot_key_is_refused)
{
	pid_t owner;
	char *log;

	t_drop("dots,u=..", "dropped\n");
	t_drop("dot,u=.", "dropped\n");
	t_drop("fine,u=ok", "dropped\n");
	owner = OWNER("--", h_journal());
	WAIT_UNTIL(t_exists(SP("failed", "dots,u=..")) &&
	    t_exists(SP("failed", "dot,u=.")) &&
	    t_exists(SP("done", "fine,u=ok")), 10000, "refused, and run: %s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
	log = t_slurp(SP("log", "dots,u=.."));
	EXPECT(log && strstr(log, "rejected: a unique key is not . or .."),
	    "its log: %s", log);
	EXPECT(t_log_count(owner, "will retry") == 0, "not retried: %s",
	    t_log_of(owner));
}
END_TEST

/* submit --unique r --on-duplicate replace of text, and the flags. */
static int
replace(const char *store, const char *text, const char *flag,
    const char *value)
{
	t_write(RP("in"), text);
	if (flag == NULL)
		return CHUTE("submit", store, "--unique", "r",
		    "--on-duplicate", "replace", RP("in"));
	return CHUTE("submit", store, "--unique", "r", "--on-duplicate",
	    "replace", flag, value, RP("in"));
}

/*
 * replace keeps the waiting job's ID and takes its bytes and time, from
 * new/ to defer/ (two renames) and back, and within one (the exchange).
 */
START_TEST(test_replace_moves_a_waiting_job_between_new_and_defer)
{
	char id[256], *body;

	EXPECT(replace(T.spool, "one\n", NULL, NULL) == 0, "%s", T.err);
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(T.out, "\n"), T.out);
	EXPECT(replace(T.spool, "two\n", "--delay", "1h") == 0 &&
	    strncmp(T.out, id, strlen(id)) == 0, "same ID: %s %s", T.out, T.err);
	EXPECT(t_exists(SP("defer", id)) && !t_exists(SP("new", id)) &&
	    t_mtime_ms(SP("defer", id)) > t_now() + 3000 * 1000,
	    "in defer/, an hour away");
	EXPECT(replace(T.spool, "three\n", "--delay", "2h") == 0 &&
	    t_mtime_ms(SP("defer", id)) > t_now() + 6000 * 1000, "two hours");
	EXPECT(replace(T.spool, "four\n", NULL, NULL) == 0 &&
	    t_exists(SP("new", id)) && !t_exists(SP("defer", id)), "now");
	body = t_slurp(SP("new", id));
	EXPECT(body && strcmp(body, "four\n") == 0, "the last bytes: %s", body);
	free(body);
	EXPECT(t_entries(P("%s/tmp", T.spool)) == 0 && spool_jobs("r") == 1,
	    "one job, nothing left in tmp/");
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
 * A replace from new/ to defer/ killed with -9 at each of its renames
 * (held there by the fault shim, then killed): the waiting job is never
 * lost, and never doubled, whichever step the crash cut.  Until the old
 * job was moved aside into tmp/ first, a kill at the second rename left
 * no job at all.
 */
START_TEST(test_a_replace_killed_at_any_rename_loses_no_job)
{
	const char *lib = getenv("CHUTE_FAULT_LIB");
	char key[8], spec[32];
	int code, held = 0;
	pid_t p;

	if (lib == NULL) {
		fprintf(stderr, "check_unique: the crash of replace: skipped: "
		    "CHUTE_FAULT_LIB is not set\n");
		return;
	}
	EXPECT(mkfifo(RP("stall"), 0600) == 0, "mkfifo: %s", strerror(errno));
	for (int n = 1; n <= 3; n++) {
		snprintf(key, sizeof(key), "c%d", n);
		t_write(RP("in"), "one\n");
		EXPECT(CHUTE("submit", T.spool, "--unique", key, RP("in")) == 0,
		    "submit: %s", T.err);
		t_write(RP("in"), "two\n");
		unlink(RP("faults"));
		snprintf(spec, sizeof(spec), "renameat2:%d:HOLD", n);
		setenv("LD_PRELOAD", lib, 1);
		setenv("CHUTE_FAULT", spec, 1);
		setenv("CHUTE_FAULT_PATH", "/defer/", 1);
		setenv("CHUTE_FAULT_HOLD", RP("stall"), 1);
		setenv("CHUTE_FAULT_LOG", RP("faults"), 1);
		p = t_spawn((const char *const[]){ T.bin, "submit", T.spool,
		    "--unique", key, "--on-duplicate", "replace", "--delay",
		    "1h", RP("in"), NULL }, NULL, RP("out"), RP("out"), NULL);
		unsetenv("LD_PRELOAD");
		unsetenv("CHUTE_FAULT");
		unsetenv("CHUTE_FAULT_PATH");
		unsetenv("CHUTE_FAULT_HOLD");
		unsetenv("CHUTE_FAULT_LOG");
		WAIT_UNTIL(t_poll_exit(p, &code) || shim_held(), 10000,
		    "rename %d held, or the submit done", n);
		if (shim_held()) {
			held++;
			kill(p, SIGKILL);
			t_reap(p, 5000, "the killed submit");
		}
		EXPECT(spool_jobs(key) == 1, "kill at rename %d: %d jobs of key "
		    "%s (new/ %d, defer/ %d)", n, spool_jobs(key), key,
		    keyed(P("%s/new", T.spool), key), keyed(P("%s/defer",
		    T.spool), key));
	}
	EXPECT(held >= 1, "a rename was held: %d", held);
}
END_TEST

/*
 * A group spool: the submitters are users of their own, and one takes a
 * key another's file holds (unique/KEY made by eve, 0660, written by bob:
 * opened without O_CREAT, which fs.protected_regular allows).
 */
START_TEST(test_submitters_of_a_group_spool_share_the_keys)
{
	char sub[PATH_MAX * 2 + 64];
	pid_t owner;

	if (!t_users())
		return;
	t_group_spool();
	snprintf(sub, sizeof(sub), "echo x | %s submit %s --unique g", T.bin,
	    T.spool);
	EXPECT(t_sh_as("chute-t-eve", 10000, sub) == 0,
	    "eve takes g");
	EXPECT(t_sh_as("chute-t-bob", 10000, sub) == EXIT_HELD_, "bob is refused while eve's job waits");
	owner = OWNER_AS("chute-t-own", "--", "/bin/cat");
	WAIT_UNTIL(t_count_state("done") == 1, 10000, "eve's job done: %s",
	    t_log_of(owner));
	EXPECT(t_sh_as("chute-t-bob", 10000, sub) == 0,
	    "bob takes g once eve's job is done");
	WAIT_UNTIL(t_count_state("done") == 2, 10000, "bob's job done");
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
}
END_TEST

/* Bad keys: one line, exit 64, nothing in the spool or the queue. */
static void
bad_keys(const char *store)
{
	char big[10241];
	const char *bad[] = { "a/b", "tab\there", "nl\nx", "", big,
	    "\x1b[31mred", ".", ".." };

	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	t_write(RP("in"), "x\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT(CHUTE("submit", store, "--unique", bad[i], RP("in")) ==
		    64 && t_nlines(T.err) == 1 && T.out[0] == '\0' &&
		    strlen(T.err) < 200, "bad key %zu: '%s'", i, t_snip(T.err));
	}
	EXPECT(CHUTE("submit", store, "--unique", "k", "--unique-while",
	    "forever", RP("in")) == 64 && t_nlines(T.err) >= 1, "bad states");
	EXPECT(CHUTE("submit", store, "--unique", "k", "--on-duplicate",
	    "merge", RP("in")) == 64, "bad mode");
	EXPECT(CHUTE("submit", store, "--on-duplicate", "keep", RP("in")) == 64,
	    "a mode without a key");
	EXPECT(CHUTE("submit", store, "--unique", "k", RP("in"), RP("in")) ==
	    64, "two inputs");
	EXPECT(CHUTE("submit", store, "--id", "a,u=k", "--unique", "k",
	    RP("in")) == 64, "an --id with the attribute already");
}

/* The ID on T.out's first line. */
static const char *
printed_id(void)
{
	return P("%.*s", (int)strcspn(T.out, "\n"), T.out);
}

/*
 * The owner's pass over unique/ (at its start, then hourly) removes the
 * file of a key no job holds, and keeps the others: a key held by a job
 * waiting, one kept by a done job, one whose flock another process holds.
 */
START_TEST(test_the_owner_removes_the_files_of_free_keys_only)
{
	char dir[PATH_MAX];
	pid_t owner;
	int fd;

	snprintf(dir, sizeof(dir), "%s/unique", T.spool);
	EXPECT(submit_key(T.spool, "fin", "active") == 0 &&
	    submit_key(T.spool, "kept", "kept") == 0, "submits: %s", T.err);
	EXPECT(DRAIN("--", h_journal()) == 0, "drain");
	EXPECT(CHUTE("submit", T.spool, "--unique", "held", "--delay", "1h",
	    RP("in")) == 0, "held: %s", T.err);
	EXPECT(submit_key(T.spool, "busy", "active") == 0, "busy: %s", T.err);
	EXPECT(CHUTE("cancel", T.spool, printed_id()) == 0, "cancel");
	fd = open(P("%s/busy", dir), O_RDWR | O_CLOEXEC);
	EXPECT(fd != -1 && flock(fd, LOCK_EX) == 0, "flock busy");
	owner = OWNER("--", h_journal());
	WAIT_UNTIL(!t_exists(P("%s/fin", dir)), 10000, "fin's file removed: %s",
	    t_log_of(owner));
	WAIT_UNTIL(strstr(t_log_of(owner), "1 free keys' files removed"),
	    10000, "said: %s", t_log_of(owner));
	EXPECT(t_exists(P("%s/kept", dir)) && t_exists(P("%s/held", dir)) &&
	    t_exists(P("%s/busy", dir)), "the others kept");
	close(fd);
	/* The key is free, and taken again with a file made again. */
	EXPECT(submit_key(T.spool, "fin", "active") == 0 &&
	    t_exists(P("%s/fin", dir)), "fin again: %s", T.err);
	EXPECT(submit_key(T.spool, "kept", "kept") == EXIT_HELD_ &&
	    submit_key(T.spool, "held", "active") == EXIT_HELD_, "still held");
	EXPECT(t_stop(owner) == 0, "owner: %s", t_log_of(owner));
}
END_TEST

/* Is a process blocked in flock(2) on inode ino (/proc/locks "->")? */
static bool
lock_waited(ino_t ino)
{
	char *locks = t_slurp("/proc/locks"), *line, *save = NULL;
	const char *tail = P(":%llu ", (unsigned long long)ino);
	bool yes = false;

	for (line = locks ? strtok_r(locks, "\n", &save) : NULL; line && !yes;
	    line = strtok_r(NULL, "\n", &save))
		yes = strstr(line, ": -> FLOCK") != NULL &&
		    strstr(line, tail) != NULL;
	free(locks);
	return yes;
}

/*
 * The sweep's race, played by hand: a submitter has opened a key's file
 * and waits on its flock while the sweep, holding it, removes the file.
 * Once it has the lock it must see the file is no longer the key's and
 * open the name again, or it and the next submitter would hold two
 * locks of one key.  The holder it writes must be in the key's file.
 */
START_TEST(test_a_key_s_file_removed_under_a_waiting_submitter_is_opened_again)
{
	struct spool sp;
	struct unique_hold h;
	struct stat st;
	pid_t kid;
	int fd, status;

	EXPECT(submit_key(T.spool, "k", "active") == 0, "k: %s", T.err);
	EXPECT(CHUTE("cancel", T.spool, printed_id()) == 0, "cancel");
	EXPECT(spool_open(&sp, T.spool) == 0, "spool_open");
	fd = open(P("%s/unique/k", T.spool), O_RDWR | O_CLOEXEC);
	EXPECT(fd != -1 && flock(fd, LOCK_EX) == 0 && fstat(fd, &st) == 0,
	    "the sweep's flock");
	if ((kid = fork()) == 0) {
		close(fd);	/* the flock is the description's: not ours */
		if (unique_lock(&sp, "k", true, &h) != 0 ||
		    unique_set(&h, UQ_ACTIVE, "mine") != 0)
			_exit(1);
		_exit(0);
	}
	WAIT_UNTIL(lock_waited(st.st_ino), 10000, "the submitter waits");
	EXPECT(unlink(P("%s/unique/k", T.spool)) == 0, "the sweep's unlink");
	close(fd);
	EXPECT(waitpid(kid, &status, 0) == kid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0, "unique_lock: %#x", status);
	EXPECT(t_exists(P("%s/unique/k", T.spool)) && strcmp(t_slurp(
	    P("%s/unique/k", T.spool)), "active mine\n") == 0,
	    "the holder is in the key's file");
	spool_close(&sp);
}
END_TEST

START_TEST(test_bad_unique_keys_are_refused_with_one_line_on_a_spool)
{
	bad_keys(T.spool);
	EXPECT(t_entries(P("%s/new", T.spool)) == 0 &&
	    t_entries(P("%s/tmp", T.spool)) == 0 &&
	    t_entries(P("%s/unique", T.spool)) == 0, "nothing written");
}
END_TEST

/* ---- a queue ---- */

START_TEST(test_eight_submitters_at_once_make_one_job_per_key_in_a_queue)
{
	for (size_t m = 0; m < 3; m++) {
		char key[32], out[NSUB][256];
		int code[NSUB];
		long n;

		snprintf(key, sizeof(key), "k-%s", modes[m]);
		submit_at_once(t_uri, key, modes[m], code, out);
		expect_one_job(key, modes[m], code, out);
		EXPECT((n = queue_jobs(key)) == 1, "%s: %ld jobs", key, n);
		EXPECT(t_sqln(P("SELECT count(*) FROM chute.payloads WHERE"
		    " id = '%s' AND convert_from(body, 'UTF8') LIKE"
		    " 'payload %% of %s%%'", out[0], key)) == 1, "%s: payload",
		    key);
	}
	EXPECT(t_sqln("SELECT count(*) FROM chute.unique_keys") == 3,
	    "three keys held");
}
END_TEST

/* A worker of the queue whose handler blocks until t_release(). */
static pid_t
worker(const char *log)
{
	return t_spawn((const char *const[]){ T.bin, "run", t_uri, "-j", "3",
	    "--", h_block(), NULL }, NULL, RP(log), RP(log), NULL);
}

START_TEST(test_a_key_frees_when_its_job_leaves_the_chosen_states_in_a_queue)
{
	pid_t w;

	EXPECT(submit_key(t_uri, "w", "waiting") == 0 &&
	    submit_key(t_uri, "a", "active") == 0 &&
	    submit_key(t_uri, "k", "kept") == 0, "first submits: %s", T.err);
	EXPECT(submit_key(t_uri, "w", "waiting") == EXIT_HELD_ &&
	    submit_key(t_uri, "a", "active") == EXIT_HELD_ &&
	    submit_key(t_uri, "k", "kept") == EXIT_HELD_, "held while new");
	w = worker("w.log");
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.live WHERE state = 'cur'")
	    == 3, 20000, "three running: %s", t_log_of(w));
	EXPECT(submit_key(t_uri, "w", "waiting") == 0, "w free: %s", T.err);
	EXPECT(submit_key(t_uri, "a", "active") == EXIT_HELD_ &&
	    strstr(T.err, "(cur)"), "a held while it runs: %s", T.err);
	EXPECT(submit_key(t_uri, "k", "kept") == EXIT_HELD_, "k held");
	t_release();
	WAIT_UNTIL(t_sqln("SELECT count(*) FROM chute.jobs WHERE state ="
	    " 'done'") == 4, 20000, "all four done: %s", t_log_of(w));
	EXPECT(t_stop(w) == 0, "worker: %s", t_log_of(w));
	EXPECT(submit_key(t_uri, "a", "active") == 0, "a free: %s", T.err);
	EXPECT(submit_key(t_uri, "k", "kept") == EXIT_HELD_ &&
	    strstr(T.err, "(done)"), "k kept while done: %s", T.err);
	EXPECT(CHUTE("purge", t_uri, "--older-than", "0s") == 0, "purge: %s",
	    T.err);
	EXPECT(submit_key(t_uri, "k", "kept") == 0, "k free: %s", T.err);
	EXPECT(strstr(T.out, ",u=k") && CHUTE("status", t_uri,
	    P("%.*s", (int)strcspn(T.out, "\n"), T.out)) == 0 &&
	    strstr(T.out, " unique=k"), "status: %s", T.out);
}
END_TEST

START_TEST(test_a_failed_submit_leaves_no_key_taken_in_a_queue)
{
	t_write(RP("in"), "x\n");
	/* The job's ID is taken: the key's row goes with the statement. */
	EXPECT(CHUTE("submit", t_uri, "--id", "a,u=k", RP("in")) == 0,
	    "plain: %s", T.err);
	EXPECT(CHUTE("submit", t_uri, "--id", "a", "--unique", "k", RP("in"))
	    == 1 && strstr(T.err, "job exists") && T.out[0] == '\0',
	    "taken: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.unique_keys") == 0,
	    "no key held");
	EXPECT(CHUTE("submit", t_uri, "--unique", "k", RP("in")) == 0,
	    "the key is free: %s", T.err);
}
END_TEST

START_TEST(test_replace_moves_a_waiting_job_between_new_and_defer_in_a_queue)
{
	char id[256];

	EXPECT(replace(t_uri, "one\n", NULL, NULL) == 0, "%s", T.err);
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(T.out, "\n"), T.out);
	EXPECT(replace(t_uri, "two\n", "--delay", "1h") == 0 &&
	    strncmp(T.out, id, strlen(id)) == 0, "same ID: %s %s", T.out, T.err);
	EXPECT(t_sqln(P("SELECT count(*) FROM chute.live WHERE id = '%s' AND"
	    " state = 'defer' AND run_at > now() + interval '50 minutes'", id))
	    == 1, "deferred an hour");
	EXPECT(replace(t_uri, "four\n", NULL, NULL) == 0, "%s", T.err);
	EXPECT(t_sqln(P("SELECT count(*) FROM chute.live l JOIN chute.payloads p"
	    " USING (queue, id) WHERE id = '%s' AND state = 'new' AND"
	    " run_at <= now() AND p.body = 'four\n'::bytea AND size = 5", id))
	    == 1, "new, the last bytes");
	EXPECT(queue_jobs("r") == 1, "one job");
}
END_TEST

START_TEST(test_two_spools_forwarding_the_same_keys_make_one_job_per_key)
{
	char other[PATH_MAX];
	pid_t fa, fb;
	int failed = 0;

	snprintf(other, sizeof(other), "%s/spool2", T.root);
	EXPECT(CHUTE("init", other) == 0, "init spool2");
	for (int i = 0; i < 4; i++) {
		t_drop(P("a%d,u=f%d", i, i), "from a\n");
		t_write(P("%s/tmp/b%d,u=f%d", other, i, i), "from b\n");
		EXPECT(rename(P("%s/tmp/b%d,u=f%d", other, i, i),
		    P("%s/new/b%d,u=f%d", other, i, i)) == 0, "drop b");
	}
	fa = t_spawn((const char *const[]){ T.bin, "forward", T.spool, t_uri,
	    "--drain", "--batch", "2", NULL }, NULL, RP("fa"), RP("fa"), NULL);
	fb = t_spawn((const char *const[]){ T.bin, "forward", other, t_uri,
	    "--drain", "--batch", "2", NULL }, NULL, RP("fb"), RP("fb"), NULL);
	EXPECT(t_reap(fa, 30000, "forward a") == 0, "a: %s", t_log_of(fa));
	EXPECT(t_reap(fb, 30000, "forward b") == 0, "b: %s", t_log_of(fb));
	for (int i = 0; i < 4; i++)
		EXPECT(queue_jobs(P("f%d", i)) == 1, "f%d: one job", i);
	failed = t_entries(P("%s/failed", T.spool)) +
	    t_entries(P("%s/failed", other));
	EXPECT(failed == 4 && t_entries(P("%s/done", T.spool)) +
	    t_entries(P("%s/done", other)) == 4, "4 forwarded, 4 refused");
	EXPECT(t_log_count(fa, "is held in default by job") +
	    t_log_count(fb, "is held in default by job") == 4, "said: %s %s",
	    t_log_of(fa), t_log_of(fb));
}
END_TEST

/*
 * forward refuses a name's key that chute submit refuses (".."), to
 * failed/ with the reason, as the spool's owner does; the queue gets no
 * such key, and the other jobs go.
 */
START_TEST(test_forward_refuses_a_dot_key_as_the_owner_does)
{
	pid_t fa;
	char *log;

	t_drop("dots,u=..", "x\n");
	t_drop("fine,u=f1", "x\n");
	fa = t_spawn((const char *const[]){ T.bin, "forward", T.spool, t_uri,
	    "--drain", NULL }, NULL, RP("fa"), RP("fa"), NULL);
	EXPECT(t_reap(fa, 30000, "forward") == 0, "forward: %s", t_log_of(fa));
	EXPECT(t_exists(SP("failed", "dots,u=..")) &&
	    t_exists(SP("done", "fine,u=f1")), "refused, and forwarded: %s",
	    t_log_of(fa));
	log = t_slurp(SP("log", "dots,u=.."));
	EXPECT(log && strstr(log, "rejected: a unique key is not . or .."),
	    "its log: %s", log);
	EXPECT(t_sqln("SELECT count(*) FROM chute.unique_keys WHERE ukey ="
	    " '..'") == 0 && queue_jobs("f1") == 1, "the queue: %s",
	    t_sql("SELECT string_agg(ukey, ' ') FROM chute.unique_keys"));
}
END_TEST

START_TEST(test_bad_unique_keys_are_refused_with_one_line_in_a_queue)
{
	bad_keys(t_uri);
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs") == 0 &&
	    t_sqln("SELECT count(*) FROM chute.unique_keys") == 0,
	    "nothing written");
}
END_TEST

Suite *
unique_suite(void)
{
	Suite *s = suite_create("unique");
	TCase *tc = t_tcase(t_cli_setup, t_cli_teardown, "unique_spool", 120);

	tcase_add_test(tc, test_eight_submitters_at_once_make_one_job_per_key_on_a_spool);
	tcase_add_test(tc, test_a_key_frees_when_its_job_leaves_the_chosen_states_on_a_spool);
	tcase_add_test(tc, test_a_failed_submit_leaves_no_key_taken_on_a_spool);
	tcase_add_test(tc, test_a_job_dropped_in_by_mv_with_a_held_key_is_refused);
	tcase_add_test(tc, test_a_job_dropped_in_with_a_dot_key_is_refused);
	tcase_add_test(tc, test_submitters_of_a_group_spool_share_the_keys);
	tcase_add_test(tc, test_replace_moves_a_waiting_job_between_new_and_defer);
	tcase_add_test(tc, test_a_replace_killed_at_any_rename_loses_no_job);
	tcase_add_test(tc, test_bad_unique_keys_are_refused_with_one_line_on_a_spool);
	tcase_add_test(tc, test_the_owner_removes_the_files_of_free_keys_only);
	tcase_add_test(tc, test_a_key_s_file_removed_under_a_waiting_submitter_is_opened_again);
	suite_add_tcase(s, tc);
	if (t_pg_skip())
		return s;
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "unique_pg", 180);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc, test_eight_submitters_at_once_make_one_job_per_key_in_a_queue);
	tcase_add_test(tc, test_a_key_frees_when_its_job_leaves_the_chosen_states_in_a_queue);
	tcase_add_test(tc, test_a_failed_submit_leaves_no_key_taken_in_a_queue);
	tcase_add_test(tc, test_replace_moves_a_waiting_job_between_new_and_defer_in_a_queue);
	tcase_add_test(tc, test_two_spools_forwarding_the_same_keys_make_one_job_per_key);
	tcase_add_test(tc, test_forward_refuses_a_dot_key_as_the_owner_does);
	tcase_add_test(tc, test_bad_unique_keys_are_refused_with_one_line_in_a_queue);
	suite_add_tcase(s, tc);
	return s;
}
