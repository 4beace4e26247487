/*
 * check_recurring.c: recurring jobs.  tick_suite: the arithmetic of
 * base/tick.c (the grid, the catch-up modes, a clock set back, IDs).
 * recurring_suite: `chute schedule` and `chute tick` end to end, on a
 * spool and on a real PostgreSQL server (t_pg.c): three schedulers killed
 * and restarted at random through more than 60 ticks make exactly one job
 * per tick, none missing; the catch-up modes after every scheduler was
 * down, and clocks that jump, under faketime; a plan left by a killed
 * pass finished once; bad input refused with nothing touched.
 */
#include <sys/stat.h>
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/tick.h"
#include "suites.h"
#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"

#define MIN	60000LL
/* 2026-12-06 10:00:00 UTC, the faketime tests' morning. */
#define T10	1796551200000LL

/* ---- the arithmetic ---- */

START_TEST(test_ticks_sit_on_the_grid_from_the_epoch)
{
	struct tick_sched s = { .every = MIN, .offset = 15000 };

	ck_assert_int_eq(tick_floor(&s, T10), T10 - MIN + 15000);
	ck_assert_int_eq(tick_next(&s, T10), T10 + 15000);
	ck_assert_int_eq(tick_next(&s, T10 + 15000), T10 + 15000 + MIN);
	ck_assert_int_eq(tick_floor(&s, T10 + 15000), T10 + 15000);
	/* Before the epoch too: a clock set very far back. */
	ck_assert_int_eq(tick_floor(&s, -1), -MIN + 15000);
}
END_TEST

START_TEST(test_each_mode_makes_what_it_says_of_the_due_ticks)
{
	struct tick_sched s = { .every = MIN };
	msec_t out[TICK_BATCH];
	long long missed;

	/* On time: one due tick, whatever the mode. */
	for (int m = CATCHUP_SKIP; m <= CATCHUP_ALL; m++) {
		s.mode = (enum catchup)m;
		ck_assert_int_eq(tick_plan(&s, T10, T10 + MIN + 5, out, 10,
		    &missed), 1);
		ck_assert_int_eq(out[0], T10 + MIN);
		ck_assert_int_eq(missed, 0);
	}
	/* Five due (10:01 to 10:05). */
	s.mode = CATCHUP_SKIP;
	ck_assert_int_eq(tick_plan(&s, T10, T10 + 5 * MIN + 30000, out, 10,
	    &missed), 1);
	ck_assert_int_eq(out[0], T10 + 5 * MIN);
	ck_assert_int_eq(missed, 4);
	s.mode = CATCHUP_ONCE;
	ck_assert_int_eq(tick_plan(&s, T10, T10 + 5 * MIN + 30000, out, 10,
	    &missed), 2);
	ck_assert_int_eq(out[0], T10 + MIN);
	ck_assert_int_eq(out[1], T10 + 5 * MIN);
	ck_assert_int_eq(missed, 3);
	s.mode = CATCHUP_ALL;
	ck_assert_int_eq(tick_plan(&s, T10, T10 + 5 * MIN + 30000, out, 10,
	    &missed), 5);
	ck_assert_int_eq(out[4], T10 + 5 * MIN);
	/* More than a pass makes: the first max, the rest next time. */
	ck_assert_int_eq(tick_plan(&s, T10, T10 + 5 * MIN, out, 3, &missed), 3);
	ck_assert_int_eq(out[2], T10 + 3 * MIN);
}
END_TEST

START_TEST(test_a_clock_set_back_makes_nothing_until_it_passes_the_last_tick)
{
	struct tick_sched s = { .every = MIN, .mode = CATCHUP_ALL };
	msec_t out[4];
	long long missed;

	ck_assert_int_eq(tick_plan(&s, T10, T10 - 3600000, out, 4, &missed), 0);
	ck_assert_int_eq(tick_plan(&s, T10, T10 + 59999, out, 4, &missed), 0);
	ck_assert_int_eq(tick_plan(&s, T10, T10, out, 4, &missed), 0);
	ck_assert_int_eq(tick_plan(&s, T10, T10 + MIN, out, 4, &missed), 1);
}
END_TEST

START_TEST(test_a_tick_s_id_names_its_schedule_and_time_and_reads_back)
{
	char id[TICK_ID_MAX + 1], name[SCHED_NAME_MAX + 1];
	const char *why;
	msec_t t;

	tick_id("nightly", T10 + 250, id, sizeof(id));
	ck_assert_str_eq(id, "nightly@20261206T100000.250Z");
	ck_assert_int_eq(tick_of_id("nightly", id, &t), 0);
	ck_assert_int_eq(t, T10 + 250);
	ck_assert_int_eq(tick_of_id("night", id, &t), -1);
	ck_assert_int_eq(tick_of_id("nightly", "nightly@20261206T100000.25Z",
	    &t), -1);
	memset(name, 'a', SCHED_NAME_MAX);
	name[SCHED_NAME_MAX] = '\0';
	tick_id(name, T10, id, sizeof(id));
	ck_assert_int_eq(tick_of_id(name, id, &t), 0);
	ck_assert(sched_name_valid(name, &why));
	ck_assert(!sched_name_valid("", &why));
	ck_assert(!sched_name_valid("-x", &why));
	ck_assert(!sched_name_valid("a/b", &why));
	ck_assert(!sched_name_valid("a.b", &why));
	ck_assert(!sched_name_valid("a@b", &why));
	ck_assert(!sched_name_valid("a,p=1", &why));
}
END_TEST

START_TEST(test_a_schedule_that_cannot_fire_is_refused)
{
	struct tick_sched s = { .every = 0 };
	const char *why;

	ck_assert_int_eq(tick_sched_check(&s, &why), -1);
	s.every = 49;
	ck_assert_int_eq(tick_sched_check(&s, &why), -1);
	s.every = MIN;
	s.offset = MIN;
	ck_assert_int_eq(tick_sched_check(&s, &why), -1);
	s.offset = 0;
	ck_assert_int_eq(tick_sched_check(&s, &why), 0);
	s.every = TICK_EVERY_MAX + 1;
	ck_assert_int_eq(tick_sched_check(&s, &why), -1);
}
END_TEST

Suite *
tick_suite(void)
{
	Suite *s = suite_create("tick");
	TCase *tc = tcase_create("tick");

	tcase_add_test(tc, test_ticks_sit_on_the_grid_from_the_epoch);
	tcase_add_test(tc, test_each_mode_makes_what_it_says_of_the_due_ticks);
	tcase_add_test(tc,
	    test_a_clock_set_back_makes_nothing_until_it_passes_the_last_tick);
	tcase_add_test(tc,
	    test_a_tick_s_id_names_its_schedule_and_time_and_reads_back);
	tcase_add_test(tc, test_a_schedule_that_cannot_fire_is_refused);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- end to end ---- */

#define EVERY_MS	200	/* the killing tests' interval */
#define TICKS		60	/* at least this many ticks covered */

/*
 * `faketime -f WHEN chute ARGS...` (WHEN: "@DATE TIME", a clock started
 * there, or "+5s", "-1d": ours moved): its exit code; output in T.out, T.err.
 */
static int
fake(const char *when, const char *first, ...)
{
	static int n;
	const char *argv[32] = { "/usr/bin/faketime", "-f", when, T.bin };
	char *out = strdup(RP(P("fake.%d.out", ++n)));
	char *err = strdup(RP(P("fake.%d.err", n)));
	int argc = 4, code;
	va_list ap;
	char *text;

	/* faketime reads a date in the local zone: ours is UTC. */
	setenv("TZ", "UTC0", 1);
	va_start(ap, first);
	for (const char *a = first; a != NULL && argc < 31;
	    a = va_arg(ap, const char *))
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	code = t_reap(t_spawn(argv, NULL, out, err, NULL), T_CMD_MS,
	    "faketime chute");
	text = t_slurp(out);
	snprintf(T.out, sizeof(T.out), "%s", text ? text : "");
	free(text);
	text = t_slurp(err);
	snprintf(T.err, sizeof(T.err), "%s", text ? text : "");
	free(text);
	free(out);
	free(err);
	return code;
}
#define FAKE(when, ...)	fake((when), __VA_ARGS__, (const char *)NULL)

/* `chute tick STORE --follow`, its output appended to tickI.log. */
static pid_t
ticker(const char *store, int i)
{
	const char *argv[] = { T.bin, "tick", store, "--follow", NULL };
	char *log = RP(P("tick%d.log", i));

	return t_spawn(argv, NULL, log, log, NULL);
}

/*
 * The ticks of name's jobs among the words of ids, sorted, into t (at
 * most max); their count.  A word that is no tick of name fails the test.
 */
static int
ticks_of(const char *name, char *ids, msec_t *t, int max)
{
	int n = 0;

	for (char *w = strtok(ids, " \n"); w != NULL; w = strtok(NULL, " \n")) {
		EXPECT(n < max, "more than %d jobs", max);
		EXPECT(tick_of_id(name, w, &t[n]) == 0, "%s: not a tick's ID", w);
		n++;
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			msec_t x = t[j];

			t[j] = t[j - 1];
			t[j - 1] = x;
		}
	return n;
}

/* Every tick from the first to the last, once: none twice, none missing. */
static void
expect_every_tick_once(const msec_t *t, int n, msec_t every)
{
	EXPECT(n > TICKS, "only %d ticks made", n);
	for (int i = 1; i < n; i++) {
		EXPECT(t[i] != t[i - 1], "tick %lld made twice", (long long)t[i]);
		EXPECT(t[i] == t[i - 1] + every, "ticks missing between %lld "
		    "and %lld", (long long)t[i - 1], (long long)t[i]);
	}
}

/* The IDs in a spool's state directory, space separated (static). */
static char *
ids_in(const char *state)
{
	static char buf[65536];
	struct dirent *e;
	DIR *d = opendir(P("%s/%s", T.spool, state));
	size_t len = 0;

	EXPECT(d != NULL, "opendir %s", state);
	buf[0] = '\0';
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && len + strlen(e->d_name) + 2 <
		    sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
			    "%s ", e->d_name);
	closedir(d);
	return buf;
}

/*
 * Three schedulers of store, one killed (-9) and started again after
 * every two new jobs (count() says how many there are), until more than
 * TICKS ticks are made; then all killed.  No sleep: each step waits for
 * the count to grow, with a deadline.
 */
static void
three_schedulers_killed_at_random(const char *store, long (*count)(void))
{
	pid_t p[3];
	long seen = count();
	unsigned seed = (unsigned)getpid();

	fprintf(stderr, "check_recurring: seed %u\n", seed);
	srand(seed);
	for (int i = 0; i < 3; i++)
		p[i] = ticker(store, i);
	while (seen <= TICKS + 2) {
		int k = rand() % 3;

		WAIT_UNTIL(count() >= seen + 2, 20000, "two more ticks' jobs "
		    "(%ld so far): %s", seen, t_log_of(p[k]));
		seen = count();
		/* Anywhere in its pass or its sleep: rand() chooses when too. */
		for (int spin = rand() % 20000; spin > 0; spin--)
			getpid();
		kill(p[k], SIGKILL);
		t_reap(p[k], 5000, "a killed scheduler");
		p[k] = ticker(store, k);
	}
	for (int i = 0; i < 3; i++) {
		kill(p[i], SIGKILL);
		t_reap(p[i], 5000, "a scheduler");
	}
	for (int i = 0; i < 3; i++) {
		char *log = t_slurp(RP(P("tick%d.log", i)));

		/* Not a word: no error, no tick found made, none missed. */
		EXPECT(log == NULL || strstr(log, "chute: ") == NULL,
		    "scheduler %d said: %s", i, t_snip(log));
		free(log);
	}
}

static long
spool_jobs(void)
{
	return t_count_state("new") + t_count_state("cur") +
	    t_count_state("done") + t_count_state("failed");
}

START_TEST(test_three_schedulers_killed_at_random_make_each_tick_once_on_a_spool)
{
	msec_t t[1000];
	char every[16], *all;
	pid_t owner;
	int n;

	snprintf(every, sizeof(every), "%dms", EVERY_MS);
	EXPECT(CHUTE("schedule", T.spool, "hb", "--every", every, "--catch-up",
	    "all", "--", "beat") == 0 && t_token(T.out, "declared"),
	    "declare: %s%s", T.out, T.err);
	owner = OWNER(QUICK, "-j", "4", "--", h_journal());
	three_schedulers_killed_at_random(T.spool, spool_jobs);
	/* A plan a killed pass left is finished by the next pass: this one. */
	EXPECT(CHUTE("tick", T.spool) == 0, "last pass: %s", T.err);
	WAIT_UNTIL(t_count_state("new") == 0 && t_count_state("cur") == 0,
	    20000, "the owner to run every tick's job");
	EXPECT(t_stop(owner) == 0, "owner");
	EXPECT(t_count_state("failed") == 0, "no job failed");
	all = strdup(ids_in("done"));
	n = ticks_of("hb", all, t, 1000);
	free(all);
	expect_every_tick_once(t, n, EVERY_MS);
	for (int i = 0; i < n; i++) {
		char id[TICK_ID_MAX + 1];

		tick_id("hb", t[i], id, sizeof(id));
		EXPECT(t_journal_count(id) == 1, "%s ran %d times", id,
		    t_journal_count(id));
	}
	EXPECT(t_entries(P("%s/schedules/hb", T.spool)) == 2, "only schedule "
	    "and last remain: %d entries", t_entries(P("%s/schedules/hb",
	    T.spool)));
}
END_TEST

/* Declared at 10:00:30 under faketime; the three modes side by side. */
static void
declare_three(void)
{
	const char *mode[3] = { "skip", "once", "all" };

	for (int i = 0; i < 3; i++)
		EXPECT(FAKE("@2026-12-06 10:00:30", "schedule", T.spool, mode[i],
		    "--every", "1m", "--catch-up", mode[i], "--", mode[i]) == 0,
		    "declare %s: %s", mode[i], T.err);
}

START_TEST(test_missed_ticks_follow_the_catch_up_mode_after_every_scheduler_was_down)
{
	declare_three();
	/* Every scheduler down from 10:00:30 to 10:05:30: five ticks due. */
	EXPECT(FAKE("@2026-12-06 10:05:30", "tick", T.spool) == 0, "tick: %s",
	    T.err);
	EXPECT(t_exists(SP("new", "skip@20261206T100500.000Z")) &&
	    !t_exists(SP("new", "skip@20261206T100100.000Z")) &&
	    strstr(T.err, "skip: 4 ticks from 2026-12-06T10:01:00.000Z missed"),
	    "skip: the latest only, the others said: %s", T.err);
	EXPECT(t_exists(SP("new", "once@20261206T100100.000Z")) &&
	    t_exists(SP("new", "once@20261206T100500.000Z")) &&
	    strstr(T.err, "once: 3 ticks"), "once: one catch-up run and the "
	    "latest: %s", T.err);
	for (int m = 1; m <= 5; m++)
		EXPECT(t_exists(SP("new", P("all@20261206T10%02d00.000Z", m))),
		    "all: 10:%02d made", m);
	EXPECT(t_count_state("new") == 1 + 2 + 5, "eight jobs, no more");
	/* The job's payload, and its mtime the tick (the order of new/). */
	EXPECT(strcmp(t_slurp(SP("new", "all@20261206T100200.000Z")), "all\n")
	    == 0, "the payload");
	EXPECT(t_mtime_ms(SP("new", "all@20261206T100200.000Z")) ==
	    T10 + 2 * MIN, "mtime is the tick");
	/* A second pass in the same minute: nothing more. */
	EXPECT(FAKE("@2026-12-06 10:05:50", "tick", T.spool) == 0 &&
	    t_count_state("new") == 8, "nothing twice: %s", T.err);
	EXPECT(FAKE("@2026-12-06 10:06:01", "schedule", T.spool) == 0 &&
	    strstr(T.out, "all every=1m0s offset=0ms catch-up=all "
	    "next=2026-12-06T10:06:00.000Z last=2026-12-06T10:05:00.000Z"),
	    "the list: %s", T.out);
}
END_TEST

START_TEST(test_a_clock_set_back_or_forward_makes_no_tick_twice)
{
	declare_three();
	EXPECT(FAKE("@2026-12-06 10:03:10", "tick", T.spool) == 0, "%s", T.err);
	EXPECT(t_count_state("new") == 1 + 2 + 3, "10:03: %d", t_count_state(
	    "new"));
	/* Set back an hour: nothing due, said; then back to 10:03:50. */
	EXPECT(FAKE("@2026-12-06 09:03:10", "tick", T.spool) == 0 &&
	    strstr(T.err, "is behind the last tick made") &&
	    t_count_state("new") == 6, "an hour back: %s", T.err);
	EXPECT(FAKE("@2026-12-06 10:03:50", "tick", T.spool) == 0 &&
	    t_count_state("new") == 6, "10:03 again: %s", T.err);
	/* Forward two hours: a jump is a gap, as if every scheduler was down. */
	EXPECT(FAKE("@2026-12-06 12:03:20", "tick", T.spool) == 0, "%s", T.err);
	EXPECT(t_exists(SP("new", "skip@20261206T120300.000Z")) &&
	    t_exists(SP("new", "once@20261206T100400.000Z")) &&
	    t_exists(SP("new", "once@20261206T120300.000Z")) &&
	    t_exists(SP("new", "all@20261206T120300.000Z")),
	    "two hours on: %s", T.err);
	EXPECT(t_count_state("new") == 6 + 1 + 2 + 120, "%d jobs",
	    t_count_state("new"));
	/* And back again: nothing. */
	EXPECT(FAKE("@2026-12-06 11:00:00", "tick", T.spool) == 0 &&
	    t_count_state("new") == 129, "back: %s", T.err);
}
END_TEST

START_TEST(test_a_plan_left_by_a_killed_pass_is_finished_once)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/schedules/once", T.spool);

	declare_three();
	EXPECT(FAKE("@2026-12-06 10:01:10", "tick", T.spool) == 0, "%s", T.err);
	/*
	 * Killed after its plan was renamed into place (10:02 and 10:03,
	 * staged), before last moved: the state of that crash, made by hand.
	 */
	EXPECT(mkdir(P("%s/plan", dir), 0700) == 0, "mkdir plan");
	t_write(P("%s/plan/once@20261206T100200.000Z", dir), "once\n");
	t_write(P("%s/plan/once@20261206T100300.000Z", dir), "once\n");
	/* And a half-written plan of another killed pass: nothing of it made. */
	EXPECT(mkdir(P("%s/.plan.999999", dir), 0700) == 0, "mkdir .plan");
	t_write(P("%s/.plan.999999/once@20261206T100400.000Z", dir), "once\n");
	EXPECT(FAKE("@2026-12-06 10:03:30", "tick", T.spool) == 0, "%s", T.err);
	EXPECT(t_exists(SP("new", "once@20261206T100200.000Z")) &&
	    t_exists(SP("new", "once@20261206T100300.000Z")) &&
	    !t_exists(SP("new", "once@20261206T100400.000Z")) &&
	    !t_exists(P("%s/plan", dir)) && !t_exists(P("%s/.plan.999999", dir)),
	    "the plan finished, the half one dropped");
	EXPECT(t_exists(SP("new", "once@20261206T100100.000Z")) &&
	    t_count_state("new") == 3 + 2 + 1 + 2, "once: 10:01, 10:02, 10:03;"
	    " skip 10:01 and 10:03; all 10:01 to 10:03: %d", t_count_state("new"));
	EXPECT(strcmp(t_slurp(P("%s/last", dir)), "1796551380000\n") == 0,
	    "last is 10:03");
	/* A job of a tick's ID that ran already is not made again. */
	EXPECT(rename(SP("new", "once@20261206T100100.000Z"),
	    SP("done", "once@20261206T100100.000Z")) == 0, "to done");
	EXPECT(mkdir(P("%s/plan", dir), 0700) == 0, "mkdir plan");
	t_write(P("%s/plan/once@20261206T100100.000Z", dir), "once\n");
	EXPECT(FAKE("@2026-12-06 10:03:40", "tick", T.spool) == 0 &&
	    strstr(T.err, "a job of this ID exists") &&
	    !t_exists(SP("new", "once@20261206T100100.000Z")), "not twice: %s",
	    T.err);
}
END_TEST

START_TEST(test_bad_schedules_are_refused_with_64_and_touch_nothing)
{
	static const char *const bad[][6] = {
		{ "bad/name", "--every", "1m", NULL },
		{ "-x", "--every", "1m", NULL },
		{ "a.b", "--every", "1m", NULL },
		{ "zero", "--every", "0", NULL },
		{ "fast", "--every", "10ms", NULL },
		{ "far", "--every", "1m", "--offset", "2m" },
		{ "long", "--every", "3661d", NULL },
		{ "noevery", NULL },
		{ "mode", "--every", "1m", "--catch-up", "twice" },
		{ "both", "--every", "1m", "--file", "/etc/hostname" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const *a = bad[i];

		EXPECT(CHUTE("schedule", T.spool, a[0], a[1], a[2], a[3], a[4],
		    i == 9 ? "--" : NULL, "w", NULL) == 64 && t_nlines(T.err) == 2 &&
		    T.out[0] == '\0', "%s: %s", a[0], T.err);
		EXPECT(!t_exists(P("%s/schedules", T.spool)), "%s: nothing made",
		    a[0]);
	}
	EXPECT(CHUTE("schedule", T.spool, "ok", "--every", "1m", "--bogus") ==
	    64 && CHUTE("tick", T.spool, "extra") == 64 &&
	    CHUTE("schedule", T.spool, "ok", "--remove", "--every", "1m") == 64,
	    "options: %s", T.err);
	EXPECT(CHUTE("schedule", RP("nospool"), "ok", "--every", "1m") != 0 &&
	    strstr(T.err, "nospool"), "no spool: %s", T.err);
	EXPECT(!t_exists(P("%s/schedules", T.spool)), "nothing made");
	EXPECT(CHUTE("schedule", T.spool, "gone", "--remove") == 1 &&
	    strstr(T.err, "no schedule gone"), "remove: %s", T.err);
	/* A declaration damaged by hand: said, skipped; the others tick. */
	EXPECT(CHUTE("schedule", T.spool, "good", "--every", "1s") == 0 &&
	    CHUTE("schedule", T.spool, "hurt", "--every", "1s") == 0,
	    "declare: %s", T.err);
	t_write(P("%s/schedules/hurt/schedule", T.spool), "every x\n\n");
	EXPECT(FAKE("+5s", "tick", T.spool) == 65 && strstr(T.err,
	    "hurt/schedule: a line chute did not write: skipped") &&
	    t_count_state("new") == 1, "damaged: %s", T.err);
	EXPECT(CHUTE("schedule", T.spool, "hurt", "--remove") == 0 &&
	    !t_exists(P("%s/schedules/hurt", T.spool)), "removed: %s", T.err);
	/* A directory made by hand under a name no schedule may have. */
	EXPECT(mkdir(P("%s/schedules/bad name", T.spool), 0700) == 0, "mkdir");
	EXPECT(FAKE("+10s", "tick", T.spool) == 65 && strstr(T.err,
	    "schedules/bad\\sname: a schedule's name is made of") &&
	    t_count_state("new") == 2, "a bad name: %s", T.err);
}
END_TEST

/* ---- the fleet ---- */

static long
queue_jobs(void)
{
	return t_sqln("SELECT count(*) FROM chute.jobs");
}

START_TEST(test_three_schedulers_killed_at_random_make_each_tick_once_on_a_queue)
{
	msec_t t[1000];
	char every[16], *ids;
	int n;

	snprintf(every, sizeof(every), "%dms", EVERY_MS);
	EXPECT(CHUTE("schedule", t_uri, "hb", "--every", every, "--catch-up",
	    "all", "--", "beat") == 0 && t_token(T.out, "declared"),
	    "declare: %s%s", T.out, T.err);
	three_schedulers_killed_at_random(t_uri, queue_jobs);
	ids = strdup(t_sql("SELECT string_agg(id, ' ') FROM chute.jobs"));
	n = ticks_of("hb", ids, t, 1000);
	free(ids);
	expect_every_tick_once(t, n, EVERY_MS);
	EXPECT(t_sqln("SELECT count(*) FROM chute.ticks k JOIN chute.jobs j"
	    " ON j.id = k.id") == n, "a row of chute.ticks per job");
	EXPECT(t_sqln("SELECT count(*) FROM chute.payloads WHERE body ="
	    " 'beat\n'::bytea") == n, "each with its payload");
}
END_TEST

START_TEST(test_a_queue_s_missed_ticks_follow_the_mode_by_the_server_s_clock)
{
	const char *mode[3] = { "skip", "once", "all" };

	for (int i = 0; i < 3; i++)
		EXPECT(CHUTE("schedule", t_uri, mode[i], "--every", "1h",
		    "--catch-up", mode[i]) == 0, "%s", T.err);
	/*
	 * Every scheduler down for five hours: the last tick 5 back (hours,
	 * so that the test does not straddle a tick but once in 36,000).
	 */
	t_sql("UPDATE chute.schedules SET last_ms = (extract(epoch FROM now())"
	    " * 1000)::bigint / 3600000 * 3600000 - 5 * 3600000");
	/* A host's clock a day wrong changes nothing: the server's rules. */
	EXPECT(FAKE("-1d", "tick", t_uri) == 0, "tick: %s", T.err);
	EXPECT(strstr(T.err, "skip: 4 ticks") && strstr(T.err, "once: 3 ticks"),
	    "said: %s", T.err);
	EXPECT(t_sqln("SELECT count(*) FROM chute.jobs WHERE id LIKE 'skip@%'")
	    == 1 && t_sqln("SELECT count(*) FROM chute.jobs WHERE id LIKE "
	    "'once@%'") == 2 && t_sqln("SELECT count(*) FROM chute.jobs WHERE "
	    "id LIKE 'all@%'") == 5, "1, 2 and 5 jobs");
	EXPECT(FAKE("+1d", "tick", t_uri) == 0 && t_sqln("SELECT count(*) FROM"
	    " chute.jobs") == 8, "a clock a day ahead: nothing more: %s", T.err);
	/* Set back (the server's view of it): nothing until it passes again. */
	t_sql("UPDATE chute.schedules SET last_ms = last_ms + 10 * 3600000");
	EXPECT(CHUTE("tick", t_uri) == 0 && t_sqln("SELECT count(*) FROM"
	    " chute.jobs") == 8, "behind the last tick: %s", T.err);
	EXPECT(CHUTE("schedule", t_uri) == 0 && strstr(T.out, "all every=1h0m "
	    "offset=0ms catch-up=all next="), "the list: %s", T.out);
	EXPECT(CHUTE("schedule", t_uri, "all", "--remove") == 0 &&
	    t_sqln("SELECT count(*) FROM chute.ticks WHERE name = 'all'") == 0,
	    "removed with its ticks: %s", T.err);
	EXPECT(CHUTE("schedule", t_uri, "x", "--every", "0") == 64 &&
	    t_sqln("SELECT count(*) FROM chute.schedules") == 2, "every 0: %s",
	    T.err);
}
END_TEST

Suite *
recurring_suite(void)
{
	Suite *s = suite_create("recurring");
	TCase *tc = t_tcase(t_cli_setup, t_cli_teardown, "spool", 120);

	tcase_add_test(tc,
	    test_three_schedulers_killed_at_random_make_each_tick_once_on_a_spool);
	tcase_add_test(tc,
	    test_missed_ticks_follow_the_catch_up_mode_after_every_scheduler_was_down);
	tcase_add_test(tc, test_a_clock_set_back_or_forward_makes_no_tick_twice);
	tcase_add_test(tc, test_a_plan_left_by_a_killed_pass_is_finished_once);
	tcase_add_test(tc, test_bad_schedules_are_refused_with_64_and_touch_nothing);
	suite_add_tcase(s, tc);
	if (t_pg_skip())
		return s;
	tc = t_tcase(t_fleet_setup, t_fleet_teardown, "fleet", 120);
	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
	tcase_add_test(tc,
	    test_three_schedulers_killed_at_random_make_each_tick_once_on_a_queue);
	tcase_add_test(tc,
	    test_a_queue_s_missed_ticks_follow_the_mode_by_the_server_s_clock);
	suite_add_tcase(s, tc);
	return s;
}
