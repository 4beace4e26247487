/*
 * cmd_purge.c: `chute purge`: remove finished jobs older than a duration,
 * and their logs.  The log goes first: a crash between the two leaves a
 * finished job without a log, which the next purge removes; never a log
 * whose job is gone (a later job of the same name would inherit it).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"

struct purge {
	struct spool	*sp;
	int		 state;
	msec_t		 cutoff;
	size_t		 removed;
	int		 rc;
};

/* One line for a file purge could not look at or remove; goes on. */
static int
fail(struct purge *p, int dir, const char *name)
{
	fprintf(stderr, "chute: %s/%s/%s: %s\n", p->sp->path, state_names[dir],
	    name, strerror(errno));
	p->rc = EX_IOERR;
	return 0;
}

static int
purge_cb(void *arg, const char *name)
{
	struct purge *p = arg;
	struct stat st;

	if (fstatat(p->sp->dir[p->state], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return errno == ENOENT ? 0 : fail(p, p->state, name);
	if ((msec_t)st.st_mtim.tv_sec * 1000 >= p->cutoff)
		return 0;
	if (unlinkat(p->sp->dir[ST_LOG], name, 0) == -1 && errno != ENOENT)
		return fail(p, ST_LOG, name);
	if (unlinkat(p->sp->dir[p->state], name, S_ISDIR(st.st_mode) ?
	    AT_REMOVEDIR : 0) == -1 && errno != ENOENT)
		return fail(p, p->state, name);
	p->removed++;
	return 0;
}

/* fsync a directory purge removed from: a failure is an I/O error too. */
static void
sync_dir(struct purge *p, int dir)
{
	if (spool_fsync_dir(p->sp, dir) == 0)
		return;
	fprintf(stderr, "chute: %s/%s: fsync: %s\n", p->sp->path,
	    state_names[dir], strerror(errno));
	p->rc = EX_IOERR;
}

/*
 * The terminal states (done/, failed/), or only one of them.  log/ is
 * synced first, as its files went first.
 */
static void
purge_states(struct purge *p, int only)
{
	for (int st = ST_FIRST; st < ST_END; st++) {
		if (!state_terminal(st) || (only != ST_NONE && st != only))
			continue;
		p->state = st;
		if (spool_scan(p->sp, st, purge_cb, p) == -1) {
			fprintf(stderr, "chute: %s/%s: %s\n", p->sp->path,
			    state_names[st], strerror(errno));
			p->rc = EX_IOERR;
		}
	}
	sync_dir(p, ST_LOG);
	for (int st = ST_FIRST; st < ST_END; st++)
		if (state_terminal(st) && (only == ST_NONE || st == only))
			sync_dir(p, st);
}

static int
parse(int argc, char **argv, msec_t *age, int *only)
{
	static const struct option longopts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'o' && dur_parse(optarg, age) == 0)
			continue;
		if (c == 's' && (*only = state_from_name(optarg)) != ST_NONE &&
		    state_terminal(*only))
			continue;
		return usage_error("purge", "bad option or value%s%s",
		    optarg ? ": " : "", optarg ? optarg : "");
	}
	if (*age < 0)
		return usage_error("purge", "--older-than DUR is required");
	if (argc - optind != 1)
		return usage_error("purge", "want exactly one SPOOL");
	return 0;
}

int
cmd_purge(int argc, char **argv)
{
	struct spool sp;
	struct purge p = { .sp = &sp };
	msec_t age = -1;
	int only = ST_NONE, rc;

	if ((rc = parse(argc, argv, &age, &only)) != 0)
		return rc;
	if ((rc = open_spool_or_exit(&sp, argv[optind])) != 0)
		return rc;
	p.cutoff = now_ms() - age;
	purge_states(&p, only);
	printf("purged %zu\n", p.removed);
	spool_close(&sp);
	return cmd_flush_stdout(p.rc);
}
