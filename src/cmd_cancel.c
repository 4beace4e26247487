/*
 * cmd_cancel.c: `chute cancel` and `chute retry`.  Both act by one rename;
 * neither needs the owner, which learns of a cancelled running job from
 * inotify (IN_MOVED_FROM on cur/) and stops its handler.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

static int
cancel_one(struct spool *sp, const char *id)
{
	int from, st;

	if (state_cancel(sp, id, &from) == 0) {
		/* Only a cancel that won its rename leaves a note. */
		joblog_note(sp, id, "cancelled by `chute cancel` (uid %ld) "
		    "in %s/", (long)getuid(), state_names[from]);
		if (spool_sync(sp) == -1) {
			fprintf(stderr, "chute: %s: fsync: %s\n", sp->path,
			    strerror(errno));
			return EX_IOERR;
		}
		printf("%s %s->failed\n", id, state_names[from]);
		return 0;
	}
	if (errno != ENOENT) {
		fprintf(stderr, "chute: %s: cancel: %s\n", id, strerror(errno));
		return EX_IOERR;
	}
	if ((st = spool_locate(sp, id, NULL)) == ST_NONE)
		fprintf(stderr, "chute: %s: unknown job\n", id);
	else
		fprintf(stderr, "chute: %s: already %s\n", id, state_names[st]);
	return EXIT_NO;
}

static int
retry_one(struct spool *sp, const char *id)
{
	int st = spool_locate(sp, id, NULL);

	if (st != ST_FAILED) {
		if (st == ST_NONE)
			fprintf(stderr, "chute: %s: unknown job\n", id);
		else
			fprintf(stderr, "chute: %s: not failed (%s)\n", id,
			    state_names[st]);
		return EXIT_NO;
	}
	/* The reset goes first: a crash between leaves it failed, reset. */
	if (joblog_note(sp, id, "reset by `chute retry` (uid %ld)",
	    (long)getuid()) == -1 && errno != ENOENT) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", sp->path, id,
		    strerror(errno));
		return EX_IOERR;
	}
	if (state_retry(sp, id) == -1) {
		fprintf(stderr, "chute: %s: retry: %s\n", id, strerror(errno));
		return errno == ENOENT || errno == EEXIST ? EXIT_NO : EX_IOERR;
	}
	if (spool_sync(sp) == -1) {
		fprintf(stderr, "chute: %s: fsync: %s\n", sp->path,
		    strerror(errno));
		return EX_IOERR;
	}
	printf("%s failed->new\n", id);
	return 0;
}

static int
each(int argc, char **argv, const char *cmd,
    int (*fn)(struct spool *, const char *))
{
	struct spool sp;
	int rc, r;

	if (argc < 2)
		return usage_error(cmd, "no spool given");
	if ((rc = check_ids(argc - 2, argv + 2, cmd)) != 0)
		return rc;
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	for (int i = 2; i < argc; i++)
		if ((r = fn(&sp, argv[i])) != 0 && (rc == 0 || r > rc))
			rc = r;
	if (fflush(stdout) == EOF && rc == 0)
		rc = EX_IOERR;
	spool_close(&sp);
	return rc;
}

int cmd_cancel(int argc, char **argv) { return each(argc, argv, "cancel", cancel_one); }
int cmd_retry(int argc, char **argv) { return each(argc, argv, "retry", retry_one); }
