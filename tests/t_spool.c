/*
 * t_spool.c: a fresh spool per unit test, under mkdtemp(3), and the tree
 * removal that cleans it up (t_spool.h has the contracts).
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/spool.h"
#include "t_spool.h"

struct spool	t_spool;
char		t_spool_dir[PATH_MAX];

void
t_spool_setup(void)
{
	t_spool_make();
	ck_assert_msg(spool_open(&t_spool, t_spool_dir) == 0,
	    "spool_open %s: %s", t_spool_dir, strerror(errno));
}

void
t_spool_teardown(void)
{
	spool_close(&t_spool);
	t_spool_remove();
}

void
t_spool_make(void)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[PATH_MAX];

	snprintf(tmpl, sizeof(tmpl), "%s/chute-unit.XXXXXX",
	    tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
	ck_assert_msg(mkdtemp(tmpl) != NULL, "mkdtemp %s: %s", tmpl,
	    strerror(errno));
	/* Absolute and without symlinks: what spool_open() keeps as sp->path. */
	ck_assert_msg(realpath(tmpl, t_spool_dir) != NULL, "realpath %s: %s",
	    tmpl, strerror(errno));
	ck_assert_msg(spool_init(t_spool_dir, NULL) == 0, "spool_init %s: %s",
	    t_spool_dir, strerror(errno));
}

void
t_spool_remove(void)
{
	if (t_spool_dir[0] == '\0')
		return;
	ck_assert_msg(t_rmtree(t_spool_dir) == 0, "removing %s: %s",
	    t_spool_dir, strerror(errno));
	t_spool_dir[0] = '\0';
}

/* nftw(3) passes no argument to its callback: the first failure is kept here. */
static int rmtree_errno;

static int
rmtree_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	/* Depth first: a directory comes after everything in it. */
	if (remove(path) == -1 && rmtree_errno == 0)
		rmtree_errno = errno;
	return 0;
}

int
t_rmtree(const char *path)
{
	rmtree_errno = 0;
	if (nftw(path, rmtree_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) == -1)
		return -1;
	if (rmtree_errno != 0) {
		errno = rmtree_errno;
		return -1;
	}
	return 0;
}
