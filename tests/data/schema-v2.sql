-- tests/data/schema-v2.sql: a database made by chute at schema version 2
-- (commit 45b421e, the last before version 3), dumped by pg_dump 15
-- (--schema=chute --inserts --no-owner --no-privileges --no-comments, its
-- \restrict lines left out), with what that chute itself wrote: n1 and ok1
-- done and bad1 failed (exit 1), each with its log; d1 deferred (its
-- run_at moved to 2099 by hand, so that it stays deferred); c1 claimed
-- by a worker killed with SIGKILL, under a 2 s lease long run out; fw2
-- forwarded from the spool /tmp/exp/sp2 (origin "vm"), waiting.
-- check_pgsql.c loads it into an empty database to test the upgrade to
-- the current version by `chute init URL`.
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

CREATE TABLE chute.jobs (
    queue text NOT NULL,
    id text NOT NULL,
    state text NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last text DEFAULT ''::text NOT NULL,
    token bigint,
    worker text,
    lease_until timestamp with time zone,
    cancel boolean DEFAULT false NOT NULL,
    size bigint NOT NULL,
    created timestamp with time zone DEFAULT now() NOT NULL,
    origin text,
    origin_spool text,
    origin_id text,
    origin_birth text,
    CONSTRAINT jobs_state_check CHECK ((state = ANY (ARRAY['new'::text, 'cur'::text, 'defer'::text, 'done'::text, 'failed'::text])))
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='2000', autovacuum_vacuum_insert_scale_factor='0', autovacuum_vacuum_insert_threshold='10000', autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_cost_delay='0');

CREATE TABLE chute.logs (
    queue text NOT NULL,
    id text NOT NULL,
    seq bigint NOT NULL,
    body bytea NOT NULL
);

CREATE SEQUENCE chute.logs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER SEQUENCE chute.logs_seq_seq OWNED BY chute.logs.seq;

CREATE TABLE chute.payloads (
    queue text NOT NULL,
    id text NOT NULL,
    body bytea NOT NULL
);

CREATE TABLE chute.version (
    version integer NOT NULL
);

ALTER TABLE ONLY chute.logs ALTER COLUMN seq SET DEFAULT nextval('chute.logs_seq_seq'::regclass);

INSERT INTO chute.jobs VALUES ('default', 'd1', 'defer', '2099-01-01 00:00:00+00', 0, '', NULL, NULL, NULL, false, 2, '2026-12-04 02:32:00.402365+00', NULL, NULL, NULL, NULL);
INSERT INTO chute.jobs VALUES ('default', 'n1', 'done', '2026-12-04 02:32:00.481332+00', 1, 'exit=0', NULL, NULL, NULL, false, 2, '2026-12-04 02:32:00.386352+00', NULL, NULL, NULL, NULL);
INSERT INTO chute.jobs VALUES ('default', 'ok1', 'done', '2026-12-04 02:32:00.481332+00', 1, 'exit=0', NULL, NULL, NULL, false, 3, '2026-12-04 02:32:00.421179+00', NULL, NULL, NULL, NULL);
INSERT INTO chute.jobs VALUES ('default', 'bad1', 'failed', '2026-12-04 02:32:00.481332+00', 1, 'exit=1', NULL, NULL, NULL, false, 4, '2026-12-04 02:32:00.438339+00', NULL, NULL, NULL, NULL);
INSERT INTO chute.jobs VALUES ('default', 'fw2', 'new', '2026-12-04 02:32:21.130384+00', 0, '', NULL, NULL, NULL, false, 2, '2026-12-04 02:32:21.130384+00', 'vm', '/tmp/exp/sp2', 'fw2', '10997128:1796351541.082859267');
INSERT INTO chute.jobs VALUES ('default', 'c1', 'cur', '2026-12-04 02:32:20.459498+00', 1, '', 4, 'vm:6674', '2026-12-04 02:32:29.838095+00', false, 2, '2026-12-04 02:32:20.459498+00', NULL, NULL, NULL, NULL);

INSERT INTO chute.logs VALUES ('default', 'n1', 1, '\x40636875746520323032362d31322d30345430323a33323a30302e3436305a20617474656d70743d312073746172740a6f7574206f66206e310a40636875746520323032362d31322d30345430323a33323a30302e3436345a20617474656d70743d3120657869743d302074696d653d336d730a');
INSERT INTO chute.logs VALUES ('default', 'ok1', 2, '\x40636875746520323032362d31322d30345430323a33323a30302e3436345a20617474656d70743d312073746172740a6f7574206f66206f6b310a40636875746520323032362d31322d30345430323a33323a30302e3437345a20617474656d70743d3120657869743d302074696d653d31306d730a');
INSERT INTO chute.logs VALUES ('default', 'bad1', 3, '\x40636875746520323032362d31322d30345430323a33323a30302e3437365a20617474656d70743d312073746172740a6f7574206f6620626164310a40636875746520323032362d31322d30345430323a33323a30302e3438305a20617474656d70743d3120657869743d312074696d653d346d730a');

INSERT INTO chute.payloads VALUES ('default', 'n1', '\x6e0a');
INSERT INTO chute.payloads VALUES ('default', 'd1', '\x640a');
INSERT INTO chute.payloads VALUES ('default', 'ok1', '\x6f6b0a');
INSERT INTO chute.payloads VALUES ('default', 'bad1', '\x6261640a');
INSERT INTO chute.payloads VALUES ('default', 'c1', '\x630a');
INSERT INTO chute.payloads VALUES ('default', 'fw2', '\x660a');

INSERT INTO chute.version VALUES (2);

SELECT pg_catalog.setval('chute.fence', 4, true);

SELECT pg_catalog.setval('chute.logs_seq_seq', 3, true);

ALTER TABLE ONLY chute.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (queue, id);

ALTER TABLE ONLY chute.logs
    ADD CONSTRAINT logs_pkey PRIMARY KEY (queue, id, seq);

ALTER TABLE ONLY chute.payloads
    ADD CONSTRAINT payloads_pkey PRIMARY KEY (queue, id);

CREATE INDEX jobs_claimed ON chute.jobs USING btree (queue, token) WHERE (state = 'cur'::text);

CREATE INDEX jobs_due ON chute.jobs USING btree (queue, run_at, id) WHERE (state = ANY (ARRAY['new'::text, 'defer'::text]));

CREATE INDEX jobs_finished ON chute.jobs USING btree (queue, run_at) WHERE (state = ANY (ARRAY['done'::text, 'failed'::text]));

CREATE UNIQUE INDEX jobs_origin ON chute.jobs USING btree (origin, origin_spool, origin_id, origin_birth) WHERE (origin IS NOT NULL);

