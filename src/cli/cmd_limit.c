/*
 * cmd_limit.c: `chute limit STORE`: the store's limits and the keys in
 * use; `chute limit STORE --key KEY|--default|--all [--max N|none]
 * [--rate N/DUR|none] [--clear]`: change one rule.  The rules live in
 * the store (a spool's `limits` file, a queue's chute.limits rows), so
 * every owner and worker obeys the same ones; base/sched.h says what
 * they mean.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/store.h"

struct args {
	bool			 scoped;
	struct store_limit_set	 c;
};

static int
bad(const char *opt, const char *val, const char *why)
{
	return usage_error("limit", "%s %s: %s", opt, val, why);
}

/* One option into a: 0, or a usage error's status. */
static int
option(int c, const char *val, struct args *a)
{
	const char *why;

	switch (c) {
	case 'k':
		if (!key_valid(val, &why))
			return bad("--key", val, why);
		a->c.key = val;
		/* FALLTHROUGH */
	case 'd':
	case 'a':
		if (a->scoped)
			return usage_error("limit", "give one of --key, "
			    "--default and --all");
		a->scoped = true;
		a->c.scope = c == 'k' ? LIM_KEY : c == 'd' ? LIM_DEFAULT :
		    LIM_ALL;
		return 0;
	case 'm':
		a->c.set_max = true;
		return limit_parse_max(val, &a->c.max, &why) == 0 ? 0 :
		    bad("--max", val, why);
	case 'r':
		a->c.set_rate = true;
		return limit_parse_rate(val, &a->c.rate_n, &a->c.rate_ms,
		    &why) == 0 ? 0 : bad("--rate", val, why);
	case 'c':
		a->c.clear = true;
		return 0;
	}
	return usage_error("limit", "bad option");
}

static int
parse(int argc, char **argv, struct args *a, bool uri)
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "default", no_argument, NULL, 'd' },
		{ "all", no_argument, NULL, 'a' },
		{ "max", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "clear", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
		if ((rc = option(c, optarg, a)) != 0)
			return rc;
	if (argc - optind != 0)
		return usage_error("limit", uri ? "unexpected argument" :
		    "want exactly one SPOOL");
	if (a->scoped != (a->c.set_max || a->c.set_rate || a->c.clear))
		return usage_error("limit", a->scoped ? "say what to set: "
		    "--max, --rate or --clear" : "say whose limit: --key KEY,"
		    " --default or --all");
	if (a->c.clear && (a->c.set_max || a->c.set_rate))
		return usage_error("limit", "--clear takes no --max or --rate");
	return 0;
}

static void
fmt_max(long max, char *buf, size_t len)
{
	if (max == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%ld", max);
}

static void
fmt_count(long long n, char *buf, size_t len)
{
	if (n < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld", n);
}

struct show {
	bool	 rules, keys;	/* their headers printed */
};

/*
 * Rules: "RULE KEY MAX RATE"; then the keys in use: "KEY RUNNING
 * WAITING MAX RATE RULE", RULE saying which rule bounds the key (key,
 * default, or - for none).
 */
static void
show_row(void *arg, const struct store_limit_row *r)
{
	static const char *scope[] = { "key", "default", "all" };
	struct show *sh = arg;
	char max[24], rate[48], run[24], wait[24];

	fmt_max(r->bounded || r->rule ? r->lim.max : 0, max, sizeof(max));
	limit_format_rate(r->bounded || r->rule ? r->lim.rate_n : 0,
	    r->lim.rate_ms, rate, sizeof(rate));
	if (r->rule) {
		if (!sh->rules)
			printf("%-8s %-24s %7s %12s\n", "RULE", "KEY", "MAX",
			    "RATE");
		sh->rules = true;
		printf("%-8s %-24s %7s %12s\n", scope[r->lim.scope],
		    r->lim.scope == LIM_KEY ? r->lim.key : "-", max, rate);
		return;
	}
	if (!sh->keys)
		printf("%s%-24s %8s %8s %7s %12s %s\n", sh->rules ? "\n" : "",
		    "KEY", "RUNNING", "WAITING", "MAX", "RATE", "RULE");
	sh->keys = true;
	fmt_count(r->running, run, sizeof(run));
	fmt_count(r->waiting, wait, sizeof(wait));
	printf("%-24s %8s %8s %7s %12s %s\n", r->lim.key, run, wait, max,
	    rate, !r->bounded ? "-" : r->lim.scope == LIM_KEY ? "key" :
	    "default");
}

int
cmd_limit(int argc, char **argv)
{
	struct args a = { 0 };
	struct show sh = { 0 };
	struct store s;
	const char *queue;
	char msg[512] = "";
	int rc;

	if ((rc = cmd_store_take_opts(&argc, argv, &s, &queue, true)) != 0)
		return rc;
	if ((rc = parse(argc, argv, &a, s.ops->uri)) != 0)
		return rc;
	if (s.target == NULL)
		return usage_error("limit", "want exactly one SPOOL");
	if ((rc = cmd_store_open(&s, "limit", queue)) != 0)
		return rc;
	if (!a.scoped) {
		rc = s.ops->limits(&s, show_row, &sh);
		if (rc == 0 && !sh.rules && !sh.keys)
			printf("no limits, no keys in use\n");
	} else {
		rc = cmd_say_result(s.ops->set_limit(&s, &a.c, msg,
		    sizeof(msg)), msg);
	}
	return cmd_store_done(&s, rc);
}
