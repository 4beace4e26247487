#!/usr/bin/env bash
# bench/fleet/view.sh: what one refresh of `chute top URL` (src/queue/pg/
# pg_view.c) costs the server with a million jobs in the queue.  Not part of
# make check (it loads a million rows; about two minutes here).
#
# A throwaway cluster (pg.sh) with pg_stat_statements, one database per
# scenario, chute's schema, a million rows of chute.jobs made by SQL:
#
#   steady   960,000 done over the last day (600 in the last minute),
#            10,000 failed, 20,000 new, 8,000 deferred, 2,000 running
#            under 50 workers (chute.workers: 50 alive, 50 gone);
#            VACUUM ANALYZE, as autovacuum leaves a table at rest
#   hot      the same, plus 30,000 done in the last minute, just
#            inserted and not vacuumed: the rate's read reaches its
#            bound (PGV_RATE_MAX) and every row it reads is a heap fetch
#   backlog  a million new jobs, due (a deep queue: the count of new
#            reaches its bound at once), 2,000 running, vacuumed
#
# For each: the plans of the view's statements as the server ran them
# (auto_explain, with ANALYZE and BUFFERS: one run of `chute top URL`),
# then RUNS runs of `chute top URL > /dev/null` (the one-shot summary reads
# exactly what a refresh of the live view reads, after connecting) with
# pg_stat_statements counting each statement's execution and planning time
# and the buffers it touched.  Prints, per statement, the mean over the
# runs; the sum is the server's cost of one refresh.
#
# Environment: CHUTE_BIN (default build/chute, chute-pgsql next to it),
# RUNS (default 50), SCENARIOS (default "steady hot backlog"),
# BENCH_VIEW_TMPDIR (default /var/tmp), PG_BIN.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$(dirname "$HERE")")
CHUTE=$(realpath "${CHUTE_BIN:-$ROOT/build/chute}")
RUNS=${RUNS:-50}
# shellcheck source=pg.sh
. "$HERE/pg.sh"
DIR=$(mktemp -d "${BENCH_VIEW_TMPDIR:-/var/tmp}/chute-view.XXXXXX")
trap 'pg_stop "$DIR"' EXIT
log() { printf '%s view: %s\n' "$(date +%T)" "$*" >&2; }

sql() { _pg_as "$PG_BIN/psql" -X -qAt -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

rmdir "$DIR"
pg_start "$DIR" >/dev/null
cat >>"$DIR/data/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements, auto_explain'
pg_stat_statements.track_planning = on
CONF
_pg_as "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 restart >/dev/null

# workers URI: 50 alive, 50 gone.
workers() {
	sql "$1" "INSERT INTO chute.workers (worker, queue, host, pid, slots,
	    version, lease_ms, started, seen, stopped)
	  SELECT 'host' || i || ':' || (1000 + i), 'default', 'host' || i,
	    1000 + i, 40, '0.9', 30000, now() - interval '2 h',
	    CASE WHEN i < 50 THEN now() - interval '3 s' ELSE now() - interval '20 min' END,
	    CASE WHEN i < 50 THEN NULL ELSE now() - interval '20 min' END
	  FROM generate_series(0, 99) i"
}

# backlog URI: a million due, 2,000 running.
backlog() {
	sql "$1" "INSERT INTO chute.live (queue, id, state, run_at, size, token,
	    worker, claimed, lease_until, attempts)
	  SELECT 'default', 'j' || i, CASE WHEN i <= 2000 THEN 'cur' ELSE 'new' END,
	    now() - interval '1 h' + i * interval '3 ms', 100,
	    CASE WHEN i <= 2000 THEN i END,
	    CASE WHEN i <= 2000 THEN 'host' || (i % 50) || ':' || (1000 + i % 50) END,
	    CASE WHEN i <= 2000 THEN now() - (i % 600) * interval '1 s' END,
	    CASE WHEN i <= 2000 THEN now() + interval '30 s' END,
	    CASE WHEN i <= 2000 THEN 1 ELSE 0 END
	  FROM generate_series(1, 1000000) i"
	sql "$1" "SELECT setval('chute.fence', 1000001)" >/dev/null
	workers "$1"
	sql "$1" "VACUUM ANALYZE chute.live"
	sql "$1" "VACUUM ANALYZE chute.finished"
	sql "$1" "VACUUM ANALYZE chute.workers"
}

# load URI HOT: the million rows, and the workers.
load() {
	[[ $2 != backlog ]] || { backlog "$1"; return; }
	# Finished jobs have a table of their own (schema version 5): the same
	# rows, each in its table.
	sql "$1" "CREATE TEMP TABLE m AS SELECT 'default'::text AS queue, 'j' || i AS id, s AS state,
	    t AS run_at, 100 AS size, 1 AS attempts,
	    CASE s WHEN 'failed' THEN 'exit=' || (i % 7 + 1) WHEN 'done' THEN
	    'exit=0' ELSE '' END AS last,
	    CASE s WHEN 'cur' THEN i END AS token,
	    CASE s WHEN 'cur' THEN 'host' || (i % 50) || ':' || (1000 + i % 50) END AS worker,
	    CASE s WHEN 'cur' THEN now() - (i % 600) * interval '1 s' END AS claimed,
	    CASE s WHEN 'cur' THEN now() + interval '30 s' END AS lease_until
	  FROM (SELECT i, CASE
	      WHEN i <= 600 THEN 'done'
	      WHEN i <= 960000 THEN 'done'
	      WHEN i <= 970000 THEN 'failed'
	      WHEN i <= 990000 THEN 'new'
	      WHEN i <= 998000 THEN 'defer'
	      ELSE 'cur' END AS s,
	    CASE
	      WHEN i <= 600 THEN now() - (i % 60) * interval '1 s'
	      WHEN i <= 970000 THEN now() - interval '1 min' - (i % 86400) * interval '1 s'
	      WHEN i <= 990000 THEN now() - (i % 3600) * interval '1 s'
	      WHEN i <= 998000 THEN now() + (i % 3600) * interval '1 s'
	      ELSE now() - interval '1 h' END AS t
	    FROM generate_series(1, 1000000) i) x;
	  INSERT INTO chute.live (queue, id, state, run_at, size, attempts, last, token,
	    worker, claimed, lease_until) SELECT * FROM m WHERE state IN ('new', 'cur', 'defer');
	  INSERT INTO chute.finished (queue, id, state, run_at, size, attempts, last)
	    SELECT queue, id, state, run_at, size, attempts, last FROM m
	    WHERE state IN ('done', 'failed')"
	sql "$1" "SELECT setval('chute.fence', 1000001)" >/dev/null
	workers "$1"
	sql "$1" "VACUUM ANALYZE chute.live"
	sql "$1" "VACUUM ANALYZE chute.finished"
	sql "$1" "VACUUM ANALYZE chute.workers"
	[[ $2 == hot ]] || return 0
	sql "$1" "INSERT INTO chute.finished (queue, id, state, run_at, size, attempts, last)
	  SELECT 'default', 'h' || i, 'done', now() - (i % 60) * interval '1 s', 100, 1,
	    'exit=0' FROM generate_series(1, 30000) i"
}

# plans URI: the view's statements as the server ran them, from its log.
plans() {
	local from
	sql "$1" "ALTER DATABASE \"${1##*/}\" SET auto_explain.log_min_duration = 0;
	    ALTER DATABASE \"${1##*/}\" SET auto_explain.log_analyze = on;
	    ALTER DATABASE \"${1##*/}\" SET auto_explain.log_buffers = on"
	from=$(wc -l <"$DIR/server.log")
	"$CHUTE" top "$1" >/dev/null
	sql "$1" "ALTER DATABASE \"${1##*/}\" RESET ALL"
	tail -n +"$((from + 1))" "$DIR/server.log"
}

# cost URI: RUNS one-shot views; each statement's mean per run.
cost() {
	local t0 t1
	sql "$1" "SELECT pg_stat_statements_reset()" >/dev/null
	t0=$(date +%s%N)
	for _ in $(seq "$RUNS"); do
		"$CHUTE" top "$1" >/dev/null
	done
	t1=$(date +%s%N)
	printf 'client: %.1f ms per `chute top URL` (connect, schema check, the reads, print)\n' \
	    "$(echo "($t1 - $t0) / 1000000 / $RUNS" | bc -l)"
	sql "$1" "SELECT rpad(left(regexp_replace(query, '\s+', ' ', 'g'), 70), 70)
	    || ' | ' || calls / $RUNS || ' | ' || round((total_exec_time / $RUNS)::numeric, 3)
	    || ' | ' || round((total_plan_time / $RUNS)::numeric, 3)
	    || ' | ' || (shared_blks_hit + shared_blks_read) / $RUNS
	    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database
	    WHERE datname = current_database()) AND (query LIKE '%chute.jobs%'
	    OR query LIKE '%chute.workers%' OR query LIKE '%chute.queues%')
	    AND query NOT LIKE '%pg_stat_statements%'
	    ORDER BY total_exec_time DESC"
	sql "$1" "SELECT 'sum per refresh: ' || round((sum(total_exec_time +
	    total_plan_time) / $RUNS)::numeric, 2) || ' ms of the server, '
	    || sum(shared_blks_hit + shared_blks_read) / $RUNS || ' buffers'
	    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database
	    WHERE datname = current_database()) AND (query LIKE '%chute.jobs%'
	    OR query LIKE '%chute.workers%' OR query LIKE '%chute.queues%')
	    AND query NOT LIKE '%pg_stat_statements%'"
}

for scenario in ${SCENARIOS:-steady hot backlog}; do
	uri=$(pg_createdb "$DIR" "view_$scenario")
	"$CHUTE" init "$uri" >/dev/null
	sql "$uri" "CREATE EXTENSION pg_stat_statements"
	log "$scenario: loading a million rows"
	load "$uri" "$scenario"
	log "$scenario: plans"
	echo "== $scenario: chute top URL, one-shot"
	"$CHUTE" top "$uri" | head -4
	echo "== $scenario: plans"
	plans "$uri"
	log "$scenario: $RUNS runs"
	echo "== $scenario: per refresh (mean of $RUNS): statement | calls | exec ms | plan ms | buffers"
	cost "$uri"
done
