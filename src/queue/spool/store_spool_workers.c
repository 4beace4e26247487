/*
 * store_spool_workers.c: `chute workers SPOOL`'s answer (queue/store.h):
 * a spool has one worker, its owner (the holder of the spool's lock,
 * /proc/locks), in the format of `chute workers URL`: its pid, since when
 * (owner.pid's mtime, written once the lock is taken), the jobs in cur/;
 * with --persistent, its workers (its children, while SPOOL/.workers.PID
 * says it runs some).  Its slots and version are not written down
 * anywhere: "-".  A dead owner whose owner.pid remains is "gone", with
 * the jobs it left in cur/.
 */
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/lock.h"
#include "store/spool.h"
#include "queue/spool/spool_list.h"
#include "queue/spool/store_spool.h"
#include "queue/store.h"

/* The persistent workers of a live owner: its main thread's children. */
static void
print_persistent(struct spool *sp, pid_t owner,
    const struct store_workers_out *o)
{
	char name[40], path[64], buf[4096];
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), ".workers.%ld", (long)owner);
	if (fstatat(sp->root, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children",
	    (long)owner, (long)owner);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return;
	n = read_full(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (char *t = strtok(buf, " \n"); t != NULL; t = strtok(NULL, " \n"))
		o->child(o->arg, t);
}

/* The jobs in cur/: counted, and listed under an owner that is gone. */
static int
print_owner(struct spool *sp, pid_t owner, pid_t pid, msec_t since,
    const struct store_workers_out *o)
{
	struct listing cur = { .sp = sp, .keep = owner == 0 };
	char host[256] = "localhost", worker[300];
	struct store_worker w = { .host = host, .queue = sp->path,
	    .version = "-", .state = owner != 0 ? "alive" : "gone",
	    .slots = -1, .seen_ago = -1, .worker = worker };
	int rc;

	if ((rc = listing_read(&cur, ST_CUR)) != 0)
		return rc;
	gethostname(host, sizeof(host) - 1);
	w.pid = owner > 0 ? owner : pid;
	w.running = (long)cur.count[ST_CUR];
	/* owner.pid dates the owner that wrote it: this one, or the gone one. */
	w.started_ago = since != 0 && pid == w.pid ? now_ms() - since : -1;
	snprintf(worker, sizeof(worker), "%s:%ld", host, w.pid);
	o->worker(o->arg, &w);
	for (size_t i = 0; owner == 0 && i < cur.n; i++)
		o->held(o->arg, cur.v[i].id, false, 0);
	if (owner > 0)
		print_persistent(sp, owner, o);
	listing_free(&cur);
	return 0;
}

int
spool_workers(struct spool *sp, const struct store_workers_out *o)
{
	msec_t since;
	pid_t owner, pid;

	owner = lock_owner(sp);
	pid = lock_pidfile(sp, &since);
	if (owner != 0 || pid != 0)
		return print_owner(sp, owner, pid, since, o);
	return 0;
}
