/*
 * cmd_pause.c: `chute pause SPOOL` and `chute resume SPOOL`, the two
 * directions of one state: SPOOL/paused (store/pause.c), which the owner
 * watches.  No owner is needed; a running one says so in its journal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "store/pause.h"
#include "store/spool.h"

/* pause (on) or resume the spool at argv[1]; prints what it did. */
static int
pause_spool(int argc, char **argv, bool on)
{
	struct spool sp;
	char who[512], by[128], text[256];
	msec_t at = 0;
	int rc;

	if (argc != 2)
		return usage_error(argv[0], "want exactly one SPOOL");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	cmd_who(who, sizeof(who));
	if ((rc = spool_pause(&sp, on, who)) == -1) {
		fprintf(stderr, "chute: %s: cannot %s: %s%s\n", argv[1], argv[0],
		    strerror(errno), errno == EACCES || errno == EPERM ?
		    " (the spool's owner may, and root)" : "");
		spool_close(&sp);
		return EX_IOERR;
	}
	if (rc == 0)
		printf("%s %s\n", argv[1], on ? "paused" : "resumed");
	else if (!on)
		printf("%s not paused\n", argv[1]);
	else {
		if (spool_paused(&sp, by, sizeof(by), &at) != 1)
			by[0] = '\0';
		cmd_paused_text(true, by, at, text, sizeof(text));
		printf("%s already %s\n", argv[1], text);
	}
	spool_close(&sp);
	return cmd_flush_stdout(0);
}

int
cmd_pause(int argc, char **argv)
{
	return pause_spool(argc, argv, true);
}

int
cmd_resume(int argc, char **argv)
{
	return pause_spool(argc, argv, false);
}
