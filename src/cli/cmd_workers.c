/*
 * cmd_workers.c: `chute workers SPOOL`: a spool has one worker, its owner
 * (the holder of the spool's lock, /proc/locks), in the format of `chute
 * workers URL`: its pid, since when (owner.pid's mtime, written once the
 * lock is taken), the jobs in cur/; with --persistent, its workers (its
 * children, while SPOOL/.workers.PID says it runs some).  Its slots and
 * version are not written down anywhere: "-".  A dead owner whose
 * owner.pid remains is "gone", with the jobs it left in cur/.
 */
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/listing.h"
#include "store/lock.h"
#include "store/spool.h"

/* The persistent workers of a live owner: its main thread's children. */
static void
print_persistent(struct spool *sp, pid_t owner)
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
		printf("  persistent worker pid %s\n", t);
}

/* The jobs in cur/: counted, and listed under an owner that is gone. */
static int
print_owner(struct spool *sp, pid_t owner, pid_t pid, msec_t since)
{
	struct listing cur = { .sp = sp, .keep = owner == 0 };
	char host[256] = "localhost", worker[300];
	struct worker_line w = { .host = host, .queue = sp->path,
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
	workers_line(&w);
	for (size_t i = 0; owner == 0 && i < cur.n; i++)
		workers_held(cur.v[i].id, WORKERS_NO_LEASE);
	if (owner > 0)
		print_persistent(sp, owner);
	listing_free(&cur);
	return 0;
}

int
cmd_workers(int argc, char **argv)
{
	struct spool sp;
	msec_t since;
	pid_t owner, pid;
	int rc;

	if (argc != 2)
		return usage_error("workers", "want exactly one SPOOL");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	owner = lock_owner(&sp);
	pid = lock_pidfile(&sp, &since);
	workers_header();
	if (owner != 0 || pid != 0)
		rc = print_owner(&sp, owner, pid, since);
	spool_close(&sp);
	return rc != 0 ? rc : cmd_flush_stdout(0);
}
