/*
 * pump.c: pipes read into files by a thread of their own, each file kept
 * to a cap.  chute-pgsql gives an exec'd handler such a pipe as its
 * stdout and stderr (queue_pg.c), so that a handler's output costs the
 * worker's disk no more than the database keeps, and neither the handler
 * nor the owner (which writes its own lines of the attempt into the same
 * pipe, in order) ever waits for the owner's loop to read it.
 */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/pump.h"
#include "base/util.h"

struct pipe_in {
	const void	*key;
	int		 rfd;		/* the read end, O_NONBLOCK */
	int		 ffd;		/* the file */
	size_t		 kept;		/* bytes in it: cap + 1 at most */
};

struct pumps {
	size_t		 cap;
	pthread_mutex_t	 mu;		/* v[], and what each entry reads and writes */
	struct pipe_in	*v;
	size_t		 n, capv;
	bool		 running;
	pthread_t	 thread;
	int		 epfd;		/* the read ends, and stopfd */
	int		 stopfd;	/* an eventfd: stop */
};

struct pumps *
pumps_new(size_t cap)
{
	struct pumps *ps = calloc(1, sizeof(*ps));

	if (ps == NULL)
		return NULL;
	ps->cap = cap;
	ps->epfd = ps->stopfd = -1;
	pthread_mutex_init(&ps->mu, NULL);
	return ps;
}

static struct pipe_in *
find(struct pumps *ps, const void *key, int rfd)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].key == key || ps->v[i].rfd == rfd)
			return &ps->v[i];
	return NULL;
}

/*
 * Read what is in p's pipe, at most reads times 64 KiB: the first cap
 * bytes and one more (which says that more came) go to the file, the rest
 * is dropped.  With mu held.
 */
static void
pump(struct pumps *ps, struct pipe_in *p, int reads)
{
	char buf[65536];
	ssize_t n;

	while (reads-- > 0 && (n = read(p->rfd, buf, sizeof(buf))) > 0) {
		size_t keep = p->kept > ps->cap ? 0 : ps->cap + 1 - p->kept;

		if (keep > (size_t)n)
			keep = (size_t)n;
		if (keep > 0 && write_all(p->ffd, buf, keep) != -1)
			p->kept += keep;
	}
}

/* Every pipe as soon as it has something; all signals blocked here. */
static void *
pumper(void *arg)
{
	struct pumps *ps = arg;
	struct epoll_event ev[32];
	struct pipe_in *p;

	for (;;) {
		int n = epoll_wait(ps->epfd, ev, 32, -1);

		pthread_mutex_lock(&ps->mu);
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == ps->stopfd) {
				pthread_mutex_unlock(&ps->mu);
				return NULL;
			}
			/* A pipe closed meanwhile is no longer found. */
			if ((p = find(ps, NULL, ev[i].data.fd)) != NULL)
				pump(ps, p, 16);
		}
		pthread_mutex_unlock(&ps->mu);
	}
}

/* The thread, once, at the first pipe: 0, or -1 with errno set. */
static int
start(struct pumps *ps)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t all, old;
	int rc;

	if (ps->running)
		return 0;
	if (ps->epfd == -1 && (ps->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return -1;
	if (ps->stopfd == -1) {
		if ((ps->stopfd = eventfd(0, EFD_CLOEXEC)) == -1)
			return -1;
		ev.data.fd = ps->stopfd;
		if (epoll_ctl(ps->epfd, EPOLL_CTL_ADD, ps->stopfd, &ev) == -1)
			return -1;
	}
	/* Signals are the owner's signalfd's: the thread inherits none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ps->thread, NULL, pumper, ps);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	ps->running = true;
	return 0;
}

int
pumps_add(struct pumps *ps, const void *key, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int p[2] = { -1, -1 }, rc = -1, saved;

	pthread_mutex_lock(&ps->mu);
	if (start(ps) == -1)
		goto out;
	if (ps->n == ps->capv) {
		size_t capv = ps->capv ? ps->capv * 2 : 16;
		struct pipe_in *v = reallocarray(ps->v, capv, sizeof(*v));

		if (v == NULL)
			goto out;
		ps->v = v;
		ps->capv = capv;
	}
	if (pipe2(p, O_CLOEXEC) == -1)
		goto out;
	ev.data.fd = p[0];
	if (fcntl(p[0], F_SETFL, O_NONBLOCK) == -1 ||
	    epoll_ctl(ps->epfd, EPOLL_CTL_ADD, p[0], &ev) == -1)
		goto out;
	ps->v[ps->n++] = (struct pipe_in){ .key = key, .rfd = p[0], .ffd = fd };
	rc = p[1];
out:
	saved = errno;
	if (rc == -1) {
		if (p[0] != -1) {
			close(p[0]);
			close(p[1]);
		}
		close(fd);
	}
	pthread_mutex_unlock(&ps->mu);
	errno = saved;
	return rc;
}

int
pumps_drain(struct pumps *ps, const void *key)
{
	struct pipe_in *p;
	int fd = -1;

	pthread_mutex_lock(&ps->mu);
	if ((p = find(ps, key, -1)) != NULL) {
		pump(ps, p, 64);
		fd = p->ffd;
	}
	pthread_mutex_unlock(&ps->mu);
	return fd;
}

void
pumps_drop(struct pumps *ps, const void *key)
{
	struct pipe_in *p;

	pthread_mutex_lock(&ps->mu);
	if ((p = find(ps, key, -1)) != NULL) {
		close(p->rfd);		/* and out of the epoll set */
		close(p->ffd);
		*p = ps->v[--ps->n];
	}
	pthread_mutex_unlock(&ps->mu);
}

void
pumps_free(struct pumps *ps)
{
	if (ps == NULL)
		return;
	if (ps->running) {
		eventfd_write(ps->stopfd, 1);
		pthread_join(ps->thread, NULL);
	}
	while (ps->n > 0)
		pumps_drop(ps, ps->v[0].key);
	free(ps->v);
	if (ps->epfd != -1)
		close(ps->epfd);
	if (ps->stopfd != -1)
		close(ps->stopfd);
	pthread_mutex_destroy(&ps->mu);
	free(ps);
}
