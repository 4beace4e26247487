-- tests/data/schema-v3.sql: chute's schema at version 3, as `chute init`
-- made it before version 4 (commit 534005e), dumped by pg_dump 15
-- (--schema=chute --schema-only --no-owner --no-privileges, its comments
-- and \restrict lines left out), and its version row.  check_pgsql.c loads
-- it into an empty database to test the upgrade by `chute init URL`.
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
    CONSTRAINT jobs_id_valid CHECK ((((octet_length(id) >= 1) AND (octet_length(id) <= 200)) AND ("left"(id, 1) <> '.'::text) AND (id !~ '[/\x01-\x1f\x7f]'::text))),
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

INSERT INTO chute.version VALUES (3);
