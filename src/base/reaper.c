/*
 * reaper.c: process groups that die with us (reaper.h).  PR_SET_PDEATHSIG
 * kills a handler when its owner dies, but not what the handler started;
 * nothing inside a process killed with SIGKILL can act for it.  So the
 * owner forks, once, a small process of its own that outlives it: the
 * reaper.  It holds one end of a socket pair whose other end only the
 * owner holds (close-on-exec: no handler inherits it), and reads messages
 * from it, each one send(2) of 8 bytes (its first, the other way, is
 * its own pid, for the owner's log):
 *
 *	A PGID	a handler's (or worker's) process group: kill it if we die;
 *		sent by the vfork child itself, after setpgid and before
 *		execve, so no process of the handler exists unannounced;
 *	F PGID	the supervisor has SIGKILLed what was left of the group
 *		while its leader was still an unreaped zombie: forget it;
 *	D WHEN	kill every group we know at WHEN unless another D comes
 *		first: WHEN is the low 32 bits of a CLOCK_BOOTTIME time in
 *		ms, within 2^31 ms of our own clock (a lease over 12 days
 *		sends none); 0: no deadline.  Sent by the fleet's worker
 *		each time its leases start or are renewed, so that a worker
 *		frozen past them (SIGSTOP) loses its handlers before the
 *		server lets another worker take their jobs (fleet.md).
 *
 * On EOF (the owner is gone, whatever killed it) it SIGKILLs every group
 * it still knows, again every 10 ms while any of them still has a
 * process (a fork racing the first kill), for at most 2 s, and exits.
 * At a deadline it does the same and stays: between its kills it reads
 * the owner's messages (an F must be heeded before the group's id can be
 * reused), and stops at a new D (the owner is back, and renewed) or when
 * the groups are empty.  CLOCK_BOOTTIME, on a timerfd, counts a host's
 * suspension: a deadline that passed while the host slept fires as soon
 * as we run again, where CLOCK_MONOTONIC would wait out the time lost.
 *
 * The reaper is in a session and process group of its own (a handler's
 * kill(0, ...) or a terminal's ^C does not reach it), ignores the signals
 * that ask a process to stop, keeps no descriptor of the owner but its
 * end of the socket, and is not the owner's child (a double fork): the
 * owner's waits never see it, and it never holds up the owner's exit.
 *
 * Group ids and reuse: while a group has a process, zombie leader
 * included, its id cannot be given to a new process.  The supervisor
 * sends F before it reaps the leader, and the reaper reads every message
 * before EOF, so it never kills a group it was told to forget.  What is
 * left: when the owner dies, a group that empties (its leader reaped by
 * init, its last member gone) between that death and the reaper's kill,
 * or between two of its kills 10 ms apart, could have its id reused by an
 * unrelated process of ours in that instant, which takes pid_max forks of
 * the whole host within those milliseconds.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/reaper.h"

struct rmsg {
	int32_t	 op;		/* 'A', 'F' or 'D' */
	int32_t	 pgid;		/* D: WHEN */
};

/* A deadline this far ahead or more is sent as none: WHEN wraps at 2^31. */
#define FAR_MS	(INT64_C(1) << 30)

static struct {
	int		 fd;	/* our end; -1: no reaper */
	pid_t		 pid;	/* the reaper, as it said */
	volatile bool	 lost;	/* a message could not be sent */
	int64_t		 deadline;	/* the last D, CLOCK_BOOTTIME ms; 0: none */
} R = { -1, 0, false, 0 };

/* The reaper's own state, in its process. */
struct rstate {
	int		 fd, tfd;	/* our end; the deadline's timer (-1: none) */
	pid_t		*known;
	int		 max;
};

/* The signals that ask a process to stop or come from a terminal. */
static const int quiet[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE,
    SIGTSTP, SIGTTIN, SIGTTOU };

/* In the reaper: note or forget one group. */
static void
apply(pid_t *known, int max, const struct rmsg *m)
{
	int freeslot = -1;

	for (int i = 0; i < max; i++) {
		if (known[i] == m->pgid) {
			if (m->op == 'F')
				known[i] = 0;
			return;
		}
		if (known[i] == 0 && freeslot == -1)
			freeslot = i;
	}
	/* Never full: at most one group per slot is known at a time. */
	if (m->op == 'A' && freeslot != -1)
		known[freeslot] = m->pgid;
}

/* SIGKILL every known group once; how many still had a process. */
static int
kill_round(pid_t *known, int max)
{
	int left = 0;

	for (int i = 0; i < max; i++) {
		if (known[i] <= 0)
			continue;
		if (kill(-known[i], SIGKILL) == 0)
			left++;
		else
			known[i] = 0;	/* ESRCH: the group is empty */
	}
	return left;
}

/* In the reaper, on EOF: SIGKILL every known group until none is left. */
static void
kill_all(pid_t *known, int max)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	for (int round = 0; round < 200; round++) {
		if (kill_round(known, max) == 0)
			return;
		nanosleep(&tick, NULL);
	}
}

static int64_t
boot_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * In the reaper: the timer at D's WHEN, the low 32 bits of a time on our
 * clock within 2^31 ms of now (so the time the message spent on its way
 * does not count); WHEN 0 disarms it.  One already past fires at once.
 * Armed relative to our own reading of the clock, not at an absolute
 * time: the owner's clock and ours are read the same way, the kernel's
 * need not be (an interposed clock_gettime, as libfaketime's, shifts an
 * absolute timerfd time by its offset and fired a 5 h fast worker's
 * deadline at once, killing its handlers: netns.sh's clock scenario).
 */
static void
arm(int tfd, int32_t when)
{
	struct itimerspec it = { { 0, 0 }, { 0, 0 } };
	int64_t now = boot_ms(), in;

	if (tfd == -1)
		return;
	if (when != 0) {
		in = (int32_t)((uint32_t)when - (uint32_t)now);
		if (in <= 0)
			in = 0;
		it.it_value.tv_sec = (time_t)(in / 1000);
		/* a zero it_value would disarm: 1 ns is "at once" */
		it.it_value.tv_nsec = in == 0 ? 1 : (long)(in % 1000) * 1000000;
	}
	timerfd_settime(tfd, 0, &it, NULL);
}

/* In the reaper: one message heeded; true if it was a deadline (D). */
static bool
heed(struct rstate *st, const struct rmsg *m)
{
	if (m->op == 'D') {
		arm(st->tfd, m->pgid);
		return true;
	}
	if (m->pgid > 1)
		apply(st->known, st->max, m);
	return false;
}

/*
 * In the reaper, at a deadline the owner did not renew: SIGKILL every
 * known group, again every 10 ms while any has a process (its leader may
 * stay a zombie until the owner runs again), for at most 2 s, heeding the
 * owner's messages between two kills: an F first, and a D ends it (the
 * owner is back and renewed; what it starts next must live).  0, or -1
 * on EOF.
 */
static int
fire(struct rstate *st)
{
	struct pollfd p = { .fd = st->fd, .events = POLLIN };
	struct rmsg m;
	ssize_t n;

	for (int round = 0; round < 200; round++) {
		if (kill_round(st->known, st->max) == 0)
			return 0;
		if (poll(&p, 1, 10) < 1)
			continue;
		while ((n = recv(st->fd, &m, sizeof(m), MSG_DONTWAIT)) ==
		    (ssize_t)sizeof(m))
			if (heed(st, &m))
				return 0;
		if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
			return -1;
	}
	return 0;
}

/*
 * In the reaper: wait for a message or the deadline, messages first (a
 * D read late must not let an old deadline fire).  0, or -1 on EOF.
 */
static int
serve(struct rstate *st)
{
	struct pollfd p[2] = { { .fd = st->fd, .events = POLLIN },
	    { .fd = st->tfd, .events = POLLIN } };
	struct rmsg m;
	uint64_t ticks;
	ssize_t n;

	if (poll(p, st->tfd == -1 ? 1 : 2, -1) == -1)
		return 0;	/* EINTR: nothing of ours is handled */
	if (p[0].revents != 0) {
		n = recv(st->fd, &m, sizeof(m), MSG_DONTWAIT);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			return 0;
		if (n <= 0)
			return -1;	/* EOF: the owner is gone */
		if (n == (ssize_t)sizeof(m))
			heed(st, &m);
		return 0;
	}
	if ((p[1].revents & POLLIN) &&
	    read(st->tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks))
		return fire(st);
	return 0;
}

/* The reaper itself: system calls only, on what was allocated before fork. */
static void __attribute__((noreturn))
reaper_main(int fd, pid_t *known, int max)
{
	struct rstate st = { .fd = fd, .known = known, .max = max };
	struct rmsg m;
	sigset_t none;

	setsid();
	prctl(PR_SET_NAME, "chute-reaper");
	m = (struct rmsg){ 'P', (int32_t)getpid() };	/* for the owner's log */
	send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	if (fd > 0)
		close_range(0, (unsigned)fd - 1, 0);
	close_range((unsigned)fd + 1, ~0U, 0);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Without it (out of descriptors) only the EOF kills: as before D. */
	st.tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC);
	while (serve(&st) == 0)
		;
	kill_all(known, max);
	_exit(0);
}

static int	 tell(int op, int32_t pgid);

/* D for R.deadline: its low 32 bits, 0 kept for "none" (1 ms early). */
static void
tell_deadline(void)
{
	uint32_t when = (uint32_t)R.deadline;

	if (R.deadline != 0 && when == 0)
		when = UINT32_MAX;
	if (R.fd != -1 && tell('D', (int32_t)when) == -1)
		R.lost = true;
}

/* The reaper's first message: its pid.  0, or -1 if it died first. */
static int
hello(int fd, pid_t *pid)
{
	struct rmsg m;
	ssize_t n;

	while ((n = recv(fd, &m, sizeof(m), 0)) == -1 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(m) || m.op != 'P')
		return -1;
	*pid = m.pgid;
	return 0;
}

int
reaper_start(int max)
{
	int sv[2], status, saved;
	pid_t *known, mid, reaper;

	if ((known = calloc((size_t)max, sizeof(*known))) == NULL)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1) {
		saved = errno;
		free(known);
		errno = saved;
		return -1;
	}
	if ((mid = fork()) == 0) {
		pid_t pid = fork();

		if (pid == 0)
			reaper_main(sv[1], known, max);
		_exit(pid == -1 ? 1 : 0);
	}
	saved = errno;
	free(known);
	close(sv[1]);
	while (mid > 0 && waitpid(mid, &status, 0) == -1 && errno == EINTR)
		;
	if (mid == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    hello(sv[0], &reaper) == -1) {
		close(sv[0]);
		errno = mid == -1 ? saved : EAGAIN;
		return -1;
	}
	reaper_stop();
	R.fd = sv[0];
	R.pid = reaper;
	R.lost = false;
	if (R.deadline != 0)
		tell_deadline();	/* a reaper started again: the same one */
	return 0;
}

void
reaper_stop(void)
{
	if (R.fd != -1)
		close(R.fd);
	R.fd = -1;
	R.lost = false;
}

bool
reaper_running(void)
{
	return R.fd != -1;
}

pid_t
reaper_pid(void)
{
	return R.fd != -1 ? R.pid : 0;
}

/* One message; async-signal-safe, and safe in a vfork child. */
static int
tell(int op, int32_t pgid)
{
	struct rmsg m = { op, pgid };
	ssize_t n;

	while ((n = send(R.fd, &m, sizeof(m), MSG_NOSIGNAL)) == -1 &&
	    errno == EINTR)
		;
	return n == (ssize_t)sizeof(m) ? 0 : -1;
}

int
reaper_add(pid_t pgid)
{
	if (R.fd == -1)
		return 0;
	if (tell('A', pgid) == -1) {
		R.lost = true;
		return -1;
	}
	return 0;
}

void
reaper_deadline(int64_t ms)
{
	R.deadline = ms >= 0 && ms < FAR_MS ? boot_ms() + ms : 0;
	tell_deadline();
}

void
reaper_forget(pid_t pgid)
{
	if (R.fd != -1 && tell('F', pgid) == -1)
		R.lost = true;
}

bool
reaper_lost(bool probe)
{
	struct pollfd p = { .fd = R.fd, .events = 0 };

	if (R.fd == -1)
		return false;
	if (R.lost || !probe)
		return R.lost;
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}
