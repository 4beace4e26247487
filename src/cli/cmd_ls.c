/*
 * cmd_ls.c: `chute ls STORE [--key KEY] [STATE]`: every job (of that
 * key), oldest first, with its state, age, attempts, priority and key; of
 * a queue's cur, each claim's worker and lease.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/listing.h"
#include "store/spool.h"
#include "queue/store.h"

struct ls {
	bool		 claims;	/* a queue's cur: with each claim */
	bool		 header;	/* printed */
	const char	*key;		/* --key: only its jobs; NULL all */
};

/* The header, once: after the store has answered, before its first row. */
static void
header(struct ls *l)
{
	if (l->header)
		return;
	l->header = true;
	if (l->claims)
		printf("%-7s %10s %8s %4s %-16s %9s %-24s  %s\n", "STATE",
		    "AGE", "ATTEMPTS", "PRIO", "KEY", "LEASE", "WORKER", "ID");
	else
		printf("%-7s %10s %8s %4s %-16s  %s\n", "STATE", "AGE",
		    "ATTEMPTS", "PRIO", "KEY", "ID");
}

/* The row's key, "-" for none; false when --key leaves the row out. */
static bool
key_of(const struct ls *l, const struct store_row *r, const char **key)
{
	*key = r->key != NULL && *r->key != '\0' ? r->key : "-";
	return l->key == NULL || strcmp(l->key, *key) == 0;
}

static void
row(void *arg, const struct store_row *r)
{
	char age[32], vis[1024];
	const char *key;

	header(arg);
	if (!key_of(arg, r, &key))
		return;
	dur_signed(r->age, age, sizeof(age));
	vis_name(r->id, vis, sizeof(vis));
	printf("%-7s %10s %8lld %4d %-16s  %s\n", state_names[r->state], age,
	    r->attempts, r->prio, key, vis);
}

/*
 * `ls URL cur`: each claim's worker and its lease's time left, negative
 * once it has run out (its worker is gone: recovery takes it back).
 */
static void
row_claim(void *arg, const struct store_row *r)
{
	char a[32], l[32], w[512], v[1024];
	const char *key;

	header(arg);
	if (!key_of(arg, r, &key))
		return;
	dur_signed(r->age, a, sizeof(a));
	dur_signed(r->lease, l, sizeof(l));
	vis_name(r->worker != NULL ? r->worker : "-", w, sizeof(w));
	vis_name(r->id, v, sizeof(v));
	printf("%-7s %10s %8lld %4d %-16s %9s %-24s  %s\n",
	    state_names[r->state], a, r->attempts, r->prio, key,
	    r->has_lease ? l : "-", w, v);
}

/*
 * --key KEY (or --key=KEY) out of argv into *key: 0, or a usage error.
 * cmd_compact takes the words out: it keeps them past argv's NULL, where
 * libbsd's setproctitle put its copies of them (gone from argv, they
 * were leaks to LeakSanitizer).
 */
static int
take_key(int *argc, char **argv, const char **key)
{
	bool *keep = calloc((size_t)*argc + 1, sizeof(*keep));
	const char *why;
	int i, n;

	if (keep == NULL) {
		fprintf(stderr, "chute: ls: out of memory\n");
		return EX_SOFTWARE;
	}
	for (i = 0; i < *argc; i++)
		keep[i] = true;
	for (i = 1; i < *argc; i += n) {
		n = 1;
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--key") == 0 && i + 1 < *argc)
			n = 2, *key = argv[i + 1];
		else if (strncmp(argv[i], "--key=", 6) == 0)
			*key = argv[i] + 6;
		else
			continue;
		if (!key_valid(*key, &why)) {
			free(keep);
			return usage_error("ls", "--key %s: %s", *key, why);
		}
		keep[i] = keep[i + n - 1] = false;
	}
	cmd_compact(argc, argv, keep);
	free(keep);
	return 0;
}

int
cmd_ls(int argc, char **argv)
{
	struct store s;
	const char *queue;
	struct ls l = { 0 };
	int only = ST_NONE, rc;

	/* First: --key KEY before a spool's path must not pass for it. */
	if ((rc = take_key(&argc, argv, &l.key)) != 0)
		return rc;
	if ((rc = cmd_store_take(&argc, argv, &s, &queue)) != 0)
		return rc;
	if (argc > 2 || s.target == NULL)
		return usage_error("ls", "want %s and at most one STATE",
		    s.ops->noun);
	if (argc == 2 && (only = state_from_name(argv[1])) == ST_NONE)
		return s.ops->uri ? usage_error("ls", "want %s and at most one "
		    "STATE", s.ops->noun) : usage_error("ls", "%s: not a state",
		    argv[1]);
	if ((rc = cmd_store_open(&s, "ls", queue)) != 0)
		return rc;
	l.claims = only == ST_CUR && s.ops->claims;
	if ((rc = s.ops->list(&s, only, l.claims ? row_claim : row, &l)) == 0)
		header(&l);
	return cmd_store_done(&s, rc);
}
