/*
 * cmd_pause.c: `chute pause STORE` and `chute resume STORE`, the two
 * directions of one state: a spool's SPOOL/paused (store/pause.c), a
 * queue's row in chute.queues; nothing is claimed from a paused store,
 * running jobs finish, submissions are accepted.  No owner is needed.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/store.h"

/* Pause (on) or resume the store; prints what it did. */
static int
pause_store(int argc, char **argv, bool on)
{
	const char *cmd = on ? "pause" : "resume", *queue, *name;
	struct store_pause p;
	struct store s;
	char who[512], text[640], msg[2 * PATH_MAX];
	bool changed;
	int rc;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	if (argc != 1 || s.target == NULL)
		return s.ops->uri ? usage_error(cmd, "unexpected argument: %s",
		    argv[1]) : usage_error(cmd, "want exactly one %s",
		    s.ops->noun);
	if ((rc = cmd_store_open(&s, cmd, queue)) != 0)
		return rc;
	cmd_who(who, sizeof(who));
	if ((rc = s.ops->set_pause(&s, on, who, &changed, msg,
	    sizeof(msg))) != 0)
		return cmd_store_done(&s, cmd_say_result(rc, msg));
	name = s.ops->title(&s);
	if (changed) {
		printf("%s %s\n", name, on ? "paused" : "resumed");
		if (on && s.ops->paused_note != NULL)
			s.ops->paused_note(&s);
	} else if (!on)
		printf("%s not paused\n", name);
	else if ((rc = s.ops->pause(&s, &p)) == 0) {
		cmd_paused_text(true, p.by, p.at, text, sizeof(text));
		printf("%s already %s\n", name, text);	/* the one that stands */
	}
	return cmd_store_done(&s, rc);
}

int
cmd_pause(int argc, char **argv)
{
	return pause_store(argc, argv, true);
}

int
cmd_resume(int argc, char **argv)
{
	return pause_store(argc, argv, false);
}
