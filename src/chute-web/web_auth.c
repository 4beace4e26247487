/*
 * web_auth.c: who may use the dashboard's actions.  The users and their
 * password hashes come from a file the operator made (--auth-file), never
 * from the command line; a password is checked with crypt(3) (libcrypt:
 * yescrypt, sha512-crypt...).  Each user has a CSRF token, random for
 * this process, that every form carries.
 */
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <crypt.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "chute-web/web.h"

#define USER_MAX	64	/* a user name's bytes, and its NUL */
#define HASH_MAX	512
#define PASS_MAX	1024	/* a longer password is refused unread */
#define FILE_MAX	65536
#define ACL_MAX		8192	/* an access ACL's bytes: 1,000 entries */

struct user {
	char	 name[USER_MAX];
	char	 hash[HASH_MAX];
	char	 token[33];
};

/* A password that was right, remembered for WEB_AUTH_TTL_MS. */
struct cached {
	int	 user;			/* -1: free */
	char	*pass;
	msec_t	 until;			/* mono_ms() */
};

struct web_auth {
	struct user	 u[WEB_USERS];
	int		 n;
	int		 dear;		/* the user whose crypt took longest */
	int64_t		 floor_ns;	/* ... how long: a refusal's least */
	pthread_mutex_t	 mu;		/* guards c */
	struct cached	 c[WEB_AUTH_CACHE];
};

/* Equal strings?  In a time that depends on their lengths only. */
static bool
same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static bool
name_ok(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789._@-");

	return n > 0 && n < USER_MAX && s[n] == '\0';
}

static int
token_new(char *hex)
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* "chute: PATH:LINE: why" on stderr; returns -1. */
static int bad_line(const char *path, int lineno, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad_line(const char *path, int lineno, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "chute: %s:%d: ", path, lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* One "user:HASH" line into a->u[a->n]: 0, or -1 after saying why. */
static int
add_user(struct web_auth *a, const char *path, int lineno, char *line)
{
	char *colon = strchr(line, ':');
	struct user *u = &a->u[a->n];
	int salt;

	if (colon == NULL || colon == line)
		return bad_line(path, lineno, "want user:HASH");
	*colon = '\0';
	if (!name_ok(line))
		return bad_line(path, lineno, "a user name is 1-%d of A-Z a-z "
		    "0-9 . _ @ -", USER_MAX - 1);
	salt = crypt_checksalt(colon + 1);
	if (colon[1] != '$' || strlen(colon + 1) >= HASH_MAX ||
	    (salt != CRYPT_SALT_OK && salt != CRYPT_SALT_TOO_CHEAP))
		return bad_line(path, lineno, "%s: not a password hash this "
		    "crypt(3) takes (make one with mkpasswd or openssl passwd "
		    "-6)", line);
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->u[i].name, line) == 0)
			return bad_line(path, lineno, "%s: a second time", line);
	strlcpy(u->name, line, sizeof(u->name));
	strlcpy(u->hash, colon + 1, sizeof(u->hash));
	if (token_new(u->token) == -1)
		return bad_line(path, lineno, "getrandom: %s", strerror(errno));
	a->n++;
	return 0;
}

static int
parse(struct web_auth *a, const char *path, char *text)
{
	int lineno = 0;

	for (char *line = text, *next; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		lineno++;
		if (*line == '\0' || *line == '#')
			continue;
		if (a->n == WEB_USERS)
			return bad_line(path, lineno, "more than %d users",
			    WEB_USERS);
		if (add_user(a, path, lineno, line) == -1)
			return -1;
	}
	if (a->n > 0)
		return 0;
	fprintf(stderr, "chute: %s: no user in it (lines user:HASH)\n", path);
	return -1;
}

/*
 * Does fd's access ACL let a user or group of its own (setfacl -m u:bob:r)
 * read or write it?  Its mode then shows the ACL's mask as the group's
 * bits: 0640, whoever else reads.  Read as the kernel stores it (the
 * xattr system.posix_acl_access), so that chute-web needs no libacl.
 * 0 no (no ACL, or none on this file system), 1 yes (*whom says who,
 * "user 1000"), -1 with errno.
 */
static int
acl_grants(int fd, char *whom, size_t len)
{
	unsigned char x[ACL_MAX];
	struct posix_acl_xattr_header h;
	struct posix_acl_xattr_entry e;
	unsigned mask = ACL_READ | ACL_WRITE | ACL_EXECUTE;
	ssize_t n = fgetxattr(fd, "system.posix_acl_access", x, sizeof(x));

	if (n == -1)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -1;
	if (n >= (ssize_t)sizeof(h))
		memcpy(&h, x, sizeof(h));
	if (n < (ssize_t)sizeof(h) || le32toh(h.a_version) !=
	    POSIX_ACL_XATTR_VERSION) {
		errno = EPROTO;
		return -1;
	}
	/* The mask bounds every named entry: find it first. */
	for (size_t o = sizeof(h); o + sizeof(e) <= (size_t)n; o += sizeof(e)) {
		memcpy(&e, x + o, sizeof(e));
		if (le16toh(e.e_tag) == ACL_MASK)
			mask = le16toh(e.e_perm);
	}
	for (size_t o = sizeof(h); o + sizeof(e) <= (size_t)n; o += sizeof(e)) {
		unsigned tag;

		memcpy(&e, x + o, sizeof(e));
		tag = le16toh(e.e_tag);
		if ((tag == ACL_USER || tag == ACL_GROUP) &&
		    (le16toh(e.e_perm) & mask & (ACL_READ | ACL_WRITE))) {
			snprintf(whom, len, "%s %u", tag == ACL_USER ? "user" :
			    "group", (unsigned)le32toh(e.e_id));
			return 1;
		}
	}
	return 0;
}

/*
 * Refused if others may read or write the file, by its mode or its ACL,
 * or its group write it; or if it is another user's than ours or root's:
 * its owner may write it, whatever its mode says, and chmod it.  0, or
 * -1 after saying why.
 */
static int
check_private(int fd, const char *path, const struct stat *st)
{
	char whom[64];
	int g;

	if (!S_ISREG(st->st_mode))
		fprintf(stderr, "chute: %s: not a regular file\n", path);
	else if (st->st_uid != geteuid() && st->st_uid != 0)
		fprintf(stderr, "chute: %s: owned by user %lu, who may change "
		    "it; chown it to root or to user %lu\n", path,
		    (unsigned long)st->st_uid, (unsigned long)geteuid());
	else if (st->st_mode & (S_IRWXO | S_IWGRP))
		fprintf(stderr, "chute: %s: mode %04o: %s may %s it; chmod "
		    "go-w,o-r %s\n", path, (unsigned)(st->st_mode & 07777),
		    st->st_mode & S_IRWXO ? "others" : "its group",
		    st->st_mode & (S_IROTH | S_IXOTH) ? "read" : "write", path);
	else if ((g = acl_grants(fd, whom, sizeof(whom))) == -1)
		fprintf(stderr, "chute: %s: its ACL: %s\n", path,
		    strerror(errno));
	else if (g == 1)
		fprintf(stderr, "chute: %s: its ACL lets %s read or write it; "
		    "setfacl -b %s\n", path, whom, path);
	else if (st->st_size > FILE_MAX)
		fprintf(stderr, "chute: %s: over %d bytes\n", path, FILE_MAX);
	else
		return 0;
	return -1;
}

/*
 * The file's text, if only its owner (and its group, to read) may get at
 * it: a hash others can read can be attacked offline.
 */
static char *
read_private(const char *path)
{
	/* O_NONBLOCK: a FIFO in its place is refused, not waited on. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *text = NULL;
	ssize_t n = -1;

	if (fd == -1 || fstat(fd, &st) == -1) {
		fprintf(stderr, "chute: %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (check_private(fd, path, &st) == -1)
		goto out;
	if ((text = calloc(1, (size_t)st.st_size + 1)) == NULL ||
	    (n = read_full(fd, text, (size_t)st.st_size)) == -1) {
		fprintf(stderr, "chute: %s: %s\n", path, strerror(errno));
		free(text);
		text = NULL;
	} else
		text[n] = '\0';
out:
	if (fd != -1)
		close(fd);
	return text;
}

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* crypt(3) of pass with setting as the setting: the hash, or NULL. */
static const char *
hash_with(const char *pass, const char *setting, struct crypt_data *cd)
{
	const char *h = crypt_rn(pass, setting, cd, (int)sizeof(*cd));

	return h != NULL && h[0] != '*' ? h : NULL;
}

/*
 * Put each user's hash through crypt(3) once, timed, with a password
 * nobody has (random): the dearest is the setting an unknown name is
 * checked against, and its time the least a refusal takes.  A start-up
 * costs one crypt per user, once; a check then costs one crypt at most.
 */
static void
time_hashes(struct web_auth *a)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	char pass[33] = "";

	(void)token_new(pass);	/* on failure "": as dear to check */
	for (int i = 0; i < a->n; i++) {
		int64_t t0 = mono_ns(), t;

		if (cd != NULL)
			hash_with(pass, a->u[i].hash, cd);
		if ((t = mono_ns() - t0) > a->floor_ns) {
			a->floor_ns = t;
			a->dear = i;
		}
	}
	if (a->floor_ns > WEB_AUTH_WAIT_MS * INT64_C(1000000))
		a->floor_ns = WEB_AUTH_WAIT_MS * INT64_C(1000000);
	if (cd != NULL)
		explicit_bzero(cd, sizeof(*cd));
	free(cd);
}

struct web_auth *
web_auth_load(const char *path)
{
	struct web_auth *a = calloc(1, sizeof(*a));
	char *text = read_private(path);

	if (a == NULL || text == NULL || parse(a, path, text) == -1) {
		if (a != NULL && text != NULL)
			explicit_bzero(a, sizeof(*a));
		free(a);
		free(text);
		return NULL;
	}
	explicit_bzero(text, strlen(text));
	free(text);
	time_hashes(a);
	pthread_mutex_init(&a->mu, NULL);
	for (int i = 0; i < WEB_AUTH_CACHE; i++)
		a->c[i].user = -1;
	return a;
}

static void
forget(struct cached *c)
{
	if (c->pass != NULL) {
		explicit_bzero(c->pass, strlen(c->pass));
		free(c->pass);
	}
	c->pass = NULL;
	c->user = -1;
}

/* Is (u, pass) remembered, and still fresh?  Under a->mu. */
static bool
remembered(struct web_auth *a, int u, const char *pass, msec_t now)
{
	bool hit = false;

	for (int i = 0; i < WEB_AUTH_CACHE; i++) {
		struct cached *c = &a->c[i];

		if (c->user != -1 && c->until <= now)
			forget(c);
		if (c->user == u && same(c->pass, pass))
			hit = true;
	}
	return hit;
}

/* Remember (u, pass) in a free slot, else in the one to expire first. */
static void
remember(struct web_auth *a, int u, const char *pass, msec_t now)
{
	struct cached *c = &a->c[0];

	for (int i = 0; i < WEB_AUTH_CACHE; i++)
		if (a->c[i].user == -1 || a->c[i].until < c->until)
			c = &a->c[i];
	forget(c);
	if ((c->pass = strdup(pass)) == NULL)
		return;
	c->user = u;
	c->until = now + WEB_AUTH_TTL_MS;
}

/*
 * Is pass user u's?  One crypt(3), whatever the name: with u's hash as
 * the setting, or for a name not in the file (u -1) with the dearest
 * user's, its result thrown away: an unknown name costs what the dearest
 * user costs, never more (a crypt per user of the file, as before, let a
 * request without credentials cost the sum of them all).
 */
static bool
verify(struct web_auth *a, int u, const char *pass)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *h;
	bool ok;

	if (cd == NULL)
		return false;
	h = hash_with(pass, a->u[u == -1 ? a->dear : u].hash, cd);
	ok = u != -1 && h != NULL && same(h, a->u[u].hash);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

/*
 * Wait, not compute, until a refusal begun at t0 has taken as long as the
 * dearest user's crypt: a wrong password for a cheap user then takes as
 * long as one for the dearest, or an unknown name's.  The wait holds the
 * connection's thread (one of WEB_CONN_MAX places) asleep, no CPU, for
 * less time than the crypts of every user held it before, and far less
 * than the WEB_REQUEST_S a client trickling its headers may hold one
 * anyway.  The request is whole by then (on_request calls web_late_whole
 * before checking credentials), so web_late.c's deadline is not running
 * and cannot cut the 401 short; the wait is bounded by WEB_AUTH_WAIT_MS,
 * well within WEB_REQUEST_S, however dear the hashes.
 */
static void
wait_floor(const struct web_auth *a, int64_t t0)
{
	int64_t end = t0 + a->floor_ns;
	struct timespec ts = { .tv_sec = (time_t)(end / 1000000000),
	    .tv_nsec = (long)(end % 1000000000) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
	    NULL) == EINTR)
		continue;
}

int
web_auth_check(struct web_auth *a, const char *user, const char *pass)
{
	int64_t t0 = mono_ns();
	msec_t now = mono_ms();
	int u = -1;
	bool hit = false;

	for (int i = 0; i < a->n; i++)
		if (strcmp(a->u[i].name, user) == 0)
			u = i;
	if (strlen(pass) > PASS_MAX)
		return -1;
	if (u != -1) {
		pthread_mutex_lock(&a->mu);
		hit = remembered(a, u, pass, now);
		pthread_mutex_unlock(&a->mu);
	}
	if (hit)
		return u;
	if (!verify(a, u, pass)) {
		wait_floor(a, t0);
		return -1;
	}
	pthread_mutex_lock(&a->mu);
	remember(a, u, pass, now);
	pthread_mutex_unlock(&a->mu);
	return u;
}

const char *
web_auth_name(struct web_auth *a, int u)
{
	return a->u[u].name;
}

const char *
web_auth_token(struct web_auth *a, int u)
{
	return a->u[u].token;
}

bool
web_auth_token_ok(struct web_auth *a, int u, const char *tok)
{
	return tok != NULL && same(a->u[u].token, tok);
}

void
web_auth_free(struct web_auth *a)
{
	if (a == NULL)
		return;
	for (int i = 0; i < WEB_AUTH_CACHE; i++)
		forget(&a->c[i]);
	pthread_mutex_destroy(&a->mu);
	explicit_bzero(a, sizeof(*a));
	free(a);
}
