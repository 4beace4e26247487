/*
 * check_owner.c: the owner through its C interface, on a real spool with
 * real handlers: run_main builds the owner with owner_init, drains the
 * spool and tears everything down with owner_free and the queue's close,
 * leaving no descriptor behind.  The end-to-end behaviour is check_cli.c's.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "run/opts.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/state.h"
#include "run/owner.h"
#include "suites.h"
#include "t_spool.h"

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static int
count_state(int st)
{
	DIR *d = fdopendir(openat(t_spool.dir[st], ".", O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC));
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void
submit(const char *id)
{
	int pipefd[2], where;

	ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
	ck_assert_int_eq(write(pipefd[1], "job\n", 4), 4);
	close(pipefd[1]);
	ck_assert_int_eq(state_submit(&t_spool, pipefd[0], id, 0, &where), 0);
	close(pipefd[0]);
	ck_assert_int_eq(spool_sync(&t_spool), 0);
}

static struct run_opts
opts(char **argv, int jobs, int max_attempts)
{
	return (struct run_opts){ .jobs = jobs, .grace = 1000,
	    .max_attempts = max_attempts, .backoff_base = 30000,
	    .backoff_cap = 3600000, .drain = true, .argv = argv,
	    .path = argv[0] };
}

START_TEST(test_an_owner_drains_a_spool_and_leaves_no_descriptor_open)
{
	char *argv[] = { "/bin/true", NULL };
	struct run_opts o = opts(argv, 2, 5);
	int before;

	submit("a");
	submit("b");
	submit("c");
	before = count_fds();
	ck_assert_int_eq(run_main(t_spool_dir, &o), 0);
	ck_assert_int_eq(count_state(ST_DONE), 3);
	ck_assert_int_eq(count_state(ST_NEW) + count_state(ST_CUR) +
	    count_state(ST_DEFER) + count_state(ST_FAILED), 0);
	ck_assert_int_eq(count_fds(), before);
}
END_TEST

START_TEST(test_a_handler_that_cannot_start_uses_up_the_attempt)
{
	char *argv[] = { "/nonexistent/handler", NULL };
	struct run_opts o = opts(argv, 1, 1);
	struct joblog_info ji;

	submit("x");
	ck_assert_int_eq(run_main(t_spool_dir, &o), 0);
	ck_assert_int_eq(count_state(ST_FAILED), 1);
	ck_assert_int_eq(joblog_read(&t_spool, "x", &ji), 0);
	ck_assert_int_eq(ji.attempts, 1);
	ck_assert_str_eq(ji.last, "spawn-failed: No such file or directory");
}
END_TEST

START_TEST(test_a_failing_handler_sends_the_job_to_failed)
{
	char *argv[] = { "/bin/false", NULL };
	struct run_opts o = opts(argv, 1, 5);
	struct joblog_info ji;

	submit("f");
	ck_assert_int_eq(run_main(t_spool_dir, &o), 0);
	ck_assert_int_eq(count_state(ST_FAILED), 1);
	ck_assert_int_eq(joblog_read(&t_spool, "f", &ji), 0);
	ck_assert_str_eq(ji.last, "exit=1");
}
END_TEST

Suite *
owner_suite(void)
{
	Suite *s = suite_create("owner");
	TCase *tc = tcase_create("run");

	tcase_add_checked_fixture(tc, t_spool_setup, t_spool_teardown);
	tcase_add_test(tc, test_an_owner_drains_a_spool_and_leaves_no_descriptor_open);
	tcase_add_test(tc, test_a_handler_that_cannot_start_uses_up_the_attempt);
	tcase_add_test(tc, test_a_failing_handler_sends_the_job_to_failed);
	suite_add_tcase(s, tc);
	return s;
}
