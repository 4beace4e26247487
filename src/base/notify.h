/*
 * notify.h, the interface of notify.c: sd_notify(3)'s protocol, without
 * libsystemd.
 */
#ifndef BASE_NOTIFY_H
#define BASE_NOTIFY_H

#include <stdbool.h>
#include "base/util.h"

/*
 * Read and remove $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID (the
 * handlers must not inherit them: a handler's READY=1 or STOPPING=1 would
 * be taken for ours), and connect to the socket.  A socket that cannot be
 * reached is said once and then ignored: chute runs the same without.
 */
void	 notify_init(void);

void	 notify_close(void);

/* Is the owner talking to systemd? */
bool	 notify_on(void);

/*
 * Send msg ("READY=1", ...).  A full queue on systemd's side is waited
 * out for NOTIFY_WAIT_MS at most, then the message is dropped: the owner
 * never stalls on its supervisor.  Failures are said once.
 */
void	 notify_send(const char *msg);

/*
 * The owner's counts, as STATUS=.  Sent at once when it is the first or
 * NOTIFY_STATUS_MS have passed since the last, else by notify_tick when
 * they have: a busy owner changes its counts every turn of its loop.
 */
void	 notify_status(const char *text);

/*
 * Send what is due at mono: a STATUS= held back, a watchdog ping.
 * Returns when the next will be due (mono), INT64_MAX if never.
 */
msec_t	 notify_tick(msec_t mono);

#endif
