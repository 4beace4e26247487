/*
 * cmd.c: what every subcommand shares: reading the table of subcommands
 * (for --help and usage errors), opening a spool with a clear message,
 * ID checks, the per-ID loop, and the check that stdout got the output.
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/spawn.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"

/*
 * The table of subcommands is main.c's, above every subcommand; the library
 * is only handed it, so nothing in it refers back up to the subcommands.
 */
static const struct cmd *cmds;
static size_t ncmds;

void
cmd_register(const struct cmd *table, size_t n)
{
	cmds = table;
	ncmds = n;
}

const struct cmd *
cmd_find(const char *name)
{
	for (size_t i = 0; i < ncmds; i++)
		if (strcmp(cmds[i].name, name) == 0)
			return &cmds[i];
	return NULL;
}

void
cmd_usage_all(FILE *f)
{
	fprintf(f, "usage:\n");
	for (size_t i = 0; i < ncmds; i++)
		fprintf(f, "  chute %s %s\n", cmds[i].name, cmds[i].args);
}

int
usage_error(const char *cmd, const char *fmt, ...)
{
	const struct cmd *c = cmd_find(cmd);
	va_list ap;

	fprintf(stderr, "chute: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c != NULL)
		fprintf(stderr, "usage: chute %s %s\n", c->name, c->args);
	return EX_USAGE;
}

int
cmd_help(const char *name)
{
	const struct cmd *c = cmd_find(name);

	if (c != NULL)
		printf("usage: chute %s %s\n", c->name, c->args);
	return cmd_flush_stdout(0);
}

/*
 * Does the usage line args show the option arg ("--name", "--name=V",
 * "-x")?  *value: it takes the next argument as its value.  A long option
 * may be cut to a unique prefix, as getopt_long(3) allows.  The usage
 * line is the list, so that it and the check cannot disagree: an option
 * followed by a word is one with a value ("[--timeout DUR]"), one
 * followed by "]", "[", "--" or another option is a flag.
 */
static bool
cmd_known_opt(const char *args, const char *arg, bool *value)
{
	size_t alen = strcspn(arg, "=");
	int found = 0;

	for (const char *p = args; (p = strchr(p, '-')) != NULL; ) {
		size_t n = strcspn(p, " []=|");
		const char *next = p + n + strspn(p + n, " ");
		bool exact = n == alen && strncmp(p, arg, n) == 0;

		if (n > 2 && (p == args || strchr(" [|", p[-1]) != NULL) &&
		    (exact || (arg[1] == '-' && alen > 2 && alen < n &&
		    strncmp(p, arg, alen) == 0))) {
			*value = p[n] == ' ' && *next != '\0' && *next != '-' &&
			    *next != '[' && *next != '|';
			if (exact)
				return true;
			found++;
		} else if (n == 2 && exact) {
			*value = p[n] == ' ' && *next != '\0' && *next != '-';
			return true;
		}
		p += n > 0 ? n : 1;
	}
	return found == 1;
}

bool
cmd_opt_has_value(const struct cmd *c, const char *arg)
{
	bool value = false;

	return c != NULL && cmd_known_opt(c->args, arg, &value) && value &&
	    strchr(arg, '=') == NULL;
}

int
cmd_check_args(const struct cmd *c, int argc, char **argv)
{
	bool value = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return cmd_help(c->name);
		if (a[0] != '-' || a[1] == '\0')
			continue;
		if (!cmd_known_opt(c->args, a, &value))
			return usage_error(c->name, "%s: unknown option", a);
		if (value && strchr(a, '=') == NULL)
			i++;
	}
	return -1;
}

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

int
cmd_say_result(int rc, const char *msg)
{
	if (*msg == '\0')
		return rc;
	if (rc == 0)
		printf("%s\n", msg);
	else
		fprintf(stderr, "chute: %s\n", msg);
	return rc;
}

int
cmd_flush_stdout(int rc)
{
	if (fflush(stdout) != EOF && !ferror(stdout))
		return rc;
	fprintf(stderr, "chute: stdout: %s\n", strerror(errno));
	return rc > EX_IOERR ? rc : EX_IOERR;
}

int
cmd_write_log(const char *buf, size_t len)
{
	static int tty = -1;
	char seg[1024], vis[4 * sizeof(seg) + 1];

	if (tty == -1)
		tty = isatty(STDOUT_FILENO);
	if (!tty)
		return write_all(STDOUT_FILENO, buf, len) == -1 ? -1 : 0;
	while (len > 0) {
		size_t n = 0;
		const char *end;

		while (n < len && n < sizeof(seg) - 1 && buf[n] != '\n' &&
		    buf[n] != '\0')
			n++;
		memcpy(seg, buf, n);
		seg[n] = '\0';
		vis_text(seg, vis, sizeof(vis));
		end = n == len || n == sizeof(seg) - 1 ? "" : buf[n] == '\n' ?
		    "\n" : "\\000";
		if (write_all(STDOUT_FILENO, vis, strlen(vis)) == -1 ||
		    write_all(STDOUT_FILENO, end, strlen(end)) == -1)
			return -1;
		n += *end != '\0';
		buf += n;
		len -= n;
	}
	return 0;
}

bool
cmd_is_pg_uri(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0;
}

bool
cmd_wants_pgsql(int argc, char **argv)
{
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (cmd_is_pg_uri(argv[i]))
			return true;
	return false;
}

/*
 * Exec the program called name with argv: the one next to this chute (a
 * build tree, or an installed pair), else the first on PATH.  Returns
 * only on failure: 69, after saying why (missing: what would install it).
 */
static int
exec_sibling(const char *name, char **argv, const char *missing)
{
	char self[PATH_MAX], *slash, *path = NULL;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL &&
		    (size_t)(slash - self) + strlen(name) + 2 <= sizeof(self)) {
			strcpy(slash + 1, name);
			if (access(self, X_OK) == 0)
				path = strdup(self);
		}
	}
	if (path == NULL)
		path = spawn_which(name);
	if (path == NULL) {
		fprintf(stderr, "chute: %s\n", missing);
		return EX_UNAVAILABLE;
	}
	execv(path, argv);
	fprintf(stderr, "chute: %s: %s\n", path, strerror(errno));
	free(path);
	return EX_UNAVAILABLE;
}

int
cmd_exec_pgsql(char **argv)
{
	return exec_sibling("chute-pgsql", argv, "a PostgreSQL queue needs "
	    "chute-pgsql, which is neither next to chute nor on PATH (Debian: "
	    "the chute-pgsql package; from source: make)");
}

/*
 * A spool's dashboard is chute-web, which needs no libpq; a queue's is
 * chute-web-pgsql, the same program with the queue's store and libpq.
 */
int
cmd_exec_web(char **argv)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	if (cmd_wants_pgsql(argc, argv))
		return exec_sibling("chute-web-pgsql", argv, "chute web URL "
		    "needs chute-web-pgsql, which is neither next to chute nor "
		    "on PATH (Debian: the chute-web-pgsql package; from "
		    "source: make)");
	return exec_sibling("chute-web", argv, "chute web needs chute-web, "
	    "which is neither next to chute nor on PATH (Debian: the "
	    "chute-web package; from source: make)");
}

void
cmd_who(char *buf, size_t len)
{
	struct passwd *pw = getpwuid(geteuid());
	char host[256] = "localhost";

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	if (pw != NULL)
		snprintf(buf, len, "%s@%s", pw->pw_name, host);
	else
		snprintf(buf, len, "uid%ld@%s", (long)geteuid(), host);
}

void
cmd_paused_text(bool paused, const char *by, msec_t at, char *buf,
    size_t len)
{
	char when[40];

	if (!paused) {
		strlcpy(buf, "not paused", len);
		return;
	}
	iso_time(at, when, sizeof(when));
	snprintf(buf, len, "paused by %s since %s", *by ? by : "(unknown)",
	    when);
}
