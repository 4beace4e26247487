/*
 * queue_spool_unique.c: the owner's look at a job's unique key before its
 * first claim.  A job dropped into new/ by hand as NAME,u=KEY takes the
 * key as chute submit would (for the states "active"), or, when another
 * job holds it, is refused to failed/ with the holder's ID: the rule is
 * the same for every submitter (spool-layout.md, "Unique keys").
 */
#include <sys/stat.h>
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

/* Refused: new/name -> failed/, the holder named. */
static void
refuse(struct spoolq *sq, const char *name, const char *key,
    const struct unique_hold *h, int st)
{
	if (state_reject(&sq->sp, name) == -1) {
		if (errno != ENOENT) {
			say_warn("job=%s new->failed: %s; will retry",
			    vis_id(name), strerror(errno));
			nameq_add(sq->waiting, name, mono_ms() + RETRY_MS, 0);
		}
		return;
	}
	joblog_note(&sq->sp, name, "rejected: unique key %s is held by job %s"
	    " (%s)", key, h->id, state_names[st]);
	say_warn("job=%s new->failed rejected: unique key %s is held by job %s"
	    " (%s)", vis_id(name), key, vis_id(h->id), state_names[st]);
}

/* Refused: new/name -> failed/, its key no key (why). */
static void
refuse_bad(struct spoolq *sq, const char *name, const char *why)
{
	if (state_reject(&sq->sp, name) == -1) {
		if (errno != ENOENT) {
			say_warn("job=%s new->failed: %s; will retry",
			    vis_id(name), strerror(errno));
			nameq_add(sq->waiting, name, mono_ms() + RETRY_MS, 0);
		}
		return;
	}
	joblog_note(&sq->sp, name, "rejected: %s", why);
	say_warn("job=%s new->failed rejected: %s", vis_id(name), why);
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
		refuse_bad(sq, name, why);
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
