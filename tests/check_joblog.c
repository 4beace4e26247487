/* check_joblog.c: attempts and outcomes read back from log/ID. */
#include <sys/stat.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "suites.h"
#include "t_spool.h"

static struct joblog_info
parse(const char *text)
{
	struct joblog_info ji;

	joblog_parse(text, strlen(text), &ji);
	return ji;
}

START_TEST(test_each_start_line_is_one_attempt)
{
	struct joblog_info ji = parse(
	    "@chute 2026-11-30T04:09:40.123Z attempt=1 start\n"
	    "handler output\n"
	    "@chute 2026-11-30T04:09:41.000Z attempt=1 exit=75 time=1.0s\n"
	    "@chute 2026-11-30T04:10:41.000Z attempt=2 start\n"
	    "@chute 2026-11-30T04:10:42.000Z attempt=2 exit=3 time=1.0s\n");

	ck_assert_int_eq(ji.attempts, 2);
	ck_assert_str_eq(ji.last, "exit=3");
}
END_TEST

START_TEST(test_interrupted_attempts_are_not_counted)
{
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n"
	    "@chute T attempt=1 interrupted by shutdown (signal=TERM; not counted)\n"
	    "@chute T attempt=1 start\n");

	ck_assert_int_eq(ji.attempts, 1);
}
END_TEST

START_TEST(test_retry_resets_the_count)
{
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n@chute T attempt=1 exit=1 time=1s\n"
	    "@chute T reset by `chute retry` (uid 0)\n");

	ck_assert_int_eq(ji.attempts, 0);
	ck_assert_str_eq(ji.last, "");
}
END_TEST

START_TEST(test_handler_output_cannot_pass_for_our_lines)
{
	/* Only lines that start with the marker count; a handler line
	 * that merely contains it, mid-line, is output. */
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n"
	    "my output @chute T attempt=9 start\n"
	    "no newline at the end");

	ck_assert_int_eq(ji.attempts, 1);
}
END_TEST

START_TEST(test_cancel_and_timeout_are_the_last_outcome)
{
	struct joblog_info ji = parse(
	    "@chute T attempt=1 start\n@chute T attempt=1 timeout signal=TERM time=5s\n");

	ck_assert_str_eq(ji.last, "timeout signal=TERM");
	ji = parse("@chute T attempt=1 start\n@chute T attempt=1 exit=0 time=1s\n"
	    "@chute T cancelled: moved out of cur/ while its handler ran\n");
	ck_assert_str_eq(ji.last, "cancelled");
}
END_TEST

START_TEST(test_our_line_starts_on_a_new_line_after_unterminated_output)
{
	char buf[256] = "";
	int fd, rfd;

	/* The handler's stdout is this very descriptor. */
	fd = joblog_open(&t_spool, "j");
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, "no newline", 10), 10);
	ck_assert_int_eq(joblog_fnote(fd, "attempt=1 exit=0 time=1ms"), 0);
	close(fd);
	rfd = openat(t_spool.dir[ST_LOG], "j", O_RDONLY | O_CLOEXEC);
	ck_assert_int_gt(read(rfd, buf, sizeof(buf) - 1), 0);
	close(rfd);
	ck_assert(strncmp(buf, "no newline\n@chute ", 18) == 0);
}
END_TEST

/* Names in the directory name under dir, "." and ".." aside. */
static int
entries_in(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	int n = 0;
	DIR *d;

	ck_assert_int_ne(fd, -1);
	ck_assert_ptr_nonnull(d = fdopendir(fd));
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return n;
}

/* Names in log/.pool/. */
static int
pool_entries(void)
{
	return entries_in(t_spool.dir[ST_LOG], ".pool");
}

static off_t
log_size(const char *id)
{
	struct stat st;

	if (fstatat(t_spool.dir[ST_LOG], id, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	ck_assert(S_ISREG(st.st_mode));
	return st.st_size;
}

START_TEST(test_a_pool_log_becomes_log_id_by_link)
{
	struct joblog_pool p;
	struct stat a, b;
	int fd;

	ck_assert_int_eq(joblog_pool_open(&p, &t_spool), 0);
	p.want = 2;
	ck_assert_int_eq(joblog_pool_fill(&p, &t_spool), 0);
	ck_assert_int_eq(p.n, 2);
	/* Unnamed: no directory holds them yet. */
	ck_assert_int_eq(pool_entries(), 0);
	ck_assert_int_eq(fstat(p.fd[1], &a), 0);
	ck_assert_int_eq(a.st_nlink, 0);
	fd = joblog_pool_take(&p, &t_spool, "j");
	ck_assert_int_ne(fd, -1);
	/* The same inode, now log/j: no file was created for it. */
	ck_assert_int_eq(fstatat(t_spool.dir[ST_LOG], "j", &b, 0), 0);
	ck_assert(a.st_ino == b.st_ino && b.st_size == 0 && b.st_nlink == 1);
	ck_assert_int_eq(p.n, 1);
	ck_assert_int_eq(joblog_fnote(fd, "attempt=1 start"), 0);
	ck_assert_int_gt(log_size("j"), 0);
	close(fd);
	joblog_pool_close(&p);
	ck_assert_int_eq(pool_entries(), 0);
}
END_TEST

START_TEST(test_a_pool_log_never_replaces_an_existing_log)
{
	struct joblog_pool p;
	off_t before;
	int fd;

	fd = joblog_open(&t_spool, "j");
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(joblog_fnote(fd, "attempt=1 start"), 0);
	close(fd);
	before = log_size("j");
	ck_assert_int_eq(joblog_pool_open(&p, &t_spool), 0);
	ck_assert_int_eq(joblog_pool_fill(&p, &t_spool), 0);
	ck_assert_int_eq(p.n, LOGPOOL_MIN);
	errno = 0;
	ck_assert_int_eq(joblog_pool_take(&p, &t_spool, "j"), -1);
	ck_assert_int_eq(errno, EEXIST);
	/* log/j is as it was, and the pool keeps its file for the next job. */
	ck_assert_int_eq(log_size("j"), before);
	ck_assert_int_eq(p.n, LOGPOOL_MIN);
	joblog_pool_close(&p);
}
END_TEST

/* log/id's text, NUL-terminated, into buf. */
static void
log_text(const char *id, char *buf, size_t len)
{
	int fd = openat(t_spool.dir[ST_LOG], id, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	ck_assert_int_ne(fd, -1);
	n = read(fd, buf, len - 1);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	close(fd);
}

static nlink_t
log_links(const char *id)
{
	struct stat st;

	ck_assert_int_eq(fstatat(t_spool.dir[ST_LOG], id, &st,
	    AT_SYMLINK_NOFOLLOW), 0);
	return st.st_nlink;
}

START_TEST(test_a_batch_line_is_one_file_linked_under_each_id)
{
	struct joblog_pool p;
	char a[256], b[256];
	struct stat sa, sb;

	ck_assert_int_eq(joblog_pool_open(&p, &t_spool), 0);
	ck_assert_int_eq(joblog_pool_link(&p, &t_spool, "a", "forwarded to q"), 0);
	ck_assert_int_eq(joblog_pool_link(&p, &t_spool, "b", "forwarded to q"), 0);
	ck_assert_int_eq(fstatat(t_spool.dir[ST_LOG], "a", &sa, 0), 0);
	ck_assert_int_eq(fstatat(t_spool.dir[ST_LOG], "b", &sb, 0), 0);
	ck_assert(sa.st_ino == sb.st_ino);
	ck_assert_int_eq(sa.st_nlink, 3);	/* a, b and the pool's name */
	log_text("a", a, sizeof(a));
	ck_assert_ptr_nonnull(strstr(a, "@chute "));
	ck_assert_ptr_nonnull(strstr(a, " forwarded to q\n"));
	/* Another text: another file; an existing log is never replaced. */
	ck_assert_int_eq(joblog_pool_link(&p, &t_spool, "c", "other"), 0);
	ck_assert_int_eq(log_links("a"), 2);
	errno = 0;
	ck_assert_int_eq(joblog_pool_link(&p, &t_spool, "a", "other"), -1);
	ck_assert_int_eq(errno, EEXIST);
	log_text("b", b, sizeof(b));
	ck_assert_str_eq(a, b);
	joblog_pool_unnote(&p);
	ck_assert_int_eq(pool_entries(), 0);
	ck_assert_int_eq(log_links("c"), 1);
	joblog_pool_close(&p);
}
END_TEST

START_TEST(test_a_shared_log_is_copied_before_a_line_is_appended)
{
	char a[256], b[256];
	int fd;

	fd = joblog_open(&t_spool, "a");
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(joblog_fnote(fd, "forwarded to q"), 0);
	close(fd);
	ck_assert_int_eq(linkat(t_spool.dir[ST_LOG], "a", t_spool.dir[ST_LOG],
	    "b", 0), 0);
	ck_assert_int_eq(joblog_note(&t_spool, "a", "reset by test"), 0);
	log_text("a", a, sizeof(a));
	log_text("b", b, sizeof(b));
	/* a has both lines; b only the one it shared, and each its own file. */
	ck_assert_ptr_nonnull(strstr(a, "forwarded to q\n"));
	ck_assert_ptr_nonnull(strstr(a, "reset by test\n"));
	ck_assert_ptr_nonnull(strstr(b, "forwarded to q\n"));
	ck_assert_ptr_null(strstr(b, "reset by test"));
	ck_assert_int_eq(log_links("a"), 1);
	ck_assert_int_eq(log_links("b"), 1);
	/* Nothing is left behind in tmp/. */
	ck_assert_int_eq(entries_in(t_spool.dir[ST_TMP], "."), 0);
}
END_TEST

START_TEST(test_a_dead_owners_pool_is_emptied_and_an_empty_pool_says_so)
{
	struct joblog_pool p;
	int fd;

	/* What an owner killed with -9 leaves: its spare logs, unnamed, vanish. */
	ck_assert_int_eq(joblog_pool_open(&p, &t_spool), 0);
	p.want = 3;
	ck_assert_int_eq(joblog_pool_fill(&p, &t_spool), 0);
	ck_assert_int_eq(p.n, 3);
	for (int i = 0; i < p.n; i++)
		close(p.fd[i]);
	/* A killed forward's batch line is a named file there. */
	fd = openat(p.dir, "n7", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ne(fd, -1);
	close(fd);
	close(p.dir);
	ck_assert_int_eq(pool_entries(), 1);
	ck_assert_int_eq(joblog_pool_open(&p, &t_spool), 0);
	ck_assert_int_eq(pool_entries(), 0);
	errno = 0;
	ck_assert_int_eq(joblog_pool_take(&p, &t_spool, "j"), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(log_size("j"), -1);
	joblog_pool_close(&p);
}
END_TEST

START_TEST(test_no_pool_where_log_pool_is_not_a_directory)
{
	struct joblog_pool p;
	int fd;

	fd = openat(t_spool.dir[ST_LOG], ".pool", O_WRONLY | O_CREAT |
	    O_CLOEXEC, 0600);
	ck_assert_int_ne(fd, -1);
	close(fd);
	errno = 0;
	ck_assert_int_eq(joblog_pool_open(&p, &t_spool), -1);
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert_int_eq(joblog_pool_fill(&p, &t_spool), 0);
	ck_assert_int_eq(joblog_pool_take(&p, &t_spool, "j"), -1);
	ck_assert_int_eq(errno, EAGAIN);
	joblog_pool_close(&p);
}
END_TEST

Suite *
joblog_suite(void)
{
	Suite *s = suite_create("joblog");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_each_start_line_is_one_attempt);
	tcase_add_test(tc, test_interrupted_attempts_are_not_counted);
	tcase_add_test(tc, test_retry_resets_the_count);
	tcase_add_test(tc, test_handler_output_cannot_pass_for_our_lines);
	tcase_add_test(tc, test_cancel_and_timeout_are_the_last_outcome);
	suite_add_tcase(s, tc);
	/* Writing a job's log needs a spool on disk. */
	tc = tcase_create("file");
	tcase_add_checked_fixture(tc, t_spool_setup, t_spool_teardown);
	tcase_add_test(tc, test_our_line_starts_on_a_new_line_after_unterminated_output);
	tcase_add_test(tc, test_a_pool_log_becomes_log_id_by_link);
	tcase_add_test(tc, test_a_pool_log_never_replaces_an_existing_log);
	tcase_add_test(tc, test_a_batch_line_is_one_file_linked_under_each_id);
	tcase_add_test(tc, test_a_shared_log_is_copied_before_a_line_is_appended);
	tcase_add_test(tc, test_a_dead_owners_pool_is_emptied_and_an_empty_pool_says_so);
	tcase_add_test(tc, test_no_pool_where_log_pool_is_not_a_directory);
	suite_add_tcase(s, tc);
	return s;
}
