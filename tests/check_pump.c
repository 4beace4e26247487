/*
 * check_pump.c: pump.c, pipes read into files kept to a cap by a thread.
 * The writer here is the test itself, with no reader of its own: what it
 * writes past the pipe's buffer gets through only because the thread
 * reads it.
 */
#include <sys/stat.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/pump.h"
#include "base/util.h"
#include "suites.h"

/* A temporary file, unlinked at once: the pump's log file. */
static int
scratch(void)
{
	char path[] = "/tmp/chute-pump.XXXXXX";
	int fd = mkostemp(path, O_APPEND | O_CLOEXEC);

	ck_assert_msg(fd != -1, "mkostemp: %s", strerror(errno));
	unlink(path);
	return fd;
}

/*
 * 3 MiB through a pipe of 64 KiB, written by one that does not read it,
 * end in a file of exactly the cap and one byte more, its first bytes
 * those written first; the writer never blocks for good.
 */
START_TEST(test_a_pipe_is_read_by_the_thread_and_its_file_capped)
{
	enum { CAP = 100000 };
	struct pumps *ps = pumps_new(CAP);
	char buf[4096], head[16];
	int key, fd = scratch(), w;
	struct stat st;

	ck_assert_ptr_nonnull(ps);
	ck_assert_int_ne(w = pumps_add(ps, &key, fd), -1);
	for (int i = 0; i < 768; i++) {
		memset(buf, 'a' + i % 26, sizeof(buf));
		ck_assert_int_ne(write_all(w, buf, sizeof(buf)), -1);
	}
	close(w);
	ck_assert_int_eq(pumps_drain(ps, &key), fd);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, CAP + 1);
	ck_assert_int_eq(pread(fd, head, sizeof(head), 0), (ssize_t)sizeof(head));
	ck_assert(memcmp(head, "aaaaaaaaaaaaaaaa", sizeof(head)) == 0);
	pumps_drop(ps, &key);
	ck_assert_int_eq(pumps_drain(ps, &key), -1);
	pumps_free(ps);
}
END_TEST

/* Two pipes stay apart; what is left in one is drained before it is read. */
START_TEST(test_pipes_stay_apart_and_drain_takes_what_is_left)
{
	struct pumps *ps = pumps_new(1 << 20);
	int a, b, fa = scratch(), fb = scratch(), wa, wb;
	struct stat st;

	ck_assert_int_ne(wa = pumps_add(ps, &a, fa), -1);
	ck_assert_int_ne(wb = pumps_add(ps, &b, fb), -1);
	ck_assert_int_eq(write_all(wa, "one\n", 4), 4);
	ck_assert_int_eq(write_all(wb, "second\n", 7), 7);
	ck_assert_int_eq(pumps_drain(ps, &a), fa);
	ck_assert_int_eq(pumps_drain(ps, &b), fb);
	ck_assert_int_eq(fstat(fa, &st), 0);
	ck_assert_int_eq(st.st_size, 4);
	ck_assert_int_eq(fstat(fb, &st), 0);
	ck_assert_int_eq(st.st_size, 7);
	close(wa);
	close(wb);
	pumps_free(ps);		/* drops both, stops the thread */
}
END_TEST

Suite *
pump_suite(void)
{
	Suite *s = suite_create("pump");
	TCase *tc = tcase_create("pump");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_a_pipe_is_read_by_the_thread_and_its_file_capped);
	tcase_add_test(tc, test_pipes_stay_apart_and_drain_takes_what_is_left);
	suite_add_tcase(s, tc);
	return s;
}
