/*
 * pulse: run a submit command on a fixed schedule and time each run
 * (bench/fleet/chute.sh's latency driver, issue 9).
 *
 *   pulse [-1] COUNT GAP_MS OUT CMD [ARG...]
 *
 * Starts CMD COUNT times, the i-th at start + i * GAP_MS (CLOCK_MONOTONIC,
 * absolute: no drift), each from a child of its own, so that a run that takes
 * longer than GAP_MS does not delay the next: the schedule holds whatever
 * CMD costs. With -1, one run at a time: a run that ends late delays the
 * next, which then starts at once (the schedule is a floor, and runs never
 * pile up on a machine that cannot keep up). CMD's stdout is read to EOF; its first word is the job's ID.
 * For each run one line is appended to OUT: "ID START_MS END_MS",
 * CLOCK_REALTIME in milliseconds since the epoch (3 decimals), START just
 * before the spawn and END just after waitpid (the submit has committed and
 * printed its ID by then). Exits 1 if any run failed (exit status not 0, or
 * no ID), after waiting for all of them.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double
real_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One run: spawn, read its stdout, wait; one line to OUT (O_APPEND). */
static int
one(int out, long i, char *argv[])
{
	posix_spawn_file_actions_t fa;
	char buf[1024], line[1200];
	size_t have = 0;
	ssize_t r;
	double start, end;
	int p[2], status, n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		err(1, "pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	start = real_ms();
	if ((errno = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)) != 0)
		err(1, "%s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	while ((r = read(p[0], buf + have, sizeof(buf) - 1 - have)) > 0 ||
	    (r == -1 && errno == EINTR))
		if (r > 0)
			have += (size_t)r;
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			err(1, "waitpid");
	end = real_ms();
	buf[have] = '\0';
	buf[strcspn(buf, " \t\n")] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || buf[0] == '\0') {
		warnx("run %ld: %s failed (status 0x%x, output \"%s\")", i + 1, argv[0], status, buf);
		return 1;
	}
	n = snprintf(line, sizeof(line), "%s %.3f %.3f\n", buf, start, end);
	if (write(out, line, (size_t)n) != n)
		err(1, "write");
	return 0;
}

int
main(int argc, char *argv[])
{
	struct timespec t0, due;
	long count, gap;
	int out, status, failed = 0, serial = 0;
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "-1") == 0) {
		serial = 1;
		argc--;
		argv++;
	}
	if (argc < 5)
		errx(64, "usage: pulse [-1] COUNT GAP_MS OUT CMD [ARG...]");
	count = atol(argv[1]);
	gap = atol(argv[2]);
	if (count <= 0 || gap < 0)
		errx(64, "bad COUNT or GAP_MS");
	if ((out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644)) == -1)
		err(1, "%s", argv[3]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < count; i++) {
		long long ns = (long long)t0.tv_nsec + (long long)i * gap * 1000000LL;

		due.tv_sec = t0.tv_sec + (time_t)(ns / 1000000000LL);
		due.tv_nsec = (long)(ns % 1000000000LL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
			;
		if (serial) {
			failed |= one(out, i, argv + 4);
			continue;
		}
		/* Reap the runs that have ended, without waiting. */
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
		if ((pid = fork()) == -1)
			err(1, "fork");
		if (pid == 0)
			_exit(one(out, i, argv + 4));
	}
	while ((pid = wait(&status)) > 0 || (pid == -1 && errno == EINTR))
		if (pid > 0)
			failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return failed;
}
