/*
 * cmd_retention.c: `chute retention STORE [--done DUR] [--failed DUR]`:
 * how long the store keeps its finished jobs, shown, or set for either
 * state (DUR as purge's --older-than, 0: not kept, forever: until
 * purged, the default); the store's owner or workers apply it.
 */
#include <getopt.h>
#include <stdio.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/store.h"

/* -2: not given. */
static int
parse(int argc, char **argv, struct retention *r, bool uri)
{
	static const struct option longopts[] = {
		{ "done", required_argument, NULL, 'd' },
		{ "failed", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'd' && keep_parse(optarg, &r->done) == 0)
			continue;
		if (c == 'f' && keep_parse(optarg, &r->failed) == 0)
			continue;
		if (uri || (c != 'd' && c != 'f'))
			return usage_error("retention", "bad option or value "
			    "(--done DUR, --failed DUR: a duration, 0 or "
			    "forever)");
		return usage_error("retention", "--%s %s: not a duration, 0 "
		    "or forever", c == 'd' ? "done" : "failed", optarg);
	}
	/* A queue's URI is taken already: anything left is a mistake. */
	if (argc - optind != 0)
		return uri ? usage_error("retention", "unexpected argument: %s",
		    argv[optind]) : usage_error("retention", "want exactly one "
		    "SPOOL");
	return 0;
}

int
cmd_retention(int argc, char **argv)
{
	struct retention want = { -2, -2 }, r;
	struct store s;
	const char *queue;
	char d[32], f[32];
	int rc;

	if ((rc = cmd_store_take_opts(&argc, argv, &s, &queue, true)) != 0)
		return rc;
	if ((rc = parse(argc, argv, &want, s.ops->uri)) != 0)
		return rc;
	if (s.target == NULL)
		return usage_error("retention", "%s", s.ops->missing);
	if ((rc = cmd_store_open(&s, "retention", queue)) != 0)
		return rc;
	/* Both given: the old setting is not needed (nor read, if bad). */
	if (want.done != -2 && want.failed != -2) {
		r = want;
		rc = s.ops->set_retention(&s, &r);
	} else if ((rc = s.ops->retention(&s, &r)) == 0 &&
	    (want.done != -2 || want.failed != -2)) {
		/* The state not named keeps its setting. */
		if (want.done != -2)
			r.done = want.done;
		if (want.failed != -2)
			r.failed = want.failed;
		rc = s.ops->set_retention(&s, &r);
	}
	if (rc == 0) {
		keep_format(r.done, d, sizeof(d));
		keep_format(r.failed, f, sizeof(f));
		printf("done %s\nfailed %s\n", d, f);
	}
	return cmd_store_done(&s, rc);
}
