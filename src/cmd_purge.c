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

#include "chute.h"

struct purge {
	struct spool	*sp;
	int		 state;
	msec_t		 cutoff;
	size_t		 removed;
	int		 rc;
};

static int
purge_cb(void *arg, const char *name)
{
	struct purge *p = arg;
	struct stat st;

	if (fstatat(p->sp->dir[p->state], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;
	if ((msec_t)st.st_mtim.tv_sec * 1000 >= p->cutoff)
		return 0;
	if (unlinkat(p->sp->dir[ST_LOG], name, 0) == -1 && errno != ENOENT) {
		fprintf(stderr, "chute: %s/log/%s: %s\n", p->sp->path, name,
		    strerror(errno));
		p->rc = EX_IOERR;
		return 0;
	}
	if (unlinkat(p->sp->dir[p->state], name, S_ISDIR(st.st_mode) ?
	    AT_REMOVEDIR : 0) == -1 && errno != ENOENT) {
		fprintf(stderr, "chute: %s/%s/%s: %s\n", p->sp->path,
		    state_names[p->state], name, strerror(errno));
		p->rc = EX_IOERR;
		return 0;
	}
	p->removed++;
	return 0;
}

int
cmd_purge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct spool sp;
	struct purge p = { .sp = &sp };
	msec_t age = -1;
	int only = ST_NONE, c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'o' && dur_parse(optarg, &age) == 0)
			continue;
		if (c == 's' && ((only = state_from_name(optarg)) == ST_DONE ||
		    only == ST_FAILED))
			continue;
		return usage_error("purge", "bad option or value%s%s",
		    optarg ? ": " : "", optarg ? optarg : "");
	}
	if (age < 0)
		return usage_error("purge", "--older-than DUR is required");
	if (argc - optind != 1)
		return usage_error("purge", "want exactly one SPOOL");
	if ((rc = open_spool_or_exit(&sp, argv[optind])) != 0)
		return rc;
	p.cutoff = now_ms() - age;
	for (int st = ST_DONE; st <= ST_FAILED; st++) {
		if (only != ST_NONE && st != only)
			continue;
		p.state = st;
		if (spool_scan(&sp, st, purge_cb, &p) == -1) {
			fprintf(stderr, "chute: %s/%s: %s\n", sp.path,
			    state_names[st], strerror(errno));
			p.rc = EX_IOERR;
		}
	}
	spool_fsync_dir(&sp, ST_DONE);
	spool_fsync_dir(&sp, ST_FAILED);
	spool_fsync_dir(&sp, ST_LOG);
	printf("purged %zu\n", p.removed);
	spool_close(&sp);
	return p.rc;
}
