/*
 * keeper.c: a spool owner's second thread.  Two things the owner does
 * wait on the disk although no job waits for them: the group commit's
 * fsync of done/ and cur/ (milliseconds, right after a purge), and
 * the creates that keep the log pool full (as long, right after many files
 * were removed: the allocator searches past every recently freed inode).
 * Done in the owner's loop, either one holds up the next job's exec by
 * that much; the keeper does them while the loop goes on.
 *
 * What the keeper touches: the spool's directory descriptors (read only,
 * opened before it starts and closed after it ends) and the log pool,
 * whose counts are under the pool's own mutex (joblog.c).  The owner hands
 * it a set of directories to fsync and later takes back the set whose
 * fsync failed; everything else stays the owner's.  The thread starts with
 * every signal blocked, so signals still reach the owner's signalfd only.
 * A handler's vfork child runs on the owner's stack and calls nothing
 * that takes a lock (spawn.c), so a lock the keeper holds is no matter.
 *
 * When the thread cannot start, the owner does both itself, as before.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "queue/spool/keeper.h"

/* Fsync each directory of the set; the set of those that failed, and errno. */
static unsigned
sync_dirs(struct spool *sp, unsigned set, int *err)
{
	unsigned failed = 0;

	for (int i = 0; i < ST_NDIRS; i++)
		if ((set & 1u << i) && spool_fsync_dir(sp, i) == -1) {
			failed |= 1u << i;
			*err = errno;
		}
	return failed;
}

/*
 * The pool first: the next claim needs a log now, while an fsync only
 * makes transitions the owner has already made durable a little later.
 */
static void *
keeper_main(void *arg)
{
	struct keeper *k = arg;
	unsigned set, failed;
	int err = 0, rc;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		while (!k->quit && !k->fill && k->sync == 0)
			pthread_cond_wait(&k->cv, &k->mu);
		if (k->quit)
			break;
		if (k->fill) {
			k->fill = false;
			pthread_mutex_unlock(&k->mu);
			rc = joblog_pool_fill(k->pool, k->sp);
			err = errno;
			pthread_mutex_lock(&k->mu);
			if (rc == -1)
				k->fill_err = err;
			continue;
		}
		/*
		 * The set is emptied before the fsyncs: a directory handed
		 * over again meanwhile (a rename after this fsync may have
		 * started) is fsynced once more.
		 */
		set = k->sync;
		k->sync = 0;
		k->syncing = true;
		k->since = mono_ms();
		pthread_mutex_unlock(&k->mu);
		failed = sync_dirs(k->sp, set, &err);
		pthread_mutex_lock(&k->mu);
		k->syncing = false;
		if (failed != 0) {
			k->failed |= failed;
			k->err = err;
		}
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

int
keeper_start(struct keeper *k, struct spool *sp, struct joblog_pool *pool)
{
	sigset_t all, old;
	int rc;

	memset(k, 0, sizeof(*k));
	k->sp = sp;
	k->pool = pool;
	if ((rc = pthread_mutex_init(&k->mu, NULL)) != 0) {
		errno = rc;
		return -1;
	}
	if ((rc = pthread_cond_init(&k->cv, NULL)) != 0) {
		pthread_mutex_destroy(&k->mu);
		errno = rc;
		return -1;
	}
	/* The thread inherits this mask: no signal is ever delivered to it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&k->thread, NULL, keeper_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_cond_destroy(&k->cv);
		pthread_mutex_destroy(&k->mu);
		errno = rc;
		return -1;
	}
	k->on = true;
	return 0;
}

/*
 * Signalled after the unlock: woken inside it, the keeper would find the
 * mutex still held and sleep again on it, two more context switches.
 */
static void
ask(struct keeper *k, bool fill, unsigned set)
{
	pthread_mutex_lock(&k->mu);
	k->fill |= fill;
	k->sync |= set;
	pthread_mutex_unlock(&k->mu);
	pthread_cond_signal(&k->cv);
}

void
keeper_fill(struct keeper *k)
{
	ask(k, true, 0);
}

void
keeper_sync(struct keeper *k, unsigned set)
{
	ask(k, false, set);
}

bool
keeper_idle(struct keeper *k, unsigned *failed, int *err, msec_t *since)
{
	bool idle;

	pthread_mutex_lock(&k->mu);
	idle = k->sync == 0 && !k->syncing;
	*failed = k->failed;
	*err = k->err;
	*since = k->syncing ? k->since : 0;
	k->failed = 0;
	pthread_mutex_unlock(&k->mu);
	return idle;
}

int
keeper_fill_error(struct keeper *k)
{
	int err;

	pthread_mutex_lock(&k->mu);
	err = k->fill_err;
	k->fill_err = 0;
	pthread_mutex_unlock(&k->mu);
	return err;
}

unsigned
keeper_stop(struct keeper *k)
{
	unsigned left;

	if (!k->on)
		return 0;
	pthread_mutex_lock(&k->mu);
	k->quit = true;
	pthread_mutex_unlock(&k->mu);
	pthread_cond_signal(&k->cv);
	pthread_join(k->thread, NULL);
	k->on = false;
	left = k->sync | k->failed;
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	return left;
}
