/* check_ready.c: is a file in new/ complete and safe to run? */
#include <sys/file.h>
#include <sys/stat.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/ready.h"
#include "store/spool.h"
#include "suites.h"
#include "t_spool.h"

static int dfd;		/* new/ of the test's spool */

static void
setup(void)
{
	t_spool_setup();
	dfd = t_spool.dir[ST_NEW];
}

static struct stat
fake(nlink_t links, msec_t age)
{
	struct stat st = { .st_nlink = links };
	msec_t m = now_ms() - age;

	st.st_mtim.tv_sec = m / 1000;
	st.st_mtim.tv_nsec = m % 1000 * 1000000;
	return st;
}

START_TEST(test_fallback_trusts_renames_closes_and_links)
{
	struct stat st = fake(1, 0);

	ck_assert_int_eq(ready_fallback(&st, RF_MOVED, now_ms()), READY_YES);
	ck_assert_int_eq(ready_fallback(&st, RF_CLOSED, now_ms()), READY_YES);
	ck_assert_int_eq(ready_fallback(&st, RF_TMPLINK, now_ms()), READY_YES);
}
END_TEST

START_TEST(test_fallback_waits_for_a_fresh_file_to_go_quiet)
{
	struct stat st = fake(1, 100);

	ck_assert_int_eq(ready_fallback(&st, 0, now_ms()), READY_QUIET);
	st = fake(1, QUIET_MS + 10);
	ck_assert_int_eq(ready_fallback(&st, 0, now_ms()), READY_YES);
}
END_TEST

START_TEST(test_a_file_open_for_writing_is_not_ready)
{
	struct stat st;
	int w = openat(dfd, "w", O_WRONLY | O_CREAT | O_CLOEXEC, 0600), fd;

	ck_assert_int_ne(w, -1);
	if (geteuid() == 0) {	/* the lease needs CAP_LEASE or ownership */
		ck_assert_int_eq(ready_check(&t_spool, "w", 0, &fd, &st),
		    READY_WRITER);
		ck_assert_int_eq(fd, -1);
	}
	close(w);
	ck_assert_int_eq(ready_check(&t_spool, "w", 0, &fd, &st), READY_YES);
	ck_assert_int_ne(fd, -1);
	close(fd);
}
END_TEST

START_TEST(test_symlinks_and_fifos_are_never_opened)
{
	struct stat st;
	int fd;

	ck_assert_int_eq(symlinkat("/etc/shadow", dfd, "link"), 0);
	ck_assert_int_eq(mkfifoat(dfd, "fifo", 0600), 0);
	ck_assert_int_eq(ready_check(&t_spool, "link", 0, &fd, &st), READY_NOTREG);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(ready_check(&t_spool, "fifo", 0, &fd, &st), READY_NOTREG);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(fd, -1);
}
END_TEST

START_TEST(test_a_vanished_file_is_gone)
{
	struct stat st;
	int fd;

	ck_assert_int_eq(ready_check(&t_spool, "nothing", 0, &fd, &st), READY_GONE);
}
END_TEST

START_TEST(test_a_job_locked_by_a_running_handler_is_busy)
{
	struct stat st;
	int h = openat(dfd, "j", O_RDONLY | O_CREAT | O_CLOEXEC, 0600), fd;

	/* A handler holding its stdin's lock, as an orphan would. */
	ck_assert_int_eq(flock(h, LOCK_EX), 0);
	ck_assert_int_eq(ready_check(&t_spool, "j", RF_MOVED, &fd, &st), READY_BUSY);
	close(h);
	ck_assert_int_eq(ready_check(&t_spool, "j", RF_MOVED, &fd, &st), READY_YES);
	close(fd);
}
END_TEST

START_TEST(test_a_hard_link_to_a_file_outside_the_spool_is_refused)
{
	struct stat st;
	char outside[PATH_MAX + 8];
	int fd, out;

	/* In the spool's root, outside every state directory. */
	snprintf(outside, sizeof(outside), "%s/secret", t_spool_dir);
	out = open(outside, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ne(out, -1);
	close(out);
	ck_assert_int_eq(linkat(AT_FDCWD, outside, dfd, "j", 0), 0);
	ck_assert_int_eq(ready_check(&t_spool, "j", RF_MOVED, &fd, &st), READY_LINKED);
	ck_assert_int_eq(fd, -1);
}
END_TEST

START_TEST(test_a_link_style_submission_in_progress_is_accepted)
{
	struct stat st;
	int fd, t = openat(t_spool.dir[ST_TMP], "q",
	    O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

	ck_assert_int_ne(t, -1);
	close(t);
	/* qmail: link(tmp/q, new/q), and the unlink has not happened yet. */
	ck_assert_int_eq(linkat(t_spool.dir[ST_TMP], "q", dfd, "q", 0), 0);
	ck_assert_int_eq(ready_check(&t_spool, "q", 0, &fd, &st), READY_YES);
	close(fd);
	/* The same inode under another tmp/ name is not that case. */
	ck_assert_int_eq(renameat(t_spool.dir[ST_TMP], "q", t_spool.dir[ST_TMP],
	    "other"), 0);
	ck_assert_int_eq(ready_check(&t_spool, "q", 0, &fd, &st), READY_LINKED);
}
END_TEST

Suite *
ready_suite(void)
{
	Suite *s = suite_create("ready");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, t_spool_teardown);
	tcase_add_test(tc, test_fallback_trusts_renames_closes_and_links);
	tcase_add_test(tc, test_fallback_waits_for_a_fresh_file_to_go_quiet);
	tcase_add_test(tc, test_a_file_open_for_writing_is_not_ready);
	tcase_add_test(tc, test_symlinks_and_fifos_are_never_opened);
	tcase_add_test(tc, test_a_vanished_file_is_gone);
	tcase_add_test(tc, test_a_job_locked_by_a_running_handler_is_busy);
	tcase_add_test(tc, test_a_hard_link_to_a_file_outside_the_spool_is_refused);
	tcase_add_test(tc, test_a_link_style_submission_in_progress_is_accepted);
	suite_add_tcase(s, tc);
	return s;
}
