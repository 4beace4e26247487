-- tests/data/schema-v7.sql: a database at schema version 7 (the release
-- before version 8, commit 5efd0ba): tests/data/schema-v6.sql loaded and
-- upgraded by that release's `chute init URL`, then dumped by pg_dump 15
-- (--schema=chute --inserts --no-owner --no-privileges --no-comments, its
-- \restrict lines and comments left out).  The jobs are schema-v6.sql's:
-- n1 and ok1 done and bad1 failed (exit 1), each with its last attempt's
-- log in its row of chute.finished; d1 deferred to 2099; c1 claimed by a
-- worker killed with SIGKILL, under a 2 s lease long run out; fw2
-- forwarded from the spool /tmp/exp/sp (origin "vm"), waiting; two rows
-- of chute.workers and one of chute.queues.  check_pgsql.c loads it into
-- an empty database to test the upgrade to version 8 by `chute init URL`.
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

CREATE SEQUENCE chute.fence
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

SET default_tablespace = '';

SET default_table_access_method = heap;

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
    CONSTRAINT jobs_id_valid CHECK (((octet_length(id) >= 1) AND (octet_length(id) <= 200) AND ("left"(id, 1) <> '.'::text) AND (id !~ '[/\x01-\x1f\x7f]'::text))),
    CONSTRAINT jobs_state_check CHECK ((state = ANY (ARRAY['new'::text, 'cur'::text, 'defer'::text, 'done'::text, 'failed'::text]))),
    CONSTRAINT live_state CHECK ((state = ANY (ARRAY['new'::text, 'cur'::text, 'defer'::text]))),
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
    live.claimed
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
    finished.claimed
   FROM chute.finished;

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
    origin_birth text COLLATE pg_catalog."C"
);

CREATE TABLE chute.queues (
    queue text NOT NULL COLLATE pg_catalog."C",
    paused boolean DEFAULT false NOT NULL,
    paused_at timestamp with time zone,
    paused_by text,
    CONSTRAINT queues_times_finite CHECK (((paused_at IS NULL) OR isfinite(paused_at)))
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

INSERT INTO chute.finished VALUES ('default', 'n1', 'done', '2026-12-06 07:09:34.12147+00', 1, 'exit=0', 2, '2026-12-06 07:09:34.053253+00', '2026-12-06 07:09:34.100814+00', '\x40636875746520323032362d31322d30365430373a30393a33342e3130345a20617474656d70743d312073746172740a6f7574206f66206e310a40636875746520323032362d31322d30365430373a30393a33342e3130375a20617474656d70743d3120657869743d302074696d653d326d730a');
INSERT INTO chute.finished VALUES ('default', 'ok1', 'done', '2026-12-06 07:09:34.12147+00', 1, 'exit=0', 3, '2026-12-06 07:09:34.068261+00', '2026-12-06 07:09:34.100814+00', '\x40636875746520323032362d31322d30365430373a30393a33342e3130375a20617474656d70743d312073746172740a6f7574206f66206f6b310a40636875746520323032362d31322d30365430373a30393a33342e3131355a20617474656d70743d3120657869743d302074696d653d376d730a');
INSERT INTO chute.finished VALUES ('default', 'bad1', 'failed', '2026-12-06 07:09:34.12147+00', 1, 'exit=1', 4, '2026-12-06 07:09:34.082181+00', '2026-12-06 07:09:34.115316+00', '\x40636875746520323032362d31322d30365430373a30393a33342e3131375a20617474656d70743d312073746172740a6f7574206f6620626164310a40636875746520323032362d31322d30365430373a30393a33342e3131395a20617474656d70743d3120657869743d312074696d653d336d730a');

INSERT INTO chute.live VALUES ('default', 'd1', 'defer', '2099-01-01 00:00:00+00', 0, '', NULL, NULL, NULL, false, 2, '2026-12-06 07:09:34.139511+00', NULL);
INSERT INTO chute.live VALUES ('default', 'c1', 'cur', '2026-12-06 07:09:34.168381+00', 1, '', 4, 'vm:15764', '2026-12-06 07:09:36.197012+00', false, 2, '2026-12-06 07:09:34.168381+00', '2026-12-06 07:09:34.197012+00');
INSERT INTO chute.live VALUES ('default', 'fw2', 'new', '2026-12-06 07:09:34.353085+00', 0, '', NULL, NULL, NULL, false, 2, '2026-12-06 07:09:34.353085+00', NULL);

INSERT INTO chute.payloads VALUES ('default', 'n1', '\x6e0a', NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'ok1', '\x6f6b0a', NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'bad1', '\x6261640a', NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'd1', '\x640a', NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'c1', '\x630a', NULL, NULL, NULL, NULL);
INSERT INTO chute.payloads VALUES ('default', 'fw2', '\x660a', 'vm', '/tmp/exp/sp', 'fw2', '10991661:1796540974.331577122');

INSERT INTO chute.queues VALUES ('default', false, NULL, NULL);

INSERT INTO chute.version VALUES (7);

INSERT INTO chute.workers VALUES ('vm:15639', 'default', 'vm', 15639, 1, '0.1.0', 30000, '2026-12-06 07:09:34.097842+00', '2026-12-06 07:09:34.123405+00', '2026-12-06 07:09:34.123405+00');
INSERT INTO chute.workers VALUES ('vm:15764', 'default', 'vm', 15764, 1, '0.1.0', 2000, '2026-12-06 07:09:34.192581+00', '2026-12-06 07:09:34.192581+00', NULL);

SELECT pg_catalog.setval('chute.fence', 4, true);

SELECT pg_catalog.setval('chute.logs_seq_seq', 1, false);

ALTER TABLE ONLY chute.finished
    ADD CONSTRAINT finished_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.live
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.logs
    ADD CONSTRAINT logs_pkey PRIMARY KEY (queue, id, seq);

ALTER TABLE ONLY chute.payloads
    ADD CONSTRAINT payloads_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.queues
    ADD CONSTRAINT queues_pkey PRIMARY KEY (queue);

ALTER TABLE ONLY chute.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (worker);

CREATE INDEX finished_at ON chute.finished USING btree (queue, run_at, id);

CREATE INDEX finished_failed ON chute.finished USING btree (queue, run_at) WHERE (state = 'failed'::text);

CREATE INDEX jobs_claimed ON chute.live USING btree (queue, token) WHERE (state = 'cur'::text);

CREATE INDEX jobs_due ON chute.live USING btree (queue, run_at, id) WHERE (state = ANY (ARRAY['new'::text, 'defer'::text]));

CREATE UNIQUE INDEX payloads_origin ON chute.payloads USING btree (origin, origin_spool, origin_id, origin_birth) WHERE (origin IS NOT NULL);

CREATE STATISTICS chute.finished_queue_state (mcv) ON queue, state FROM chute.finished;

CREATE STATISTICS chute.jobs_queue_state (mcv) ON queue, state FROM chute.live;

