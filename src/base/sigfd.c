/*
 * sigfd.c: signals as reads from a descriptor (sigfd.h).  The owner,
 * forward, the dashboard and top each poll one beside their other
 * descriptors; this is the one place that sets it up.
 */
#include <sys/signalfd.h>
#include <signal.h>
#include <stdarg.h>

#include "base/sigfd.h"

int
sigfd_open(int sig, ...)
{
	sigset_t set;
	va_list ap;

	sigemptyset(&set);
	va_start(ap, sig);
	for (; sig != 0; sig = va_arg(ap, int))
		sigaddset(&set, sig);
	va_end(ap);
	/* Blocked, or the default action would run before the read. */
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	/* Nonblocking: the loops read until a short read, never wait in it;
	 * close-on-exec: no handler may read our signals. */
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}
