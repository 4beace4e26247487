/* check_nameq.c: the ordered name set behind the spool queue's index of ready jobs. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "base/nameq.h"
#include "store/ready.h"
#include "suites.h"

START_TEST(test_oldest_job_pops_first)
{
	struct nameq *q = nameq_new();
	char name[64];
	unsigned flags;

	ck_assert_int_eq(nameq_add(q, "c", 30, 0), 1);
	ck_assert_int_eq(nameq_add(q, "a", 10, RF_MOVED), 1);
	ck_assert_int_eq(nameq_add(q, "b", 20, 0), 1);
	ck_assert_int_eq(nameq_pop(q, name, sizeof(name), &flags), 1);
	ck_assert_str_eq(name, "a");
	ck_assert_uint_eq(flags, RF_MOVED);
	ck_assert_int_eq(nameq_pop(q, name, sizeof(name), NULL), 1);
	ck_assert_str_eq(name, "b");
	ck_assert_int_eq(nameq_pop(q, name, sizeof(name), NULL), 1);
	ck_assert_str_eq(name, "c");
	ck_assert_int_eq(nameq_pop(q, name, sizeof(name), NULL), 0);
	nameq_free(q);
}
END_TEST

START_TEST(test_same_age_sorts_by_name)
{
	struct nameq *q = nameq_new();
	char name[64];

	nameq_add(q, "zz", 5, 0);
	nameq_add(q, "aa", 5, 0);
	nameq_pop(q, name, sizeof(name), NULL);
	ck_assert_str_eq(name, "aa");
	nameq_free(q);
}
END_TEST

START_TEST(test_a_name_is_queued_once_and_flags_merge)
{
	struct nameq *q = nameq_new();
	unsigned flags = 0;

	ck_assert_int_eq(nameq_add(q, "x", 1, RF_CLOSED), 1);
	ck_assert_int_eq(nameq_add(q, "x", 99, RF_MOVED), 0);
	ck_assert_uint_eq(nameq_len(q), 1);
	ck_assert_int_eq(nameq_min_key(q), 1);
	ck_assert(nameq_take(q, "x", &flags));
	ck_assert_uint_eq(flags, RF_CLOSED | RF_MOVED);
	ck_assert(!nameq_has(q, "x"));
	ck_assert_int_eq(nameq_min_key(q), INT64_MAX);
	nameq_free(q);
}
END_TEST

START_TEST(test_many_jobs_come_out_in_order)
{
	struct nameq *q = nameq_new();
	char name[64], prev[64] = "";
	int64_t last = -1;

	for (int i = 0; i < 50000; i++) {
		snprintf(name, sizeof(name), "job%05d", (i * 7919) % 50000);
		ck_assert_int_eq(nameq_add(q, name, (i * 7919) % 50000, 0), 1);
	}
	ck_assert_uint_eq(nameq_len(q), 50000);
	for (int i = 0; i < 50000; i++) {
		int64_t k = nameq_min_key(q);
		ck_assert_int_eq(nameq_pop(q, name, sizeof(name), NULL), 1);
		ck_assert_int_gt(k, last);
		ck_assert_str_gt(name, prev);
		last = k;
		strlcpy(prev, name, sizeof(prev));
	}
	nameq_free(q);
}
END_TEST

/*
 * A rank comes before the key (a priority before the age); the lowest key
 * is found whatever the rank (the oldest job's share); the window's test
 * compares rank and key.
 */
START_TEST(test_rank_first_and_the_lowest_key_whatever_the_rank)
{
	struct nameq *q = nameq_new();
	char buf[64];
	int64_t key;
	int rank;

	ck_assert_int_eq(nameq_add_ranked(q, "old-low", 50, 1, 0), 1);
	ck_assert_int_eq(nameq_add_ranked(q, "new-high", -50, 9, 0), 1);
	ck_assert_int_eq(nameq_add_ranked(q, "mid", 0, 5, 0), 1);
	ck_assert_int_eq(nameq_add_ranked(q, "mid-older", 0, 3, 0), 1);
	ck_assert(nameq_ranked(q));
	ck_assert(nameq_after_max(q, 50, 1));
	ck_assert(!nameq_after_max(q, 49, 100));
	ck_assert_int_eq(nameq_pop_lowest_key(q, buf, sizeof(buf), NULL, &rank,
	    &key), 1);
	ck_assert_str_eq(buf, "old-low");
	ck_assert_int_eq(rank, 50);
	ck_assert_int_eq(key, 1);
	ck_assert_int_eq(nameq_pop_ranked(q, buf, sizeof(buf), NULL, &rank,
	    &key), 1);
	ck_assert_str_eq(buf, "new-high");
	ck_assert_int_eq(nameq_pop_lowest_key(q, buf, sizeof(buf), NULL, &rank,
	    &key), 1);
	ck_assert_str_eq(buf, "mid-older");
	ck_assert(!nameq_ranked(q));
	ck_assert_int_eq(nameq_pop(q, buf, sizeof(buf), NULL), 1);
	ck_assert_str_eq(buf, "mid");
	ck_assert_int_eq(nameq_pop_lowest_key(q, buf, sizeof(buf), NULL, &rank,
	    &key), 0);
	nameq_free(q);
}
END_TEST

Suite *
nameq_suite(void)
{
	Suite *s = suite_create("nameq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_oldest_job_pops_first);
	tcase_add_test(tc, test_same_age_sorts_by_name);
	tcase_add_test(tc, test_a_name_is_queued_once_and_flags_merge);
	tcase_add_test(tc, test_many_jobs_come_out_in_order);
	tcase_add_test(tc, test_rank_first_and_the_lowest_key_whatever_the_rank);
	suite_add_tcase(s, tc);
	return s;
}
