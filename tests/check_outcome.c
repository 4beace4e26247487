/*
 * check_outcome.c: the outcome table, row by row, as the README states it
 * (the handler contract's table, persistent replies, and recovery of a
 * dead owner's jobs).  One loop test per row: a failure names its row.
 */
#include <sys/wait.h>
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "base/util.h"
#include "store/spool.h"
#include "base/outcome.h"
#include "suites.h"

#define EXITED(n)	((n) << 8)	/* a wait(2) status */
#define KILLED(s)	(s)

static const struct retry_policy policy = {
	.max_attempts = 3, .backoff_base = 1000, .backoff_cap = 3000,
};

static const struct row {
	const char	*says;		/* the README's words for the row */
	enum end	 end;
	int		 status;
	const char	*reply;
	enum stop	 stop;
	int		 attempt;
	int		 to;
	msec_t		 delay;		/* the full backoff d: spread over [d/2, d] */
	bool		 counted;
	const char	*why;
	const char	*note;
} rows[] = {
	{ "exits 0", END_EXIT, EXITED(0), NULL, STOP_NONE, 1,
	    ST_DONE, 0, true, "exit=0", "exit=0 time=1.500s" },
	{ "exits 75", END_EXIT, EXITED(75), NULL, STOP_NONE, 1,
	    ST_DEFER, 1000, true, "exit=75", "exit=75 time=1.500s" },
	{ "exits 75, second attempt: twice the backoff", END_EXIT, EXITED(75),
	    NULL, STOP_NONE, 2, ST_DEFER, 2000, true, "exit=75", NULL },
	{ "exits 75, its last attempt", END_EXIT, EXITED(75), NULL, STOP_NONE,
	    3, ST_FAILED, 0, true, "exit=75 attempts-exhausted", NULL },
	{ "runs past --timeout", END_EXIT, KILLED(SIGTERM), NULL, STOP_TIMEOUT,
	    1, ST_DEFER, 1000, true, "timeout signal=TERM",
	    "timeout signal=TERM time=1.500s" },
	{ "runs past --timeout on its last attempt", END_EXIT, KILLED(SIGKILL),
	    NULL, STOP_TIMEOUT, 3, ST_FAILED, 0, true,
	    "timeout signal=KILL attempts-exhausted", NULL },
	{ "exits 0 after its timeout fired", END_EXIT, EXITED(0), NULL,
	    STOP_TIMEOUT, 1, ST_DONE, 0, true, "exit=0", NULL },
	{ "exits with any other status", END_EXIT, EXITED(1), NULL, STOP_NONE,
	    1, ST_FAILED, 0, true, "exit=1", NULL },
	{ "dies by a signal", END_EXIT, KILLED(SIGSEGV), NULL, STOP_NONE, 1,
	    ST_FAILED, 0, true, "signal=SEGV", NULL },
	{ "cannot be started: as exit 75", END_SPAWN_FAILED, 0, NULL,
	    STOP_NONE, 1, ST_DEFER, 1000, true, "spawn-failed",
	    "spawn-failed: No such file or directory" },
	{ "cannot be started, its last attempt", END_SPAWN_FAILED, 0, NULL,
	    STOP_NONE, 3, ST_FAILED, 0, true, "spawn-failed attempts-exhausted",
	    NULL },
	{ "stopped because chute got SIGTERM: not counted", END_EXIT,
	    KILLED(SIGTERM), NULL, STOP_SHUTDOWN, 3, ST_NEW, 0, false,
	    "interrupted signal=TERM",
	    "interrupted by shutdown (signal=TERM; not counted)" },
	{ "exits 0 while chute shuts down", END_EXIT, EXITED(0), NULL,
	    STOP_SHUTDOWN, 1, ST_DONE, 0, true, "exit=0", NULL },
	{ "running when the job is cancelled", END_EXIT, KILLED(SIGTERM), NULL,
	    STOP_CANCEL, 1, ST_FAILED, 0, true, "signal=TERM", NULL },
	{ "exits 0 although the job was cancelled", END_EXIT, EXITED(0), NULL,
	    STOP_CANCEL, 1, ST_FAILED, 0, true, "exit=0", NULL },
	{ "running when the owner dies", END_ABANDONED, 0, NULL, STOP_NONE, 2,
	    ST_NEW, 0, true, "recovered from a dead owner",
	    "abandoned: its owner died" },
	{ "running when the owner dies, its last attempt", END_ABANDONED, 0,
	    NULL, STOP_NONE, 3, ST_FAILED, 0, true,
	    "recovered from a dead owner",
	    "abandoned: its owner died; attempts exhausted" },
	{ "a worker answers ok", END_REPLY, 0, "ok", STOP_NONE, 1, ST_DONE, 0,
	    true, "reply=ok", "reply=ok time=1.500s" },
	{ "a worker answers ok with a remark", END_REPLY, 0, "ok fine",
	    STOP_NONE, 1, ST_DONE, 0, true, "reply=ok", NULL },
	{ "a worker answers retry", END_REPLY, 0, "retry db busy", STOP_NONE, 1,
	    ST_DEFER, 1000, true, "reply=retry", "reply=retry db busy time=1.500s" },
	{ "a worker answers retry on the last attempt", END_REPLY, 0, "retry",
	    STOP_NONE, 3, ST_FAILED, 0, true, "reply=retry attempts-exhausted",
	    NULL },
	{ "a worker answers fail", END_REPLY, 0, "fail bad input", STOP_NONE, 1,
	    ST_FAILED, 0, true, "reply=fail", NULL },
	{ "a worker answers something else", END_REPLY, 0, "okay", STOP_NONE, 1,
	    ST_FAILED, 0, true, "reply=okay", NULL },
	{ "a worker dies holding the job: as exit 75", END_WORKER_DIED,
	    KILLED(SIGKILL), NULL, STOP_NONE, 1, ST_DEFER, 1000, true,
	    "signal=KILL worker-died", NULL },
	{ "a worker exits 0 holding the job: never success", END_WORKER_DIED,
	    EXITED(0), NULL, STOP_NONE, 2, ST_DEFER, 2000, true,
	    "exit=0 worker-died", NULL },
	{ "a worker dies holding the job on its last attempt", END_WORKER_DIED,
	    KILLED(SIGKILL), NULL, STOP_NONE, 3, ST_FAILED, 0, true,
	    "signal=KILL worker-died attempts-exhausted", NULL },
	{ "a worker is stopped by a shutdown", END_WORKER_DIED, KILLED(SIGTERM),
	    NULL, STOP_SHUTDOWN, 1, ST_NEW, 0, false,
	    "interrupted signal=TERM worker-died", NULL },
};

static uint32_t lowest(uint32_t n) { return 0; }
static uint32_t highest(uint32_t n) { return n - 1; }

static void
decide(const struct row *r, uint32_t (*rnd)(uint32_t), struct outcome *out)
{
	struct attempt_end e = { .end = r->end, .status = r->status,
	    .reply = r->reply, .error = ENOENT, .stop = r->stop,
	    .attempt = r->attempt, .elapsed = 1500 };

	outcome_decide(&e, &policy, rnd, out);
}

START_TEST(test_each_row_of_the_outcome_table)
{
	const struct row *r = &rows[_i];
	struct outcome lo, hi;

	decide(r, lowest, &lo);
	decide(r, highest, &hi);
	ck_assert_msg(lo.to == r->to, "%s: goes to %s, not %s", r->says,
	    state_names[lo.to], state_names[r->to]);
	ck_assert_msg(lo.counted == r->counted, "%s: counted=%d", r->says,
	    lo.counted);
	ck_assert_msg(strcmp(lo.why, r->why) == 0, "%s: why=\"%s\"", r->says,
	    lo.why);
	if (r->note != NULL)
		ck_assert_msg(strcmp(lo.note, r->note) == 0, "%s: note=\"%s\"",
		    r->says, lo.note);
	/* The backoff spreads over [d/2, d]; no delay leaves defer/ out. */
	ck_assert_msg(lo.delay == r->delay - r->delay / 2 &&
	    hi.delay == r->delay, "%s: delay %lld..%lld, want %lld..%lld",
	    r->says, (long long)lo.delay, (long long)hi.delay,
	    (long long)(r->delay - r->delay / 2), (long long)r->delay);
}
END_TEST

START_TEST(test_the_backoff_stops_growing_at_its_cap)
{
	struct retry_policy p = { .max_attempts = 100, .backoff_base = 1000,
	    .backoff_cap = 3000 };
	struct attempt_end e = { .end = END_EXIT, .status = EXITED(75),
	    .elapsed = -1 };
	struct outcome out;

	for (e.attempt = 1; e.attempt < 90; e.attempt++) {
		outcome_decide(&e, &p, highest, &out);
		ck_assert_int_eq(out.to, ST_DEFER);
		ck_assert_int_le(out.delay, 3000);
	}
	ck_assert_int_eq(out.delay, 3000);
	ck_assert_str_eq(out.note, "exit=75");	/* untimed: no time= */
}
END_TEST

Suite *
outcome_suite(void)
{
	Suite *s = suite_create("outcome");
	TCase *tc = tcase_create("table");

	tcase_add_loop_test(tc, test_each_row_of_the_outcome_table, 0,
	    sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, test_the_backoff_stops_growing_at_its_cap);
	suite_add_tcase(s, tc);
	return s;
}
