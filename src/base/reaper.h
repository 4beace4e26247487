/*
 * reaper.h: process groups that die with us, kill -9 included.  One small
 * process per owner (reaper.c) holds the other end of a socket only we
 * hold, learns each handler's process group as it starts and forgets it
 * when the supervisor has killed what was left of it; when we die, for
 * whatever reason, it reads EOF and SIGKILLs every group it still knows.
 */
#ifndef REAPER_H
#define REAPER_H

#include <stdbool.h>
#include <sys/types.h>

int	 reaper_start(int);
void	 reaper_stop(void);
bool	 reaper_running(void);
pid_t	 reaper_pid(void);
int	 reaper_add(pid_t);
void	 reaper_forget(pid_t);
bool	 reaper_lost(bool);

#endif
