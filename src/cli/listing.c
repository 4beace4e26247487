/*
 * listing.c: what `chute stats --prometheus` prints for a spool and for a
 * URL (the Prometheus text format), and the lines of `chute workers` for
 * both.  Reading a spool's directories is queue/spool/spool_list.c's.
 */
#include <sys/mman.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/spool.h"
#include "cli/listing.h"
#include "queue/store.h"
#include "queue/view.h"

/* ---- stats: the Prometheus text format ---- */

/*
 * name="value" into buf, value escaped as the format wants it (\\, \" and
 * \n).  A label value must be UTF-8 and a path need not be: a byte that is
 * not part of a valid character becomes '?'.  A value too long for buf is
 * cut at a character.
 */
static void
prom_label(char *buf, size_t len, const char *name, const char *value)
{
	const unsigned char *v = (const unsigned char *)value;
	size_t o = (size_t)snprintf(buf, len, "%s=\"", name);

	if (o + 2 > len) {	/* no room for even the quotes: no label */
		buf[0] = '\0';
		return;
	}
	while (*v != '\0' && o + 6 < len) {	/* room for 4 bytes, '"', NUL */
		size_t n = utf8_seq(v);

		if (n == 0) {
			buf[o++] = '?';
			v++;
			continue;
		}
		if (*v == '\\' || *v == '"' || *v == '\n')
			buf[o++] = '\\';
		buf[o++] = *v == '\n' ? 'n' : (char)*v;
		for (size_t i = 1; i < n; i++)
			buf[o++] = (char)v[i];
		v += n;
	}
	buf[o++] = '"';
	buf[o] = '\0';
}

static const struct {
	const char	*name;
	const char	*help;
} prom_metrics[PM_N] = {
	[PM_OLDEST] = { "chute_oldest_queued_seconds", "Age of the oldest job "
	    "in state new (its mtime in new/, its run_at in a queue); 0 when "
	    "there is none." },
	[PM_RUNNING] = { "chute_jobs_running", "Jobs running: in cur/ while "
	    "an owner holds the spool's lock; in a queue, claimed under a "
	    "lease that has not run out (started, or prefetched to start "
	    "next)." },
	[PM_LONGEST] = { "chute_longest_running_seconds", "How long the "
	    "longest running attempt has run, from the start line of its "
	    "log; 0 when none runs." },
	[PM_OWNER_UP] = { "chute_owner_up", "1 while a live process holds "
	    "the spool's lock, else 0." },
	[PM_OWNER_PID] = { "chute_owner_pid", "The pid of the process "
	    "holding the spool's lock; 0 when there is none or its pid is "
	    "not known." },
	[PM_CLAIMING] = { "chute_workers_claiming", "Workers holding a claim "
	    "in the queue whose lease has not run out." },
	[PM_CONNECTED] = { "chute_workers_connected", "Worker processes "
	    "connected to the queue's database (sessions named chute-worker), "
	    "whatever queue they serve." },
	[PM_ALIVE] = { "chute_workers_alive", "Workers of the queue alive in "
	    "chute.workers: not stopped, and seen within their lease." },
	[PM_PAUSED] = { "chute_paused", "1 while the spool or queue is paused "
	    "(chute pause: nothing is claimed, running jobs finish), else 0." },
	[PM_TIME] = { "chute_stats_timestamp_seconds", "Unix time at which "
	    "chute stats read these values." },
};

/* The HELP and TYPE lines of a gauge: every metric here is one. */
static void
prom_family(FILE *f, const char *name, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/*
 * One sample: name{labels,more} value; more may be NULL.  %.15g keeps every
 * count exact and a Unix time to the millisecond.
 */
static void
prom_sample(FILE *f, const char *name, const char *labels, const char *more,
    double v)
{
	fprintf(f, "%s{%s%s%s} %.15g\n", name, labels, more != NULL ? "," : "",
	    more != NULL ? more : "", v);
}

void
prom_print(FILE *f, const struct prom_stats *s)
{
	char labels[2 * PATH_MAX + 64], state[32];

	prom_label(labels, sizeof(labels), s->label, s->name);
	prom_family(f, "chute_jobs", "Jobs in each state (a spool's state "
	    "directories, a queue's rows).");
	for (int st = ST_FIRST; st < ST_END; st++) {
		snprintf(state, sizeof(state), "state=\"%s\"", state_names[st]);
		prom_sample(f, "chute_jobs", labels, state, s->jobs[st]);
	}
	for (int m = 0; m < PM_N; m++) {
		if (!s->has[m])
			continue;
		prom_family(f, prom_metrics[m].name, prom_metrics[m].help);
		prom_sample(f, prom_metrics[m].name, labels, NULL, s->v[m]);
	}
}

void
prom_print_keys(FILE *f, const struct prom_stats *s, const struct key_use *k,
    size_t shown, size_t total)
{
	char labels[2 * PATH_MAX + 64], key[KEY_MAX + 16];

	if (total == 0)
		return;
	prom_label(labels, sizeof(labels), s->label, s->name);
	prom_family(f, "chute_keys", "Keys with jobs running or waiting; the "
	    "chute_key_* gauges show at most 100 of them, the most waiting "
	    "first.");
	prom_sample(f, "chute_keys", labels, NULL, (double)total);
	prom_family(f, "chute_key_running", "Jobs of the key running.");
	for (size_t i = 0; i < shown; i++) {
		snprintf(key, sizeof(key), "key=\"%s\"", k[i].key);
		prom_sample(f, "chute_key_running", labels, key, k[i].running);
	}
	prom_family(f, "chute_key_waiting", "Jobs of the key waiting to "
	    "start (a spool's in new/, a queue's due).");
	for (size_t i = 0; i < shown; i++) {
		snprintf(key, sizeof(key), "key=\"%s\"", k[i].key);
		prom_sample(f, "chute_key_waiting", labels, key, k[i].waiting);
	}
	prom_family(f, "chute_key_limit", "Most jobs of the key that may run "
	    "at once (its rule, else the default); absent: no bound.");
	for (size_t i = 0; i < shown; i++) {
		if (k[i].max <= 0)
			continue;
		snprintf(key, sizeof(key), "key=\"%s\"", k[i].key);
		prom_sample(f, "chute_key_limit", labels, key,
		    (double)k[i].max);
	}
}

void
prom_print_schedules(FILE *f, const struct prom_stats *s,
    const struct top_sched *v, size_t n)
{
	char labels[2 * PATH_MAX + 64], name[SCHED_NAME_MAX + 16];
	size_t i;

	if (n == 0)
		return;
	prom_label(labels, sizeof(labels), s->label, s->name);
	prom_family(f, "chute_schedules", "Recurring jobs declared (chute "
	    "schedule).");
	prom_sample(f, "chute_schedules", labels, NULL, (double)n);
	prom_family(f, "chute_schedule_interval_seconds", "The schedule's "
	    "interval (--every).");
	/* A schedule's name is [A-Za-z0-9_-]: nothing to escape. */
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "schedule=\"%s\"", v[i].name);
		prom_sample(f, "chute_schedule_interval_seconds", labels, name,
		    v[i].every / 1000.0);
	}
	prom_family(f, "chute_schedule_next_tick_seconds", "Unix time of the "
	    "schedule's next tick to make; in the past while no scheduler "
	    "(chute tick) makes it.");
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "schedule=\"%s\"", v[i].name);
		prom_sample(f, "chute_schedule_next_tick_seconds", labels, name,
		    v[i].next / 1000.0);
	}
	for (i = 0; i < n && v[i].last < 0; i++)
		;
	if (i == n)	/* no tick made yet: no family without samples */
		return;
	prom_family(f, "chute_schedule_last_tick_seconds", "Unix time of the "
	    "last tick whose job was made; absent until one was.");
	for (i = 0; i < n; i++) {
		if (v[i].last < 0)
			continue;
		snprintf(name, sizeof(name), "schedule=\"%s\"", v[i].name);
		prom_sample(f, "chute_schedule_last_tick_seconds", labels, name,
		    v[i].last / 1000.0);
	}
}

/* ---- the schedules ---- */

struct scheds {
	struct top_sched *v;
	size_t		 n, cap;
	bool		 failed;
};

static void
sched_row(void *arg, const struct sched_row *r)
{
	struct scheds *k = arg;
	struct top_sched *u;

	if (k->failed)
		return;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		struct top_sched *v = reallocarray(k->v, cap, sizeof(*v));

		if (v == NULL) {
			k->failed = true;
			return;
		}
		k->v = v;
		k->cap = cap;
	}
	u = &k->v[k->n++];
	strlcpy(u->name, r->name, sizeof(u->name));
	u->every = r->ts.every;
	u->next = r->next;
	u->last = r->last;
}

int
scheds_read(struct store *s, struct top_sched **v, size_t *n)
{
	struct scheds k = { 0 };
	int rc;

	*v = NULL;
	*n = 0;
	if (s->ops->schedules == NULL)
		return 0;
	if ((rc = s->ops->schedules(s, sched_row, &k)) == 0 && k.failed) {
		fprintf(stderr, "chute: %s: the schedules: out of memory\n",
		    s->target);
		rc = EX_SOFTWARE;
	}
	if (rc != 0) {
		free(k.v);
		return rc;
	}
	*v = k.v;
	*n = k.n;
	return 0;
}

/* ---- the keys in use ---- */

struct keys {
	struct key_use	*v;
	size_t		 n, cap;
	bool		 failed;
};

static void
key_row(void *arg, const struct store_limit_row *r)
{
	struct keys *k = arg;
	struct key_use *u;

	if (r->rule || k->failed)
		return;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 64;
		struct key_use *v = reallocarray(k->v, cap, sizeof(*v));

		if (v == NULL) {
			k->failed = true;
			return;
		}
		k->v = v;
		k->cap = cap;
	}
	u = &k->v[k->n++];
	memset(u, 0, sizeof(*u));
	strlcpy(u->key, r->lim.key, sizeof(u->key));
	u->running = r->running < 0 ? 0 : (double)r->running;
	u->waiting = r->waiting < 0 ? 0 : (double)r->waiting;
	if (r->bounded) {
		u->max = r->lim.max;
		u->rate_n = r->lim.rate_n;
		u->rate_ms = r->lim.rate_ms;
	}
}

static int
cmp_waiting(const void *a, const void *b)
{
	const struct key_use *x = a, *y = b;

	if (x->waiting != y->waiting)
		return x->waiting > y->waiting ? -1 : 1;
	if (x->running != y->running)
		return x->running > y->running ? -1 : 1;
	return strcmp(x->key, y->key);
}

int
keys_read(struct store *s, struct key_use **v, size_t *n)
{
	struct keys k = { 0 };
	int rc;

	*v = NULL;
	*n = 0;
	if (s->ops->limits == NULL)
		return 0;
	if ((rc = s->ops->limits(s, key_row, &k)) == 0 && k.failed) {
		fprintf(stderr, "chute: %s: the keys in use: out of memory\n",
		    s->target);
		rc = EX_SOFTWARE;
	}
	if (rc != 0) {
		free(k.v);
		return rc;
	}
	if (k.n > 1)
		qsort(k.v, k.n, sizeof(k.v[0]), cmp_waiting);
	*v = k.v;
	*n = k.n;
	return 0;
}

/* t's schedules read again: 0, or an exit status (t keeps what it had). */
static int
scheds_of(struct store *s, struct top *t)
{
	struct top_sched *v;
	size_t n;
	int rc;

	if ((rc = scheds_read(s, &v, &n)) != 0)
		return rc;
	t->nsched = n < TOP_SCHED_MAX ? n : TOP_SCHED_MAX;
	t->scheds_all = (long long)n;
	if (t->nsched > 0)
		memcpy(t->sched, v, t->nsched * sizeof(*v));
	free(v);
	return 0;
}

int
top_keys_read(struct store *s, struct top *t, msec_t *next)
{
	struct key_use *v;
	msec_t mono = mono_ms(), took;
	size_t n;
	int rc, sr;

	if (mono < *next)
		return 0;
	rc = keys_read(s, &v, &n);
	sr = scheds_of(s, t);
	took = mono_ms() - mono;
	*next = mono_ms() + (10 * took > TOP_KEY_MS ? 10 * took : TOP_KEY_MS);
	if (rc != 0)
		return -1;
	t->nkey = n < TOP_KEY_MAX ? n : TOP_KEY_MAX;
	t->keys_all = (long long)n;
	for (size_t i = 0; i < t->nkey; i++) {
		struct top_key *k = &t->key[i];

		strlcpy(k->key, v[i].key, sizeof(k->key));
		k->running = (long long)v[i].running;
		k->waiting = (long long)v[i].waiting;
		k->max = v[i].max;
		k->rate_n = v[i].rate_n;
		k->rate_ms = v[i].rate_ms;
	}
	free(v);
	return sr != 0 ? -1 : 0;
}

/* ---- chute workers ---- */

void
dur_signed(msec_t ms, char *buf, size_t len)
{
	buf[0] = '-';
	dur_format(ms < 0 ? -ms : ms, buf + (ms < 0), len - (ms < 0));
}

void
workers_header(void)
{
	printf("%-24s %-16s %7s %-10s %5s %7s %-7s %9s %9s %s\n", "WORKER",
	    "HOST", "PID", "QUEUE", "SLOTS", "RUNNING", "VERSION", "STARTED",
	    "SEEN", "STATE");
}

/* A field that is not known, or a duration ago. */
static void
ago(msec_t ms, char *buf, size_t len)
{
	if (ms < 0)
		strlcpy(buf, "-", len);
	else
		dur_format(ms, buf, len);
}

/* One word of a line, escaped; "-" for none, so that the words still count. */
static void
word(const char *s, char *buf, size_t len)
{
	vis_name(s != NULL && *s != '\0' ? s : "-", buf, len);
}

void
workers_line(const struct store_worker *w)
{
	char worker[512], host[512], queue[1024], version[128];
	char slots[16] = "-", started[32], seen[32];

	word(w->worker, worker, sizeof(worker));
	word(w->host, host, sizeof(host));
	word(w->queue, queue, sizeof(queue));
	word(w->version, version, sizeof(version));
	if (w->slots >= 0)
		snprintf(slots, sizeof(slots), "%d", w->slots);
	ago(w->started_ago, started, sizeof(started));
	ago(w->seen_ago, seen, sizeof(seen));
	printf("%-24s %-16s %7ld %-10s %5s %7ld %-7s %9s %9s %s\n", worker, host,
	    w->pid, queue, slots, w->running, version, started, seen, w->state);
}

void
workers_held(const char *id, msec_t lease_left)
{
	char v[1024], lease[32];

	vis_name(id, v, sizeof(v));
	if (lease_left == WORKERS_NO_LEASE) {
		printf("  holds %s\n", v);
		return;
	}
	dur_signed(lease_left, lease, sizeof(lease));
	printf("  holds %s lease=%s\n", v, lease);
}
