/*
 * t_spool.h: the fixture of the unit suites that need a spool on disk.
 * Each test gets a fresh one, made under mkdtemp(3) by chute's own
 * spool_init() and opened with spool_open(); teardown closes it and
 * removes the directory.  A failing test skips teardown (Check's fork
 * mode), so its spool stays behind for inspection.
 *
 *	tcase_add_checked_fixture(tc, t_spool_setup, t_spool_teardown);
 *	...
 *	fd = openat(t_spool.dir[ST_NEW], "job", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
 *
 * A fixture that keeps its spool in a struct of its own (the owner's
 * struct owner) uses the two halves instead: t_spool_make(), then its own
 * spool_open(&mine, t_spool_dir); its own spool_close(&mine), then
 * t_spool_remove().
 */
#ifndef T_SPOOL_H
#define T_SPOOL_H

#include <limits.h>

#include "store/spool.h"

/* The test's spool, open between t_spool_setup() and t_spool_teardown(). */
extern struct spool t_spool;

/*
 * The spool's directory: absolute, free of symlinks, made by mkdtemp(3)
 * under $TMPDIR (or /tmp) and named chute-unit.XXXXXX.  Set by
 * t_spool_make(), so by t_spool_setup() too; "" when there is none.
 */
extern char t_spool_dir[PATH_MAX];

/* Checked fixture: t_spool_make(), then spool_open(&t_spool, t_spool_dir). */
void	 t_spool_setup(void);

/* Checked fixture: spool_close(&t_spool), then t_spool_remove(). */
void	 t_spool_teardown(void);

/*
 * A fresh directory in t_spool_dir and spool_init() on it (no group):
 * every state directory there, mode 0700.  Fails the test on error.
 */
void	 t_spool_make(void);

/*
 * Remove t_spool_dir and everything in it, and set it to "".  Fails the
 * test if anything is left.  Nothing to do when t_spool_dir is "".
 */
void	 t_spool_remove(void);

/*
 * Remove the tree at path (nftw(3), depth first), never following a
 * symlink nor entering another file system: a mount below path is left
 * alone, and so are the directories that lead to it.  0, or -1 with
 * errno from the first removal that failed; it goes on with the rest
 * either way.
 */
int	 t_rmtree(const char *path);

#endif
