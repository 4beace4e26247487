/*
 * cmd_wait.c: `chute wait`: block until every ID is in done/ or failed/.
 * inotify on done/ and failed/ wakes us; each wake-up re-reads the state
 * of the IDs still pending, so a missed or coalesced event costs nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "store/watch.h"

static void
ignore_event(void *arg, const struct watch_event *ev)
{
}

/*
 * Returns how many are still pending; sets *failed, *unknown.  A job has
 * finished in a terminal state, and succeeded only in done/.
 */
static int
pending(struct spool *sp, char **ids, int n, bool *done, int *failed,
    int *unknown)
{
	int left = 0, st;

	for (int i = 0; i < n; i++) {
		if (done[i])
			continue;
		if ((st = spool_locate(sp, ids[i], NULL)) == ST_NONE) {
			progress_clear();
			fprintf(stderr, "chute: %s: unknown job\n", ids[i]);
			(*unknown)++;
			done[i] = true;
		} else if (state_terminal(st)) {
			done[i] = true;
			if (st != ST_DONE)
				(*failed)++;
		} else
			left++;
	}
	return left;
}

static int
parse(int argc, char **argv, msec_t *timeout)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != 't')
			return usage_error("wait", "unknown option");
		if (dur_parse(optarg, timeout) == -1)
			return usage_error("wait", "--timeout %s: not a "
			    "duration", optarg);
	}
	if (optind >= argc)
		return usage_error("wait", "no spool given");
	return check_ids(argc - optind - 1, argv + optind + 1, "wait");
}

/* With several IDs and a terminal: done/total, failed, elapsed. */
static void
show(int n, int left, int failed, msec_t t0)
{
	char el[32];

	if (n < 2)
		return;
	dur_format(mono_ms() - t0, el, sizeof(el));
	progress("wait: %d/%d finished, %d failed, %s elapsed", n - left, n,
	    failed, el);
}

/* Sleep on the watch until nothing is pending or the deadline passes. */
static int
wait_loop(struct spool *sp, struct watch *w, char **ids, int n, bool *done,
    msec_t timeout)
{
	msec_t t0 = mono_ms(), deadline = timeout >= 0 ? t0 + timeout : -1;
	int failed = 0, unknown = 0, left;

	while ((left = pending(sp, ids, n, done, &failed, &unknown)) > 0 &&
	    unknown == 0) {
		struct pollfd pfd = { .fd = watch_fd(w), .events = POLLIN };
		msec_t left_ms = deadline >= 0 ? deadline - mono_ms() : -1;

		show(n, left, failed, t0);

		if (deadline >= 0 && left_ms <= 0)
			return EXIT_TIMEOUT;
		/* A redraw at least once a second, for the time elapsed. */
		if (n >= 2 && progress_wanted() &&
		    (left_ms < 0 || left_ms > 1000))
			left_ms = 1000;
		if (poll(&pfd, 1, left_ms > INT32_MAX ? INT32_MAX : (int)left_ms)
		    == -1 && errno != EINTR) {
			fprintf(stderr, "chute: %s: poll: %s\n", sp->path,
			    strerror(errno));
			return EX_SOFTWARE;
		}
		/* EPROTO, a malformed buffer, costs nothing: we look again. */
		if (watch_read(w, ignore_event, NULL) == -1 &&
		    errno != EPROTO) {
			fprintf(stderr, "chute: %s: inotify: %s\n", sp->path,
			    strerror(errno));
			return EX_IOERR;
		}
	}
	return failed || unknown ? EXIT_NO : 0;
}

int
cmd_wait(int argc, char **argv)
{
	int watched[ST_NSTATES];
	msec_t timeout = -1;
	struct spool sp;
	struct watch *w;
	bool *done;
	int rc;

	if ((rc = parse(argc, argv, &timeout)) != 0)
		return rc;
	if ((done = calloc(argc - optind - 1, sizeof(*done))) == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	if ((rc = open_spool_or_exit(&sp, argv[optind])) != 0)
		goto out;
	/* The watch first: a job finishing during the first look is seen. */
	if ((w = watch_open(&sp, watched, states_where(JS_TERMINAL,
	    JS_TERMINAL, watched))) == NULL) {
		fprintf(stderr, "chute: %s: inotify: %s\n", sp.path,
		    strerror(errno));
		rc = EX_IOERR;
	} else
		rc = wait_loop(&sp, w, argv + optind + 1, argc - optind - 1,
		    done, timeout);
	progress_clear();
	watch_close(w);
	spool_close(&sp);
out:
	free(done);
	return rc;
}
