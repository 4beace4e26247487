/*
 * sched_args.c: `chute schedule` and `chute tick` as both programs parse
 * them, the list's lines, and the sleep of `tick --follow`.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "cli/schedule.h"

/* A schedule's payload is a job: the spool and the queue both take 64 MiB. */
#define PAYLOAD_MAX	(64LL << 20)

/* The whole of fd into a->payload: 0, or -1 with errno (EFBIG: too big). */
static int
slurp(int fd, struct sched_args *a)
{
	size_t cap = 4096;
	ssize_t r;
	char *nb;

	if ((a->payload = malloc(cap)) == NULL)
		return -1;
	for (;;) {
		if (a->len == cap) {
			if ((long long)cap > PAYLOAD_MAX) {
				errno = EFBIG;
				return -1;
			}
			if ((nb = realloc(a->payload, cap * 2)) == NULL)
				return -1;
			a->payload = nb;
			cap *= 2;
		}
		if ((r = read_full(fd, a->payload + a->len, cap - a->len)) == -1)
			return -1;
		if (r == 0)
			return 0;
		a->len += (size_t)r;
	}
}

static int
from_file(const char *file, struct sched_args *a)
{
	bool in = strcmp(file, "-") == 0;
	int fd = in ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC), rc;

	if (fd == -1 || (rc = slurp(fd, a)) == -1) {
		fprintf(stderr, "chute: %s: %s\n", file, errno == EFBIG ?
		    "larger than 64 MiB, the limit of a job" : strerror(errno));
		if (fd != -1 && !in)
			close(fd);
		return EX_NOINPUT;
	}
	if (!in)
		close(fd);
	return 0;
}

/* The words after "--", joined by spaces, and a newline. */
static int
from_words(int n, char **w, struct sched_args *a)
{
	size_t len = 1;

	for (int i = 0; i < n; i++)
		len += strlen(w[i]) + 1;
	if ((a->payload = malloc(len + 1)) == NULL)
		return -1;
	a->payload[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(a->payload, w[i]);
		strcat(a->payload, i + 1 < n ? " " : "\n");
	}
	a->len = strlen(a->payload);
	return 0;
}

static int
option(int c, const char *v, struct sched_args *a, bool *every,
    const char **file)
{
	switch (c) {
	case 'e':
		*every = true;
		if (dur_parse(v, &a->ts.every) == -1)
			return usage_error("schedule", "--every %s: not a "
			    "duration", v);
		return 0;
	case 'o':
		if (dur_parse(v, &a->ts.offset) == -1)
			return usage_error("schedule", "--offset %s: not a "
			    "duration", v);
		return 0;
	case 'c':
		if (catchup_parse(v, &a->ts.mode) == -1)
			return usage_error("schedule", "--catch-up %s: not "
			    "skip, once or all", v);
		return 0;
	case 'f':
		*file = v;
		return 0;
	case 'r':
		a->remove = true;
		return 0;
	default:
		return usage_error("schedule", "unknown option, or one "
		    "without its value");
	}
}

/* What the options given say together: 0, or 64 after its line. */
static int
coherent(struct sched_args *a, bool every, bool more, int nwords)
{
	const char *why;

	if (a->name == NULL)
		return every || more || a->remove ? usage_error("schedule",
		    "options without a schedule's NAME") : 0;
	if (!sched_name_valid(a->name, &why)) {
		char vis[4 * 64 + 4];	/* its first 64 bytes: it may be 10 kB */

		vis_name(a->name, vis, sizeof(vis));
		return usage_error("schedule", "%s: %s", vis, why);
	}
	if (a->remove)
		return every || more || nwords > 0 ? usage_error("schedule",
		    "--remove takes no other option") : 0;
	if (!every)
		return usage_error("schedule", "%s: --every DUR is needed to "
		    "declare it (or --remove)", a->name);
	if (tick_sched_check(&a->ts, &why) == -1)
		return usage_error("schedule", "%s: %s", a->name, why);
	return 0;
}

int
sched_args_parse(int argc, char **argv, struct sched_args *a)
{
	static const struct option longopts[] = {
		{ "every", required_argument, NULL, 'e' },
		{ "offset", required_argument, NULL, 'o' },
		{ "catch-up", required_argument, NULL, 'c' },
		{ "file", required_argument, NULL, 'f' },
		{ "remove", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL;
	bool every = false;
	int dd = argc, c, rc, nwords;

	memset(a, 0, sizeof(*a));
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	nwords = dd < argc ? argc - dd - 1 : 0;
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(dd, argv, "", longopts, NULL)) != -1)
		if ((rc = option(c, optarg, a, &every, &file)) != 0)
			return rc;
	if (dd - optind > 1)
		return usage_error("schedule", "one NAME at most");
	a->name = optind < dd ? argv[optind] : NULL;
	if ((rc = coherent(a, every, file != NULL || a->ts.offset ||
	    a->ts.mode, nwords)) != 0)
		return rc;
	if (file != NULL && nwords > 0)
		return usage_error("schedule", "--file and words after -- "
		    "together");
	if (a->name == NULL || a->remove)
		return 0;
	if (file != NULL)
		return from_file(file, a);
	if (from_words(nwords, argv + dd + 1, a) == -1) {
		fprintf(stderr, "chute: schedule: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	return 0;
}

void
sched_args_free(struct sched_args *a)
{
	free(a->payload);
	a->payload = NULL;
}

int
tick_args_parse(int argc, char **argv, bool *follow)
{
	*follow = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--follow") == 0)
			*follow = true;
		else
			return usage_error("tick", "%s: unexpected", argv[i]);
	}
	return 0;
}

void
sched_print_row(const struct sched_row *r)
{
	char every[32], off[32], next[48], last[48] = "-";

	dur_format(r->ts.every, every, sizeof(every));
	dur_format(r->ts.offset, off, sizeof(off));
	iso_time(r->next, next, sizeof(next));
	if (r->last >= 0)
		iso_time(r->last, last, sizeof(last));
	printf("%s every=%s offset=%s catch-up=%s next=%s last=%s\n", r->name,
	    every, off, catchup_name(r->ts.mode), next, last);
}

void
sched_sleep_until(msec_t at, msec_t max)
{
	msec_t now = now_ms(), d = at - now;
	struct timespec ts;

	if (d <= 0)
		return;
	if (d > max)
		d = max;
	/*
	 * Relative on purpose: an absolute sleep on CLOCK_REALTIME would
	 * follow a clock set back for as long as it was set back; max bounds
	 * the damage either way, and the next pass reads the clock again.
	 */
	ts.tv_sec = d / 1000;
	ts.tv_nsec = (long)(d % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}
