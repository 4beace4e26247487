/*
 * web_late.c: the time a request may take to arrive.  libmicrohttpd
 * closes a connection idle for WEB_TIMEOUT_S, but any byte resets that:
 * a header line every few seconds (slowloris) held a connection, and
 * WEB_CONN_MAX of them the whole dashboard, for as long as they went on.
 * So each connection has a deadline, WEB_REQUEST_S after it opened or
 * after its last response, by which its request (headers and body) must
 * be whole; a thread of its own shuts down the socket of one that is
 * late.  libmicrohttpd's thread for it then reads the end, as if the
 * client had closed, and closes the connection itself.
 */
#include <sys/socket.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "chute-web/web.h"

struct web_late_conn {
	struct web_late	*l;
	int		 fd;		/* -1: a free slot */
	msec_t		 due;		/* mono_ms(); 0: its request is whole */
};

struct web_late {
	pthread_mutex_t	 mu;		/* guards what follows */
	pthread_cond_t	 cv;		/* signalled to stop */
	bool		 stop;
	struct web_late_conn v[WEB_CONN_MAX];
	pthread_t	 thread;
};

/*
 * Shut down the sockets of the late connections, under l->mu.  A slot is
 * freed (web_late_close) before libmicrohttpd closes its descriptor, and
 * under l->mu too: fd is never another file's by the time it is shut.
 */
static int
shut_late(struct web_late *l, msec_t now)
{
	int n = 0;

	for (int i = 0; i < WEB_CONN_MAX; i++) {
		struct web_late_conn *k = &l->v[i];

		if (k->fd == -1 || k->due == 0 || k->due > now)
			continue;
		shutdown(k->fd, SHUT_RDWR);
		k->due = 0;
		n++;
	}
	return n;
}

/* Once a second: a connection is closed at most 1 s after its deadline. */
static void *
run(void *arg)
{
	struct web_late *l = arg;
	struct timespec ts;
	int n;

	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&l->cv, &l->mu, &ts);
		if (l->stop || (n = shut_late(l, mono_ms())) == 0)
			continue;
		pthread_mutex_unlock(&l->mu);
		fprintf(stderr, "chute: web: %d connection%s closed: no whole "
		    "request within %d s\n", n, n == 1 ? "" : "s",
		    WEB_REQUEST_S);
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

struct web_late *
web_late_start(void)
{
	struct web_late *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	int e;

	if (l == NULL) {
		fprintf(stderr, "chute: web: %s\n", strerror(errno));
		return NULL;
	}
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	for (int i = 0; i < WEB_CONN_MAX; i++)
		l->v[i] = (struct web_late_conn){ .l = l, .fd = -1 };
	if ((e = pthread_create(&l->thread, NULL, run, l)) != 0) {
		fprintf(stderr, "chute: web: a thread: %s\n", strerror(e));
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		free(l);
		return NULL;
	}
	return l;
}

void
web_late_stop(struct web_late *l)
{
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

struct web_late_conn *
web_late_open(struct web_late *l, int fd)
{
	struct web_late_conn *k = NULL;

	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < WEB_CONN_MAX && k == NULL; i++)
		if (l->v[i].fd == -1)
			k = &l->v[i];
	if (k != NULL) {
		k->fd = fd;
		k->due = mono_ms() + WEB_REQUEST_S * 1000;
	}
	pthread_mutex_unlock(&l->mu);
	return k;
}

/* Set k's deadline: due, or 0 for none. */
static void
set_due(struct web_late_conn *k, msec_t due)
{
	if (k == NULL)
		return;
	pthread_mutex_lock(&k->l->mu);
	k->due = due;
	pthread_mutex_unlock(&k->l->mu);
}

void
web_late_whole(struct web_late_conn *k)
{
	set_due(k, 0);
}

void
web_late_again(struct web_late_conn *k)
{
	set_due(k, mono_ms() + WEB_REQUEST_S * 1000);
}

void
web_late_close(struct web_late_conn *k)
{
	if (k == NULL)
		return;
	pthread_mutex_lock(&k->l->mu);
	k->fd = -1;
	k->due = 0;
	pthread_mutex_unlock(&k->l->mu);
}
