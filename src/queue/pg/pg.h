/*
 * pg.h: chute-pgsql, the PostgreSQL side of chute: a queue in a database
 * that a fleet of workers on many hosts claims from.  A separate program
 * (chute execs it for a postgresql:// URI) so that a host running only
 * spools needs no libpq.  fleet.md is this part's spool-layout.md: the
 * schema, every statement, and what a crash at each step leaves behind.
 */
#ifndef PG_H
#define PG_H

#include <stdint.h>
#include <libpq-fe.h>
#include "base/util.h"
#include "queue/queue.h"

#define PG_SCHEMA_VERSION	13		/* 2: jobs forwarded from spools; 3: IDs checked;
					   4: workers, paused queues, claim times;
					   5: finished jobs in a table of their own;
					   6: names compared as bytes (COLLATE "C");
					   7: a job's times finite;
					   8: priorities, keys, limits; 9: retention;
					   10: unique keys;
					   11: recurring jobs (schedules, ticks);
					   12: dependencies;
					   13: a running job's cancel holds
					   its dependents until its handler
					   ended */
/* pg_schema_sched.c: the schema's versions 8 to 13, run by chute init. */
extern const char pg_schema8[], pg_schema9[], pg_schema10[], pg_schema11[],
	    pg_schema12[], pg_schema13[];

/* What a row keeps when it moves from chute.live to chute.finished. */
#define PG_FINISHED_COLS	"queue, id, state, run_at, attempts, last, size, created," \
	" claimed, priority, key"
/*
 * Appended to an INSERT of a job's end into chute.finished: a row there
 * that already holds the job's (queue, id) was not put there by chute (a
 * job is in one table at a time; its payload's key keeps its ID unique),
 * and must not make the end fail, which failed the whole batch with it,
 * every time (issue 35).  The job's end replaces that row, its last
 * saying so (PG_STRAY_WHY), and the statement's reply tells the worker.
 */
#define PG_STRAY_WHY		"; replaced a stray row of chute.finished that held its ID"
#define PG_FINISHED_STRAY	" ON CONFLICT (queue, id) DO UPDATE SET" \
	" state = excluded.state, run_at = excluded.run_at," \
	" attempts = excluded.attempts, last = excluded.last || '" \
	PG_STRAY_WHY "', size = excluded.size, created = excluded.created," \
	" claimed = excluded.claimed, log = excluded.log," \
	" priority = excluded.priority, key = excluded.key"
/*
 * A row of chute.logs is new to the table: its seq comes from the
 * table's sequence.  A row already holding the (queue, id, seq) a log
 * about to be written draws was planted ahead of the sequence (by a role
 * that shares ours), and made the statement fail, a worker's whole
 * outcome batch with it, once for each value planted.  The log written
 * replaces it.
 */
#define PG_LOGS_STRAY		" ON CONFLICT (queue, id, seq) DO UPDATE SET" \
	" body = excluded.body"
#define PG_LOG_LAST_SEQ		"9223372036854775807"	/* chute.job_logs: the last attempt's */
#define PG_CHANNEL		"chute"		/* LISTEN/NOTIFY */
#define PG_MAX_JOB		(64LL << 20)	/* largest job accepted */
#define PG_LOG_CAP		(1 << 20)	/* log bytes kept per attempt */
#define PG_CONNECT_SECS		5		/* connect_timeout */
#define PG_STATEMENT_MS		10000		/* statement_timeout */
#define PG_RECONNECT_MIN_MS	100		/* backoff after a lost connection */
#define PG_RECONNECT_MAX_MS	5000
#define PG_POLL_MS		1000		/* --poll default: the safety poll under LISTEN */
#define PG_REAP_MS		60000		/* gone workers' rows: looked for this often */
#define PG_COUNT_MAX		10000		/* a title's count: at most */
#define PG_LEASE_MS		30000		/* --lease default */
/*
 * A chute.workers row's lease (w: "" or the table's alias and a dot) as an
 * interval, bounded as --lease is (0 to 100 years): every worker's role
 * writes that table, and one row's lease_ms past what an interval holds
 * made each statement that reads it fail ("interval out of range"): the
 * workers' recovery, chute workers, stats and top.
 */
#define PG_WORKER_LEASE(w)	"(greatest(0, least(" w "lease_ms, " \
	"3153600000000)) * interval '1 millisecond')"
/*
 * A job's time t as the readers subtract it from now() or count it in
 * ms: an infinity (past version 7's checks: the shared role may drop
 * them) is read as a thousand years away, either way, so that one row
 * cannot fail a listing of its whole queue ("cannot subtract infinite
 * timestamps", "bigint out of range"); NULL stays NULL.
 */
#define PG_NEAR(t)	"(CASE WHEN NOT isfinite(" t ") THEN now() + CASE" \
	" WHEN " t " > now() THEN 1 ELSE -1 END * interval '1000 years'" \
	" ELSE " t " END)"
#define PG_PREFETCH		256		/* --prefetch default */
#define PG_PREFETCH_MAX		10000
#define PG_PREFETCH_MS		100		/* work claimed ahead, at most */

#define PG_GROUP_MS		20		/* outcomes wait for company, at most */
#define PG_GROUP_MAX		1000		/* ... or until this many wait */
#define PG_PREPARED		16		/* statements a connection prepares */
#define PG_SWEEP_ROWS		500		/* finished jobs a retention sweep removes */
#define PG_SWEEP_ROWS_S		"500"
#define PG_SWEEP_MIN_MS		1000		/* retention sweeps: at most this often... */
#define PG_SWEEP_MAX_MS		60000		/* ...at least this often (an eighth of it) */
#define PG_READ_ONLY		"25006"		/* a standby's refusal to write */
#define PG_UNIQUE_VIOLATION	"23505"	/* SQLSTATE unique_violation */

/* Type OIDs of the binary array parameters (pg_arr). */
#define PG_OID_TEXT		25
#define PG_OID_BYTEA		17
#define PG_OID_TEXT_ARR		1009
#define PG_OID_BYTEA_ARR	1001

/* One array parameter, in PostgreSQL's binary format (pg_arr_begin). */
struct pg_arr {
	char	*b;
	size_t	 len, cap;
	int	 n;
};

/* A connection and what is safe to print about it. */
struct pg {
	PGconn		*conn;
	char		*uri;		/* as given: may hold a password */
	char		 name[512];	/* the URI without its password */
	char		 queue[128];	/* --queue */
	/*
	 * When not 0, no call below waits past this instant (monotonic): a
	 * worker must get its loop back in time to stop its handlers before
	 * their leases run out, whatever the network or a hung server does.
	 * A call that would wait longer drops the connection (late is set).
	 */
	msec_t		 deadline;
	bool		 late;
	/*
	 * A URI naming several hosts (host=a,b): each connect after the
	 * first starts with the next of them, so that one that hangs (it
	 * takes the whole deadline) or serves no writes (a standby: LISTEN
	 * fails) cannot hold every try.  "" when the URI names one or none.
	 */
	char		 hosts[256], hostaddrs[256], ports[128];
	unsigned	 connects;
	/* The SQLSTATE of the last statement that failed; "" when it got no
	 * result at all (the connection broke on the way). */
	char		 state[6];
	/*
	 * A worker's or forward's connection runs the same few statements
	 * over and over: with prepare set, each is prepared on this
	 * connection the first time it runs (parsed and planned once, not
	 * per call), as prep[i], named "chuteI".  Keyed by the text's
	 * address: the statements are static arrays.
	 */
	bool		 prepare;
	const char	*prep[PG_PREPARED];
	int		 nprep;
};

/* pg_conn.c */
bool	 pg_is_uri(const char *s);
/*
 * Parse uri (libpq's syntax) for queue.  Returns 0, or -1 after one line on
 * stderr saying what is wrong with it (the caller exits 64).
 */
int	 pg_parse(struct pg *pg, const char *uri, const char *queue);
/*
 * Connect, bounded in time (connect_timeout, TCP keepalives and user
 * timeout), with every statement bounded too: by stmt_ms when not 0 (a
 * worker's is a third of its lease, so that no call outlives the time
 * left to stop its handlers), else PG_STATEMENT_MS.  Our settings come before
 * the URI's, so the URI may override any of them.  Returns 0, or -1
 * (pg_error says why; the connection is closed).
 */
int	 pg_connect(struct pg *pg, bool listen, msec_t stmt_ms);
/*
 * Text from the server (an error, a WARNING: a trigger's, a policy's, a
 * view's, in a role the submitters share) made fit for one line in buf
 * (len bytes): libpq's line breaks folded into spaces, its last one
 * dropped, every other control byte and backslash escaped as the
 * journal escapes free text (vis_text), so that it can neither drive a
 * terminal nor forge a line.  pg_error and every connection's notices
 * (pg_connect gives each a processor that prints them so on stderr,
 * naming pg->name) pass here.
 */
void	 pg_server_text(const char *msg, char *buf, size_t len);
/*
 * The status of a statement's result r (NULL: none came), its SQLSTATE
 * kept in pg->state for pg_fail.  Every statement's result passes here.
 */
ExecStatusType	 pg_result(struct pg *pg, const PGresult *r);
void	 pg_close(struct pg *pg);
bool	 pg_ok(struct pg *pg);
/* libpq's last message, on one line, for "chute: NAME: ...: it". */
const char	*pg_error(struct pg *pg);
PGresult	*pg_exec(struct pg *pg, const char *sql, int n,
	    const char *const *params);
/* pg_exec, with the rows in binary (a payload's bytes as they are). */
PGresult	*pg_exec_bin(struct pg *pg, const char *sql, int n,
	    const char *const *params);
/* pg_exec for a statement whose rows are not wanted: 0, or -1. */
int	 pg_cmd(struct pg *pg, const char *sql, int n,
	    const char *const *params);
/*
 * A statement sent without waiting for it, so that the caller can work
 * while the server does: PQsendQueryParams with typed (and perhaps
 * binary) parameters, rows in text, written whole to the socket before
 * it returns (waiting no later than the deadline: a nonblocking
 * connection's unflushed rest would wait for the next statement).  0, or
 * -1 (pg_error says why).  Then
 * pg_await takes its result, whatever its status (the caller reads the
 * SQLSTATE), or NULL when the connection failed on the way.
 */
int	 pg_send(struct pg *pg, const char *sql, int n, const Oid *types,
	    const char *const *params, const int *lens, const int *fmts);
PGresult	*pg_await(struct pg *pg);
/* pg_send for a statement of text parameters whose result is binary. */
int	 pg_send_bin(struct pg *pg, const char *sql, int n,
	    const char *const *params);
/*
 * A PostgreSQL array in its text form ({"a","b\\"c"}), for unnest() and
 * = ANY(): elements quoted, " and \\ escaped.  Start from { 0 };
 * pg_tarr_end returns the text (b->p, the caller's to free), or NULL when
 * memory ran out on the way.
 */
struct pg_tarr {
	char	*p;
	size_t	 len, cap;
	bool	 oom;
};
void	 pg_tarr_add(struct pg_tarr *b, const char *s);
const char	*pg_tarr_end(struct pg_tarr *b);
/* The n strings v as one array's text, malloc'd; NULL: out of memory. */
char	*pg_text_array(const char *const *v, int n);
/*
 * Start an empty one-dimensional array of elements of type oid: a header,
 * then a length and the bytes of each element.  A payload can be read
 * straight into its element (pg_arr_elem), so it is copied once on its way
 * to libpq.  An allocation that fails leaves a->b NULL or short: every
 * later call fails, and the caller says so.
 */
void	 pg_arr_begin(struct pg_arr *a, uint32_t oid);
/* Room for an element of len bytes; NULL when out of memory. */
char	*pg_arr_elem(struct pg_arr *a, size_t len);
/* A string element (text, or bytea of its bytes); 0, or -1 (no memory). */
int	 pg_arr_str(struct pg_arr *a, const char *s);
/* The last element was given len bytes but got only got: shrink it. */
void	 pg_arr_shrink(struct pg_arr *a, size_t len, size_t got);
void	 pg_arr_end(struct pg_arr *a);
/*
 * Say what failed ("chute: NAME: what: reason") and return the exit status
 * for it: 75 when the server is unreachable, went away or failed the last
 * statement for a passing reason (try later: transient), 77 when it
 * refused our credentials, 74 otherwise.
 */
int	 pg_fail(struct pg *pg, const char *what);
/*
 * pg_fail without a word on stderr, for a caller with a screen or a page
 * of its own: msg gets "NAME: what: reason".  The same exit status.
 */
int	 pg_fail_msg(struct pg *pg, const char *what, char *msg, size_t len);

/* pg_reply.c */
int	 pg_rows(const PGresult *r, int ncols, int max, int *more);
/* A binary integer of len bytes (network byte order) at row, col: 0, -1. */
int	 pg_be_int(const PGresult *r, int row, int col, int len, uint64_t *x);
/*
 * Row i of a claim's reply (binary: id text, token int8, attempts int4,
 * body bytea) into c's id, token and attempt.  Returns 0: a job to run
 * (its body is column 3, maybe NULL); 1: the row is a claim (c->token
 * is its token) but its ID is not one a job may have (id_valid: it would
 * name a path outside the worker's directory, or forge a log line), so
 * the job must be failed, never touched on disk; -1: not even a claim
 * (no token).  *why says what is wrong, for a log line.
 */
int	 pg_claim_row(const PGresult *r, int i, struct claim *c,
	    const char **why);

/* queue_pg.c */
/* A worker's own settings: chute run URL's options. */
struct pgq_opts {
	msec_t	 lease;		/* --lease: the claims' length */
	msec_t	 poll;		/* --poll: the safety poll under LISTEN */
	int	 slots;		/* -j */
	int	 prefetch;	/* --prefetch: claims held beyond the slots, at most */
};
/*
 * A queue on the database pg names (parsed, not connected: start connects,
 * and keeps trying while the server is down).  Returns 0 with *qp set, or
 * an exit status after one line saying why.
 */
int	 queue_pg_open(const struct pg *pg, const struct pgq_opts *o,
	    const struct queue_conf *c, struct queue **qp);
/*
 * The rows of a claim's reply r, for which n were asked, appended to the
 * prefetched claims: never more than n, nor than there is room for; the
 * server's reply is input like any other (pg_claim_row).  A row beyond
 * goes back, a row whose ID could name a path outside our directory is
 * failed, never written.  Returns how many were taken.  Not static: the
 * fuzzer (tests/fuzz/fuzz_claim.c) feeds it replies without a server.
 */
int	 queue_pg_take(struct queue *q, PGresult *r, int n);

/* pg_schema.c */
int	 pg_schema_version(struct pg *pg);
/*
 * Create or upgrade the schema.  Returns 0 (printing what it did), or an
 * exit status after one line saying why not.
 */
int	 pg_schema_init(struct pg *pg);
/* Is the schema there, and ours?  0, or an exit status after saying why. */
int	 pg_schema_check(struct pg *pg);

/* pg_queues.c */
/*
 * Pause (on) or resume queue: no claim takes a job from a paused queue
 * (running jobs finish, submissions are accepted), until it is resumed.
 * by says who, for status, stats and the views ("user@host"; NULL: "").
 * Workers and views are told at once (NOTIFY, on PG_CHANNEL: the queue's
 * name, and "pause QUEUE" or "resume QUEUE").  Returns 0 when the queue's
 * state changed, 1 when it was already so (nothing is changed, nor sent:
 * a second pause keeps the first one's time and author), -1 when the
 * statement failed (pg_fail says why).
 */
int	 pg_pause(struct pg *pg, const char *queue, bool on, const char *by);
/*
 * Is queue paused?  *paused; when it is, by (len bytes, may be NULL) gets
 * who paused it and *at (may be NULL) when, in ms since the epoch on the
 * server's clock; "" and 0 when it is not.  One lookup of chute.queues'
 * key.  0, or -1 (pg_fail says why).
 */
int	 pg_paused(struct pg *pg, const char *queue, bool *paused, char *by,
	    size_t len, msec_t *at);
/*
 * The payload of a cancel's notification on PG_CHANNEL, for the worker
 * that holds the job: "cancel/QUEUE/ID" in buf (len bytes).  A queue's
 * name holds no '/' (pg_parse), so the first '/' after the queue's name
 * ends it: no two (queue, ID) pairs share a payload, and no queue's name
 * (a submit's payload) is one.  The version 6 release's "cancel QUEUE ID"
 * let `--queue 'a b'` and ID y name job "b y" of queue a too.
 */
void	 pg_cancel_note(char *buf, size_t len, const char *queue,
	    const char *id);
/* The ID a payload cancels in queue, or NULL: it is no cancel of queue's. */
const char	*pg_cancel_of(const char *payload, const char *queue);
/*
 * How long queue keeps its finished jobs (chute.queues, version 9), into
 * *r (KEEP_FOREVER: NULL, or no row); or set to *r, the workers told by
 * "retention QUEUE" on PG_CHANNEL in the same transaction.  0, or -1
 * (pg_fail says why).
 */
int	 pg_retention(struct pg *pg, const char *queue, struct retention *r);
int	 pg_set_retention(struct pg *pg, const char *queue,
	    const struct retention *r);
/*
 * pg_schedules.c: queue's schedules, by name, each to row with its next
 * tick (a never-ticked one's from its declaration).  0, or -1 (pg_fail
 * says why).
 */
struct sched_row;
int	 pg_schedules(struct pg *pg, const char *queue, void (*row)(void *arg,
	    const struct sched_row *r), void *arg);
/*
 * A job of a queue kept 0 that ended and left the database at once is
 * told on PG_ENDED_CHANNEL as "ended/STATE/QUEUE/ID" (queue_pg_outcome.c),
 * for `chute wait`, which LISTENs there (no worker does).  The ID it
 * names in queue, its state into *st; NULL: no such payload of queue's.
 */
#define PG_ENDED_CHANNEL	"chute_ended"
const char	*pg_ended_of(const char *payload, const char *queue, int *st);

#endif
