/*
 * spawn.h, the interface of spawn.c: vfork + execve with exactly the given
 * descriptors, in a process group of its own.
 */
#ifndef BASE_SPAWN_H
#define BASE_SPAWN_H

#include <sys/types.h>
#include <stdbool.h>

#define SPAWN_MAXFDS	4
void	 spawn_ignore(int sig);

/*
 * argv0 as execve needs it: as given when it has a slash, else the first
 * executable PATH entry, as execvp would pick.  Resolved once when the
 * owner starts, not per job.  Returns a malloc'd path, or NULL with errno
 * set (ENOENT: nowhere on PATH).
 */
char	*spawn_which(const char *argv0);

/*
 * environ without any CHUTE_* of our own parent, plus nadd "CHUTE_X=..."
 * strings.  The array is malloc'd; its strings are borrowed.
 */
char	**spawn_env(char *const add[], int nadd);

/*
 * Run path with argv and envp; fds[i] becomes descriptor i in the child
 * (nfds at most SPAWN_MAXFDS); with pdeath the child is SIGKILLed when we
 * die, and its whole process group too where a reaper runs (reaper.c: a
 * queue whose claims expire must not leave its handlers running when a
 * new claimant starts the job).  Returns the pid once the child has
 * exec'd, or -1 with errno set if it could not (ENOENT, EACCES, ENOEXEC...:
 * the failed child is already reaped).
 */
pid_t	 spawn_exec(const char *path, char *const argv[], char *const envp[],
	    const int fds[], int nfds, bool pdeath);

#endif
