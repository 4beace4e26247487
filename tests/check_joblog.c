/* check_joblog.c: attempts and outcomes read back from log/ID. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "suites.h"
#include "t_spool.h"

static struct joblog_info
parse(const char *text)
{
	struct joblog_info ji;

	joblog_parse(text, strlen(text), &ji);
	return ji;
}

START_TEST(test_each_start_line_is_one_attempt)
{
	struct joblog_info ji = parse(
	    "@chute 2026-11-30T04:09:40.123Z attempt=1 start\n"
	    "handler output\n"
	    "@chute 2026-11-30T04:09:41.000Z attempt=1 exit=75 time=1.0s\n"
	    "@chute 2026-11-30T04:10:41.000Z attempt=2 start\n"
	    "@chute 2026-11-30T04:10:42.000Z attempt=2 exit=3 time=1.0s\n");

	ck_assert_int_eq(ji.attempts, 2);
	ck_assert_str_eq(ji.last, "exit=3");
}
END_TEST

START_TEST(test_interrupted_attempts_are_not_counted)
{
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n"
	    "@chute T attempt=1 interrupted by shutdown (signal=TERM; not counted)\n"
	    "@chute T attempt=1 start\n");

	ck_assert_int_eq(ji.attempts, 1);
}
END_TEST

START_TEST(test_retry_resets_the_count)
{
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n@chute T attempt=1 exit=1 time=1s\n"
	    "@chute T reset by `chute retry` (uid 0)\n");

	ck_assert_int_eq(ji.attempts, 0);
	ck_assert_str_eq(ji.last, "");
}
END_TEST

START_TEST(test_handler_output_cannot_pass_for_our_lines)
{
	/* Only lines that start with the marker count; a handler line
	 * that merely contains it, mid-line, is output. */
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n"
	    "my output @chute T attempt=9 start\n"
	    "no newline at the end");

	ck_assert_int_eq(ji.attempts, 1);
}
END_TEST

START_TEST(test_cancel_and_timeout_are_the_last_outcome)
{
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n@chute T attempt=1 timeout signal=TERM time=5s\n");

	ck_assert_str_eq(ji.last, "timeout signal=TERM");
	ji = parse("@chute T attempt=1 start\n@chute T attempt=1 exit=0 time=1s\n"
	    "@chute T cancelled: moved out of cur/ while its handler ran\n");
	ck_assert_str_eq(ji.last, "cancelled");
}
END_TEST

START_TEST(test_our_line_starts_on_a_new_line_after_unterminated_output)
{
	char buf[256] = "";
	int fd, rfd;

	/* The handler's stdout is this very descriptor. */
	fd = joblog_open(&t_spool, "j");
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, "no newline", 10), 10);
	ck_assert_int_eq(joblog_fnote(fd, "attempt=1 exit=0 time=1ms"), 0);
	close(fd);
	rfd = openat(t_spool.dir[ST_LOG], "j", O_RDONLY | O_CLOEXEC);
	ck_assert_int_gt(read(rfd, buf, sizeof(buf) - 1), 0);
	close(rfd);
	ck_assert(strncmp(buf, "no newline\n@chute ", 18) == 0);
}
END_TEST

Suite *
joblog_suite(void)
{
	Suite *s = suite_create("joblog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_each_start_line_is_one_attempt);
	tcase_add_test(tc, test_interrupted_attempts_are_not_counted);
	tcase_add_test(tc, test_retry_resets_the_count);
	tcase_add_test(tc, test_handler_output_cannot_pass_for_our_lines);
	tcase_add_test(tc, test_cancel_and_timeout_are_the_last_outcome);
	suite_add_tcase(s, tc);
	/* Writing a job's log needs a spool on disk. */
	tc = tcase_create("file");
	tcase_add_checked_fixture(tc, t_spool_setup, t_spool_teardown);
	tcase_add_test(tc, test_our_line_starts_on_a_new_line_after_unterminated_output);
	suite_add_tcase(s, tc);
	return s;
}
