/*
 * cmd_stats.c: `chute stats STORE [--prometheus]`: the jobs in each state,
 * the oldest queued job's age, the running jobs, and what the store adds
 * (a spool: the longest running attempt and its owner; a queue: its
 * workers), then the pause (and, as text, a retention set); as text, or
 * in Prometheus's format, which adds the keys in use (the store's limits:
 * at most PROM_KEYS of them).  Both end with the schedules (the store's
 * schedules op): each one's next tick and the last made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/listing.h"
#include "queue/store.h"
#include "queue/view.h"

/* The keys in use: at most PROM_KEYS of them, the most waiting first. */
static int
print_keys(FILE *f, const struct prom_stats *p, struct store *s)
{
	struct key_use *v;
	size_t n;
	int rc;

	if ((rc = keys_read(s, &v, &n)) == 0)
		prom_print_keys(f, p, v, n < PROM_KEYS ? n : PROM_KEYS, n);
	free(v);
	return rc;
}

/* The schedules: how many, each one's interval, next and last tick. */
static int
print_schedules(FILE *f, const struct prom_stats *p, struct store *s)
{
	struct top_sched *v;
	size_t n;
	int rc;

	if ((rc = scheds_read(s, &v, &n)) == 0)
		prom_print_schedules(f, p, v, n);
	free(v);
	return rc;
}

static int
print_prometheus(FILE *f, const struct store_stats *st, struct store *s)
{
	struct prom_stats p = { .label = s->ops->uri ? "queue" : "spool",
	    .name = s->ops->title(s) };
	int rc;

	for (int i = ST_FIRST; i < ST_END; i++)
		p.jobs[i] = (double)st->jobs[i];
	p.v[PM_OLDEST] = st->oldest_s;
	p.v[PM_RUNNING] = (double)st->running;
	p.v[PM_PAUSED] = st->pause.paused;
	p.v[PM_TIME] = st->now / 1000.0;
	p.has[PM_OLDEST] = p.has[PM_RUNNING] = true;
	p.has[PM_PAUSED] = p.has[PM_TIME] = true;
	if (st->has_longest) {
		p.v[PM_LONGEST] = st->longest_ms / 1000.0;
		p.has[PM_LONGEST] = true;
	}
	if (st->has_owner) {
		p.v[PM_OWNER_UP] = st->owner != 0;
		p.v[PM_OWNER_PID] = st->owner > 0 ? (double)st->owner : 0.0;
		p.has[PM_OWNER_UP] = p.has[PM_OWNER_PID] = true;
	}
	if (st->has_workers) {
		p.v[PM_CLAIMING] = (double)st->claiming;
		p.v[PM_CONNECTED] = (double)st->connected;
		p.v[PM_ALIVE] = (double)st->alive;
		p.has[PM_CLAIMING] = p.has[PM_CONNECTED] = true;
		p.has[PM_ALIVE] = true;
	}
	prom_print(f, &p);
	if ((rc = print_keys(f, &p, s)) != 0)
		return rc;
	return print_schedules(f, &p, s);
}

static void
print_text(const struct store_stats *s)
{
	char age[32] = "-", longest[32] = "-", text[256];

	for (int st = ST_FIRST; st < ST_END; st++)
		printf("%-17s %lld\n", state_names[st], s->jobs[st]);
	if (s->has_oldest)
		dur_format(s->oldest_ms, age, sizeof(age));
	printf("%-17s %s\n", "oldest_queued_age", age);
	printf("%-17s %lld\n", "running", s->running);
	if (s->has_longest) {
		if (s->running > 0)
			dur_format(s->longest_ms, longest, sizeof(longest));
		printf("%-17s %s\n", "longest_running", longest);
	}
	if (s->has_owner && s->owner == 0)
		printf("%-17s no owner\n", "owner");
	else if (s->has_owner && s->owner == -1)
		printf("%-17s unknown pid (lock held)\n", "owner");
	else if (s->has_owner)
		printf("%-17s %ld\n", "owner", s->owner);
	if (s->has_workers)
		printf("%-17s %lld\n%-17s %lld\n%-17s %lld\n", "workers",
		    s->claiming, "workers_connected", s->connected,
		    "workers_alive", s->alive);
	cmd_paused_text(s->pause.paused, s->pause.by, s->pause.at, text,
	    sizeof(text));
	/* "paused by WHO since TIME" as "paused  by WHO since TIME". */
	printf("%-17s %s\n", "paused", s->pause.paused ? text + 7 : "no");
}

/*
 * The retention, when it is not the default (forever for both): an
 * unreadable one was said on stderr, and the rest stands.
 */
static void
print_retention(struct store *s)
{
	struct retention r;
	char d[32], f[32];

	if (s->ops->retention(s, &r) != 0 || (r.done == KEEP_FOREVER &&
	    r.failed == KEEP_FOREVER))
		return;
	keep_format(r.done, d, sizeof(d));
	keep_format(r.failed, f, sizeof(f));
	printf("%-17s done %s, failed %s\n", "retention", d, f);
}

/*
 * Each schedule, "schedule NAME every=DUR next=TIME last=TIME|-" (as
 * `chute schedule` lists them): 0, or the exit status of a listing that
 * failed (said on stderr).
 */
static int
print_schedules_text(struct store *s)
{
	char every[32], next[48], last[48];
	struct top_sched *v;
	size_t n;
	int rc;

	if ((rc = scheds_read(s, &v, &n)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		dur_format(v[i].every, every, sizeof(every));
		iso_time(v[i].next, next, sizeof(next));
		strlcpy(last, "-", sizeof(last));
		if (v[i].last >= 0)
			iso_time(v[i].last, last, sizeof(last));
		printf("%-17s %s every=%s next=%s last=%s\n", "schedule",
		    v[i].name, every, next, last);
	}
	free(v);
	return 0;
}

int
cmd_stats_prometheus(FILE *f, struct store *s)
{
	struct store_stats st;
	int rc;

	if ((rc = s->ops->stats(s, &st)) == 0)
		rc = print_prometheus(f, &st, s);
	return rc;
}

int
cmd_stats(int argc, char **argv)
{
	struct store_stats st;
	struct store s;
	const char *queue;
	bool prom;
	int rc;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	prom = argc == 2 && strcmp(argv[1], "--prometheus") == 0;
	if (argc > 2 || (argc == 2 && !prom) || s.target == NULL)
		return usage_error("stats", "want %s [--prometheus]",
		    s.ops->noun);
	if ((rc = cmd_store_open(&s, "stats", queue)) != 0)
		return rc;
	if (prom)
		rc = cmd_stats_prometheus(stdout, &s);
	else if ((rc = s.ops->stats(&s, &st)) == 0) {
		print_text(&st);
		print_retention(&s);
		rc = print_schedules_text(&s);
	}
	return cmd_store_done(&s, rc);
}
