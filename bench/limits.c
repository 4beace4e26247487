/*
 * limits: what this machine allows at best, so that chute's figures can be
 * read as ratios to it (issue 4, item 1). Prints "key value" lines.
 *
 * usage: limits [-t SECONDS] [-n INOTIFY_SAMPLES] [-s STAMP_BIN] DIR
 * DIR must be on the file system the spools are on. Nothing is unlinked
 * (the caller removes DIR later): on ext4 without a journal, inodes freed
 * a few seconds earlier make every following create slower.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double run_seconds = 2.0;

static double
now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pid_t
spawn(const char *path, char *const argv[], posix_spawn_file_actions_t *fa)
{
	pid_t pid;
	int e;

	if ((e = posix_spawn(&pid, path, fa, NULL, argv, environ)) != 0) {
		errno = e;
		err(1, "posix_spawn %s", path);
	}
	return pid;
}

/*
 * vfork + execve, as chute's owner starts a handler since it stopped using
 * posix_spawn (src/spawn.c): the floor of what its spawning can cost.
 */
static pid_t
spawn_vfork(const char *path, char *const argv[])
{
	pid_t pid;

	if ((pid = vfork()) == -1)
		err(1, "vfork");
	if (pid == 0) {
		execve(path, argv, environ);
		_exit(127);
	}
	return pid;
}

static void
reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			err(1, "waitpid");
}

static double
cpu_self(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The parent's own CPU per spawn+wait in the last spawn_rate(): what any spawning owner pays. */
static double parent_cpu_us;

/*
 * Keep `par` children of /bin/true in flight from one parent, as an owner
 * with -j par does; started with posix_spawn, or with vfork if use_vfork.
 */
static double
spawn_rate(int par, int use_vfork)
{
	char *argv[] = { "true", NULL };
	double t0, t, c0;
	long n = 0;
	int running = 0, st;

	c0 = cpu_self();
	t0 = now(CLOCK_MONOTONIC);
	for (;;) {
		t = now(CLOCK_MONOTONIC);
		while (t - t0 < run_seconds && running < par) {
			if (use_vfork)
				spawn_vfork("/bin/true", argv);
			else
				spawn("/bin/true", argv, NULL);
			running++;
		}
		if (running == 0)
			break;
		if (wait(&st) == -1) {
			if (errno == EINTR)
				continue;
			err(1, "wait");
		}
		running--;
		n++;
	}
	t = now(CLOCK_MONOTONIC);
	parent_cpu_us = n > 0 ? (cpu_self() - c0) * 1e6 / n : 0;
	return n / (t - t0);
}

/*
 * The same with two parents, each keeping one /bin/true in flight: the
 * machine's exec capacity without one process's address space shared by
 * every vfork-style child (TLB shootdowns between the CPUs).
 */
static double
spawn_rate_2proc(void)
{
	int p[2], i;
	double sum = 0, r;
	pid_t kids[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		err(1, "pipe2");
	for (i = 0; i < 2; i++) {
		if ((kids[i] = fork()) == -1)
			err(1, "fork");
		if (kids[i] == 0) {
			r = spawn_rate(1, 0);
			_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
		}
	}
	close(p[1]);
	for (i = 0; i < 2; i++) {
		if (read(p[0], &r, sizeof(r)) != sizeof(r))
			errx(1, "spawn child died");
		sum += r;
	}
	close(p[0]);
	for (i = 0; i < 2; i++)
		reap(kids[i]);
	return sum;
}

/* The cost of entering and leaving the kernel, which virtualisation can make large. */
static double
syscall_ns(void)
{
	const long n = 200000;
	double t0 = now(CLOCK_MONOTONIC);
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	return (now(CLOCK_MONOTONIC) - t0) * 1e9 / n;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(double *v, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

/* From posix_spawn to the child's first instruction: STAMP - prints CLOCK_REALTIME on stdout. */
static void
spawn_start_latency(const char *stamp, int samples)
{
	char *argv[] = { "stamp", "-", NULL };
	double *lat = calloc(samples, sizeof(*lat));
	char buf[64];
	int i, p[2];

	if (lat == NULL)
		err(1, "calloc");
	for (i = 0; i < samples; i++) {
		posix_spawn_file_actions_t fa;
		ssize_t r;
		double t0;
		pid_t pid;

		if (pipe2(p, O_CLOEXEC) == -1)
			err(1, "pipe2");
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		t0 = now(CLOCK_REALTIME);
		pid = spawn(stamp, argv, &fa);
		posix_spawn_file_actions_destroy(&fa);
		close(p[1]);
		r = read(p[0], buf, sizeof(buf) - 1);
		close(p[0]);
		reap(pid);
		if (r <= 0)
			errx(1, "%s: no time printed", stamp);
		buf[r] = '\0';
		lat[i] = (strtod(buf, NULL) - t0) * 1e6;
	}
	qsort(lat, samples, sizeof(*lat), cmp_double);
	printf("spawn_start_us_p50 %.1f\n", pct(lat, samples, 50));
	printf("spawn_start_us_p99 %.1f\n", pct(lat, samples, 99));
	free(lat);
}

static void
xfsync(int fd, const char *what)
{
	if (fsync(fd) == -1)
		err(1, "fsync %s", what);
}

/*
 * The submitter's durable create, as spool-layout.md describes it: create
 * tmp/X with O_EXCL, write 100 bytes, fsync, close, rename to new/X, and
 * fsync new/ once per `batch` renames.
 */
static double
durable_rate(int tmp, int new, int batch)
{
	char name[32], data[100];
	double t0;
	long n = 0;

	memset(data, 'x', sizeof(data));
	t0 = now(CLOCK_MONOTONIC);
	while (now(CLOCK_MONOTONIC) - t0 < run_seconds || n % batch != 0) {
		int fd;

		snprintf(name, sizeof(name), "d%08ld", n);
		fd = openat(tmp, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd == -1)
			err(1, "create %s", name);
		if (write(fd, data, sizeof(data)) != sizeof(data))
			err(1, "write %s", name);
		xfsync(fd, name);
		close(fd);
		if (renameat(tmp, name, new, name) == -1)
			err(1, "rename %s", name);
		n++;
		if (n % batch == 0)
			xfsync(new, "new/");
	}
	return n / (now(CLOCK_MONOTONIC) - t0);
}

static void
make_files(int d, const char *prefix, int n)
{
	char name[32];
	int i, fd;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%08d", prefix, i);
		if ((fd = openat(d, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) == -1)
			err(1, "create %s", name);
		close(fd);
	}
}

/* rename(2) of existing files from a/ to b/, nothing else. */
static double
rename_rate(int a, int b, int n)
{
	char name[32];
	double t0, t;
	int i;

	make_files(a, "r", n);
	sync();
	t0 = now(CLOCK_MONOTONIC);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "r%08d", i);
		if (renameat(a, name, b, name) == -1)
			err(1, "rename %s", name);
	}
	t = now(CLOCK_MONOTONIC) - t0;
	return n / t;
}

/*
 * A child blocks in read(2) on an inotify watch of b/; the parent takes the
 * time just before each rename(a/X, b/X), the child when read returns.
 */
static void
inotify_latency(int a, int b, const char *bpath, int samples)
{
	double *sent = calloc(samples, sizeof(double));
	double *got = calloc(samples, sizeof(double));
	int ready[2], back[2], i;
	char name[32], c;
	pid_t pid;

	if (sent == NULL || got == NULL || pipe2(ready, O_CLOEXEC) == -1 || pipe2(back, O_CLOEXEC) == -1)
		err(1, "inotify setup");
	make_files(a, "i", samples);
	if ((pid = fork()) == -1)
		err(1, "fork");
	if (pid == 0) {
		char ev[64 * 1024] __attribute__((aligned(8)));
		int in = inotify_init1(IN_CLOEXEC), seen = 0;

		if (in == -1 || inotify_add_watch(in, bpath, IN_MOVED_TO) == -1)
			err(1, "inotify %s", bpath);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		while (seen < samples) {
			ssize_t r = read(in, ev, sizeof(ev));
			double t = now(CLOCK_MONOTONIC);
			char *p;

			if (r <= 0)
				err(1, "read inotify");
			for (p = ev; p < ev + r && seen < samples; seen++) {
				struct inotify_event *e = (struct inotify_event *)p;

				if (write(back[1], &t, sizeof(t)) != sizeof(t))
					_exit(1);
				p += sizeof(*e) + e->len;
			}
		}
		_exit(0);
	}
	close(back[1]);
	if (read(ready[0], &c, 1) != 1)
		errx(1, "inotify child did not start");
	for (i = 0; i < samples; i++) {
		struct timespec gap = { 0, 2 * 1000 * 1000 };

		/* A gap, so that the child is asleep in read(2) as an idle owner is. */
		nanosleep(&gap, NULL);
		snprintf(name, sizeof(name), "i%08d", i);
		sent[i] = now(CLOCK_MONOTONIC);
		if (renameat(a, name, b, name) == -1)
			err(1, "rename %s", name);
	}
	for (i = 0; i < samples; i++) {
		if (read(back[0], &got[i], sizeof(double)) != sizeof(double))
			errx(1, "inotify child died");
		got[i] = (got[i] - sent[i]) * 1e6;
	}
	reap(pid);
	qsort(got, samples, sizeof(double), cmp_double);
	printf("inotify_us_p50 %.1f\n", pct(got, samples, 50));
	printf("inotify_us_p99 %.1f\n", pct(got, samples, 99));
	free(sent);
	free(got);
}

static int
subdir(int root, const char *name)
{
	int fd;

	if (mkdirat(root, name, 0700) == -1 && errno != EEXIST)
		err(1, "mkdir %s", name);
	if ((fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "open %s", name);
	return fd;
}

/* DIR/NAME/tmp and DIR/NAME/new, each measurement in fresh directories. */
static void
pair(int root, const char *name, int *a, int *b, char *bpath, size_t len, const char *rootpath)
{
	int d = subdir(root, name);

	*a = subdir(d, "tmp");
	*b = subdir(d, "new");
	close(d);
	snprintf(bpath, len, "%s/%s/new", rootpath, name);
}

int
main(int argc, char *argv[])
{
	const char *stamp = NULL;
	char bpath[4096];
	int ch, samples = 1000, root, a, b;

	while ((ch = getopt(argc, argv, "t:n:s:")) != -1) {
		switch (ch) {
		case 't': run_seconds = atof(optarg); break;
		case 'n': samples = atoi(optarg); break;
		case 's': stamp = optarg; break;
		default: errx(64, "usage: limits [-t SECONDS] [-n SAMPLES] [-s STAMP_BIN] DIR");
		}
	}
	if (optind + 1 != argc || run_seconds <= 0 || samples < 10)
		errx(64, "usage: limits [-t SECONDS] [-n SAMPLES] [-s STAMP_BIN] DIR");
	if ((root = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		err(1, "%s", argv[optind]);
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("syscall_ns %.0f\n", syscall_ns());
	printf("spawn_j1_per_s %.1f\n", spawn_rate(1, 0));
	printf("spawn_j1_parent_cpu_us %.1f\n", parent_cpu_us);
	printf("spawn_j2_per_s %.1f\n", spawn_rate(2, 0));
	printf("spawn_j2_parent_cpu_us %.1f\n", parent_cpu_us);
	printf("vfork_j1_per_s %.1f\n", spawn_rate(1, 1));
	printf("vfork_j1_parent_cpu_us %.1f\n", parent_cpu_us);
	printf("vfork_j2_per_s %.1f\n", spawn_rate(2, 1));
	printf("vfork_j2_parent_cpu_us %.1f\n", parent_cpu_us);
	printf("spawn_2proc_per_s %.1f\n", spawn_rate_2proc());
	if (stamp != NULL)
		spawn_start_latency(stamp, samples / 5);
	pair(root, "durable1", &a, &b, bpath, sizeof(bpath), argv[optind]);
	printf("durable_fsync_each_per_s %.1f\n", durable_rate(a, b, 1));
	pair(root, "durable64", &a, &b, bpath, sizeof(bpath), argv[optind]);
	printf("durable_fsync_64_per_s %.1f\n", durable_rate(a, b, 64));
	pair(root, "rename", &a, &b, bpath, sizeof(bpath), argv[optind]);
	printf("rename_per_s %.1f\n", rename_rate(a, b, 20000));
	pair(root, "inotify", &a, &b, bpath, sizeof(bpath), argv[optind]);
	inotify_latency(a, b, bpath, samples);
	return 0;
}
