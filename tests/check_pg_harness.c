/*
 * check_pg_harness.c: the throwaway PostgreSQL server of t_pg.h does what
 * the PostgreSQL queue's tests will lean on: separate databases, committed
 * data through a crash, a server that goes away and comes back, terminated
 * sessions, a password that is checked, and nothing left behind.  Without
 * the server's programs the suite is empty and one line says why.
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"
#include "t_pg.h"

/* Unchecked fixture: one cluster for the whole test case. */
static void
pg_setup(void)
{
	ck_assert_msg(t_pg_start() == 0, "t_pg_start: %s", t_pg_skip_reason());
}

/* sql on uri must succeed; its output, in one of a ring of 4 buffers. */
static const char *
sql_ok(const char *uri, const char *sql)
{
	static char ring[4][4096];
	static int next;
	char *out = ring[next++ % 4];
	int status = t_pg_sql(uri, sql, out, sizeof ring[0]);

	ck_assert_msg(status == 0, "psql exited %d on \"%s\": %s", status, sql,
	    t_pg_error());
	return out;
}

/* uri with one more query parameter (static). */
static const char *
with_param(const char *uri, const char *param)
{
	static char buf[T_PG_URIMAX + 256];

	snprintf(buf, sizeof buf, "%s&%s", uri, param);
	return buf;
}

/* Poll every 10 ms until cond holds; fail with the message at the deadline. */
#define WAIT_FOR(cond, timeout_ms, ...) do {				\
	int64_t deadline_ = t_mono() + (timeout_ms);			\
	while (!(cond)) {						\
		ck_assert_msg(t_mono() < deadline_, __VA_ARGS__);	\
		t_nap();						\
	}								\
} while (0)

/* How many sessions of db with that application_name are running a query. */
static int
active_sessions(const char *uri, const char *app)
{
	char sql[512];

	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity"
	    " WHERE datname = current_database() AND application_name = '%s'"
	    " AND state = 'active'", app);
	return atoi(sql_ok(uri, sql));
}

/* ------------------------------------------------------------------ */
/* One cluster, many databases                                        */
/* ------------------------------------------------------------------ */

START_TEST(test_each_new_database_is_apart_from_the_others)
{
	char *a = t_pg_newdb(), *b = t_pg_newdb();

	ck_assert_str_ne(a, b);
	sql_ok(a, "CREATE TABLE jobs (id text PRIMARY KEY);"
	    " INSERT INTO jobs VALUES ('in-a')");
	sql_ok(b, "CREATE TABLE jobs (id text PRIMARY KEY);"
	    " INSERT INTO jobs VALUES ('in-b')");
	ck_assert_str_eq(sql_ok(a, "SELECT string_agg(id, ',') FROM jobs"), "in-a");
	ck_assert_str_eq(sql_ok(b, "SELECT string_agg(id, ',') FROM jobs"), "in-b");
	ck_assert_str_eq(sql_ok(a, "SELECT current_database()"), t_pg_dbname(a));
	ck_assert_str_eq(sql_ok(b, "SELECT current_database()"), t_pg_dbname(b));
	free(a);
	free(b);
}
END_TEST

START_TEST(test_sql_gives_rows_one_a_line_and_an_error_gives_status_1)
{
	char *db = t_pg_newdb();
	char out[256];
	int status;

	ck_assert_str_eq(sql_ok(db, "SELECT g, g * 2 FROM generate_series(1, 3) g"),
	    "1|2\n2|4\n3|6");
	status = t_pg_sql(db, "SELECT no_such_column", out, sizeof out);
	ck_assert_msg(status == 1, "an SQL error: psql exited %d", status);
	ck_assert_msg(strstr(t_pg_error(), "no_such_column\" does not exist") != NULL,
	    "the server's message is not in t_pg_error(): %s", t_pg_error());
	/* Statements of one call are one transaction: all or nothing. */
	sql_ok(db, "CREATE TABLE t (n int)");
	status = t_pg_sql(db, "INSERT INTO t VALUES (1); SELECT 1 / 0", NULL, 0);
	ck_assert_msg(status == 1, "division by zero: psql exited %d", status);
	ck_assert_str_eq(sql_ok(db, "SELECT count(*) FROM t"), "0");
	free(db);
}
END_TEST

START_TEST(test_the_server_is_on_its_socket_only_and_keeps_every_durability_setting)
{
	const char *uri = t_pg_uri("postgres");

	ck_assert_str_eq(sql_ok(uri, "SHOW listen_addresses"), "");
	ck_assert_str_eq(sql_ok(uri, "SHOW unix_socket_directories"), t_pg_dir());
	ck_assert_int_eq(atoi(sql_ok(uri, "SHOW port")), t_pg_port());
	ck_assert_str_eq(sql_ok(uri, "SELECT current_setting('fsync') || ' '"
	    " || current_setting('full_page_writes') || ' '"
	    " || current_setting('synchronous_commit')"), "on on on");
	ck_assert_int_eq(atoi(sql_ok(uri, "SHOW max_connections")), 100);
	ck_assert_msg(t_exists(P("%s/.s.PGSQL.%d", t_pg_dir(), t_pg_port())),
	    "no socket .s.PGSQL.%d in %s", t_pg_port(), t_pg_dir());
}
END_TEST

/* ------------------------------------------------------------------ */
/* Crashes, outages, terminated sessions                              */
/* ------------------------------------------------------------------ */

START_TEST(test_committed_rows_survive_an_immediate_restart)
{
	char *db = t_pg_newdb(), *log, before[64];
	pid_t pm = t_pg_postmaster();

	ck_assert_msg(pm > 0, "no postmaster.pid in %s", t_pg_dir());
	sql_ok(db, "CREATE TABLE t (n int)");
	/* 500 separate commits, the last just before the crash. */
	for (int i = 0; i < 5; i++)
		sql_ok(db, "DO $$ BEGIN FOR i IN 1..100 LOOP"
		    " INSERT INTO t VALUES (i); COMMIT; END LOOP; END $$");
	snprintf(before, sizeof before, "%s",
	    sql_ok(db, "SELECT pg_postmaster_start_time()"));

	t_pg_restart_immediate();

	ck_assert_str_eq(sql_ok(db, "SELECT count(*) FROM t"), "500");
	ck_assert_str_ne(sql_ok(db, "SELECT pg_postmaster_start_time()"), before);
	ck_assert_msg(t_pg_postmaster() > 0 && t_pg_postmaster() != pm,
	    "postmaster %ld still there, or none after the restart", (long)pm);
	log = t_slurp(P("%s/server.log", t_pg_dir()));
	ck_assert_msg(log != NULL && strstr(log, "automatic recovery in progress"),
	    "server.log does not show a crash recovery:\n%s", t_snip(log));
	free(log);
	free(db);
}
END_TEST

START_TEST(test_a_server_that_is_down_refuses_at_once_and_comes_back_with_its_data)
{
	char *db = t_pg_newdb();
	int64_t t0;
	int status;

	sql_ok(db, "CREATE TABLE t (n int); INSERT INTO t VALUES (42)");
	t_pg_down();
	ck_assert_msg(t_pg_postmaster() == 0, "a postmaster runs after t_pg_down");
	t0 = t_mono();
	status = t_pg_sql(db, "SELECT 1", NULL, 0);
	ck_assert_msg(status == 2, "psql on a server that is down exited %d: %s",
	    status, t_pg_error());
	ck_assert_msg(t_mono() - t0 < 5000, "refusing took %lld ms",
	    (long long)(t_mono() - t0));
	ck_assert_msg(strstr(t_pg_error(), "No such file or directory") != NULL,
	    "expected the socket to be gone: %s", t_pg_error());

	t_pg_up();

	/* The same URI: same socket directory, same port. */
	ck_assert_str_eq(sql_ok(db, "SELECT n FROM t"), "42");
	free(db);
}
END_TEST

START_TEST(test_terminating_backends_ends_only_the_matching_sessions)
{
	char *db = t_pg_newdb();
	char *other = t_pg_newdb();
	pid_t victim, bystander;
	int status;

	victim = t_pg_session(with_param(db, "application_name=chute_victim"),
	    "SELECT pg_sleep(60)");
	bystander = t_pg_session(with_param(db, "application_name=bystander"),
	    "SELECT pg_sleep(60)");
	WAIT_FOR(active_sessions(db, "chute_victim") == 1 &&
	    active_sessions(db, "bystander") == 1, 10000,
	    "both sessions running pg_sleep within 10 s");

	ck_assert_int_eq(t_pg_kill_backends(t_pg_dbname(other), NULL), 0);
	ck_assert_int_eq(t_pg_kill_backends(t_pg_dbname(db), "chute_vic%"), 1);

	status = t_pg_session_wait(victim, 10000);
	ck_assert_msg(status == 2, "the terminated session's psql exited %d"
	    " (2: connection lost; -1: still running after 10 s)", status);
	ck_assert_int_eq(active_sessions(db, "chute_victim"), 0);
	ck_assert_int_eq(active_sessions(db, "bystander"), 1);
	ck_assert_msg(waitpid(bystander, NULL, WNOHANG) == 0,
	    "the bystander's psql ended");

	ck_assert_int_eq(t_pg_kill_backends(t_pg_dbname(db), NULL), 1);
	ck_assert_int_eq(t_pg_session_wait(bystander, 10000), 2);
	free(db);
	free(other);
}
END_TEST

START_TEST(test_chute_pw_needs_its_password_and_the_superuser_none)
{
	char *db = t_pg_newdb();
	const char *pw = t_pg_uri_as(t_pg_dbname(db), "chute_pw", NULL);
	int status;

	unsetenv("PGPASSWORD");
	status = t_pg_sql(pw, "SELECT 1", NULL, 0);
	ck_assert_msg(status == 2 && strstr(t_pg_error(), "no password supplied"),
	    "chute_pw without a password: psql exited %d: %s", status,
	    t_pg_error());

	setenv("PGPASSWORD", "not-the-secret", 1);
	status = t_pg_sql(pw, "SELECT 1", NULL, 0);
	ck_assert_msg(status == 2 && strstr(t_pg_error(),
	    "password authentication failed for user \"chute_pw\""),
	    "chute_pw with a wrong password: psql exited %d: %s", status,
	    t_pg_error());

	setenv("PGPASSWORD", "secret", 1);
	ck_assert_str_eq(sql_ok(pw, "SELECT current_user"), "chute_pw");
	unsetenv("PGPASSWORD");

	/* The password in the URI works the same way. */
	status = t_pg_sql(t_pg_uri_as(t_pg_dbname(db), "chute_pw", "wrong"),
	    "SELECT 1", NULL, 0);
	ck_assert_msg(status == 2, "a wrong password in the URI: psql exited %d",
	    status);
	ck_assert_str_eq(sql_ok(t_pg_uri_as(t_pg_dbname(db), "chute_pw",
	    "secret"), "SELECT current_user"), "chute_pw");

	ck_assert_str_eq(sql_ok(db, "SELECT rolpassword LIKE 'SCRAM-SHA-256$%'"
	    " FROM pg_authid WHERE rolname = 'chute_pw'"), "t");
	ck_assert_str_eq(sql_ok(db, "SELECT rolsuper FROM pg_roles"
	    " WHERE rolname = current_user"), "t");
	free(db);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Start and stop: nothing left behind                                */
/* ------------------------------------------------------------------ */

/* The pid in DIR/watchdog.pid, or 0. */
static pid_t
watchdog_of(const char *dir)
{
	char *text = t_slurp(P("%s/watchdog.pid", dir));
	pid_t pid = text != NULL ? (pid_t)atol(text) : 0;

	free(text);
	return pid;
}

START_TEST(test_stop_leaves_no_server_process_and_no_directory_behind)
{
	char dir[PATH_MAX];
	pid_t session, watchdog;
	int n;

	ck_assert_int_eq(t_pg_start(), 0);
	snprintf(dir, sizeof dir, "%s", t_pg_dir());
	watchdog = watchdog_of(dir);
	ck_assert_msg(watchdog > 0, "no watchdog.pid in %s", dir);
	session = t_pg_session(with_param(t_pg_uri("postgres"),
	    "application_name=sleeper"), "SELECT pg_sleep(60)");
	WAIT_FOR(active_sessions(t_pg_uri("postgres"), "sleeper") == 1, 10000,
	    "a session running pg_sleep within 10 s");
	/* The postmaster, the session's backend, checkpointer, walwriter... */
	n = t_pg_count_procs(dir);
	ck_assert_msg(n >= 3, "only %d server processes work in %s/data", n, dir);

	t_pg_stop();

	ck_assert_int_eq(t_pg_count_procs(dir), 0);
	ck_assert_msg(!t_exists(dir), "%s is still there after t_pg_stop", dir);
	ck_assert_str_eq(t_pg_dir(), "");
	ck_assert_msg(kill(watchdog, 0) == -1 && errno == ESRCH,
	    "the watchdog %ld is still there", (long)watchdog);
	ck_assert_msg(t_pg_session_wait(session, 10000) != -1,
	    "the session's psql still runs after the server stopped");
	t_pg_stop();		/* a second stop is harmless */
}
END_TEST

/*
 * This test's own TMPDIR, in base: the sweep of another run on this machine
 * must not take the clusters this test abandons on purpose.  Mode 0755, so
 * that the server's user can reach its clusters in it.
 */
static void
private_tmpdir(char *base, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, len, "%s/chute-pg-harness.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	ck_assert_msg(mkdtemp(base) != NULL && chmod(base, 0755) == 0,
	    "mkdtemp %s: %s", base, strerror(errno));
	setenv("TMPDIR", base, 1);
}

/*
 * A new empty file in base for what a watchdog or a sweep says on stderr;
 * its descriptor (O_CLOEXEC), its path in path.
 */
static int
stderr_file(const char *base, char *path, size_t len)
{
	int fd;

	ck_assert_msg(snprintf(path, len, "%s/stderr.XXXXXX", base) < (int)len,
	    "%s: too long", base);
	ck_assert_msg((fd = mkostemp(path, O_CLOEXEC)) != -1, "mkostemp %s: %s",
	    path, strerror(errno));
	return fd;
}

/* Does the file at path hold text? */
static bool
file_says(const char *path, const char *text)
{
	char *all = t_slurp(path);
	bool yes = all != NULL && strstr(all, text) != NULL;

	free(all);
	return yes;
}

/*
 * Fork a process that starts a cluster, with stderr to errfd (which its
 * watchdog inherits), and writes the cluster's directory into dir; if
 * kill_watchdog, it kills the cluster's watchdog first.  It then ends
 * without t_pg_stop(): the cluster's server keeps running.
 */
static void
start_and_abandon(char *dir, size_t len, int errfd, bool kill_watchdog)
{
	int p[2], status;
	pid_t pid;
	ssize_t n;

	ck_assert_msg(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	ck_assert_msg((pid = fork()) != -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		pid_t wd;

		if (dup2(errfd, 2) == -1 || t_pg_start() != 0)
			_exit(2);
		wd = watchdog_of(t_pg_dir());
		if (kill_watchdog && (kill(wd, SIGKILL) == -1 ||
		    waitpid(wd, NULL, 0) != wd))
			_exit(3);
		if (write(p[1], t_pg_dir(), strlen(t_pg_dir())) == -1)
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], dir, len - 1);
	close(p[0]);
	dir[n > 0 ? n : 0] = '\0';
	ck_assert_msg(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0, "the process that starts a cluster failed"
	    " (status %#x)", status);
	ck_assert_msg(dir[0] == '/' && t_pg_count_procs(dir) > 0,
	    "no server runs in '%s'", dir);
}

START_TEST(test_the_watchdog_removes_a_cluster_whose_starter_died)
{
	char base[PATH_MAX], dir[PATH_MAX], err[PATH_MAX];
	int fd;

	private_tmpdir(base, sizeof base);
	fd = stderr_file(base, err, sizeof err);
	start_and_abandon(dir, sizeof dir, fd, false);
	WAIT_FOR(t_pg_count_procs(dir) == 0 && !t_exists(dir) &&
	    file_says(err, "ended without t_pg_stop()"), 30000,
	    "the watchdog stopping the server, removing %s and saying so"
	    " within 30 s (%d processes left, directory %s, it said: %s)", dir,
	    t_pg_count_procs(dir), t_exists(dir) ? "there" : "gone",
	    t_snip(t_slurp(err)));
	close(fd);
	unlink(err);
	ck_assert_msg(rmdir(base) == 0, "rmdir %s: %s", base, strerror(errno));
}
END_TEST

START_TEST(test_the_next_start_removes_a_cluster_left_by_a_dead_run)
{
	char base[PATH_MAX], dir[PATH_MAX], err[PATH_MAX];
	int fd, saved;

	private_tmpdir(base, sizeof base);
	fd = stderr_file(base, err, sizeof err);
	start_and_abandon(dir, sizeof dir, fd, true);
	ck_assert_msg(t_exists(dir), "%s went away by itself", dir);

	/* What the sweep says goes to the file, not to the run's output. */
	ck_assert_msg((saved = fcntl(2, F_DUPFD_CLOEXEC, 3)) != -1 &&
	    dup2(fd, 2) == 2, "redirecting stderr: %s", strerror(errno));
	ck_assert_int_eq(t_pg_start(), 0);
	dup2(saved, 2);
	close(saved);

	ck_assert_int_eq(t_pg_count_procs(dir), 0);
	ck_assert_msg(!t_exists(dir), "t_pg_start left %s behind", dir);
	ck_assert_msg(file_says(err, "left by dead process"),
	    "the sweep did not say what it removed");
	t_pg_stop();
	close(fd);
	unlink(err);
	ck_assert_msg(rmdir(base) == 0, "rmdir %s: %s", base, strerror(errno));
}
END_TEST

Suite *
pg_harness_suite(void)
{
	Suite *s = suite_create("pg_harness");
	TCase *tc;

	if (t_pg_skip())
		return s;

	tc = tcase_create("cluster");
	tcase_add_unchecked_fixture(tc, pg_setup, t_pg_stop);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_each_new_database_is_apart_from_the_others);
	tcase_add_test(tc, test_sql_gives_rows_one_a_line_and_an_error_gives_status_1);
	tcase_add_test(tc, test_the_server_is_on_its_socket_only_and_keeps_every_durability_setting);
	tcase_add_test(tc, test_committed_rows_survive_an_immediate_restart);
	tcase_add_test(tc, test_a_server_that_is_down_refuses_at_once_and_comes_back_with_its_data);
	tcase_add_test(tc, test_terminating_backends_ends_only_the_matching_sessions);
	tcase_add_test(tc, test_chute_pw_needs_its_password_and_the_superuser_none);
	suite_add_tcase(s, tc);

	tc = tcase_create("lifecycle");
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_stop_leaves_no_server_process_and_no_directory_behind);
	tcase_add_test(tc, test_the_watchdog_removes_a_cluster_whose_starter_died);
	tcase_add_test(tc, test_the_next_start_removes_a_cluster_left_by_a_dead_run);
	suite_add_tcase(s, tc);
	return s;
}
