-- tests/data/schema-v12.sql: a database at schema version 12 (the release
-- before version 13, commit 4e8a546), made by that release's chute: `chute
-- init URL`, then job a claimed by a worker killed with SIGKILL under a 2 s
-- lease (long run out), w waiting for a (--after-failed run), w2 waiting for
-- a, d deferred to 2099, u with unique key u1, k with key kk and priority
-- 5, the limit kk max 1 and the schedule s1 every hour; dumped by pg_dump 15
-- (--schema=chute --inserts --no-owner --no-privileges --no-comments, its
-- \restrict lines and comments left out).  check_pgsql.c loads it into an
-- empty database to test the upgrade to version 13 by `chute init URL`.

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

CREATE SCHEMA chute;

CREATE FUNCTION chute.after_again() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE lv text[]; bad text; r boolean;
BEGIN
 SELECT coalesce(array_agg(id), '{}') INTO lv FROM (SELECT l.id FROM chute.live l JOIN chute.after a ON a.queue = l.queue AND a.after_id = l.id WHERE a.queue = NEW.queue AND a.id = NEW.id ORDER BY l.id FOR KEY SHARE OF l) x;
 UPDATE chute.after SET settled = NOT after_id = ANY (lv) WHERE queue = NEW.queue AND id = NEW.id;
 SELECT bool_or(a.run), min(a.after_id) FILTER (WHERE NOT a.after_id = ANY (lv) AND chute.after_end(a.queue, a.after_id) <> 'done') INTO r, bad FROM chute.after a WHERE a.queue = NEW.queue AND a.id = NEW.id;
 IF bad IS NOT NULL AND NOT r THEN
  WITH g AS (DELETE FROM chute.live WHERE queue = NEW.queue AND id = NEW.id RETURNING *) INSERT INTO chute.finished (queue, id, state, run_at, attempts, last, size, created, claimed, priority, key) SELECT queue, id, 'failed', now(), attempts, 'dependency ' || CASE chute.after_end(NEW.queue, bad) WHEN 'failed' THEN 'failed: ' ELSE 'is gone (not kept or purged): ' END || bad, size, created, claimed, priority, key FROM g;
 ELSE
  UPDATE chute.live SET waiting = cardinality(lv), after_run = r, state = CASE WHEN cardinality(lv) = 0 THEN 'new' ELSE 'wait' END, run_at = now() WHERE queue = NEW.queue AND id = NEW.id;
  IF cardinality(lv) = 0 THEN
   IF NEW.key IS NOT NULL THEN
    PERFORM chute.keys_lock(NEW.queue);
    PERFORM chute.key_admit(NEW.queue, NEW.key);
   END IF;
   PERFORM pg_notify('chute', NEW.queue);
  END IF;
 END IF;
 RETURN NULL;
END $$;

CREATE FUNCTION chute.after_end(q text, j text) RETURNS text
    LANGUAGE sql STABLE
    AS $$
 SELECT coalesce((SELECT state FROM chute.finished WHERE queue = q AND id = j), (SELECT CASE WHEN keep_done = 0 AND keep_failed IS DISTINCT FROM 0 THEN 'done' WHEN keep_failed = 0 AND keep_done IS DISTINCT FROM 0 THEN 'failed' END FROM chute.queues WHERE queue = q), 'gone')
$$;

CREATE FUNCTION chute.after_ended() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE r record; st text; k text;
BEGIN
 IF NOT EXISTS (SELECT FROM chute.after WHERE NOT settled) THEN
  RETURN NULL;
 END IF;
 FOR r IN WITH e AS (UPDATE chute.after a SET settled = true FROM ended o WHERE a.queue = o.queue AND a.after_id = o.id AND NOT a.settled RETURNING a.queue, a.id, a.after_id) SELECT e.queue, e.id, count(*)::integer AS n, min(e.after_id) FILTER (WHERE chute.after_end(e.queue, e.after_id) <> 'done') AS bad FROM e GROUP BY e.queue, e.id ORDER BY e.queue, e.id
 LOOP
  UPDATE chute.live SET waiting = waiting - r.n, state = CASE WHEN waiting - r.n <= 0 THEN 'new' ELSE 'wait' END, run_at = CASE WHEN waiting - r.n <= 0 THEN now() ELSE run_at END WHERE queue = r.queue AND id = r.id AND state = 'wait' AND (r.bad IS NULL OR after_run) RETURNING state, key INTO st, k;
  IF FOUND THEN
   IF st = 'new' AND k IS NOT NULL THEN
    PERFORM chute.keys_lock(r.queue);
    PERFORM chute.key_admit(r.queue, k);
   END IF;
   IF st = 'new' THEN PERFORM pg_notify('chute', r.queue); END IF;
  ELSIF r.bad IS NOT NULL THEN
   WITH g AS (DELETE FROM chute.live WHERE queue = r.queue AND id = r.id AND state = 'wait' RETURNING *) INSERT INTO chute.finished (queue, id, state, run_at, attempts, last, size, created, claimed, priority, key) SELECT queue, id, 'failed', now(), attempts, 'dependency ' || CASE chute.after_end(r.queue, r.bad) WHEN 'failed' THEN 'failed: ' ELSE 'is gone (not kept or purged): ' END || r.bad, size, created, claimed, priority, key FROM g;
  END IF;
 END LOOP;
 RETURN NULL;
END $$;

CREATE FUNCTION chute.claim_limited(q text, want integer, w text, lease_ms bigint, fifo boolean) RETURNS TABLE(id text, token bigint, attempts integer, body bytea)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
 DECLARE v timestamptz := clock_timestamp(); room integer := want; amax integer := 0; arn integer := 0; arms bigint := 0; n integer; krates boolean; alltok tid[] := '{}'; take tid[] := '{}'; dry text[] := '{}'; cur refcursor; c record; kr record; BEGIN
  IF EXISTS (SELECT FROM chute.queues x WHERE x.queue = q AND x.paused) THEN RETURN; END IF;
  SELECT l.max, l.rate_n, l.rate_ms INTO amax, arn, arms FROM chute.limits l WHERE l.queue = q AND l.scope = 'all';
  IF coalesce(amax, 0) > 0 THEN
   PERFORM pg_advisory_xact_lock(7310288, hashtext(q));
   SELECT amax - count(*) INTO n FROM chute.live l WHERE l.queue = q AND l.state = 'cur';
   room := least(room, n);
  END IF;
  IF coalesce(arn, 0) > 0 AND room > 0 THEN
   alltok := chute.tokens_take(q, 'all', '', arn, arms, room, v);
   room := least(room, cardinality(alltok));
  END IF;
  IF room <= 0 THEN RETURN; END IF;
  krates := EXISTS (SELECT FROM chute.limits l WHERE l.queue = q AND l.scope <> 'all' AND l.rate_n > 0);
  IF fifo THEN
   OPEN cur FOR WITH RECURSIVE lv(p) AS ((SELECT l.priority FROM chute.live l WHERE l.queue = q AND l.state IN ('new', 'defer') AND NOT l.parked ORDER BY l.priority DESC LIMIT 1) UNION ALL SELECT (SELECT l.priority FROM chute.live l WHERE l.queue = q AND l.state IN ('new', 'defer') AND NOT l.parked AND l.priority < lv.p ORDER BY l.priority DESC LIMIT 1) FROM lv WHERE lv.p IS NOT NULL) SELECT x.ctid, x.key FROM lv CROSS JOIN LATERAL (SELECT l.ctid, l.key, l.run_at, l.id FROM chute.live l WHERE l.queue = q AND l.state IN ('new', 'defer') AND NOT l.parked AND l.priority = lv.p AND l.run_at <= now() ORDER BY l.priority DESC, l.run_at, l.id LIMIT want * 4 FOR UPDATE SKIP LOCKED) x ORDER BY x.run_at, x.id;
  ELSE
   OPEN cur FOR SELECT l.ctid, l.key FROM chute.live l WHERE l.queue = q AND l.state IN ('new', 'defer') AND NOT l.parked AND l.run_at <= now() ORDER BY l.priority DESC, l.run_at, l.id FOR UPDATE SKIP LOCKED;
  END IF;
  LOOP
   FETCH cur INTO c;
   EXIT WHEN NOT FOUND OR cardinality(take) >= room;
   IF krates AND c.key IS NOT NULL THEN
    CONTINUE WHEN c.key = ANY (dry);
    SELECT l.rate_n, l.rate_ms INTO kr FROM chute.limits l WHERE l.queue = q AND ((l.scope = 'key' AND l.key = c.key) OR l.scope = 'default') ORDER BY l.scope = 'key' DESC LIMIT 1;
    IF FOUND AND kr.rate_n > 0 AND cardinality(chute.tokens_take(q, 'key', c.key, kr.rate_n, kr.rate_ms, 1, v)) = 0 THEN
     dry := dry || c.key;
     CONTINUE;
    END IF;
   END IF;
   take := take || c.ctid;
  END LOOP;
  CLOSE cur;
  IF cardinality(alltok) > cardinality(take) THEN
   UPDATE chute.tokens x SET free_at = x.prev WHERE x.ctid = ANY (alltok[cardinality(take) + 1:]);
  END IF;
  RETURN QUERY WITH cl AS (UPDATE chute.live j SET state = 'cur', attempts = j.attempts + 1, token = nextval('chute.fence'), worker = w, lease_until = now() + lease_ms * interval '1 millisecond', cancel = false, claimed = v WHERE j.ctid = ANY (take) AND j.queue = q AND j.state IN ('new', 'defer') AND NOT j.parked RETURNING j.id, j.token, j.attempts, j.run_at, j.priority) SELECT cl.id, cl.token, cl.attempts, (SELECT p.body FROM chute.payloads p WHERE p.queue = q AND p.id = cl.id) FROM cl ORDER BY CASE WHEN fifo THEN 0 ELSE -cl.priority END, cl.run_at, cl.id;
 END $$;

CREATE FUNCTION chute.key_admit(q text, k text) RETURNS integer
    LANGUAGE plpgsql
    AS $$ DECLARE cap integer := chute.key_cap(q, k); room integer; n integer; BEGIN
  SELECT CASE WHEN cap IS NULL THEN parked ELSE least(parked, cap - admitted) END INTO room FROM chute.keys WHERE queue = q AND key = k;
  IF room IS NULL OR room <= 0 THEN RETURN 0; END IF;
  UPDATE chute.live SET parked = false WHERE ctid = ANY (ARRAY(SELECT ctid FROM chute.live WHERE queue = q AND key = k AND parked AND run_at <= now() AND state IN ('new', 'defer') ORDER BY priority DESC, run_at, id LIMIT room FOR UPDATE SKIP LOCKED)) AND parked;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN UPDATE chute.keys SET admitted = admitted + n, parked = parked - n WHERE queue = q AND key = k;
   PERFORM pg_notify('chute', q); END IF;
  RETURN n;
 END $$;

CREATE FUNCTION chute.key_back() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ DECLARE cap integer; a integer; BEGIN
  PERFORM chute.keys_lock(NEW.queue);
  SELECT admitted - 1 INTO a FROM chute.keys WHERE queue = NEW.queue AND key = NEW.key;
  cap := chute.key_cap(NEW.queue, NEW.key);
  NEW.parked := NEW.run_at > now() OR (cap IS NOT NULL AND a >= cap);
  UPDATE chute.keys SET admitted = a + CASE WHEN NEW.parked THEN 0 ELSE 1 END, parked = parked + CASE WHEN NEW.parked THEN 1 ELSE 0 END WHERE queue = NEW.queue AND key = NEW.key;
  IF NEW.parked THEN PERFORM chute.key_admit(NEW.queue, NEW.key); END IF;
  RETURN NEW;
 END $$;

CREATE FUNCTION chute.key_cap(q text, k text) RETURNS integer
    LANGUAGE sql STABLE
    AS $$ SELECT least(nullif(r.max, 0), nullif(r.rate_n, 0)) FROM (SELECT max, rate_n FROM chute.limits WHERE queue = q AND ((scope = 'key' AND key = k) OR scope = 'default') ORDER BY scope = 'key' DESC LIMIT 1) r $$;

CREATE FUNCTION chute.key_in() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN NEW.parked := true; RETURN NEW; END $$;

CREATE FUNCTION chute.key_out() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN
  PERFORM chute.keys_lock(OLD.queue);
  UPDATE chute.keys SET admitted = admitted - CASE WHEN OLD.parked THEN 0 ELSE 1 END, parked = parked - CASE WHEN OLD.parked THEN 1 ELSE 0 END WHERE queue = OLD.queue AND key = OLD.key;
  IF NOT OLD.parked THEN PERFORM chute.key_admit(OLD.queue, OLD.key); END IF;
  RETURN OLD;
 END $$;

CREATE FUNCTION chute.keys_due(q text) RETURNS integer
    LANGUAGE plpgsql
    AS $$ DECLARE k text; n integer := 0; BEGIN
  IF NOT EXISTS (SELECT FROM chute.keys WHERE queue = q AND (parked > 0 OR admitted = 0)) THEN RETURN 0; END IF;
  PERFORM chute.keys_lock(q);
  DELETE FROM chute.keys WHERE queue = q AND admitted = 0 AND parked = 0;
  FOR k IN SELECT key FROM chute.keys WHERE queue = q AND parked > 0 LOOP
   n := n + chute.key_admit(q, k);
  END LOOP;
  RETURN n;
 END $$;

CREATE FUNCTION chute.keys_in() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ DECLARE r record; BEGIN
  FOR r IN SELECT queue, key, count(*) AS n FROM nt WHERE key IS NOT NULL GROUP BY queue, key ORDER BY queue, key LOOP
   PERFORM chute.keys_lock(r.queue);
   INSERT INTO chute.keys AS x (queue, key, parked) VALUES (r.queue, r.key, r.n) ON CONFLICT (queue, key) DO UPDATE SET parked = x.parked + r.n;
   PERFORM chute.key_admit(r.queue, r.key);
  END LOOP;
  RETURN NULL;
 END $$;

CREATE FUNCTION chute.keys_lock(q text) RETURNS void
    LANGUAGE sql
    AS $$ SELECT pg_advisory_xact_lock(7310287, hashtext(q)) $$;

CREATE FUNCTION chute.keys_recap(q text, k text) RETURNS integer
    LANGUAGE plpgsql
    AS $$ DECLARE r record; n integer; m integer := 0; BEGIN
  PERFORM chute.keys_lock(q);
  FOR r IN SELECT key, admitted, chute.key_cap(q, key) AS cap FROM chute.keys WHERE queue = q AND (k IS NULL OR key = k) LOOP
   m := m + 1;
   IF r.cap IS NOT NULL AND r.admitted > r.cap THEN
    UPDATE chute.live SET parked = true WHERE ctid = ANY (ARRAY(SELECT ctid FROM chute.live WHERE queue = q AND key = r.key AND state IN ('new', 'defer') AND NOT parked FOR UPDATE SKIP LOCKED)) AND NOT parked AND state IN ('new', 'defer');
    GET DIAGNOSTICS n = ROW_COUNT;
    UPDATE chute.keys SET admitted = admitted - n, parked = parked + n WHERE queue = q AND key = r.key;
   END IF;
   PERFORM chute.key_admit(q, r.key);
  END LOOP;
  RETURN m;
 END $$;

CREATE FUNCTION chute.submit_after(q text, j text, b bytea, deps text[], run boolean, prio smallint, k text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE unknown text; lv text[]; bad text; st text;
BEGIN
 SELECT d INTO unknown FROM unnest(deps) d WHERE NOT EXISTS (SELECT FROM chute.payloads p WHERE p.queue = q AND p.id = d) LIMIT 1;
 IF unknown IS NOT NULL THEN RETURN 'unknown ' || unknown; END IF;
 SELECT coalesce(array_agg(id), '{}') INTO lv FROM (SELECT id FROM chute.live WHERE queue = q AND id = ANY (deps) ORDER BY id FOR KEY SHARE) x;
 SELECT min(d) INTO bad FROM (SELECT DISTINCT d FROM unnest(deps) d) x WHERE NOT d = ANY (lv) AND chute.after_end(q, d) <> 'done';
 INSERT INTO chute.payloads (queue, id, body) VALUES (q, j, b) ON CONFLICT DO NOTHING;
 IF NOT FOUND THEN RETURN 'exists'; END IF;
 INSERT INTO chute.after (queue, id, after_id, settled, run) SELECT DISTINCT q, j, d, NOT d = ANY (lv), run FROM unnest(deps) d;
 IF bad IS NOT NULL AND NOT run THEN
  INSERT INTO chute.finished (queue, id, state, run_at, attempts, last, size, created, claimed, priority, key) VALUES (q, j, 'failed', now(), 0, 'dependency ' || CASE chute.after_end(q, bad) WHEN 'failed' THEN 'failed: ' ELSE 'is gone (not kept or purged): ' END || bad, octet_length(b), now(), NULL, prio, k);
  RETURN 'failed';
 END IF;
 st := CASE WHEN cardinality(lv) = 0 THEN 'new' ELSE 'wait' END;
 INSERT INTO chute.live (queue, id, state, run_at, size, waiting, after_run, priority, key) VALUES (q, j, st, now(), octet_length(b), cardinality(lv), run, prio, k);
 IF st = 'new' THEN PERFORM pg_notify('chute', q); END IF;
 RETURN st;
END $$;

CREATE FUNCTION chute.tokens_take(q text, sc text, k text, rn integer, rms bigint, want integer, v timestamp with time zone) RETURNS tid[]
    LANGUAGE plpgsql
    AS $$ DECLARE got tid[]; BEGIN
  IF NOT EXISTS (SELECT FROM chute.tokens WHERE queue = q AND scope = sc AND key = k AND n = rn) THEN
   INSERT INTO chute.tokens (queue, scope, key, n) SELECT q, sc, k, g FROM generate_series(1, rn) g ON CONFLICT DO NOTHING;
  END IF;
  WITH t AS (SELECT ctid FROM chute.tokens WHERE queue = q AND scope = sc AND key = k AND n <= rn AND free_at <= v ORDER BY n LIMIT want FOR UPDATE SKIP LOCKED), u AS (UPDATE chute.tokens x SET prev = x.free_at, free_at = v + rms * interval '1 millisecond' FROM t WHERE x.ctid = t.ctid AND x.free_at <= v RETURNING x.ctid) SELECT coalesce(array_agg(ctid), '{}') INTO got FROM u;
  RETURN got;
 END $$;

CREATE FUNCTION chute.unique_free() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
 DELETE FROM chute.unique_keys WHERE queue = OLD.queue AND ukey = OLD.unique_key AND id = OLD.id AND (held_while = 'waiting' OR (TG_OP = 'DELETE' AND held_while = 'active'));
 RETURN NULL;
END $$;

SET default_tablespace = '';

SET default_table_access_method = heap;

CREATE TABLE chute.after (
    queue text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    after_id text NOT NULL COLLATE pg_catalog."C",
    settled boolean DEFAULT false NOT NULL,
    run boolean DEFAULT false NOT NULL
);

CREATE SEQUENCE chute.fence
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE chute.finished (
    queue text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    state text NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last text DEFAULT ''::text NOT NULL,
    size bigint NOT NULL,
    created timestamp with time zone DEFAULT now() NOT NULL,
    claimed timestamp with time zone,
    log bytea,
    priority smallint DEFAULT 0 NOT NULL,
    key text COLLATE pg_catalog."C",
    CONSTRAINT finished_state_check CHECK ((state = ANY (ARRAY['done'::text, 'failed'::text]))),
    CONSTRAINT finished_times_finite CHECK ((isfinite(run_at) AND isfinite(created) AND ((claimed IS NULL) OR isfinite(claimed))))
)
WITH (autovacuum_analyze_scale_factor='0.02');

CREATE TABLE chute.logs (
    queue text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    seq bigint NOT NULL,
    body bytea NOT NULL
);

CREATE VIEW chute.job_logs AS
 SELECT logs.queue,
    logs.id,
    logs.seq,
    logs.body
   FROM chute.logs
UNION ALL
 SELECT finished.queue,
    finished.id,
    '9223372036854775807'::bigint AS seq,
    finished.log AS body
   FROM chute.finished
  WHERE (finished.log IS NOT NULL);

CREATE TABLE chute.live (
    queue text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    state text NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last text DEFAULT ''::text NOT NULL,
    token bigint,
    worker text COLLATE pg_catalog."C",
    lease_until timestamp with time zone,
    cancel boolean DEFAULT false NOT NULL,
    size bigint NOT NULL,
    created timestamp with time zone DEFAULT now() NOT NULL,
    claimed timestamp with time zone,
    priority smallint DEFAULT 0 NOT NULL,
    key text COLLATE pg_catalog."C",
    parked boolean DEFAULT false NOT NULL,
    unique_key text COLLATE pg_catalog."C",
    waiting integer,
    after_run boolean,
    CONSTRAINT jobs_id_valid CHECK (((octet_length(id) >= 1) AND (octet_length(id) <= 200) AND ("left"(id, 1) <> '.'::text) AND (id !~ '[/\x01-\x1f\x7f]'::text))),
    CONSTRAINT live_key CHECK ((((octet_length(key) >= 1) AND (octet_length(key) <= 64)) AND (key ~ '^[-A-Za-z0-9._:@+]+$'::text))),
    CONSTRAINT live_priority CHECK (((priority >= '-100'::integer) AND (priority <= 100))),
    CONSTRAINT live_state CHECK ((state = ANY (ARRAY['wait'::text, 'new'::text, 'cur'::text, 'defer'::text]))),
    CONSTRAINT live_times_finite CHECK ((isfinite(run_at) AND isfinite(created) AND ((claimed IS NULL) OR isfinite(claimed)) AND ((lease_until IS NULL) OR isfinite(lease_until))))
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='2000', autovacuum_vacuum_insert_scale_factor='0', autovacuum_vacuum_insert_threshold='10000', autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_cost_delay='0');

CREATE VIEW chute.jobs AS
 SELECT live.queue,
    live.id,
    live.state,
    live.run_at,
    live.attempts,
    live.last,
    live.token,
    live.worker,
    live.lease_until,
    live.cancel,
    live.size,
    live.created,
    live.claimed,
    live.priority,
    live.key
   FROM chute.live
UNION ALL
 SELECT finished.queue,
    finished.id,
    finished.state,
    finished.run_at,
    finished.attempts,
    finished.last,
    NULL::bigint AS token,
    NULL::text AS worker,
    NULL::timestamp with time zone AS lease_until,
    false AS cancel,
    finished.size,
    finished.created,
    finished.claimed,
    finished.priority,
    finished.key
   FROM chute.finished;

CREATE TABLE chute.keys (
    queue text NOT NULL COLLATE pg_catalog."C",
    key text NOT NULL COLLATE pg_catalog."C",
    admitted integer DEFAULT 0 NOT NULL,
    parked integer DEFAULT 0 NOT NULL
)
WITH (fillfactor='50');

CREATE TABLE chute.limits (
    queue text NOT NULL COLLATE pg_catalog."C",
    scope text NOT NULL,
    key text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    max integer DEFAULT 0 NOT NULL,
    rate_n integer DEFAULT 0 NOT NULL,
    rate_ms bigint DEFAULT 0 NOT NULL,
    CONSTRAINT limits_check CHECK ((((scope = 'key'::text) = (key <> ''::text)) AND ((key = ''::text) OR (((octet_length(key) >= 1) AND (octet_length(key) <= 64)) AND (key ~ '^[-A-Za-z0-9._:@+]+$'::text))))),
    CONSTRAINT limits_check1 CHECK ((((rate_ms >= 0) AND (rate_ms <= 86400000)) AND ((rate_n = 0) = (rate_ms = 0)))),
    CONSTRAINT limits_max_check CHECK (((max >= 0) AND (max <= 100000))),
    CONSTRAINT limits_rate_n_check CHECK (((rate_n >= 0) AND (rate_n <= 100000))),
    CONSTRAINT limits_scope_check CHECK ((scope = ANY (ARRAY['key'::text, 'default'::text, 'all'::text])))
);

CREATE SEQUENCE chute.logs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE chute.logs_seq_seq OWNED BY chute.logs.seq;

CREATE TABLE chute.payloads (
    queue text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    body bytea NOT NULL,
    origin text COLLATE pg_catalog."C",
    origin_spool text COLLATE pg_catalog."C",
    origin_id text COLLATE pg_catalog."C",
    origin_birth text COLLATE pg_catalog."C",
    unique_key text COLLATE pg_catalog."C"
);

CREATE TABLE chute.queues (
    queue text NOT NULL COLLATE pg_catalog."C",
    paused boolean DEFAULT false NOT NULL,
    paused_at timestamp with time zone,
    paused_by text,
    limited boolean DEFAULT false NOT NULL,
    keep_done bigint,
    keep_failed bigint,
    CONSTRAINT queues_keep_done_check CHECK ((keep_done >= 0)),
    CONSTRAINT queues_keep_failed_check CHECK ((keep_failed >= 0)),
    CONSTRAINT queues_times_finite CHECK (((paused_at IS NULL) OR isfinite(paused_at)))
);

CREATE TABLE chute.schedules (
    queue text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    every_ms bigint NOT NULL,
    offset_ms bigint NOT NULL,
    catch_up text NOT NULL,
    payload bytea NOT NULL,
    since_ms bigint NOT NULL,
    last_ms bigint,
    CONSTRAINT schedules_catch_up_check CHECK ((catch_up = ANY (ARRAY['skip'::text, 'once'::text, 'all'::text]))),
    CONSTRAINT schedules_check CHECK (((offset_ms >= 0) AND (offset_ms < every_ms))),
    CONSTRAINT schedules_every_ms_check CHECK (((every_ms >= 50) AND (every_ms <= '316224000000'::bigint))),
    CONSTRAINT schedules_name_check CHECK ((name ~ '^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$'::text))
);

CREATE TABLE chute.ticks (
    queue text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C",
    tick_ms bigint NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    made timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE chute.tokens (
    queue text NOT NULL COLLATE pg_catalog."C",
    scope text NOT NULL,
    key text NOT NULL COLLATE pg_catalog."C",
    n integer NOT NULL,
    free_at timestamp with time zone DEFAULT '-infinity'::timestamp with time zone NOT NULL,
    prev timestamp with time zone DEFAULT '-infinity'::timestamp with time zone NOT NULL
)
WITH (fillfactor='50');

CREATE TABLE chute.unique_keys (
    queue text NOT NULL COLLATE pg_catalog."C",
    ukey text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    held_while text NOT NULL,
    CONSTRAINT unique_keys_held_while_check CHECK ((held_while = ANY (ARRAY['active'::text, 'waiting'::text, 'kept'::text]))),
    CONSTRAINT unique_keys_ukey_check CHECK ((ukey ~ '^[A-Za-z0-9._:@+-]{1,64}$'::text))
);

CREATE TABLE chute.version (
    version integer NOT NULL
);

CREATE TABLE chute.workers (
    worker text NOT NULL COLLATE pg_catalog."C",
    queue text NOT NULL COLLATE pg_catalog."C",
    host text NOT NULL,
    pid integer NOT NULL,
    slots integer NOT NULL,
    version text NOT NULL,
    lease_ms bigint NOT NULL,
    started timestamp with time zone DEFAULT now() NOT NULL,
    seen timestamp with time zone DEFAULT now() NOT NULL,
    stopped timestamp with time zone,
    CONSTRAINT workers_times_finite CHECK ((isfinite(started) AND isfinite(seen) AND ((stopped IS NULL) OR isfinite(stopped))))
)
WITH (fillfactor='50');

ALTER TABLE ONLY chute.logs ALTER COLUMN seq SET DEFAULT nextval('chute.logs_seq_seq'::regclass);

INSERT INTO chute.after VALUES ('default', 'w', 'a', false, true);
INSERT INTO chute.after VALUES ('default', 'w2', 'a', false, false);

INSERT INTO chute.keys VALUES ('default', 'kk', 1, 0);

INSERT INTO chute.limits VALUES ('default', 'key', 'kk', 1, 0, 0);

INSERT INTO chute.live VALUES ('default', 'a', 'cur', '2026-12-06 13:23:39.551297+00', 1, '', 1, 'vm:25647', '2026-12-06 13:23:41.571451+00', false, 5, '2026-12-06 13:23:39.551297+00', '2026-12-06 13:23:39.571451+00', 0, NULL, false, NULL, NULL, NULL);
INSERT INTO chute.live VALUES ('default', 'w', 'wait', '2026-12-06 13:23:40.210629+00', 0, '', NULL, NULL, NULL, false, 5, '2026-12-06 13:23:40.210629+00', NULL, 0, NULL, false, NULL, 1, true);
INSERT INTO chute.live VALUES ('default', 'w2', 'wait', '2026-12-06 13:23:40.223183+00', 0, '', NULL, NULL, NULL, false, 5, '2026-12-06 13:23:40.223183+00', NULL, 0, NULL, false, NULL, 1, false);
INSERT INTO chute.live VALUES ('default', 'd', 'defer', '2099-01-01 00:00:00+00', 0, '', NULL, NULL, NULL, false, 5, '2026-12-06 13:23:40.235439+00', NULL, 0, NULL, false, NULL, NULL, NULL);
INSERT INTO chute.live VALUES ('default', 'u,u=u1', 'new', '2026-12-06 13:23:40.245337+00', 0, '', NULL, NULL, NULL, false, 5, '2026-12-06 13:23:40.245337+00', NULL, 0, NULL, false, 'u1', NULL, NULL);
INSERT INTO chute.live VALUES ('default', 'k', 'new', '2026-12-06 13:23:40.256193+00', 0, '', NULL, NULL, NULL, false, 5, '2026-12-06 13:23:40.256193+00', NULL, 5, 'kk', false, NULL, NULL, NULL);

INSERT INTO chute.payloads VALUES ('default', 'a', '\x696e20610a', NULL, NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'w', '\x696e20770a', NULL, NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'w2', '\x696e20770a', NULL, NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'd', '\x696e20610a', NULL, NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'u,u=u1', '\x696e20610a', NULL, NULL, NULL, NULL, 'u1');
INSERT INTO chute.payloads VALUES ('default', 'k', '\x696e20610a', NULL, NULL, NULL, NULL, NULL);

INSERT INTO chute.queues VALUES ('default', false, NULL, NULL, false, NULL, NULL);

INSERT INTO chute.schedules VALUES ('default', 's1', 3600000, 0, 'skip', '\x696e20610a', 1796563420278, NULL);

INSERT INTO chute.unique_keys VALUES ('default', 'u1', 'u,u=u1', 'active');

INSERT INTO chute.version VALUES (12);

INSERT INTO chute.workers VALUES ('vm:25647', 'default', 'vm', 25647, 1, '0.1.0', 2000, '2026-12-06 13:23:39.56761+00', '2026-12-06 13:23:39.56761+00', NULL);

SELECT pg_catalog.setval('chute.fence', 1, true);

SELECT pg_catalog.setval('chute.logs_seq_seq', 1, false);

ALTER TABLE ONLY chute.after
    ADD CONSTRAINT after_pkey PRIMARY KEY (queue, id, after_id);

ALTER TABLE ONLY chute.finished
    ADD CONSTRAINT finished_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.live
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.keys
    ADD CONSTRAINT keys_pkey PRIMARY KEY (queue, key);

ALTER TABLE ONLY chute.limits
    ADD CONSTRAINT limits_pkey PRIMARY KEY (queue, scope, key);

ALTER TABLE ONLY chute.logs
    ADD CONSTRAINT logs_pkey PRIMARY KEY (queue, id, seq);

ALTER TABLE ONLY chute.payloads
    ADD CONSTRAINT payloads_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.queues
    ADD CONSTRAINT queues_pkey PRIMARY KEY (queue);

ALTER TABLE ONLY chute.schedules
    ADD CONSTRAINT schedules_pkey PRIMARY KEY (queue, name);

ALTER TABLE ONLY chute.ticks
    ADD CONSTRAINT ticks_pkey PRIMARY KEY (queue, name, tick_ms);

ALTER TABLE ONLY chute.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (queue, scope, key, n);

ALTER TABLE ONLY chute.unique_keys
    ADD CONSTRAINT unique_keys_pkey PRIMARY KEY (queue, ukey);

ALTER TABLE ONLY chute.unique_keys
    ADD CONSTRAINT unique_keys_queue_id_key UNIQUE (queue, id);

ALTER TABLE ONLY chute.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (worker);

CREATE INDEX after_pending ON chute.after USING btree (queue, after_id) WHERE (NOT settled);

CREATE INDEX finished_at ON chute.finished USING btree (queue, run_at, id);

CREATE INDEX finished_failed ON chute.finished USING btree (queue, run_at) WHERE (state = 'failed'::text);

CREATE INDEX jobs_claimed ON chute.live USING btree (queue, token) WHERE (state = 'cur'::text);

CREATE INDEX jobs_due ON chute.live USING btree (queue, run_at, id) WHERE (state = ANY (ARRAY['new'::text, 'defer'::text]));

CREATE INDEX live_due ON chute.live USING btree (queue, run_at, id) WHERE ((state = ANY (ARRAY['new'::text, 'defer'::text])) AND (NOT parked));

CREATE INDEX live_key ON chute.live USING btree (queue, key) WHERE (key IS NOT NULL);

CREATE INDEX live_parked ON chute.live USING btree (queue, key, priority DESC, run_at, id) WHERE parked;

CREATE INDEX live_ready ON chute.live USING btree (queue, priority DESC, run_at, id) WHERE ((state = ANY (ARRAY['new'::text, 'defer'::text])) AND (NOT parked));

CREATE INDEX live_wait ON chute.live USING btree (queue, id) WHERE (state = 'wait'::text);

CREATE UNIQUE INDEX payloads_origin ON chute.payloads USING btree (origin, origin_spool, origin_id, origin_birth) WHERE (origin IS NOT NULL);

CREATE STATISTICS chute.finished_queue_state (mcv) ON queue, state FROM chute.finished;

CREATE STATISTICS chute.jobs_queue_state (mcv) ON queue, state FROM chute.live;

CREATE TRIGGER live_after_again AFTER INSERT ON chute.live FOR EACH ROW WHEN (((new.state = 'wait'::text) AND (new.waiting IS NULL))) EXECUTE FUNCTION chute.after_again();

CREATE TRIGGER live_after_ended AFTER DELETE ON chute.live REFERENCING OLD TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION chute.after_ended();

CREATE TRIGGER live_key_back BEFORE UPDATE ON chute.live FOR EACH ROW WHEN (((old.key IS NOT NULL) AND (old.state = 'cur'::text) AND (new.state <> 'cur'::text))) EXECUTE FUNCTION chute.key_back();

CREATE TRIGGER live_key_in BEFORE INSERT ON chute.live FOR EACH ROW WHEN ((new.key IS NOT NULL)) EXECUTE FUNCTION chute.key_in();

CREATE TRIGGER live_key_out AFTER DELETE ON chute.live FOR EACH ROW WHEN ((old.key IS NOT NULL)) EXECUTE FUNCTION chute.key_out();

CREATE TRIGGER live_keys_in AFTER INSERT ON chute.live REFERENCING NEW TABLE AS nt FOR EACH STATEMENT EXECUTE FUNCTION chute.keys_in();

CREATE TRIGGER live_unique_claimed AFTER UPDATE OF state ON chute.live FOR EACH ROW WHEN (((old.unique_key IS NOT NULL) AND (new.state = 'cur'::text) AND (old.state <> 'cur'::text))) EXECUTE FUNCTION chute.unique_free();

CREATE TRIGGER live_unique_left AFTER DELETE ON chute.live FOR EACH ROW WHEN ((old.unique_key IS NOT NULL)) EXECUTE FUNCTION chute.unique_free();

ALTER TABLE ONLY chute.after
    ADD CONSTRAINT after_queue_id_fkey FOREIGN KEY (queue, id) REFERENCES chute.payloads(queue, id) ON DELETE CASCADE;

ALTER TABLE ONLY chute.ticks
    ADD CONSTRAINT ticks_queue_name_fkey FOREIGN KEY (queue, name) REFERENCES chute.schedules(queue, name) ON DELETE CASCADE;

ALTER TABLE ONLY chute.unique_keys
    ADD CONSTRAINT unique_keys_queue_id_fkey FOREIGN KEY (queue, id) REFERENCES chute.payloads(queue, id) ON DELETE CASCADE;

