/*
 * cmd_submit.c: `chute submit`: each input is copied to tmp/, fsynced and
 * renamed into new/ (or defer/); the directory is fsynced once for the
 * whole batch, and only then are the IDs printed: a printed ID is durable.
 * --priority and --key go into the name (",p=N,k=KEY": spool-layout.md,
 * "Priority and key"), so the ID printed carries them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/sched.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/submit_unique.h"
#include "store/spool.h"
#include "store/state.h"
#include "queue/spool/store_spool.h"

struct submit {
	struct spool	 sp;
	const char	*id;		/* --id, or NULL */
	msec_t		 at;		/* 0: now */
	int		 prio;		/* --priority */
	const char	*key;		/* --key, or NULL */
	char		(*ids)[NAME_MAX + 1];	/* accepted; printed last */
	int		 nids;
	int		 rc;
	struct uq_opts	 u;		/* --unique and its modes */
};

static int
one(struct submit *sb, const char *file)
{
	char *id = sb->ids[sb->nids];	/* kept only if accepted */
	bool is_stdin = strcmp(file, "-") == 0;
	int fd, where, saved;

	char base[NAME_MAX + 1];

	if (sb->id != NULL)
		strlcpy(base, sb->id, sizeof(base));
	else
		id_generate(base, sizeof(base));
	/* Checked against ID_MAX in parse when --id gave the base. */
	if (jobattr_name(base, sb->prio, sb->key, id, sizeof(sb->ids[0])) ==
	    -1) {
		fprintf(stderr, "chute: %s: %s\n", base, strerror(errno));
		return EX_SOFTWARE;
	}
	fd = is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		fprintf(stderr, "chute: %s: %s\n", file, strerror(errno));
		return errno == ENOENT || errno == EACCES ? EX_NOINPUT :
		    EX_IOERR;
	}
	if (state_submit(&sb->sp, fd, id, sb->at, &where) == -1) {
		saved = errno;
		if (where == -1)
			fprintf(stderr, "chute: %s: %s\n", file, strerror(saved));
		else if (saved == EEXIST && sb->id != NULL)
			fprintf(stderr, "chute: %s: job exists\n", id);
		else
			fprintf(stderr, "chute: %s/%s/%s: %s\n", sb->sp.path,
			    state_names[where], id, strerror(saved));
		if (!is_stdin)
			close(fd);
		return saved == EEXIST && sb->id ? EXIT_NO :
		    where == -1 ? EX_NOINPUT : EX_IOERR;
	}
	if (!is_stdin)
		close(fd);
	sb->nids++;
	return 0;
}

/*
 * The batch is not durable: nothing it put in new/ may run, since its
 * submitter is told it failed.  A job an owner claimed meanwhile cannot
 * be taken back; say so, with its ID, so it can be cancelled.
 */
static void
take_back(struct submit *sb)
{
	int from = sb->at > 0 ? ST_DEFER : ST_NEW;

	for (int i = 0; i < sb->nids; i++) {
		if (state_unsubmit(&sb->sp, sb->ids[i], from) == 0 ||
		    errno != ENOENT)
			continue;
		fprintf(stderr, "chute: %s: already taken by the owner; it may "
		    "run (chute cancel %s %s)\n", sb->ids[i], sb->sp.path,
		    sb->ids[i]);
	}
}

static int	 check_attributes(struct submit *);

static int
parse(int argc, char **argv, struct submit *sb)
{
	static const struct option longopts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "delay", required_argument, NULL, 'd' },
		{ "at", required_argument, NULL, 'a' },
		UQ_LONGOPTS,
		{ "priority", required_argument, NULL, 'p' },
		{ "key", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char *err, *why;
	msec_t d;
	int c, r;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if ((r = uq_option(&sb->u, c, optarg)) != 1) {
			if (r != 0)
				return r;
			continue;
		}
		switch (c) {
		case 'i':
			sb->id = optarg;
			if (check_ids(1, &optarg, "submit") != 0)
				return EX_USAGE;
			break;
		case 'd':
			if (sb->at || dur_parse(optarg, &d) == -1)
				return usage_error("submit", "--delay %s: not a "
				    "duration, or given with --at", optarg);
			sb->at = now_ms() + d;
			break;
		case 'a':
			if (sb->at)
				return usage_error("submit", "--at and --delay "
				    "together");
			sb->at = strtonum(optarg, 1, 1LL << 40, &err) * 1000;
			if (err)
				return usage_error("submit", "--at %s: not an "
				    "epoch time in seconds", optarg);
			break;
		case 'p':
			if (prio_parse(optarg, &sb->prio, &why) == -1)
				return usage_error("submit", "--priority %s: %s",
				    optarg, why);
			break;
		case 'k':
			if (!key_valid(optarg, &why))
				return usage_error("submit", "--key: %s", why);
			sb->key = optarg;
			break;
		default:
			return usage_error("submit", "unknown option");
		}
	}
	return check_attributes(sb);
}

/*
 * --id's name must read back as what was asked: attributes of its own
 * (bad ones refused here, not in failed/ later) or the flags', not both.
 */
static int
check_attributes(struct submit *sb)
{
	char name[NAME_MAX + 1];
	struct jobattr a;
	const char *why;

	if (sb->id == NULL)
		return 0;
	if (jobattr_parse(sb->id, &a, &why) == -1)
		return usage_error("submit", "--id: %s", why);
	if (a.baselen != strlen(sb->id) && (sb->prio != PRIO_DEFAULT ||
	    sb->key != NULL))
		return usage_error("submit", "--id gives attributes of its own:"
		    " --priority and --key go without them");
	if (jobattr_name(sb->id, sb->prio, sb->key, name, sizeof(name)) == -1)
		return usage_error("submit", "--id with --priority and --key "
		    "is longer than an ID may be (%d bytes)", ID_MAX);
	return 0;
}

/*
 * --unique: its own path (cmd_submit_unique.c), given the ID with the
 * priority and key in it (,u=KEY goes after them), or NULL for one it
 * makes itself.
 */
static int
submit_unique(struct submit *sb, const char *file)
{
	char base[NAME_MAX + 1], named[NAME_MAX + 1];

	if (sb->prio == PRIO_DEFAULT && sb->key == NULL)
		return uq_submit_spool(&sb->sp, &sb->u, file, sb->id, sb->at);
	if (sb->id != NULL)
		strlcpy(base, sb->id, sizeof(base));
	else
		id_generate(base, sizeof(base));
	if (jobattr_name(base, sb->prio, sb->key, named, sizeof(named)) == -1) {
		fprintf(stderr, "chute: %s: %s\n", base, strerror(errno));
		return EX_SOFTWARE;
	}
	return uq_submit_spool(&sb->sp, &sb->u, file, named, sb->at);
}

static int
parse_rest(int argc, struct submit *sb)
{
	if (optind >= argc)
		return usage_error("submit", "no spool given");
	if (sb->id != NULL && argc - optind > 2)
		return usage_error("submit", "--id with more than one input");
	return uq_check(&sb->u, argc - optind - 1);
}

int
cmd_submit(int argc, char **argv)
{
	struct submit sb = { .rc = 0 };
	char *stdin_only[] = { "-" };
	char **files;
	int nfiles, rc, st;

	if ((rc = parse(argc, argv, &sb)) != 0 ||
	    (rc = parse_rest(argc, &sb)) != 0)
		return rc;
	if ((rc = spool_open_or_say(&sb.sp, argv[optind])) != 0)
		return rc;
	files = argc - optind > 1 ? argv + optind + 1 : stdin_only;
	nfiles = argc - optind > 1 ? argc - optind - 1 : 1;
	if (sb.u.key != NULL) {
		sb.rc = submit_unique(&sb, files[0]);
		goto out;
	}
	if (sb.id != NULL && (st = spool_locate(&sb.sp, sb.id, NULL)) != ST_NONE) {
		fprintf(stderr, "chute: %s: job exists (%s)\n", sb.id,
		    state_names[st]);
		sb.rc = EXIT_NO;
		goto out;
	}
	if ((sb.ids = calloc(nfiles, sizeof(sb.ids[0]))) == NULL) {
		fprintf(stderr, "chute: submit: %s\n", strerror(errno));
		sb.rc = EX_SOFTWARE;
		goto out;
	}
	for (int i = 0; i < nfiles; i++)
		if ((rc = one(&sb, files[i])) != 0 && sb.rc == 0)
			sb.rc = rc;
	if (sb.nids > 0 && spool_sync(&sb.sp) == -1) {
		fprintf(stderr, "chute: %s/%s: fsync: %s\n", sb.sp.path,
		    state_names[sb.at > 0 ? ST_DEFER : ST_NEW], strerror(errno));
		take_back(&sb);
		sb.rc = EX_IOERR;
		goto out;
	}
	for (int i = 0; i < sb.nids; i++)
		printf("%s\n", sb.ids[i]);
	sb.rc = cmd_flush_stdout(sb.rc);
out:
	free(sb.ids);
	spool_close(&sb.sp);
	return sb.rc;
}
