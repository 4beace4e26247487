/* check_id.c: generated, derived and validated job IDs. */
#include <check.h>
#include <string.h>

#include "base/chute.h"
#include "base/id.h"
#include "suites.h"

static int
only_safe(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789._-") == strlen(s);
}

START_TEST(test_generated_ids_are_valid_safe_and_sort_by_time)
{
	char prev[ID_GEN_LEN + 1] = "", id[ID_GEN_LEN + 1];

	for (int i = 0; i < 20000; i++) {
		id_generate(id, sizeof(id));
		ck_assert(id_valid(id));
		ck_assert_msg(only_safe(id), "unsafe id %s", id);
		ck_assert_msg(strcmp(prev, id) < 0 || strncmp(prev, id, 17) == 0,
		    "%s then %s", prev, id);
		ck_assert_str_ne(prev, id);
		strlcpy(prev, id, sizeof(prev));
	}
}
END_TEST

START_TEST(test_generated_ids_have_fixed_width_numbers)
{
	char id[ID_GEN_LEN + 1];

	id_generate(id, sizeof(id));
	/* SSSSSSSSSS.UUUUUU.PPPPPPP_CCCC.HOST */
	ck_assert_int_eq(id[10], '.');
	ck_assert_int_eq(id[17], '.');
	ck_assert_int_eq(id[25], '_');
	ck_assert_int_eq(id[30], '.');
	ck_assert_int_gt(strlen(id), 31);
}
END_TEST

START_TEST(test_invalid_ids_are_refused)
{
	char longid[ID_MAX + 2];

	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	ck_assert(!id_valid(""));
	ck_assert(!id_valid(".hidden"));
	ck_assert(!id_valid("a/b"));
	ck_assert(!id_valid(".."));
	ck_assert(!id_valid("new\nline"));
	ck_assert(!id_valid("tab\there"));
	ck_assert(!id_valid("del\x7f"));
	ck_assert(!id_valid(longid));
	longid[ID_MAX] = '\0';
	ck_assert(id_valid(longid));
	ck_assert(id_valid("report.csv"));
	ck_assert(id_valid("with space"));
	ck_assert(id_valid("caf\xc3\xa9"));
}
END_TEST

START_TEST(test_derived_ids_keep_the_name_and_are_safe)
{
	char id[256], id2[256], name[256];

	id_derive("report.csv", id, sizeof(id));
	ck_assert(strncmp(id, "report.csv-", 11) == 0);
	ck_assert(id_valid(id) && only_safe(id));
	id_derive("report.csv", id2, sizeof(id2));
	ck_assert_str_ne(id, id2);
	id_derive("bad\nname with spaces\x01", id, sizeof(id));
	ck_assert(id_valid(id) && only_safe(id));
	memset(name, 'x', 255);
	name[255] = '\0';
	id_derive(name, id, sizeof(id));
	ck_assert(id_valid(id));
	ck_assert_int_le(strlen(id), ID_MAX);
}
END_TEST

/* A name's attributes stay at the end of its derived ID; bad ones stay bad. */
START_TEST(test_derived_ids_keep_the_attributes)
{
	char id[256], name[256];
	size_t n;

	id_derive("a b,p=7,k=cust:1@x", id, sizeof(id));
	ck_assert_msg(strncmp(id, "a_b-", 4) == 0, "%s", id);
	n = strlen(id);
	ck_assert_msg(n > 15 && strcmp(id + n - 15, ",p=7,k=cust:1@x") == 0,
	    "%s", id);
	ck_assert(id_valid(id));
	/* A control byte in a key: '%', which no key may hold. */
	id_derive("f,k=a\x01" "b", id, sizeof(id));
	n = strlen(id);
	ck_assert_msg(strcmp(id + n - 6, ",k=a%b") == 0, "%s", id);
	/* A long name gives way to its attributes; the ID stays an ID. */
	memset(name, 'x', 200);
	strcpy(name + 200, ",p=-5,k=K");
	id_derive(name, id, sizeof(id));
	ck_assert(id_valid(id));
	n = strlen(id);
	ck_assert_msg(strcmp(id + n - 9, ",p=-5,k=K") == 0, "%s", id);
}
END_TEST

Suite *
id_suite(void)
{
	Suite *s = suite_create("id");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_generated_ids_are_valid_safe_and_sort_by_time);
	tcase_add_test(tc, test_generated_ids_have_fixed_width_numbers);
	tcase_add_test(tc, test_invalid_ids_are_refused);
	tcase_add_test(tc, test_derived_ids_keep_the_name_and_are_safe);
	tcase_add_test(tc, test_derived_ids_keep_the_attributes);
	suite_add_tcase(s, tc);
	return s;
}
