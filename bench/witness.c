/*
 * witness: the handler that counts for the scheduling rows (issue 36). Each
 * job it runs appends one line "KEY START_US END_US" to a shared file, the
 * times being CLOCK_MONOTONIC microseconds: one clock for every process on
 * the machine, so chute's handlers and the node peers' (bench/fleet/lib.js
 * takes process.hrtime, the same clock) can be checked by one checker,
 * bench/witness.py (the most jobs of one key running at once, the starts in
 * any window).
 *
 *   witness exec FILE [HOLD_US]     an exec'd handler: one job, then exit
 *   witness persistent FILE [HOLD_US [COUNT N [PREFIX]]]
 *                                   a --persistent worker: for each
 *                                   "ID<TAB>PATH" line on stdin, one job,
 *                                   then "ok"; with COUNT N, one byte per
 *                                   job (per job whose key starts with
 *                                   PREFIX, if given) appended to COUNT,
 *                                   and the worker whose byte is the Nth
 *                                   sends SIGTERM to its owner (as pstamp)
 *   witness now                     print the clock, for a driver's t0
 *
 * The job's key: the ",k=KEY" attribute of its ID (a spool file's name,
 * spool-layout.md), else "k":"KEY" in its payload (the fleet rows put it
 * there, as the peers' payloads carry it), else "-" (no key). HOLD_US is
 * the job's work: the handler stays that long between its two stamps, so
 * that two runs of one key that overlap are seen overlapping (a no-op
 * handler's span is a few microseconds). It is the job's length, not a
 * wait for anything.
 *
 * One write(2) per line on an O_APPEND descriptor: lines of concurrent
 * handlers do not interleave (each is far below PIPE_BUF).
 */
#include <err.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEYMAX 64

static long long
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The key from "...,k=KEY[,...]" in id: 1 if found. */
static int
key_from_id(const char *id, size_t idlen, char *key)
{
	size_t i, n;

	for (i = 0; i + 3 <= idlen; i++) {
		if (id[i] != ',' || id[i + 1] != 'k' || id[i + 2] != '=')
			continue;
		n = strcspn(id + i + 3, ",\t\n");
		if (i + 3 + n > idlen)
			n = idlen - i - 3;
		if (n == 0 || n > KEYMAX)
			return 0;
		memcpy(key, id + i + 3, n);
		key[n] = '\0';
		return 1;
	}
	return 0;
}

/* The key from "k":"KEY" in the first 4 kB of fd: 1 if found. */
static int
key_from_payload(int fd, char *key)
{
	char buf[4096], *p;
	ssize_t len;
	size_t n;

	if ((len = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return 0;
	buf[len] = '\0';
	if ((p = strstr(buf, "\"k\":\"")) == NULL)
		return 0;
	p += 5;
	n = strcspn(p, "\"");
	if (n == 0 || n > KEYMAX || p[n] != '"')
		return 0;
	memcpy(key, p, n);
	key[n] = '\0';
	return 1;
}

static void
hold(long long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (us > 0 && nanosleep(&ts, &ts) == -1)
		;
}

/* One job: stamp, hold, stamp, one line to fd. */
static void
job(int fd, const char *path, const char *key, long long hold_us)
{
	char out[KEYMAX + 64];
	long long t0, t1;
	int n;

	t0 = now_us();
	hold(hold_us);
	t1 = now_us();
	n = snprintf(out, sizeof(out), "%s %lld %lld\n", key, t0, t1);
	if (write(fd, out, (size_t)n) != n)
		err(1, "%s", path);
}

static int
open_append(const char *path)
{
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) == -1)
		err(1, "%s", path);
	return fd;
}

static int
m_exec(const char *path, long long hold_us)
{
	const char *id = getenv("CHUTE_ID");
	char key[KEYMAX + 1] = "-", out[KEYMAX + 64];
	int fd = open_append(path), n;
	long long t0;

	/* Stamp first: the start is what counts; the key is looked up after. */
	t0 = now_us();
	if (!(id && key_from_id(id, strlen(id), key)))
		key_from_payload(0, key);
	hold(hold_us - (now_us() - t0));
	n = snprintf(out, sizeof(out), "%s %lld %lld\n", key, t0, now_us());
	if (write(fd, out, (size_t)n) != n)
		err(1, "%s", path);
	return 0;
}

static int
m_persistent(const char *path, long long hold_us, const char *count, long long stop,
    const char *prefix)
{
	char *line = NULL, key[KEYMAX + 1];
	size_t cap = 0;
	int fd = open_append(path), cfd = -1;

	if (count)
		cfd = open_append(count);
	while (getline(&line, &cap, stdin) != -1) {
		size_t idlen = strcspn(line, "\t\n");

		strcpy(key, "-");
		if (!key_from_id(line, idlen, key) && line[idlen] == '\t') {
			char *p = line + idlen + 1;
			int jfd;

			p[strcspn(p, "\n")] = '\0';
			if ((jfd = open(p, O_RDONLY | O_CLOEXEC)) != -1) {
				key_from_payload(jfd, key);
				close(jfd);
			}
		}
		job(fd, path, key, hold_us);
		if (fputs("ok\n", stdout) == EOF || fflush(stdout) == EOF)
			return 1;
		if (cfd != -1 && (prefix == NULL ||
		    strncmp(key, prefix, strlen(prefix)) == 0)) {
			off_t at;

			if (write(cfd, "x", 1) != 1 || (at = lseek(cfd, 0, SEEK_CUR)) == -1)
				err(1, "%s", count);
			if (at == stop)
				kill(getppid(), SIGTERM);
		}
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc == 2 && strcmp(argv[1], "now") == 0)
		return printf("%lld\n", now_us()) < 0;
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "exec") == 0)
		return m_exec(argv[2], argc == 4 ? atoll(argv[3]) : 0);
	if (argc >= 3 && argc <= 7 && argc != 5 && strcmp(argv[1], "persistent") == 0)
		return m_persistent(argv[2], argc >= 4 ? atoll(argv[3]) : 0,
		    argc >= 6 ? argv[4] : NULL, argc >= 6 ? atoll(argv[5]) : 0,
		    argc == 7 ? argv[6] : NULL);
	errx(64, "usage: witness exec FILE [HOLD_US] | witness persistent FILE "
	    "[HOLD_US [COUNT N [PREFIX]]] | witness now");
}
