/*
 * listing.c: read the job state directories for `chute ls` and `chute
 * stats`: one pass over each, counting, and keeping the entries if asked.
 * For stats also: when a running job's attempt started (its log), and the
 * Prometheus text format that `stats --prometheus` prints for a spool and
 * for a URL.
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

static int
keep(struct listing *l, const char *name, msec_t mtime)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct listing_entry *v = reallocarray(l->v, cap, sizeof(*v));
		if (v == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	if ((l->v[l->n].id = strdup(name)) == NULL)
		return -1;
	l->v[l->n].mtime = mtime;
	l->v[l->n].state = l->state;
	l->n++;
	return 0;
}

static int
collect(void *arg, const char *name)
{
	struct listing *l = arg;
	struct stat st;
	msec_t m;

	/*
	 * A name is a job: only an mtime needs a stat, and stats wants only
	 * new/'s.  A spool that keeps a million jobs in done/ then costs
	 * getdents, not a million system calls more.
	 */
	if (l->new_only && l->state != ST_NEW && !l->keep) {
		l->count[l->state]++;
		return 0;
	}
	if (fstatat(l->sp->dir[l->state], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;		/* moved on while we looked */
	m = (msec_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	l->count[l->state]++;
	if (l->oldest[l->state] == 0 || m < l->oldest[l->state])
		l->oldest[l->state] = m;
	return l->keep ? keep(l, name, m) : 0;
}

static int
by_mtime(const void *a, const void *b)
{
	const struct listing_entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->id, y->id);
}

int
listing_read(struct listing *l, int only)
{
	for (int st = ST_FIRST; st < ST_END; st++) {
		if (only != ST_NONE && st != only)
			continue;
		l->state = st;
		if (spool_scan(l->sp, l->state, collect, l) != 0) {
			fprintf(stderr, "chute: %s/%s: %s\n", l->sp->path,
			    state_names[l->state], strerror(errno));
			return EX_IOERR;
		}
	}
	if (l->n > 1)		/* qsort's base may not be NULL */
		qsort(l->v, l->n, sizeof(*l->v), by_mtime);
	return 0;
}

void
listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].id);
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

/* ---- stats: when the attempt now running started ---- */

#define LOG_MARK	"@chute "	/* spool-layout.md, "The job log" */

/* The last line of buf that starts with LOG_MARK, and its length; or NULL. */
static const char *
last_mark(const char *buf, size_t len, size_t *linelen)
{
	const size_t mlen = sizeof(LOG_MARK) - 1;
	size_t n = len > 0 && buf[len - 1] == '\n' ? len - 1 : len;

	for (;;) {
		const char *nl = memrchr(buf, '\n', n);
		size_t bol = nl != NULL ? (size_t)(nl - buf) + 1 : 0;

		if (n - bol > mlen && memcmp(buf + bol, LOG_MARK, mlen) == 0) {
			*linelen = n - bol;
			return buf + bol;
		}
		if (nl == NULL)
			return NULL;
		n = (size_t)(nl - buf);
	}
}

/* "TIME attempt=N start" (after the mark): TIME in ms, else 0. */
static msec_t
start_time(const char *p, size_t len)
{
	struct tm tm = { 0 };
	char line[96];
	int ms, end = -1;

	if (len >= sizeof(line))
		return 0;
	memcpy(line, p, len);
	line[len] = '\0';
	if (sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ attempt=%*d start%n",
	    &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
	    &tm.tm_sec, &ms, &end) != 7 || end != (int)len)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (msec_t)timegm(&tm) * 1000 + ms;
}

msec_t
listing_started(struct spool *sp, const char *id)
{
	const char *line;
	struct stat st;
	msec_t t = 0;
	size_t len;
	void *map;
	int fd;

	fd = openat(sp->dir[ST_LOG], id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) !=
	    MAP_FAILED) {
		if ((line = last_mark(map, st.st_size, &len)) != NULL)
			t = start_time(line + sizeof(LOG_MARK) - 1,
			    len - (sizeof(LOG_MARK) - 1));
		munmap(map, st.st_size);
	}
	close(fd);
	return t;
}

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
workers_line(const struct worker_line *w)
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
