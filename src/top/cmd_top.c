/*
 * cmd_top.c: `chute top STORE`: a live view of a spool or a queue, its
 * model kept current by the store's source (queue/view.h: a spool's
 * inotify, a queue's LISTEN) and drawn by top_view.c; a one-shot summary
 * when stdout is not a terminal.  In both programs, with the screen.
 */
#include <stdio.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/store.h"
#include "queue/view.h"
#include "top/top_view.h"

int
cmd_top(int argc, char **argv)
{
	struct top_source src = { .t = NULL };
	struct store s;
	const char *queue;
	void *h = NULL;
	bool live;
	int rc;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	if (s.ops->uri && argc != 1)
		return usage_error("top", "want URL [--queue NAME]");
	if (argc != 1 || s.target == NULL)
		return usage_error("top", s.target == NULL ? "no spool given" :
		    "want only SPOOL");
	if ((rc = cmd_store_open(&s, "top", queue)) != 0)
		return rc;
	live = isatty(STDOUT_FILENO);
	if ((rc = s.ops->top_open(&s, live, now_ms(), &src, &h)) == 0)
		rc = live ? top_view_run(&src) : top_view_print(src.t);
	s.ops->top_close(&s, h);
	return cmd_store_done(&s, rc);
}
