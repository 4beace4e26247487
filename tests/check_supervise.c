/*
 * check_supervise.c: the supervisor (src/run/supervise.c) through its C
 * interface, with real handlers (/bin/sh -c ...): at most N at once, the
 * slot held until released, timeouts and the grace (SIGTERM, then
 * SIGKILL), cancel, shutdown, reaping, and what the `ended` callback says
 * of exit codes and signals.  The test waits on the supervisor's own
 * events (SIGCHLD through a signalfd, then sup_reap) and on pipes the
 * handlers write to, each wait bounded; never on a sleep.  Its timeouts
 * and graces are a minute long and are reached by handing sup_timers the
 * deadline that sup_deadline gives: no test waits for a clock.  Each
 * job's file is its handler's script: the handler is sh -c '. "$1"' {}.
 */
#include <sys/wait.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/outcome.h"
#include "base/sigfd.h"
#include "base/util.h"
#include "run/supervise.h"
#include "store/spool.h"
#include "suites.h"

#define SLOTS	4
#define WAIT_MS	3000		/* any one wait here, at most (Check stops a test at 4 s) */
#define LONG_MS	60000		/* timeouts and graces: never waited for */

/* One handler's pipes: its stdin (we hold the write end) and its log. */
struct hjob {
	int	 in[2], log[2];
	char	 path[PATH_MAX];
};

static struct {
	struct sup	*s;
	char		 dir[64];	/* the jobs' files */
	int		 chld;		/* SIGCHLD, read */
	int		 n;		/* endings reported */
	int		 slot[16];
	struct attempt_end e[16];
	struct hjob	 j[SLOTS];
} t;

static void
ended(void *arg, int i, const struct attempt_end *e)
{
	ck_assert_ptr_eq(arg, &t);
	ck_assert_int_lt(t.n, 16);
	t.slot[t.n] = i;
	t.e[t.n] = *e;
	t.e[t.n].reply = NULL;	/* not kept past the call */
	t.n++;
}

static char *const run_job[] = { "sh", "-c", ". \"$1\"", "sh", "{}",
    NULL };

static struct sup *
sup_with(const char *path, msec_t timeout, msec_t grace)
{
	struct sup_conf c = { .slots = SLOTS, .path = path,
	    .argv = run_job, .timeout = timeout, .grace = grace,
	    .queue = "test-queue", .worker_fd = -1, .ended = ended,
	    .arg = &t };
	struct sup *s = sup_new(&c);

	ck_assert_ptr_nonnull(s);
	return s;
}

static void
setup(msec_t timeout, msec_t grace)
{
	memset(&t, 0, sizeof(t));
	strlcpy(t.dir, "/tmp/chute-sup.XXXXXX", sizeof(t.dir));
	ck_assert_ptr_nonnull(mkdtemp(t.dir));
	ck_assert_int_ne(t.chld = sigfd_open(SIGCHLD, 0), -1);
	t.s = sup_with("/bin/sh", timeout, grace);
}

static void
setup_plain(void)
{
	setup(0, LONG_MS);
}

static void
setup_timeout(void)
{
	setup(LONG_MS, LONG_MS);
}

static void
teardown(void)
{
	char cmd[PATH_MAX + 16];

	sup_shutdown(t.s, true);
	sup_free(t.s);
	close(t.chld);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t.dir);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * Start slot i's handler on job id, whose file holds script, with stdin
 * and log pipes of its own.  Our copy of the log's write end is closed,
 * so that its EOF says the last process holding it is gone.
 */
static void
start(int i, const char *id, const char *script, int attempt)
{
	struct hjob *h = &t.j[i];
	struct sup_job j = { .id = id, .path = h->path, .attempt = attempt };
	FILE *f;

	snprintf(h->path, sizeof(h->path), "%s/%s", t.dir, id);
	ck_assert_ptr_nonnull(f = fopen(h->path, "wx"));
	ck_assert_int_ge(fprintf(f, "%s\n", script), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(pipe2(h->in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(h->log, O_CLOEXEC), 0);
	j.fd = h->in[0];
	j.logfd = h->log[1];
	ck_assert_int_eq(sup_start(t.s, i, &j), 0);
	close(h->in[0]);
	close(h->log[1]);
}

/* Until n endings have been reported: SIGCHLD, then sup_reap. */
static void
wait_ended(int n)
{
	msec_t end = mono_ms() + WAIT_MS;
	struct pollfd p = { .fd = t.chld, .events = POLLIN };
	char buf[1024];

	while (t.n < n) {
		msec_t left = end - mono_ms();

		ck_assert_msg(left > 0 && poll(&p, 1, (int)left) == 1,
		    "%d of %d handlers reported ended within %d ms", t.n, n,
		    WAIT_MS);
		while (read(t.chld, buf, sizeof(buf)) > 0)
			;
		sup_reap(t.s);
	}
	ck_assert_int_eq(t.n, n);
}

/* The handler of slot i wrote line (and a newline) to its log. */
static void
wait_line(int i, const char *line)
{
	char buf[256];
	size_t len = 0;
	struct pollfd p = { .fd = t.j[i].log[0], .events = POLLIN };

	while (memchr(buf, '\n', len) == NULL) {
		ssize_t r;

		ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "slot %d wrote no "
		    "line within %d ms (wanted \"%s\")", i, WAIT_MS, line);
		r = read(p.fd, buf + len, sizeof(buf) - 1 - len);
		ck_assert_int_gt(r, 0);
		len += (size_t)r;
	}
	buf[len] = '\0';
	ck_assert_str_eq(strtok(buf, "\n"), line);
}

/* EOF on slot i's log: no process of its handler holds it any more. */
static void
wait_log_closed(int i)
{
	struct pollfd p = { .fd = t.j[i].log[0], .events = POLLIN };
	char buf[256];
	ssize_t r;

	do {
		ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "slot %d's log still "
		    "open after %d ms", i, WAIT_MS);
	} while ((r = read(p.fd, buf, sizeof(buf))) > 0);
	ck_assert_int_eq(r, 0);
}

/* The ending reported for slot i. */
static const struct attempt_end *
ending(int i)
{
	for (int k = 0; k < t.n; k++)
		if (t.slot[k] == i)
			return &t.e[k];
	ck_abort_msg("no ending reported for slot %d", i);
	return NULL;
}

static int
idle(int *slot)
{
	return sup_idle_slots(t.s, slot, SLOTS);
}

/*
 * N slots are N handlers at most; a slot whose handler ended stays taken
 * until the owner releases it (its outcome is being recorded).
 */
START_TEST(test_at_most_n_handlers_and_a_slot_held_until_released)
{
	int slot[SLOTS];

	ck_assert_int_eq(idle(slot), SLOTS);
	for (int i = 0; i < SLOTS; i++) {
		char id[8];

		snprintf(id, sizeof(id), "j%d", i);
		ck_assert_int_eq(slot[i], i);
		start(i, id, "exec cat >/dev/null", 1);
	}
	ck_assert_int_eq(idle(slot), 0);
	ck_assert(!sup_done(t.s));
	close(t.j[2].in[1]);		/* cat sees EOF: exit 0 */
	wait_ended(1);
	ck_assert_int_eq(t.slot[0], 2);
	ck_assert_int_eq(idle(slot), 0);
	sup_release(t.s, 2);
	ck_assert_int_eq(idle(slot), 1);
	ck_assert_int_eq(slot[0], 2);
	for (int i = 0; i < SLOTS; i++)
		if (i != 2)
			close(t.j[i].in[1]);
	wait_ended(SLOTS);
	for (int i = 0; i < SLOTS; i++)
		sup_release(t.s, i);
	ck_assert(sup_done(t.s));
	ck_assert_int_eq(idle(slot), SLOTS);
}
END_TEST

/*
 * How each handler ended reaches the callback as wait(2) said it, with
 * its attempt, and means what the outcome table says: exit 0 done, 75
 * later, 3 failed (the last attempt), a signal failed.  Four endings at
 * once: one SIGCHLD may stand for all of them.
 */
START_TEST(test_exit_codes_and_signals_reach_the_ended_callback)
{
	static const char *script[SLOTS] = { "exit 0", "exit 3", "exit 75",
	    "kill -KILL $$" };
	static const char *why[SLOTS] = { "exit=0", "exit=3", "exit=75",
	    "signal=KILL" };
	static const int to[SLOTS] = { ST_DONE, ST_FAILED, ST_DEFER,
	    ST_FAILED };
	struct retry_policy p = { .max_attempts = 3, .backoff_base = 1000,
	    .backoff_cap = 60000 };

	for (int i = 0; i < SLOTS; i++) {
		char id[8];

		snprintf(id, sizeof(id), "j%d", i);
		start(i, id, script[i], i == 1 ? 3 : 1);
	}
	wait_ended(SLOTS);
	for (int i = 0; i < SLOTS; i++) {
		const struct attempt_end *e = ending(i);
		struct outcome o;
		char words[32];

		ck_assert_int_eq(e->end, END_EXIT);
		ck_assert_int_eq(e->stop, STOP_NONE);
		ck_assert_int_eq(e->attempt, i == 1 ? 3 : 1);
		ck_assert_int_ge(e->elapsed, 0);
		outcome_status(e->status, words, sizeof(words));
		ck_assert_str_eq(words, why[i]);
		outcome_decide(e, &p, arc4random_uniform, &o);
		ck_assert_int_eq(o.to, to[i]);
	}
	ck_assert(WIFSIGNALED(ending(3)->status));
	ck_assert_int_eq(WTERMSIG(ending(3)->status), SIGKILL);
}
END_TEST

/* The handler's argv has the job's path for {}, its environment CHUTE_*. */
START_TEST(test_a_handler_gets_its_path_and_chute_variables)
{
	char want[3 * PATH_MAX];

	start(0, "the-id", "echo \"$1 $CHUTE_ID $CHUTE_JOB $CHUTE_ATTEMPT "
	    "$CHUTE_SPOOL\"", 7);
	snprintf(want, sizeof(want), "%s/the-id the-id %s/the-id 7 test-queue",
	    t.dir, t.dir);
	wait_line(0, want);
	wait_ended(1);
	ck_assert_int_eq(WEXITSTATUS(ending(0)->status), 0);
}
END_TEST

/*
 * A handler that cannot be started is reported at once, through the
 * callback, with the errno; so is a job that cannot even be tried.
 */
START_TEST(test_a_handler_that_cannot_start_is_reported_at_once)
{
	struct sup *s = sup_with("/nonexistent/handler", 0, LONG_MS);
	int in[2];
	struct sup_job j = { .id = "gone", .path = "/nonexistent/job",
	    .logfd = STDERR_FILENO, .attempt = 2 };

	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	j.fd = in[0];
	ck_assert_int_eq(sup_start(s, 1, &j), -1);
	ck_assert_int_eq(t.n, 1);
	ck_assert_int_eq(t.slot[0], 1);
	ck_assert_int_eq(t.e[0].end, END_SPAWN_FAILED);
	ck_assert_int_eq(t.e[0].error, ENOENT);
	ck_assert_int_eq(t.e[0].attempt, 2);
	ck_assert_int_eq(t.e[0].elapsed, -1);
	sup_not_started(s, 2, 5, EMFILE);
	ck_assert_int_eq(t.n, 2);
	ck_assert_int_eq(t.slot[1], 2);
	ck_assert_int_eq(t.e[1].end, END_SPAWN_FAILED);
	ck_assert_int_eq(t.e[1].error, EMFILE);
	ck_assert_int_eq(t.e[1].attempt, 5);
	ck_assert(!sup_done(s));	/* both slots held */
	sup_release(s, 1);
	sup_release(s, 2);
	ck_assert(sup_done(s));
	sup_free(s);
	close(in[0]);
	close(in[1]);
}
END_TEST

/*
 * The handler exited; what it started in the background, in its process
 * group, is killed before its ending is reported.  Here a cat reading the
 * handler's stdin (whose write end we keep open) and holding its log:
 * only a SIGKILL closes that log.
 */
START_TEST(test_what_a_handler_left_in_its_group_dies_with_it)
{
	start(0, "parent", "exec 3<&0; cat <&3 & echo started; exit 0", 1);
	wait_line(0, "started");
	wait_ended(1);
	ck_assert(WIFEXITED(ending(0)->status));
	ck_assert_int_eq(WEXITSTATUS(ending(0)->status), 0);
	wait_log_closed(0);
	close(t.j[0].in[1]);
}
END_TEST

/*
 * At the timeout, SIGTERM to the handler, and the ending says it timed
 * out; not a millisecond before the deadline.
 */
START_TEST(test_a_timeout_sends_sigterm_at_the_deadline)
{
	msec_t before = mono_ms(), after, due;

	start(0, "slow", "echo up; exec cat >/dev/null", 1);
	after = mono_ms();
	due = sup_deadline(t.s);
	ck_assert_int_ge(due, before + LONG_MS);
	ck_assert_int_le(due, after + LONG_MS);
	wait_line(0, "up");
	sup_timers(t.s, due - 1);
	ck_assert_int_eq(sup_deadline(t.s), due);	/* nothing sent */
	sup_timers(t.s, due);
	wait_ended(1);
	ck_assert_int_eq(ending(0)->stop, STOP_TIMEOUT);
	ck_assert(WIFSIGNALED(ending(0)->status));
	ck_assert_int_eq(WTERMSIG(ending(0)->status), SIGTERM);
	close(t.j[0].in[1]);
}
END_TEST

/*
 * A handler that ignores SIGTERM gets SIGKILL when the grace is over,
 * not before; the ending still says it timed out.
 */
START_TEST(test_a_handler_ignoring_sigterm_gets_sigkill_after_the_grace)
{
	msec_t before, after, killat;

	start(0, "stubborn", "trap '' TERM; echo up; exec cat >/dev/null", 1);
	wait_line(0, "up");
	before = mono_ms();
	sup_timers(t.s, sup_deadline(t.s));
	after = mono_ms();
	killat = sup_deadline(t.s);
	ck_assert_int_ge(killat, before + LONG_MS);
	ck_assert_int_le(killat, after + LONG_MS);
	sup_timers(t.s, killat - 1);
	ck_assert_int_eq(sup_deadline(t.s), killat);	/* no SIGKILL yet */
	sup_reap(t.s);
	ck_assert_int_eq(t.n, 0);
	sup_timers(t.s, killat);
	wait_ended(1);
	ck_assert_int_eq(ending(0)->stop, STOP_TIMEOUT);
	ck_assert(WIFSIGNALED(ending(0)->status));
	ck_assert_int_eq(WTERMSIG(ending(0)->status), SIGKILL);
	close(t.j[0].in[1]);
}
END_TEST

/*
 * Cancel stops the named job only: SIGTERM and the grace, or SIGKILL
 * now; a job already being stopped, or not running, is not cancelled
 * again (0).
 */
START_TEST(test_cancel_stops_only_the_named_job)
{
	pid_t a, b;
	int slot[SLOTS];

	start(0, "a", "echo up; exec cat >/dev/null", 1);
	start(1, "b", "trap '' TERM; echo up; exec cat >/dev/null", 1);
	start(2, "c", "echo up; exec cat >/dev/null", 1);
	for (int i = 0; i < 3; i++)
		wait_line(i, "up");
	ck_assert_int_eq(sup_cancel(t.s, "nothing", false), 0);
	ck_assert_int_gt(a = sup_cancel(t.s, "a", false), 0);
	ck_assert_int_eq(sup_cancel(t.s, "a", false), 0);
	wait_ended(1);
	ck_assert_int_eq(t.slot[0], 0);
	ck_assert_int_eq(ending(0)->stop, STOP_CANCEL);
	ck_assert_int_eq(WTERMSIG(ending(0)->status), SIGTERM);
	ck_assert_int_gt(b = sup_cancel(t.s, "b", true), 0);
	ck_assert_int_ne(a, b);
	wait_ended(2);
	ck_assert_int_eq(ending(1)->stop, STOP_CANCEL);
	ck_assert_int_eq(WTERMSIG(ending(1)->status), SIGKILL);
	/* c runs on: its slot alone of the three is not free. */
	sup_release(t.s, 0);
	sup_release(t.s, 1);
	ck_assert_int_eq(idle(slot), 3);
	ck_assert_int_eq(slot[0], 0);
	ck_assert_int_eq(slot[1], 1);
	ck_assert_int_eq(slot[2], 3);
	close(t.j[2].in[1]);
	wait_ended(3);
	ck_assert_int_eq(ending(2)->stop, STOP_NONE);
	ck_assert_int_eq(WEXITSTATUS(ending(2)->status), 0);
	close(t.j[0].in[1]);
	close(t.j[1].in[1]);
}
END_TEST

/*
 * Shutdown: SIGTERM to every handler, and a second, hurried one SIGKILL;
 * a job cancelled before says shutdown too (its outcome must not count
 * as a cancel: the job runs again).
 */
START_TEST(test_shutdown_stops_every_handler_and_the_second_kills)
{
	start(0, "a", "echo up; exec cat >/dev/null", 1);
	start(1, "b", "trap '' TERM; echo up; exec cat >/dev/null", 1);
	start(2, "c", "trap '' TERM; echo up; exec cat >/dev/null", 1);
	for (int i = 0; i < 3; i++)
		wait_line(i, "up");
	ck_assert_int_gt(sup_cancel(t.s, "c", false), 0);
	sup_shutdown(t.s, false);
	wait_ended(1);
	ck_assert_int_eq(t.slot[0], 0);
	ck_assert_int_eq(ending(0)->stop, STOP_SHUTDOWN);
	ck_assert_int_eq(WTERMSIG(ending(0)->status), SIGTERM);
	sup_reap(t.s);
	ck_assert_int_eq(t.n, 1);	/* b and c ignore SIGTERM */
	sup_shutdown(t.s, true);
	wait_ended(3);
	for (int i = 1; i < 3; i++) {
		ck_assert_int_eq(ending(i)->stop, STOP_SHUTDOWN);
		ck_assert_int_eq(WTERMSIG(ending(i)->status), SIGKILL);
	}
	for (int i = 0; i < 3; i++) {
		sup_release(t.s, i);
		close(t.j[i].in[1]);
	}
	ck_assert(sup_done(t.s));
}
END_TEST

Suite *
supervise_suite(void)
{
	Suite *s = suite_create("supervise");
	TCase *tc = tcase_create("core");
	TCase *tt = tcase_create("timeouts");

	tcase_add_checked_fixture(tc, setup_plain, teardown);
	tcase_add_test(tc, test_at_most_n_handlers_and_a_slot_held_until_released);
	tcase_add_test(tc, test_exit_codes_and_signals_reach_the_ended_callback);
	tcase_add_test(tc, test_a_handler_gets_its_path_and_chute_variables);
	tcase_add_test(tc, test_a_handler_that_cannot_start_is_reported_at_once);
	tcase_add_test(tc, test_what_a_handler_left_in_its_group_dies_with_it);
	tcase_add_test(tc, test_cancel_stops_only_the_named_job);
	tcase_add_test(tc, test_shutdown_stops_every_handler_and_the_second_kills);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tt, setup_timeout, teardown);
	tcase_add_test(tt, test_a_timeout_sends_sigterm_at_the_deadline);
	tcase_add_test(tt, test_a_handler_ignoring_sigterm_gets_sigkill_after_the_grace);
	suite_add_tcase(s, tt);
	return s;
}
