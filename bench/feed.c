/*
 * feed: submit N jobs by tmp+mv from one process, then wait until N names
 * have arrived in WAITDIR (counted from inotify IN_MOVED_TO events; a
 * readdir count after IN_Q_OVERFLOW). The submitter costs no fork and no
 * fsync, so what is timed is the system that processes the jobs. With -s,
 * only names that start with "PREFIX." count, so that a late probe job is
 * not taken for a timed one.
 *
 * usage: feed [-n N] [-W M] [-i INTERVAL_US] [-p PREFIX] [-S STAMPS]
 *             [-k K1,K2,...] [-T TIMEOUT_S] [-R READYFILE] [-s SPOOL] -w WAITDIR
 *
 *   -W M       wait for M arrivals instead of N
 *   -s SPOOL   submit into SPOOL/tmp then rename to SPOOL/new (none: only wait)
 *   -i US      one job every US microseconds (default: as fast as it can)
 *   -S FILE    write "NAME SEC.NSEC" per job: CLOCK_REALTIME just before its rename
 *   -k LIST    also print "at_K SEC.NSEC" when the K-th arrival is seen
 *   -R FILE    create FILE once the watch is in place (for a waiter started first)
 *
 * Prints "key value" lines: t0 (start of submission, or of waiting),
 * submit_s, t_end (the N-th arrival), total_s, arrived. Exit 1 on timeout.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#define MAXK 16

static int in_fd;
static const char *only;		/* count only names that start with this */
static long arrived, base;
static long ks[MAXK];
static int nk, next_k;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
counted(const char *name)
{
	return name[0] != '.' && (only == NULL || strncmp(name, only, strlen(only)) == 0);
}

static long
count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		err(1, "%s", path);
	while ((de = readdir(d)) != NULL)
		if (counted(de->d_name))
			n++;
	closedir(d);
	return n;
}

static void
note_milestones(void)
{
	double t = now();

	while (next_k < nk && arrived >= ks[next_k])
		printf("at_%ld %.6f\n", ks[next_k++], t);
}

/* Read what inotify has; wait at most `ms` for it. */
static void
drain(const char *waitdir, int ms)
{
	char buf[64 * 1024] __attribute__((aligned(8)));
	struct pollfd p = { in_fd, POLLIN, 0 };
	ssize_t r;
	char *q;

	if (poll(&p, 1, ms) <= 0)
		return;
	if ((r = read(in_fd, buf, sizeof(buf))) <= 0)
		return;
	for (q = buf; q < buf + r;) {
		struct inotify_event *e = (struct inotify_event *)q;

		if (e->mask & IN_Q_OVERFLOW)
			arrived = count_dir(waitdir) - base;
		else if (e->len > 0 && counted(e->name))
			arrived++;
		q += sizeof(*e) + e->len;
	}
	note_milestones();
}

static void
submit_one(int tmp, int new, const char *name, FILE *stamps)
{
	static const char body[] = "bench job\n";
	struct timespec ts;
	int fd;

	fd = openat(tmp, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1 || write(fd, body, sizeof(body) - 1) != sizeof(body) - 1 || close(fd) == -1)
		err(1, "tmp/%s", name);
	clock_gettime(CLOCK_REALTIME, &ts);
	if (renameat(tmp, name, new, name) == -1)
		err(1, "rename tmp/%s new/%s", name, name);
	if (stamps != NULL)
		fprintf(stamps, "%s %lld.%09ld\n", name, (long long)ts.tv_sec, ts.tv_nsec);
}

static int
open_sub(const char *spool, const char *sub)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", spool, sub);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", path);
	return fd;
}

static void
parse_ks(char *s)
{
	char *tok;

	for (tok = strtok(s, ","); tok != NULL && nk < MAXK; tok = strtok(NULL, ","))
		ks[nk++] = atol(tok);
}

int
main(int argc, char *argv[])
{
	const char *spool = NULL, *waitdir = NULL, *prefix = "j", *stampfile = NULL, *ready = NULL;
	long n = 0, want = -1, interval_us = 0, i;
	double timeout = 600, t0, tsub, tend, deadline;
	FILE *stamps = NULL;
	int ch, tmp = -1, new = -1;

	while ((ch = getopt(argc, argv, "n:W:i:p:S:k:T:R:s:w:")) != -1) {
		switch (ch) {
		case 'n': n = atol(optarg); break;
		case 'W': want = atol(optarg); break;
		case 'i': interval_us = atol(optarg); break;
		case 'p': prefix = optarg; break;
		case 'S': stampfile = optarg; break;
		case 'k': parse_ks(optarg); break;
		case 'T': timeout = atof(optarg); break;
		case 'R': ready = optarg; break;
		case 's': spool = optarg; break;
		case 'w': waitdir = optarg; break;
		default: errx(64, "bad usage; see the comment at the top of bench/feed.c");
		}
	}
	if (waitdir == NULL || n < 0)
		errx(64, "bad usage; see the comment at the top of bench/feed.c");
	if (want < 0)
		want = n;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (spool != NULL) {
		char *p;

		if (asprintf(&p, "%s.", prefix) == -1)
			err(1, "asprintf");
		only = p;
		tmp = open_sub(spool, "tmp");
		new = open_sub(spool, "new");
	}
	if ((in_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK)) == -1 ||
	    inotify_add_watch(in_fd, waitdir, IN_MOVED_TO) == -1)
		err(1, "inotify %s", waitdir);
	base = count_dir(waitdir);
	if (ready != NULL && close(open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
		err(1, "%s", ready);
	if (stampfile != NULL && (stamps = fopen(stampfile, "w")) == NULL)
		err(1, "%s", stampfile);
	t0 = now();
	printf("t0 %.6f\n", t0);
	for (i = 0; spool != NULL && i < n; i++) {
		char name[256];

		if (interval_us > 0) {
			struct timespec ts;
			double at = t0 + i * interval_us / 1e6;

			ts.tv_sec = (time_t)at;
			ts.tv_nsec = (long)((at - ts.tv_sec) * 1e9);
			while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
		snprintf(name, sizeof(name), "%s.%07ld", prefix, i);
		submit_one(tmp, new, name, stamps);
		if (i % 256 == 255)
			drain(waitdir, 0);
	}
	tsub = now();
	printf("submit_s %.6f\n", tsub - t0);
	if (stamps != NULL && fclose(stamps) == EOF)
		err(1, "%s", stampfile);
	deadline = t0 + timeout;
	while (arrived < want && now() < deadline)
		drain(waitdir, 100);
	tend = now();
	printf("arrived %ld\n", arrived);
	if (arrived < want) {
		printf("timeout %.0f\n", timeout);
		return 1;
	}
	printf("t_end %.6f\n", tend);
	printf("total_s %.6f\n", tend - t0);
	return 0;
}
