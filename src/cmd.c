/*
 * cmd.c: what every subcommand shares: the usage lines, the one-line
 * usage error, opening a spool with a clear message, and ID checks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "chute.h"

static const struct { const char *cmd, *args; } usages[] = {
	{ "init", "SPOOL [--group NAME]" },
	{ "submit", "SPOOL [--id ID] [--delay DUR | --at EPOCH] [FILE...]" },
	{ "run", "SPOOL [-j N] [--timeout DUR] [--grace DUR] [--max-attempts N]"
	    " [--backoff BASE[:CAP]] [--drain] [--wait-lock] [--persistent] -- HANDLER [ARG...]" },
	{ "status", "SPOOL ID..." },
	{ "wait", "SPOOL [--timeout DUR] ID..." },
	{ "cancel", "SPOOL ID..." },
	{ "retry", "SPOOL ID..." },
	{ "ls", "SPOOL [new|cur|defer|done|failed]" },
	{ "stats", "SPOOL [--prometheus]" },
	{ "log", "SPOOL ID" },
	{ "purge", "SPOOL --older-than DUR [--state done|failed]" },
};

void
cmd_usage_all(FILE *f)
{
	fprintf(f, "usage:\n");
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
		fprintf(f, "  chute %s %s\n", usages[i].cmd, usages[i].args);
}

/* "chute: reason" and the command's usage line on stderr; returns 64. */
int
usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "chute: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++)
		if (strcmp(usages[i].cmd, cmd) == 0)
			fprintf(stderr, "usage: chute %s %s\n", cmd,
			    usages[i].args);
	return EX_USAGE;
}

/* Returns 0, or an exit status after printing why. */
int
open_spool_or_exit(struct spool *sp, const char *path)
{
	if (spool_open(sp, path) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR)
		fprintf(stderr, "chute: %s: not a spool (%s); create it with "
		    "`chute init %s`\n", path, strerror(errno), path);
	else
		fprintf(stderr, "chute: %s: cannot open the spool: %s\n", path,
		    strerror(errno));
	return EX_IOERR;
}

/* Every ID on the command line is checked before anything is touched. */
int
check_ids(int n, char **ids, const char *cmd)
{
	char vis[1024];

	if (n == 0)
		return usage_error(cmd, "no job ID given");
	for (int i = 0; i < n; i++) {
		if (id_valid(ids[i]))
			continue;
		vis_name(ids[i], vis, sizeof(vis));
		return usage_error(cmd, "%s: not a valid job ID (1-%d bytes, "
		    "no '/', no leading '.', no control characters)", vis,
		    ID_MAX);
	}
	return 0;
}
