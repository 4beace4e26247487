/*
 * queue_spool_unique.c: the owner's look at a job's unique key before its
 * first claim.  A job dropped into new/ by hand as NAME,u=KEY takes the
 * key as chute submit would (for the states "active"), or, when another
 * job holds it, is refused to failed/ with the holder's ID: the rule is
 * the same for every submitter (spool-layout.md, "Unique keys").  And
 * the pass that removes the files of keys no job holds any more, so that
 * unique/ holds the keys in use, not every key ever used.
 */
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/nameq.h"
#include "base/sched.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "store/state.h"
#include "store/unique.h"
#include "queue/spool/queue_spool.h"

/* Another's look at the key is brief (a submit's renames): soon again. */
#define UNIQUE_BUSY_MS	50
#define UNIQUE_SWEEP_MS	(60 * 60 * 1000)	/* between passes over unique/ */
#define UNIQUE_SWEEP_CHUNK 64			/* files a step looks at */

/* Refused: new/name -> failed/, the holder named. */
static void
refuse(struct spoolq *sq, const char *name, const char *key,
    const struct unique_hold *h, int st)
{
	char why[KEY_MAX + NAME_MAX + 64];

	snprintf(why, sizeof(why), "unique key %s is held by job %s (%s)",
	    key, vis_id(h->id), state_names[st]);
	spoolq_reject(sq, name, NULL, why);
}

/* Under the key's flock: 1 the job may run, 0 refused, -1 error. */
static int
decide(struct spoolq *sq, const char *name, const char *key,
    struct unique_hold *h)
{
	int st;

	if (strcmp(h->id, name) == 0)
		return 1;
	if (unique_held(&sq->sp, h, &st)) {
		refuse(sq, name, key, h, st);
		return 0;
	}
	return unique_set(h, UQ_ACTIVE, name) == -1 ? -1 : 1;
}

bool
spoolq_unique_ok(struct spoolq *sq, const char *name, unsigned flags)
{
	char holder[NAME_MAX + 1];
	struct unique_hold h;
	struct jobattr a;
	const char *why;
	struct stat ls;
	int rc;

	/* A name without ,u= (or with bad attributes: not this check's). */
	if (jobattr_parse(name, &a, &why) == -1 || a.unique[0] == '\0')
		return true;
	/* Not a key (".."): refused for good, not looked at again forever. */
	if (!unique_key_valid(a.unique, &why)) {
		spoolq_reject(sq, name, NULL, why);
		return false;
	}
	/*
	 * It ran before (a log): a retry or a requeue, not a submission;
	 * it took or was refused its key then.
	 */
	if (fstatat(sq->sp.dir[ST_LOG], name, &ls, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	/* chute submit's jobs: the key names them already. */
	if (unique_peek(&sq->sp, a.unique, holder, sizeof(holder)) == 0 &&
	    strcmp(holder, name) == 0)
		return true;
	rc = unique_lock(&sq->sp, a.unique, false, &h);
	if (rc == 0) {
		rc = decide(sq, name, a.unique, &h);
		unique_unlock(&h);
		if (rc >= 0)
			return rc == 1;
	} else if (rc == 1) {
		nameq_add(sq->waiting, name, mono_ms() + UNIQUE_BUSY_MS, flags);
		return false;
	}
	say_warn("job=%s: %s/%s/%s: %s; will retry", vis_id(name), sq->sp.path,
	    UNIQUE_DIR, a.unique, strerror(errno));
	nameq_add(sq->waiting, name, mono_ms() + RETRY_MS, flags);
	return false;
}

/* ---- the pass over unique/ ---- */

void
spoolq_unique_close(struct spoolq *sq)
{
	if (sq->uq_dir != NULL)
		closedir(sq->uq_dir);
	sq->uq_dir = NULL;
}

/* Open a pass; false (and the next in an hour) if there is none to make. */
static bool
pass_open(struct spoolq *sq, msec_t mono)
{
	int fd;

	sq->uq_next = mono + UNIQUE_SWEEP_MS;
	fd = openat(sq->sp.root, UNIQUE_DIR, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1) {
		if (errno != ENOENT)	/* no keyed submit yet: nothing */
			say_err("%s/%s/: %s", sq->sp.path, UNIQUE_DIR,
			    strerror(errno));
		return false;
	}
	if ((sq->uq_dir = fdopendir(fd)) == NULL) {
		say_err("%s/%s/: %s", sq->sp.path, UNIQUE_DIR, strerror(errno));
		close(fd);
		return false;
	}
	sq->uq_removed = sq->uq_failed = 0;
	return true;
}

/* The pass ended: said when it removed or failed anything. */
static void
pass_end(struct spoolq *sq)
{
	spoolq_unique_close(sq);
	if (sq->uq_removed > 0)
		say("%s/%s/: %u free keys' files removed", sq->sp.path,
		    UNIQUE_DIR, sq->uq_removed);
}

void
spoolq_unique_step(struct spoolq *sq, msec_t mono)
{
	struct dirent *e;
	int rc;

	if (sq->uq_dir == NULL && (mono < sq->uq_next || !pass_open(sq, mono)))
		return;
	for (int i = 0; i < UNIQUE_SWEEP_CHUNK; i++) {
		errno = 0;
		if ((e = readdir(sq->uq_dir)) == NULL) {
			if (errno != 0)
				say_err("%s/%s/: %s", sq->sp.path, UNIQUE_DIR,
				    strerror(errno));
			pass_end(sq);
			return;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		rc = unique_sweep(&sq->sp, dirfd(sq->uq_dir), e->d_name);
		if (rc == 1)
			sq->uq_removed++;
		else if (rc == -1 && sq->uq_failed++ == 0)	/* once a pass */
			say_err("%s/%s/%s: %s", sq->sp.path, UNIQUE_DIR,
			    vis_id(e->d_name), strerror(errno));
	}
}

msec_t
spoolq_unique_next(struct spoolq *sq, msec_t mono)
{
	return sq->uq_dir != NULL ? mono : sq->uq_next;
}
