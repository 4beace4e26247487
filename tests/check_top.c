/*
 * check_top.c: what `chute top` reads from a spool (top_spool.c), on a real
 * spool: the throughput window, the newest failures kept in fixed memory
 * with their reasons, arrivals and departures driven by events, and the
 * cancel and retry keys.  The terminal itself is tests/top.sh's.
 */
#include <sys/stat.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/watch.h"
#include "suites.h"
#include "t_spool.h"
#include "queue/view.h"
#include "queue/spool/top_spool.h"

static struct top_spool tsp;

/* A job file in state st, with mtime at (ms since the epoch). */
static void
put_job(int st, const char *id, msec_t at)
{
	struct timespec ts[2] = {
		{ at / 1000, at % 1000 * 1000000 },
		{ at / 1000, at % 1000 * 1000000 },
	};
	int fd = openat(t_spool.dir[st], id, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC, 0600);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(futimens(fd, ts), 0);
	close(fd);
}

/* The event watch.c would have passed on for it. */
static void
event(int st, enum watch_kind kind, const char *name)
{
	struct watch_event ev = { .state = st, .kind = kind, .name = name };

	top_event(&tsp, &ev);
}

START_TEST(test_a_finished_job_leaves_the_window_after_a_minute)
{
	msec_t now = 1800000000000LL;
	unsigned done, failed;

	memset(&tsp, 0, sizeof(tsp));
	top_finished(&tsp.t, ST_DONE, now - 59000);
	top_finished(&tsp.t, ST_DONE, now - 1000);
	top_finished(&tsp.t, ST_FAILED, now);
	top_rate(&tsp.t, now, &done, &failed);
	ck_assert_uint_eq(done, 2);
	ck_assert_uint_eq(failed, 1);
	top_rate(&tsp.t, now + 2000, &done, &failed);
	ck_assert_uint_eq(done, 1);
	ck_assert_uint_eq(failed, 1);
	/* A second that left the window does not come back into it. */
	top_finished(&tsp.t, ST_DONE, now - 61000);
	top_rate(&tsp.t, now, &done, &failed);
	ck_assert_uint_eq(done, 2);
}
END_TEST

/* A queue's bounded read counts only the seconds since rate_from. */
START_TEST(test_a_rate_counted_in_part_is_over_the_seconds_counted)
{
	msec_t now = 1800000000000LL;
	unsigned done, failed;

	memset(&tsp, 0, sizeof(tsp));
	top_finished(&tsp.t, ST_DONE, now - 30000);
	top_finished(&tsp.t, ST_DONE, now - 5000);
	top_finished(&tsp.t, ST_FAILED, now);
	ck_assert_int_eq(top_rate(&tsp.t, now, &done, &failed), TOP_WINDOW);
	ck_assert_uint_eq(done, 2);
	tsp.t.rate_from = now / 1000 - 9;
	ck_assert_int_eq(top_rate(&tsp.t, now, &done, &failed), 10);
	ck_assert_uint_eq(done, 1);
	ck_assert_uint_eq(failed, 1);
}
END_TEST

/* Exact, at least, about: as the screen shows a count. */
START_TEST(test_a_count_says_how_far_it_can_be_trusted)
{
	static const struct { long long n; enum top_kind k; const char *s; } c[] = {
		{ 123, TOP_EXACT, "123" }, { 10000, TOP_ATLEAST, "10000+" },
		{ 0, TOP_ATLEAST, "0+" }, { 8800, TOP_ABOUT, "~8800" },
		{ 24612, TOP_ABOUT, "~25k" }, { 998000, TOP_ABOUT, "~998k" },
		{ 1234567, TOP_ABOUT, "~1.2M" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		tsp.t.count[ST_DONE] = c[i].n;
		tsp.t.kind[ST_DONE] = c[i].k;
		top_count(&tsp.t, ST_DONE, buf, sizeof(buf));
		ck_assert_str_eq(buf, c[i].s);
	}
}
END_TEST

START_TEST(test_first_look_counts_recent_jobs_by_their_mtimes)
{
	msec_t now = now_ms();
	unsigned done, failed;

	put_job(ST_NEW, "n1", now);
	put_job(ST_DONE, "d-recent", now - 10000);
	put_job(ST_DONE, "d-old", now - 120000);
	put_job(ST_FAILED, "f-recent", now - 5000);
	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	ck_assert_uint_eq(tsp.t.count[ST_NEW], 1);
	ck_assert_uint_eq(tsp.t.count[ST_DONE], 2);
	ck_assert_uint_eq(tsp.t.count[ST_FAILED], 1);
	top_rate(&tsp.t, now, &done, &failed);
	ck_assert_uint_eq(done, 1);
	ck_assert_uint_eq(failed, 1);
}
END_TEST

START_TEST(test_only_the_newest_failures_are_kept_with_their_reasons)
{
	msec_t now = now_ms();
	char id[32];

	for (int i = 0; i < TOP_FAIL_MAX + 8; i++) {
		snprintf(id, sizeof(id), "f%02d", i);
		put_job(ST_FAILED, id, now - 100000 + i * 1000);
	}
	ck_assert_int_eq(joblog_note(&t_spool, "f39", "attempt=1 start"), 0);
	ck_assert_int_eq(joblog_note(&t_spool, "f39",
	    "attempt=1 exit=3 time=5ms"), 0);
	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	ck_assert_uint_eq(tsp.t.count[ST_FAILED], TOP_FAIL_MAX + 8);
	ck_assert_uint_eq(tsp.t.nfail, TOP_FAIL_MAX);
	ck_assert_str_eq(tsp.t.fail[0].id, "f39");
	ck_assert_str_eq(tsp.t.fail[0].reason, "exit=3");
	ck_assert_int_eq(tsp.t.fail[0].attempts, 1);
	ck_assert_str_eq(tsp.t.fail[TOP_FAIL_MAX - 1].id, "f08");
	ck_assert_str_eq(tsp.t.fail[1].reason, "-");	/* no log */
}
END_TEST

START_TEST(test_an_arrival_in_failed_is_listed_at_the_next_rescan)
{
	msec_t now = now_ms();

	put_job(ST_FAILED, "old", now - 60000);
	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	put_job(ST_FAILED, "new", now);
	event(ST_FAILED, W_ARRIVED, "new");
	ck_assert_uint_ne(tsp.dirty & 1u << ST_FAILED, 0);
	ck_assert_int_eq(top_rescan(&tsp), 0);
	ck_assert_uint_eq(tsp.dirty, 0);
	ck_assert_uint_eq(tsp.t.count[ST_FAILED], 2);
	ck_assert_uint_eq(tsp.t.nfail, 2);
	ck_assert_str_eq(tsp.t.fail[0].id, "new");
	ck_assert_str_eq(tsp.t.fail[1].id, "old");
}
END_TEST

START_TEST(test_a_kept_failure_that_left_is_replaced_by_the_next_newest)
{
	msec_t now = now_ms();
	char id[32];

	for (int i = 0; i < TOP_FAIL_MAX + 1; i++) {
		snprintf(id, sizeof(id), "f%02d", i);
		put_job(ST_FAILED, id, now - 100000 + i * 1000);
	}
	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	ck_assert_str_eq(tsp.t.fail[TOP_FAIL_MAX - 1].id, "f01");
	ck_assert_int_eq(unlinkat(t_spool.dir[ST_FAILED], "f20", 0), 0);
	event(ST_FAILED, W_LEFT, "f20");
	ck_assert_int_eq(top_rescan(&tsp), 0);
	ck_assert_uint_eq(tsp.t.count[ST_FAILED], TOP_FAIL_MAX);
	ck_assert_uint_eq(tsp.t.nfail, TOP_FAIL_MAX);
	ck_assert_str_eq(tsp.t.fail[TOP_FAIL_MAX - 1].id, "f00");
}
END_TEST

START_TEST(test_a_rescan_reads_only_the_directories_events_came_from)
{
	msec_t now = now_ms();

	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	put_job(ST_NEW, "a", now);
	put_job(ST_DONE, "b", now);
	event(ST_NEW, W_ARRIVED, "a");
	ck_assert_int_eq(top_rescan(&tsp), 0);
	ck_assert_uint_eq(tsp.t.count[ST_NEW], 1);
	ck_assert_uint_eq(tsp.t.count[ST_DONE], 0);	/* no event yet */
	event(ST_DONE, W_ARRIVED, "b");
	ck_assert_int_eq(top_rescan(&tsp), 0);
	ck_assert_uint_eq(tsp.t.count[ST_DONE], 1);
}
END_TEST

START_TEST(test_lost_events_make_the_next_rescan_read_everything)
{
	msec_t now = now_ms();

	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	put_job(ST_NEW, "a", now);
	put_job(ST_FAILED, "f", now);
	event(ST_NONE, W_OVERFLOW, "");
	ck_assert_int_eq(top_rescan(&tsp), 0);
	ck_assert_uint_eq(tsp.t.count[ST_NEW], 1);
	ck_assert_uint_eq(tsp.t.nfail, 1);
	ck_assert_str_eq(tsp.t.fail[0].id, "f");
}
END_TEST

START_TEST(test_cancel_and_retry_move_the_job_and_leave_notes)
{
	msec_t now = now_ms();
	struct joblog_info ji;
	char msg[256];

	put_job(ST_CUR, "j", now);
	ck_assert_int_eq(top_init(&tsp, &t_spool, now), 0);
	ck_assert_uint_eq(tsp.t.nrun, 1);
	ck_assert_int_eq(top_cancel(&tsp, "j", msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "j cur->failed");
	ck_assert_int_eq(spool_locate(&t_spool, "j", NULL), ST_FAILED);
	ck_assert_int_eq(joblog_read(&t_spool, "j", &ji), 0);
	ck_assert_str_eq(ji.last, "cancelled");
	ck_assert_int_eq(top_cancel(&tsp, "j", msg, sizeof(msg)), -1);
	ck_assert_str_eq(msg, "j: already finished");
	ck_assert_int_eq(top_retry(&tsp, "j", msg, sizeof(msg)), 0);
	ck_assert_str_eq(msg, "j failed->new");
	ck_assert_int_eq(spool_locate(&t_spool, "j", NULL), ST_NEW);
	ck_assert_int_eq(top_retry(&tsp, "j", msg, sizeof(msg)), -1);
	ck_assert_str_eq(msg, "j: not failed (new)");
}
END_TEST

Suite *
top_suite(void)
{
	Suite *s = suite_create("top");
	TCase *tc = tcase_create("top");

	tcase_add_checked_fixture(tc, t_spool_setup, t_spool_teardown);
	tcase_add_test(tc, test_a_finished_job_leaves_the_window_after_a_minute);
	tcase_add_test(tc, test_a_rate_counted_in_part_is_over_the_seconds_counted);
	tcase_add_test(tc, test_a_count_says_how_far_it_can_be_trusted);
	tcase_add_test(tc, test_first_look_counts_recent_jobs_by_their_mtimes);
	tcase_add_test(tc, test_only_the_newest_failures_are_kept_with_their_reasons);
	tcase_add_test(tc, test_an_arrival_in_failed_is_listed_at_the_next_rescan);
	tcase_add_test(tc, test_a_kept_failure_that_left_is_replaced_by_the_next_newest);
	tcase_add_test(tc, test_a_rescan_reads_only_the_directories_events_came_from);
	tcase_add_test(tc, test_lost_events_make_the_next_rescan_read_everything);
	tcase_add_test(tc, test_cancel_and_retry_move_the_job_and_leave_notes);
	suite_add_tcase(s, tc);
	return s;
}
