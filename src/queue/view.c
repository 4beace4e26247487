/*
 * view.c: the model's own arithmetic (queue/view.h): the throughput ring,
 * ages and counts as shown, whatever store's source filled it.
 */
#include <stdint.h>
#include <stdio.h>

#include "base/util.h"
#include "queue/view.h"

/* ---- throughput: one bucket per second of the last TOP_WINDOW ---- */

void
top_finished(struct top *t, int st, msec_t when)
{
	int64_t s = when / 1000;
	size_t i = (size_t)(s % TOP_WINDOW);

	if (t->sec[i] > s)		/* a second that has left the window */
		return;
	if (t->sec[i] != s) {
		t->sec[i] = s;
		t->done[i] = t->failed[i] = 0;
	}
	if (st == ST_DONE)
		t->done[i]++;
	else
		t->failed[i]++;
}

int
top_rate(const struct top *t, msec_t now, unsigned *done, unsigned *failed)
{
	int64_t s = now / 1000, from = s - TOP_WINDOW + 1;

	if (t->rate_from > from)
		from = t->rate_from;
	*done = *failed = 0;
	for (size_t i = 0; i < TOP_WINDOW; i++)
		if (t->sec[i] <= s && t->sec[i] >= from) {
			*done += t->done[i];
			*failed += t->failed[i];
		}
	return s >= from ? (int)(s - from + 1) : 0;
}

void
top_age(msec_t ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	if (ms < 60000)
		snprintf(buf, len, "%llds", (long long)ms / 1000);
	else
		dur_format(ms / 1000 * 1000, buf, len);
}

void
top_count(const struct top *t, int st, char *buf, size_t len)
{
	long long n = t->count[st];

	if (t->kind[st] == TOP_ATLEAST)
		snprintf(buf, len, "%lld+", n);
	else if (t->kind[st] != TOP_ABOUT || n < 10000)
		snprintf(buf, len, "%s%lld", t->kind[st] == TOP_ABOUT ? "~" : "",
		    n);
	else if (n < 1000000)
		snprintf(buf, len, "~%lldk", (n + 500) / 1000);
	else
		snprintf(buf, len, "~%.1fM", (double)n / 1e6);
}
