/*
 * pg_cmd_run.c: `chute run URL`: a worker of the fleet.  The same owner,
 * supervisor and outcome table as on a spool, over the database's queue
 * (queue_pg.c); any number of them, on any number of hosts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/spawn.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "run/opts.h"
#include "run/owner.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"

/* --lease DUR, --poll DUR: a duration of at least min ms, or 64. */
static int
take_dur(const char *opt, const char *arg, msec_t min, msec_t *out)
{
	char m[32];

	if (dur_parse(arg, out) == 0 && *out >= min)
		return 0;
	dur_format(min, m, sizeof(m));
	return usage_error("run", "%s %s: not a duration of at least %s", opt,
	    arg, m);
}

/*
 * --lease DUR, --poll DUR and --prefetch N, the database's own options,
 * taken out of argv before run_parse_args sees it.
 */
static int
take_lease(int *argc, char **argv, struct pgq_opts *o)
{
	const char *err = NULL;

	bool *keep = calloc((size_t)*argc + 1, sizeof(*keep));
	int n = *argc, rc = 0;

	if (keep == NULL)
		return EX_SOFTWARE;
	keep[0] = true;
	for (int i = 1; i < n && rc == 0; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < n)
				keep[i++] = true;
			break;
		}
		if (strcmp(argv[i], "--lease") == 0 && i + 1 < n) {
			rc = take_dur("--lease", argv[++i], 300, &o->lease);
		} else if (strcmp(argv[i], "--poll") == 0 && i + 1 < n) {
			rc = take_dur("--poll", argv[++i], 10, &o->poll);
		} else if (strcmp(argv[i], "--prefetch") == 0 && i + 1 < n) {
			o->prefetch = (int)strtonum(argv[++i], 0, PG_PREFETCH_MAX,
			    &err);
			if (err != NULL)
				rc = usage_error("run", "--prefetch %s: %s (0 to "
				    "%d jobs)", argv[i], err, PG_PREFETCH_MAX);
		} else
			keep[i] = true;
	}
	cmd_compact(argc, argv, keep);
	free(keep);
	return rc;
}

int
pgcmd_run(int argc, char **argv)
{
	struct owner ow = { .sigfd = -1 };
	struct queue_conf qc = { .cancelled = owner_cancelled, .arg = &ow };
	struct run_opts o;
	struct pgq_opts po = { .lease = PG_LEASE_MS, .poll = PG_POLL_MS,
	    .prefetch = PG_PREFETCH };
	struct queue *q;
	const char *url;
	struct pg pg;
	int rc;

	/* The URI goes back in as the SPOOL argument run_parse_args wants. */
	if ((rc = pgcmd_take(&argc, argv, "run", &pg, true)) != 0)
		return rc;
	if ((rc = take_lease(&argc, argv, &po)) != 0) {
		free(pg.uri);
		return rc;
	}
	url = pg.name;
	{
		char **av = calloc((size_t)argc + 2, sizeof(*av));
		if (av == NULL)
			return EX_SOFTWARE;
		av[0] = argv[0];
		av[1] = (char *)(uintptr_t)url;
		memcpy(av + 2, argv + 1, (size_t)argc * sizeof(*av));
		bool help = (rc = run_parse_args(argc + 1, av, &o, &url)) == -1;

		if (help)
			rc = cmd_help("run");
		else if (rc == 0 && o.wait_lock)
			rc = usage_error("run", "--wait-lock: a database queue "
			    "has no lock to wait for; start any number of workers");
		else if (rc == 0 && o.if_unowned)
			rc = usage_error("run", "--if-unowned: a database queue "
			    "has no owner; any number of workers share it");
		if (rc != 0 || help) {
			free(av);
			free(pg.uri);
			return rc;
		}
		/* o.argv points into av, which lives as long as the run. */
		if ((o.path = spawn_which(o.argv[0])) == NULL) {
			fprintf(stderr, "chute: run: %s: handler not found or "
			    "not executable: %s\n", o.argv[0], strerror(errno));
			free(av);
			free(pg.uri);
			return EX_USAGE;
		}
		qc.persistent = o.persistent;
		qc.inline_jobs = o.inline_jobs;
		qc.policy = (struct retry_policy){ o.max_attempts,
		    o.backoff_base, o.backoff_cap };
		po.slots = o.jobs;
		if ((rc = queue_pg_open(&pg, &po, &qc, &q)) == 0) {
			q->die_with_owner = true;
			if (o.syslog != -1)
				say_syslog(o.syslog);
			rc = owner_run(&ow, &o, q);
		}
		free(o.path);
		free(av);
	}
	free(pg.uri);
	return rc;
}
