#!/usr/bin/env bash
# bench/fleet/raw.sh URI N BATCH [CLIENTS]: the database's own limit for a
# claim+ack loop. Fills a plain jobs table with N rows, then pgbench runs
# claim-ack.sql from CLIENTS (default 2) connections, N/(BATCH*CLIENTS)
# iterations each, and we check that the table is empty at the end.
# Prints: seconds jobs_per_s
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
uri=$1 n=$2 batch=$3 clients=${4:-2}
TIMEOUT=${FLEET_TIMEOUT:-600}
(( n % (batch * clients) == 0 )) || { echo "raw.sh: N must be a multiple of BATCH*CLIENTS" >&2; exit 64; }
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"

# A table like a minimal queue's: payload, state, lock time; claims walk the
# primary key. Filled and vacuumed (analyze + visibility map) before timing,
# as the peers' tables are filled before their workers start; a checkpoint
# then, so that the fill's dirty pages are not written during the timed loop.
"$PG_BIN/psql" "$uri" -qAt -v ON_ERROR_STOP=1 <<SQL
DROP TABLE IF EXISTS jobs;
CREATE TABLE jobs (id bigserial PRIMARY KEY, state smallint NOT NULL DEFAULT 0,
	locked_at timestamptz, payload jsonb NOT NULL DEFAULT '{}');
INSERT INTO jobs (payload) SELECT jsonb_build_object('i', i) FROM generate_series(1, $n) i;
VACUUM ANALYZE jobs;
CHECKPOINT;
SQL

iters=$(( n / (batch * clients) ))
t0=$(date +%s.%N)
timeout "$TIMEOUT" "$PG_BIN/pgbench" "$uri" -n -M prepared -c "$clients" -j "$clients" \
	-t "$iters" -D batch="$batch" -f "$HERE/claim-ack.sql" >"${RAW_LOG:-/dev/null}" 2>&1
t1=$(date +%s.%N)
left=$("$PG_BIN/psql" "$uri" -qAt -c 'SELECT count(*) FROM jobs')
[[ $left == 0 ]] || { echo "raw.sh: $left jobs left after the run" >&2; exit 1; }
awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { s = b - a; printf "%.3f %.0f\n", s, n / s }'
