/*
 * scan.c: how the owner finds work.  Names in new/ come from inotify
 * events and from scans; either way they go through owner_admit into the
 * ready queue, which holds a bounded window of the oldest.  defer/ is read
 * when its earliest due time comes.
 */
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "owner.h"

#define RETRY_MS	5000

static msec_t
stat_mtime(const struct stat *st)
{
	return (msec_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* Queue a name seen in new/ (by event or scan); oldest mtime runs first. */
void
owner_admit(struct owner *ow, const char *name, unsigned flags)
{
	unsigned before = 0;
	struct stat st;
	int64_t key;

	if (fstatat(ow->sp.dir[ST_NEW], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	key = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	/*
	 * Memory must not grow with the backlog: keep only the WINDOW oldest
	 * names.  Anything left out stays in new/ and is found again by the
	 * refill scan (owner_refill) once the window runs low.
	 */
	if (queue_len(ow->ready) >= ow->window &&
	    key >= queue_max_key(ow->ready)) {
		ow->truncated = true;
		return;
	}
	/* Waiting for its writer?  This event is worth a fresh look now. */
	if (queue_take(ow->waiting, name, &before))
		flags |= before;
	if (queue_add(ow->ready, name, key, flags) == -1) {
		ow->truncated = true;	/* out of memory: find it again later */
		return;
	}
	if (queue_len(ow->ready) > ow->window) {
		queue_drop_max(ow->ready);
		ow->truncated = true;
	}
}

/* The window ran low and new/ holds more than it: read new/ again. */
void
owner_refill(struct owner *ow)
{
	if (!ow->truncated || queue_len(ow->ready) > ow->window / 2)
		return;
	ow->truncated = false;
	owner_scan_new(ow, true);
}

/*
 * Reading new/ is incremental: a directory of a million jobs takes seconds
 * to read and stat, and the owner must keep reaping, dispatching and
 * answering signals meanwhile.  owner_scan_new starts (or restarts) a
 * scan; the loop calls owner_scan_step for SCAN_CHUNK names per iteration
 * until the stream ends.  Until then the window holds the oldest of the
 * names read so far, so in a backlog larger than one chunk the first jobs
 * to start are the oldest of the first chunk, not of all of new/.
 */
static void
scan_finish(struct owner *ow)
{
	closedir(ow->scan);
	ow->scan = NULL;
	ow->new_mtime = ow->scan_mtime;
	ow->new_scanned = ow->scan_started;
	if (ow->scan_again) {
		ow->scan_again = false;
		owner_scan_new(ow, true);
	}
}

/* Read up to max names of new/; returns true when the scan is over. */
bool
owner_scan_step(struct owner *ow, size_t max)
{
	struct dirent *de;

	if (ow->scan == NULL)
		return true;
	for (size_t n = 0; n < max; n++) {
		errno = 0;
		if ((de = readdir(ow->scan)) == NULL) {
			if (errno != 0)
				say("new/: cannot read: %s", strerror(errno));
			scan_finish(ow);
			return ow->scan == NULL;
		}
		/* A name waiting for its writer gets its recheck on time. */
		if (de->d_name[0] != '.' && !queue_has(ow->waiting, de->d_name))
			owner_admit(ow, de->d_name, 0);
	}
	return false;
}

/*
 * Start reading new/ again, unless it has not changed since the last full
 * scan (the mtime test is only trusted when that scan started well after
 * the directory's last change: coarse time stamps).  A scan requested
 * while one runs restarts it when it ends, so nothing is missed.
 */
void
owner_scan_new(struct owner *ow, bool force)
{
	struct stat st;
	int fd;

	if (ow->scan != NULL) {
		ow->scan_again |= force;
		return;
	}
	if (fstat(ow->sp.dir[ST_NEW], &st) == -1)
		return;
	if (!force && st.st_mtim.tv_sec == ow->new_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == ow->new_mtime.tv_nsec &&
	    ow->new_scanned - stat_mtime(&st) > 2000)
		return;
	fd = openat(ow->sp.dir[ST_NEW], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (ow->scan = fdopendir(fd)) == NULL) {
		say("new/: cannot read: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return;
	}
	ow->scan_mtime = st.st_mtim;
	ow->scan_started = now_ms();
	owner_scan_step(ow, SCAN_CHUNK);
}

static int
defer_cb(void *arg, const char *name)
{
	struct owner *ow = arg;
	struct stat st;
	msec_t due;

	if (fstatat(ow->sp.dir[ST_DEFER], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	due = stat_mtime(&st);
	if (due <= ow->scan_now) {
		owner_promote(ow, name);
		return 0;
	}
	ow->ndefer++;
	if (ow->next_defer == 0 || due < ow->next_defer)
		ow->next_defer = due;
	return 0;
}

/* Move every due job from defer/ to new/, and find the next due time. */
void
owner_scan_defer(struct owner *ow)
{
	ow->next_defer = 0;
	ow->ndefer = 0;
	ow->scan_now = now_ms();
	if (spool_scan(&ow->sp, ST_DEFER, defer_cb, ow) == -1)
		say("defer/: cannot read: %s", strerror(errno));
}

void
owner_promote(struct owner *ow, const char *name)
{
	char vis[1024];

	vis_name(name, vis, sizeof(vis));
	if (state_promote(&ow->sp, name) == 0) {
		say("job=%s defer->new", vis);
		/* Its IN_MOVED_FROM on defer/ is ours, not a removal. */
		queue_add(ow->promoted, name, 0, 0);
		owner_admit(ow, name, RF_MOVED);
		return;
	}
	if (errno == ENOENT)
		return;
	say("job=%s defer->new: %s; will retry", vis, strerror(errno));
	ow->next_defer = now_ms() + RETRY_MS;
}

/* A file landed in defer/: remember when it is due. */
void
owner_defer_arrived(struct owner *ow, const char *name)
{
	struct stat st;
	msec_t due;

	if (fstatat(ow->sp.dir[ST_DEFER], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	due = stat_mtime(&st);
	ow->ndefer++;
	if (ow->next_defer == 0 || due < ow->next_defer)
		ow->next_defer = due;
}

/*
 * A job left defer/.  Our own promotions are expected; anything else is
 * a cancel or an operator's mv or rm, which is logged (the job is not
 * ours to run until it appears in new/ again).
 */
void
owner_defer_left(struct owner *ow, const char *name)
{
	char vis[1024];

	if (queue_take(ow->promoted, name, NULL))
		return;
	if (ow->ndefer > 0)
		ow->ndefer--;
	vis_name(name, vis, sizeof(vis));
	say("job=%s left defer/ (cancelled, moved or removed)", vis);
}
