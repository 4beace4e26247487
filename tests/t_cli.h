/*
 * t_cli.h: the harness of the suites that drive the real binary (check_cli.c,
 * check_fault.c, check_hostile.c).  It runs $CHUTE_BIN in a fresh spool
 * under mkdtemp(3), keeps each command's output in files in the test's
 * directory, and waits for conditions with bounded polls that name what
 * they waited for.
 *
 * Check (fork mode) leaves a failing test with _exit(), skipping teardown,
 * so EXPECT() kills what the test started before it reports the failure,
 * and every process we spawn carries PR_SET_PDEATHSIG.  A failing test
 * keeps its directory for inspection; a passing one removes it.
 */
#ifndef T_CLI_H
#define T_CLI_H

#include <sys/types.h>

#include <check.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define T_MAXPROCS	256	/* processes one test may start (check_recurring restarts schedulers often) */
#define T_OUTMAX	(256 * 1024)
#define T_CMD_MS	20000	/* a plain command must finish within this */

/* A process the test started; its stdout (and usually stderr) goes to log. */
struct t_proc {
	pid_t	 pid;
	bool	 live;		/* not reaped yet */
	char	 log[PATH_MAX];
};

/* The running test, as t_cli_setup() made it. */
struct t_cli {
	const char	*bin;			/* $CHUTE_BIN, absolute */
	char		 root[1024];		/* the test's mkdtemp directory */
	char		 spool[1100];		/* root/spool, absolute */
	char		 out[T_OUTMAX];		/* last command's stdout */
	char		 err[T_OUTMAX];		/* last command's stderr */
};

extern struct t_cli T;

/* Fail the test, after stopping everything it started. */
#define EXPECT(cond, ...) do {						\
	if (!(cond)) {							\
		t_kill_all();						\
		fprintf(stderr, "check_cli: keeping %s\n", T.root);	\
		ck_abort_msg(__VA_ARGS__);				\
	}								\
} while (0)

/* Poll cond every few ms until it holds; fail with the message at the deadline. */
#define WAIT_UNTIL(cond, timeout_ms, ...) do {				\
	int64_t t_deadline_ = t_mono() + (timeout_ms);			\
	while (!(cond)) {						\
		EXPECT(t_mono() < t_deadline_, __VA_ARGS__);		\
		t_nap();						\
	}								\
} while (0)

/* ---- fixture ---- */

/*
 * Checked fixture: a fresh directory T.root under $TMPDIR (or /tmp) with
 * root/seen/ and a spool made by `chute init` at T.spool.  Fails the test
 * if CHUTE_BIN is not the absolute path of an executable.
 */
void	 t_cli_setup(void);
/* Stop everything the test started and remove T.root. */
void	 t_cli_teardown(void);
/* A test case with that fixture, whose tests may take timeout seconds. */
TCase	*t_tcase(SFun setup, SFun teardown, const char *name, int timeout);

/* ---- time ---- */

int64_t	 t_mono(void);		/* CLOCK_MONOTONIC, ms */
int64_t	 t_now(void);		/* CLOCK_REALTIME, ms since the epoch */
void	 t_nap(void);		/* 5 ms: one step of a poll */

/* ---- paths and files ---- */

/*
 * printf into one of a ring of 32 static buffers of PATH_MAX: good for a
 * few paths per statement, not for keeping.
 */
char	*P(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define SP(state, id)	P("%s/%s/%s", T.spool, (state), (id))
#define RP(name)	P("%s/%s", T.root, (name))

/* Create or truncate path with data; fails the test on error. */
void	 t_write(const char *path, const char *data);
/* The whole file as a malloc'd string, or NULL if it cannot be opened. */
char	*t_slurp(const char *path);
/* Does path exist (lstat: a dangling symlink does)? */
bool	 t_exists(const char *path);
/* Entries of T.spool/state whose names do not start with '.'; -1 if unreadable. */
int	 t_count_state(const char *state);
/* Entries of dir, dot files too (not . and ..); -1 if unreadable. */
int	 t_entries(const char *dir);
/* Name of the only non-dot entry in dir other than except, or NULL (static). */
char	*t_other_entry(const char *dir, const char *except);
/* Set path's atime and mtime (not following a symlink); fails the test on error. */
void	 t_set_mtime(const char *path, int64_t epoch_ms);
/* path's mtime in ms since the epoch; fails the test if path does not exist. */
int64_t	 t_mtime_ms(const char *path);
/* The submission protocol for writers without chute: tmp/NAME, then mv. */
void	 t_drop(const char *name, const char *content);
/* In how many state directories (tmp/ included) is id?  *state: the last. */
int	 t_where(const char *id, const char **state);

/* ---- text ---- */

/* Is tok a whitespace-delimited word of text (which may be NULL)? */
bool	 t_token(const char *text, const char *tok);
/* Does the decimal number n appear in text, not as part of a longer number? */
bool	 t_number_in(const char *text, long n);
/* Line n (0-based) of text, without its newline, or NULL (ring of 4 buffers). */
char	*t_line(const char *text, int n);
int	 t_nlines(const char *text);
/* The first line of text whose first word is word, or NULL. */
char	*t_line_of(const char *text, const char *word);
/* The last whitespace-delimited word of line. */
const char *t_last_word(const char *line);
/* Only [A-Za-z0-9._-], not empty, not starting with '.'? */
bool	 t_id_charset_ok(const char *id);
/* At most the first 1000 bytes of s, "(none)" for NULL: Check refuses messages over 4 KiB. */
const char *t_snip(const char *s);

/* ---- processes ---- */

/* The process this test started as pid, or NULL. */
struct t_proc *t_proc_of(pid_t pid);
/*
 * fork and exec argv with stdin from in (or /dev/null), stdout and stderr
 * appended to out and err (which may be the same path), in cwd if given.
 * The child dies with us (PR_SET_PDEATHSIG).
 */
pid_t	 t_spawn(const char *const argv[], const char *in, const char *out,
	    const char *err, const char *cwd);
/* The last 2000 bytes of a process's output, for failure messages (static). */
const char *t_log_of(pid_t pid);
/* How many times text occurs in the whole of a process's output. */
int	 t_log_count(pid_t pid, const char *text);
/* 0 while our child pid runs; otherwise 1, reaping it into *code (128+sig). */
int	 t_poll_exit(pid_t pid, int *code);
/* Wait up to timeout_ms for our child pid to exit; its exit code (128+sig). */
int	 t_reap(pid_t pid, int timeout_ms, const char *what);
/* Does pid exist and is it not a zombie?  (Works for non-children.) */
bool	 t_alive(pid_t pid);
/* pid's process title (setproctitle), NULs as spaces; "" if gone. */
const char *t_title(pid_t pid);
/* Up to max pids a handler recorded, one a line, in T.root/name; how many. */
int	 t_read_pids(const char *name, pid_t *pids, int max);
/*
 * Stop everything the test started: our children (owners, waits), then the
 * handlers they left (those that record their pid in root/hpids; each stops
 * once root/release exists).
 */
void	 t_kill_all(void);

/* ---- chute ---- */

/* Run $CHUTE_BIN with the NULL-terminated arguments; output into T.out and T.err. */
int	 t_chute(const char *in, const char *first, ...) __attribute__((sentinel));
/* The same with stdout a terminal of its own (a pty): T.out as it showed. */
int	 t_chute_tty(const char *first, ...) __attribute__((sentinel));
/* Start `chute run SPOOLARG ARGS...` in the background, in cwd if given. */
pid_t	 t_owner(const char *cwd, const char *spoolarg, const char *first, ...)
	    __attribute__((sentinel));

/* chute ARGS... with stdin from /dev/null or from a file; its exit code. */
#define CHUTE(...)		t_chute(NULL, __VA_ARGS__, (const char *)NULL)
#define CHUTE_IN(in, ...)	t_chute((in), __VA_ARGS__, (const char *)NULL)

#define OWNER(...)	t_owner(NULL, T.spool, __VA_ARGS__, (const char *)NULL)

/* Short backoff and grace, so retries and shutdowns take milliseconds. */
#define QUICK	"--backoff", "50ms:200ms", "--grace", "500ms"

/* Run an owner with --drain and return its exit code; it must finish in time. */
#define DRAIN(...)	t_reap(OWNER("--drain", __VA_ARGS__), 30000, "chute run --drain")

/* SIGTERM an owner; it must exit within 10 s.  Its exit code. */
int	 t_stop(pid_t pid);
/* Does /proc/locks show a flock on the spool directory held by pid? */
bool	 t_lock_held_by(pid_t pid);
/* Wait until owner pid holds the spool's lock; fail at once if it exits. */
void	 t_await_lock(pid_t pid, int timeout_ms);
/* chute wait --timeout for one job; fails if it times out.  0 done, 1 failed. */
int	 t_await(const char *id, int timeout_ms);
/* Submit content on stdin under --id; fails the test unless it exits 0 and prints id. */
void	 t_submit_as(const char *id, const char *content);
/* `chute status SPOOL id` must succeed; its line for id (static). */
char	*t_status(const char *id);

/* Assert the status line of id says state and attempts=n. */
#define EXPECT_STATUS(id, state, n) do {				\
	char *st_ = t_status(id);					\
	char att_[32];							\
	snprintf(att_, sizeof att_, "attempts=%d", (n));		\
	EXPECT(t_token(st_, (state)) && t_token(st_, att_),		\
	    "status of %s: expected '%s %s', got '%s'", (id), (state),	\
	    att_, st_);							\
} while (0)

/* ---- handlers, and their journal: one "ID ATTEMPT [more]" line per start ---- */

/* Start lines for id in T.root/journal. */
int	 t_journal_count(const char *id);
/* Is there a start line for attempt of id? */
bool	 t_journal_has(const char *id, int attempt);
/* Start lines in all. */
int	 t_journal_total(void);
/* Write an executable /bin/sh handler into T.root; R is T.root in body.  Its path. */
const char *t_handler(const char *name, const char *body);
/* Records "ID ATTEMPT" and keeps a copy of what it read on stdin in seen/ID. */
const char *h_journal(void);
/* Records its start and pid, then blocks until root/release exists (30 s at most: exit 99). */
const char *h_block(void);
/* The pid h_block recorded for id, from its journal line; 0 if none. */
pid_t	 t_handler_pid(const char *id);
/* Let every h_block handler finish: create root/release. */
void	 t_release(void);

/*
 * --inline's hostile payloads, the same on a spool (check_cli.c) and a
 * queue (check_pgsql.c).  A job's bytes follow from a word in its ID:
 * nul (NULs, LFs and TABs, and a line that reads as a frame's head),
 * empty (none), big (1 MiB and 7 bytes: more than a pipe holds, NULs
 * among them), else "x\n".  t_inline_worker() reads each job by how its
 * ID starts: half reads half of it and answers, early answers before
 * reading any, each then stopping itself (SIGSTOP: it reads on no
 * further); die reads half and exits 3; any other copies it whole to
 * root/got.ID.  It notes "ID LENGTH" per job in root/wj, its pid per
 * start in root/wpids, and, under $RUNTIME_DIRECTORY, how many local
 * files there are while it holds a job in root/local.ID.
 */
size_t	 t_inline_payload(const char *id, char **body);
/* Submit id, with its payload, into store (a spool or a URI). */
void	 t_inline_submit(const char *store, const char *id);
/* Did the worker get id's payload whole, byte for byte? */
bool	 t_inline_received(const char *id);
const char *t_inline_worker(void);
/*
 * The hostile jobs, submitted into store; then, once the owner (its
 * journal) has drained them with --max-attempts 2, what each must
 * have become, the same on both stores; with local, that the workers
 * found no file under $RUNTIME_DIRECTORY while they held a job.
 */
void	 t_inline_submit_all(const char *store);
void	 t_inline_expect(const char *store, pid_t owner, bool local);

/* ---- other users: a group spool as it is deployed ---- */

#define T_SUBS	"chute-t-subs"	/* the submitters' group; owner: chute-t-own */

/*
 * Make (once per machine) the group chute-t-subs and the users
 * chute-t-own, chute-t-eve and chute-t-bob in it.  False, after one line
 * saying why, where that cannot be done (not root, no useradd): the
 * caller skips.
 */
bool	 t_users(void);
uid_t	 t_uid(const char *who);
gid_t	 t_subs_gid(void);
/* T.spool again, by `chute init --group`, owned by chute-t-own. */
void	 t_group_spool(void);
/* t_spawn as user who, with chute-t-subs as its only group. */
pid_t	 t_spawn_as(const char *who, const char *const argv[], const char *in,
	    const char *out, const char *err, const char *cwd);
/* `chute run T.spool ARGS...` as who (NULL-terminated arguments). */
pid_t	 t_owner_as(const char *who, const char *first, ...)
	    __attribute__((sentinel));
#define OWNER_AS(who, ...)	t_owner_as((who), __VA_ARGS__, (const char *)NULL)
/* sh -c script as who, in T.spool; its exit code. */
int	 t_sh_as(const char *who, int timeout_ms, const char *script);

#endif
