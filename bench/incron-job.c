/*
 * incron-job: what the incrontab line of bench/run's incron row runs, kept
 * as cheap as a peer can be: claim SPOOL/new/NAME by a rename to cur/, run
 * HANDLER with the job as stdin, then rename it to done/ (failed/ if the
 * handler did not exit 0). No fsync and no log: less than chute does.
 *
 * usage: incron-job SPOOL NAME HANDLER [ARG...]
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int
main(int argc, char *argv[])
{
	posix_spawn_file_actions_t fa;
	char from[4096], to[4096];
	int spool, st, e;
	pid_t pid;

	if (argc < 4)
		errx(64, "usage: incron-job SPOOL NAME HANDLER [ARG...]");
	if ((spool = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", argv[1]);
	snprintf(from, sizeof(from), "new/%s", argv[2]);
	snprintf(to, sizeof(to), "cur/%s", argv[2]);
	if (renameat(spool, from, spool, to) == -1) {
		if (errno == ENOENT)
			return 0;	/* someone else claimed it */
		err(1, "rename %s", from);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, to, O_RDONLY | O_NOFOLLOW, 0);
	if (fchdir(spool) == -1)
		err(1, "%s", argv[1]);
	if ((e = posix_spawnp(&pid, argv[3], &fa, NULL, argv + 3, environ)) != 0) {
		errno = e;
		err(1, "%s", argv[3]);
	}
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			err(1, "waitpid");
	snprintf(from, sizeof(from), "%s/%s",
	    WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "done" : "failed", argv[2]);
	if (renameat(spool, to, spool, from) == -1)
		err(1, "rename %s", to);
	return 0;
}
