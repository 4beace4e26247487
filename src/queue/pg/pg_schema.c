/*
 * pg_schema.c: chute's schema, compiled in, and `chute init URL`.  The
 * whole schema is created in one transaction under an advisory lock, every
 * statement idempotent, so two hosts may run init at once and a second run
 * changes nothing.  An upgrade is the same run over an older schema: each
 * version's additions are idempotent too (ADD COLUMN IF NOT EXISTS), so
 * init brings any older version up to this one.  fleet.md explains each
 * table and index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "queue/pg/pg.h"

/* Any constant; it only keeps two inits from interleaving. */
#define INIT_LOCK	"7310287530"

/*
 * id_valid() in SQL: 1-ID_MAX bytes, no leading '.', no '/' and no control
 * byte (text holds no NUL).
 */
#define ID_CHECK	"octet_length(id) BETWEEN 1 AND 200 AND left(id, 1) <> '.'" \
	" AND id !~ '[/\\x01-\\x1f\\x7f]'"
#define BAD_ID_LAST	"'refused: its ID is not a valid job ID (1-200 bytes, no" \
	" ''/'', no leading ''.'', no control bytes): failed by chute init'"
_Static_assert(ID_MAX == 200, "ID_CHECK and BAD_ID_LAST say 200");

static const char schema[] =
"CREATE SCHEMA IF NOT EXISTS chute;\n"
"CREATE TABLE IF NOT EXISTS chute.version (version integer NOT NULL);\n"
/* Fencing tokens: every claim takes a new one. */
"CREATE SEQUENCE IF NOT EXISTS chute.fence;\n"
/*
 * One row per job whatever its state.  run_at is the sort key in new, the
 * next run in defer, the finishing time in done and failed; a claim does
 * not move it, so a job handed back runs first again.  token, worker and
 * lease_until describe the live claim of a job in cur.  fillfactor leaves
 * room on each page for the updates of a job's life to stay HOT where
 * they touch no indexed column (lease renewals).
 */
"CREATE TABLE IF NOT EXISTS chute.jobs (\n"
"  queue text NOT NULL,\n"
"  id text NOT NULL,\n"
"  state text NOT NULL CHECK (state IN ('new','cur','defer','done','failed')),\n"
"  run_at timestamptz NOT NULL DEFAULT now(),\n"
"  attempts integer NOT NULL DEFAULT 0,\n"
"  last text NOT NULL DEFAULT '',\n"
"  token bigint,\n"
"  worker text,\n"
"  lease_until timestamptz,\n"
"  cancel boolean NOT NULL DEFAULT false,\n"
"  size bigint NOT NULL,\n"
"  created timestamptz NOT NULL DEFAULT now(),\n"
"  PRIMARY KEY (queue, id)\n"
") WITH (fillfactor = 70);\n"
/*
 * A hot queue turns its rows over fast: vacuum by row count, not by a
 * fraction of a table that may hold a million finished jobs.
 */
"ALTER TABLE chute.jobs SET (autovacuum_vacuum_scale_factor = 0,"
" autovacuum_vacuum_threshold = 2000,"
" autovacuum_vacuum_insert_scale_factor = 0,"
" autovacuum_vacuum_insert_threshold = 10000,"
" autovacuum_analyze_scale_factor = 0.02,"
" autovacuum_vacuum_cost_delay = 0);\n"
/* The claim's index: only jobs that may run, oldest first. */
"CREATE INDEX IF NOT EXISTS jobs_due ON chute.jobs (queue, run_at, id)"
" WHERE state IN ('new', 'defer');\n"
/* Claims by token, for renewals, outcomes and the recovery of expired ones. */
"CREATE INDEX IF NOT EXISTS jobs_claimed ON chute.jobs (queue, token)"
" WHERE state = 'cur';\n"
/* purge --older-than. */
"CREATE INDEX IF NOT EXISTS jobs_finished ON chute.jobs (queue, run_at)"
" WHERE state IN ('done', 'failed');\n"
/* The job's bytes, written once (replaced only by submit --unique
 * --on-duplicate replace of a waiting job: version 10). */
"CREATE TABLE IF NOT EXISTS chute.payloads (\n"
"  queue text NOT NULL,\n"
"  id text NOT NULL,\n"
"  body bytea NOT NULL,\n"
"  PRIMARY KEY (queue, id)\n"
");\n"
/* The job's log: chute's lines and the handler's output, per attempt. */
"CREATE TABLE IF NOT EXISTS chute.logs (\n"
"  queue text NOT NULL,\n"
"  id text NOT NULL,\n"
"  seq bigserial,\n"
"  body bytea NOT NULL,\n"
"  PRIMARY KEY (queue, id, seq)\n"
");\n"
/*
 * Version 2: where a job forwarded from a spool came from (`chute
 * forward`): the host, the spool, the job's ID there and the file's inode
 * and birth time.  Unique, so a batch sent again after a crash or a lost
 * connection inserts nothing twice.  NULL for jobs submitted directly,
 * which the partial index leaves out.  ADD COLUMN without a default
 * rewrites nothing: the upgrade of a big table is instant, but for the
 * index.
 */
"ALTER TABLE chute.jobs ADD COLUMN IF NOT EXISTS origin text,"
" ADD COLUMN IF NOT EXISTS origin_spool text,"
" ADD COLUMN IF NOT EXISTS origin_id text,"
" ADD COLUMN IF NOT EXISTS origin_birth text;\n"
"CREATE UNIQUE INDEX IF NOT EXISTS jobs_origin ON chute.jobs"
" (origin, origin_spool, origin_id, origin_birth) WHERE origin IS NOT NULL;\n"
/*
 * Version 3: a job's ID names a file on every worker that runs it, so the
 * table holds only the IDs id_valid() (id.c) takes: the constraint
 * jobs_id_valid.  An older table may hold others (inserted by hand, or by
 * a hostile submitter: the submitters share the workers' role).  The
 * upgrade fails those that still wait or run (a worker would refuse them
 * anyway), with a reason in last and a line in their log; then adds the
 * constraint, NOT VALID (checked on every insert and update, not on the
 * rows already there) when finished jobs with such IDs remain, which stay
 * for ls and purge, and validated when none do.  Once only: a later init
 * finds the constraint and does nothing.
 */
"DO $$ BEGIN\n"
" IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'jobs_id_valid'"
" AND conrelid = 'chute.jobs'::regclass) THEN\n"
"  WITH f AS (UPDATE chute.jobs SET state = 'failed', run_at = now(),"
" token = NULL, worker = NULL, lease_until = NULL, last = " BAD_ID_LAST
" WHERE state IN ('new', 'cur', 'defer') AND NOT (" ID_CHECK ")"
" RETURNING queue, id, last)\n"
"  INSERT INTO chute.logs (queue, id, body) SELECT queue, id,"
" convert_to('@chute ' || to_char(now() AT TIME ZONE 'UTC',"
" 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\" ') || last || E'\\n', 'UTF8') FROM f;\n"
"  ALTER TABLE chute.jobs ADD CONSTRAINT jobs_id_valid CHECK (" ID_CHECK ")"
" NOT VALID;\n"
"  IF NOT EXISTS (SELECT FROM chute.jobs WHERE NOT (" ID_CHECK ")) THEN\n"
"   ALTER TABLE chute.jobs VALIDATE CONSTRAINT jobs_id_valid;\n"
"  END IF;\n"
" END IF;\n"
"END $$;\n"
/*
 * Version 4: the workers you can see, and queues paused.  chute.workers
 * has a row per worker process (host:pid, as chute.jobs.worker names
 * it), written when it connects and kept current with its lease
 * renewals (seen, every lease/3, claims held or not), stopped set when
 * it stops cleanly.  A worker is alive while stopped IS NULL AND seen +
 * lease_ms > now(), gone otherwise; rows gone for an hour are deleted,
 * a hundred at a time, by the workers' recovery.  The table holds the
 * workers alive and those gone within the hour: a few hundred rows that
 * are read whole, so no index beyond the key, and seen, updated every
 * lease/3 by each worker, stays a heap-only (HOT) update in the room
 * fillfactor leaves.  chute.queues: a row per queue ever paused; a claim
 * takes nothing from a queue whose row says paused (one lookup of the
 * key), and pause and resume NOTIFY the workers (pg_queues.c).
 */
"CREATE TABLE IF NOT EXISTS chute.workers (\n"
"  worker text PRIMARY KEY,\n"
"  queue text NOT NULL,\n"
"  host text NOT NULL,\n"
"  pid integer NOT NULL,\n"
"  slots integer NOT NULL,\n"
"  version text NOT NULL,\n"
"  lease_ms bigint NOT NULL,\n"
"  started timestamptz NOT NULL DEFAULT now(),\n"
"  seen timestamptz NOT NULL DEFAULT now(),\n"
"  stopped timestamptz,\n"
/* Every reader subtracts these from now(): an infinity would break it. */
"  CONSTRAINT workers_times_finite CHECK (isfinite(started) AND"
" isfinite(seen) AND (stopped IS NULL OR isfinite(stopped)))\n"
") WITH (fillfactor = 50);\n"
"CREATE TABLE IF NOT EXISTS chute.queues (\n"
"  queue text PRIMARY KEY,\n"
"  paused boolean NOT NULL DEFAULT false,\n"
"  paused_at timestamptz,\n"
"  paused_by text\n"
");\n"
/*
 * Version 4, for the live views (pg_view.c): when a job's claim was made
 * (set by the claim, left alone by renewals and outcomes, so in done and
 * failed it is when the last attempt started), for the running jobs'
 * elapsed time; and the failed jobs by time, so that the newest failures
 * and their count are a short range even under a million done jobs,
 * which jobs_finished mixes with them.  A job fails rarely: the index
 * costs the done path nothing, and a failure one index entry.
 */
"ALTER TABLE chute.jobs ADD COLUMN IF NOT EXISTS claimed timestamptz;\n"
"CREATE INDEX IF NOT EXISTS jobs_failed ON chute.jobs (queue, run_at)"
" WHERE state = 'failed';\n"
/*
 * Past 10,000 a view shows the planner's estimate of a state's jobs; with
 * the queue's and the state's values counted apart, a queue of a million
 * done jobs beside another of a million new ones would pass for half of
 * each.  Their combinations, counted together by ANALYZE: nothing is
 * written per row.
 */
"CREATE STATISTICS IF NOT EXISTS chute.jobs_queue_state (mcv)"
" ON queue, state FROM chute.jobs;\n";

/*
 * The views of version 5 (below), made again by version 6, whose change
 * of their columns' collation they would forbid.  The last attempt's log
 * sorts after every row of the job's.
 */
#define VIEWS \
"CREATE VIEW chute.jobs AS SELECT queue, id, state, run_at, attempts," \
" last, token, worker, lease_until, cancel, size, created, claimed" \
" FROM chute.live UNION ALL SELECT queue, id, state, run_at, attempts, last," \
" NULL::bigint, NULL::text, NULL::timestamptz, false, size, created," \
" claimed FROM chute.finished;\n" \
"CREATE VIEW chute.job_logs AS SELECT queue, id, seq, body FROM chute.logs" \
" UNION ALL SELECT queue, id, " PG_LOG_LAST_SEQ ", log FROM chute.finished" \
" WHERE log IS NOT NULL;\n"

/*
 * Version 5: finished jobs leave the hot table.  A job's row lives in
 * chute.live while it is new, cur or defer, and moves to chute.finished
 * when it ends (an outcome's DELETE ... RETURNING feeding an INSERT, one
 * statement): the table every claim, renewal and outcome mutates holds
 * only the jobs that can still run, however many finished ones are kept,
 * and a finished row is written once, appended, never updated, until
 * purge or retry takes it.  The attempt that finishes a job keeps its
 * log in the finished row (log), not in a row of chute.logs of its own;
 * the view chute.job_logs is a job's whole log, in order.  chute.jobs is
 * a view of both tables, as the table of that name held before, for
 * every reader (status, wait, ls, stats, the views, psql at 3 a.m.): each
 * table's CHECK on state lets the planner skip the other where a query
 * names states (constraint_exclusion = partition, the default, examines
 * UNION ALL branches).  A job's ID is unique in its queue across both:
 * the key of chute.payloads, which holds a row for every job from submit
 * to purge, is the anchor (submit and forward insert the payload first),
 * and where a forwarded job came from moves to its payload, whose unique
 * index payloads_origin keeps a batch sent twice from inserting twice.
 * chute.finished has no check of IDs: its rows name no file anywhere, a
 * retry takes one back only through chute.live's jobs_id_valid, and a
 * row with a forbidden ID (past that check: see version 3) must be able
 * to end there, failed with its reason.  Run once, on a database of
 * version 4 (an older one is brought to 4 first); its finished jobs are
 * copied in the one transaction.
 */
static const char schema5[] =
"DO $$ BEGIN\n"
" IF (SELECT relkind FROM pg_class WHERE oid = 'chute.jobs'::regclass)"
" = 'r' THEN\n"
"  ALTER TABLE chute.payloads ADD COLUMN origin text,"
" ADD COLUMN origin_spool text, ADD COLUMN origin_id text,"
" ADD COLUMN origin_birth text;\n"
"  UPDATE chute.payloads p SET origin = j.origin,"
" origin_spool = j.origin_spool, origin_id = j.origin_id,"
" origin_birth = j.origin_birth FROM chute.jobs j WHERE j.origin IS NOT NULL"
" AND p.queue = j.queue AND p.id = j.id;\n"
"  CREATE UNIQUE INDEX payloads_origin ON chute.payloads"
" (origin, origin_spool, origin_id, origin_birth) WHERE origin IS NOT NULL;\n"
"  CREATE TABLE chute.finished (\n"
"   queue text NOT NULL,\n"
"   id text NOT NULL,\n"
"   state text NOT NULL CHECK (state IN ('done', 'failed')),\n"
"   run_at timestamptz NOT NULL DEFAULT now(),\n"
"   attempts integer NOT NULL DEFAULT 0,\n"
"   last text NOT NULL DEFAULT '',\n"
"   size bigint NOT NULL,\n"
"   created timestamptz NOT NULL DEFAULT now(),\n"
"   claimed timestamptz,\n"
"   log bytea,\n"
"   PRIMARY KEY (queue, id)\n"
"  );\n"
"  ALTER TABLE chute.finished SET (autovacuum_analyze_scale_factor = 0.02);\n"
"  INSERT INTO chute.finished (queue, id, state, run_at, attempts, last,"
" size, created, claimed) SELECT queue, id, state, run_at, attempts, last,"
" size, created, claimed FROM chute.jobs WHERE state IN ('done', 'failed');\n"
"  DELETE FROM chute.jobs WHERE state IN ('done', 'failed');\n"
"  DROP INDEX chute.jobs_finished, chute.jobs_failed, chute.jobs_origin;\n"
"  ALTER TABLE chute.jobs DROP COLUMN origin, DROP COLUMN origin_spool,"
" DROP COLUMN origin_id, DROP COLUMN origin_birth,"
" ADD CONSTRAINT live_state CHECK (state IN ('new', 'cur', 'defer'));\n"
"  ALTER TABLE chute.jobs RENAME TO live;\n"
/* purge --older-than, the views' rate and the web's lists: appended. */
"  CREATE INDEX finished_at ON chute.finished (queue, run_at, id);\n"
"  CREATE INDEX finished_failed ON chute.finished (queue, run_at)"
" WHERE state = 'failed';\n"
"  CREATE STATISTICS chute.finished_queue_state (mcv) ON queue, state"
" FROM chute.finished;\n"
"  " VIEWS
" END IF;\n"
"END $$;\n";

/*
 * Version 6: queue names, IDs, worker names and origins compare as bytes
 * (COLLATE "C"), whatever the database's collation.  Every claim, outcome
 * and renewal walks keys of (queue, id) and (queue, token); under a
 * locale's collation each comparison of two names was a copy of both and
 * a strcoll(), 3.6% of the server's samples in a 100,000-job drain under
 * C.UTF-8 and dearer under en_US (perf, bench/RESULTS.md), where C is a
 * memcmp.  chute's names are bytes everywhere else too: a spool lists
 * them in strcmp() order, and an ID is ASCII in practice (id_valid()
 * takes any byte but '/' and controls), whose order under C.UTF-8 is C's
 * and under en_US differs only in ties of punctuation and case.  The views name these columns, so they are made again.  The
 * tables keep their rows (same type, no rewrite); each index on a column
 * changed is rebuilt, in the one transaction: a big table's upgrade takes
 * as long as those builds.  Once only: a later init finds the collation.
 */
static const char schema6[] =
"DO $$ BEGIN\n"
" IF (SELECT attcollation FROM pg_attribute WHERE attrelid ="
" 'chute.live'::regclass AND attname = 'id') <> 'pg_catalog.\"C\"'::regcollation"
" THEN\n"
"  DROP VIEW chute.jobs, chute.job_logs;\n"
"  ALTER TABLE chute.live ALTER queue TYPE text COLLATE \"C\","
" ALTER id TYPE text COLLATE \"C\", ALTER worker TYPE text COLLATE \"C\";\n"
"  ALTER TABLE chute.finished ALTER queue TYPE text COLLATE \"C\","
" ALTER id TYPE text COLLATE \"C\";\n"
"  ALTER TABLE chute.payloads ALTER queue TYPE text COLLATE \"C\","
" ALTER id TYPE text COLLATE \"C\", ALTER origin TYPE text COLLATE \"C\","
" ALTER origin_spool TYPE text COLLATE \"C\","
" ALTER origin_id TYPE text COLLATE \"C\","
" ALTER origin_birth TYPE text COLLATE \"C\";\n"
"  ALTER TABLE chute.logs ALTER queue TYPE text COLLATE \"C\","
" ALTER id TYPE text COLLATE \"C\";\n"
"  ALTER TABLE chute.workers ALTER worker TYPE text COLLATE \"C\","
" ALTER queue TYPE text COLLATE \"C\";\n"
"  ALTER TABLE chute.queues ALTER queue TYPE text COLLATE \"C\";\n"
"  " VIEWS
" END IF;\n"
"END $$;\n";

/*
 * Version 7: a job's times are finite.  Every reader subtracts them from
 * now() (top, ls, stats, the dashboard) or orders by them, and a row
 * whose run_at or created was infinity or -infinity (any submitter may
 * write one: they share the workers' role) made each of those fail for
 * its whole queue ("cannot subtract infinite timestamps"), and purge
 * --older-than never took one at +infinity; chute.workers had its check
 * since version 4, the job tables none (nor chute.queues' paused_at,
 * which stats reads as a number).  The checks are validated: a
 * database that holds such a row stops the upgrade with one line (exit
 * 74) naming a job and the fix, fleet.md's "The upgrade to version 7",
 * and stays at version 6, whole.  Once only: a later init finds the
 * checks.
 */
#define LIVE_FINITE	"isfinite(run_at) AND isfinite(created) AND" \
	" (claimed IS NULL OR isfinite(claimed)) AND" \
	" (lease_until IS NULL OR isfinite(lease_until))"
#define FINISHED_FINITE	"isfinite(run_at) AND isfinite(created) AND" \
	" (claimed IS NULL OR isfinite(claimed))"
#define QUEUES_FINITE	"paused_at IS NULL OR isfinite(paused_at)"
static const char schema7[] =
"DO $$ DECLARE w text; BEGIN\n"
" IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname ="
" 'live_times_finite' AND conrelid = 'chute.live'::regclass) THEN\n"
"  BEGIN\n"
"   ALTER TABLE chute.live ADD CONSTRAINT live_times_finite CHECK ("
LIVE_FINITE ");\n"
"   ALTER TABLE chute.finished ADD CONSTRAINT finished_times_finite CHECK ("
FINISHED_FINITE ");\n"
"   ALTER TABLE chute.queues ADD CONSTRAINT queues_times_finite CHECK ("
QUEUES_FINITE ");\n"
"  EXCEPTION WHEN check_violation THEN\n"
"   SELECT format('job %L of queue %L', id, queue) INTO w FROM (SELECT"
" queue, id FROM chute.live WHERE NOT (" LIVE_FINITE ") UNION ALL"
" SELECT queue, id FROM chute.finished WHERE NOT (" FINISHED_FINITE "))"
" x LIMIT 1;\n"
"   IF w IS NULL THEN\n"
"    SELECT format('the pause of queue %L', queue) INTO w FROM chute.queues"
" WHERE NOT (" QUEUES_FINITE ") LIMIT 1;\n"
"   END IF;\n"
"   RAISE EXCEPTION '% has a time at infinity or -infinity, which version 7"
" forbids: set such times to now() (or purge those jobs), as fleet.md says"
" under \"The upgrade to version 7\", and run init again', w"
" USING ERRCODE = 'check_violation';\n"
"  END;\n"
" END IF;\n"
"END $$;\n";

/*
 * The schema version in the database: 0 when there is none yet, -1 on
 * error.  Two statements: a query naming a table that does not exist
 * fails at parse time, whatever CASE would have skipped.
 */
int
pg_schema_version(struct pg *pg)
{
	PGresult *r = pg_exec(pg, "SELECT to_regclass('chute.version') IS NOT NULL",
	    0, NULL);
	bool there;
	int v = 0;

	if (r == NULL)
		return -1;
	/* One row of one column, or the reply is not an answer. */
	if (pg_rows(r, 1, 1, NULL) != 1) {
		PQclear(r);
		return -1;
	}
	there = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!there)
		return 0;
	if ((r = pg_exec(pg, "SELECT coalesce(max(version), 0) FROM chute.version",
	    0, NULL)) == NULL)
		return -1;
	v = pg_rows(r, 1, 1, NULL) == 1 ? atoi(PQgetvalue(r, 0, 0)) : -1;
	PQclear(r);
	return v;
}

int
pg_schema_init(struct pg *pg)
{
	char v[16];
	const char *p[1] = { v };
	int was;

	if (pg_cmd(pg, "BEGIN", 0, NULL) == -1 ||
	    pg_cmd(pg, "SELECT pg_advisory_xact_lock(" INIT_LOCK ")", 0,
	    NULL) == -1 || (was = pg_schema_version(pg)) == -1)
		return pg_fail(pg, "init");
	if (was > PG_SCHEMA_VERSION) {
		pg_cmd(pg, "ROLLBACK", 0, NULL);
		fprintf(stderr, "chute: %s: schema version %d is newer than "
		    "this chute's (%d): upgrade chute\n", pg->name, was,
		    PG_SCHEMA_VERSION);
		return EX_CONFIG;
	}
	snprintf(v, sizeof(v), "%d", PG_SCHEMA_VERSION);
	/*
	 * Several statements: the simple protocol, no parameters.  The steps
	 * to version 4 name chute.jobs as the table it was then: not run
	 * once it is the view of version 5.
	 */
	if ((was < 5 && pg_cmd(pg, schema, 0, NULL) == -1) ||
	    pg_cmd(pg, schema5, 0, NULL) == -1 ||
	    pg_cmd(pg, schema6, 0, NULL) == -1 ||
	    pg_cmd(pg, schema7, 0, NULL) == -1 ||
	    pg_cmd(pg, pg_schema8, 0, NULL) == -1 ||
	    pg_cmd(pg, pg_schema9, 0, NULL) == -1 ||
	    pg_cmd(pg, pg_schema10, 0, NULL) == -1 ||
	    pg_cmd(pg, pg_schema11, 0, NULL) == -1 ||
	    pg_cmd(pg, pg_schema12, 0, NULL) == -1 ||
	    pg_cmd(pg, pg_schema13, 0, NULL) == -1 ||
	    pg_cmd(pg, "DELETE FROM chute.version", 0, NULL) == -1 ||
	    pg_cmd(pg, "INSERT INTO chute.version VALUES ($1::integer)", 1,
	    p) == -1 || pg_cmd(pg, "COMMIT", 0, NULL) == -1)
		return pg_fail(pg, "init");
	printf("%s: schema version %d%s\n", pg->name, PG_SCHEMA_VERSION,
	    was == PG_SCHEMA_VERSION ? " (already)" : was == 0 ? " created" :
	    " (upgraded)");
	return 0;
}

int
pg_schema_check(struct pg *pg)
{
	int v = pg_schema_version(pg);

	if (v == -1)
		return pg_fail(pg, "schema");
	if (v == PG_SCHEMA_VERSION)
		return 0;
	if (v == 0)
		fprintf(stderr, "chute: %s: no chute schema here (chute init "
		    "%s)\n", pg->name, pg->name);
	else
		fprintf(stderr, "chute: %s: schema version %d, this chute "
		    "speaks %d: %s\n", pg->name, v, PG_SCHEMA_VERSION, v >
		    PG_SCHEMA_VERSION ? "upgrade chute" : "run chute init");
	return EX_CONFIG;
}
