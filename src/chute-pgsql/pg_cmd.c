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

/*
 * Keep the arguments keep[] says, in order, then the NULL, then the others:
 * they stay in the array (setproctitle_init made them copies that only
 * argv points to), out of the command's sight.
 */
void
pgcmd_compact(int *argc, char **argv, const bool *keep)
{
	char **gone = reallocarray(NULL, (size_t)*argc + 1, sizeof(*gone));
	int j = 0, k = 0;

	for (int i = 0; i < *argc; i++) {
		if (keep[i])
			argv[j++] = argv[i];
		else if (gone != NULL)
			gone[k++] = argv[i];
	}
	argv[j] = NULL;
	for (int i = 0; i < k; i++)
		argv[j + 1 + i] = gone[i];
	free(gone);
	*argc = j;
}

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
	pgcmd_compact(argc, argv, keep);
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

int
pgcmd_note(struct pg *pg, const char *id, const char *text)
{
	static const char sql[] = "INSERT INTO chute.logs (queue, id, body)"
	    " VALUES ($1, $2, convert_to('@chute ' || to_char(now() AT TIME"
	    " ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || $3 ||"
	    " E'\\n', 'UTF8'))" PG_LOGS_STRAY;
	const char *p[3] = { pg->queue, id, text };

	return pg_cmd(pg, sql, 3, p);
}

int
pgcmd_each_id(int argc, char **argv, const char *cmd,
    int (*fn)(struct pg *, const char *))
{
	struct pg pg;
	int rc, r;

	if ((rc = pgcmd_open(&argc, argv, cmd, &pg)) != 0)
		return pgcmd_done(&pg, rc);
	/*
	 * "--" ends the options, as on a spool: what follows is IDs.  It
	 * moves past the last argument rather than out of argv, as in
	 * cmd_each_id: setproctitle_init's copies are reachable only there.
	 */
	for (int i = 1; i < argc; i++) {
		char *dashes = argv[i];

		if (strcmp(dashes, "--") != 0)
			continue;
		memmove(argv + i, argv + i + 1, (size_t)(argc - i - 1) *
		    sizeof(*argv));
		argv[--argc] = dashes;
		break;
	}
	if ((rc = check_ids(argc - 1, argv + 1, cmd)) != 0)
		return pgcmd_done(&pg, rc);
	for (int i = 1; i < argc; i++)
		if ((r = fn(&pg, argv[i])) != 0 && r > rc)
			rc = r;
	return pgcmd_done(&pg, rc);
}

int
pgcmd_why_not(struct pg *pg, const char *id, const char *cmd, char *msg,
    size_t len)
{
	static const char sql[] =
	    "SELECT state FROM chute.jobs WHERE queue = $1 AND id = $2";
	const char *p[2] = { pg->queue, id };
	PGresult *r = pg_exec(pg, sql, 2, p);

	if (r == NULL)
		return pg_fail_msg(pg, cmd, msg, len);
	if (PQntuples(r) == 0)
		snprintf(msg, len, "%s: unknown job", id);
	else if (strcmp(cmd, "retry") == 0)
		snprintf(msg, len, "%s: not failed (%s)", id, PQgetvalue(r, 0, 0));
	else
		snprintf(msg, len, "%s: already %s", id, PQgetvalue(r, 0, 0));
	PQclear(r);
	return EXIT_NO;
}

int
pgcmd_paused_text(struct pg *pg, char *text, size_t len)
{
	char by[128], vis[512];
	bool paused;
	msec_t at;

	if (pg_paused(pg, pg->queue, &paused, by, sizeof(by), &at) == -1)
		return -1;
	/* Stored text, whoever wrote it: escaped. */
	vis_text(by, vis, sizeof(vis));
	cmd_paused_text(paused, vis, at, text, len);
	return 0;
}
