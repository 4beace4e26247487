/*
 * queue_spool_keys.c: the owner's side of the limits (base/sched.h).  The
 * owner is the spool's only claimer, so its counting is the limit: the
 * jobs of each key it has running (its claims, and the jobs an earlier
 * owner left in cur/ whose handler still runs: the orphans), the starts
 * of each rated scope in the last window, and, for a key at its limit,
 * its waiting jobs parked off the ready queue, so that a key at its
 * limit costs the claims of other keys nothing (a parked name is looked
 * at again only when its key has room).  The rules come from SPOOL/limits
 * (store/limits.c), read at start and on every change in the root.
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/nameq.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/limits.h"
#include "queue/spool/queue_spool.h"

#ifndef __unused
#define __unused __attribute__((__unused__))
#endif
#include <sys/tree.h>

/* The starts of one rated scope inside its window: a ring, oldest first. */
struct starts {
	msec_t	*t;
	size_t	 head, n, cap;
};

struct skey {
	RB_ENTRY(skey)	 by_name;
	long		 running;	/* claims and orphans of the key */
	struct nameq	*parked;	/* its jobs of new/ that wait for room */
	bool		 dropped;	/* names left out of a full parked */
	struct starts	 starts;
	char		 name[];
};

static int
cmp_key(struct skey *a, struct skey *b)
{
	return strcmp(a->name, b->name);
}

RB_HEAD(skeytree, skey);
RB_GENERATE_STATIC(skeytree, skey, by_name, cmp_key)

struct skeys {
	struct skeytree	 keys;
	size_t		 nkeys;
	size_t		 nparked;	/* names parked, all keys' */
	long		 running;	/* every claim and orphan */
	struct starts	 all;		/* LIM_ALL's starts */
	struct nameq	*rated;		/* keys waiting for a start to age out; key: mono */
	msec_t		 all_due;	/* mono: LIM_ALL's rate frees; 0 none */
	int		 sfd;		/* SPOOL/.starts, appended; -1 none */
	size_t		 sbytes;	/* written to it since it was made again */
	bool		 loaded;	/* spoolq_starts_load has run */
};

static struct skey *
key_find(struct spoolq *sq, const char *k)
{
	union {
		struct skey	 n;
		char		 buf[sizeof(struct skey) + KEY_MAX + 1];
	} probe;

	if (strlcpy(probe.n.name, k, KEY_MAX + 1) > KEY_MAX)
		return NULL;
	return RB_FIND(skeytree, &sq->keys->keys, &probe.n);
}

static struct skey *
key_get(struct spoolq *sq, const char *k)
{
	struct skey *e = key_find(sq, k);
	size_t n = strlen(k);

	if (e != NULL)
		return e;
	if ((e = calloc(1, sizeof(*e) + n + 1)) == NULL)
		return NULL;
	memcpy(e->name, k, n + 1);
	RB_INSERT(skeytree, &sq->keys->keys, e);
	sq->keys->nkeys++;
	return e;
}

/* A key that holds nothing any more is forgotten (memory follows use). */
static void
key_put(struct spoolq *sq, struct skey *e)
{
	if (e->running > 0 || e->starts.n > 0 || e->dropped ||
	    (e->parked != NULL && nameq_len(e->parked) > 0))
		return;
	RB_REMOVE(skeytree, &sq->keys->keys, e);
	sq->keys->nkeys--;
	nameq_free(e->parked);
	free(e->starts.t);
	free(e);
}

/* ---- the sliding windows ---- */

static void
starts_age(struct starts *s, msec_t per, msec_t mono)
{
	while (s->n > 0 && s->t[s->head] <= mono - per) {
		s->head = (s->head + 1) % s->cap;
		s->n--;
	}
}

/*
 * May one more start be made at mono, at most n per per ms?  Exact: no
 * window of per ms holds more than n starts, since a start is made only
 * while fewer than n were made in the per ms before it.  Otherwise *due:
 * when enough of them have aged out.
 */
static bool
starts_room(struct starts *s, long n, msec_t per, msec_t mono, msec_t *due)
{
	if (n <= 0)
		return true;
	starts_age(s, per, mono);
	if ((long)s->n < n)
		return true;
	/* A limit lowered below what the window holds: the older ones first. */
	*due = s->t[(s->head + s->n - (size_t)n) % s->cap] + per;
	return false;
}

static int
starts_add(struct starts *s, msec_t mono)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		msec_t *t = reallocarray(NULL, cap, sizeof(*t));

		if (t == NULL)
			return -1;
		for (size_t i = 0; i < s->n; i++)
			t[i] = s->t[(s->head + i) % s->cap];
		free(s->t);
		s->t = t;
		s->head = 0;
		s->cap = cap;
	}
	s->t[(s->head + s->n) % s->cap] = mono;
	s->n++;
	return 0;
}

static void	 starts_open(struct spoolq *);

/* ---- the rules ---- */

static const struct limit *
rule_all(struct spoolq *sq)
{
	for (int i = 0; i < sq->lim.n; i++)
		if (sq->lim.v[i].scope == LIM_ALL)
			return &sq->lim.v[i];
	return NULL;
}

/*
 * The rules of SPOOL/limits, read again (at start, and when the root
 * says the file changed).  A file that cannot be read or parsed is said
 * once, naming it and its line, and the last good rules stay.  Every
 * parked job is looked at again: the new rules may give it room.
 */
void
spoolq_limits_look(struct spoolq *sq)
{
	struct limits l;
	struct stat st;
	char why[256];
	struct skey *e;
	bool had = sq->lim.n > 0;

	if (fstatat(sq->sp.root, LIMITS_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		sq->lim_ino = st.st_ino;
		sq->lim_mtime = st.st_mtim;
	} else
		sq->lim_ino = 0;
	if (limits_read(&sq->sp, &l, why, sizeof(why)) == -1) {
		say_err("%s/" LIMITS_FILE ": %s; the rules read before stay",
		    sq->sp.path, why);
		return;
	}
	limits_free(&sq->lim);
	sq->lim = l;
	if (had || l.n > 0)
		say("%s/" LIMITS_FILE ": %d rule(s) in force", sq->sp.path,
		    l.n);
	if (sq->keys == NULL)
		return;
	starts_open(sq);
	sq->keys->all_due = 0;
	RB_FOREACH(e, skeytree, &sq->keys->keys)
		if (e->parked != NULL)
			spoolq_unpark(sq, e->name, nameq_len(e->parked));
}

/* The safety rescan's look: read again if the file is another or changed. */
void
spoolq_limits_recheck(struct spoolq *sq)
{
	struct stat st;

	if (fstatat(sq->sp.root, LIMITS_FILE, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (sq->lim_ino != 0 || sq->lim.n > 0)
			spoolq_limits_look(sq);
		return;
	}
	if (st.st_ino != sq->lim_ino ||
	    st.st_mtim.tv_sec != sq->lim_mtime.tv_sec ||
	    st.st_mtim.tv_nsec != sq->lim_mtime.tv_nsec)
		spoolq_limits_look(sq);
}

/*
 * Has the whole spool room for one more start (LIM_ALL)?  Otherwise the
 * owner looks again when a job ends, or when a start ages out.
 */
bool
spoolq_all_room(struct spoolq *sq)
{
	const struct limit *r;
	msec_t due;

	if (sq->lim.n == 0 || (r = rule_all(sq)) == NULL)
		return true;
	if (r->max > 0 && sq->keys->running >= r->max)
		return false;
	if (!starts_room(&sq->keys->all, r->rate_n, r->rate_ms, mono_ms(),
	    &due)) {
		sq->keys->all_due = due;
		return false;
	}
	return true;
}

/*
 * Has key k room for one more start (its own rule, else the default)?
 * When a start must age out first, the key is looked at again then.
 */
static bool
key_room(struct spoolq *sq, struct skey *e, const char *k)
{
	const struct limit *r = limit_for_key(sq->lim.v, sq->lim.n, k);
	msec_t due;

	if (r == NULL)
		return true;
	if (r->max > 0 && e != NULL && e->running >= r->max)
		return false;
	if (e != NULL && !starts_room(&e->starts, r->rate_n, r->rate_ms,
	    mono_ms(), &due)) {
		nameq_take(sq->keys->rated, k, NULL);
		nameq_add(sq->keys->rated, k, due, 0);
		return false;
	}
	return true;
}

bool
spoolq_key_room(struct spoolq *sq, const char *k)
{
	if (sq->lim.n == 0)
		return true;
	return key_room(sq, key_find(sq, k), k);
}

/*
 * Park new/name, of key k, at its key's limit: off the ready queue until
 * the key has room.  A key's parked names are bounded like the ready
 * window; names beyond it stay in new/ and are read again (a scan) once
 * the key has drained its parked ones.  False: no memory, it stays ready.
 */
bool
spoolq_park(struct spoolq *sq, const char *k, const char *name, int rank,
    int64_t age, unsigned flags)
{
	struct skey *e = key_get(sq, k);

	if (e == NULL || (e->parked == NULL &&
	    (e->parked = nameq_new()) == NULL))
		return false;
	if (nameq_len(e->parked) >= sq->window &&
	    nameq_after_max(e->parked, rank, age)) {
		e->dropped = true;
		return true;
	}
	switch (nameq_add_ranked(e->parked, name, rank, age, flags)) {
	case -1:
		return false;
	case 1:
		sq->keys->nparked++;
	}
	if (nameq_len(e->parked) > sq->window) {
		nameq_drop_max(e->parked);
		sq->keys->nparked--;
		e->dropped = true;
	}
	return true;
}

bool
spoolq_parked(struct spoolq *sq, const char *k, const char *name)
{
	struct skey *e = key_find(sq, k);

	return e != NULL && e->parked != NULL && nameq_has(e->parked, name);
}

/* Is key k parking its jobs: at its limit, with some waiting already? */
bool
spoolq_key_parking(struct spoolq *sq, const char *k)
{
	struct skey *e = key_find(sq, k);

	return e != NULL && e->parked != NULL && nameq_len(e->parked) > 0 &&
	    !key_room(sq, e, k);
}

/*
 * Up to n of key k's parked names, best first, to sq->unparked, which the
 * next claim admits to the ready queue (spoolq_admit_unparked) before it
 * pops one.
 */
void
spoolq_unpark(struct spoolq *sq, const char *k, size_t n)
{
	char name[NAME_MAX + 1];
	struct skey *e = key_find(sq, k);
	unsigned flags;

	if (e == NULL || e->parked == NULL)
		return;
	while (n-- > 0 && nameq_pop(e->parked, name, sizeof(name), &flags)) {
		sq->keys->nparked--;
		if (nameq_add(sq->unparked, name, 0, flags) == -1)
			sq->truncated = true;	/* no memory: a scan finds it */
	}
	if (nameq_len(e->parked) == 0 && e->dropped) {
		/* What the full parked left out is in new/: the refill reads it. */
		e->dropped = false;
		sq->truncated = true;
	}
	key_put(sq, e);
}

/* How many of key k's parked names one slot's end lets go. */
static size_t
room_of(struct spoolq *sq, struct skey *e, const char *k)
{
	const struct limit *r = limit_for_key(sq->lim.v, sq->lim.n, k);

	if (r == NULL || r->max == 0)
		return 1;
	return e->running < r->max ? (size_t)(r->max - e->running) : 0;
}

/* ---- the starts an owner's successor must know: SPOOL/.starts ---- */

/*
 * Each start that a rate counts is appended to SPOOL/.starts, "MS KEY"
 * (MS since the epoch, KEY "-" for none), so that an owner that takes
 * over after a kill -9 counts its predecessor's starts in each window
 * (spoolq_starts_load).  Not fsynced: a power loss ends the handlers too,
 * and the cost is one write per rated start.  The file is made again,
 * with only the lines still inside a window, at start and each
 * STARTS_MAX bytes.  A spool without a rate never gets the file.
 */
#define STARTS_FILE	".starts"
#define STARTS_MAX	(256 * 1024)

/* The longest window of any rule, 0 when none has a rate. */
static msec_t
longest_window(struct spoolq *sq)
{
	msec_t w = 0;

	for (int i = 0; i < sq->lim.n; i++)
		if (sq->lim.v[i].rate_n > 0 && sq->lim.v[i].rate_ms > w)
			w = sq->lim.v[i].rate_ms;
	return w;
}

/* .starts opened to append to, once loaded and a rule has a rate. */
static void
starts_open(struct spoolq *sq)
{
	if (sq->keys->sfd != -1 || !sq->keys->loaded ||
	    longest_window(sq) == 0)
		return;
	sq->keys->sfd = openat(sq->sp.root, STARTS_FILE, O_WRONLY | O_APPEND |
	    O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	sq->keys->sbytes = 0;
}

/* The lines of .starts younger than keep ms, into tmp/ then over it. */
static void
starts_compact(struct spoolq *sq, const char *text, size_t len, msec_t keep)
{
	char tmp[64];
	msec_t now = now_ms();
	const char *p = text, *nl;
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "starts.%ld", (long)getpid());
	fd = openat(sq->sp.dir[ST_TMP], tmp, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1 || (f = fdopen(fd, "w")) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	for (; p < text + len; p = nl + 1) {
		long long t;

		if ((nl = memchr(p, '\n', (size_t)(text + len - p))) == NULL)
			break;
		if (sscanf(p, "%lld", &t) == 1 && now - t < keep)
			fwrite(p, 1, (size_t)(nl + 1 - p), f);
	}
	/* No fsync: the file is for a successor on this boot only. */
	if (fclose(f) != 0 || renameat(sq->sp.dir[ST_TMP], tmp, sq->sp.root,
	    STARTS_FILE) == -1)
		unlinkat(sq->sp.dir[ST_TMP], tmp, 0);
}

/* SPOOL/.starts whole, malloc'ed into *text: its length, or -1. */
static ssize_t
starts_read(struct spoolq *sq, char **text)
{
	struct stat st;
	ssize_t n = -1;
	int fd;

	*text = NULL;
	fd = openat(sq->sp.root, STARTS_FILE, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC);
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size <= 4 * STARTS_MAX &&
	    (*text = malloc((size_t)st.st_size + 1)) != NULL)
		n = read_full(fd, *text, (size_t)st.st_size);
	close(fd);
	return n;
}

/* One line of .starts into the windows it still counts in. */
static void
starts_seed(struct spoolq *sq, long long t, const char *k, msec_t real,
    msec_t mono)
{
	const struct limit *r;
	msec_t age = real - t < 0 ? 0 : real - t;
	const char *why;
	struct skey *e;

	if ((r = rule_all(sq)) != NULL && r->rate_n > 0 && age < r->rate_ms)
		starts_add(&sq->keys->all, mono - age);
	if (strcmp(k, "-") == 0 || !key_valid(k, &why))
		return;
	r = limit_for_key(sq->lim.v, sq->lim.n, k);
	if (r != NULL && r->rate_n > 0 && age < r->rate_ms &&
	    (e = key_get(sq, k)) != NULL) {
		starts_add(&e->starts, mono - age);
		nameq_take(sq->keys->rated, k, NULL);
		nameq_add(sq->keys->rated, k, mono - age + r->rate_ms, 0);
	}
}

/*
 * At start, after the rules are read: the starts an earlier owner made
 * inside each window count, so that a restart lets no window hold more
 * than its rate.  Then the file is made again and opened to append to.
 */
void
spoolq_starts_load(struct spoolq *sq)
{
	msec_t keep = longest_window(sq), real = now_ms(), mono = mono_ms();
	char *text, *p, *nl, k[KEY_MAX + 2];
	ssize_t n = starts_read(sq, &text);
	long long t;

	if (n > 0 && keep > 0) {
		text[n] = '\0';
		for (p = text; (nl = strchr(p, '\n')) != NULL; p = nl + 1)
			if (sscanf(p, "%lld %65s", &t, k) == 2)
				starts_seed(sq, t, k, real, mono);
	}
	if (n >= 0 && keep > 0)
		starts_compact(sq, text, (size_t)n, keep);
	free(text);
	sq->keys->loaded = true;
	starts_open(sq);
}

static void
starts_note(struct spoolq *sq, const char *k)
{
	char line[KEY_MAX + 32], *text;
	int n = snprintf(line, sizeof(line), "%lld %s\n",
	    (long long)now_ms(), *k != '\0' ? k : "-");
	ssize_t len;

	if (sq->keys->sfd == -1)
		return;
	if (write(sq->keys->sfd, line, (size_t)n) == n)
		sq->keys->sbytes += (size_t)n;
	if (sq->keys->sbytes < STARTS_MAX)
		return;
	/* Made again without what aged out of every window. */
	if ((len = starts_read(sq, &text)) >= 0)
		starts_compact(sq, text, (size_t)len, longest_window(sq));
	free(text);
	close(sq->keys->sfd);
	sq->keys->sfd = -1;
	starts_open(sq);
}

/* ---- counting ---- */

/*
 * A job of key k (or none: "") starts, or an orphan of an earlier owner
 * is found running (orphan: no start is counted for the rates).
 */
void
spoolq_key_run(struct spoolq *sq, const char *k, bool orphan)
{
	const struct limit *r;
	struct skey *e;
	msec_t mono = mono_ms();

	bool rated = false;

	sq->keys->running++;
	if (!orphan && (r = rule_all(sq)) != NULL && r->rate_n > 0) {
		starts_add(&sq->keys->all, mono);
		rated = true;
	}
	if (*k != '\0' && (e = key_get(sq, k)) != NULL) {
		e->running++;
		r = limit_for_key(sq->lim.v, sq->lim.n, k);
		if (!orphan && r != NULL && r->rate_n > 0) {
			starts_add(&e->starts, mono);
			rated = true;
		}
	}
	if (rated)
		starts_note(sq, k);
}

/* A job of key k ended (its handler is gone), or an orphan left cur/. */
void
spoolq_key_done(struct spoolq *sq, const char *k)
{
	struct skey *e;

	if (sq->keys->running > 0)
		sq->keys->running--;
	if (*k == '\0' || (e = key_find(sq, k)) == NULL)
		return;
	if (e->running > 0)
		e->running--;
	if (e->parked != NULL && nameq_len(e->parked) > 0)
		spoolq_unpark(sq, k, room_of(sq, e, k));
	else
		key_put(sq, e);
}

/* Keys whose starts aged out: their parked jobs are looked at again. */
void
spoolq_keys_due(struct spoolq *sq, msec_t mono)
{
	char k[KEY_MAX + 1];
	struct skey *e;

	if (sq->keys->all_due != 0 && sq->keys->all_due <= mono)
		sq->keys->all_due = 0;
	while (nameq_min_key(sq->keys->rated) <= mono &&
	    nameq_pop(sq->keys->rated, k, sizeof(k), NULL)) {
		if ((e = key_find(sq, k)) == NULL)
			continue;
		if (e->parked != NULL && nameq_len(e->parked) > 0)
			spoolq_unpark(sq, k, room_of(sq, e, k));
	}
}

size_t
spoolq_nparked(struct spoolq *sq)
{
	return sq->keys != NULL ? sq->keys->nparked : 0;
}

msec_t
spoolq_keys_next(struct spoolq *sq)
{
	msec_t t = nameq_min_key(sq->keys->rated);

	if (sq->keys->all_due != 0)
		t = min_ms(t, sq->keys->all_due);
	return t;
}

/* A key's name from a job's: "" when it has none (or a bad one). */
void
spoolq_name_key(const char *name, char *k, size_t len)
{
	struct jobattr a;
	const char *why;

	k[0] = '\0';
	if (strchr(name, ',') != NULL && jobattr_parse(name, &a, &why) == 0)
		strlcpy(k, a.key, len);
}

int
spoolq_keys_new(struct spoolq *sq)
{
	if ((sq->keys = calloc(1, sizeof(*sq->keys))) == NULL)
		return -1;
	sq->keys->sfd = -1;
	RB_INIT(&sq->keys->keys);
	if ((sq->keys->rated = nameq_new()) == NULL) {
		free(sq->keys);
		sq->keys = NULL;
		return -1;
	}
	return 0;
}

void
spoolq_keys_free(struct spoolq *sq)
{
	struct skey *e;

	if (sq->keys == NULL)
		return;
	while ((e = RB_MIN(skeytree, &sq->keys->keys)) != NULL) {
		RB_REMOVE(skeytree, &sq->keys->keys, e);
		nameq_free(e->parked);
		free(e->starts.t);
		free(e);
	}
	nameq_free(sq->keys->rated);
	if (sq->keys->sfd != -1)
		close(sq->keys->sfd);
	free(sq->keys->all.t);
	free(sq->keys);
	sq->keys = NULL;
	limits_free(&sq->lim);
}
