/*
 * torture.h: what the two modes of the crash torture share.  torture.c has
 * the program's main, the spool mode and the common parts below (children,
 * submitters, the handlers' journal and the rules that judge it, the
 * violations); torture_pg.c has --pgsql, the same against a fleet of
 * workers on a throwaway PostgreSQL cluster.
 */
#ifndef TORTURE_H
#define TORTURE_H

#include <sys/types.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define MAX_ATTEMPTS	5	/* chute run's default --max-attempts */
#define NSUBMITTERS	3	/* submitter processes started per round */
#define MAX_LIVE_SUBS	9	/* wait for old submitters beyond this */
#define MAX_BACKLOG	300	/* no submitters while more jobs wait */
#define MAX_KIDS	256
#define DRAIN_MS	120000	/* the final drain must finish within this, */
#define DRAIN_JOB_MS	100	/* plus this per job still queued when it starts */
#define ORPHAN_MS	30000	/* ... and the handlers it left, within this */
#define KILL_WAIT_MS	10000	/* a SIGKILLed process must be gone by then */
#define CMD_MS		30000	/* chute submit, init, status; psql */
#define SHOW_MAX	200	/* violation lines printed */

struct torture_cfg {
	int		 rounds;
	char		*chute;		/* an argv[0]: not const */
	uint64_t	 seed;
	bool		 flaky, keep, pgsql;
	bool		 freeze;	/* --pgsql: SIGSTOP workers past their lease */
	bool		 keys;		/* --pgsql: jobs with keys, priorities, limits */
};

extern struct torture_cfg cfg;
extern char work[PATH_MAX];
extern char *target;			/* what chute submit is given */
extern char spool[PATH_MAX + 16];	/* the spool; --pgsql: forward's */
extern pid_t main_pid;
extern volatile sig_atomic_t stop_sig;
extern sigset_t chld_set;
extern uint64_t rng;
extern int ino;				/* inotify: see wait_until() */

/* What both modes count. */
extern struct tally {
	int	 orphans_reaped;
	long	 runs, ends;		/* START and END lines read */
} tally;

/* The handler's --flaky choice, from the ID's hash h and attempt a. */
extern const char flaky_modes[];

int64_t	 mono_ms(void);
void	 nap_us(long);
uint64_t rng_next(uint64_t *);
unsigned rnd(uint64_t *, unsigned);
void	 die(const char *, ...) __attribute__((noreturn, format(printf, 1, 2)));
char	*path(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 append_line(const char *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
char	*slurp(const char *, size_t *);
void	 violation(const char *, ...) __attribute__((format(printf, 1, 2)));
int	 violations(void);
void	 print_violations(const char *);

/* ---- children: everything we start is tracked and reaped ---- */

enum kind { K_OWNER, K_SUBMITTER, K_CMD, K_WORKER, K_SERVER };

struct kid {
	pid_t		 pid;
	enum kind	 kind;
	bool		 done;
	int		 status;
	int		 round;
};

/* A command run as another user (the database server's), in dir. */
struct runas {
	uid_t		 uid;
	gid_t		 gid;
	const gid_t	*groups;
	int		 ngroups;
	const char	*dir;
};

struct kid *kid_add(pid_t, enum kind, int);
pid_t	 spawn_logged(char *const [], const char *, const char *);
void	 reap(void);
void	 wait_chld(int64_t);
bool	 kid_wait(struct kid *, int64_t, bool);
void	 kid_forget(struct kid *);
char	*describe(int, char *, size_t);
void	 child_setup(void);
int	 capture(char *const[], int, char **, const char *, int64_t);
int	 capture_as(char *const[], int, char **, const char *, int64_t,
	    const struct runas *);
bool	 wait_until(bool (*)(const void *), const void *, struct kid *,
	    int64_t);
bool	 run_started(const void *);
bool	 run_ended(const void *);
bool	 submitted(const void *);

/* ---- submitters ---- */

void	 subs_start(int, int);
void	 subs_unique_start(int);
int	 subs_live(void);
void	 subs_wait_all(int64_t);

/* ---- the job table and the journal ---- */

struct job {
	char	*id;
	char	 method;		/* 'c', 'd' (--delay), 'm' (tmp+mv), '?'
					   (a failed --id: maybe); 0: not accepted */
	unsigned dirs;			/* spool: bit per state directory it is in */
	int	 attempts;		/* from chute status; -1: unknown */
	int	 first, last;		/* its runs, in START order; -1: none */
	int	 rows;			/* --pgsql: its rows in chute.jobs, */
	char	 state[8];		/* ... the state of the last, */
	char	*why;			/* ... and its column last */
};

struct run {
	int	 job, attempt, next;
	long	 pid, ppid;		/* ppid: the worker (--pgsql), else 0 */
	int64_t	 start_ns, end_ns;
	long	 sline, eline;		/* journal line numbers; eline 0: no END */
	int	 code;
	bool	 busy;
	int	 claim;			/* --pgsql: its claim, -1: none found */
	int64_t	 launch_us;		/* --pgsql: when its worker said it
					   started it (wall clock); 0: unknown */
};

extern struct job *jobs;
extern int njobs;
extern struct run *runs;
extern long nruns;
extern int unknown_allowed;		/* jobs a failed submit may have left */

int	 job_get(const char *, bool);
void	 journal_poll(void);
bool	 handler_alive(long, const char *);
void	 load_submissions(void);
void	 load_errors(void);
void	 check_runs(struct job *, bool);
void	 setup_common(void);
int	 untracked_children(void);
bool	 proc_stat(long, char *, long *);
int	 proc_children(long);
void	 rm_tree(const char *);

/* torture_pg.c: the --pgsql mode, from after parse_args to the exit status. */
int	 torture_pg(void);

#endif
