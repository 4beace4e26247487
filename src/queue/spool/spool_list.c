/*
 * spool_list.c: read a spool's job state directories for `chute ls` and
 * `chute stats`: one pass over each, counting, and keeping the entries if
 * asked.  For stats also: when a running job's attempt started (its log).
 */
#include <sys/mman.h>
#include <sys/stat.h>
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
#include "queue/spool/spool_list.h"

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
