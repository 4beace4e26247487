/*
 * check_util.c: durations, backoff, escaped names and time stamps; and
 * sigfd.c's descriptor, which the four poll loops read their signals from.
 */
#include <sys/signalfd.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#define LIBBSD_OPENBSD_VIS 1	/* as util.c: the same strnvis */
#include <vis.h>

#include "base/sigfd.h"
#include "base/util.h"
#include "suites.h"

START_TEST(test_durations_accept_every_documented_unit)
{
	msec_t v;

	ck_assert_int_eq(dur_parse("250ms", &v), 0); ck_assert_int_eq(v, 250);
	ck_assert_int_eq(dur_parse("30s", &v), 0); ck_assert_int_eq(v, 30000);
	ck_assert_int_eq(dur_parse("5m", &v), 0); ck_assert_int_eq(v, 300000);
	ck_assert_int_eq(dur_parse("2h", &v), 0); ck_assert_int_eq(v, 7200000);
	ck_assert_int_eq(dur_parse("7d", &v), 0);
	ck_assert_int_eq(v, 7LL * 86400000);
	ck_assert_int_eq(dur_parse("42", &v), 0); ck_assert_int_eq(v, 42000);
	ck_assert_int_eq(dur_parse("0", &v), 0); ck_assert_int_eq(v, 0);
}
END_TEST

START_TEST(test_durations_refuse_garbage)
{
	static const char *bad[] = { "", "s", "-5s", "5x", "5 s", "5ss",
	    "1.5s", "99999999999999999999", "5S", " 5", "5ms ", "3650000d" };
	msec_t v = 77;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		ck_assert_msg(dur_parse(bad[i], &v) == -1, "accepted '%s'",
		    bad[i]);
		ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_eq(v, 77);
}
END_TEST

/* A retention reads back as it was written: SPOOL/retention's form. */
START_TEST(test_retention_durations_read_back_as_written)
{
	static const struct { msec_t ms; const char *text; } cases[] = {
		{ KEEP_FOREVER, "forever" }, { 0, "0" }, { 1500, "1500ms" },
		{ 30000, "30s" }, { 5400000, "90m" }, { 7200000, "2h" },
		{ 7LL * 86400000, "7d" }, { 86400001, "86400001ms" },
	};
	static const char *bad[] = { "-1", "forever1", "Forever", "1.5h",
	    "", "3650000d" };
	char buf[32];
	msec_t v;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		keep_format(cases[i].ms, buf, sizeof(buf));
		ck_assert_str_eq(buf, cases[i].text);
		ck_assert_int_eq(keep_parse(buf, &v), 0);
		ck_assert_int_eq(v, cases[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(keep_parse(bad[i], &v) == -1, "accepted '%s'",
		    bad[i]);
}
END_TEST

static uint32_t rnd_zero(uint32_t n) { (void)n; return 0; }
static uint32_t rnd_max(uint32_t n) { return n - 1; }

START_TEST(test_backoff_doubles_and_stops_at_the_cap)
{
	/* With the top of the jitter range the delay is the full value. */
	ck_assert_int_eq(backoff_delay(1000, 60000, 1, rnd_max), 1000);
	ck_assert_int_eq(backoff_delay(1000, 60000, 2, rnd_max), 2000);
	ck_assert_int_eq(backoff_delay(1000, 60000, 3, rnd_max), 4000);
	ck_assert_int_eq(backoff_delay(1000, 60000, 7, rnd_max), 60000);
	ck_assert_int_eq(backoff_delay(1000, 60000, 1000, rnd_max), 60000);
}
END_TEST

START_TEST(test_backoff_jitter_stays_within_half_to_full)
{
	ck_assert_int_eq(backoff_delay(1000, 60000, 3, rnd_zero), 2000);
	for (int i = 0; i < 1000; i++) {
		msec_t d = backoff_delay(1000, 60000, 3, arc4random_uniform);
		ck_assert(d >= 2000 && d <= 4000);
	}
}
END_TEST

START_TEST(test_backoff_survives_huge_attempt_counts)
{
	msec_t d = backoff_delay(7LL * 86400000, 30LL * 86400000, 500, rnd_max);

	ck_assert_int_eq(d, 30LL * 86400000);
}
END_TEST

START_TEST(test_duration_format_reads_back)
{
	char buf[32];

	dur_format(250, buf, sizeof(buf)); ck_assert_str_eq(buf, "250ms");
	dur_format(1500, buf, sizeof(buf)); ck_assert_str_eq(buf, "1.500s");
	dur_format(300000, buf, sizeof(buf)); ck_assert_str_eq(buf, "5m0s");
}
END_TEST

START_TEST(test_log_names_cannot_forge_lines)
{
	char buf[256];

	vis_name("evil\n2026-01-01T00:00:00Z job=x cur->done", buf, sizeof(buf));
	ck_assert_ptr_null(strchr(buf, '\n'));
	vis_name("a b\tc\x1b", buf, sizeof(buf));
	ck_assert_ptr_null(strchr(buf, ' '));
	ck_assert_ptr_null(strchr(buf, '\t'));
	ck_assert_ptr_null(strchr(buf, '\x1b'));
}
END_TEST

/*
 * vis_name copies plain IDs as they are, without strnvis: what it writes
 * must still be strnvis's answer, byte for byte, for every byte value in
 * every position, and when the buffer is too small.
 */
START_TEST(test_log_names_are_escaped_as_strnvis_would)
{
	const int flags = VIS_CSTYLE | VIS_OCTAL | VIS_TAB | VIS_NL | VIS_SP;
	char name[8], got[40], want[40];

	for (int c = 1; c < 256; c++) {
		for (int at = 0; at < 3; at++) {
			strcpy(name, "a1.");
			name[at] = (char)c;
			vis_name(name, got, sizeof(got));
			strnvis(want, name, sizeof(want), flags);
			ck_assert_msg(strcmp(got, want) == 0, "byte %d at %d: %s, "
			    "not %s", c, at, got, want);
		}
	}
	vis_name("1796011780.120514.0004242_0000.vm", got, sizeof(got));
	ck_assert_str_eq(got, "1796011780.120514.0004242_0000.vm");
	/* Too long for the buffer: as strnvis truncates it. */
	memset(got, 'x', sizeof(got));
	memset(want, 'x', sizeof(want));
	vis_name("abcdefgh", got, 4);
	strnvis(want, "abcdefgh", 4, flags);
	ck_assert(memcmp(got, want, sizeof(got)) == 0);
}
END_TEST

/* iso_time remembers the last second it formatted: it must never be stale. */
START_TEST(test_iso_times_follow_the_clock)
{
	char a[40], b[40], c[40];

	iso_time(1796011780123, a, sizeof(a));
	iso_time(1796011780999, b, sizeof(b));
	iso_time(1796011781000, c, sizeof(c));
	ck_assert_str_eq(a, "2026-11-30T04:09:40.123Z");
	ck_assert_str_eq(b, "2026-11-30T04:09:40.999Z");
	ck_assert_str_eq(c, "2026-11-30T04:09:41.000Z");
	iso_time(0, a, sizeof(a));
	ck_assert_str_eq(a, "1970-01-01T00:00:00.000Z");
	iso_time(1796011780123, a, sizeof(a));
	ck_assert_str_eq(a, "2026-11-30T04:09:40.123Z");
}
END_TEST

/*
 * The signals given are blocked and read from the descriptor, which is
 * close-on-exec and never waits: empty, a read says EAGAIN.  (Check runs
 * each test in a process of its own: the mask goes with it.)
 */
START_TEST(test_sigfd_blocks_its_signals_and_reads_them_without_waiting)
{
	struct signalfd_siginfo si;
	sigset_t now;
	int fd = sigfd_open(SIGUSR1, SIGUSR2, 0);

	ck_assert_int_ne(fd, -1);
	ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	ck_assert(fcntl(fd, F_GETFL) & O_NONBLOCK);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	ck_assert(sigismember(&now, SIGUSR1) && sigismember(&now, SIGUSR2));
	ck_assert(!sigismember(&now, SIGHUP));
	ck_assert_int_eq(read(fd, &si, sizeof(si)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	/* Blocked: pending, not the default action (which would end us). */
	ck_assert_int_eq(raise(SIGUSR2), 0);
	ck_assert_int_eq(read(fd, &si, sizeof(si)), (ssize_t)sizeof(si));
	ck_assert_uint_eq(si.ssi_signo, SIGUSR2);
	ck_assert_int_eq(read(fd, &si, sizeof(si)), -1);
	ck_assert_int_eq(errno, EAGAIN);
	close(fd);
}
END_TEST

Suite *
util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_durations_accept_every_documented_unit);
	tcase_add_test(tc, test_durations_refuse_garbage);
	tcase_add_test(tc, test_retention_durations_read_back_as_written);
	tcase_add_test(tc, test_backoff_doubles_and_stops_at_the_cap);
	tcase_add_test(tc, test_backoff_jitter_stays_within_half_to_full);
	tcase_add_test(tc, test_backoff_survives_huge_attempt_counts);
	tcase_add_test(tc, test_duration_format_reads_back);
	tcase_add_test(tc, test_log_names_cannot_forge_lines);
	tcase_add_test(tc, test_log_names_are_escaped_as_strnvis_would);
	tcase_add_test(tc, test_iso_times_follow_the_clock);
	suite_add_tcase(s, tc);
	tc = tcase_create("sigfd");
	tcase_add_test(tc, test_sigfd_blocks_its_signals_and_reads_them_without_waiting);
	suite_add_tcase(s, tc);
	return s;
}
