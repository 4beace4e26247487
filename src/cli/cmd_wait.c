/*
 * cmd_wait.c: `chute wait STORE ID...`: block until every ID is done or
 * failed, or the timeout.  The store says when to look again (a spool's
 * inotify on done/ and failed/, a queue's polls); each look reads the
 * states of the IDs still pending, so a missed or coalesced wake-up costs
 * nothing.  0 all done, 1 any failed or unknown, 124 timeout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "queue/store.h"

struct wait {
	struct store	*s;
	char		**ids;
	int		 n;
	bool		*done;
	int		*st;
	int		 failed, unknown;
};

/* Returns how many are still pending, or -1 with *rc; counts the rest. */
static int
pending(struct wait *w, int *rc)
{
	int left = 0;

	if ((*rc = w->s->ops->states(w->s, w->ids, w->n, w->st)) != 0)
		return -1;
	for (int i = 0; i < w->n; i++) {
		if (w->done[i])
			continue;
		if (w->st[i] == ST_NONE) {
			progress_clear();
			if (w->s->ops->wait_unknown == NULL)
				cmd_say_unknown(w->s, w->ids[i]);
			w->unknown++;
			w->done[i] = true;
		} else if (state_terminal(w->st[i])) {
			/* Finished in a terminal state; succeeded in done. */
			w->done[i] = true;
			if (w->st[i] != ST_DONE)
				w->failed++;
		} else
			left++;
	}
	if (w->unknown > 0 && w->s->ops->wait_unknown != NULL)
		cmd_say_unknown_wait(w->s, w->n == 1 ? w->ids[0] : NULL);
	return left;
}

/* Options first; the IDs are checked before the store is opened. */
static int
parse(int *argc, char **argv, msec_t *timeout, bool uri)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(*argc, argv, "", longopts, NULL)) != -1) {
		if (uri && (c != 't' || dur_parse(optarg, timeout) == -1))
			return usage_error("wait", "bad option or --timeout "
			    "value");
		if (c != 't')
			return usage_error("wait", "unknown option");
		if (dur_parse(optarg, timeout) == -1)
			return usage_error("wait", "--timeout %s: not a "
			    "duration", optarg);
	}
	return 0;
}

/* With several IDs and a terminal: done/total, failed, elapsed. */
static void
show(const struct wait *w, int left, msec_t t0)
{
	char el[32];

	if (w->n < 2 || !w->s->ops->wait_progress)
		return;
	dur_format(mono_ms() - t0, el, sizeof(el));
	progress("wait: %d/%d finished, %d failed, %s elapsed", w->n - left,
	    w->n, w->failed, el);
}

/* Look, then nap, until nothing is pending or the deadline passes. */
static int
wait_loop(struct wait *w, void *watch, msec_t timeout)
{
	msec_t t0 = mono_ms(), deadline = timeout >= 0 ? t0 + timeout : -1;
	int left, rc;

	while ((left = pending(w, &rc)) > 0 && w->unknown == 0) {
		msec_t left_ms = deadline >= 0 ? deadline - mono_ms() : -1;

		show(w, left, t0);
		if (deadline >= 0 && left_ms <= 0)
			return EXIT_TIMEOUT;
		/* A redraw at least once a second, for the time elapsed. */
		if (w->n >= 2 && w->s->ops->wait_progress &&
		    progress_wanted() && (left_ms < 0 || left_ms > 1000))
			left_ms = 1000;
		if ((rc = w->s->ops->wait_nap(w->s, watch, left_ms)) != 0)
			return rc;
	}
	if (left == -1)
		return rc;
	return w->failed || w->unknown ? EXIT_NO : 0;
}

int
cmd_wait(int argc, char **argv)
{
	struct store s;
	struct wait w = { .s = &s };
	const char *queue;
	msec_t timeout = -1;
	void *watch;
	int rc;

	if ((rc = cmd_store_take_opts(&argc, argv, &s, &queue, true)) != 0)
		return rc;
	if ((rc = parse(&argc, argv, &timeout, s.ops->uri)) != 0)
		return rc;
	if (s.target == NULL)
		return usage_error("wait", "%s", s.ops->missing);
	if ((rc = check_ids(argc - optind, argv + optind, "wait")) != 0)
		return rc;
	w.ids = argv + optind;
	w.n = argc - optind;
	w.done = calloc(w.n, sizeof(*w.done));
	w.st = calloc(w.n, sizeof(*w.st));
	if (w.done == NULL || w.st == NULL) {
		fprintf(stderr, "chute: wait: %s\n", strerror(errno));
		rc = EX_SOFTWARE;
	} else if ((rc = cmd_store_open(&s, "wait", queue)) == 0) {
		/* The watch first: a job finishing during the first look is seen. */
		if ((rc = s.ops->wait_start(&s, &watch)) == 0) {
			rc = wait_loop(&w, watch, timeout);
			progress_clear();
			s.ops->wait_end(&s, watch);
		}
		rc = cmd_store_done(&s, rc);
	}
	free(w.done);
	free(w.st);
	return rc;
}
