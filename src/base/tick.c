/*
 * tick.c: recurring jobs' arithmetic (tick.h): names, the grid of ticks,
 * the catch-up modes, a tick's ID.  Pure: no clock is read here, so that
 * a clock that jumps is the caller's input, tested like any other.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/tick.h"

bool
sched_name_valid(const char *name, const char **why)
{
	size_t n = strlen(name);

	if (n == 0 || n > SCHED_NAME_MAX) {
		*why = "a schedule's name is 1 to 64 bytes";
		return false;
	}
	if (name[0] == '-') {
		*why = "a schedule's name does not start with '-'";
		return false;
	}
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-") != n) {
		*why = "a schedule's name is made of A-Z a-z 0-9 _ and -";
		return false;
	}
	return true;
}

int
tick_sched_check(const struct tick_sched *s, const char **why)
{
	if (s->every < TICK_EVERY_MIN) {
		*why = "the interval is under 50ms: it would never stop firing";
		return -1;
	}
	if (s->every > TICK_EVERY_MAX) {
		*why = "the interval is over 3660 days";
		return -1;
	}
	if (s->offset < 0 || s->offset >= s->every) {
		*why = "the offset must be below the interval (tick k is at "
		    "offset + k * interval after the epoch)";
		return -1;
	}
	return 0;
}

static const char *const modes[] = { "skip", "once", "all" };

int
catchup_parse(const char *s, enum catchup *m)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, modes[i]) == 0) {
			*m = (enum catchup)i;
			return 0;
		}
	return -1;
}

const char *
catchup_name(enum catchup m)
{
	return (unsigned)m < 3 ? modes[m] : "?";
}

/* Floor division, for times before the epoch too (a clock set far back). */
static msec_t
fdiv(msec_t a, msec_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

msec_t
tick_floor(const struct tick_sched *s, msec_t t)
{
	return fdiv(t - s->offset, s->every) * s->every + s->offset;
}

msec_t
tick_next(const struct tick_sched *s, msec_t t)
{
	return tick_floor(s, t) + s->every;
}

int
tick_plan(const struct tick_sched *s, msec_t last, msec_t now, msec_t *out,
    int max, long long *missed)
{
	msec_t first = tick_next(s, last), latest = tick_floor(s, now);
	long long due;
	int n = 0;

	*missed = 0;
	if (latest < first || max < 1)
		return 0;
	due = (latest - first) / s->every + 1;
	switch (s->mode) {
	case CATCHUP_SKIP:
		out[n++] = latest;
		*missed = due - 1;
		break;
	case CATCHUP_ONCE:
		if (due > 1 && max > 1)
			out[n++] = first;
		out[n++] = latest;
		*missed = due > 2 ? due - 2 : 0;
		break;
	case CATCHUP_ALL:
		for (msec_t t = first; t <= latest && n < max; t += s->every)
			out[n++] = t;
		break;
	}
	return n;
}

void
tick_missed_text(const struct tick_sched *s, long long missed, msec_t first,
    char *buf, size_t len)
{
	char at[48];

	*buf = '\0';
	if (missed <= 0)
		return;
	iso_time(first, at, sizeof(at));
	if (s->mode == CATCHUP_ONCE)
		snprintf(buf, len, "%lld tick%s after %s missed (catch-up once): "
		    "the job of %s stands for them", missed, missed == 1 ? "" :
		    "s", at, at);
	else
		snprintf(buf, len, "%lld tick%s from %s missed (catch-up %s): "
		    "not made", missed, missed == 1 ? "" : "s", at,
		    catchup_name(s->mode));
}

void
tick_id(const char *name, msec_t tick, char *buf, size_t len)
{
	time_t t = (time_t)fdiv(tick, 1000);
	struct tm tm;
	char s[24];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, len, "%s@%s.%03dZ", name, s, (int)(tick - t * 1000LL));
}

int
tick_of_id(const char *name, const char *id, msec_t *tick)
{
	size_t n = strlen(name);
	struct tm tm = { 0 };
	char check[TICK_ID_MAX + 1];
	const char *p;
	int ms;

	if (strncmp(id, name, n) != 0 || id[n] != '@')
		return -1;
	p = strptime(id + n + 1, "%Y%m%dT%H%M%S", &tm);
	if (p == NULL || sscanf(p, ".%3dZ", &ms) != 1)
		return -1;
	*tick = (msec_t)timegm(&tm) * 1000 + ms;
	/* Only the one spelling tick_id gives. */
	tick_id(name, *tick, check, sizeof(check));
	return strcmp(check, id) == 0 ? 0 : -1;
}
