/*
 * reaper.h: process groups that die with us, kill -9 included.  One small
 * process per owner (reaper.c) holds the other end of a socket only we
 * hold, learns each handler's process group as it starts and forgets it
 * when the supervisor has killed what was left of it; when we die, for
 * whatever reason, it reads EOF and SIGKILLs every group it still knows,
 * and so it does when a deadline we gave it passes without a new one.
 */
#ifndef REAPER_H
#define REAPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Start the reaper, for at most max groups known at once.  Returns 0, or
 * -1 with errno set.  Call it before any handler starts; one reaper per
 * process (a second call replaces the first, which kills what it knew).
 */
int	 reaper_start(int max);
/* Close our end: the reaper kills the groups it still knows and exits. */
void	 reaper_stop(void);
bool	 reaper_running(void);
/* The running reaper's pid (for messages); 0 if none. */
pid_t	 reaper_pid(void);
/*
 * Group pgid dies with us.  Safe in a vfork child (one system call).
 * Returns 0 (also when no reaper runs), or -1 if the reaper is gone:
 * reaper_lost then says so, for the supervisor to start another.
 */
int	 reaper_add(pid_t pgid);
/*
 * Every group the reaper knows dies unless another deadline comes within
 * ms (on CLOCK_BOOTTIME: a host's suspension counts); ms < 0, or 2^30 or
 * more: no deadline.  Kept and told again to a reaper started again.
 * The fleet's worker calls it as its leases start and are renewed, so
 * that its handlers die when it is frozen past them (fleet.md).
 */
void	 reaper_deadline(int64_t ms);
/*
 * Group pgid was killed while its leader was still unreaped: the reaper
 * may forget it.  Call it before reaping the leader, never after.
 */
void	 reaper_forget(pid_t pgid);
/*
 * Is the reaper gone (killed by someone)?  A message that could not be
 * sent says so, and with probe, when it is quiet, the socket: its other
 * end closed (a system call: not for every job).
 */
bool	 reaper_lost(bool probe);

#endif
