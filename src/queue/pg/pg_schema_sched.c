/*
 * pg_schema_sched.c: the schema's versions 8 to 13, which decide which job
 * runs next and when (priorities, keys and limits; retention; unique
 * keys; recurring jobs; dependencies, and a running job's cancel), each
 * an idempotent block of its own that pg_schema.c's `chute init` runs
 * after version 7's.  fleet.md explains each table, index, trigger and
 * function.
 */
#include "base/chute.h"
#include "base/sched.h"
#include "base/tick.h"
#include "queue/pg/pg.h"

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
const char pg_schema8[] =
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
const char pg_schema9[] =
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
const char pg_schema10[] =
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
const char pg_schema11[] =
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
 * independent of versions 8, 9, 10 and 11.  The trigger and its function
 * are version 13's (they settle through chute.after_settle).
 */
const char pg_schema12[] =
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
 * Version 13: a running job's cancel holds its dependents until its
 * handler has ended (issue 37; fleet.md, "Dependencies").  The cancel
 * ends the job in its own statement, before its worker has stopped the
 * handler: its unsettled edges get held_until, the job's lease_until (the
 * reaper has killed the handler by then, fleet.md "A frozen worker"), and
 * live_after_ended passes over held edges.  The worker releases them as
 * soon as the handler is gone (chute.after_release: its outcome refused,
 * or its prefetched claim dropped), and any worker's recovery releases
 * those whose time has come (chute.after_release_due: the worker died or
 * froze).  A job retried meanwhile keeps its edges, unsettled, for its
 * next end.  So a dependent run anyway (--after-failed run) never starts
 * beside the handler of the job it waited for, as on a spool.
 */
const char pg_schema13[] =
"ALTER TABLE chute.after ADD COLUMN IF NOT EXISTS held_until timestamptz;\n"
"CREATE INDEX IF NOT EXISTS after_held ON chute.after (queue, held_until)"
" WHERE held_until IS NOT NULL AND NOT settled;\n"
/*
 * The edges of the jobs (qs[i], js[i]) that ended, settled, but for
 * held ones: each edge once; the dependents in order of their keys (no
 * deadlock between two ends that share them).
 */
"CREATE OR REPLACE FUNCTION chute.after_settle(qs text[], js text[])"
" RETURNS void LANGUAGE plpgsql AS $f$\n"
"DECLARE r record; st text; k text;\n"
"BEGIN\n"
" FOR r IN WITH e AS (UPDATE chute.after a SET settled = true FROM"
" unnest(qs, js) AS o(queue, id) WHERE a.queue = o.queue"
" AND a.after_id = o.id AND NOT a.settled AND a.held_until IS NULL"
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
"END $f$;\n"
"CREATE OR REPLACE FUNCTION chute.after_ended() RETURNS trigger"
" LANGUAGE plpgsql AS $f$\n"
"BEGIN\n"
/* No edge waits: an end costs one probe of an empty index. */
" IF NOT EXISTS (SELECT FROM chute.after WHERE NOT settled) THEN\n"
"  RETURN NULL;\n"
" END IF;\n"
" PERFORM chute.after_settle(x.qs, x.js) FROM (SELECT array_agg(queue)"
" AS qs, array_agg(id) AS js FROM ended) x;\n"
" RETURN NULL;\n"
"END $f$;\n"
"CREATE OR REPLACE TRIGGER live_after_ended AFTER DELETE ON chute.live"
" REFERENCING OLD TABLE AS ended FOR EACH STATEMENT"
" EXECUTE FUNCTION chute.after_ended();\n"
/*
 * The held edges of jobs js of queue q, released: their handlers are
 * gone.  Those of a job that ended are settled now; a job back in
 * chute.live (retried) keeps them for its next end.  How many edges.
 */
"CREATE OR REPLACE FUNCTION chute.after_release(q text, js text[])"
" RETURNS integer LANGUAGE plpgsql AS $f$\n"
"DECLARE n integer; ended text[];\n"
"BEGIN\n"
" UPDATE chute.after SET held_until = NULL WHERE queue = q"
" AND after_id = ANY (js) AND held_until IS NOT NULL AND NOT settled;\n"
" GET DIAGNOSTICS n = ROW_COUNT;\n"
" IF n = 0 THEN RETURN 0; END IF;\n"
" SELECT coalesce(array_agg(j), '{}') INTO ended FROM unnest(js) j"
" WHERE NOT EXISTS (SELECT FROM chute.live l WHERE l.queue = q"
" AND l.id = j);\n"
" PERFORM chute.after_settle(array_fill(q, ARRAY[cardinality(ended)]),"
" ended);\n"
" RETURN n;\n"
"END $f$;\n"
/* Held edges whose lease has run out (the worker died, or froze). */
"CREATE OR REPLACE FUNCTION chute.after_release_due(q text)"
" RETURNS integer LANGUAGE plpgsql AS $f$\n"
"DECLARE js text[];\n"
"BEGIN\n"
" SELECT array_agg(DISTINCT after_id) INTO js FROM chute.after"
" WHERE queue = q AND held_until IS NOT NULL AND NOT settled"
" AND held_until < now();\n"
" IF js IS NULL THEN RETURN 0; END IF;\n"
" RETURN chute.after_release(q, js);\n"
"END $f$;\n";
