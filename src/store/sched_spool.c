/*
 * sched_spool.c: a spool's recurring jobs (spool-layout.md, "Recurring
 * jobs").  SPOOL/schedules/NAME/ holds a schedule: its declaration
 * (schedule), the last tick made (last) and, between the two steps of a
 * pass, the jobs of its plan (plan/ID).  Every pass over a schedule holds
 * a flock on its directory, so the schedulers of a spool (one host: a
 * spool is local) make its ticks one at a time; a scheduler killed
 * anywhere leaves either no plan (nothing was made: the next pass plans
 * again) or a whole plan, which the next pass finishes.  So each tick's
 * job is made once: a plan holds only ticks after last, last moves to
 * the plan's latest before any of its jobs is released, and a release is
 * a rename, which moves the one staged file.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/tick.h"
#include "store/sched_spool.h"
#include "store/spool.h"
#include "store/state.h"

#define EX_DATAERR	65
#define SCHED_DIR	"schedules"
#define SCHED_LOCK_MS	5000	/* longest wait for another scheduler's pass */
#define SCHED_FORMAT	"chute-schedule 1"

/* A declaration, as `schedule` holds it. */
struct decl {
	struct tick_sched ts;
	msec_t		 since;		/* when it was declared */
	char		*body;		/* the whole file */
	size_t		 len, off;	/* its size; where the payload starts */
};

/* SPOOL/schedules, made (with cur/'s mode: the owner's) when create. */
static int
sdir_open(struct spool *sp, bool create)
{
	struct stat st;
	int fd;

	if (create && fstat(sp->dir[ST_CUR], &st) == 0 &&
	    mkdirat(sp->root, SCHED_DIR, 0700) == 0) {
		if ((fd = openat(sp->root, SCHED_DIR, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC)) != -1)
			fchmod(fd, st.st_mode & 07777);
		/* The directory's name must outlive a power loss. */
		fsync(sp->root);
		return fd;
	}
	return openat(sp->root, SCHED_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
}

/*
 * name in dirfd written whole: a dot-file first, fsynced, renamed over
 * name, the directory fsynced; a crash leaves the old file or the new
 * one.  0, or -1 with errno.
 */
static int
put_file(int dirfd, const char *name, const char *a, size_t alen,
    const char *b, size_t blen)
{
	char tmp[SCHED_NAME_MAX + 32];
	int fd, saved;

	snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid());
	unlinkat(dirfd, tmp, 0);
	if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	if (write_all(fd, a, alen) == -1 || write_all(fd, b, blen) == -1 ||
	    fsync(fd) == -1)
		goto fail;
	if (close(fd) == -1 || (fd = -1, renameat(dirfd, tmp, dirfd, name)) == -1)
		goto fail;
	return fsync(dirfd);
fail:
	saved = errno;
	if (fd != -1)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	errno = saved;
	return -1;
}

static int
say_path(struct spool *sp, const char *name, const char *what, int rc)
{
	fprintf(stderr, "chute: %s/" SCHED_DIR "/%s%s%s: %s\n", sp->path, name,
	    *what ? "/" : "", what, strerror(errno));
	return rc;
}

/* Hold dirfd's flock, waiting SCHED_LOCK_MS at most: 0, or -1 (errno). */
static int
lock_wait(int dirfd)
{
	msec_t end = mono_ms() + SCHED_LOCK_MS;
	struct timespec nap = { 0, 10 * 1000000 };

	while (flock(dirfd, LOCK_EX | LOCK_NB) == -1) {
		if (errno != EWOULDBLOCK || mono_ms() >= end)
			return -1;
		nanosleep(&nap, NULL);
	}
	return 0;
}

int
sched_spool_declare(struct spool *sp, const char *name,
    const struct tick_sched *ts, const char *payload, size_t len,
    bool *created)
{
	char hdr[256], tmp[SCHED_NAME_MAX + 32];
	int sdir, fd, rc = 0;

	snprintf(hdr, sizeof(hdr), SCHED_FORMAT "\nevery %lld\noffset %lld\n"
	    "catch-up %s\nsince %lld\n\n", (long long)ts->every,
	    (long long)ts->offset, catchup_name(ts->mode),
	    (long long)now_ms());
	if ((sdir = sdir_open(sp, true)) == -1)
		return say_path(sp, "", "", EX_IOERR);
	*created = false;
	for (int round = 0; round < 2; round++) {
		if ((fd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC)) != -1) {
			/* A change: the new declaration replaces the old whole. */
			if (put_file(fd, "schedule", hdr, strlen(hdr), payload,
			    len) == -1)
				rc = say_path(sp, name, "schedule", EX_IOERR);
			close(fd);
			break;
		}
		/* A new one appears whole: made aside, then renamed in. */
		snprintf(tmp, sizeof(tmp), ".new.%s.%ld", name, (long)getpid());
		if (mkdirat(sdir, tmp, 0700) == -1 || (fd = openat(sdir, tmp,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
			rc = say_path(sp, tmp, "", EX_IOERR);
			break;
		}
		if (put_file(fd, "schedule", hdr, strlen(hdr), payload, len) ==
		    -1) {
			rc = say_path(sp, tmp, "schedule", EX_IOERR);
			unlinkat(fd, "schedule", 0);
		} else if (renameat2(sdir, tmp, sdir, name, RENAME_NOREPLACE) == 0) {
			*created = true;
			if (fsync(sdir) == -1)
				rc = say_path(sp, "", "", EX_IOERR);
			close(fd);
			break;
		}
		/* EEXIST: declared meanwhile by another; change it instead. */
		unlinkat(fd, "schedule", 0);
		close(fd);
		unlinkat(sdir, tmp, AT_REMOVEDIR);
		if (rc != 0 || errno != EEXIST) {
			rc = rc ? rc : say_path(sp, name, "", EX_IOERR);
			break;
		}
	}
	close(sdir);
	return rc;
}

/* Read the whole of name in dirfd into a NUL-terminated buffer: NULL, errno. */
static char *
slurp_at(int dirfd, const char *name, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *b = NULL;
	ssize_t n;

	if (fd == -1)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size < (80LL << 20) &&
	    (b = malloc((size_t)st.st_size + 1)) != NULL &&
	    (n = read_full(fd, b, (size_t)st.st_size)) == st.st_size) {
		b[n] = '\0';
		*len = (size_t)n;
	} else {
		if (b != NULL && errno == 0)
			errno = EIO;
		free(b);
		b = NULL;
	}
	close(fd);
	return b;
}

static int
decl_line(struct decl *d, const char *line)
{
	long long v;
	char mode[16];

	if (sscanf(line, "every %lld", &v) == 1)
		d->ts.every = v;
	else if (sscanf(line, "offset %lld", &v) == 1)
		d->ts.offset = v;
	else if (sscanf(line, "since %lld", &v) == 1)
		d->since = v;
	else if (sscanf(line, "catch-up %15s", mode) == 1)
		return catchup_parse(mode, &d->ts.mode);
	else if (strcmp(line, SCHED_FORMAT) != 0)
		return -1;
	return 0;
}

/* NAME/schedule into *d: 0, or an exit status (said). */
static int
decl_read(struct spool *sp, int fd, const char *name, struct decl *d)
{
	static msec_t said;
	const char *why = NULL;
	char *p, *nl;

	memset(d, 0, sizeof(*d));
	d->ts.every = -1;
	if ((d->body = slurp_at(fd, "schedule", &d->len)) == NULL)
		return say_path(sp, name, "schedule", EX_IOERR);
	for (p = d->body; (nl = strchr(p, '\n')) != NULL && nl != p; p = nl + 1) {
		*nl = '\0';
		if (decl_line(d, p) == -1)
			why = "a line chute did not write";
		*nl = '\n';
	}
	if (nl == NULL)
		why = "no blank line before the payload";
	else
		d->off = (size_t)(nl + 1 - d->body);
	if (why == NULL && tick_sched_check(&d->ts, &why) == 0)
		return 0;
	/* tick --follow passes every second: said once a minute. */
	if (said == 0 || mono_ms() - said >= 60000) {
		said = mono_ms();
		fprintf(stderr, "chute: %s/" SCHED_DIR "/%s/schedule: %s: "
		    "skipped\n", sp->path, name, why);
	}
	free(d->body);
	d->body = NULL;
	return EX_DATAERR;
}

/* NAME/last into *last (-1: none yet): 0, or an exit status (said). */
static int
last_read(struct spool *sp, int fd, const char *name, msec_t *last)
{
	const char *err;
	size_t len;
	char *b = slurp_at(fd, "last", &len);

	*last = -1;
	if (b == NULL)
		return errno == ENOENT ? 0 : say_path(sp, name, "last", EX_IOERR);
	b[strcspn(b, "\n")] = '\0';
	*last = strtonum(b, -(1LL << 50), 1LL << 50, &err);
	free(b);
	if (err == NULL)
		return 0;
	fprintf(stderr, "chute: %s/" SCHED_DIR "/%s/last: not a time: "
	    "skipped\n", sp->path, name);
	return EX_DATAERR;
}

static int
last_write(int fd, msec_t t)
{
	char b[32];

	snprintf(b, sizeof(b), "%lld\n", (long long)t);
	return put_file(fd, "last", b, strlen(b), "", 0);
}

/* The staged tick id, released into new/ unless its ID is a job's already. */
static int
release(struct spool *sp, int pfd, const char *name, const char *id)
{
	int st = spool_locate(sp, id, NULL);

	if (st == ST_NONE && state_release_tick(sp, pfd, id) == 0)
		return 0;
	if (st == ST_NONE && errno == ENOENT)
		return 0;
	if (st == ST_NONE && errno != EEXIST)
		return say_path(sp, name, "plan", EX_IOERR);
	/* Someone submitted --id NAME@TICK: that job stands for the tick. */
	fprintf(stderr, "chute: %s/%s/%s: a job of this ID exists: tick not "
	    "made again\n", sp->path, state_names[st == ST_NONE ? ST_NEW : st],
	    id);
	unlinkat(pfd, id, 0);
	return 0;
}

/*
 * A whole plan left by the last pass (killed, or this one's own): last
 * moved to its latest tick, then each job released.  0 when there is
 * none or it is done, or an exit status (said).
 */
static int
finish(struct spool *sp, int fd, const char *name, msec_t *last)
{
	msec_t t, max = -1;
	struct dirent *e;
	int pfd, rc = 0;
	DIR *d;

	if ((pfd = openat(fd, "plan", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : say_path(sp, name, "plan", EX_IOERR);
	if ((d = fdopendir(fcntl(pfd, F_DUPFD_CLOEXEC, 0))) == NULL) {
		close(pfd);
		return say_path(sp, name, "plan", EX_IOERR);
	}
	while ((e = readdir(d)) != NULL)
		if (tick_of_id(name, e->d_name, &t) == 0 && t > max)
			max = t;
	if (max > *last) {
		if (last_write(fd, max) == -1)
			rc = say_path(sp, name, "last", EX_IOERR);
		else
			*last = max;
	}
	rewinddir(d);
	while (rc == 0 && (e = readdir(d)) != NULL)
		if (tick_of_id(name, e->d_name, &t) == 0)
			rc = release(sp, pfd, name, e->d_name);
	closedir(d);
	/* new/ first: once its entries are durable, the plan may go. */
	if (rc == 0 && (spool_sync(sp) == -1 || fsync(pfd) == -1))
		rc = say_path(sp, name, "plan", EX_IOERR);
	close(pfd);
	if (rc == 0 && unlinkat(fd, "plan", AT_REMOVEDIR) == -1)
		rc = say_path(sp, name, "plan", EX_IOERR);
	return rc;
}

/* A plan dir half written by a killed pass: nothing of it was made. */
static void
drop_dir(int fd, const char *dir)
{
	int pfd = openat(fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	if (pfd != -1 && (d = fdopendir(pfd)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.' || (e->d_name[1] != '\0' &&
			    strcmp(e->d_name, "..") != 0))
				unlinkat(pfd, e->d_name, 0);
		closedir(d);
	} else if (pfd != -1) {
		close(pfd);
	}
	unlinkat(fd, dir, AT_REMOVEDIR);
}

/*
 * Each half-written .plan.PID of a killed pass, removed, and each .last.PID
 * (written only under the lock that is held now: a killed pass's).
 */
static void
drop_partial(int fd)
{
	struct dirent *e;
	DIR *d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 0));

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, ".plan.", 6) == 0)
			drop_dir(fd, e->d_name);
		else if (strncmp(e->d_name, ".last.", 6) == 0)
			unlinkat(fd, e->d_name, 0);
	closedir(d);
}

/* One staged job: the payload, its mtime the tick, fsynced. */
static int
stage_one(struct spool *sp, int pfd, const char *id, const struct decl *d,
    msec_t tick)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
	    { tick / 1000, (long)(tick % 1000) * 1000000 } };
	int f = openat(pfd, id, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, spool_fmode(sp, ST_NEW)), saved;

	if (f == -1)
		return -1;
	if (write_all(f, d->body + d->off, d->len - d->off) == -1 ||
	    futimens(f, ts) == -1 || fsync(f) == -1) {
		saved = errno;
		close(f);
		errno = saved;
		return -1;
	}
	return close(f);
}

/*
 * The plan's jobs written in .plan.PID, which then becomes plan/ in one
 * rename: a pass killed before it leaves nothing made.  0, or a status.
 */
static int
stage(struct spool *sp, int fd, const char *name, const struct decl *d,
    const msec_t *ticks, int n)
{
	char tmp[32], id[TICK_ID_MAX + 1];
	int pfd, rc = 0;

	snprintf(tmp, sizeof(tmp), ".plan.%ld", (long)getpid());
	if (mkdirat(fd, tmp, 0700) == -1 || (pfd = openat(fd, tmp, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return say_path(sp, name, tmp, EX_IOERR);
	for (int i = 0; i < n && rc == 0; i++) {
		tick_id(name, ticks[i], id, sizeof(id));
		if (stage_one(sp, pfd, id, d, ticks[i]) == -1)
			rc = say_path(sp, name, tmp, EX_IOERR);
	}
	if (rc == 0 && fsync(pfd) == -1)
		rc = say_path(sp, name, tmp, EX_IOERR);
	close(pfd);
	if (rc == 0 && (renameat2(fd, tmp, fd, "plan", RENAME_NOREPLACE) == -1 ||
	    fsync(fd) == -1))
		rc = say_path(sp, name, "plan", EX_IOERR);
	if (rc != 0)
		drop_dir(fd, tmp);
	return rc;
}

/* The ticks missed, said once a pass. */
static void
say_missed(struct spool *sp, const char *name, const struct decl *d,
    long long missed, msec_t first)
{
	char text[256];

	tick_missed_text(&d->ts, missed, first, text, sizeof(text));
	if (*text)
		fprintf(stderr, "chute: %s/" SCHED_DIR "/%s: %s\n", sp->path,
		    name, text);
}

/* A clock behind the last tick made, said at most once a minute. */
static void
say_behind(struct spool *sp, const char *name, msec_t now, msec_t last)
{
	static msec_t said;
	char a[48], b[48];

	if (said != 0 && mono_ms() - said < 60000)
		return;
	said = mono_ms();
	iso_time(now, a, sizeof(a));
	iso_time(last, b, sizeof(b));
	fprintf(stderr, "chute: %s/" SCHED_DIR "/%s: the clock (%s) is behind "
	    "the last tick made (%s): nothing is made until it passes it\n",
	    sp->path, name, a, b);
}

/* Under the schedule's lock: finish, plan, stage, finish.  *next set. */
static int
pass(struct spool *sp, int fd, const char *name, msec_t *next)
{
	msec_t ticks[TICK_BATCH], last, now, base;
	long long missed;
	struct decl d;
	int rc, n;

	drop_partial(fd);
	if ((rc = last_read(sp, fd, name, &last)) != 0 ||
	    (rc = finish(sp, fd, name, &last)) != 0 ||
	    (rc = decl_read(sp, fd, name, &d)) != 0)
		return rc;
	base = last >= 0 ? last : tick_floor(&d.ts, d.since);
	now = now_ms();
	n = tick_plan(&d.ts, base, now, ticks, TICK_BATCH, &missed);
	if (n == 0 && now < base)
		say_behind(sp, name, now, base);
	if (n > 0 && (rc = stage(sp, fd, name, &d, ticks, n)) == 0)
		rc = finish(sp, fd, name, &last);
	if (rc == 0)
		say_missed(sp, name, &d, missed, tick_next(&d.ts, base));
	/* Mode all, more due than a pass makes: the next pass at once. */
	*next = n == TICK_BATCH ? now : tick_next(&d.ts, now > base ? now : base);
	free(d.body);
	return rc;
}

/* name's directory, locked and still named so (not removed meanwhile). */
static int
open_locked(struct spool *sp, int sdir, const char *name, int *fd)
{
	struct stat a, b;

	if ((*fd = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return errno == ENOENT ? EXIT_NO : say_path(sp, name, "",
		    EX_IOERR);
	if (lock_wait(*fd) == -1) {
		if (errno == EWOULDBLOCK)
			fprintf(stderr, "chute: %s/" SCHED_DIR "/%s: another "
			    "scheduler's pass held it for 5 s: left to it\n",
			    sp->path, name);
		else
			say_path(sp, name, "", 0);
		close(*fd);
		return EX_TEMPFAIL;
	}
	if (fstat(*fd, &a) == 0 && fstatat(sdir, name, &b,
	    AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev)
		return 0;
	close(*fd);
	return EXIT_NO;
}

int
sched_spool_tick(struct spool *sp, msec_t *next)
{
	int sdir = sdir_open(sp, false), fd, rc = 0, r;
	const char *why;
	char vis[1024];
	struct dirent *e;
	msec_t one;
	DIR *d;

	*next = -1;
	if (sdir == -1)
		return errno == ENOENT ? 0 : say_path(sp, "", "", EX_IOERR);
	if ((d = fdopendir(sdir)) == NULL)
		return say_path(sp, "", "", EX_IOERR);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		/* Made by hand: its name would be its jobs' IDs. */
		if (!sched_name_valid(e->d_name, &why)) {
			vis_name(e->d_name, vis, sizeof(vis));
			fprintf(stderr, "chute: %s/" SCHED_DIR "/%s: %s: skipped\n",
			    sp->path, vis, why);
			rc = rc > EX_DATAERR ? rc : EX_DATAERR;
			continue;
		}
		if ((r = open_locked(sp, dirfd(d), e->d_name, &fd)) != 0) {
			if (r != EXIT_NO && r > rc)
				rc = r;
			continue;
		}
		if ((r = pass(sp, fd, e->d_name, &one)) > rc)
			rc = r;
		if (r == 0 && (*next == -1 || one < *next))
			*next = one;
		close(fd);	/* and its lock */
	}
	closedir(d);
	return rc;
}

int
sched_spool_remove(struct spool *sp, const char *name)
{
	char gone[SCHED_NAME_MAX + 32];
	int sdir = sdir_open(sp, false), fd, rc;
	msec_t last;

	if (sdir == -1)
		return errno == ENOENT ? EXIT_NO : say_path(sp, "", "", EX_IOERR);
	if ((rc = open_locked(sp, sdir, name, &fd)) != 0) {
		close(sdir);
		return rc;
	}
	/* The ticks it made are jobs: released first, never lost. */
	if ((rc = last_read(sp, fd, name, &last)) == 0 &&
	    (rc = finish(sp, fd, name, &last)) == 0) {
		snprintf(gone, sizeof(gone), ".gone.%s.%ld", name, (long)getpid());
		if (renameat(sdir, name, sdir, gone) == -1 || fsync(sdir) == -1)
			rc = say_path(sp, name, "", EX_IOERR);
		else
			drop_dir(sdir, gone);
	}
	close(fd);
	close(sdir);
	return rc;
}

int
sched_spool_list(struct spool *sp, void (*row)(void *,
    const struct sched_row *), void *arg)
{
	int sdir = sdir_open(sp, false), fd, rc = 0;
	const char *why;
	struct dirent **v;
	struct sched_row r;
	struct decl d;
	int n;

	if (sdir == -1)
		return errno == ENOENT ? 0 : say_path(sp, "", "", EX_IOERR);
	if ((n = scandirat(sdir, ".", &v, NULL, alphasort)) == -1) {
		close(sdir);
		return say_path(sp, "", "", EX_IOERR);
	}
	for (int i = 0; i < n; i++) {
		if (v[i]->d_name[0] != '.' && sched_name_valid(v[i]->d_name,
		    &why) && (fd = openat(sdir, v[i]->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
			r.name = v[i]->d_name;
			if (decl_read(sp, fd, r.name, &d) == 0 &&
			    last_read(sp, fd, r.name, &r.last) == 0) {
				r.ts = d.ts;
				r.next = tick_next(&d.ts, r.last >= 0 ? r.last :
				    tick_floor(&d.ts, d.since));
				row(arg, &r);
			} else {
				rc = EX_DATAERR;
			}
			free(d.body);
			close(fd);
		}
		free(v[i]);
	}
	free(v);
	close(sdir);
	return rc;
}
