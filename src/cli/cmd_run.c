/*
 * cmd_run.c: `chute run`: parse, check the handler exists, call run_main.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/spawn.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/queue.h"
#include "run/opts.h"
#include "run/owner.h"

static int
parse_backoff(const char *s, struct run_opts *o)
{
	char base[32];
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);

	if (n >= sizeof(base))
		return -1;
	memcpy(base, s, n);
	base[n] = '\0';
	if (dur_parse(base, &o->backoff_base) == -1 || o->backoff_base == 0)
		return -1;
	if (colon == NULL) {
		if (o->backoff_cap < o->backoff_base)
			o->backoff_cap = o->backoff_base;
		return 0;
	}
	if (dur_parse(colon + 1, &o->backoff_cap) == -1 ||
	    o->backoff_cap < o->backoff_base)
		return -1;
	return 0;
}

static int
parse_opt(int c, struct run_opts *o)
{
	const char *err;

	switch (c) {
	case 'j':
		o->jobs = strtonum(optarg, 1, 4096, &err);
		return err ? usage_error("run", "-j %s: %s (1-4096)", optarg,
		    err) : 0;
	case 't':
		if (dur_parse(optarg, &o->timeout) == -1 || o->timeout == 0)
			return usage_error("run", "--timeout %s: not a "
			    "duration (250ms, 30s, 5m, 2h, 7d)", optarg);
		return 0;
	case 'g':
		if (dur_parse(optarg, &o->grace) == -1)
			return usage_error("run", "--grace %s: not a duration",
			    optarg);
		return 0;
	case 'm':
		o->max_attempts = strtonum(optarg, 1, 1000000, &err);
		return err ? usage_error("run", "--max-attempts %s: %s",
		    optarg, err) : 0;
	case 'b':
		return parse_backoff(optarg, o) == -1 ? usage_error("run",
		    "--backoff %s: want BASE[:CAP], durations, 0 < BASE <= CAP",
		    optarg) : 0;
	case 'd':
		o->drain = true;
		return 0;
	case 'w':
		o->wait_lock = true;
		return 0;
	case 'p':
		o->persistent = true;
		return 0;
	case 'i':
		o->persistent = o->inline_jobs = true;
		return 0;
	case 'u':
		o->if_unowned = true;
		return 0;
	case 's':
		if (optarg == NULL)
			o->syslog = LOG_DAEMON;
		else if ((o->syslog = say_facility(optarg)) == -1)
			return usage_error("run", "--syslog=%s: not a facility "
			    "(daemon, user, mail, cron, local0 to local7, ...)",
			    optarg);
		return 0;
	default:
		return usage_error("run", "unknown option");
	}
}

int
run_parse_args(int argc, char **argv, struct run_opts *o, const char **spool)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "grace", required_argument, NULL, 'g' },
		{ "max-attempts", required_argument, NULL, 'm' },
		{ "backoff", required_argument, NULL, 'b' },
		{ "drain", no_argument, NULL, 'd' },
		{ "wait-lock", no_argument, NULL, 'w' },
		{ "persistent", no_argument, NULL, 'p' },
		{ "inline", no_argument, NULL, 'i' },
		{ "if-unowned", no_argument, NULL, 'u' },
		{ "syslog", optional_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	*o = (struct run_opts){
		.jobs = 1, .grace = 10000, .max_attempts = 5,
		.backoff_base = 30000, .backoff_cap = 3600000, .syslog = -1,
	};
	*spool = NULL;
	/* SPOOL may come before or after the options; "+" stops at HANDLER. */
	opterr = 0;
	optind = 0;
	for (;;) {
		while ((c = getopt_long(argc, argv, "+:j:h", longopts, NULL)) != -1) {
			if (c == ':' || c == '?')
				return usage_error("run", "%s: %s", argv[optind - 1],
				    c == ':' ? "missing value" : "unknown option");
			if (c == 'h')
				return -1;
			if ((rc = parse_opt(c, o)) != 0)
				return rc;
		}
		if (*spool != NULL || optind >= argc ||
		    strcmp(argv[optind - 1], "--") == 0)
			break;
		*spool = argv[optind++];
	}
	if (*spool == NULL)
		return usage_error("run", "no spool given");
	if (optind >= argc)
		return usage_error("run", "no handler given");
	if (o->if_unowned && o->wait_lock)
		return usage_error("run", "--if-unowned and --wait-lock: "
		    "either give up or wait, not both");
	o->argv = argv + optind;
	return 0;
}

int
cmd_run(int argc, char **argv)
{
	struct run_opts o;
	const char *spool;
	int rc;

	if ((rc = run_parse_args(argc, argv, &o, &spool)) == -1)
		return cmd_help("run");
	if (rc != 0)
		return rc;
	if ((o.path = spawn_which(o.argv[0])) == NULL) {
		fprintf(stderr, "chute: run: %s: handler not found or not "
		    "executable: %s\n", o.argv[0], strerror(errno));
		return EX_USAGE;
	}
	if (o.syslog != -1)
		say_syslog(o.syslog);
	rc = run_main(spool, &o);
	free(o.path);
	return rc;
}

int
run_main(const char *path, const struct run_opts *o)
{
	struct owner ow = { .sigfd = -1 };
	struct queue_conf qc = { .persistent = o->persistent,
	    .inline_jobs = o->inline_jobs,
	    .policy = { o->max_attempts, o->backoff_base, o->backoff_cap },
	    .quiet_if_owned = o->if_unowned,
	    .cancelled = owner_cancelled, .arg = &ow };
	struct queue *q;
	int rc;

	if ((rc = queue_spool_open(path, o->wait_lock, &qc, &q)) != 0)
		return rc;
	if (q == NULL)
		return 0;	/* --if-unowned, and another process owns it */
	return owner_run(&ow, o, q);
}
