/*
 * cmd_top.c: `chute top SPOOL`: a live view of a spool, read by
 * top_spool.c as inotify says it changed and drawn by src/top/top_view.c;
 * a one-shot summary when stdout is not a terminal.  `chute top URL` is
 * chute-pgsql's (pg_cmd_top.c), on the same screen.
 */
#include <sys/inotify.h>
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
#include "cli/top.h"
#include "top/top_view.h"

/*
 * watch.c watches what the owner needs to see; the view needs every
 * arrival and departure: claims into cur/, retries and purges out of
 * failed/ and done/.  IN_MASK_ADD on the same descriptor widens a watch
 * and keeps its watch descriptor, so watch.c still decodes the events.
 */
static int
widen_watch(struct watch *w, struct spool *sp)
{
	static const struct { int st; uint32_t mask; } more[] = {
		{ ST_NEW, IN_MOVED_FROM | IN_DELETE },
		{ ST_CUR, IN_MOVED_TO | IN_CREATE },
		{ ST_DONE, IN_MOVED_FROM | IN_DELETE },
		{ ST_FAILED, IN_MOVED_FROM | IN_DELETE },
	};

	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		char *p = spool_jobpath(sp, more[i].st, "");
		int rc;

		if (p == NULL)
			return -1;
		rc = inotify_add_watch(watch_fd(w), p, IN_MASK_ADD |
		    IN_ONLYDIR | IN_DONT_FOLLOW | more[i].mask);
		free(p);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* The live view: the watch first, so nothing after the first look is missed. */
static int
live(struct spool *sp, struct top_spool *s)
{
	static const int states[] = { ST_NEW, ST_CUR, ST_DEFER, ST_DONE,
	    ST_FAILED };
	struct top_source src;
	struct watch *w;
	msec_t since = now_ms();
	int rc = EX_IOERR;

	if ((w = watch_open(sp, states, 5)) == NULL ||
	    widen_watch(w, sp) == -1)
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
