/*
 * spool.h, the interface of spool.c: the layout: one O_DIRECTORY
 * descriptor per state directory, scans, group-commit fsyncs.
 */
#ifndef STORE_SPOOL_H
#define STORE_SPOOL_H

#include <sys/types.h>
#include <sys/stat.h>
#include <stdbool.h>

#include "base/jobstate.h"

/*
 * A spool's directories: tmp/ (jobs being written, not yet in a state),
 * one per job state at the state's own number, and log/.
 */
enum { ST_TMP = ST_ZERO_, ST_LOG = ST_END, ST_NDIRS };

struct spool {
	char	*path;			/* absolute */
	int	 root;			/* O_DIRECTORY fd of the spool root */
	int	 lock;			/* owner.lock, once lock_take opened it */
	int	 dir[ST_NDIRS];		/* one O_DIRECTORY fd per state dir */
	unsigned dirty;			/* dirs renamed into since spool_sync */
	mode_t	 fmode[ST_NDIRS];	/* spool_fmode's answers; 0: not asked */
};

/* The directories' names: tmp, the states' (jobstates[]), log. */
extern const char *const state_names[ST_NDIRS];

/*
 * Create the layout (idempotent).  group may be NULL.  Returns 0, or -1
 * with errno set; on ENOENT for a group name errno is set to ESRCH.
 */
int	 spool_init(const char *path, const char *group);

/*
 * Open an existing spool: every state directory must be there.  Returns 0,
 * or -1 with errno set (ENOTDIR/ENOENT name the missing piece only through
 * errno: callers print the spool path).
 */
int	 spool_open(struct spool *sp, const char *path);

/*
 * The mode of a file chute creates in state directory st: group-readable
 * when the directory is shared with a group (chute init --group).  Asked
 * once per spool_open: the owner creates a log file for every job.
 */
mode_t	 spool_fmode(struct spool *sp, int st);

void	 spool_close(struct spool *sp);

/*
 * Which state directory holds the job?  Looks in the order jobs flow
 * (the states' order in JOBSTATES) and tries a second round, because a job
 * moving backwards (cur->new, defer->new, failed->new) between two of our
 * lookups would otherwise be missed.  Returns the state, or ST_NONE.
 */
int	 spool_locate(struct spool *sp, const char *id, struct stat *st);

/*
 * flock(2) is only a spool-wide truth when every process that can reach
 * the spool shares one kernel.  On network file systems it is emulated
 * per client (or not at all), so two hosts could both "own" the spool.
 */
bool	 spool_fs_trusted(long f_type, const char **name);

/*
 * Can the spool's lock be trusted?  Returns 0, or -1 with errno set:
 * EREMOTE when it cannot, with *fs naming the file system.
 */
int	 spool_check_fs(struct spool *sp, const char **fs);

int	 spool_fsync_dir(struct spool *sp, int st);

/*
 * Make the renames since the last call durable: fsync each directory a
 * rename touched, once (group commit).  Returns 0, or -1 with errno set
 * (the dirty marks stay, so the next call tries again).
 */
int	 spool_sync(struct spool *sp);

/* "SPOOL/state/id", malloc'd; for messages and the handler environment. */
char	*spool_jobpath(struct spool *sp, int st, const char *id);

/*
 * Call fn(arg, name) for each entry of a state directory, skipping hidden
 * names.  fn returns 0 to go on, non-zero to stop (returned as is).
 * Returns -1 with errno set if the directory cannot be read.
 */
int	 spool_scan(struct spool *sp, int st, int (*fn)(void *, const char *),
	    void *arg);

/* True when the state directory holds no job (hidden names aside). */
bool	 spool_empty(struct spool *sp, int st);

#endif
