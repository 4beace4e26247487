/*
 * pg_cmd.c: what chute-pgsql's subcommands (pg_cmd_<name>.c) share: the
 * URI and --queue taken out of the arguments, the connection opened and
 * closed, options read, a log line, one ID after another.  Each
 * subcommand is a few short autocommitted statements; the output and exit
 * statuses are those of the same command on a spool.  fleet.md lists the
 * statements that change a job's state.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "cli/listing.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

int
pgcmd_take(int *argc, char **argv, const char *cmd, struct pg *pg,
    bool need_url)
{
	const char *url = NULL, *queue = "default";
	bool *keep = calloc((size_t)*argc + 1, sizeof(*keep)), more = false;
	int n = *argc;

	if (keep == NULL)
		return EX_SOFTWARE;
	keep[0] = true;
	for (int i = 1; i < n; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < n)
				keep[i++] = true;
			break;
		}
		if (strcmp(argv[i], "--queue") == 0 && i + 1 < n)
			queue = argv[++i];
		else if (strncmp(argv[i], "--queue=", 8) == 0)
			queue = argv[i] + 8;
		else if (pg_is_uri(argv[i]) && url == NULL)
			url = argv[i];
		else if (pg_is_uri(argv[i]))
			more = true;	/* not echoed: it may hold a password */
		else
			keep[i] = true;
	}
	cmd_compact(argc, argv, keep);
	free(keep);
	if (more)
		return usage_error(cmd, "more than one postgresql:// URI given");
	if (url == NULL)
		return need_url ? usage_error(cmd, "no postgresql:// URI given") :
		    0;
	return pg_parse(pg, url, queue) == -1 ? EX_USAGE : 0;
}

int
pgcmd_open(int *argc, char **argv, const char *cmd, struct pg *pg)
{
	int rc;

	if ((rc = pgcmd_take(argc, argv, cmd, pg, true)) != 0)
		return rc;
	if (pg_connect(pg, false, 0) == -1)
		return pg_fail(pg, "connect");
	return pg_schema_check(pg);
}

int
pgcmd_options(int argc, char **argv, const char *cmd,
    const struct option *longopts, int (*take)(void *, int, char *),
    void *arg)
{
	int c, rc;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return usage_error(cmd, "bad option: %s",
			    argv[optind - 1]);
		if ((rc = take(arg, c, optarg)) != 0)
			return rc;
	}
	return 0;
}

int
pgcmd_done(struct pg *pg, int rc)
{
	pg_close(pg);
	free(pg->uri);
	return cmd_flush_stdout(rc);
}
