/*
 * cmd_status.c: `chute status STORE ID...`: one line per job, its state,
 * attempts, last outcome and, when deferred, the time of its next try;
 * for a spool's job forwarded to a database queue, where it went.
 * Without an ID, the store's own state: paused or not.
 */
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "queue/store.h"

/* " priority=P key=K", each when it is not the default, into buf. */
static void
sched_words(int prio, const char *key, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (prio != PRIO_DEFAULT)
		n = (size_t)snprintf(buf, len, " priority=%d", prio);
	if (*key != '\0' && n < len)
		snprintf(buf + n, len - n, " key=%s", key);
}

/*
 * "ID STATE attempts=N [priority=P] [key=K] [unique=K] [after=ID,...]
 * [last outcome] [next=TIME]",
 * priority and key when given, or "unknown job"; a
 * job forwarded to a database queue says so, and where:
 * "ID forwarded attempts=N to QUEUE at URI as ID".
 */
static int
status_one(struct store *s, const char *id)
{
	struct store_job j = { .prio = PRIO_DEFAULT };
	char text[4 * sizeof(j.last) + 1], tail[64] = "", sched[1024] = "";
	int rc;

	if ((rc = s->ops->job(s, id, &j)) == EXIT_NO)
		cmd_say_unknown(s, id);
	if (rc != 0)
		return rc;
	/*
	 * Stored text, as the journal shows it: a handler writes to its
	 * log, so it could forge a line or send the terminal escape codes.
	 */
	if (j.forwarded[0] != '\0') {
		vis_text(j.forwarded, text, sizeof(text));
		printf("%s forwarded attempts=%lld %s\n", id, j.attempts, text);
		return 0;
	}
	if (j.next[0] != '\0')
		snprintf(tail, sizeof(tail), " next=%s", j.next);
	else if (j.held > 0)	/* flocked in new/: not run while it is */
		snprintf(tail, sizeof(tail), " held=%ld", j.held);
	vis_text(j.last, text, sizeof(text));
	sched_words(j.prio, j.key, sched, sizeof(sched));
	if (j.unique[0] != '\0')	/* after the other words: issue 37 */
		snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
		    " unique=%s", j.unique);
	if (j.after[0] != '\0')	/* submit --after */
		snprintf(sched + strlen(sched), sizeof(sched) - strlen(sched),
		    " after=%s", j.after);
	printf("%s %s attempts=%lld%s%s%s%s\n", id, state_names[j.state],
	    j.attempts, sched, j.last[0] ? " " : "", text, tail);
	return 0;
}

/* Without an ID: "NAME paused by WHO since TIME", or "NAME not paused". */
static int
status_store(int argc, char **argv)
{
	struct store_pause p;
	struct store s;
	const char *queue;
	char text[640];
	int rc;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	if (argc != 1)
		return usage_error("status", "unexpected argument: %s", argv[1]);
	if ((rc = cmd_store_open(&s, "status", queue)) != 0)
		return rc;
	if ((rc = s.ops->pause(&s, &p)) == 0) {
		cmd_paused_text(p.paused, p.by, p.at, text, sizeof(text));
		printf("%s %s\n", s.ops->title(&s), text);
	}
	return cmd_store_done(&s, rc);
}

/* Is an ID among the arguments (the store's own aside)? */
static bool
has_ids(int argc, char **argv)
{
	int ids = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--queue") == 0)
			i++;
		else if (strncmp(argv[i], "--queue=", 8) != 0 &&
		    !cmd_is_pg_uri(argv[i]))
			ids++;
	}
	/* A spool's path is an operand too. */
	return ids > (cmd_backend->uri ? 0 : 1);
}

int
cmd_status(int argc, char **argv)
{
	if (!has_ids(argc, argv))
		return status_store(argc, argv);
	return cmd_store_each_id(argc, argv, status_one);
}
