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
#include "base/sched.h"
#include "base/tick.h"
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
 * Version 8: which job runs next (issue 36, fleet.md "Priorities, keys and
 * limits").  A job's priority (-100..100, higher first) and key (1-64
 * bytes of [A-Za-z0-9._:@+-], key_valid()), kept when it finishes; the
 * rules of a queue (chute.limits: scope 'key', 'default' or 'all', key ''
 * but for 'key'); and, for the per-key bound on running jobs, an
 * admission count per key in use (chute.keys): a keyed job is admitted
 * (parked false: in live_ready, the claim's index) only while its key's
 * admitted jobs, waiting or running, are fewer than its rule's max;
 * otherwise parked, off the claim's index, so that a key at its limit
 * costs the claim nothing however many of its jobs wait.  The triggers
 * keep the counts in the statement that moves the row: a job's insert
 * (admitted or parked), its claim's end (the outcome, the recovery of an
 * expired claim, a cancel: admitted - 1 and the best parked job of the key
 * admitted in its place).  They serialise on one advisory lock per queue
 * (chute.keys_lock), taken only for keyed rows, so that two statements
 * never wait for each other's key rows in opposite orders.  The claim
 * takes nothing from a parked row; an unkeyed row never fires a trigger
 * (their WHEN), so its path is the one of before, by the new index.
 * Idempotent: IF NOT EXISTS, CREATE OR REPLACE.
 */
#define JOB_KEY_CHECK	"octet_length(key) BETWEEN 1 AND 64 AND" \
	" key ~ '^[-A-Za-z0-9._:@+]+$'"
_Static_assert(KEY_MAX == 64 && PRIO_MIN == -100 && PRIO_MAX == 100,
    "schema8 says 64 and -100..100");
static const char schema8[] =
"ALTER TABLE chute.live ADD COLUMN IF NOT EXISTS priority smallint NOT NULL"
" DEFAULT 0 CONSTRAINT live_priority CHECK (priority BETWEEN -100 AND 100),"
" ADD COLUMN IF NOT EXISTS key text COLLATE \"C\" CONSTRAINT live_key CHECK ("
JOB_KEY_CHECK "),"
" ADD COLUMN IF NOT EXISTS parked boolean NOT NULL DEFAULT false;\n"
"ALTER TABLE chute.finished ADD COLUMN IF NOT EXISTS priority smallint"
" NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS key text COLLATE \"C\";\n"
"CREATE OR REPLACE VIEW chute.jobs AS SELECT queue, id, state, run_at,"
" attempts, last, token, worker, lease_until, cancel, size, created, claimed,"
" priority, key FROM chute.live UNION ALL SELECT queue, id, state, run_at,"
" attempts, last, NULL::bigint, NULL::text, NULL::timestamptz, false, size,"
" created, claimed, priority, key FROM chute.finished;\n"
/* The claim's order, on the rows that may be claimed. */
"CREATE INDEX IF NOT EXISTS live_ready ON chute.live"
" (queue, priority DESC, run_at, id)"
" WHERE state IN ('new', 'defer') AND NOT parked;\n"
/*
 * The claim in age order (one in SCHED_FIFO_EVERY: no starvation) on the
 * same rows: the oldest that may start, whatever their priority, read in
 * index order.  A walk over live_ready's priorities instead read through
 * every dead entry at the front of each priority's range: 15.8 ms a claim
 * against 3.9 for the plain one (pg_stat_statements, 100,000 jobs, two
 * workers), a third of the server's time per job.
 */
"CREATE INDEX IF NOT EXISTS live_due ON chute.live (queue, run_at, id)"
" WHERE state IN ('new', 'defer') AND NOT parked;\n"
/* A key's parked jobs, the best first: the one admitted next. */
"CREATE INDEX IF NOT EXISTS live_parked ON chute.live"
" (queue, key, priority DESC, run_at, id) WHERE parked;\n"
/* A key's jobs, for `chute limit`, `ls --key` and a lowered limit. */
"CREATE INDEX IF NOT EXISTS live_key ON chute.live (queue, key)"
" WHERE key IS NOT NULL;\n"
"CREATE TABLE IF NOT EXISTS chute.limits (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  scope text NOT NULL CHECK (scope IN ('key', 'default', 'all')),\n"
"  key text COLLATE \"C\" NOT NULL DEFAULT '' CHECK ((scope = 'key') ="
" (key <> '') AND (key = '' OR " JOB_KEY_CHECK ")),\n"
"  max integer NOT NULL DEFAULT 0 CHECK (max BETWEEN 0 AND 100000),\n"
"  rate_n integer NOT NULL DEFAULT 0 CHECK (rate_n BETWEEN 0 AND 100000),\n"
"  rate_ms bigint NOT NULL DEFAULT 0 CHECK (rate_ms BETWEEN 0 AND 86400000"
" AND (rate_n = 0) = (rate_ms = 0)),\n"
"  PRIMARY KEY (queue, scope, key)\n"
");\n"
"CREATE TABLE IF NOT EXISTS chute.keys (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  key text COLLATE \"C\" NOT NULL,\n"
"  admitted integer NOT NULL DEFAULT 0,\n"
"  parked integer NOT NULL DEFAULT 0,\n"
"  PRIMARY KEY (queue, key)\n"
") WITH (fillfactor = 50);\n"
/*
 * Rate limits and the whole queue's rule are decided by the claim itself
 * (chute.claim_limited), which a worker uses while its queue's row in
 * chute.queues says limited (set with the rules by `chute limit`); the
 * plain claim takes nothing from such a queue, as from a paused one.
 * A rate is rate_n tokens per scope and key: a start takes one whose
 * free_at has come and sets it rate_ms ahead (prev: what to put back when
 * the claim takes fewer jobs than it took tokens for).
 */
"ALTER TABLE chute.queues ADD COLUMN IF NOT EXISTS limited boolean NOT NULL"
" DEFAULT false;\n"
"CREATE TABLE IF NOT EXISTS chute.tokens (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  scope text NOT NULL,\n"
"  key text COLLATE \"C\" NOT NULL,\n"
"  n integer NOT NULL,\n"
"  free_at timestamptz NOT NULL DEFAULT '-infinity',\n"
"  prev timestamptz NOT NULL DEFAULT '-infinity',\n"
"  PRIMARY KEY (queue, scope, key, n)\n"
") WITH (fillfactor = 50);\n"
/*
 * The bound on a key's admitted jobs: its rule's max (else the
 * default's), and its rate's N when it has one (so that the claim never
 * looks at more than N jobs of a key whose tokens are spent).
 */
"CREATE OR REPLACE FUNCTION chute.key_cap(q text, k text) RETURNS integer"
" LANGUAGE sql STABLE AS $f$ SELECT least(nullif(r.max, 0),"
" nullif(r.rate_n, 0)) FROM (SELECT max, rate_n FROM chute.limits WHERE"
" queue = q AND ((scope = 'key' AND key = k) OR scope = 'default')"
" ORDER BY scope = 'key' DESC LIMIT 1) r $f$;\n"
/* Up to want tokens of (sc, k) free at v, taken: their ctids. */
"CREATE OR REPLACE FUNCTION chute.tokens_take(q text, sc text, k text,"
" rn integer, rms bigint, want integer, v timestamptz) RETURNS tid[]"
" LANGUAGE plpgsql AS $f$ DECLARE got tid[]; BEGIN\n"
"  IF NOT EXISTS (SELECT FROM chute.tokens WHERE queue = q AND scope = sc"
" AND key = k AND n = rn) THEN\n"
"   INSERT INTO chute.tokens (queue, scope, key, n) SELECT q, sc, k, g"
" FROM generate_series(1, rn) g ON CONFLICT DO NOTHING;\n"
"  END IF;\n"
"  WITH t AS (SELECT ctid FROM chute.tokens WHERE queue = q AND scope = sc"
" AND key = k AND n <= rn AND free_at <= v ORDER BY n LIMIT want"
" FOR UPDATE SKIP LOCKED), u AS (UPDATE chute.tokens x SET prev = x.free_at,"
" free_at = v + rms * interval '1 millisecond' FROM t WHERE x.ctid = t.ctid"
" AND x.free_at <= v RETURNING x.ctid)"
" SELECT coalesce(array_agg(ctid), '{}') INTO got FROM u;\n"
"  RETURN got;\n"
" END $f$;\n"
/*
 * The claim of a limited queue: the whole queue's max under a lock of the
 * queue's claims (the running jobs counted after it is held: a statement
 * of its own, so its snapshot has every claim that held it before), its
 * rate's tokens, then the jobs in the claim's order, each keyed one taking
 * a token of its key's rate (a key whose tokens are spent is passed over
 * for the rest of this claim), the unused tokens of the queue put back.
 * v, the time of the claim's decision, is its claimed time.
 */
"CREATE OR REPLACE FUNCTION chute.claim_limited(q text, want integer,"
" w text, lease_ms bigint, fifo boolean) RETURNS TABLE (id text,"
" token bigint, attempts integer, body bytea) LANGUAGE plpgsql AS $f$\n"
"#variable_conflict use_column\n"
" DECLARE v timestamptz := clock_timestamp(); room integer := want;"
" amax integer := 0; arn integer := 0; arms bigint := 0; n integer;"
" krates boolean; alltok tid[] := '{}'; take tid[] := '{}';"
" dry text[] := '{}'; cur refcursor; c record; kr record; BEGIN\n"
"  IF EXISTS (SELECT FROM chute.queues x WHERE x.queue = q AND x.paused)"
" THEN RETURN; END IF;\n"
"  SELECT l.max, l.rate_n, l.rate_ms INTO amax, arn, arms FROM chute.limits l"
" WHERE l.queue = q AND l.scope = 'all';\n"
"  IF coalesce(amax, 0) > 0 THEN\n"
"   PERFORM pg_advisory_xact_lock(7310288, hashtext(q));\n"
"   SELECT amax - count(*) INTO n FROM chute.live l WHERE l.queue = q"
" AND l.state = 'cur';\n"
"   room := least(room, n);\n"
"  END IF;\n"
"  IF coalesce(arn, 0) > 0 AND room > 0 THEN\n"
"   alltok := chute.tokens_take(q, 'all', '', arn, arms, room, v);\n"
"   room := least(room, cardinality(alltok));\n"
"  END IF;\n"
"  IF room <= 0 THEN RETURN; END IF;\n"
"  krates := EXISTS (SELECT FROM chute.limits l WHERE l.queue = q"
" AND l.scope <> 'all' AND l.rate_n > 0);\n"
"  IF fifo THEN\n"
"   OPEN cur FOR WITH RECURSIVE lv(p) AS ((SELECT l.priority FROM chute.live l"
" WHERE l.queue = q AND l.state IN ('new', 'defer') AND NOT l.parked"
" ORDER BY l.priority DESC LIMIT 1) UNION ALL SELECT (SELECT l.priority"
" FROM chute.live l WHERE l.queue = q AND l.state IN ('new', 'defer')"
" AND NOT l.parked AND l.priority < lv.p ORDER BY l.priority DESC LIMIT 1)"
" FROM lv WHERE lv.p IS NOT NULL) SELECT x.ctid, x.key FROM lv CROSS JOIN"
" LATERAL (SELECT l.ctid, l.key, l.run_at, l.id FROM chute.live l"
" WHERE l.queue = q AND l.state IN ('new', 'defer') AND NOT l.parked"
" AND l.priority = lv.p AND l.run_at <= now() ORDER BY l.priority DESC,"
" l.run_at, l.id LIMIT want * 4 FOR UPDATE SKIP LOCKED) x"
" ORDER BY x.run_at, x.id;\n"
"  ELSE\n"
"   OPEN cur FOR SELECT l.ctid, l.key FROM chute.live l WHERE l.queue = q"
" AND l.state IN ('new', 'defer') AND NOT l.parked AND l.run_at <= now()"
" ORDER BY l.priority DESC, l.run_at, l.id FOR UPDATE SKIP LOCKED;\n"
"  END IF;\n"
"  LOOP\n"
"   FETCH cur INTO c;\n"
"   EXIT WHEN NOT FOUND OR cardinality(take) >= room;\n"
"   IF krates AND c.key IS NOT NULL THEN\n"
"    CONTINUE WHEN c.key = ANY (dry);\n"
"    SELECT l.rate_n, l.rate_ms INTO kr FROM chute.limits l WHERE"
" l.queue = q AND ((l.scope = 'key' AND l.key = c.key) OR l.scope ="
" 'default') ORDER BY l.scope = 'key' DESC LIMIT 1;\n"
"    IF FOUND AND kr.rate_n > 0 AND cardinality(chute.tokens_take(q, 'key',"
" c.key, kr.rate_n, kr.rate_ms, 1, v)) = 0 THEN\n"
"     dry := dry || c.key;\n"
"     CONTINUE;\n"
"    END IF;\n"
"   END IF;\n"
"   take := take || c.ctid;\n"
"  END LOOP;\n"
"  CLOSE cur;\n"
"  IF cardinality(alltok) > cardinality(take) THEN\n"
"   UPDATE chute.tokens x SET free_at = x.prev WHERE x.ctid = ANY"
" (alltok[cardinality(take) + 1:]);\n"
"  END IF;\n"
"  RETURN QUERY WITH cl AS (UPDATE chute.live j SET state = 'cur',"
" attempts = j.attempts + 1, token = nextval('chute.fence'), worker = w,"
" lease_until = now() + lease_ms * interval '1 millisecond', cancel = false,"
" claimed = v WHERE j.ctid = ANY (take) AND j.queue = q AND j.state IN"
" ('new', 'defer') AND NOT j.parked RETURNING j.id, j.token, j.attempts,"
" j.run_at, j.priority) SELECT cl.id, cl.token, cl.attempts, (SELECT p.body"
" FROM chute.payloads p WHERE p.queue = q AND p.id = cl.id) FROM cl"
" ORDER BY CASE WHEN fifo THEN 0 ELSE -cl.priority END, cl.run_at, cl.id;\n"
" END $f$;\n"
"CREATE OR REPLACE FUNCTION chute.keys_lock(q text) RETURNS void"
" LANGUAGE sql AS $f$ SELECT pg_advisory_xact_lock(7310287, hashtext(q))"
" $f$;\n"
/*
 * Admit the best parked jobs of key k that are due, while its admitted
 * ones are fewer than its cap; under keys_lock.  How many it admitted.
 */
"CREATE OR REPLACE FUNCTION chute.key_admit(q text, k text) RETURNS integer"
" LANGUAGE plpgsql AS $f$ DECLARE cap integer := chute.key_cap(q, k);"
" room integer; n integer; BEGIN\n"
"  SELECT CASE WHEN cap IS NULL THEN parked ELSE least(parked, cap - admitted)"
" END INTO room FROM chute.keys WHERE queue = q AND key = k;\n"
"  IF room IS NULL OR room <= 0 THEN RETURN 0; END IF;\n"
"  UPDATE chute.live SET parked = false WHERE ctid = ANY (ARRAY(SELECT ctid"
" FROM chute.live WHERE queue = q AND key = k AND parked AND run_at <= now()"
" AND state IN ('new', 'defer')"
" ORDER BY priority DESC, run_at, id LIMIT room FOR UPDATE SKIP LOCKED))"
" AND parked;\n"
"  GET DIAGNOSTICS n = ROW_COUNT;\n"
"  IF n > 0 THEN UPDATE chute.keys SET admitted = admitted + n,"
" parked = parked - n WHERE queue = q AND key = k;\n"
/* Every worker of the queue may claim them (PG_CHANNEL). */
"   PERFORM pg_notify('chute', q); END IF;\n"
"  RETURN n;\n"
" END $f$;\n"
/*
 * Keyed jobs come in parked (key_in), then, once per statement and key
 * (keys_in: a statement of 100,000 rows of one key updates its row of
 * chute.keys once, not 100,000 times in one transaction, each update a
 * version the next must step over), counted and the best of them that
 * are due admitted while the key has room.
 */
"CREATE OR REPLACE FUNCTION chute.key_in() RETURNS trigger"
" LANGUAGE plpgsql AS $f$ BEGIN NEW.parked := true; RETURN NEW; END $f$;\n"
"CREATE OR REPLACE FUNCTION chute.keys_in() RETURNS trigger"
" LANGUAGE plpgsql AS $f$ DECLARE r record; BEGIN\n"
"  FOR r IN SELECT queue, key, count(*) AS n FROM nt WHERE key IS NOT NULL"
" GROUP BY queue, key ORDER BY queue, key LOOP\n"
"   PERFORM chute.keys_lock(r.queue);\n"
"   INSERT INTO chute.keys AS x (queue, key, parked) VALUES (r.queue, r.key,"
" r.n) ON CONFLICT (queue, key) DO UPDATE SET parked = x.parked + r.n;\n"
"   PERFORM chute.key_admit(r.queue, r.key);\n"
"  END LOOP;\n"
"  RETURN NULL;\n"
" END $f$;\n"
/*
 * A keyed job's claim ends with the row staying (defer, handed back,
 * recovered): its admission is given up; a job due again keeps it when
 * the key has room, else it is parked and the best parked one is admitted.
 */
"CREATE OR REPLACE FUNCTION chute.key_back() RETURNS trigger"
" LANGUAGE plpgsql AS $f$ DECLARE cap integer; a integer; BEGIN\n"
"  PERFORM chute.keys_lock(NEW.queue);\n"
"  SELECT admitted - 1 INTO a FROM chute.keys WHERE queue = NEW.queue"
" AND key = NEW.key;\n"
"  cap := chute.key_cap(NEW.queue, NEW.key);\n"
"  NEW.parked := NEW.run_at > now() OR (cap IS NOT NULL AND a >= cap);\n"
"  UPDATE chute.keys SET admitted = a + CASE WHEN NEW.parked THEN 0 ELSE 1"
" END, parked = parked + CASE WHEN NEW.parked THEN 1 ELSE 0 END"
" WHERE queue = NEW.queue AND key = NEW.key;\n"
"  IF NEW.parked THEN PERFORM chute.key_admit(NEW.queue, NEW.key); END IF;\n"
"  RETURN NEW;\n"
" END $f$;\n"
/* A keyed job leaves chute.live (finished, cancelled): its count goes. */
"CREATE OR REPLACE FUNCTION chute.key_out() RETURNS trigger"
" LANGUAGE plpgsql AS $f$ BEGIN\n"
"  PERFORM chute.keys_lock(OLD.queue);\n"
"  UPDATE chute.keys SET admitted = admitted - CASE WHEN OLD.parked THEN 0"
" ELSE 1 END, parked = parked - CASE WHEN OLD.parked THEN 1 ELSE 0 END"
" WHERE queue = OLD.queue AND key = OLD.key;\n"
"  IF NOT OLD.parked THEN PERFORM chute.key_admit(OLD.queue, OLD.key);"
" END IF;\n"
"  RETURN OLD;\n"
" END $f$;\n"
/*
 * Parked jobs whose time came (deferred, or submitted for later) are
 * admitted where their key has room, and keys without jobs forgotten:
 * by every worker's recovery of expired claims (pgq_recover).
 */
"CREATE OR REPLACE FUNCTION chute.keys_due(q text) RETURNS integer"
" LANGUAGE plpgsql AS $f$ DECLARE k text; n integer := 0; BEGIN\n"
"  IF NOT EXISTS (SELECT FROM chute.keys WHERE queue = q AND (parked > 0"
" OR admitted = 0)) THEN RETURN 0; END IF;\n"
"  PERFORM chute.keys_lock(q);\n"
"  DELETE FROM chute.keys WHERE queue = q AND admitted = 0 AND parked = 0;\n"
"  FOR k IN SELECT key FROM chute.keys WHERE queue = q AND parked > 0 LOOP\n"
"   n := n + chute.key_admit(q, k);\n"
"  END LOOP;\n"
"  RETURN n;\n"
" END $f$;\n"
/*
 * After a change of key k's rule (k NULL: the default's, so every key's):
 * a lowered cap takes back the admission of the waiting jobs (the running
 * ones stay counted, so no job of the key starts until fewer than the cap
 * run), a raised one admits parked jobs.  How many keys it looked at.
 */
"CREATE OR REPLACE FUNCTION chute.keys_recap(q text, k text) RETURNS integer"
" LANGUAGE plpgsql AS $f$ DECLARE r record; n integer; m integer := 0;"
" BEGIN\n"
"  PERFORM chute.keys_lock(q);\n"
"  FOR r IN SELECT key, admitted, chute.key_cap(q, key) AS cap FROM"
" chute.keys WHERE queue = q AND (k IS NULL OR key = k) LOOP\n"
"   m := m + 1;\n"
"   IF r.cap IS NOT NULL AND r.admitted > r.cap THEN\n"
"    UPDATE chute.live SET parked = true WHERE ctid = ANY (ARRAY(SELECT ctid"
" FROM chute.live WHERE queue = q AND key = r.key AND state IN ('new',"
" 'defer') AND NOT parked FOR UPDATE SKIP LOCKED)) AND NOT parked AND state"
" IN ('new', 'defer');\n"
"    GET DIAGNOSTICS n = ROW_COUNT;\n"
"    UPDATE chute.keys SET admitted = admitted - n, parked = parked + n"
" WHERE queue = q AND key = r.key;\n"
"   END IF;\n"
"   PERFORM chute.key_admit(q, r.key);\n"
"  END LOOP;\n"
"  RETURN m;\n"
" END $f$;\n"
"DROP TRIGGER IF EXISTS live_key_in ON chute.live;\n"
"DROP TRIGGER IF EXISTS live_keys_in ON chute.live;\n"
"DROP TRIGGER IF EXISTS live_key_back ON chute.live;\n"
"DROP TRIGGER IF EXISTS live_key_out ON chute.live;\n"
"CREATE TRIGGER live_key_in BEFORE INSERT ON chute.live"
" FOR EACH ROW WHEN (NEW.key IS NOT NULL) EXECUTE FUNCTION chute.key_in();\n"
"CREATE TRIGGER live_keys_in AFTER INSERT ON chute.live REFERENCING"
" NEW TABLE AS nt FOR EACH STATEMENT EXECUTE FUNCTION chute.keys_in();\n"
"CREATE TRIGGER live_key_back BEFORE UPDATE ON chute.live"
" FOR EACH ROW WHEN (OLD.key IS NOT NULL AND OLD.state = 'cur'"
" AND NEW.state <> 'cur') EXECUTE FUNCTION chute.key_back();\n"
"CREATE TRIGGER live_key_out AFTER DELETE ON chute.live"
" FOR EACH ROW WHEN (OLD.key IS NOT NULL) EXECUTE FUNCTION chute.key_out();\n";

/*
 * Version 9: how long a queue keeps its finished jobs (`chute
 * retention`), in ms per state, in its row of chute.queues: NULL keeps
 * them until purged (the default, and every row an older version made);
 * 0 not at all (the outcome statement leaves them out of
 * chute.finished).  The workers read it when they connect and when
 * `retention QUEUE` is notified, and remove what is past it
 * (queue_pg_retain.c).  Two columns added without a default: no rewrite,
 * and a second run finds them and adds nothing, their checks included.
 * Independent of version 8's additions.
 */
static const char schema9[] =
"ALTER TABLE chute.queues"
" ADD COLUMN IF NOT EXISTS keep_done bigint CHECK (keep_done >= 0),"
" ADD COLUMN IF NOT EXISTS keep_failed bigint CHECK (keep_failed >= 0);\n";

/*
 * Version 10: unique keys (issue 37; fleet.md, "Unique keys").  A key is
 * held by one job at a time, its row in chute.unique_keys, whose primary
 * key makes a second insert of the key wait for the first's transaction
 * and then find it (ON CONFLICT DO NOTHING): exact across hosts, and a
 * submit that fails takes its row with it.  held_while is the states the
 * submitter chose, and the row goes in the same statement that moves its
 * job out of them, by the triggers below: a claim (waiting: new or
 * defer), the move out of chute.live (active: finished, cancelled), the
 * purge of its payload (kept, by the foreign key's cascade).  The
 * triggers' WHEN reads only the row: a job without a key costs no call.
 * unique_key on chute.live is what they read; on chute.payloads, the key
 * a job was submitted with, for status, from submit to purge.  Idempotent
 * and independent of versions 8 and 9.
 */
#define KEY_CHECK	"ukey ~ '^[A-Za-z0-9._:@+-]{1,64}$'"
_Static_assert(KEY_MAX == 64, "KEY_CHECK says 64, as key_valid()");
static const char schema10[] =
"CREATE TABLE IF NOT EXISTS chute.unique_keys (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  ukey text COLLATE \"C\" NOT NULL CHECK (" KEY_CHECK "),\n"
"  id text COLLATE \"C\" NOT NULL,\n"
"  held_while text NOT NULL"
" CHECK (held_while IN ('active', 'waiting', 'kept')),\n"
"  PRIMARY KEY (queue, ukey),\n"
"  UNIQUE (queue, id),\n"
"  FOREIGN KEY (queue, id) REFERENCES chute.payloads (queue, id)"
" ON DELETE CASCADE\n"
");\n"
"ALTER TABLE chute.live ADD COLUMN IF NOT EXISTS unique_key text COLLATE \"C\";\n"
"ALTER TABLE chute.payloads ADD COLUMN IF NOT EXISTS unique_key text"
" COLLATE \"C\";\n"
"CREATE OR REPLACE FUNCTION chute.unique_free() RETURNS trigger"
" LANGUAGE plpgsql AS $f$\n"
"BEGIN\n"
" DELETE FROM chute.unique_keys WHERE queue = OLD.queue"
" AND ukey = OLD.unique_key AND id = OLD.id AND (held_while = 'waiting'"
" OR (TG_OP = 'DELETE' AND held_while = 'active'));\n"
" RETURN NULL;\n"
"END $f$;\n"
"CREATE OR REPLACE TRIGGER live_unique_claimed AFTER UPDATE OF state"
" ON chute.live FOR EACH ROW WHEN (OLD.unique_key IS NOT NULL"
" AND NEW.state = 'cur' AND OLD.state <> 'cur')"
" EXECUTE FUNCTION chute.unique_free();\n"
"CREATE OR REPLACE TRIGGER live_unique_left AFTER DELETE ON chute.live"
" FOR EACH ROW WHEN (OLD.unique_key IS NOT NULL)"
" EXECUTE FUNCTION chute.unique_free();\n";

/*
 * Version 11: recurring jobs (fleet.md, "Recurring jobs").
 * chute.schedules: a row per schedule of a queue, its grid (tick k at the
 * epoch + offset_ms + k * every_ms), its catch-up mode, its payload, when
 * it was declared (since_ms) and the last tick made (last_ms, NULL until
 * the first).  chute.ticks: a row per tick made, its (queue, name,
 * tick_ms) unique, inserted in the transaction that inserts the tick's
 * job (whose ID, NAME@YYYYMMDDTHHMMSS.mmmZ, is unique in the queue too)
 * and moves last_ms, under the schedule row's lock: a tick is made once
 * whatever the number of schedulers.  Ticks older than the last hundred
 * of their schedule are deleted by the pass that makes a new one: last_ms
 * alone keeps those from being made again.  Times are ms since the epoch
 * by the server's clock.  Idempotent, and new tables only: nothing is
 * rewritten.
 */
static const char schema11[] =
"CREATE TABLE IF NOT EXISTS chute.schedules (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  name text COLLATE \"C\" NOT NULL"
" CHECK (name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$'),\n"
"  every_ms bigint NOT NULL CHECK (every_ms BETWEEN 50 AND 316224000000),\n"
"  offset_ms bigint NOT NULL CHECK (offset_ms >= 0 AND offset_ms < every_ms),\n"
"  catch_up text NOT NULL CHECK (catch_up IN ('skip', 'once', 'all')),\n"
"  payload bytea NOT NULL,\n"
"  since_ms bigint NOT NULL,\n"
"  last_ms bigint,\n"
"  PRIMARY KEY (queue, name)\n"
");\n"
"CREATE TABLE IF NOT EXISTS chute.ticks (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  name text COLLATE \"C\" NOT NULL,\n"
"  tick_ms bigint NOT NULL,\n"
"  id text COLLATE \"C\" NOT NULL,\n"
"  made timestamptz NOT NULL DEFAULT now(),\n"
"  PRIMARY KEY (queue, name, tick_ms),\n"
"  FOREIGN KEY (queue, name) REFERENCES chute.schedules ON DELETE CASCADE\n"
");\n";
_Static_assert(TICK_EVERY_MAX == 316224000000LL, "schema11 says 3660 days");
_Static_assert(TICK_EVERY_MIN == 50, "schema11 says 50 ms");

/*
 * Version 12: dependencies (issue 37; fleet.md, "Dependencies").  A job
 * submitted with --after waits in chute.live in the state 'wait', with
 * waiting, the number of its jobs not ended yet, and after_run, whether
 * it runs when one of them fails (--after-failed run).  chute.after has
 * an edge per job waited for, settled once, when that job leaves
 * chute.live (its end: an outcome, a cancel; every DELETE from chute.live
 * is one), by the statement trigger live_after_ended, in the transaction
 * of that end: the dependents' counts go down, one that reaches 0 moves
 * to new (and the workers are told), one whose job failed moves to
 * chute.finished, failed, naming it, and its own dependents are settled
 * in turn (the trigger fires for that DELETE too).  Nothing polls, and a
 * worker killed before its outcome commits changes nothing.  The edges
 * go with the waiting job's payload (purge), by the foreign key's
 * cascade.  chute.submit_after is submit's one statement.  Idempotent,
 * independent of versions 8, 9, 10 and 11.
 */
static const char schema12[] =
"DO $$ BEGIN\n"
" IF NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'live_state'"
" AND conrelid = 'chute.live'::regclass"
" AND pg_get_constraintdef(oid) LIKE '%''wait''%') THEN\n"
"  ALTER TABLE chute.live DROP CONSTRAINT IF EXISTS jobs_state_check,"
" DROP CONSTRAINT IF EXISTS live_state;\n"
"  ALTER TABLE chute.live ADD CONSTRAINT live_state"
" CHECK (state IN ('wait', 'new', 'cur', 'defer'));\n"
" END IF;\n"
"END $$;\n"
"ALTER TABLE chute.live ADD COLUMN IF NOT EXISTS waiting integer,"
" ADD COLUMN IF NOT EXISTS after_run boolean;\n"
/* The views' count of the waiting jobs (pg_view.c): a range of its own. */
"CREATE INDEX IF NOT EXISTS live_wait ON chute.live (queue, id)"
" WHERE state = 'wait';\n"
"CREATE TABLE IF NOT EXISTS chute.after (\n"
"  queue text COLLATE \"C\" NOT NULL,\n"
"  id text COLLATE \"C\" NOT NULL,\n"
"  after_id text COLLATE \"C\" NOT NULL,\n"
"  settled boolean NOT NULL DEFAULT false,\n"
"  run boolean NOT NULL DEFAULT false,\n"
"  PRIMARY KEY (queue, id, after_id),\n"
"  FOREIGN KEY (queue, id) REFERENCES chute.payloads (queue, id)"
" ON DELETE CASCADE\n"
");\n"
/* The edges not settled, by the job waited for: the trigger's one probe. */
"CREATE INDEX IF NOT EXISTS after_pending ON chute.after (queue, after_id)"
" WHERE NOT settled;\n"
/*
 * How a job that left chute.live ended: its row in chute.finished, or,
 * for a queue that keeps one state 0 (version 9: not in chute.finished),
 * that state; 'gone' when both are kept 0 (it cannot be told).
 */
"CREATE OR REPLACE FUNCTION chute.after_end(q text, j text) RETURNS text"
" LANGUAGE sql STABLE AS $f$\n"
" SELECT coalesce((SELECT state FROM chute.finished WHERE queue = q"
" AND id = j), (SELECT CASE WHEN keep_done = 0 AND keep_failed IS DISTINCT"
" FROM 0 THEN 'done' WHEN keep_failed = 0 AND keep_done IS DISTINCT FROM 0"
" THEN 'failed' END FROM chute.queues WHERE queue = q), 'gone')\n"
"$f$;\n"
"CREATE OR REPLACE FUNCTION chute.after_ended() RETURNS trigger"
" LANGUAGE plpgsql AS $f$\n"
"DECLARE r record; st text; k text;\n"
"BEGIN\n"
/* No edge waits: an end costs one probe of an empty index. */
" IF NOT EXISTS (SELECT FROM chute.after WHERE NOT settled) THEN\n"
"  RETURN NULL;\n"
" END IF;\n"
/* Each edge once; the dependents in order of their keys (no deadlock
 * between two ends that share them). */
" FOR r IN WITH e AS (UPDATE chute.after a SET settled = true FROM ended o"
" WHERE a.queue = o.queue AND a.after_id = o.id AND NOT a.settled"
" RETURNING a.queue, a.id, a.after_id)"
" SELECT e.queue, e.id, count(*)::integer AS n, min(e.after_id) FILTER"
" (WHERE chute.after_end(e.queue, e.after_id) <> 'done') AS bad"
" FROM e GROUP BY e.queue, e.id ORDER BY e.queue, e.id\n"
" LOOP\n"
"  UPDATE chute.live SET waiting = waiting - r.n,"
" state = CASE WHEN waiting - r.n <= 0 THEN 'new' ELSE 'wait' END,"
" run_at = CASE WHEN waiting - r.n <= 0 THEN now() ELSE run_at END"
" WHERE queue = r.queue AND id = r.id AND state = 'wait'"
" AND (r.bad IS NULL OR after_run) RETURNING state, key INTO st, k;\n"
"  IF FOUND THEN\n"
/* A keyed job came in parked (version 8): admitted now if its key has room. */
"   IF st = 'new' AND k IS NOT NULL THEN\n"
"    PERFORM chute.keys_lock(r.queue);\n"
"    PERFORM chute.key_admit(r.queue, k);\n"
"   END IF;\n"
"   IF st = 'new' THEN PERFORM pg_notify('" PG_CHANNEL "', r.queue); END IF;\n"
"  ELSIF r.bad IS NOT NULL THEN\n"
"   WITH g AS (DELETE FROM chute.live WHERE queue = r.queue AND id = r.id"
" AND state = 'wait' RETURNING *)"
" INSERT INTO chute.finished (" PG_FINISHED_COLS ") SELECT queue, id,"
" 'failed', now(), attempts, 'dependency ' || CASE"
" chute.after_end(r.queue, r.bad) WHEN 'failed' THEN 'failed: '"
" ELSE 'is gone (not kept or purged): ' END || r.bad, size, created,"
" claimed, priority, key FROM g;\n"
"  END IF;\n"
" END LOOP;\n"
" RETURN NULL;\n"
"END $f$;\n"
"CREATE OR REPLACE TRIGGER live_after_ended AFTER DELETE ON chute.live"
" REFERENCING OLD TABLE AS ended FOR EACH STATEMENT"
" EXECUTE FUNCTION chute.after_ended();\n"
/*
 * A job with edges back in chute.live as 'wait' with no count (chute
 * retry: pg_retry_job) waits again: its edges looked at afresh, as
 * chute.submit_after does, after the statement that put it there.
 */
"CREATE OR REPLACE FUNCTION chute.after_again() RETURNS trigger"
" LANGUAGE plpgsql AS $f$\n"
"DECLARE lv text[]; bad text; r boolean;\n"
"BEGIN\n"
" SELECT coalesce(array_agg(id), '{}') INTO lv FROM (SELECT l.id FROM"
" chute.live l JOIN chute.after a ON a.queue = l.queue AND a.after_id = l.id"
" WHERE a.queue = NEW.queue AND a.id = NEW.id ORDER BY l.id"
" FOR KEY SHARE OF l) x;\n"
" UPDATE chute.after SET settled = NOT after_id = ANY (lv)"
" WHERE queue = NEW.queue AND id = NEW.id;\n"
" SELECT bool_or(a.run), min(a.after_id) FILTER (WHERE NOT a.after_id ="
" ANY (lv) AND chute.after_end(a.queue, a.after_id) <> 'done')"
" INTO r, bad FROM chute.after a WHERE a.queue = NEW.queue"
" AND a.id = NEW.id;\n"
" IF bad IS NOT NULL AND NOT r THEN\n"
"  WITH g AS (DELETE FROM chute.live WHERE queue = NEW.queue"
" AND id = NEW.id RETURNING *)"
" INSERT INTO chute.finished (" PG_FINISHED_COLS ") SELECT queue, id,"
" 'failed', now(), attempts, 'dependency ' || CASE"
" chute.after_end(NEW.queue, bad) WHEN 'failed' THEN 'failed: '"
" ELSE 'is gone (not kept or purged): ' END || bad, size, created,"
" claimed, priority, key FROM g;\n"
" ELSE\n"
"  UPDATE chute.live SET waiting = cardinality(lv), after_run = r,"
" state = CASE WHEN cardinality(lv) = 0 THEN 'new' ELSE 'wait' END,"
" run_at = now() WHERE queue = NEW.queue AND id = NEW.id;\n"
"  IF cardinality(lv) = 0 THEN\n"
"   IF NEW.key IS NOT NULL THEN\n"
"    PERFORM chute.keys_lock(NEW.queue);\n"
"    PERFORM chute.key_admit(NEW.queue, NEW.key);\n"
"   END IF;\n"
"   PERFORM pg_notify('" PG_CHANNEL "', NEW.queue);\n"
"  END IF;\n"
" END IF;\n"
" RETURN NULL;\n"
"END $f$;\n"
"CREATE OR REPLACE TRIGGER live_after_again AFTER INSERT ON chute.live"
" FOR EACH ROW WHEN (NEW.state = 'wait' AND NEW.waiting IS NULL)"
" EXECUTE FUNCTION chute.after_again();\n"
/*
 * submit --after, one call: 'unknown ID' (nothing written: not a job of
 * the queue), 'exists', or the state the job starts in: wait, new (each
 * of its jobs ended), failed (one failed, not --after-failed run).  The
 * jobs waited for that are live are locked FOR KEY SHARE, in order,
 * before they are counted: a claim and a renewal go on, but the DELETE
 * that ends one waits for this commit, and its trigger then sees these
 * edges.  One that left chute.live before the lock is counted ended.
 */
"DROP FUNCTION IF EXISTS chute.submit_after(text, text, bytea, text[],"
" boolean);\n"
"CREATE OR REPLACE FUNCTION chute.submit_after(q text, j text, b bytea,"
" deps text[], run boolean, prio smallint, k text) RETURNS text"
" LANGUAGE plpgsql AS $f$\n"
"DECLARE unknown text; lv text[]; bad text; st text;\n"
"BEGIN\n"
" SELECT d INTO unknown FROM unnest(deps) d WHERE NOT EXISTS (SELECT FROM"
" chute.payloads p WHERE p.queue = q AND p.id = d) LIMIT 1;\n"
" IF unknown IS NOT NULL THEN RETURN 'unknown ' || unknown; END IF;\n"
" SELECT coalesce(array_agg(id), '{}') INTO lv FROM (SELECT id FROM"
" chute.live WHERE queue = q AND id = ANY (deps) ORDER BY id"
" FOR KEY SHARE) x;\n"
" SELECT min(d) INTO bad FROM (SELECT DISTINCT d FROM unnest(deps) d) x"
" WHERE NOT d = ANY (lv) AND chute.after_end(q, d) <> 'done';\n"
" INSERT INTO chute.payloads (queue, id, body) VALUES (q, j, b)"
" ON CONFLICT DO NOTHING;\n"
" IF NOT FOUND THEN RETURN 'exists'; END IF;\n"
" INSERT INTO chute.after (queue, id, after_id, settled, run) SELECT"
" DISTINCT q, j, d, NOT d = ANY (lv), run FROM unnest(deps) d;\n"
" IF bad IS NOT NULL AND NOT run THEN\n"
"  INSERT INTO chute.finished (" PG_FINISHED_COLS ") VALUES (q, j,"
" 'failed', now(), 0, 'dependency ' || CASE chute.after_end(q, bad) WHEN"
" 'failed' THEN 'failed: ' ELSE 'is gone (not kept or purged): ' END ||"
" bad, octet_length(b), now(), NULL, prio, k);\n"
"  RETURN 'failed';\n"
" END IF;\n"
" st := CASE WHEN cardinality(lv) = 0 THEN 'new' ELSE 'wait' END;\n"
" INSERT INTO chute.live (queue, id, state, run_at, size, waiting,"
" after_run, priority, key) VALUES (q, j, st, now(), octet_length(b),"
" cardinality(lv), run, prio, k);\n"
" IF st = 'new' THEN PERFORM pg_notify('" PG_CHANNEL "', q); END IF;\n"
" RETURN st;\n"
"END $f$;\n";

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
	    pg_cmd(pg, schema8, 0, NULL) == -1 ||
	    pg_cmd(pg, schema9, 0, NULL) == -1 ||
	    pg_cmd(pg, schema10, 0, NULL) == -1 ||
	    pg_cmd(pg, schema11, 0, NULL) == -1 ||
	    pg_cmd(pg, schema12, 0, NULL) == -1 ||
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
