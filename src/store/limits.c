/*
 * limits.c: SPOOL/limits, the spool's limits (base/sched.h says what they
 * mean): parsed, read, and changed one rule at a time.  The file changes
 * no job: a crash at any step leaves the old rules or the new ones.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sched.h"
#include "base/util.h"
#include "store/limits.h"
#include "store/spool.h"

#define LIMITS_SIZE	(1 << 20)	/* a bigger file is refused */

void
limits_free(struct limits *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static bool
same_rule(const struct limit *a, enum limit_scope s, const char *key)
{
	return a->scope == s && (s != LIM_KEY || strcmp(a->key, key) == 0);
}

/* One word "max=N" or "rate=N/DUR" into r: 0, or -1 with why. */
static int
field(char *w, struct limit *r, unsigned *seen, const char **why)
{
	if (strncmp(w, "max=", 4) == 0 && !(*seen & 1)) {
		*seen |= 1;
		return limit_parse_max(w + 4, &r->max, why);
	}
	if (strncmp(w, "rate=", 5) == 0 && !(*seen & 2)) {
		*seen |= 2;
		return limit_parse_rate(w + 5, &r->rate_n, &r->rate_ms, why);
	}
	*why = "want max=N or rate=N/DURATION, each once";
	return -1;
}

/* One line (NUL-terminated, no newline) into r: 1 a rule, 0 none, -1. */
static int
line(char *s, struct limit *r, const char **why)
{
	char *w, *save = NULL;
	unsigned seen = 0;

	memset(r, 0, sizeof(*r));
	if ((w = strtok_r(s, " \t\r", &save)) == NULL || *w == '#')
		return 0;
	if (strcmp(w, "all") == 0)
		r->scope = LIM_ALL;
	else if (strcmp(w, "default") == 0)
		r->scope = LIM_DEFAULT;
	else if (strcmp(w, "key") == 0) {
		r->scope = LIM_KEY;
		if ((w = strtok_r(NULL, " \t\r", &save)) == NULL) {
			*why = "key wants a KEY";
			return -1;
		}
		if (!key_valid(w, why))
			return -1;
		strlcpy(r->key, w, sizeof(r->key));
	} else {
		*why = "a rule starts with all, default or key KEY";
		return -1;
	}
	while ((w = strtok_r(NULL, " \t\r", &save)) != NULL)
		if (field(w, r, &seen, why) == -1)
			return -1;
	return 1;
}

static int
add(struct limits *l, const struct limit *r)
{
	struct limit *v;

	if (l->n >= LIMITS_RULES) {
		errno = EINVAL;
		return -1;
	}
	if ((v = reallocarray(l->v, (size_t)l->n + 1, sizeof(*v))) == NULL)
		return -1;
	l->v = v;
	l->v[l->n++] = *r;
	return 0;
}

int
limits_parse(const char *text, size_t len, struct limits *l, char *why,
    size_t wlen)
{
	const char *p = text, *end = text + len, *nl, *reason = NULL;
	char buf[512];
	struct limit r;
	int no = 0, rc;

	l->v = NULL;
	l->n = 0;
	for (; p < end; p = nl + 1) {
		no++;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if ((size_t)(nl - p) >= sizeof(buf) || memchr(p, '\0',
		    (size_t)(nl - p)) != NULL) {
			reason = "too long, or not text";
			goto bad;
		}
		memcpy(buf, p, (size_t)(nl - p));
		buf[nl - p] = '\0';
		if ((rc = line(buf, &r, &reason)) == -1)
			goto bad;
		if (rc == 0)
			continue;
		for (int i = 0; i < l->n; i++)
			if (same_rule(&l->v[i], r.scope, r.key)) {
				reason = "a second rule for the same keys";
				goto bad;
			}
		if (add(l, &r) == -1) {
			reason = errno == EINVAL ? "more than 4096 rules" :
			    strerror(errno);
			goto bad;
		}
	}
	return 0;
bad:
	snprintf(why, wlen, "line %d: %s", no, reason);
	limits_free(l);
	errno = EINVAL;
	return -1;
}
_Static_assert(LIMITS_RULES == 4096, "limits_parse says so");

int
limits_read(struct spool *sp, struct limits *l, char *why, size_t wlen)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, rc, saved;

	l->v = NULL;
	l->n = 0;
	/* NONBLOCK: a FIFO put there must not hang the owner. */
	fd = openat(sp->root, LIMITS_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (fd == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(why, wlen, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > LIMITS_SIZE) {
		saved = errno;
		close(fd);
		snprintf(why, wlen, "%s", S_ISREG(st.st_mode) ?
		    "larger than 1 MB" : "not a regular file");
		errno = saved != 0 ? saved : EINVAL;
		return -1;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		snprintf(why, wlen, "%s", strerror(errno));
		return -1;
	}
	n = read_full(fd, buf, (size_t)st.st_size);
	saved = errno;
	close(fd);
	if (n == -1) {
		free(buf);
		snprintf(why, wlen, "%s", strerror(saved));
		errno = saved;
		return -1;
	}
	rc = limits_parse(buf, (size_t)n, l, why, wlen);
	free(buf);
	return rc;
}

void
limits_format(const struct limit *r, char *buf, size_t len)
{
	static const char *scope[] = { "key", "default", "all" };
	char max[32] = "", rate[64] = "";

	if (r->max > 0)
		snprintf(max, sizeof(max), " max=%ld", r->max);
	if (r->rate_n > 0) {
		strlcpy(rate, " rate=", sizeof(rate));
		limit_format_rate(r->rate_n, r->rate_ms, rate + 6,
		    sizeof(rate) - 6);
	}
	snprintf(buf, len, "%s%s%s%s%s", scope[r->scope],
	    r->scope == LIM_KEY ? " " : "", r->scope == LIM_KEY ? r->key : "",
	    max, rate);
}

/* The rules as the file's text into a malloc'ed *out, its length. */
static int
render(const struct limits *l, char **out, size_t *olen)
{
	size_t cap = 128 + (size_t)l->n * 128, n;
	char *buf = malloc(cap), line[256];

	if (buf == NULL)
		return -1;
	n = (size_t)snprintf(buf, cap, "# chute limits: all|default|key KEY "
	    "[max=N] [rate=N/DURATION]; see chute limit\n");
	for (int i = 0; i < l->n; i++) {
		limits_format(&l->v[i], line, sizeof(line));
		n += (size_t)snprintf(buf + n, cap - n, "%s\n", line);
	}
	*out = buf;
	*olen = n;
	return 0;
}

/* The rules into SPOOL/limits, whole or not at all. */
static int
write_rules(struct spool *sp, const struct limits *l)
{
	char tmp[64], *text;
	size_t len;
	int fd, saved;

	if (render(l, &text, &len) == -1)
		return -1;
	/* In tmp/, where a crash's leftover is removed after 36 h. */
	snprintf(tmp, sizeof(tmp), LIMITS_FILE ".%ld", (long)getpid());
	unlinkat(sp->dir[ST_TMP], tmp, 0);
	fd = openat(sp->dir[ST_TMP], tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd == -1) {
		free(text);
		return -1;
	}
	/* fsync before the rename: after a crash the name holds all of it. */
	if (write_all(fd, text, len) == -1 || fsync(fd) == -1 ||
	    close(fd) == -1 ||
	    renameat(sp->dir[ST_TMP], tmp, sp->root, LIMITS_FILE) == -1) {
		saved = errno;
		free(text);
		unlinkat(sp->dir[ST_TMP], tmp, 0);
		errno = saved;
		return -1;
	}
	free(text);
	/* The root's entry for it: the change outlives a crash. */
	return fsync(sp->root);
}

/* c applied to l; *now: the rule as it becomes. */
static int
apply(struct limits *l, const struct limit *c, bool set_max, bool set_rate,
    bool clear, struct limit *now)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (same_rule(&l->v[i], c->scope, c->key))
			break;
	if (i == l->n) {
		struct limit r = *c;

		r.max = r.rate_n = 0;
		r.rate_ms = 0;
		if (add(l, &r) == -1)
			return -1;
	}
	if (set_max)
		l->v[i].max = c->max;
	if (set_rate) {
		l->v[i].rate_n = c->rate_n;
		l->v[i].rate_ms = c->rate_n > 0 ? c->rate_ms : 0;
	}
	if (clear)
		l->v[i].max = l->v[i].rate_n = 0;
	*now = l->v[i];
	/* A rule without a bound is no rule. */
	if (l->v[i].max == 0 && l->v[i].rate_n == 0)
		l->v[i] = l->v[--l->n];
	return 0;
}

int
limits_change(struct spool *sp, const struct limit *c, bool set_max,
    bool set_rate, bool clear, struct limit *now, char *why, size_t wlen)
{
	struct limits l;
	int fd, rc = -1, saved;

	fd = openat(sp->root, LIMITS_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW |
	    O_CLOEXEC, 0644);
	if (fd == -1 || flock(fd, LOCK_EX) == -1) {
		saved = errno;
		snprintf(why, wlen, "cannot lock " LIMITS_LOCK ": %s",
		    strerror(saved));
		if (fd != -1)
			close(fd);
		errno = saved;
		return -1;
	}
	/* Read under the lock: a change made meanwhile is kept. */
	if (limits_read(sp, &l, why, wlen) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	if (apply(&l, c, set_max, set_rate, clear, now) == 0 &&
	    write_rules(sp, &l) == 0)
		rc = 0;
	else
		snprintf(why, wlen, "%s", strerror(errno));
	saved = errno;
	limits_free(&l);
	close(fd);	/* the flock with it */
	errno = saved;
	return rc;
}
