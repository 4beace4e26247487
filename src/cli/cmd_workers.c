/*
 * cmd_workers.c: `chute workers STORE`: the store's workers in one format:
 * a header, a line per worker, under a gone one a line per job whose
 * claim it still holds, under a spool's owner its persistent workers.  A
 * spool has one worker, its owner; a queue's are in chute.workers.
 */
#include <stdio.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/listing.h"
#include "queue/store.h"

static bool header;

/* The header, once: after the store has answered. */
static void
print_header(void)
{
	if (!header)
		workers_header();
	header = true;
}

static void
worker(void *arg, const struct store_worker *w)
{
	print_header();
	workers_line(w);
}

static void
held(void *arg, const char *id, bool has_lease, msec_t lease_left)
{
	workers_held(id, has_lease ? lease_left : WORKERS_NO_LEASE);
}

static void
child(void *arg, const char *pid)
{
	printf("  persistent worker pid %s\n", pid);
}

int
cmd_workers(int argc, char **argv)
{
	static const struct store_workers_out o = { .worker = worker,
	    .held = held, .child = child };
	struct store s;
	const char *queue;
	int rc, cut = 0;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	if (argc != 1 || s.target == NULL)
		return s.ops->uri ? usage_error("workers", "unexpected "
		    "argument: %s", argv[1]) : usage_error("workers", "want "
		    "exactly one SPOOL");
	if ((rc = cmd_store_open(&s, "workers", queue)) != 0)
		return rc;
	if ((rc = s.ops->workers(&s, &o, &cut)) == 0) {
		print_header();
		if (cut > 0)
			printf("(the first %d shown)\n", cut);
	}
	return cmd_store_done(&s, rc);
}
