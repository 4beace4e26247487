/*
 * top_view.h: the screen of `chute top`, drawn with ncurses from the model
 * of queue/view.h, which a store's source keeps current (cmd_top.c): a
 * spool's (top_spool.c), a queue's (pg_top_source.c).  With cmd_top.c,
 * the objects linked with ncurses, into both programs and not into
 * libchute.a.
 */
#ifndef TOP_TOP_VIEW_H
#define TOP_TOP_VIEW_H

#include "queue/view.h"

/*
 * The live view on the terminal (stdin and stdout), redrawn every second
 * and after each refresh the source asks for, until q, SIGINT, SIGTERM or
 * SIGHUP (or the terminal goes away): then the terminal is left as it
 * was.  Keys: up/down select a job, c cancels the selected running job,
 * r retries the selected failed one (src->cancel, src->retry), ^L
 * redraws.  Returns 0, or an exit status after one line on stderr saying
 * why (the screen ended first).
 */
int	 top_view_run(struct top_source *src);

/* t once, as plain lines on stdout, for a stdout that is no terminal: 0 or 74. */
int	 top_view_print(const struct top *t);

#endif
