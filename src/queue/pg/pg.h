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
#include "base/chute.h"
#include "queue/queue.h"

#define PG_SCHEMA_VERSION	3		/* 2: jobs forwarded from spools; 3: IDs checked */
#define PG_CHANNEL		"chute"		/* LISTEN/NOTIFY */
#define PG_MAX_JOB		(64LL << 20)	/* largest job accepted */
#define PG_LOG_CAP		(1 << 20)	/* log bytes kept per attempt */
#define PG_CONNECT_SECS		5		/* connect_timeout */
#define PG_STATEMENT_MS		10000		/* statement_timeout */
#define PG_RECONNECT_MIN_MS	100		/* backoff after a lost connection */
#define PG_RECONNECT_MAX_MS	5000
#define PG_POLL_MS		1000		/* the safety poll under LISTEN */
#define PG_COUNT_MAX		10000		/* a title's count: at most */
#define PG_LEASE_MS		30000		/* --lease default */
#define PG_PREFETCH		256		/* --prefetch default */
#define PG_PREFETCH_MAX		10000
#define PG_PREFETCH_MS		100		/* work claimed ahead, at most */

#define PG_GROUP_MS		20		/* outcomes wait for company, at most */
#define PG_GROUP_MAX		1000		/* ... or until this many wait */
#define PG_PREPARED		8		/* statements a connection prepares */
#define PG_READ_ONLY		"25006"		/* a standby's refusal to write */

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
bool	 pg_is_uri(const char *);
int	 pg_parse(struct pg *, const char *, const char *);
int	 pg_connect(struct pg *, bool, msec_t);
ExecStatusType pg_result(struct pg *, const PGresult *);
void	 pg_close(struct pg *);
bool	 pg_ok(struct pg *);
const char *pg_error(struct pg *);
PGresult *pg_exec(struct pg *, const char *, int, const char *const *);
PGresult *pg_exec_bin(struct pg *, const char *, int, const char *const *);
int	 pg_cmd(struct pg *, const char *, int, const char *const *);
int	 pg_send(struct pg *, const char *, int, const Oid *,
	    const char *const *, const int *, const int *);
PGresult *pg_await(struct pg *);
char	*pg_text_array(const char *const *, int);
void	 pg_arr_begin(struct pg_arr *, uint32_t);
char	*pg_arr_elem(struct pg_arr *, size_t);
int	 pg_arr_str(struct pg_arr *, const char *);
void	 pg_arr_shrink(struct pg_arr *, size_t, size_t);
void	 pg_arr_end(struct pg_arr *);
int	 pg_fail(struct pg *, const char *);

/* pg_reply.c */
int	 pg_rows(const PGresult *, int, int, int *);
int	 pg_be_int(const PGresult *, int, int, int, uint64_t *);
int	 pg_claim_row(const PGresult *, int, struct claim *, const char **);

/* queue_pg.c */
int	 queue_pg_open(const struct pg *, msec_t, int, int,
	    const struct queue_conf *, struct queue **);
int	 queue_pg_take(struct queue *, PGresult *, int);

/* pg_schema.c */
int	 pg_schema_version(struct pg *);
int	 pg_schema_init(struct pg *);
int	 pg_schema_check(struct pg *);

#endif
