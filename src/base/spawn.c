/*
 * spawn.c: start a handler or a worker.  The child gets exactly the
 * descriptors it is given as 0, 1, 2 (and 3 for a worker) and nothing
 * else, an empty signal mask, default dispositions, and its own process
 * group, so a timeout, cancel or shutdown can stop everything it started.
 *
 * vfork, not posix_spawn: glibc's posix_spawn maps and unmaps a stack for
 * every child (the munmap costs a TLB flush), checks each dup2 against
 * RLIMIT_NOFILE and saves the signal mask twice; at one spawn per job that
 * was a third of the owner's CPU.  The vfork child runs on our stack and
 * only makes system calls before execve, which is what makes it safe.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/spawn.h"
#include "base/reaper.h"

/* What the owner set to SIG_IGN: exec keeps those, so the child undoes them. */
static sigset_t ignored;

void
spawn_ignore(int sig)
{
	signal(sig, SIG_IGN);
	sigaddset(&ignored, sig);
}

/* What execve would run: an executable regular file (not a directory). */
static bool
runnable(const char *path)
{
	struct stat st;

	if (access(path, X_OK) == -1 || stat(path, &st) == -1)
		return false;
	if (!S_ISREG(st.st_mode)) {
		errno = EACCES;
		return false;
	}
	return true;
}

char *
spawn_which(const char *argv0)
{
	char *path, *dir, *save = NULL, *found = NULL;

	if (strchr(argv0, '/') != NULL)
		return runnable(argv0) ? strdup(argv0) : NULL;
	if ((path = strdup(getenv("PATH") ? getenv("PATH") :
	    "/usr/local/bin:/usr/bin:/bin")) == NULL)
		return NULL;
	for (dir = strtok_r(path, ":", &save); dir != NULL && found == NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		if (asprintf(&found, "%s/%s", *dir ? dir : ".", argv0) == -1) {
			found = NULL;
			break;
		}
		if (!runnable(found)) {
			free(found);
			found = NULL;
		}
	}
	free(path);
	if (found == NULL && errno != ENOMEM)
		errno = ENOENT;
	return found;
}

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

struct child {
	const char	 *path;
	char *const	 *argv, *const *envp;
	const int	 *fds;
	int		  nfds;
	bool		  pdeath;	/* SIGKILL when the parent dies */
	pid_t		  parent;
	volatile int	  err;		/* written by the child: shared memory */
};

/*
 * In the vfork child: system calls only, nothing that takes a lock or
 * allocates.  Sources below nfds are first moved out of the way, so no
 * dup2 overwrites a descriptor a later one still needs.
 */
static void __attribute__((noreturn))
child_exec(struct child *c)
{
	int fd[SPAWN_MAXFDS];
	sigset_t none;

	if (setpgid(0, 0) == -1)
		goto fail;
	/*
	 * The reaper kills this group if we die from now on: told before
	 * execve, so before the handler can have started anything.  If it is
	 * gone, reaper_lost says so and the supervisor starts another.
	 */
	if (c->pdeath)
		reaper_add(getpid());
	/* Dying with the parent: checked after, in case it already died. */
	if (c->pdeath && (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 ||
	    getppid() != c->parent))
		goto fail;
	for (int i = 0; i < c->nfds; i++) {
		fd[i] = c->fds[i];
		if (fd[i] < c->nfds && fd[i] != i &&
		    (fd[i] = fcntl(fd[i], F_DUPFD_CLOEXEC, c->nfds)) == -1)
			goto fail;
	}
	for (int i = 0; i < c->nfds; i++)
		if ((fd[i] == i ? fcntl(i, F_SETFD, 0) : dup2(fd[i], i)) == -1)
			goto fail;
	/* Everything of ours is close-on-exec; this catches what we inherited. */
	close_range(c->nfds, ~0U, 0);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&ignored, sig) == 1)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(c->path, c->argv, c->envp);
fail:
	c->err = errno;
	_exit(127);
}

pid_t
spawn_exec(const char *path, char *const argv[], char *const envp[],
    const int fds[], int nfds, bool pdeath)
{
	/* getpid() only when needed: it is a system call per job. */
	struct child c = { path, argv, envp, fds, nfds, pdeath,
	    pdeath ? getpid() : 0, 0 };
	pid_t pid;
	int status;

	if (nfds > SPAWN_MAXFDS) {
		errno = EINVAL;
		return -1;
	}
	if ((pid = vfork()) == -1)
		return -1;
	if (pid == 0)
		child_exec(&c);
	if (c.err != 0) {
		if (pdeath)		/* before the reap frees the group's id */
			reaper_forget(pid);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			;
		errno = c.err;
		return -1;
	}
	return pid;
}
