/*
 * sigfd.h, the interface of sigfd.c: signals as reads from a descriptor,
 * for the programs' poll(2) loops.
 */
#ifndef BASE_SIGFD_H
#define BASE_SIGFD_H

/*
 * Block the signals sig, ... (a list ended by 0) and return a signalfd
 * that reads them, close-on-exec and nonblocking.  The mask is the
 * process's (sigprocmask): block them before any thread starts and every
 * thread inherits it.  Nothing unblocks them again: each caller wants
 * them as reads for the rest of its life, and its handlers get a clean
 * mask from spawn.c.  Returns the descriptor, or -1 with errno set (some
 * of the signals may then be blocked).
 */
int	 sigfd_open(int sig, ...);

#endif
