/*
 * cmd_submit_after.c: submit --after: a job that waits in wait/ until the
 * jobs it names have ended (spool-layout.md, "Dependencies").  The
 * options are parsed here for both programs; a spool's submit is here
 * too, a queue's in chute-pgsql.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "cli/submit_after.h"
#include "store/after.h"
#include "store/spool.h"
#include "store/state.h"

#define AF_FILE_MAX	(16 << 20)

/* One ID of the list, of len bytes (not NUL-terminated). */
static int
add(struct af_opts *a, const char *p, size_t len, const char *from)
{
	char *id;

	if (a->n == AF_MAX_IDS) {
		fprintf(stderr, "chute: submit: %s: more than %d jobs to wait "
		    "for\n", from, AF_MAX_IDS);
		return EX_USAGE;
	}
	/* Its place, not its bytes: it may be 10 kB of control bytes. */
	if (len == 0 || len > ID_MAX || (id = strndup(p, len)) == NULL ||
	    !id_valid(id)) {
		if (len > 0 && len <= ID_MAX)
			free(id);
		fprintf(stderr, "chute: submit: %s: ID number %zu is not a job "
		    "ID (1 to %d bytes, no '/', no control bytes, no leading "
		    "'.')\n", from, a->n + 1, ID_MAX);
		return EX_USAGE;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		char **v = reallocarray(a->ids, cap, sizeof(*v));
		if (v == NULL) {
			free(id);
			fprintf(stderr, "chute: submit: %s\n", strerror(errno));
			return EX_SOFTWARE;
		}
		a->ids = v;
		a->cap = cap;
	}
	a->ids[a->n++] = id;
	return 0;
}

/*
 * The next separator from p, or end.  A comma followed by an attribute
 * (",L=": ",p=5", ",k=KEY", ",u=KEY", base/sched.h) is the ID's own:
 * the IDs submit prints end so, and are pasted into --after as printed.
 */
static const char *
next_sep(const char *p, const char *end, char sep)
{
	const char *q = p;

	while ((q = memchr(q, sep, (size_t)(end - q))) != NULL) {
		if (sep != ',' || end - q < 3 || q[1] < 'a' || q[1] > 'z' ||
		    q[2] != '=')
			return q;
		q++;
	}
	return end;
}

/* The IDs of s, split at sep; empty pieces only where allowed. */
static int
add_list(struct af_opts *a, const char *s, size_t len, char sep,
    bool empty_ok, const char *from)
{
	const char *p = s, *end = s + len, *q;
	int rc;

	while (p <= end) {
		q = next_sep(p, end, sep);
		if ((q > p || !empty_ok) &&
		    (rc = add(a, p, (size_t)(q - p), from)) != 0)
			return rc;
		p = q + 1;
	}
	return 0;
}

static int
read_file(struct af_opts *a, const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	ssize_t r;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "chute: submit: --after-file %s: %s\n", path,
		    strerror(errno));
		return EX_NOINPUT;
	}
	if ((buf = malloc(AF_FILE_MAX + 1)) == NULL) {
		close(fd);
		return EX_SOFTWARE;
	}
	while (len <= AF_FILE_MAX) {
		r = read(fd, buf + len, AF_FILE_MAX + 1 - len);
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	if (r == -1 || len > AF_FILE_MAX) {
		fprintf(stderr, "chute: submit: --after-file %s: %s\n", path,
		    r == -1 ? strerror(errno) : "longer than 16 MB");
		free(buf);
		close(fd);
		return r == -1 ? EX_IOERR : EX_USAGE;
	}
	close(fd);
	/* One ID a line; empty lines (the last newline's) are skipped. */
	rc = add_list(a, buf, len, '\n', true, "--after-file");
	free(buf);
	return rc;
}

int
af_option(struct af_opts *a, int c, const char *v)
{
	int m;

	switch (c) {
	case AF_OPT_AFTER:
		a->given = true;
		return add_list(a, v, strlen(v), ',', false, "--after");
	case AF_OPT_FILE:
		a->given = true;
		return read_file(a, v);
	case AF_OPT_FAILED:
		a->mode_given = true;
		if ((m = after_mode_parse(v)) == -1)
			return usage_error("submit", "--after-failed: fail or "
			    "run");
		a->mode = (enum after_mode)m;
		return 0;
	}
	return 1;
}

int
af_check(const struct af_opts *a, int n, bool unique, bool at)
{
	if (!a->given && a->mode_given)
		return usage_error("submit", "--after-failed needs --after");
	if (!a->given)
		return 0;
	if (a->n == 0)
		return usage_error("submit", "--after-file: no IDs");
	if (n > 1)
		return usage_error("submit", "--after with more than one input");
	if (unique)
		return usage_error("submit", "--after and --unique together");
	if (at)
		return usage_error("submit", "--after with --delay or --at");
	return 0;
}

void
af_free(struct af_opts *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->ids[i]);
	free(a->ids);
	memset(a, 0, sizeof(*a));
}

/* Every job waited for is one of the spool's: EXIT_NO at the first not. */
static int
all_known(struct spool *sp, const struct af_opts *a)
{
	for (size_t i = 0; i < a->n; i++)
		if (spool_locate(sp, a->ids[i], NULL) == ST_NONE) {
			fprintf(stderr, "chute: %s: --after %s: no such job "
			    "(never submitted, or purged)\n", sp->path,
			    vis_id(a->ids[i]));
			return EXIT_NO;
		}
	return 0;
}

/* The job into tmp/ and wait/; its list is written already. */
static int
place(struct spool *sp, const char *file, const char *id)
{
	bool is_stdin = strcmp(file, "-") == 0;
	int fd, where, saved;

	fd = is_stdin ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		fprintf(stderr, "chute: %s: %s\n", file, strerror(errno));
		return errno == ENOENT || errno == EACCES ? EX_NOINPUT :
		    EX_IOERR;
	}
	if (state_write_tmp(sp, fd, id, 0, &where) == -1) {
		saved = errno;
		fprintf(stderr, "chute: %s: %s\n", where == -1 ? file :
		    sp->path, strerror(saved));
		if (!is_stdin)
			close(fd);
		return where == -1 ? EX_NOINPUT : EX_IOERR;
	}
	if (!is_stdin)
		close(fd);
	if (state_place_wait(sp, id) == -1) {
		saved = errno;
		unlinkat(sp->dir[ST_TMP], id, 0);
		fprintf(stderr, "chute: %s/wait/%s: %s\n", sp->path, id,
		    saved == EEXIST ? "job exists" : strerror(saved));
		return saved == EEXIST ? EXIT_NO : EX_IOERR;
	}
	return 0;
}

int
af_submit_spool(struct spool *sp, const struct af_opts *a, const char *file,
    const char *id)
{
	char name[NAME_MAX + 1];
	const char *where;
	int rc;

	if ((rc = all_known(sp, a)) != 0)
		return rc;
	if (sp->dir[ST_WAIT] == -1) {
		fprintf(stderr, "chute: %s/wait/: missing, and not ours to make "
		    "(chute init %s, or its owner's next start, makes it)\n",
		    sp->path, sp->path);
		return EX_NOPERM;
	}
	if (id != NULL)
		strlcpy(name, id, sizeof(name));
	else
		id_generate(name, sizeof(name));
	if (after_write(sp, name, a->mode, a->ids, a->n, &where) == -1) {
		fprintf(stderr, "chute: %s/%s: %s\n", sp->path, where,
		    strerror(errno));
		return EX_IOERR;
	}
	if ((rc = place(sp, file, name)) != 0) {
		after_remove(sp, name);
		return rc;
	}
	/* wait/ (and tmp/) durable before the ID is printed. */
	if (spool_sync(sp) == -1) {
		fprintf(stderr, "chute: %s/wait: fsync: %s\n", sp->path,
		    strerror(errno));
		if (state_unsubmit(sp, name, ST_WAIT) == 0)
			after_remove(sp, name);
		else if (errno == ENOENT)
			fprintf(stderr, "chute: %s: already taken by the owner; "
			    "it may run (chute cancel %s %s)\n", name, sp->path,
			    name);
		return EX_IOERR;
	}
	printf("%s\n", name);
	return cmd_flush_stdout(0);
}
