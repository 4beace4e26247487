/*
 * cmd_submit_unique.c: `chute submit --unique KEY` on a spool.  The job is
 * written to tmp/ first; then, under the key's flock (store/unique.c),
 * its holder is looked at and one of: the key taken and the job renamed
 * into new/ or defer/, the waiting holder replaced, or nothing (refused,
 * kept).  spool-layout.md, "Unique keys", has the protocol and its crash
 * windows.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/sched.h"
#include "cli/cmd.h"
#include "cli/submit_unique.h"
#include "store/spool.h"
#include "store/state.h"
#include "store/unique.h"

int
uq_option(struct uq_opts *u, int c, const char *v)
{
	const char *why;

	switch (c) {
	case UQ_OPT_KEY:
		/* One line, and not the key: it may be 10 kB of anything. */
		if (!unique_key_valid(v, &why)) {
			fprintf(stderr, "chute: submit: --unique: %s\n", why);
			return EX_USAGE;
		}
		u->key = v;
		return 0;
	case UQ_OPT_WHILE:
		u->modes = true;
		if (unique_while_parse(v, &u->w) == -1)
			return usage_error("submit", "--unique-while: waiting, "
			    "active or kept");
		return 0;
	case UQ_OPT_DUP:
		u->modes = true;
		if (unique_dup_parse(v, &u->dup) == -1)
			return usage_error("submit", "--on-duplicate: refuse, "
			    "keep or replace");
		return 0;
	}
	return 1;
}

int
uq_check(const struct uq_opts *u, int n)
{
	if (u->key == NULL && u->modes)
		return usage_error("submit", "--unique-while and "
		    "--on-duplicate need --unique");
	if (u->key != NULL && n > 1)
		return usage_error("submit", "--unique with more than one input");
	return 0;
}

int
uq_make_id(const struct uq_opts *u, const char *id, char *name, size_t len)
{
	char base[NAME_MAX + 1];
	struct jobattr a;
	const char *why;

	if (id != NULL)
		strlcpy(base, id, sizeof(base));
	else
		id_generate(base, sizeof(base));
	if (unique_name(base, u->key, name, len) == -1)
		return usage_error("submit", "--unique %s: the job's ID would be "
		    "longer than %d bytes", u->key, ID_MAX);
	/* An --id of NAME,u=K would make a name the owner refuses. */
	if (jobattr_parse(name, &a, &why) == -1)
		return usage_error("submit", "--id %s with --unique: %s", id,
		    why);
	return 0;
}

/* Refused or kept: the holder is printed, tmp/name goes. */
static int
uq_dup(struct spool *sp, const struct uq_opts *u, const struct unique_hold *h,
    int st, const char *name)
{
	unlinkat(sp->dir[ST_TMP], name, 0);
	printf("%s\n", h->id);
	if (u->dup == UQ_KEEP)
		return cmd_flush_stdout(0);
	fprintf(stderr, "chute: %s: unique key %s is held by job %s (%s)\n",
	    sp->path, u->key, h->id, state_names[st]);
	return cmd_flush_stdout(EXIT_HELD);
}

/*
 * The key is free: taken for tmp/name, then the job placed.  The key is
 * written first: a crash between names a job that is in no state, which
 * holds nothing.  A failed rename gives the key back.
 */
static int
uq_take(struct spool *sp, const struct uq_opts *u, struct unique_hold *h,
    const char *name, msec_t at)
{
	int to = at > 0 ? ST_DEFER : ST_NEW, saved;

	if (unique_set(h, u->w, name) == -1) {
		fprintf(stderr, "chute: %s/%s/%s: %s\n", sp->path, UNIQUE_DIR,
		    u->key, strerror(errno));
		unlinkat(sp->dir[ST_TMP], name, 0);
		return EX_IOERR;
	}
	if (state_place(sp, name, at) == -1 || spool_sync(sp) == -1) {
		fprintf(stderr, "chute: %s/%s/%s: %s\n", sp->path,
		    state_names[to], name, strerror(errno));
		saved = errno;
		/* Not durable: not run, as cmd_submit's take_back. */
		if (state_unsubmit(sp, name, to) == -1 && errno != ENOENT)
			unlinkat(sp->dir[ST_TMP], name, 0);
		(void)unique_clear(h, name);
		return saved == EEXIST ? EXIT_NO : EX_IOERR;
	}
	printf("%s\n", name);
	return cmd_flush_stdout(0);
}

/* The holder waits in st: its bytes and time become tmp/name's. */
static int
uq_replace(struct spool *sp, const struct unique_hold *h, int st,
    const char *name, msec_t at)
{
	if (state_replace(sp, name, h->id, st, at) == -1)
		return -1;
	if (spool_sync(sp) == -1) {
		fprintf(stderr, "chute: %s: fsync: %s\n", sp->path,
		    strerror(errno));
		return EX_IOERR;
	}
	printf("%s\n", h->id);
	return cmd_flush_stdout(0);
}

/* Under the key's lock: what the holder (if any) leaves us to do. */
static int
uq_decide(struct spool *sp, const struct uq_opts *u, struct unique_hold *h,
    const char *name, msec_t at)
{
	int st = ST_NEW, rc;

	/* A holder that moves while we replace it is looked at again. */
	for (int tries = 0; tries < 8; tries++) {
		if (!unique_held(sp, h, &st))
			return uq_take(sp, u, h, name, at);
		if (u->dup != UQ_REPLACE || (st != ST_NEW && st != ST_DEFER))
			return uq_dup(sp, u, h, st, name);
		if ((rc = uq_replace(sp, h, st, name, at)) != -1)
			return rc;
		if (errno != ENOENT)
			break;
	}
	fprintf(stderr, "chute: %s/%s/%s: %s\n", sp->path, state_names[st],
	    h->id, strerror(errno));
	unlinkat(sp->dir[ST_TMP], name, 0);
	return EX_IOERR;
}

int
uq_submit_spool(struct spool *sp, const struct uq_opts *u, const char *file,
    const char *id, msec_t at)
{
	char name[NAME_MAX + 1];
	bool is_stdin = strcmp(file, "-") == 0;
	struct unique_hold h;
	int fd, where, rc;

	if ((rc = uq_make_id(u, id, name, sizeof(name))) != 0)
		return rc;
	if (id != NULL && spool_locate(sp, name, NULL) != ST_NONE) {
		fprintf(stderr, "chute: %s: job exists\n", name);
		return EXIT_NO;
	}
	fd = is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		fprintf(stderr, "chute: %s: %s\n", file, strerror(errno));
		return errno == ENOENT || errno == EACCES ? EX_NOINPUT :
		    EX_IOERR;
	}
	rc = state_write_tmp(sp, fd, name, at, &where);
	if (!is_stdin)
		close(fd);
	if (rc == -1) {
		fprintf(stderr, "chute: %s: %s\n", where == -1 ? file :
		    sp->path, strerror(errno));
		return where == -1 ? EX_NOINPUT : EX_IOERR;
	}
	if (unique_lock(sp, u->key, true, &h) == -1) {
		fprintf(stderr, "chute: %s/%s/%s: %s\n", sp->path, UNIQUE_DIR,
		    u->key, strerror(errno));
		unlinkat(sp->dir[ST_TMP], name, 0);
		return EX_IOERR;
	}
	rc = uq_decide(sp, u, &h, name, at);
	unique_unlock(&h);
	return rc;
}
