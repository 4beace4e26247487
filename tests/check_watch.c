/* check_watch.c: inotify events become wake-ups; overflow means rescan. */
#include <sys/inotify.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/spool.h"
#include "store/watch.h"
#include "suites.h"
#include "t_spool.h"

static struct watch *w;
static struct watch_event seen[16];
static char names[16][256];
static int nseen;

static void
record(void *arg, const struct watch_event *ev)
{
	(void)arg;
	if (nseen < 16) {
		seen[nseen] = *ev;
		strlcpy(names[nseen], ev->name, sizeof(names[0]));
		seen[nseen].name = names[nseen];
		nseen++;
	}
}

static void
setup(void)
{
	static const int states[] = { ST_NEW, ST_CUR };

	t_spool_setup();
	ck_assert_ptr_nonnull(w = watch_open(&t_spool, states, 2));
	nseen = 0;
}

static void
teardown(void)
{
	watch_close(w);
	t_spool_teardown();
}

START_TEST(test_overflow_is_reported_as_rescan)
{
	struct inotify_event ev = { .wd = -1, .mask = IN_Q_OVERFLOW };

	watch_decode(w, (const char *)&ev, sizeof(ev), record, NULL);
	ck_assert_int_eq(nseen, 1);
	ck_assert_int_eq(seen[0].kind, W_OVERFLOW);
}
END_TEST

START_TEST(test_rename_into_new_is_an_arrival)
{
	int fd = openat(t_spool.dir[ST_TMP], "j",
	    O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	close(fd);
	ck_assert_int_eq(renameat(t_spool.dir[ST_TMP], "j",
	    t_spool.dir[ST_NEW], "j"), 0);
	/* inotify queues the event before rename(2) returns. */
	ck_assert_int_eq(watch_read(w, record, NULL), 0);
	ck_assert_int_eq(nseen, 1);
	ck_assert_int_eq(seen[0].state, ST_NEW);
	ck_assert_int_eq(seen[0].kind, W_ARRIVED);
	ck_assert_str_eq(seen[0].name, "j");
}
END_TEST

START_TEST(test_direct_write_is_created_then_written)
{
	int fd = openat(t_spool.dir[ST_NEW], "d",
	    O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	ck_assert_int_eq(watch_read(w, record, NULL), 0);
	ck_assert_int_eq(nseen, 2);
	ck_assert_int_eq(seen[0].kind, W_CREATED);
	ck_assert_int_eq(seen[1].kind, W_WRITTEN);
}
END_TEST

START_TEST(test_hidden_names_are_ignored)
{
	int fd = openat(t_spool.dir[ST_NEW], ".swp",
	    O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	close(fd);
	ck_assert_int_eq(watch_read(w, record, NULL), 0);
	ck_assert_int_eq(nseen, 0);
}
END_TEST

START_TEST(test_leaving_cur_is_reported)
{
	int fd = openat(t_spool.dir[ST_CUR], "c",
	    O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	close(fd);
	ck_assert_int_eq(renameat(t_spool.dir[ST_CUR], "c",
	    t_spool.dir[ST_FAILED], "c"), 0);
	ck_assert_int_eq(watch_read(w, record, NULL), 0);
	ck_assert_int_eq(nseen, 1);
	ck_assert_int_eq(seen[0].state, ST_CUR);
	ck_assert_int_eq(seen[0].kind, W_LEFT);
}
END_TEST

Suite *
watch_suite(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_overflow_is_reported_as_rescan);
	tcase_add_test(tc, test_rename_into_new_is_an_arrival);
	tcase_add_test(tc, test_direct_write_is_created_then_written);
	tcase_add_test(tc, test_hidden_names_are_ignored);
	tcase_add_test(tc, test_leaving_cur_is_reported);
	suite_add_tcase(s, tc);
	return s;
}
