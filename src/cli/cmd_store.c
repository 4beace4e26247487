/*
 * cmd_store.c: what the subcommands of the read and admin side share over
 * a store (queue/store.h), whichever the program chose (cmd_backend): the
 * store's own arguments taken out of the command line, the store opened
 * and closed, one ID after another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "cli/cmd.h"
#include "queue/store.h"

const struct store_ops *cmd_backend;

void
cmd_compact(int *argc, char **argv, const bool *keep)
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

/*
 * A spool is the command's first argument, or the one after a first "--";
 * with options, its first operand: not an option, nor an option's value
 * (as its usage line shows it).  Its index, or 0.
 */
static int
first_operand(int argc, char **argv, bool options)
{
	const struct cmd *c = cmd_find(argv[0]);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i + 1 < argc ? i + 1 : 0;
		if (argv[i][0] != '-' || argv[i][1] == '\0')
			return i;
		if (!options)
			return 0;
		if (cmd_opt_has_value(c, argv[i]))
			i++;
	}
	return 0;
}

/*
 * A queue's URI, anywhere before "--", and --queue NAME.  0, or the exit
 * status of a usage error.
 */
static int
take_uri(int argc, char **argv, bool *keep, const char **target,
    const char **queue)
{
	bool more = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				keep[i++] = true;
			break;
		}
		if (strcmp(argv[i], "--queue") == 0 && i + 1 < argc)
			*queue = argv[++i];
		else if (strncmp(argv[i], "--queue=", 8) == 0)
			*queue = argv[i] + 8;
		else if (cmd_is_pg_uri(argv[i]) && *target == NULL)
			*target = argv[i];
		else if (cmd_is_pg_uri(argv[i]))
			more = true;	/* not echoed: it may hold a password */
		else
			keep[i] = true;
	}
	if (more)
		return usage_error(argv[0], "more than one postgresql:// URI "
		    "given");
	if (*target == NULL)
		return usage_error(argv[0], "%s", cmd_backend->missing);
	return 0;
}

int
cmd_store_take(int *argc, char **argv, struct store *s, const char **queue)
{
	return cmd_store_take_opts(argc, argv, s, queue, false);
}

int
cmd_store_take_opts(int *argc, char **argv, struct store *s,
    const char **queue, bool options)
{
	bool *keep = calloc((size_t)*argc + 1, sizeof(*keep));
	int rc = 0, at;

	*s = (struct store){ .ops = cmd_backend };
	*queue = NULL;
	if (keep == NULL) {
		fprintf(stderr, "chute: %s: out of memory\n", argv[0]);
		return EX_SOFTWARE;
	}
	if (cmd_backend->uri) {
		rc = take_uri(*argc, argv, keep, &s->target, queue);
	} else {
		for (int i = 0; i < *argc; i++)
			keep[i] = true;
		if ((at = first_operand(*argc, argv, options)) != 0) {
			s->target = argv[at];
			keep[at] = false;
		}
	}
	keep[0] = true;
	cmd_compact(argc, argv, keep);
	free(keep);
	return rc;
}

int
cmd_store_open(struct store *s, const char *cmd, const char *queue)
{
	int rc;

	if (s->target == NULL)
		return usage_error(cmd, "%s", s->ops->missing);
	if ((rc = s->ops->open(s, s->target, queue)) != 0)
		s->ops->close(s);
	return rc;
}

int
cmd_store_done(struct store *s, int rc)
{
	s->ops->close(s);
	return cmd_flush_stdout(rc);
}

int
cmd_store_each_id(int argc, char **argv, int (*fn)(struct store *,
    const char *))
{
	struct store s;
	const char *queue;
	int rc, r;

	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	/*
	 * "--": what follows is IDs, even one starting with '-'.  It moves
	 * past the last argument rather than out of argv: setproctitle_init's
	 * copies of the arguments are reachable only from there.
	 */
	for (int i = 1; i < argc; i++) {
		char *dashes = argv[i];

		if (strcmp(dashes, "--") != 0)
			continue;
		memmove(argv + i, argv + i + 1, (argc - i - 1) * sizeof(*argv));
		argv[--argc] = dashes;
		break;
	}
	if (s.target == NULL)
		return usage_error(argv[0], "%s", s.ops->missing);
	if ((rc = check_ids(argc - 1, argv + 1, argv[0])) != 0)
		return rc;
	if ((rc = cmd_store_open(&s, argv[0], queue)) != 0)
		return rc;
	for (int i = 1; i < argc; i++)
		if ((r = fn(&s, argv[i])) > rc)
			rc = r;
	return cmd_store_done(&s, rc);
}

/* name_plain false: the plain answer is the store's wait_unknown. */
static void
say_unknown(struct store *s, const char *id, bool name_plain)
{
	struct retention r = { KEEP_FOREVER, KEEP_FOREVER };
	char d[32], f[32];

	fflush(stdout);		/* the lines before it come first */
	/* An unreadable setting was said: the plain answer, then. */
	if (s->ops->retention != NULL && s->ops->retention(s, &r) != 0)
		r.done = r.failed = KEEP_FOREVER;
	if (r.done == KEEP_FOREVER && r.failed == KEEP_FOREVER) {
		if (id != NULL && name_plain)
			fprintf(stderr, "chute: %s: unknown job\n", id);
		else
			fprintf(stderr, "chute: %s\n", s->ops->wait_unknown);
		return;
	}
	keep_format(r.done, d, sizeof(d));
	keep_format(r.failed, f, sizeof(f));
	fprintf(stderr, "chute: %s: not found: unknown, or finished and "
	    "removed by the retention of %s%s (done %s, failed %s)\n",
	    id != NULL ? id : "a job among the IDs", s->ops->uri ? "queue " :
	    "", s->ops->title(s), d, f);
}

void
cmd_say_unknown(struct store *s, const char *id)
{
	say_unknown(s, id, true);
}

void
cmd_say_unknown_wait(struct store *s, const char *id)
{
	say_unknown(s, id, false);
}
