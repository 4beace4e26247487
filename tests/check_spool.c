/*
 * check_spool.c: the layout, state lookup and the transitions of state.c,
 * each test on a fresh spool of its own (t_spool.h).
 */
#include <sys/stat.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "store/spool.h"
#include "store/state.h"
#include "suites.h"
#include "t_spool.h"

static void
put(int st, const char *name, const char *content)
{
	int fd = openat(t_spool.dir[st], name,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, content, strlen(content)),
	    (ssize_t)strlen(content));
	close(fd);
}

static int
exists(int st, const char *name)
{
	struct stat s;

	return fstatat(t_spool.dir[st], name, &s, AT_SYMLINK_NOFOLLOW) == 0;
}

START_TEST(test_init_creates_every_state_directory_private)
{
	struct stat st;

	for (int i = 0; i < ST_NDIRS; i++) {
		ck_assert_int_eq(fstat(t_spool.dir[i], &st), 0);
		ck_assert(S_ISDIR(st.st_mode));
		ck_assert_int_eq(st.st_mode & 07777, 0700);
	}
	/* Idempotent: a second init of an existing spool is fine. */
	ck_assert_int_eq(spool_init(t_spool_dir, NULL), 0);
}
END_TEST

START_TEST(test_locate_finds_the_one_state_holding_a_job)
{
	put(ST_DEFER, "j1", "x");
	ck_assert_int_eq(spool_locate(&t_spool, "j1", NULL), ST_DEFER);
	ck_assert_int_eq(spool_locate(&t_spool, "nope", NULL), ST_NONE);
	put(ST_TMP, "t1", "x");		/* tmp/ is not a job state */
	ck_assert_int_eq(spool_locate(&t_spool, "t1", NULL), ST_NONE);
}
END_TEST

START_TEST(test_each_state_is_its_directory_and_tmp_and_log_are_none)
{
	int live[ST_NSTATES], term[ST_NSTATES], nl, nt;

	for (int st = ST_FIRST; st < ST_END; st++) {
		ck_assert_str_eq(state_names[st], jobstates[st].name);
		ck_assert_int_eq(state_from_name(jobstates[st].name), st);
	}
	ck_assert_str_eq(state_names[ST_TMP], "tmp");
	ck_assert_str_eq(state_names[ST_LOG], "log");
	ck_assert_int_eq(state_from_name("tmp"), ST_NONE);
	ck_assert_int_eq(state_from_name("log"), ST_NONE);
	ck_assert_int_eq(state_from_name(""), ST_NONE);
	/* Live and terminal split the states, each in the table's order. */
	nl = states_where(JS_TERMINAL, 0, live);
	nt = states_where(JS_TERMINAL, JS_TERMINAL, term);
	ck_assert_int_eq(nl + nt, ST_NSTATES);
	ck_assert_int_eq(nl, 4);
	ck_assert_int_eq(live[0], ST_WAIT);
	ck_assert_int_eq(live[1], ST_NEW);
	ck_assert_int_eq(live[2], ST_CUR);
	ck_assert_int_eq(live[3], ST_DEFER);
	ck_assert_int_eq(nt, 2);
	ck_assert_int_eq(term[0], ST_DONE);
	ck_assert_int_eq(term[1], ST_FAILED);
}
END_TEST

START_TEST(test_network_file_systems_are_not_trusted_with_flock)
{
	const char *name = NULL;

	ck_assert(!spool_fs_trusted(0x6969, &name));
	ck_assert_str_eq(name, "NFS");
	ck_assert(!spool_fs_trusted(0xff534d42, &name));
	ck_assert(!spool_fs_trusted(0xfe534d42, &name));
	ck_assert(spool_fs_trusted(0xef53, NULL));	/* ext4 */
	ck_assert(spool_fs_trusted(0x01021994, NULL));	/* tmpfs */
	ck_assert(spool_fs_trusted(0x58465342, NULL));	/* xfs */
}
END_TEST

START_TEST(test_submit_is_visible_only_once_complete)
{
	int fds[2], where;

	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	ck_assert_int_eq(write(fds[1], "payload", 7), 7);
	close(fds[1]);
	ck_assert_int_eq(state_submit(&t_spool, fds[0], "s1", 0, &where), 0);
	close(fds[0]);
	ck_assert(exists(ST_NEW, "s1"));
	ck_assert(!exists(ST_TMP, "s1"));
	ck_assert_int_eq(spool_sync(&t_spool), 0);
	ck_assert_uint_eq(t_spool.dirty, 0);
}
END_TEST

START_TEST(test_delayed_submit_lands_in_defer_with_its_time_as_mtime)
{
	int fds[2], where;
	struct stat st;
	msec_t at = now_ms() + 3600 * 1000;

	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	close(fds[1]);
	ck_assert_int_eq(state_submit(&t_spool, fds[0], "d1", at, &where), 0);
	close(fds[0]);
	ck_assert_int_eq(fstatat(t_spool.dir[ST_DEFER], "d1", &st, 0), 0);
	ck_assert_int_eq(st.st_mtim.tv_sec, at / 1000);
}
END_TEST

START_TEST(test_claim_of_vanished_job_is_not_an_error_but_enoent)
{
	errno = 0;
	ck_assert_int_eq(state_claim(&t_spool, "ghost"), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(test_no_transition_overwrites_an_existing_job)
{
	char buf[8] = "";
	int fd;

	put(ST_NEW, "dup", "new-one");
	put(ST_CUR, "dup", "running");
	ck_assert_int_eq(state_claim(&t_spool, "dup"), -1);
	ck_assert_int_eq(errno, EEXIST);
	fd = openat(t_spool.dir[ST_CUR], "dup", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(read(fd, buf, 7), 7);
	close(fd);
	ck_assert_str_eq(buf, "running");
	ck_assert(exists(ST_NEW, "dup"));
}
END_TEST

START_TEST(test_finish_stamps_the_transition_time)
{
	struct stat st;
	msec_t when = now_ms() - 5000;

	put(ST_CUR, "f1", "x");
	ck_assert_int_eq(state_finish(&t_spool, "f1", ST_DONE, -1, when), 0);
	ck_assert_int_eq(fstatat(t_spool.dir[ST_DONE], "f1", &st, 0), 0);
	ck_assert_int_eq(st.st_mtim.tv_sec, when / 1000);
	ck_assert(!exists(ST_CUR, "f1"));
}
END_TEST

START_TEST(test_cancel_takes_a_job_from_new_defer_or_cur)
{
	int from;

	put(ST_NEW, "a", "x");
	put(ST_DEFER, "b", "x");
	put(ST_CUR, "c", "x");
	ck_assert_int_eq(state_cancel(&t_spool, "a", &from), 0);
	ck_assert_int_eq(from, ST_NEW);
	ck_assert_int_eq(state_cancel(&t_spool, "b", &from), 0);
	ck_assert_int_eq(from, ST_DEFER);
	ck_assert_int_eq(state_cancel(&t_spool, "c", &from), 0);
	ck_assert_int_eq(from, ST_CUR);
	ck_assert(exists(ST_FAILED, "a") && exists(ST_FAILED, "b") &&
	    exists(ST_FAILED, "c"));
	ck_assert_int_eq(state_cancel(&t_spool, "a", &from), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

START_TEST(test_a_taken_name_is_renamed_not_overwritten)
{
	char id[256];

	put(ST_DONE, "report.csv", "yesterday");
	put(ST_NEW, "report.csv", "today");
	ck_assert_int_eq(state_rename_new(&t_spool, "report.csv", id, sizeof(id)), 0);
	ck_assert(strncmp(id, "report.csv-", 11) == 0);
	ck_assert(exists(ST_NEW, id));
	ck_assert(!exists(ST_NEW, "report.csv"));
	ck_assert(exists(ST_DONE, "report.csv"));
}
END_TEST

START_TEST(test_only_transitions_that_must_survive_power_loss_are_synced)
{
	put(ST_NEW, "g", "x");
	ck_assert_int_eq(state_claim(&t_spool, "g"), 0);
	ck_assert_uint_eq(t_spool.dirty, 0);		/* lost claim: reruns from new/ */
	ck_assert_int_eq(state_finish(&t_spool, "g", ST_DONE, -1, now_ms()), 0);
	/* Source and destination: the removal must be durable too. */
	ck_assert_uint_eq(t_spool.dirty, 1u << ST_DONE | 1u << ST_CUR);
	ck_assert_int_eq(spool_sync(&t_spool), 0);
	ck_assert_uint_eq(t_spool.dirty, 0);
}
END_TEST

Suite *
spool_suite(void)
{
	Suite *s = suite_create("spool");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, t_spool_setup, t_spool_teardown);
	tcase_add_test(tc, test_init_creates_every_state_directory_private);
	tcase_add_test(tc, test_locate_finds_the_one_state_holding_a_job);
	tcase_add_test(tc, test_each_state_is_its_directory_and_tmp_and_log_are_none);
	tcase_add_test(tc, test_network_file_systems_are_not_trusted_with_flock);
	tcase_add_test(tc, test_submit_is_visible_only_once_complete);
	tcase_add_test(tc, test_delayed_submit_lands_in_defer_with_its_time_as_mtime);
	tcase_add_test(tc, test_claim_of_vanished_job_is_not_an_error_but_enoent);
	tcase_add_test(tc, test_no_transition_overwrites_an_existing_job);
	tcase_add_test(tc, test_finish_stamps_the_transition_time);
	tcase_add_test(tc, test_cancel_takes_a_job_from_new_defer_or_cur);
	tcase_add_test(tc, test_a_taken_name_is_renamed_not_overwritten);
	tcase_add_test(tc, test_only_transitions_that_must_survive_power_loss_are_synced);
	suite_add_tcase(s, tc);
	return s;
}
