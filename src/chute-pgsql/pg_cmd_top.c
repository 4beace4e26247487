/*
 * pg_cmd_top.c: `chute top URL [--queue NAME]`: a queue's live view, on
 * the screen `chute top SPOOL` draws (src/top/top_view.c), with the same
 * keys; a one-shot summary when stdout is not a terminal.  The queue's
 * source, what the screen shows and how often it is read, is
 * pg_top_source.c's (chute web's too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/view.h"
#include "top/top_view.h"
#include "queue/pg/pg.h"
#include "queue/pg/store_pg.h"
#include "chute-pgsql/pg_cmd.h"

/* The first look, before the screen: what stops it is said plainly. */
static int
live(struct pgtop *q)
{
	struct top_source src;
	int rc;

	if ((rc = pgtop_start(q, &src)) != 0)
		return rc;
	return top_view_run(&src);
}

int
pgcmd_top(int argc, char **argv)
{
	struct pgtop *q = NULL;
	struct pg pg = { .conn = NULL };
	int rc;

	if ((rc = pgcmd_open(&argc, argv, "top", &pg)) == 0 && argc != 1)
		rc = usage_error("top", "want URL [--queue NAME]");
	if (rc == 0 && (q = pgtop_new(&pg)) == NULL) {
		perror("chute: top");
		rc = EX_SOFTWARE;
	}
	if (q != NULL) {
		if (isatty(STDOUT_FILENO))
			rc = live(q);
		else
			rc = pgtop_read(q) == -1 ? pg_fail(pgtop_pg(q), "top") :
			    top_view_print(pgtop_model(q));
		pg = *pgtop_pg(q);
		pgtop_free(q);
	}
	return pgcmd_done(&pg, rc);
}
