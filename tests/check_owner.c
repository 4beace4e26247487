/*
 * check_owner.c: the owner's reaction to events, without a real loop:
 * an IN_Q_OVERFLOW means events were lost, and the rescan it triggers
 * must find every job anyway.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "owner.h"
#include "suites.h"

static char dir[64];
static struct run_opts opts = { .jobs = 1, .max_attempts = 5 };
static struct owner ow;

static void
setup(void)
{
	strlcpy(dir, "/tmp/chute-owner.XXXXXX", sizeof(dir));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(spool_init(dir, NULL), 0);
	memset(&ow, 0, sizeof(ow));
	ow.o = &opts;
	ow.window = 65536;
	ck_assert_int_eq(spool_open(&ow.sp, dir), 0);
	ow.ready = queue_new();
	ow.waiting = queue_new();
	ow.orphans = queue_new();
	ow.promoted = queue_new();
	ow.slots = calloc(opts.jobs, sizeof(*ow.slots));
	ow.next_rescan = mono_ms() + 60000;
}

static void
teardown(void)
{
	char cmd[128];

	if (ow.scan != NULL)
		closedir(ow.scan);
	queue_free(ow.ready);
	queue_free(ow.waiting);
	queue_free(ow.orphans);
	queue_free(ow.promoted);
	free(ow.slots);
	spool_close(&ow.sp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Run a scan of new/ to its end, as the loop would over iterations. */
static void
scan_all(bool force)
{
	owner_scan_new(&ow, force);
	while (!owner_scan_step(&ow, 100))
		;
}

static void
drop(const char *name)
{
	int fd = openat(ow.sp.dir[ST_NEW], name, O_WRONLY | O_CREAT, 0600);

	ck_assert_int_ne(fd, -1);
	close(fd);
}

START_TEST(test_overflow_rescans_new_and_finds_every_job)
{
	struct watch_event ev = { .state = ST_NONE, .kind = W_OVERFLOW, .name = "" };
	char name[32];

	/* 300 jobs arrived while their events were dropped. */
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "lost%03d", i);
		drop(name);
	}
	ck_assert_uint_eq(queue_len(ow.ready), 0);
	owner_on_event(&ow, &ev);
	ck_assert(ow.rescan);
	owner_on_timers(&ow);
	ck_assert(!ow.rescan);
	while (!owner_scan_step(&ow, 100))
		;
	ck_assert_uint_eq(queue_len(ow.ready), 300);
	ck_assert(queue_has(ow.ready, "lost000") && queue_has(ow.ready, "lost299"));
}
END_TEST

START_TEST(test_an_event_and_a_rescan_queue_a_job_once)
{
	struct watch_event ev = { .state = ST_NEW, .kind = W_ARRIVED, .name = "j" };

	drop("j");
	owner_on_event(&ow, &ev);
	owner_on_event(&ow, &ev);
	scan_all(true);
	ck_assert_uint_eq(queue_len(ow.ready), 1);
}
END_TEST

START_TEST(test_events_for_vanished_files_queue_nothing)
{
	struct watch_event ev = { .state = ST_NEW, .kind = W_ARRIVED, .name = "gone" };

	owner_on_event(&ow, &ev);
	ck_assert_uint_eq(queue_len(ow.ready), 0);
}
END_TEST

START_TEST(test_unchanged_new_is_not_reread_by_the_safety_rescan)
{
	struct stat st;
	struct timespec old[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };

	drop("a");
	/* Make new/ look untouched for a while, then scan it. */
	ck_assert_int_eq(fstat(ow.sp.dir[ST_NEW], &st), 0);
	old[1].tv_sec = st.st_mtim.tv_sec - 10;
	ck_assert_int_eq(futimens(ow.sp.dir[ST_NEW], old), 0);
	scan_all(true);
	ck_assert_uint_eq(queue_len(ow.ready), 1);
	ck_assert(queue_take(ow.ready, "a", NULL));
	/* Unchanged since: the cheap rescan skips it, a forced one does not. */
	scan_all(false);
	ck_assert_uint_eq(queue_len(ow.ready), 0);
	scan_all(true);
	ck_assert_uint_eq(queue_len(ow.ready), 1);
}
END_TEST

START_TEST(test_memory_holds_a_bounded_window_of_the_oldest_jobs)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	char name[32];
	unsigned seen = 0;

	/* 100 jobs, job00 oldest; a window of 10 holds the 10 oldest. */
	ow.window = 10;
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "job%02d", i);
		drop(name);
		ts[1].tv_sec = 1000000 + i;
		ck_assert_int_eq(utimensat(ow.sp.dir[ST_NEW], name, ts, 0), 0);
	}
	scan_all(true);
	ck_assert_uint_eq(queue_len(ow.ready), 10);
	ck_assert(ow.truncated);
	ck_assert(queue_has(ow.ready, "job00") && queue_has(ow.ready, "job09"));
	ck_assert(!queue_has(ow.ready, "job10"));
	/* Draining it in order, with refills, yields all 100 oldest first. */
	for (;;) {
		owner_refill(&ow);
		while (!owner_scan_step(&ow, 7))
			;
		if (!queue_pop(ow.ready, name, sizeof(name), NULL))
			break;
		char want[32];
		snprintf(want, sizeof(want), "job%02u", seen);
		ck_assert_str_eq(name, want);
		ck_assert_int_eq(unlinkat(ow.sp.dir[ST_NEW], name, 0), 0);
		ck_assert_uint_le(queue_len(ow.ready), 10);
		seen++;
	}
	ck_assert_uint_eq(seen, 100);
}
END_TEST

Suite *
owner_suite(void)
{
	Suite *s = suite_create("owner");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_overflow_rescans_new_and_finds_every_job);
	tcase_add_test(tc, test_an_event_and_a_rescan_queue_a_job_once);
	tcase_add_test(tc, test_events_for_vanished_files_queue_nothing);
	tcase_add_test(tc, test_unchanged_new_is_not_reread_by_the_safety_rescan);
	tcase_add_test(tc, test_memory_holds_a_bounded_window_of_the_oldest_jobs);
	suite_add_tcase(s, tc);
	return s;
}
