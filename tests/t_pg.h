/*
 * t_pg.h: a real, throwaway PostgreSQL server for the tests, driven through
 * the server's own programs (initdb, pg_ctl) and psql; no libpq here.  It
 * listens on no TCP address, only on a Unix socket in its own directory,
 * so any number of test runs may each have one at the same moment.
 *
 * One cluster serves a whole test case: start it from an unchecked fixture
 * (it runs in the runner, once), give each test its own database.
 *
 *	static void
 *	pg_up(void)
 *	{
 *		ck_assert_msg(t_pg_start() == 0, "%s", t_pg_skip_reason());
 *	}
 *	...
 *	tcase_add_unchecked_fixture(tc, pg_up, t_pg_stop);
 *	...
 *	char *uri = t_pg_newdb();
 *	ck_assert_int_eq(t_pg_sql(uri, "SELECT 1", out, sizeof out), 0);
 *
 * and build the suite only when t_pg_skip() says the server is there.
 *
 * On disk, TMPDIR (or /tmp, if TMPDIR is long or the server's user cannot
 * reach it) holds chute-pg-PID-XXXXXX, PID being the process that called
 * t_pg_start(), owned by the user the server runs as:
 *
 *	data/		the cluster: a copy (cp -a) of the template's
 *	.s.PGSQL.PORT	the socket (unix_socket_directories is here)
 *	server.log	the server's log (pg_ctl -l), quoted on failure
 *	watchdog.pid	the process that stops the server and removes this
 *			directory if the process that started it dies first
 *
 * and one more chute-pg-PID-XXXXXX, the template: data/ made by initdb at
 * the first t_pg_start() of a process, and watchdog.pid.  Copying it takes
 * a fraction of initdb's time.  It stays until that process and every test
 * process Check forked from it have ended; then its watchdog removes it.
 *
 * initdb refuses to run as root: as root, initdb, pg_ctl and the server run
 * as the `postgres` user (Debian's postgresql package creates it) and psql
 * connects as the superuser `postgres`; otherwise they run as we do and the
 * superuser is named after us.  Either way the URIs name the user.
 *
 * Authentication on the socket: trust, except for the role chute_pw
 * (password 'secret', LOGIN, no other rights), which needs scram-sha-256.
 *
 * Settings: fsync, full_page_writes and synchronous_commit stay on, so that
 * `pg_ctl restart -m immediate` loses nothing that was committed;
 * shared_buffers is small; max_connections is 100.
 *
 * Failing the test: the functions that say "fails the test" call
 * ck_abort_msg() with what went wrong and the tail of server.log.  Never
 * call them from an unchecked teardown: in fork mode that runs without a
 * net and a failure there exits the runner.  t_pg_stop() never fails.
 */
#ifndef T_PG_H
#define T_PG_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>

#define T_PG_SQL_MS	30000	/* a psql must finish within this */
#define T_PG_CTL_S	60	/* pg_ctl -t: start, stop, restart */
#define T_PG_URIMAX	1536	/* the longest URI t_pg_uri() makes */

/*
 * Can the tests have a server?  Finds the server's programs (initdb,
 * pg_ctl, postgres, psql) in $CHUTE_TEST_PG_BINDIR if set, else in
 * `pg_config --bindir`, else in the highest /usr/lib/postgresql/VERSION/bin
 * that has initdb; as root, also needs the `postgres` user.  0, or -1 with
 * the reason in t_pg_skip_reason().  Starts nothing; cheap after the first
 * call.
 */
int	 t_pg_available(void);

/* Why there is no server, as one line without a newline; "" when there is. */
const char *t_pg_skip_reason(void);

/*
 * For a suite's constructor: true when the PostgreSQL tests must be skipped.
 * The first call in a process that finds no server prints one line to
 * stderr saying why ("check_chute: skipping the PostgreSQL tests: ...");
 * later calls print nothing.
 */
bool	 t_pg_skip(void);

/*
 * Make a fresh cluster under mkdtemp(3), start it and wait (pg_ctl -w, at
 * most T_PG_CTL_S seconds) until it accepts connections on its socket; then
 * create the role chute_pw.  Clears away first the clusters of earlier runs
 * whose starter and watchdog both died.  0; or -1 when t_pg_available()
 * says there is no server (nothing made).  Fails the test on anything else
 * (initdb or the start failing), after removing what it made.  One cluster
 * per process at a time: t_pg_stop() before starting another.
 */
int	 t_pg_start(void);

/*
 * Stop the server (pg_ctl stop -m fast; SIGQUIT, then SIGKILL, to whatever
 * of it is left), remove its directory, and reap the watchdog.  Nothing to
 * do when there is no cluster; safe after t_pg_down(), and after a test
 * process restarted the server.  Never fails the test: it says on stderr
 * what it could not do.
 */
void	 t_pg_stop(void);

/* The cluster's directory (absolute), "" when there is none. */
const char *t_pg_dir(void);

/* The server's port: it names the socket; nothing listens on TCP. */
int	 t_pg_port(void);

/*
 * A libpq URI for dbname as the superuser, by the socket:
 * "postgresql:///DB?host=DIR&port=N&user=postgres" (values percent-encoded).
 * In one of a ring of 8 static buffers of T_PG_URIMAX: good for a few per
 * statement.
 */
const char *t_pg_uri(const char *dbname);

/*
 * The same as user, with password in the URI unless it is NULL:
 * "postgresql://USER:PASSWORD@/DB?host=DIR&port=N".  Same ring as t_pg_uri().
 */
const char *t_pg_uri_as(const char *dbname, const char *user,
	    const char *password);

/*
 * The database a URI of t_pg_uri() or t_pg_uri_as() names, in a static
 * buffer; "" if it names none.
 */
const char *t_pg_dbname(const char *uri);

/*
 * CREATE DATABASE with a name no other database of this run has
 * ("t_PID_N"), owned by the superuser.  Its URI, malloc'd: the caller frees
 * it (or lets the test's process end).  If the server is down, because an
 * earlier test ended between t_pg_down() and t_pg_up(), it is started
 * again first (and a line on stderr says so).  Fails the test on error.
 */
char	*t_pg_newdb(void);

/*
 * Run sql through `psql -X -A -t -q -w -v ON_ERROR_STOP=1 -d uri -c sql`
 * (several statements in sql are one implicit transaction; no password
 * prompt: PGPASSWORD or the URI gives it).  Its stdout, without trailing
 * whitespace, goes into out (truncated to outlen; out may be NULL), its
 * stderr to t_pg_error().  psql's exit status: 0 done, 1 an SQL error,
 * 2 no connection (or a lost one), 3 an error in a script; 128+N for death
 * by signal N; -1 when psql could not be run or did not finish within
 * T_PG_SQL_MS (it is killed; t_pg_error() says which).  Never fails the test.
 */
int	 t_pg_sql(const char *uri, const char *sql, char *out,
	    size_t outlen);

/*
 * The stderr of the last psql, pg_ctl or initdb the harness ran (its last
 * 4 KiB, trailing whitespace removed), or what stopped it from running.
 */
const char *t_pg_error(void);

/*
 * Start psql -c sql in the background (same options as t_pg_sql(); its
 * output goes to /dev/null): a session that holds a lock, sleeps, or is
 * about to be terminated.  It dies with the calling process.  Its pid;
 * fails the test if it cannot be started.
 */
pid_t	 t_pg_session(const char *uri, const char *sql);

/*
 * Wait up to timeout_ms for the session pid to end: psql's exit status as
 * for t_pg_sql(); -1 when it did not end in time (then it is killed), or
 * when pid is no child of ours (already reaped).
 */
int	 t_pg_session_wait(pid_t pid, int timeout_ms);

/*
 * A crash and its recovery: pg_ctl restart -m immediate -w.  Every server
 * process is killed at once, nothing is flushed beyond what each commit
 * already made durable, and the server is back, recovered from its WAL and
 * accepting connections, when this returns.  Fails the test on error.
 */
void	 t_pg_restart_immediate(void);

/*
 * pg_terminate_backend() of every session but ours in dbname (NULL: any
 * database) whose application_name is LIKE application_name_like (NULL:
 * any), then wait (at most 10 s) until those backends are gone.  How many
 * it terminated.  Fails the test on error.
 */
int	 t_pg_kill_backends(const char *dbname,
	    const char *application_name_like);

/*
 * The server goes away as in a crash (pg_ctl stop -m immediate) and stays
 * away: its socket is gone, so connecting fails at once.  Fails the test
 * on error.
 */
void	 t_pg_down(void);

/*
 * Start it again after t_pg_down(), with the same data, socket and port,
 * and wait until it accepts connections.  Fails the test on error.
 */
void	 t_pg_up(void);

/*
 * The pid of the running postmaster (from data/postmaster.pid), or 0 when
 * the server is not running.
 */
pid_t	 t_pg_postmaster(void);

/*
 * How many live processes have their working directory in dir/data: the
 * postmaster and every process it forked (backends, checkpointer, ...),
 * even after dir was removed.  For checking that a stopped server left
 * nothing behind.
 */
int	 t_pg_count_procs(const char *dir);

#endif
