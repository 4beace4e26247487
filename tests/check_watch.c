/* check_watch.c: inotify events become wake-ups; overflow means rescan. */
#include <sys/inotify.h>
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "suites.h"

static char dir[64];
static struct spool sp;
static struct watch *w;
static struct watch_event seen[16];
static char names[16][256];
static int nseen;

static void
record(void *arg, const struct watch_event *ev)
{
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

	strlcpy(dir, "/tmp/chute-watch.XXXXXX", sizeof(dir));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(spool_init(dir, NULL), 0);
	ck_assert_int_eq(spool_open(&sp, dir), 0);
	ck_assert_ptr_nonnull(w = watch_open(&sp, states, 2));
	nseen = 0;
}

static void
teardown(void)
{
	char cmd[128];

	watch_close(w);
	spool_close(&sp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
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
	int fd = openat(sp.dir[ST_TMP], "j", O_CREAT | O_WRONLY, 0600);

	close(fd);
	ck_assert_int_eq(renameat(sp.dir[ST_TMP], "j", sp.dir[ST_NEW], "j"), 0);
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
	int fd = openat(sp.dir[ST_NEW], "d", O_CREAT | O_WRONLY, 0600);

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
	int fd = openat(sp.dir[ST_NEW], ".swp", O_CREAT | O_WRONLY, 0600);

	close(fd);
	ck_assert_int_eq(watch_read(w, record, NULL), 0);
	ck_assert_int_eq(nseen, 0);
}
END_TEST

START_TEST(test_leaving_cur_is_reported)
{
	int fd = openat(sp.dir[ST_CUR], "c", O_CREAT | O_WRONLY, 0600);

	close(fd);
	ck_assert_int_eq(renameat(sp.dir[ST_CUR], "c", sp.dir[ST_FAILED], "c"), 0);
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
