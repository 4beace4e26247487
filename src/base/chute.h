/*
 * chute: a Maildir-style spool processor.  The file system is the store: a
 * job is a file, its state is the directory that holds it, and every move is
 * one rename(2).  spool-layout.md describes the format this code keeps.
 */
#ifndef CHUTE_H
#define CHUTE_H

#include <sys/types.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* sysexits(3) codes chute uses, plus wait's 124 (timeout(1) convention). */
#define EXIT_NO		1	/* a job-level "no": unknown, failed, exists */
#define EX_USAGE	64
#define EX_NOINPUT	66
#define EX_UNAVAILABLE	69	/* chute-pgsql is not installed */
#define EX_SOFTWARE	70
#define EX_IOERR	74
#define EX_TEMPFAIL	75
#define EX_NOPERM	77	/* the database refused our credentials */
#define EX_CONFIG	78	/* spool on a file system flock cannot trust */
#define EXIT_TIMEOUT	124

#define ID_MAX		200	/* longest ID accepted on a command line */

/* --version, and what a worker of the fleet records of itself. */
#define CHUTE_VERSION	"0.1.0"

/* ---- the owner's delays and limits, all in one place ---- */
#define RECHECK_MS	1000	/* a writer still busy, an orphan still running */
#define RETRY_MS	5000	/* an I/O error: try the same step again */
#define RESCAN_MS	60000	/* the safety rescan of new/ and defer/ */
#define SYNC_DELAY_MS	20	/* group commit: longest a finished job waits for fsync */
#define SYNC_CHECK_MS	5	/* how soon the owner looks whether the keeper's fsync ended */
#define SYNC_SLOW_MS	10000	/* an fsync this long is said in the journal */
#define QUIET_MS	2000	/* no lease: a file untouched this long is complete */
#define HELD_MS		5000	/* a job file in new/ flocked this long is said held */
#define SHARED_LOCK_MS	1000	/* longest wait for a shared log's flock (joblog.c) */
#define STALE_TMP_SECS	(36 * 3600)	/* tmp/ files older than this are removed */
#define RESTART_MIN_MS	250	/* a persistent worker that died young: first delay */
#define RESTART_MAX_MS	60000	/* ... doubling each time, up to this */
#define YOUNG_MS	1000	/* a worker dying younger than this backs off */
#define WINDOW		65536	/* most names of new/ held in memory */
#define SCAN_CHUNK	4096	/* names of new/ read per loop iteration */
#define RETAIN_CHUNK	256	/* names of done/, failed/ looked at per turn */
#define RETAIN_MIN_MS	250	/* retention passes: at most this often... */
#define RETAIN_MAX_MS	60000	/* ...at least this often (an eighth of it) */
#define RETAIN_LAST_STEPS 64	/* a stopping owner's last pass, at most (kept 0) */
#define LOGPOOL_MAX	16	/* empty logs made ahead in log/.pool/, at most */
#define LOGPOOL_MIN	8	/* ... at least: a reserve for creates slowed by a purge */
/* forward's log line for a job that kept its ID: "forwarded to Q at URI " FWD_SAME_ID */
#define FWD_SAME_ID	"under the same ID"
#define NOTIFY_WAIT_MS	250	/* longest wait on systemd's full notify queue */
#define NOTIFY_STATUS_MS 1000	/* at most one STATUS= to systemd this often */

#endif
