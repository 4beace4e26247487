/*
 * joblog.h, the interface of joblog.c: log/ID, its "@chute" lines, and
 * log/.pool/, the empty logs made ahead.
 */
#ifndef STORE_JOBLOG_H
#define STORE_JOBLOG_H

#include <sys/types.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include "base/chute.h"
#include "store/spool.h"

struct joblog_info {
	int	 attempts;		/* counted attempts since the last reset */
	char	 last[64];		/* outcome of the last finished attempt */
};
/*
 * Append-only, never through a symlink; group-readable in a group spool.
 * A log shared with other jobs is first made this job's own (own_copy).
 */
int	 joblog_open(struct spool *sp, const char *id);

int	 joblog_note(struct spool *sp, const char *id, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));

int	 joblog_fnote(int fd, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * Append one "@chute TIME text" line.  The handler may have left its last
 * line without a newline; start a fresh line so ours stays parseable.
 * end, if not NULL, is the log's size after our previous line (-1: not
 * known); it is updated after the write.  While the log still has that
 * size its last byte is our own newline and need not be read back; when
 * no handler writes to the log (others false) it is not even looked at,
 * since every other writer (chute's commands) appends whole lines.
 */
int	 joblog_vnote(int fd, off_t *end, bool others, const char *fmt,
	    va_list ap) __attribute__((format(printf, 4, 0)));

/*
 * joblog_vnote for a log kept in memory, *buf (malloc'd, *len bytes, not
 * NUL-terminated), where no handler writes (a --persistent worker's job:
 * queue_pg.c): every line ends with our newline, so none is read back,
 * and no descriptor or system call is needed.  Returns 0, or -1 with
 * errno ENOMEM and the log as it was.
 */
int	 joblog_vmem(char **buf, size_t *len, const char *fmt, va_list ap)
	    __attribute__((format(printf, 3, 0)));

/* joblog_vnote with its arguments inline. */
int	 joblog_lnote(int fd, off_t *end, bool others, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/*
 * Fill ji from the open log fd, and *end (if not NULL) with its size when
 * it is empty or ends with a newline, else -1 (see joblog_vnote).  Returns
 * 0, or -1 with errno set (EINVAL: not a regular file, which chute would
 * never have made).
 */
int	 joblog_fread(int fd, struct joblog_info *ji, off_t *end);

/*
 * Fill ji from log/ID.  A job that never ran has no log: that is attempts=0,
 * not an error.  Returns 0, or -1 with errno set.
 */
int	 joblog_read(struct spool *sp, const char *id, struct joblog_info *ji);

/* Scan a log's bytes for our lines; handler output in between is skipped. */
void	 joblog_parse(const char *buf, size_t len, struct joblog_info *ji);

/* log/.pool/: empty logs made ahead, so that a claim need not create one */
struct joblog_pool {
	pthread_mutex_t mu;		/* n, want, seq, fd: keeper.c fills */
	int	 dir;			/* log/.pool/; -1: no pool */
	bool	 linkable;		/* /proc/self/fd is there: spare logs */
	int	 want;			/* how many to keep ready */
	int	 n;			/* ready now: fd[0..n-1], unnamed */
	unsigned seq;			/* the next batch line's name */
	int	 fd[LOGPOOL_MAX];
	char	*note;			/* joblog_pool_link's line, in nNOTENAME */
	unsigned notename;
};
/*
 * Open (making it if need be) and empty log/.pool/.  Returns 0, or -1 with
 * errno set and no pool: claims then create their logs as they go.
 */
int	 joblog_pool_open(struct joblog_pool *p, struct spool *sp);

/*
 * Make empty logs until want are ready.  Returns 0, or -1 with errno set
 * (EOPNOTSUPP or EISDIR: the file system has no O_TMPFILE).  One caller
 * at a time (the keeper, or the owner that has none): only this adds to
 * the pool, so there is room for what it made.
 */
int	 joblog_pool_fill(struct joblog_pool *p, struct spool *sp);

/* Keep n logs ready from now on (at most LOGPOOL_MAX). */
void	 joblog_pool_want(struct joblog_pool *p, int n);

/*
 * Half the logs wanted are gone (and there is a pool to make them in)?
 * The keeper refills in batches: fewer wakes, and a reserve left while
 * it works.
 */
bool	 joblog_pool_short(struct joblog_pool *p);

/*
 * log/ID from the pool: one of its empty logs, linked without replacing
 * anything.  Returns the log, open for joblog_vnote and empty, or -1 with
 * errno set: EAGAIN, the pool is empty; EEXIST, log/ID exists (a job run
 * before), the pool keeps its file; anything else, that file is dropped.
 * The caller then opens log/ID with joblog_open.
 */
int	 joblog_pool_take(struct joblog_pool *p, struct spool *sp,
	    const char *id);

/*
 * Make log/ID another name of the file holding "@chute TIME text", made
 * in log/.pool/ the first time this text is asked for (until
 * joblog_pool_unnote).  forward gives every job of a batch the same line,
 * and so one inode instead of one each: on a file system that must search
 * for a free inode (ext4 without a journal, after many deletions), a
 * log's create costs more than the rest of the job's forwarding.
 * joblog_open gives a job its own copy before anything is appended.
 * Returns 0, or -1 with errno set (EEXIST: log/ID exists; ENOENT: no
 * pool): the caller then appends the line with joblog_note.
 */
int	 joblog_pool_link(struct joblog_pool *p, struct spool *sp,
	    const char *id, const char *text);

/* Forget the shared line of joblog_pool_link; the logs linked to it keep it. */
void	 joblog_pool_unnote(struct joblog_pool *p);

/*
 * Drop the spare logs and the batch line: nothing is left in log/.pool/
 * after a clean exit.  The keeper has ended (keeper_stop).
 */
void	 joblog_pool_close(struct joblog_pool *p);

#endif
