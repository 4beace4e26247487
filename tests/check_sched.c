/*
 * check_sched.c: base/sched.c: priorities, keys, a spool's name
 * attributes, the limits' rules.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "base/chute.h"
#include "base/sched.h"
#include "suites.h"

START_TEST(test_priorities_are_whole_numbers_in_range)
{
	static const char *bad[] = { "", "-", "+5", " 5", "5 ", "101",
	    "-101", "1e2", "0x10", "99999999999999999999", "5a" };
	const char *why = NULL;
	int p = 7;

	ck_assert_int_eq(prio_parse("100", &p, &why), 0);
	ck_assert_int_eq(p, 100);
	ck_assert_int_eq(prio_parse("-100", &p, &why), 0);
	ck_assert_int_eq(p, -100);
	ck_assert_int_eq(prio_parse("0", &p, &why), 0);
	ck_assert_int_eq(p, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = 7;
		ck_assert_msg(prio_parse(bad[i], &p, &why) == -1, "%s", bad[i]);
		ck_assert_int_eq(p, 7);
		ck_assert_ptr_nonnull(strstr(why, "-100 to 100"));
	}
}
END_TEST

START_TEST(test_keys_are_short_safe_words)
{
	static const char *bad[] = { "", "a/b", "a,b", "a=b", "a b", "a\tb",
	    "a\nb", "\x7f", "caf\xc3\xa9", "a;b", "$x" };
	char big[10 * 1024];
	const char *why;

	ck_assert(key_valid("customer-42", &why));
	ck_assert(key_valid("host.example:5432", &why));
	ck_assert(key_valid("me+you@x_y", &why));
	memset(big, 'k', KEY_MAX);
	big[KEY_MAX] = '\0';
	ck_assert(key_valid(big, &why));
	big[KEY_MAX] = 'k';
	big[KEY_MAX + 1] = '\0';
	ck_assert(!key_valid(big, &why));
	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert(!key_valid(big, &why));
	ck_assert_ptr_nonnull(strstr(why, "1 to 64 bytes"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!key_valid(bad[i], &why), "%s", bad[i]);
}
END_TEST

START_TEST(test_a_name_carries_priority_and_key_at_its_end)
{
	struct jobattr a;
	const char *why;

	ck_assert_int_eq(jobattr_parse("report.csv", &a, &why), 0);
	ck_assert_int_eq(a.prio, PRIO_DEFAULT);
	ck_assert_str_eq(a.key, "");
	ck_assert_uint_eq(a.baselen, strlen("report.csv"));

	ck_assert_int_eq(jobattr_parse("r,p=9", &a, &why), 0);
	ck_assert_int_eq(a.prio, 9);
	ck_assert_uint_eq(a.baselen, 1);

	ck_assert_int_eq(jobattr_parse("r,k=cust42,p=-3", &a, &why), 0);
	ck_assert_int_eq(a.prio, -3);
	ck_assert_str_eq(a.key, "cust42");
	ck_assert_uint_eq(a.baselen, 1);

	ck_assert_int_eq(jobattr_parse("r,p=1,k=a:b", &a, &why), 0);
	ck_assert_int_eq(a.prio, 1);
	ck_assert_str_eq(a.key, "a:b");

	/* A ',' that starts no attribute stays in the base. */
	ck_assert_int_eq(jobattr_parse("a,b,c,k=x", &a, &why), 0);
	ck_assert_str_eq(a.key, "x");
	ck_assert_uint_eq(a.baselen, 5);
	ck_assert_int_eq(jobattr_parse("a,b", &a, &why), 0);
	ck_assert_uint_eq(a.baselen, 3);
	ck_assert_int_eq(jobattr_parse(",p=5", &a, &why), 0);
	ck_assert_int_eq(a.prio, PRIO_DEFAULT);
	ck_assert_uint_eq(a.baselen, 4);
	ck_assert_int_eq(jobattr_parse("a,,p=5", &a, &why), 0);
	ck_assert_int_eq(a.prio, 5);
	ck_assert_uint_eq(a.baselen, 2);
}
END_TEST

START_TEST(test_a_name_with_a_bad_attribute_is_an_error)
{
	static const char *bad[] = { "r,p=high", "r,p=101", "r,p=", "r,k=",
	    "r,k=a b", "r,p=1,p=2", "r,k=a,k=b", "r,x=1", "r,p=+1",
	    "r,k=kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
	    "kkkkkk" };
	struct jobattr a;
	const char *why;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(jobattr_parse(bad[i], &a, &why) == -1, "%s",
		    bad[i]);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

START_TEST(test_a_name_is_made_back_and_fits_an_id)
{
	char buf[256], base[200];
	struct jobattr a;
	const char *why;

	ck_assert_int_eq(jobattr_name("j1", 0, "", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "j1");
	ck_assert_int_eq(jobattr_name("j1", -5, "acme", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "j1,p=-5,k=acme");
	ck_assert_int_eq(jobattr_parse(buf, &a, &why), 0);
	ck_assert_int_eq(a.prio, -5);
	ck_assert_str_eq(a.key, "acme");
	ck_assert_uint_eq(a.baselen, 2);
	memset(base, 'b', 195);
	base[195] = '\0';
	errno = 0;
	ck_assert_int_eq(jobattr_name(base, 0, "acme", buf, sizeof(buf)), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(jobattr_name(base, 0, "", buf, sizeof(buf)), 0);
}
END_TEST

START_TEST(test_limits_and_rates_parse_and_read_back)
{
	static const char *badmax[] = { "0", "-1", "", "1.5", "100001",
	    " 3", "3x", "nonee" };
	static const char *badrate[] = { "0/1s", "-1/1s", "5", "5/", "/1s",
	    "5/0s", "5/2d", "5/1y", "100001/1s", "5/-1s", "x/1s", " 5/1s" };
	const char *why;
	char buf[64];
	msec_t per;
	long n;

	ck_assert_int_eq(limit_parse_max("3", &n, &why), 0);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(limit_parse_max("none", &n, &why), 0);
	ck_assert_int_eq(n, 0);
	for (size_t i = 0; i < sizeof(badmax) / sizeof(badmax[0]); i++)
		ck_assert_msg(limit_parse_max(badmax[i], &n, &why) == -1, "%s",
		    badmax[i]);
	ck_assert_int_eq(limit_parse_rate("10/1s", &n, &per, &why), 0);
	ck_assert_int_eq(n, 10);
	ck_assert_int_eq(per, 1000);
	limit_format_rate(n, per, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10/1s");
	ck_assert_int_eq(limit_parse_rate("600/90m", &n, &per, &why), 0);
	limit_format_rate(n, per, buf, sizeof(buf));
	ck_assert_str_eq(buf, "600/90m");
	ck_assert_int_eq(limit_parse_rate("1/250ms", &n, &per, &why), 0);
	limit_format_rate(n, per, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1/250ms");
	ck_assert_int_eq(limit_parse_rate("none", &n, &per, &why), 0);
	ck_assert_int_eq(n, 0);
	limit_format_rate(n, per, buf, sizeof(buf));
	ck_assert_str_eq(buf, "-");
	for (size_t i = 0; i < sizeof(badrate) / sizeof(badrate[0]); i++)
		ck_assert_msg(limit_parse_rate(badrate[i], &n, &per, &why) ==
		    -1, "%s", badrate[i]);
}
END_TEST

START_TEST(test_a_key_is_bound_by_its_own_rule_else_the_default)
{
	struct limit v[3] = {
		{ .scope = LIM_ALL, .max = 10 },
		{ .scope = LIM_DEFAULT, .max = 2 },
		{ .scope = LIM_KEY, .key = "big", .max = 5 },
	};

	ck_assert_ptr_eq(limit_for_key(v, 3, "big"), &v[2]);
	ck_assert_ptr_eq(limit_for_key(v, 3, "small"), &v[1]);
	ck_assert_ptr_null(limit_for_key(v, 3, ""));
	ck_assert_ptr_null(limit_for_key(v, 1, "small"));
	ck_assert_ptr_eq(limit_for_key(v + 2, 1, "big"), &v[2]);
}
END_TEST

Suite *
sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_priorities_are_whole_numbers_in_range);
	tcase_add_test(tc, test_keys_are_short_safe_words);
	tcase_add_test(tc, test_a_name_carries_priority_and_key_at_its_end);
	tcase_add_test(tc, test_a_name_with_a_bad_attribute_is_an_error);
	tcase_add_test(tc, test_a_name_is_made_back_and_fits_an_id);
	tcase_add_test(tc, test_limits_and_rates_parse_and_read_back);
	tcase_add_test(tc, test_a_key_is_bound_by_its_own_rule_else_the_default);
	suite_add_tcase(s, tc);
	return s;
}
