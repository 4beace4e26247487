/*
 * page.h: a store's jobs a page at a time, as the dashboard shows them
 * (queue/store.h's page, page_job, page_failures, page_matching): a page
 * of one state in the order of `chute ls` after a cursor, one job with the
 * end of its log, the failures grouped by reason.  Every part has a fixed
 * size, and every read is bounded (PAGE_SCAN_MAX).
 */
#ifndef QUEUE_PAGE_H
#define QUEUE_PAGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/sched.h"

#define PAGE_ROWS_MAX	200	/* rows of a page, at most */
#define PAGE_SCAN_MAX	200000	/* names of a spool's directory read per page, at most */
#define PAGE_LOG_MAX	65536	/* bytes of a job's log shown: its end */
#define PAGE_FAIL_READ	1000	/* failures grouped by reason: the newest */
#define PAGE_GROUPS	50	/* reasons shown, at most */
#define PAGE_ID_LEN	(NAME_MAX + 1)	/* a spool's names are IDs too */

/* A page of jobs in one state, in the order of `chute ls`. */
struct page_query {
	int	 state;			/* ST_NEW ... ST_FAILED */
	char	 prefix[PAGE_ID_LEN];	/* IDs starting with it; "" all */
	char	 reason[160];		/* failed: this last outcome; "" any */
	bool	 after;			/* rows after (after_us, after_id) only */
	int64_t	 after_us;
	char	 after_id[PAGE_ID_LEN];
	int	 rows;
};

struct page_row {
	char	 id[PAGE_ID_LEN];
	int64_t	 us;			/* the sort key: mtime, run_at (µs) */
	int	 attempts;
	char	 last[160];
};

struct page_list {
	struct page_row	 v[PAGE_ROWS_MAX + 1];	/* one more: is there a next page? */
	int		 n;
	bool		 more;		/* a next page exists */
	bool		 cut;		/* the scan stopped at PAGE_SCAN_MAX */
	long long	 seen;		/* names read (a spool) */
};

struct page_job {
	char		 id[PAGE_ID_LEN];
	int		 state;
	int		 attempts;
	char		 last[160];
	char		 worker[160];	/* who runs it; "" none */
	int		 prio;		/* PRIO_DEFAULT (0) unless given */
	char		 key[KEY_MAX + 1];	/* "" none */
	long long	 size;		/* the payload's bytes */
	int64_t		 us;		/* mtime / run_at */
	char		*log;		/* malloc'd: its last PAGE_LOG_MAX bytes */
	size_t		 loglen;
	long long	 logsize;	/* the whole log's; -1 none */
	char		 unique[KEY_MAX + 1];	/* its unique key; "" none */
	/* What it waits (or waited) for, as status says it; "" none. */
	char		 after[700];
};

struct page_group {
	char		 reason[160];
	long long	 n;
	char		 id[PAGE_ID_LEN];	/* the newest of them */
	int64_t		 us;
};

struct page_failures {
	struct page_group v[PAGE_GROUPS];
	int		 n;
	long long	 read;		/* failed jobs grouped: the newest */
	long long	 total;		/* failed jobs in all */
	bool		 cut;		/* ... at least: a spool read PAGE_SCAN_MAX */
	long long	 other;		/* of those read, in groups not shown */
};

#endif
