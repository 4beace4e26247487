/*
 * sched.c: priorities, keys, a spool's name attributes and limits, parsed
 * and checked in one place for both stores and every command.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/jobstate.h"
#include "base/sched.h"

static bool
key_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("._:@+-", c) != NULL;
}

/*
 * A key is part of a spool's file names and of every line that shows a
 * job: a short word of safe bytes, so that neither ls nor a shell nor a
 * log line needs to escape it, and a name keeps room for its ID.
 */
bool
key_valid(const char *k, const char **why)
{
	size_t n = strlen(k);

	if (n == 0) {
		*why = "a key is 1 to 64 bytes, this one is empty";
		return false;
	}
	if (n > KEY_MAX) {
		*why = "a key is 1 to 64 bytes, this one is longer";
		return false;
	}
	for (const unsigned char *p = (const unsigned char *)k; *p; p++)
		if (!key_char(*p)) {
			*why = "a key holds only letters, digits and ._:@+-";
			return false;
		}
	return true;
}
_Static_assert(KEY_MAX == 64, "key_valid's reasons say 64");

int
prio_parse(const char *s, int *prio, const char **why)
{
	const char *err;
	long long v;

	/* strtonum takes leading blanks and '+': a name must not. */
	if (*s == '\0' || strspn(s + (*s == '-'), "0123456789") !=
	    strlen(s + (*s == '-'))) {
		*why = "a priority is a whole number from -100 to 100";
		return -1;
	}
	v = strtonum(s, PRIO_MIN, PRIO_MAX, &err);
	if (err != NULL) {
		*why = "a priority is a whole number from -100 to 100";
		return -1;
	}
	*prio = (int)v;
	return 0;
}
_Static_assert(PRIO_MIN == -100 && PRIO_MAX == 100, "prio_parse says so");

/* One attribute, "L=VALUE" (after its ','), into a: 0, 1 not one, -1 bad. */
static int
attr_one(const char *at, size_t len, struct jobattr *a, unsigned *seen,
    const char **why)
{
	char v[KEY_MAX + 2];
	size_t vl = len - 2;

	if (len < 2 || at[0] < 'a' || at[0] > 'z' || at[1] != '=')
		return 1;
	if (at[0] != 'p' && at[0] != 'k' && at[0] != 'u') {
		*why = "its name has an attribute chute does not know"
		    " (only ,p=PRIORITY, ,k=KEY and ,u=KEY)";
		return -1;
	}
	if (*seen & (1u << (at[0] - 'a'))) {
		*why = "its name gives the same attribute twice";
		return -1;
	}
	*seen |= 1u << (at[0] - 'a');
	if (vl >= sizeof(v)) {
		*why = at[0] == 'p' ? "a priority is a whole number from -100"
		    " to 100" : "a key is 1 to 64 bytes, this one is longer";
		return -1;
	}
	memcpy(v, at + 2, vl);
	v[vl] = '\0';
	if (at[0] == 'p')
		return prio_parse(v, &a->prio, why);
	if (!key_valid(v, why))
		return -1;
	memcpy(at[0] == 'u' ? a->unique : a->key, v, vl + 1);
	return 0;
}

int
jobattr_parse(const char *name, struct jobattr *a, const char **why)
{
	size_t end = strlen(name);
	unsigned seen = 0;
	const char *comma;
	int rc;

	a->prio = PRIO_DEFAULT;
	a->key[0] = '\0';
	a->unique[0] = '\0';
	/* From the end: a ',' in the base (a plain name's) stays there. */
	while (end > 0 && (comma = memrchr(name, ',', end)) != NULL &&
	    comma != name) {
		rc = attr_one(comma + 1, end - (size_t)(comma + 1 - name), a,
		    &seen, why);
		if (rc == -1)
			return -1;
		if (rc == 1)
			break;
		end = (size_t)(comma - name);
	}
	a->baselen = end;
	return 0;
}

int
jobattr_name(const char *base, int prio, const char *key, char *buf,
    size_t len)
{
	char p[16] = "", k[KEY_MAX + 4] = "";
	int n;

	if (prio != PRIO_DEFAULT)
		snprintf(p, sizeof(p), ",p=%d", prio);
	if (key != NULL && *key != '\0')
		snprintf(k, sizeof(k), ",k=%s", key);
	n = snprintf(buf, len, "%s%s%s", base, p, k);
	if (n < 0 || (size_t)n >= len || n > ID_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
limit_parse_max(const char *s, long *max, const char **why)
{
	const char *err;

	if (strcmp(s, "none") == 0) {
		*max = 0;
		return 0;
	}
	if (strspn(s, "0123456789") != strlen(s) ||
	    (*max = (long)strtonum(s, 1, LIMIT_MAX, &err), err != NULL)) {
		*why = "a limit is a whole number from 1 to 100000, or none";
		return -1;
	}
	return 0;
}
_Static_assert(LIMIT_MAX == 100000, "limit_parse_max says so");

int
limit_parse_rate(const char *s, long *n, msec_t *per, const char **why)
{
	const char *slash = strchr(s, '/'), *err;
	char num[16];
	size_t nl;

	*why = "a rate is N/DURATION (N from 1 to 100000, the duration from"
	    " 1ms to 1d: 10/1s, 600/1h), or none";
	if (strcmp(s, "none") == 0) {
		*n = 0;
		*per = 0;
		return 0;
	}
	if (slash == NULL || (nl = (size_t)(slash - s)) == 0 ||
	    nl >= sizeof(num) || strspn(s, "0123456789") != nl)
		return -1;
	memcpy(num, s, nl);
	num[nl] = '\0';
	*n = (long)strtonum(num, 1, LIMIT_MAX, &err);
	if (err != NULL || dur_parse(slash + 1, per) == -1 || *per < 1 ||
	    *per > RATE_PER_MAX)
		return -1;
	return 0;
}

void
limit_format_rate(long n, msec_t per, char *buf, size_t len)
{
	char d[32];

	if (n == 0) {
		snprintf(buf, len, "-");
		return;
	}
	/* dur_parse must read it back: whole units only. */
	if (per % 86400000 == 0)
		snprintf(d, sizeof(d), "%lldd", (long long)(per / 86400000));
	else if (per % 3600000 == 0)
		snprintf(d, sizeof(d), "%lldh", (long long)(per / 3600000));
	else if (per % 60000 == 0)
		snprintf(d, sizeof(d), "%lldm", (long long)(per / 60000));
	else if (per % 1000 == 0)
		snprintf(d, sizeof(d), "%llds", (long long)(per / 1000));
	else
		snprintf(d, sizeof(d), "%lldms", (long long)per);
	snprintf(buf, len, "%ld/%s", n, d);
}

const struct limit *
limit_for_key(const struct limit *v, int n, const char *key)
{
	const struct limit *dflt = NULL;

	if (key == NULL || *key == '\0')
		return NULL;
	for (int i = 0; i < n; i++) {
		if (v[i].scope == LIM_KEY && strcmp(v[i].key, key) == 0)
			return &v[i];
		if (v[i].scope == LIM_DEFAULT)
			dflt = &v[i];
	}
	return dflt;
}

/* ---- unique keys (issue 37) ---- */

const char *const unique_while_names[3] = { "active", "waiting", "kept" };

int
unique_while_parse(const char *s, enum unique_while *w)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(s, unique_while_names[i]) == 0) {
			*w = (enum unique_while)i;
			return 0;
		}
	return -1;
}

int
unique_dup_parse(const char *s, enum unique_dup *d)
{
	static const char *const names[] = { "refuse", "keep", "replace" };

	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*d = (enum unique_dup)i;
			return 0;
		}
	return -1;
}

bool
unique_holds(enum unique_while w, int st)
{
	if (st == ST_NONE)
		return false;
	if (st == ST_NEW || st == ST_DEFER)
		return true;
	if (st == ST_CUR)
		return w != UQ_WAITING;
	return w == UQ_KEPT && state_terminal(st);
}

int
unique_name(const char *name, const char *key, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s,u=%s", name, key);

	if (n < 0 || (size_t)n >= len || n > ID_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
