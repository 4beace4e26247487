/*
 * check_notify.c: chute as a daemon, seen from outside: what `chute run`
 * tells systemd on a $NOTIFY_SOCKET the test binds and reads (READY=1,
 * STATUS=, STOPPING=1, WATCHDOG=1), what it sends to syslog with --syslog
 * (read on a /dev/log of the test's own, in a mount namespace), and
 * --if-unowned under cron.  The real binary, $CHUTE_BIN, throughout.
 */
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "base/util.h"
#include "suites.h"
#include "t_cli.h"
#include "t_pg.h"

#define NMSG	512

/* The test's datagram socket and every message read from it, in order. */
static struct {
	int	 fd;
	int	 n;
	char	 msg[NMSG][512];
} D = { .fd = -1 };

/* Bind a datagram socket at path ("@name": abstract) to read from. */
static void
d_bind(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(path);
	socklen_t salen = offsetof(struct sockaddr_un, sun_path) + len +
	    (path[0] == '@' ? 0 : 1);

	EXPECT(len < sizeof(sa.sun_path), "%s: too long for a socket", path);
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	D.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	EXPECT(D.fd != -1 && bind(D.fd, (struct sockaddr *)&sa, salen) == 0,
	    "bind %s: %s", path, strerror(errno));
	D.n = 0;
}

/* Read one datagram into D.msg within ms; false at the deadline. */
static bool
d_read(int ms)
{
	struct pollfd p = { .fd = D.fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return false;
	n = recv(D.fd, D.msg[D.n % NMSG], sizeof(D.msg[0]) - 1, 0);
	EXPECT(n >= 0, "recv: %s", strerror(errno));
	D.msg[D.n % NMSG][n] = '\0';
	D.n++;
	return true;
}

/* Everything read so far, for failure messages (static, truncated). */
static const char *
d_all(void)
{
	static char buf[3000];

	buf[0] = '\0';
	for (int i = D.n > 20 ? D.n - 20 : 0; i < D.n; i++) {
		strlcat(buf, D.msg[i % NMSG], sizeof(buf));
		strlcat(buf, " | ", sizeof(buf));
	}
	return buf;
}

/*
 * Read until a message containing want arrives, from index from on;
 * fail after timeout_ms.  Its index.
 */
static int
d_await(const char *want, int from, int timeout_ms)
{
	int64_t deadline = t_mono() + timeout_ms;

	for (int i = from;; i++) {
		while (i >= D.n) {
			int left = (int)(deadline - t_mono());
			EXPECT(left > 0 && d_read(left), "no '%s' on the socket "
			    "within %d ms; got: %s", want, timeout_ms, d_all());
		}
		if (strstr(D.msg[i % NMSG], want) != NULL)
			return i;
	}
}

/* Messages containing what among those read. */
static int
d_count(const char *what)
{
	int n = 0;

	for (int i = D.n > NMSG ? D.n - NMSG : 0; i < D.n; i++)
		n += strstr(D.msg[i % NMSG], what) != NULL;
	return n;
}

static void
d_teardown(void)
{
	if (D.fd != -1)
		close(D.fd);
	D.fd = -1;
	t_cli_teardown();
}

/* ------------------------------------------------------------------ */
/* sd_notify                                                          */
/* ------------------------------------------------------------------ */

/* A handler that keeps its environment in root/env.ID (whole, by rename). */
static const char *
h_env(void)
{
	return t_handler("h_env", "env > \"$R/env.$CHUTE_ID.part\" && "
	    "mv \"$R/env.$CHUTE_ID.part\" \"$R/env.$CHUTE_ID\"\n");
}

START_TEST(test_ready_status_and_stopping_arrive_in_that_order)
{
	int ready, status, idle, stopping, code;
	char *env;
	pid_t pid;

	d_bind(RP("notify"));
	t_submit_as("job1", "one\n");
	setenv("NOTIFY_SOCKET", RP("notify"), 1);
	pid = OWNER(QUICK, "--", h_env());
	unsetenv("NOTIFY_SOCKET");
	ready = d_await("READY=1", 0, 10000);
	status = d_await("STATUS=", ready, 10000);
	EXPECT(ready == 0, "READY=1 was not the first message: %s", d_all());
	EXPECT(t_await("job1", 10000) == 0, "job1 did not finish in done/");
	/* The counts follow the spool: nothing left, nothing running. */
	idle = d_await("STATUS=running=0 queued=0 deferred=0", status, 10000);
	env = t_slurp(RP("env.job1"));
	EXPECT(env != NULL && strstr(env, "CHUTE_ID=job1") != NULL,
	    "the handler left no environment: %s", t_snip(env));
	EXPECT(strstr(env, "NOTIFY_SOCKET") == NULL, "the handler inherited "
	    "NOTIFY_SOCKET: %s", t_snip(env));
	free(env);
	EXPECT(d_count("STOPPING=1") == 0, "STOPPING=1 before any signal: %s",
	    d_all());
	code = t_stop(pid);
	EXPECT(code == 0, "owner exited %d after SIGTERM: %s", code,
	    t_log_of(pid));
	stopping = d_await("STOPPING=1", idle, 10000);
	EXPECT(ready < status && status < stopping && d_count("READY=1") == 1,
	    "expected READY=1, STATUS=..., STOPPING=1 in that order: %s",
	    d_all());
	EXPECT(d_count("WATCHDOG=1") == 0, "pings without WATCHDOG_USEC: %s",
	    d_all());
}
END_TEST

START_TEST(test_watchdog_pings_come_from_the_loop_when_watchdog_usec_is_set)
{
	pid_t pid;
	int first;

	d_bind(RP("notify"));
	setenv("NOTIFY_SOCKET", RP("notify"), 1);
	setenv("WATCHDOG_USEC", "200000", 1);	/* a ping every 100 ms */
	pid = OWNER(QUICK, "--", h_env());
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	first = d_await("WATCHDOG=1", d_await("READY=1", 0, 10000), 10000);
	/* An idle owner still pings: its poll(2) wakes for the watchdog. */
	first = d_await("WATCHDOG=1", first + 1, 10000);
	d_await("WATCHDOG=1", first + 1, 10000);
	EXPECT(t_stop(pid) == 0, "owner did not stop cleanly: %s",
	    t_log_of(pid));
	d_await("STOPPING=1", 0, 10000);
}
END_TEST

START_TEST(test_watchdog_meant_for_another_pid_is_not_pinged)
{
	int status;
	pid_t pid;

	d_bind(RP("notify"));
	setenv("NOTIFY_SOCKET", RP("notify"), 1);
	setenv("WATCHDOG_USEC", "1000", 1);
	setenv("WATCHDOG_PID", "1", 1);
	pid = OWNER(QUICK, "--", h_env());
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	/* The first STATUS= comes from the loop's first turn, with any ping. */
	status = d_await("STATUS=", d_await("READY=1", 0, 10000), 10000);
	EXPECT(t_stop(pid) == 0, "owner did not stop cleanly: %s",
	    t_log_of(pid));
	d_await("STOPPING=1", status, 10000);
	EXPECT(d_count("WATCHDOG=1") == 0, "pinged a watchdog meant for pid "
	    "1: %s", d_all());
}
END_TEST

START_TEST(test_abstract_notify_socket_is_reached)
{
	char name[64];
	pid_t pid;

	snprintf(name, sizeof(name), "@chute-check-notify-%ld", (long)getpid());
	d_bind(name);
	setenv("NOTIFY_SOCKET", name, 1);
	pid = OWNER(QUICK, "--", h_env());
	unsetenv("NOTIFY_SOCKET");
	d_await("READY=1", 0, 10000);
	EXPECT(t_stop(pid) == 0, "owner did not stop cleanly: %s",
	    t_log_of(pid));
	d_await("STOPPING=1", 0, 10000);
}
END_TEST

START_TEST(test_unreachable_notify_socket_is_said_once_and_jobs_still_run)
{
	char *log;
	int code;
	pid_t pid;

	t_submit_as("job1", "one\n");
	setenv("NOTIFY_SOCKET", RP("nobody-listens"), 1);
	pid = OWNER("--drain", QUICK, "--", h_env());
	unsetenv("NOTIFY_SOCKET");
	code = t_reap(pid, 30000, "chute run --drain");
	log = t_slurp(t_proc_of(pid)->log);
	EXPECT(code == 0, "run --drain exited %d: %s", code, t_snip(log));
	EXPECT(t_exists(SP("done", "job1")), "job1 is not in done/");
	EXPECT(log != NULL && strstr(log, "notify: NOTIFY_SOCKET=") != NULL &&
	    strstr(strstr(log, "notify: ") + 1, "notify: ") == NULL,
	    "expected one line about the notify socket: %s", t_snip(log));
	free(log);
}
END_TEST

/* ------------------------------------------------------------------ */
/* --if-unowned                                                       */
/* ------------------------------------------------------------------ */

START_TEST(test_if_unowned_exits_0_silently_when_another_owner_runs)
{
	pid_t owner;
	int code;

	owner = OWNER(QUICK, "--", h_env());
	t_await_lock(owner, 10000);
	code = CHUTE("run", T.spool, "--if-unowned", "--drain", "--", "true");
	EXPECT(code == 0 && T.out[0] == '\0' && T.err[0] == '\0',
	    "run --if-unowned beside an owner: exit %d, stdout '%s', stderr "
	    "'%s'; want 0 and nothing", code, T.out, T.err);
	/* Without it, the same run is still refused. */
	code = CHUTE("run", T.spool, "--drain", "--", "true");
	EXPECT(code == 75 && strstr(T.err, "owned by pid") != NULL,
	    "run beside an owner: exit %d, stderr '%s'", code, T.err);
	EXPECT(t_stop(owner) == 0, "owner did not stop cleanly");
}
END_TEST

START_TEST(test_if_unowned_runs_the_spool_when_no_one_owns_it)
{
	int code;

	t_submit_as("job1", "one\n");
	code = CHUTE("run", T.spool, "--if-unowned", "--drain", QUICK, "--",
	    h_env());
	EXPECT(code == 0, "run --if-unowned --drain exited %d: %s", code, T.err);
	EXPECT(t_exists(SP("done", "job1")), "job1 is not in done/: %s", T.err);
}
END_TEST

START_TEST(test_if_unowned_is_refused_for_a_database_queue_and_with_wait_lock)
{
	int code;

	code = CHUTE("run", "postgresql://nobody@localhost/none",
	    "--if-unowned", "--", "true");
	EXPECT(code == 64 && strstr(T.err, "no owner") != NULL,
	    "run URL --if-unowned: exit %d, stderr '%s'; want 64 and why",
	    code, T.err);
	code = CHUTE("run", T.spool, "--if-unowned", "--wait-lock", "--",
	    "true");
	EXPECT(code == 64, "--if-unowned --wait-lock: exit %d: %s", code, T.err);
}
END_TEST

/* ------------------------------------------------------------------ */
/* --syslog                                                           */
/* ------------------------------------------------------------------ */

/*
 * A /dev/log of our own: in a mount namespace of this test process (Check
 * forks one per test) /dev becomes a tmpfs holding the few devices chute
 * and the harness open, bound from the real /dev, and our socket.  The
 * real /dev is bound aside only for that moment, and detached before
 * anything can fail: the test's directory is removed with rm -r.
 * Returns NULL, or why it cannot be done (the test is then skipped).
 */
static const char *
own_dev_log(void)
{
	static const char *const devs[] = { "null", "zero", "random", "urandom" };
	static char why[256];
	const char *old = RP("olddev");
	bool ok = true;
	int fd;

	/* Without a fork per test the runner itself would move. */
	if ((getenv("CK_FORK") != NULL && strcmp(getenv("CK_FORK"), "no") == 0))
		return "CK_FORK=no: no process of its own to move";
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1) {
		snprintf(why, sizeof(why), "no mount namespace: %s",
		    strerror(errno));
		return why;
	}
	if (mkdir(old, 0700) == -1 ||
	    mount("/dev", old, NULL, MS_BIND | MS_REC, NULL) == -1)
		return "cannot bind /dev aside";
	ok = mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755") == 0;
	for (size_t i = 0; ok && i < sizeof(devs) / sizeof(devs[0]); i++) {
		const char *to = P("/dev/%s", devs[i]);
		ok = (fd = open(to, O_CREAT | O_WRONLY | O_CLOEXEC, 0666)) != -1 &&
		    close(fd) == 0 &&
		    mount(P("%s/%s", old, devs[i]), to, NULL, MS_BIND, NULL) == 0;
	}
	snprintf(why, sizeof(why), "cannot set up /dev: %s", strerror(errno));
	if (umount2(old, MNT_DETACH) == -1 || rmdir(old) == -1) {
		/* Never leave the real /dev under the test's directory. */
		fprintf(stderr, "check_notify: %s still bound: %s\n", old,
		    strerror(errno));
		abort();
	}
	return ok ? NULL : why;
}

START_TEST(test_syslog_sends_the_owners_lines_with_ident_pid_facility_and_priority)
{
	const char *why = own_dev_log();
	char *log, want[64];
	int code, i;
	pid_t pid;

	if (why != NULL) {
		fprintf(stderr, "check_notify: skipped the --syslog test: %s\n",
		    why);
		return;
	}
	d_bind("/dev/log");
	t_submit_as("job1", "one\n");
	EXPECT(symlink("/etc/passwd", SP("new", "link")) == 0, "symlink: %s",
	    strerror(errno));
	pid = OWNER("--drain", "--syslog=local3", QUICK, "--", h_env());
	code = t_reap(pid, 30000, "chute run --drain --syslog");
	log = t_slurp(t_proc_of(pid)->log);
	EXPECT(code == 0, "run --syslog exited %d: %s", code, t_snip(log));
	EXPECT(log != NULL && log[0] == '\0', "with --syslog the owner still "
	    "wrote on stderr: %s", t_snip(log));
	free(log);
	/* <PRI>: facility local3 (19) * 8 + the priority. */
	snprintf(want, sizeof(want), "chute[%ld]: ", (long)pid);
	i = d_await("job=job1 new->cur", 0, 5000);
	EXPECT(strncmp(D.msg[i % NMSG], "<158>", 5) == 0 &&
	    strstr(D.msg[i % NMSG], want) != NULL, "a job line, want <158> "
	    "(local3.info) and '%s': %s", want, D.msg[i % NMSG]);
	i = d_await("job=link new->failed rejected", 0, 5000);
	EXPECT(strncmp(D.msg[i % NMSG], "<156>", 5) == 0, "a rejected file, "
	    "want <156> (local3.warning): %s", D.msg[i % NMSG]);
	d_await("exiting", 0, 5000);
}
END_TEST

START_TEST(test_syslog_facility_must_be_known)
{
	int code = CHUTE("run", T.spool, "--syslog=nosuch", "--", "true");

	EXPECT(code == 64 && strstr(T.err, "--syslog=nosuch") != NULL,
	    "--syslog=nosuch: exit %d, stderr '%s'", code, T.err);
}
END_TEST

/* --syslog's facility names, as logger(1) and syslog.conf spell them. */
START_TEST(test_say_facility_knows_the_syslog_names)
{
	ck_assert_int_eq(say_facility("local3"), LOG_LOCAL3);
	ck_assert_int_eq(say_facility("daemon"), LOG_DAEMON);
	ck_assert_int_eq(say_facility("nosuch"), -1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A worker of a PostgreSQL queue, against a real server (t_pg.h)      */
/* ------------------------------------------------------------------ */

static char *uri;		/* the test's database */

static void
cluster_up(void)
{
	ck_assert_msg(t_pg_start() == 0, "%s", t_pg_skip_reason());
}

static void
pg_setup(void)
{
	t_cli_setup();
	uri = t_pg_newdb();
	EXPECT(CHUTE("init", uri) == 0, "chute init: %s", T.err);
}

static void
pg_teardown(void)
{
	d_teardown();
	free(uri);
}

START_TEST(test_a_worker_sends_ready_status_and_stopping)
{
	char *env;
	int ready, idle;
	pid_t pid;

	t_write(RP("in"), "one\n");
	EXPECT(CHUTE_IN(RP("in"), "submit", uri, "--id", "job1") == 0,
	    "submit: %s", T.err);
	d_bind(RP("notify"));
	setenv("NOTIFY_SOCKET", RP("notify"), 1);
	pid = t_owner(NULL, uri, QUICK, "--", h_env(), (const char *)NULL);
	unsetenv("NOTIFY_SOCKET");
	ready = d_await("READY=1", 0, 20000);
	EXPECT(ready == 0, "READY=1 was not the first message: %s", d_all());
	WAIT_UNTIL(t_exists(RP("env.job1")), 20000, "job1's handler to run");
	env = t_slurp(RP("env.job1"));
	EXPECT(env != NULL, "env.job1 vanished");
	EXPECT(strstr(env, "NOTIFY_SOCKET") == NULL, "the worker's handler "
	    "inherited NOTIFY_SOCKET: %s", t_snip(env));
	free(env);
	idle = d_await("STATUS=running=0", ready, 20000);
	EXPECT(t_stop(pid) == 0, "worker did not stop cleanly: %s",
	    t_log_of(pid));
	d_await("STOPPING=1", idle, 10000);
}
END_TEST

/* Decided: ready once the loop runs, so that systemd waits for nothing. */
START_TEST(test_a_worker_is_ready_while_the_database_is_down)
{
	pid_t pid;

	t_pg_down();
	d_bind(RP("notify"));
	setenv("NOTIFY_SOCKET", RP("notify"), 1);
	pid = t_owner(NULL, uri, QUICK, "--", h_env(), (const char *)NULL);
	unsetenv("NOTIFY_SOCKET");
	d_await("READY=1", 0, 20000);
	EXPECT(t_alive(pid), "the worker exited: %s", t_log_of(pid));
	t_pg_up();
	EXPECT(t_stop(pid) == 0, "worker did not stop cleanly: %s",
	    t_log_of(pid));
	d_await("STOPPING=1", 0, 10000);
}
END_TEST

Suite *
notify_suite(void)
{
	Suite *s = suite_create("notify");
	TCase *tc;

	tc = tcase_create("say");
	tcase_add_test(tc, test_say_facility_knows_the_syslog_names);
	suite_add_tcase(s, tc);

	if (getenv("CHUTE_UNIT_ONLY") != NULL)
		return s;

	tc = t_tcase(t_cli_setup, d_teardown, "sd_notify", 60);
	tcase_add_test(tc, test_ready_status_and_stopping_arrive_in_that_order);
	tcase_add_test(tc, test_watchdog_pings_come_from_the_loop_when_watchdog_usec_is_set);
	tcase_add_test(tc, test_watchdog_meant_for_another_pid_is_not_pinged);
	tcase_add_test(tc, test_abstract_notify_socket_is_reached);
	tcase_add_test(tc, test_unreachable_notify_socket_is_said_once_and_jobs_still_run);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, d_teardown, "if-unowned", 60);
	tcase_add_test(tc, test_if_unowned_exits_0_silently_when_another_owner_runs);
	tcase_add_test(tc, test_if_unowned_runs_the_spool_when_no_one_owns_it);
	tcase_add_test(tc, test_if_unowned_is_refused_for_a_database_queue_and_with_wait_lock);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, d_teardown, "syslog", 60);
	tcase_add_test(tc, test_syslog_sends_the_owners_lines_with_ident_pid_facility_and_priority);
	tcase_add_test(tc, test_syslog_facility_must_be_known);
	suite_add_tcase(s, tc);

	if (t_pg_skip())
		return s;
	tc = t_tcase(pg_setup, pg_teardown, "sd_notify-pgsql", 120);
	tcase_add_unchecked_fixture(tc, cluster_up, t_pg_stop);
	tcase_add_test(tc, test_a_worker_sends_ready_status_and_stopping);
	tcase_add_test(tc, test_a_worker_is_ready_while_the_database_is_down);
	suite_add_tcase(s, tc);
	return s;
}
