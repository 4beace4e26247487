/*
 * notify.c: systemd's readiness protocol without libsystemd: one datagram
 * per message to the AF_UNIX socket $NOTIFY_SOCKET names (sd_notify(3)
 * documents it as stable and reimplementable).  Outside systemd there is
 * no socket and every call does nothing.  The watchdog's pings and the
 * throttled STATUS= lines are sent from the owner's loop (notify_tick), so
 * a loop that stops turning stops pinging and systemd notices.
 */
#include <sys/socket.h>
#include <sys/un.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/notify.h"
#include "base/util.h"

static struct {
	int	 fd;			/* connected datagram socket; -1: off */
	char	 name[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	msec_t	 watchdog;		/* ping every this many ms; 0: never */
	msec_t	 ping_at;		/* next ping (mono) */
	char	 status[256];		/* the newest STATUS= text */
	bool	 status_due;		/* not sent yet */
	bool	 status_ever;		/* one was sent: the throttle applies */
	msec_t	 status_at;		/* when the last one went (mono) */
	bool	 said;			/* a send failed and we said so */
} nt = { .fd = -1 };

/*
 * "/path" or "@abstract" into sa; its length, or 0 if name is neither (a
 * vsock address of a newer systemd, say) or too long.
 */
static socklen_t
notify_addr(const char *name, struct sockaddr_un *sa)
{
	size_t len = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((name[0] != '/' && name[0] != '@') || len < 2 ||
	    len >= sizeof(sa->sun_path))
		return 0;
	memcpy(sa->sun_path, name, len);
	if (name[0] == '@') {
		sa->sun_path[0] = '\0';
		return offsetof(struct sockaddr_un, sun_path) + len;
	}
	return offsetof(struct sockaddr_un, sun_path) + len + 1;
}

static int
notify_connect(const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = notify_addr(name, &sa);
	int fd;

	if (len == 0) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1)
		return -1;
	/* Connected, so that poll(2) can tell when systemd's queue has room. */
	if (connect(fd, (struct sockaddr *)&sa, len) == -1) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* $WATCHDOG_USEC, if it is meant for us ($WATCHDOG_PID); 0: no watchdog. */
static msec_t
notify_watchdog_env(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	const char *err;
	long long v;

	if (usec == NULL)
		return 0;
	if (pid != NULL && strtonum(pid, 1, INT32_MAX, &err) != getpid())
		return 0;
	v = strtonum(usec, 1, INT64_MAX, &err);
	if (err != NULL) {
		say_warn("notify: WATCHDOG_USEC=%s: %s; not pinging", usec, err);
		return 0;
	}
	/* Twice per period, as sd_watchdog_enabled(3) advises. */
	return v / 2000 > 0 ? v / 2000 : 1;
}

void
notify_init(void)
{
	const char *name = getenv("NOTIFY_SOCKET");

	notify_close();
	if (name != NULL) {
		strlcpy(nt.name, name, sizeof(nt.name));
		if ((nt.fd = notify_connect(name)) == -1)
			say_warn("notify: NOTIFY_SOCKET=%s: %s; not notifying systemd",
			    nt.name, strerror(errno));
	}
	if (nt.fd != -1 && (nt.watchdog = notify_watchdog_env()) > 0)
		nt.ping_at = mono_ms();
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

void
notify_close(void)
{
	if (nt.fd != -1)
		close(nt.fd);
	nt.fd = -1;
	nt.watchdog = 0;
	nt.status_due = nt.status_ever = nt.said = false;
}

bool
notify_on(void)
{
	return nt.fd != -1;
}

void
notify_send(const char *msg)
{
	size_t len = strlen(msg);
	struct pollfd p = { .fd = nt.fd, .events = POLLOUT };
	msec_t left, until = mono_ms() + NOTIFY_WAIT_MS;
	int err = 0;

	if (nt.fd == -1)
		return;
	while (send(nt.fd, msg, len, MSG_NOSIGNAL) == -1) {
		err = errno;
		left = until - mono_ms();
		if (err != EINTR && (err != EAGAIN || left <= 0))
			break;
		if (err == EAGAIN)
			poll(&p, 1, (int)left);
		err = 0;
	}
	if (err != 0 && !nt.said)
		say_warn("notify: %s: %s; dropped %.20s", nt.name, strerror(err),
		    msg);
	nt.said = nt.said || err != 0;
}

void
notify_status(const char *text)
{
	if (nt.fd == -1 || (strcmp(text, nt.status) == 0 && !nt.status_due))
		return;
	strlcpy(nt.status, text, sizeof(nt.status));
	nt.status_due = true;
	notify_tick(mono_ms());
}

msec_t
notify_tick(msec_t mono)
{
	msec_t next = INT64_MAX;
	char msg[sizeof(nt.status) + 8];

	if (nt.fd == -1)
		return next;
	if (nt.status_due && (!nt.status_ever ||
	    mono - nt.status_at >= NOTIFY_STATUS_MS)) {
		snprintf(msg, sizeof(msg), "STATUS=%s", nt.status);
		notify_send(msg);
		nt.status_due = false;
		nt.status_ever = true;
		nt.status_at = mono;
	}
	if (nt.status_due)
		next = nt.status_at + NOTIFY_STATUS_MS;
	if (nt.watchdog > 0 && mono >= nt.ping_at) {
		notify_send("WATCHDOG=1");
		nt.ping_at = mono + nt.watchdog;
	}
	if (nt.watchdog > 0 && nt.ping_at < next)
		next = nt.ping_at;
	return next;
}
