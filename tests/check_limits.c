/*
 * check_limits.c: priorities, keys and limits on a spool, end to end on
 * the real binary (issue 36).  A witness in the handlers counts: each
 * run appends "+" to root/w.KEY as it starts and "-" as it ends (O_APPEND:
 * the lines are in the order they happened), so the largest number of
 * "+" not yet matched is the most runs of that key that overlapped.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/limits.h"
#include "t_cli.h"
#include "suites.h"

/* The handler's key from CHUTE_ID, "none" without one. */
#define KEY_OF \
	"k=none; case \"$CHUTE_ID\" in *,k=*) k=${CHUTE_ID##*,k=};; esac\n"

/*
 * The witness around work: ms of sleep (the job's work, not a wait for
 * anything), or, with ms 0, until root/go.all or root/go.ID exists.
 */
static const char *
h_witness(void)
{
	return t_handler("h_witness", KEY_OF
	    "echo \"+ $(date +%s%3N) $CHUTE_ID\" >> \"$R/w.$k\"\n"
	    "echo \"$CHUTE_ID\" >> \"$R/journal\"\n"
	    "read -r ms < \"$CHUTE_JOB\"\n"
	    "if [ \"$ms\" = 0 ]; then\n"
	    "  i=0; while [ ! -e \"$R/go.all\" ] && [ ! -e \"$R/go.$CHUTE_ID\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
	    "else sleep \"$ms\"; fi\n"
	    "echo \"- $(date +%s%3N) $CHUTE_ID\" >> \"$R/w.$k\"\n");
}

/* The same as a persistent worker (ID<TAB>PATH in, ok out); 0: go.all. */
static const char *
w_witness(void)
{
	return t_handler("w_witness",
	    "tab=$(printf '\\t')\n"
	    "while IFS=\"$tab\" read -r CHUTE_ID CHUTE_JOB; do\n"
	    KEY_OF
	    "  echo \"+ $(date +%s%3N) $CHUTE_ID\" >> \"$R/w.$k\"\n"
	    "  read -r ms < \"$CHUTE_JOB\"\n"
	    "  if [ \"$ms\" = 0 ]; then\n"
	    "    i=0; while [ ! -e \"$R/go.all\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
	    "  else sleep \"$ms\"; fi\n"
	    "  echo \"- $(date +%s%3N) $CHUTE_ID\" >> \"$R/w.$k\"\n"
	    "  echo ok\n"
	    "done\n");
}

/* Most runs of key k that overlapped, and how many started, by its witness. */
static int
overlap(const char *k, int *starts)
{
	char *text = t_slurp(RP(P("w.%s", k))), *l;
	int now = 0, max = 0;

	*starts = 0;
	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL; i++) {
		if (l[0] == '+') {
			(*starts)++;
			if (++now > max)
				max = now;
		} else if (l[0] == '-')
			now--;
	}
	free(text);
	return max;
}

/* The start times (ms) of key k's runs, in order: how many. */
static int
start_times(const char *k, long long *t, int max)
{
	char *text = t_slurp(RP(P("w.%s", k))), *l;
	int n = 0;

	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL &&
	    n < max; i++)
		if (l[0] == '+' && sscanf(l + 2, "%lld", &t[n]) == 1)
			n++;
	free(text);
	return n;
}

/* The times (ms) SPOOL/.starts gives for key k, in order: how many. */
static int
owner_starts(const char *k, long long *t, int max)
{
	char *text = t_slurp(P("%s/.starts", T.spool)), *l, key[80];
	int n = 0;

	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL &&
	    n < max; i++)
		if (sscanf(l, "%lld %79s", &t[n], key) == 2 &&
		    strcmp(key, k) == 0)
			n++;
	free(text);
	return n;
}

/*
 * n jobs of key k ("" none) and priority p ("" default) whose content is
 * body, dropped as a submitter without chute does (tmp/, then mv): the
 * attributes in the name.  One process per `chute submit` would pass the
 * harness's bound on processes.
 */
static void
submit_n(int n, const char *k, const char *p, const char *body)
{
	static int seq;

	for (int i = 0; i < n; i++) {
		char name[128];

		snprintf(name, sizeof(name), "j%04d%s%s%s%s", seq++,
		    *p != '\0' ? ",p=" : "", p, *k != '\0' ? ",k=" : "", k);
		t_drop(name, P("%s\n", body));
	}
}

/* The same with chute submit --key --priority (one job). */
static void
submit_one(const char *k, const char *p, const char *body)
{
	char in[PATH_MAX];
	int rc;

	snprintf(in, sizeof(in), "%s/in", T.root);
	t_write(in, body);
	rc = CHUTE_IN(in, "submit", T.spool, "--key", k, "--priority", p);
	EXPECT(rc == 0, "submit: %d %s", rc, t_snip(T.err));
}

static void
set_limit(const char *scope, const char *k, const char *what,
    const char *val)
{
	int rc = k != NULL ? CHUTE("limit", T.spool, scope, k, what, val) :
	    CHUTE("limit", T.spool, scope, what, val);

	EXPECT(rc == 0, "limit %s %s %s: %d %s", scope, what, val, rc,
	    t_snip(T.err));
}

/* Each key's limit holds, and is reached, with -j 8 (exec, persistent). */
static void
witness_run(bool persistent)
{
	int n, max, code;

	set_limit("--key", "A", "--max", "3");
	set_limit("--default", NULL, "--max", "2");
	submit_n(15, "A", "", "0.15");
	submit_n(8, "B", "", "0.15");
	submit_n(6, "", "", "0.15");
	code = persistent ? DRAIN("--persistent", "-j", "8", QUICK, "--",
	    w_witness()) : DRAIN("-j", "8", QUICK, "--", h_witness());
	EXPECT(code == 0, "owner: %d", code);
	max = overlap("A", &n);
	EXPECT(n == 15 && max == 3, "key A: %d runs, %d at once (want 15, 3)",
	    n, max);
	max = overlap("B", &n);
	EXPECT(n == 8 && max == 2, "key B (default): %d runs, %d at once "
	    "(want 8, 2)", n, max);
	max = overlap("none", &n);
	EXPECT(n == 6 && max >= 2, "no key: %d runs, %d at once (unbounded)",
	    n, max);
	EXPECT(t_count_state("done") == 29, "done: %d", t_count_state("done"));
}

START_TEST(test_a_key_never_runs_more_than_its_limit_exec)
{
	witness_run(false);
}
END_TEST

START_TEST(test_a_key_never_runs_more_than_its_limit_persistent)
{
	witness_run(true);
}
END_TEST

/* Lines of the owner's output (all of it) that contain text. */
static bool
owner_said(pid_t owner, const char *text, int n)
{
	return t_log_count(owner, text) >= n;
}

/*
 * The owner killed with -9 while two handlers of key A (limit 2) run:
 * the next owner counts them (their flocks) and starts no third A job
 * until they are gone, while other work runs.
 */
static pid_t
owner_j8(bool persistent)
{
	return persistent ? OWNER("--persistent", "-j", "8", QUICK, "--",
	    w_witness()) : OWNER("-j", "8", QUICK, "--", h_witness());
}

static void
killed_run(bool persistent)
{
	pid_t o1, o2;
	int n, max;

	set_limit("--key", "A", "--max", "2");
	submit_n(5, "A", "", "0");
	o1 = owner_j8(persistent);
	WAIT_UNTIL(overlap("A", &n) == 2, 10000, "two A runs under owner 1");
	kill(o1, SIGKILL);
	t_reap(o1, 5000, "owner 1 after SIGKILL");
	o2 = owner_j8(persistent);
	WAIT_UNTIL(owner_said(o2, "still has a running handler", 2), 10000,
	    "owner 2 finds both handlers alive: %s", t_log_of(o2));
	/* A job of no key runs: owner 2 claims, and takes no A job. */
	submit_n(1, "", "", "0.01");
	WAIT_UNTIL(t_count_state("done") == 1, 10000, "the unkeyed job runs");
	overlap("A", &n);
	EXPECT(n == 2, "A started %d times while 2 old handlers ran", n);
	close(open(RP("go.all"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	WAIT_UNTIL(t_count_state("done") == 6, 20000, "every job done: %s",
	    t_log_of(o2));
	EXPECT(t_stop(o2) == 0, "owner 2's exit");
	max = overlap("A", &n);
	EXPECT(max == 2, "A ran %d at once across the kill", max);
}

START_TEST(test_an_owner_killed_mid_run_leaves_the_limit_exact)
{
	killed_run(false);
}
END_TEST

/* The same with persistent workers: the dead owner's hold .workers.PID. */
START_TEST(test_an_owner_killed_mid_run_leaves_the_limit_exact_persistent)
{
	killed_run(true);
}
END_TEST

/* At most 3 starts in any 1 s, from the witness's clock. */
START_TEST(test_a_rate_limit_holds_in_every_window)
{
	long long t[16];
	int n, code;

	set_limit("--key", "R", "--rate", "3/1s");
	submit_n(9, "R", "", "0.01");
	code = DRAIN("-j", "8", QUICK, "--", h_witness());
	EXPECT(code == 0, "owner: %d", code);
	n = start_times("R", t, 16);
	EXPECT(n == 9, "R ran %d times", n);
	/*
	 * The witness stamps a start after the fork and exec of a shell: its
	 * clock is late on the owner's by a varying few ms (100 at most
	 * allowed for a loaded machine).  A rate that let 4 through in a
	 * window would show them within a few ms of each other.
	 */
	for (int i = 0; i + 3 < n; i++)
		EXPECT(t[i + 3] - t[i] >= 1000 - 100, "starts %d and %d %lld ms "
		    "apart (4 in one window of 1 s)", i, i + 3, t[i + 3] - t[i]);
	EXPECT(t[n - 1] - t[0] >= 2000 - 100, "9 starts in %lld ms",
	    t[n - 1] - t[0]);
	/*
	 * The owner's own record of its starts (SPOOL/.starts), stamped as it
	 * decides: exact, but for 1 ms (the wall clock's millisecond and the
	 * monotonic one the owner counts with turn at different instants).
	 */
	n = owner_starts("R", t, 16);
	EXPECT(n == 9, "SPOOL/.starts has %d starts of R", n);
	for (int i = 0; i + 3 < n; i++)
		EXPECT(t[i + 3] - t[i] >= 1000 - 1, "the owner's starts %d and %d "
		    "%lld ms apart", i, i + 3, t[i + 3] - t[i]);
}
END_TEST

/*
 * A rate of 2 per 3 s across a kill -9 of the owner: the next owner counts
 * the starts the first made in the window (SPOOL/.starts).
 */
START_TEST(test_a_rate_holds_across_an_owner_killed)
{
	long long t[32];
	pid_t o1, o2;
	int n;

	set_limit("--key", "R", "--rate", "2/3s");
	submit_n(6, "R", "", "0.01");
	o1 = OWNER("-j", "8", QUICK, "--", h_witness());
	WAIT_UNTIL(start_times("R", t, 32) == 2, 10000, "two starts under "
	    "owner 1");
	kill(o1, SIGKILL);
	t_reap(o1, 5000, "owner 1 after SIGKILL");
	o2 = OWNER("-j", "8", QUICK, "--", h_witness());
	WAIT_UNTIL(t_count_state("done") == 6, 30000, "every job done: %s",
	    t_log_of(o2));
	EXPECT(t_stop(o2) == 0, "owner 2's exit");
	n = start_times("R", t, 32);
	EXPECT(n >= 6, "R ran %d times", n);
	/* The witness's stamp is late by a fork and an exec: 100 ms. */
	for (int i = 0; i + 2 < n; i++)
		EXPECT(t[i + 2] - t[i] >= 3000 - 100, "starts %d and %d %lld ms "
		    "apart (3 in one window of 3 s)", i, i + 2, t[i + 2] - t[i]);
}
END_TEST

/* The position (1-based) in the journal of the first line containing s. */
static int
position(const char *s)
{
	char *text = t_slurp(RP("journal")), *l;
	int at = 0;

	for (int i = 0; text != NULL && (l = t_line(text, i)) != NULL; i++)
		if (strstr(l, s) != NULL) {
			at = i + 1;
			break;
		}
	free(text);
	return at;
}

/*
 * Higher priority first; yet the oldest job, of the lowest priority,
 * starts within SCHED_FIFO_EVERY (4) starts of 13 waiting ahead of it.
 */
START_TEST(test_priorities_first_and_no_starvation)
{
	int code, low, first;

	submit_n(1, "", "-50", "0.01");
	submit_n(1, "", "", "0.01");
	submit_n(12, "", "50", "0.01");
	code = DRAIN("-j", "1", QUICK, "--", h_witness());
	EXPECT(code == 0, "owner: %d", code);
	first = position(",p=50");
	low = position(",p=-50");
	EXPECT(first == 1, "a priority 50 job first (it came %d)", first);
	EXPECT(low >= 2 && low <= 4, "the oldest job, priority -50, started "
	    "%d%s (want within 4)", low, low == 0 ? " (never)" : "th");
}
END_TEST

/*
 * A steady stream of priority 50: each of its jobs submits the next one
 * (tmp/, then mv) as it runs, 38 more, so one always waits ahead of a
 * job of priority -50 queued first; the share starts that one within the
 * first 4 (without it, only once the stream ends, 41st).
 */
START_TEST(test_a_steady_stream_of_higher_priority_starves_no_job)
{
	const char *h = t_handler("h_stream",
	    "echo \"$CHUTE_ID\" >> \"$R/journal\"\n"
	    "n=$(wc -l < \"$R/journal\")\n"
	    "case \"$CHUTE_ID\" in *,p=50)\n"
	    "  if [ $n -lt 40 ]; then\n"
	    "    echo 0 > \"$CHUTE_SPOOL/tmp/s$n,p=50\"\n"
	    "    mv \"$CHUTE_SPOOL/tmp/s$n,p=50\" \"$CHUTE_SPOOL/new/s$n,p=50\"\n"
	    "  fi;;\n"
	    "esac\n");
	int code, low;

	submit_n(1, "", "-50", "0");
	submit_n(2, "", "50", "0");
	code = DRAIN("-j", "1", QUICK, "--", h);
	EXPECT(code == 0, "owner: %d", code);
	low = position(",p=-50");
	EXPECT(low >= 2 && low <= 4, "the job of priority -50, behind a "
	    "stream of 50, started %d%s (want within 4)", low, low == 0 ?
	    " (never)" : "th");
	EXPECT(t_journal_total() == 41, "%d runs (want 41)",
	    t_journal_total());
}
END_TEST

/* Make n files of key k in new/ directly, the fast way. */
static void
drop_many(int n, const char *k)
{
	int dir = open(P("%s/new", T.spool), O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC);

	EXPECT(dir != -1, "new/: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		char name[64];
		int fd;

		snprintf(name, sizeof(name), "hot%06d,k=%s", i, k);
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0644);
		EXPECT(fd != -1 && write(fd, "0\n", 2) == 2 && close(fd) == 0,
		    "%s: %s", name, strerror(errno));
	}
	close(dir);
}

/*
 * 100,000 jobs of key H at its limit of 1: jobs of other keys start at
 * once, and H never runs two.
 */
START_TEST(test_a_hot_key_at_its_limit_holds_up_no_other_key)
{
	int64_t t0;
	pid_t o;
	int n;

	set_limit("--key", "H", "--max", "1");
	drop_many(100000, "H");
	o = OWNER("-j", "4", QUICK, "--", h_witness());
	WAIT_UNTIL(overlap("H", &n) == 1, 30000, "an H job runs");
	t0 = t_mono();
	submit_n(2, "C", "", "0.01");
	submit_n(2, "", "", "0.01");
	WAIT_UNTIL(t_count_state("done") == 4, 10000, "the other keys' jobs "
	    "done: %s", t_log_of(o));
	fprintf(stderr, "hot key: 4 other jobs submitted and done in %lld ms\n",
	    (long long)(t_mono() - t0));
	EXPECT(overlap("H", &n) == 1 && n == 1, "H: %d runs", n);
	t_kill_all();
}
END_TEST

/* Bad attributes: the job goes to failed/ with why; nothing runs it. */
START_TEST(test_a_name_with_bad_attributes_is_refused_to_failed)
{
	static const char *names[] = { "a,p=500", "b,x=1", "c,k=a,k=b",
	    "d,p=1,p=2", "e,k=a%b" };
	char *log;
	int code;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		t_drop(names[i], "0.01\n");
	/* A control byte: the name is no ID, renamed with its attributes. */
	t_drop("f,k=a\x01" "b", "0.01\n");
	t_drop("g h,p=7,k=ok", "0.01\n");
	code = DRAIN(QUICK, "--", h_witness());
	EXPECT(code == 0, "owner: %d", code);
	EXPECT(t_count_state("failed") == 6 && t_count_state("done") == 1,
	    "failed %d, done %d", t_count_state("failed"),
	    t_count_state("done"));
	EXPECT(overlap("ok", &code) == 1 && code == 1, "g h ran as key ok");
	log = t_slurp(SP("log", "a,p=500"));
	EXPECT(log != NULL && strstr(log, "rejected: bad attributes in its "
	    "name: a priority is a whole number from -100 to 100") != NULL,
	    "a's log: %s", t_snip(log));
	free(log);
	log = t_slurp(SP("log", "b,x=1"));
	EXPECT(log != NULL && strstr(log, "attribute chute does not know") !=
	    NULL, "b's log: %s", t_snip(log));
	free(log);
	EXPECT(t_journal_total() == 1, "only g h ran");
}
END_TEST

/* Bad flags and limits: one line, exit 64, nothing written. */
START_TEST(test_bad_priorities_keys_and_limits_are_usage_errors)
{
	char big[10 * 1024 + 1];
	char in[PATH_MAX];

	snprintf(in, sizeof(in), "%s/in", T.root);
	t_write(in, "x\n");
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--priority", "101") == 64 &&
	    strstr(T.err, "--priority 101: a priority is a whole number from "
	    "-100 to 100") != NULL, "priority 101: %s", T.err);
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--priority", "-101") == 64,
	    "priority -101");
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--key", "a/b") == 64 &&
	    strstr(T.err, "a key holds only") != NULL, "key a/b: %s", T.err);
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--key", "a\x01" "b") == 64,
	    "key with a control byte");
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--key", big) == 64 &&
	    strstr(T.err, "1 to 64 bytes") != NULL && strlen(T.err) < 400,
	    "10 kB key: %s", t_snip(T.err));
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--max", "0") == 64,
	    "max 0");
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--max", "-1") == 64,
	    "max -1");
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--rate", "0/1s") == 64,
	    "rate 0/1s");
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--rate", "5/0s") == 64,
	    "rate 5/0s");
	EXPECT(CHUTE("limit", T.spool, "--key", "a/b", "--max", "1") == 64,
	    "limit of key a/b");
	/* --id: its own attributes are checked, and not doubled. */
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--id", "x,p=500") == 64 &&
	    strstr(T.err, "--id: a priority is a whole number") != NULL,
	    "--id x,p=500: %s", T.err);
	EXPECT(CHUTE_IN(in, "submit", T.spool, "--id", "x,k=a", "--key",
	    "b") == 64, "--id with a key and --key");
	EXPECT(t_count_state("new") == 0 && !t_exists(P("%s/limits",
	    T.spool)), "nothing written");
}
END_TEST

/* chute limit: what it prints for a change and for the rules in force. */
START_TEST(test_limit_shows_and_sets_rules)
{
	EXPECT(CHUTE("limit", T.spool) == 0 && strcmp(T.out,
	    "no limits, no keys in use\n") == 0, "empty: %s", T.out);
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--max", "2") == 0 &&
	    strcmp(T.out, "key A max=2\n") == 0, "set: %s", T.out);
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--rate", "10/1s") == 0 &&
	    strcmp(T.out, "key A max=2 rate=10/1s\n") == 0, "set: %s", T.out);
	EXPECT(CHUTE("limit", T.spool, "--all", "--max", "8") == 0 &&
	    strcmp(T.out, "all max=8\n") == 0, "all: %s", T.out);
	EXPECT(CHUTE("limit", T.spool, "--default", "--max", "none") == 0 &&
	    strcmp(T.out, "default: no rule\n") == 0, "default: %s", T.out);
	submit_one("A", "0", "x");
	submit_one("A", "0", "x");
	submit_one("Z", "5", "x");
	EXPECT(CHUTE("limit", T.spool) == 0, "show: %s", T.err);
	EXPECT(strcmp(T.out,
	    "RULE     KEY                          MAX         RATE\n"
	    "key      A                              2        10/1s\n"
	    "all      -                              8            -\n"
	    "\n"
	    "KEY                       RUNNING  WAITING     MAX         RATE RULE\n"
	    "A                               0        2       2        10/1s key\n"
	    "Z                               0        1       -            - -\n")
	    == 0, "show: %s", T.out);
	/* status and ls of the spool's store: from the name. */
	EXPECT(CHUTE_IN(RP("in"), "submit", T.spool, "--id", "zz", "--key",
	    "Z", "--priority", "-7") == 0 && strcmp(T.out, "zz,p=-7,k=Z\n") ==
	    0, "submit --id: %s %s", T.out, T.err);
	EXPECT(CHUTE("status", T.spool, "zz,p=-7,k=Z") == 0 && strcmp(T.out,
	    "zz,p=-7,k=Z new attempts=0 priority=-7 key=Z\n") == 0,
	    "status: %s", T.out);
	EXPECT(CHUTE("ls", T.spool, "new", "--key", "Z") == 0 &&
	    t_nlines(T.out) == 3 && strstr(T.out, "   -7 Z ") != NULL,
	    "ls --key Z: %s", T.out);
	EXPECT(CHUTE("ls", "--key", "Z", T.spool) == 0 && t_nlines(T.out) == 3 &&
	    strstr(T.out, "zz,p=-7,k=Z") != NULL, "ls --key Z SPOOL: %s %s",
	    T.out, T.err);
	EXPECT(CHUTE("limit", T.spool, "--key", "A", "--clear") == 0 &&
	    strcmp(T.out, "key A: no rule\n") == 0, "clear: %s", T.out);
	EXPECT(t_token(t_slurp(P("%s/limits", T.spool)), "all"),
	    "the file keeps the other rule");
	/* A file spoilt by hand: one line naming it and the line, exit 78. */
	t_write(P("%s/limits", T.spool), "all max=8\nkey A max=0\n");
	EXPECT(CHUTE("limit", T.spool) == 78 && t_nlines(T.err) == 1 &&
	    strstr(T.err, P("%s/limits: line 2: a limit is a whole number",
	    T.spool)) != NULL, "show a bad file: %s", T.err);
	EXPECT(CHUTE("limit", T.spool, "--all", "--max", "2") == 78 &&
	    strcmp(t_slurp(P("%s/limits", T.spool)), "all max=8\nkey A "
	    "max=0\n") == 0, "a change to a bad file: %s", T.err);
}
END_TEST

/*
 * A limit lowered while jobs run stops none of them: no new start for
 * the key until fewer than the new limit run.
 */
START_TEST(test_a_limit_lowered_while_jobs_run)
{
	pid_t o;
	int n;

	set_limit("--key", "A", "--max", "3");
	submit_n(5, "A", "", "0");
	o = OWNER("-j", "8", QUICK, "--", h_witness());
	WAIT_UNTIL(overlap("A", &n) == 3, 10000, "three A runs");
	set_limit("--key", "A", "--max", "1");
	WAIT_UNTIL(owner_said(o, "1 rule(s) in force", 2), 10000,
	    "the owner reads the change: %s", t_log_of(o));
	/* One of the three ends: two still run, more than 1: no start. */
	{
		char *text = t_slurp(RP("journal"));
		char *id = strdup(t_line(text, 0));

		close(open(RP(P("go.%s", id)), O_WRONLY | O_CREAT | O_CLOEXEC,
		    0644));
		WAIT_UNTIL(t_count_state("done") == 1, 10000, "%s ends", id);
		free(id);
		free(text);
	}
	submit_n(1, "", "", "0.01");
	WAIT_UNTIL(t_count_state("done") == 2, 10000, "the unkeyed job runs");
	overlap("A", &n);
	EXPECT(n == 3, "A started %d times with 2 running over a limit of 1",
	    n);
	close(open(RP("go.all"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	WAIT_UNTIL(t_count_state("done") == 6, 20000, "all done");
	EXPECT(t_stop(o) == 0, "owner's exit");
}
END_TEST

/*
 * A limits file spoilt by hand while the owner runs: one line in its
 * journal naming the file and the line, and the rules read before stay.
 */
START_TEST(test_a_bad_limits_file_keeps_the_rules_before)
{
	pid_t o;
	int n;

	set_limit("--key", "A", "--max", "1");
	submit_n(3, "A", "", "0");
	o = OWNER("-j", "4", QUICK, "--", h_witness());
	WAIT_UNTIL(overlap("A", &n) == 1, 10000, "an A job runs");
	t_write(P("%s/limits", T.spool), "key A max=5\nbogus rule\n");
	WAIT_UNTIL(owner_said(o, P("%s/limits: line 2: a rule starts with all, "
	    "default or key KEY; the rules read before stay", T.spool), 1),
	    10000, "the owner says which line: %s", t_log_of(o));
	submit_n(1, "", "", "0.01");
	WAIT_UNTIL(t_count_state("done") == 1, 10000, "the unkeyed job runs");
	overlap("A", &n);
	EXPECT(n == 1, "A started %d times: the bad file's max=5 was taken", n);
	close(open(RP("go.all"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	WAIT_UNTIL(t_count_state("done") == 4, 20000, "all done");
	EXPECT(t_stop(o) == 0, "owner's exit");
	EXPECT(overlap("A", &n) == 1, "A ran more than 1 at once");
}
END_TEST

/* SPOOL/limits' lines: read as written, each bad one named with why. */
START_TEST(test_the_limits_file_parses_and_formats_back)
{
	static const char good[] = "# a comment\n\n"
	    "key cust-1 rate=10/1s max=2\n"
	    "default max=4\n"
	    "  all\trate=600/1m  \n";
	static const struct { const char *text, *why; } bad[] = {
		{ "key A max=2\nkey A rate=1/1s\n", "line 2: a second rule" },
		{ "keys A max=2\n", "line 1: a rule starts with" },
		{ "key A max=0\n", "line 1: a limit is a whole number" },
		{ "key A max=-1\n", "line 1: a limit is a whole number" },
		{ "key A max=1 max=2\n", "line 1: want max=N or rate=" },
		{ "all rate=5/0s\n", "line 1: a rate is N/DURATION" },
		{ "key a/b max=1\n", "line 1: a key holds only" },
		{ "key\n", "line 1: key wants a KEY" },
		{ "default max=1 colour=red\n", "line 1: want max=N" },
	};
	struct limits l;
	char why[256], line[256];

	ck_assert_int_eq(limits_parse(good, strlen(good), &l, why,
	    sizeof(why)), 0);
	ck_assert_int_eq(l.n, 3);
	ck_assert_int_eq(l.v[0].scope, LIM_KEY);
	ck_assert_str_eq(l.v[0].key, "cust-1");
	ck_assert_int_eq(l.v[0].max, 2);
	ck_assert_int_eq(l.v[0].rate_n, 10);
	ck_assert_int_eq(l.v[0].rate_ms, 1000);
	limits_format(&l.v[0], line, sizeof(line));
	ck_assert_str_eq(line, "key cust-1 max=2 rate=10/1s");
	limits_format(&l.v[1], line, sizeof(line));
	ck_assert_str_eq(line, "default max=4");
	limits_format(&l.v[2], line, sizeof(line));
	ck_assert_str_eq(line, "all rate=600/1m");
	limits_free(&l);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(limits_parse(bad[i].text, strlen(bad[i].text), &l,
		    why, sizeof(why)) == -1, "%s", bad[i].text);
		ck_assert_msg(strncmp(why, bad[i].why, strlen(bad[i].why)) == 0,
		    "%s: %s", bad[i].text, why);
		ck_assert_int_eq(l.n, 0);
	}
}
END_TEST

Suite *
limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = t_tcase(t_cli_setup, t_cli_teardown, "spool", 120);

	tcase_add_test(tc, test_limit_shows_and_sets_rules);
	tcase_add_test(tc, test_bad_priorities_keys_and_limits_are_usage_errors);
	tcase_add_test(tc, test_a_name_with_bad_attributes_is_refused_to_failed);
	tcase_add_test(tc, test_priorities_first_and_no_starvation);
	tcase_add_test(tc, test_a_steady_stream_of_higher_priority_starves_no_job);
	tcase_add_test(tc, test_a_key_never_runs_more_than_its_limit_exec);
	tcase_add_test(tc, test_a_key_never_runs_more_than_its_limit_persistent);
	tcase_add_test(tc, test_a_rate_limit_holds_in_every_window);
	tcase_add_test(tc, test_a_rate_holds_across_an_owner_killed);
	tcase_add_test(tc, test_an_owner_killed_mid_run_leaves_the_limit_exact);
	tcase_add_test(tc, test_an_owner_killed_mid_run_leaves_the_limit_exact_persistent);
	tcase_add_test(tc, test_a_limit_lowered_while_jobs_run);
	tcase_add_test(tc, test_a_bad_limits_file_keeps_the_rules_before);
	tcase_add_test(tc, test_a_hot_key_at_its_limit_holds_up_no_other_key);
	suite_add_tcase(s, tc);
	tc = tcase_create("file");
	tcase_add_test(tc, test_the_limits_file_parses_and_formats_back);
	suite_add_tcase(s, tc);
	return s;
}
