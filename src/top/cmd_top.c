/*
 * cmd_top.c: `chute top STORE`: a live view of a spool or a queue, its
 * model kept current by the store's source (queue/view.h: a spool's
 * inotify, a queue's LISTEN) and drawn by top_view.c; a one-shot summary
 * when stdout is not a terminal.  In both programs, with the screen.
 * The keys in use are read from the store's limits op beside the source,
 * once a second at most.
 */
#include <stdio.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/listing.h"
#include "queue/store.h"
#include "queue/view.h"
#include "top/top_view.h"

/* The store's source, and the keys read beside it. */
struct keyed {
	struct top_source	*in;
	struct store		*s;
	msec_t			 next;		/* monotonic: the keys' next reading */
};

static int
k_fd(void *arg)
{
	struct keyed *k = arg;

	return k->in->fd(k->in->arg);
}

static int
k_input(void *arg)
{
	struct keyed *k = arg;

	return k->in->input(k->in->arg);
}

static msec_t
k_due(void *arg)
{
	struct keyed *k = arg;

	msec_t d = k->in->due(k->in->arg);

	return d < k->next ? d : k->next;
}

/* The source's update when it is due (and only then), the keys' when theirs is. */
static int
k_update(void *arg)
{
	struct keyed *k = arg;
	int rc = 0;

	if (mono_ms() >= k->in->due(k->in->arg))
		rc = k->in->update(k->in->arg);
	top_keys_read(k->s, k->in->t, &k->next);
	return rc;
}

static int
k_cancel(void *arg, const char *id, char *msg, size_t len)
{
	struct keyed *k = arg;

	return k->in->cancel(k->in->arg, id, msg, len);
}

static int
k_retry(void *arg, const char *id, char *msg, size_t len)
{
	struct keyed *k = arg;

	return k->in->retry(k->in->arg, id, msg, len);
}

static int
run_keyed(struct store *s, struct top_source *src)
{
	struct keyed k = { .in = src, .s = s };
	struct top_source w = { .t = src->t, .arg = &k, .fd = k_fd,
	    .input = k_input, .due = k_due, .update = k_update,
	    .cancel = k_cancel, .retry = k_retry };

	top_keys_read(s, src->t, &k.next);
	return top_view_run(&w);
}

int
cmd_top(int argc, char **argv)
{
	struct top_source src = { .t = NULL };
	msec_t next = 0;
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
		rc = live ? run_keyed(&s, &src) : top_keys_read(&s, src.t,
		    &next) == 0 ? top_view_print(src.t) : EX_IOERR;
	s.ops->top_close(&s, h);
	return cmd_store_done(&s, rc);
}
