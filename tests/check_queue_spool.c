/*
 * check_queue_spool.c: the spool queue's reaction to events, without the
 * owner's loop: an IN_Q_OVERFLOW means events were lost, and the rescan it
 * triggers must find every job anyway; the ready index holds a bounded
 * window of the oldest jobs.
 */
#include <sys/stat.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/nameq.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/watch.h"
#include "queue/spool/queue_spool.h"
#include "suites.h"
#include "t_spool.h"

static struct spoolq *sq;

/* The queue's state over a fresh spool, opened as the queue's own. */
static void
setup(void)
{
	struct queue_conf c = { .policy = { .max_attempts = 5 } };

	t_spool_make();
	ck_assert_ptr_nonnull(sq = spoolq_new(&c));
	ck_assert_int_eq(spool_open(&sq->sp, t_spool_dir), 0);
}

static void
teardown(void)
{
	sq->q.be->close(&sq->q);
	t_spool_remove();
}

/* Run a scan of new/ to its end, as the loop would over iterations. */
static void
scan_all(bool force)
{
	spoolq_scan_new(sq, force);
	while (!spoolq_scan_step(sq, 100))
		;
}

static void
drop(const char *name)
{
	int fd = openat(sq->sp.dir[ST_NEW], name, O_WRONLY | O_CREAT, 0600);

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
	ck_assert_uint_eq(nameq_len(sq->ready), 0);
	spoolq_on_event(sq, &ev);
	ck_assert(sq->rescan);
	sq->q.be->due(&sq->q, mono_ms());
	ck_assert(!sq->rescan);
	while (!spoolq_scan_step(sq, 100))
		;
	ck_assert_uint_eq(nameq_len(sq->ready), 300);
	ck_assert(nameq_has(sq->ready, "lost000") && nameq_has(sq->ready, "lost299"));
}
END_TEST

START_TEST(test_an_event_and_a_rescan_queue_a_job_once)
{
	struct watch_event ev = { .state = ST_NEW, .kind = W_ARRIVED, .name = "j" };

	drop("j");
	spoolq_on_event(sq, &ev);
	spoolq_on_event(sq, &ev);
	scan_all(true);
	ck_assert_uint_eq(nameq_len(sq->ready), 1);
}
END_TEST

START_TEST(test_events_for_vanished_files_queue_nothing)
{
	struct watch_event ev = { .state = ST_NEW, .kind = W_ARRIVED, .name = "gone" };

	spoolq_on_event(sq, &ev);
	ck_assert_uint_eq(nameq_len(sq->ready), 0);
}
END_TEST

START_TEST(test_unchanged_new_is_not_reread_by_the_safety_rescan)
{
	struct stat st;
	struct timespec old[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };

	drop("a");
	/* Make new/ look untouched for a while, then scan it. */
	ck_assert_int_eq(fstat(sq->sp.dir[ST_NEW], &st), 0);
	old[1].tv_sec = st.st_mtim.tv_sec - 10;
	ck_assert_int_eq(futimens(sq->sp.dir[ST_NEW], old), 0);
	scan_all(true);
	ck_assert_uint_eq(nameq_len(sq->ready), 1);
	ck_assert(nameq_take(sq->ready, "a", NULL));
	/* Unchanged since: the cheap rescan skips it, a forced one does not. */
	scan_all(false);
	ck_assert_uint_eq(nameq_len(sq->ready), 0);
	scan_all(true);
	ck_assert_uint_eq(nameq_len(sq->ready), 1);
}
END_TEST

START_TEST(test_memory_holds_a_bounded_window_of_the_oldest_jobs)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	char name[32];
	unsigned seen = 0;

	/* 100 jobs, job00 oldest; a window of 10 holds the 10 oldest. */
	sq->window = 10;
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "job%02d", i);
		drop(name);
		ts[1].tv_sec = 1000000 + i;
		ck_assert_int_eq(utimensat(sq->sp.dir[ST_NEW], name, ts, 0), 0);
	}
	scan_all(true);
	ck_assert_uint_eq(nameq_len(sq->ready), 10);
	ck_assert(sq->truncated);
	ck_assert(nameq_has(sq->ready, "job00") && nameq_has(sq->ready, "job09"));
	ck_assert(!nameq_has(sq->ready, "job10"));
	/* Draining it in order, with refills, yields all 100 oldest first. */
	for (;;) {
		spoolq_refill(sq);
		while (!spoolq_scan_step(sq, 7))
			;
		if (!nameq_pop(sq->ready, name, sizeof(name), NULL))
			break;
		char want[32];
		snprintf(want, sizeof(want), "job%02u", seen);
		ck_assert_str_eq(name, want);
		ck_assert_int_eq(unlinkat(sq->sp.dir[ST_NEW], name, 0), 0);
		ck_assert_uint_le(nameq_len(sq->ready), 10);
		seen++;
	}
	ck_assert_uint_eq(seen, 100);
}
END_TEST

/*
 * A job without a log gets one of the pool's, by link; a job that has
 * one (it ran before) appends to it and counts its attempts from it, and
 * the pool's file waits for the next job.  The pool is refilled to
 * LOGPOOL_MIN, or to as many as one claim asked for if that is more.
 */
START_TEST(test_claims_take_logs_from_the_pool_and_keep_existing_ones)
{
	struct claim ca, cb, *cv[2] = { &ca, &cb };
	struct stat st;
	int fd;

	drop("a");
	drop("b");
	/* a is older and has run once already. */
	ck_assert_int_eq(utimensat(sq->sp.dir[ST_NEW], "a", (struct timespec[2]){
	    { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1000000 } }, 0), 0);
	ck_assert_int_ne(fd = joblog_open(&sq->sp, "a"), -1);
	ck_assert_int_eq(joblog_fnote(fd, "attempt=1 start"), 0);
	close(fd);
	ck_assert_int_eq(joblog_pool_open(&sq->pool, &sq->sp), 0);
	ck_assert_int_eq(joblog_pool_fill(&sq->pool, &sq->sp), 0);
	ck_assert_int_eq(sq->pool.n, LOGPOOL_MIN);
	scan_all(true);
	ck_assert_int_eq(sq->q.be->claim(&sq->q, cv, 2), 2);
	ck_assert_str_eq(ca.id, "a");
	ck_assert_int_eq(ca.attempt, 2);
	ck_assert_int_ne(ca.logfd, -1);
	ck_assert_str_eq(cb.id, "b");
	ck_assert_int_eq(cb.attempt, 1);
	ck_assert_int_ne(cb.logfd, -1);
	ck_assert_int_eq(cb.logend, 0);
	ck_assert_int_eq(sq->pool.n, LOGPOOL_MIN - 1);	/* only b took one */
	ck_assert_int_eq(fstatat(sq->sp.dir[ST_LOG], "b", &st, 0), 0);
	ck_assert(st.st_size == 0);
	ck_assert_int_eq(fstatat(sq->sp.dir[ST_CUR], "b", &st, 0), 0);
	sq->q.be->prepare(&sq->q);
	ck_assert_int_eq(sq->pool.n, LOGPOOL_MIN);
	sq->q.be->release(&sq->q, &ca);
	sq->q.be->release(&sq->q, &cb);
}
END_TEST

Suite *
queue_spool_suite(void)
{
	Suite *s = suite_create("queue_spool");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_overflow_rescans_new_and_finds_every_job);
	tcase_add_test(tc, test_an_event_and_a_rescan_queue_a_job_once);
	tcase_add_test(tc, test_events_for_vanished_files_queue_nothing);
	tcase_add_test(tc, test_unchanged_new_is_not_reread_by_the_safety_rescan);
	tcase_add_test(tc, test_memory_holds_a_bounded_window_of_the_oldest_jobs);
	tcase_add_test(tc, test_claims_take_logs_from_the_pool_and_keep_existing_ones);
	suite_add_tcase(s, tc);
	return s;
}
