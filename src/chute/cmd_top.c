/*
 * cmd_top.c: `chute top SPOOL`: a live view of a spool, read by
 * top_spool.c as inotify says it changed and drawn by src/top/top_view.c;
 * a one-shot summary when stdout is not a terminal.  `chute top URL` is
 * chute-pgsql's (pg_cmd_top.c), on the same screen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "store/watch.h"
#include "queue/view.h"
#include "queue/spool/top_spool.h"
#include "top/top_view.h"

/* The live view: the watch first, so nothing after the first look is missed. */
static int
live(struct spool *sp, struct top_spool *s)
{
	struct top_source src;
	struct watch *w;
	msec_t since = now_ms();
	int rc = EX_IOERR;

	if ((w = top_watch_open(sp)) == NULL)
		fprintf(stderr, "chute: %s: inotify: %s\n", sp->path,
		    strerror(errno));
	else if (top_init(s, sp, since) == -1)
		fprintf(stderr, "chute: %s: %s\n", sp->path, strerror(errno));
	else {
		top_spool_source(s, w, &src);
		rc = top_view_run(&src);
	}
	watch_close(w);
	return rc;
}

int
cmd_top(int argc, char **argv)
{
	struct spool sp;
	struct top_spool *s;
	int rc;

	if (argc != 2)
		return usage_error("top", argc < 2 ? "no spool given" :
		    "want only SPOOL");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	/* Some 60 KiB, whatever the spool holds. */
	if ((s = malloc(sizeof(*s))) == NULL) {
		fprintf(stderr, "chute: top: %s\n", strerror(errno));
		rc = EX_SOFTWARE;
	} else if (isatty(STDOUT_FILENO))
		rc = live(&sp, s);
	else if (top_init(s, &sp, now_ms()) == -1) {
		fprintf(stderr, "chute: %s: %s\n", sp.path, strerror(errno));
		rc = EX_IOERR;
	} else
		rc = top_view_print(&s->t);
	free(s);
	spool_close(&sp);
	return rc;
}
