/*
 * spawn.c: start one handler with posix_spawn.  stdin is the job file,
 * stdout and stderr the job's log; nothing else is inherited (every other
 * descriptor is closed in the child), the signal mask and dispositions are
 * reset, and the handler leads its own process group so a timeout, cancel
 * or shutdown can stop everything it started.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

extern char **environ;

/*
 * environ without any CHUTE_* of our own parent, plus nadd "CHUTE_X=..."
 * strings.  The array is malloc'd; its strings are borrowed.
 */
char **
spawn_env(char *const add[], int nadd)
{
	size_t n = 0, j = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	if ((env = reallocarray(NULL, n + nadd + 1, sizeof(*env))) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CHUTE_", 6) != 0)
			env[j++] = environ[i];
	for (int i = 0; i < nadd; i++)
		env[j++] = add[i];
	env[j] = NULL;
	return env;
}

static char **
make_argv(char **tmpl, char *jobpath)
{
	size_t n = 0;
	char **argv;

	while (tmpl[n] != NULL)
		n++;
	if ((argv = reallocarray(NULL, n + 1, sizeof(*argv))) == NULL)
		return NULL;
	for (size_t i = 0; i <= n; i++)
		argv[i] = tmpl[i] && strcmp(tmpl[i], "{}") == 0 ? jobpath :
		    tmpl[i];
	return argv;
}

/* Own process group, empty signal mask, every disposition default. */
int
spawn_attr(posix_spawnattr_t *attr)
{
	sigset_t none, dfl;

	sigemptyset(&none);
	sigfillset(&dfl);
	sigdelset(&dfl, SIGKILL);
	sigdelset(&dfl, SIGSTOP);
	if (posix_spawnattr_init(attr) != 0)
		return -1;
	posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(attr, 0);
	posix_spawnattr_setsigmask(attr, &none);
	posix_spawnattr_setsigdefault(attr, &dfl);
	return 0;
}

/*
 * Start argv (with "{}" replaced by the job's path) for job id, attempt
 * number attempt.  Returns the pid, or -1 with errno set (ENOENT: the
 * handler is not there; glibc reports exec failures synchronously).
 */
pid_t
spawn_handler(struct spool *sp, char **tmpl, const char *id, int attempt,
    int jobfd, int logfd)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char *add[4] = { NULL }, *jobpath, **argv = NULL, **env = NULL;
	pid_t pid = -1;
	int rc = ENOMEM;

	jobpath = spool_jobpath(sp, ST_CUR, id);
	if (jobpath == NULL ||
	    asprintf(&add[0], "CHUTE_SPOOL=%s", sp->path) == -1 ||
	    asprintf(&add[1], "CHUTE_ID=%s", id) == -1 ||
	    asprintf(&add[2], "CHUTE_JOB=%s", jobpath) == -1 ||
	    asprintf(&add[3], "CHUTE_ATTEMPT=%d", attempt) == -1 ||
	    (argv = make_argv(tmpl, jobpath)) == NULL ||
	    (env = spawn_env(add, 4)) == NULL)
		goto out;
	lseek(jobfd, 0, SEEK_SET);
	if (spawn_attr(&attr) == -1)
		goto out;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, jobfd, STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, logfd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, logfd, STDERR_FILENO);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
out:
	for (int i = 0; i < 4; i++)
		free(add[i]);
	free(jobpath);
	free(argv);
	free(env);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return pid;
}
