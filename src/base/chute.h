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

/* ---- the owner's delays and limits, all in one place ---- */
#define RECHECK_MS	1000	/* a writer still busy, an orphan still running */
#define RETRY_MS	5000	/* an I/O error: try the same step again */
#define RESCAN_MS	60000	/* the safety rescan of new/ and defer/ */
#define SYNC_DELAY_MS	20	/* group commit: longest a finished job waits for fsync */
#define SYNC_CHECK_MS	5	/* how soon the owner looks whether the keeper's fsync ended */
#define SYNC_SLOW_MS	10000	/* an fsync this long is said in the journal */
#define SETTLE_MS	2000	/* no lease: a file untouched this long is complete */
#define STALE_TMP_SECS	(36 * 3600)	/* tmp/ files older than this are removed */
#define RESTART_MIN_MS	250	/* a persistent worker that died young: first delay */
#define RESTART_MAX_MS	60000	/* ... doubling each time, up to this */
#define YOUNG_MS	1000	/* a worker dying younger than this backs off */
#define WINDOW		65536	/* most names of new/ held in memory */
#define SCAN_CHUNK	4096	/* names of new/ read per loop iteration */
#define LOGPOOL_MAX	16	/* empty logs made ahead in log/.pool/, at most */
#define LOGPOOL_MIN	8	/* ... at least: a reserve for creates slowed by a purge */
/* forward's log line for a job that kept its ID: "forwarded to Q at URI " FWD_SAME_ID */
#define FWD_SAME_ID	"under the same ID"
#define NOTIFY_WAIT_MS	250	/* longest wait on systemd's full notify queue */
#define NOTIFY_STATUS_MS 1000	/* at most one STATUS= to systemd this often */

/* ---- util.c ---- */
typedef int64_t msec_t;		/* milliseconds; durations and deadlines */

int	 dur_parse(const char *, msec_t *);
void	 dur_format(msec_t, char *, size_t);
msec_t	 now_ms(void);			/* CLOCK_REALTIME */
msec_t	 mono_ms(void);			/* CLOCK_MONOTONIC */
void	 iso_time(msec_t, char *, size_t);	/* 2026-11-30T04:09:40.123Z */
ssize_t	 write_all(int, const void *, size_t);
ssize_t	 read_full(int, void *, size_t);
void	 vis_name(const char *, char *, size_t);
const char *vis_id(const char *);
void	 vis_text(const char *, char *, size_t);
void	 say(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 say_buffer(bool);
void	 say_flush(void);
void	 progress(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 progress_clear(void);
bool	 progress_wanted(void);
int	 say_facility(const char *);
void	 say_syslog(int);
int	 say_priority(const char *);
msec_t	 backoff_delay(msec_t, msec_t, int, uint32_t (*)(uint32_t));

/* ---- notify.c: sd_notify(3)'s protocol, without libsystemd ---- */
void	 notify_init(void);
void	 notify_close(void);
bool	 notify_on(void);
void	 notify_send(const char *);
void	 notify_status(const char *);
msec_t	 notify_tick(msec_t);

/* ---- id.c ---- */
#define ID_GEN_LEN	96
int	 id_valid(const char *);
void	 id_generate(char *, size_t);
void	 id_suffix(char *, size_t);
void	 id_derive(const char *, char *, size_t);

/* ---- spool.c ---- */
enum state { ST_TMP, ST_NEW, ST_CUR, ST_DEFER, ST_DONE, ST_FAILED, ST_LOG, ST_NDIRS };
#define ST_NONE	(-1)

struct spool {
	char	*path;			/* absolute */
	int	 root;			/* O_DIRECTORY fd of the spool root */
	int	 dir[ST_NDIRS];		/* one O_DIRECTORY fd per state dir */
	unsigned dirty;			/* dirs renamed into since spool_sync */
	mode_t	 fmode[ST_NDIRS];	/* spool_fmode's answers; 0: not asked */
};

extern const char *const state_names[ST_NDIRS];

int	 spool_init(const char *, const char *);
int	 spool_open(struct spool *, const char *);
mode_t	 spool_fmode(struct spool *, int);
void	 spool_close(struct spool *);
int	 state_from_name(const char *);
int	 spool_locate(struct spool *, const char *, struct stat *);
bool	 spool_fs_trusted(long, const char **);
int	 spool_check_fs(struct spool *, const char **);
int	 spool_fsync_dir(struct spool *, int);
int	 spool_sync(struct spool *);
char	*spool_jobpath(struct spool *, int, const char *);
int	 spool_scan(struct spool *, int, int (*)(void *, const char *), void *);
bool	 spool_empty(struct spool *, int);

/* ---- joblog.c ---- */
struct joblog_info {
	int	 attempts;		/* counted attempts since the last reset */
	char	 last[64];		/* outcome of the last finished attempt */
};
int	 joblog_open(struct spool *, const char *);
int	 joblog_note(struct spool *, const char *, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
int	 joblog_fnote(int, const char *, ...) __attribute__((format(printf, 2, 3)));
int	 joblog_vnote(int, off_t *, bool, const char *, va_list)
	    __attribute__((format(printf, 4, 0)));
int	 joblog_vmem(char **, size_t *, const char *, va_list)
	    __attribute__((format(printf, 3, 0)));
int	 joblog_lnote(int, off_t *, bool, const char *, ...)
	    __attribute__((format(printf, 4, 5)));
int	 joblog_fread(int, struct joblog_info *, off_t *);
int	 joblog_read(struct spool *, const char *, struct joblog_info *);
void	 joblog_parse(const char *, size_t, struct joblog_info *);

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
int	 joblog_pool_open(struct joblog_pool *, struct spool *);
int	 joblog_pool_fill(struct joblog_pool *, struct spool *);
void	 joblog_pool_want(struct joblog_pool *, int);
bool	 joblog_pool_short(struct joblog_pool *);
int	 joblog_pool_take(struct joblog_pool *, struct spool *, const char *);
int	 joblog_pool_link(struct joblog_pool *, struct spool *, const char *,
	    const char *);
void	 joblog_pool_unnote(struct joblog_pool *);
void	 joblog_pool_close(struct joblog_pool *);

/* ---- state.c: the only code that renames a job ---- */
int	 state_submit(struct spool *, int, const char *, msec_t, int *);
int	 state_claim(struct spool *, const char *);
int	 state_unsubmit(struct spool *, const char *, int);
int	 state_finish(struct spool *, const char *, int, int, msec_t);
int	 state_settle(struct spool *, const char *, int, int, msec_t);
int	 state_promote(struct spool *, const char *);
int	 state_reject(struct spool *, const char *);
int	 state_requeue(struct spool *, const char *);
int	 state_cancel(struct spool *, const char *, int *);
int	 state_retry(struct spool *, const char *);
int	 state_rename_new(struct spool *, const char *, char *, size_t);
int	 state_aside(struct spool *, int, const char *, char *, size_t);
int	 state_leave(struct spool *, const char *, int, int, msec_t, char *,
	    size_t);

/* ---- lock.c ---- */
int	 lock_take(struct spool *);
int	 lock_wait(struct spool *);
pid_t	 lock_owner(struct spool *);
pid_t	 lock_parse_pid(const char *, size_t);
pid_t	 lock_parse_line(const char *, unsigned, unsigned, unsigned long);
int	 lock_write_pid(struct spool *);

/* ---- nameq.c: an ordered set of names (the ready jobs in new/, oldest first) ---- */
struct nameq;
struct nameq *nameq_new(void);
void	 nameq_free(struct nameq *);
int	 nameq_add(struct nameq *, const char *, int64_t, unsigned);
bool	 nameq_has(struct nameq *, const char *);
bool	 nameq_key(struct nameq *, const char *, int64_t *);
int	 nameq_pop(struct nameq *, char *, size_t, unsigned *);
bool	 nameq_take(struct nameq *, const char *, unsigned *);
int64_t	 nameq_min_key(struct nameq *);
int64_t	 nameq_max_key(struct nameq *);
int64_t	 nameq_drop_max(struct nameq *);
size_t	 nameq_len(struct nameq *);

/* ---- watch.c ---- */
enum watch_kind { W_ARRIVED, W_CREATED, W_WRITTEN, W_LEFT, W_OVERFLOW, W_GONE };
struct watch_event {
	int		 state;		/* ST_NEW, ST_CUR, ST_DEFER, ... */
	enum watch_kind	 kind;
	const char	*name;
};
struct watch;
struct watch *watch_open(struct spool *, const int *, int);
int	 watch_fd(struct watch *);
int	 watch_read(struct watch *, void (*)(void *, const struct watch_event *), void *);
int	 watch_decode(struct watch *, const char *, size_t,
	    void (*)(void *, const struct watch_event *), void *);
void	 watch_close(struct watch *);

/* ---- owner.c: run_main; cmd_run.c: run_parse_args ---- */
struct run_opts {
	int	 jobs;
	msec_t	 timeout;		/* 0: none */
	msec_t	 grace;
	int	 max_attempts;
	msec_t	 backoff_base, backoff_cap;
	bool	 drain, wait_lock;
	bool	 if_unowned;		/* owned by another: exit 0, silently */
	int	 syslog;		/* --syslog's facility; -1: stderr */
	bool	 persistent;		/* long-lived workers, line protocol */
	char	**argv;			/* the handler */
	char	 *path;			/* argv[0] resolved on PATH, once */
};
int	 run_main(const char *, const struct run_opts *);
int	 run_parse_args(int, char **, struct run_opts *, const char **);

/* ---- ready.c: is a file in new/ complete? ---- */
enum ready {
	READY_YES,	/* complete; *fdp is the open, flocked job file */
	READY_WRITER,	/* a process still has it open for writing */
	READY_SETTLE,	/* no lease possible and modified < SETTLE_MS ago */
	READY_BUSY,	/* a handler from an earlier owner holds its lock */
	READY_GONE,	/* vanished: someone else moved it */
	READY_NOTREG,	/* not a regular file: never opened, never followed */
	READY_DENIED,	/* the owner may not read it (a group spool's umask) */
	READY_LINKED,	/* other hard links than its tmp/ name: refused */
	READY_ERR,
};
#define RF_MOVED	0x1	/* arrived by rename: complete by protocol */
#define RF_CLOSED	0x2	/* a writer was seen closing it */
#define RF_TMPLINK	0x4	/* still linked as tmp/NAME: link-style submitter */
#define RF_REG		0x8	/* a regular file when admitted (spoolq_admit) */
#define RF_PEEK		0x10	/* read by us, run by no handler: not locked */
enum ready ready_check(struct spool *, const char *, unsigned, int *, struct stat *);
enum ready ready_checkb(struct spool *, const char *, unsigned, int *, struct stat *,
	    struct timespec *);
enum ready ready_fallback(const struct stat *, unsigned, msec_t);

/* ---- spawn.c ---- */
#define SPAWN_MAXFDS	4
void	 spawn_ignore(int);
char	*spawn_which(const char *);
char	**spawn_env(char *const [], int);
pid_t	 spawn_exec(const char *, char *const [], char *const [], const int [], int,
	    bool);

/* ---- cmd_*.c ---- */
int	 cmd_init(int, char **);
int	 cmd_submit(int, char **);
int	 cmd_run(int, char **);
int	 cmd_status(int, char **);
int	 cmd_wait(int, char **);
int	 cmd_cancel(int, char **);
int	 cmd_retry(int, char **);
int	 cmd_ls(int, char **);
int	 cmd_stats(int, char **);
int	 cmd_log(int, char **);
int	 cmd_purge(int, char **);
int	 cmd_top(int, char **);		/* cmd_top.c: chute's alone, with ncurses */
#define CHUTE_VERSION	"0.1.0"
struct cmd {
	const char	*name;
	int		(*fn)(int, char **);	/* argv[0] is the name */
	const char	*args;			/* usage, after "chute NAME " */
};
void	 cmd_register(const struct cmd *, size_t);
const struct cmd *cmd_find(const char *);
void	 cmd_usage_all(FILE *);
int	 usage_error(const char *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	 open_spool_or_exit(struct spool *, const char *);
int	 check_ids(int, char **, const char *);
int	 cmd_each_id(int, char **, int (*)(struct spool *, const char *));
int	 cmd_flush_stdout(int);
int	 cmd_write_log(const char *, size_t);
int	 cmd_help(const char *);
int	 cmd_check_args(const struct cmd *, int, char **);
bool	 cmd_wants_pgsql(int, char **);
int	 cmd_exec_pgsql(char **);

/* pump.c: pipes read into files, each kept to a cap, by a thread of its own */
struct pumps;
struct pumps *pumps_new(size_t);
int	 pumps_add(struct pumps *, const void *, int);
int	 pumps_drain(struct pumps *, const void *);
void	 pumps_drop(struct pumps *, const void *);
void	 pumps_free(struct pumps *);

#endif
