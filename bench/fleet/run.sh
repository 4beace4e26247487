#!/usr/bin/env bash
# bench/fleet/run.sh: the peers' side of the fleet benchmark (issue 9).
# Starts a throwaway PostgreSQL cluster, and for each system a fresh database
# with the same jobs bulk-added beforehand, then 2 worker processes x 2 slots
# with no-op handlers:
#   graphile-worker  defaults | batched (localQueue.size 100, completeJobBatchDelay 0)
#   pg-boss          b1000 (batchSize 1000, 2 s poll) | b1000-p05 (0.5 s poll)
#   raw-claim-ack    pgbench, 2 clients, SKIP LOCKED claim of B rows + delete, B = 1, 10, 100
# and submit-to-handler-start latency at 20 jobs/s for 200 jobs.
#
# Environment (all optional):
#   ROUNDS               rounds of everything (default 1; the real bench uses 3)
#   BENCH_FLEET_BIG=1    also N=100000 for the throughput runs
#   BENCH_FLEET_JOBS     N of the standard runs (default 20000)
#   BENCH_FLEET_OUT      TSV written (default bench/fleet/results.tsv)
#   BENCH_FLEET_TMPDIR   where the cluster lives (default /var/tmp: a real disk, fsync on)
#   BENCH_FLEET_TIMEOUT  seconds allowed for any one measurement (default 600)
#   BENCH_FLEET_ONLY     space-separated subset of: gw boss raw latency
#   BENCH_FLEET_NO_INSTALL=1  do not run setup.sh (node_modules must be there)
#
# TSV columns: system config round jobs seconds jobs_per_s p50_ms p99_ms ("-" where
# not applicable). Latency rows have config "latency:<config>". One row
# "machine fdatasync-8k" gives the rate of 8 kB fdatasync'd writes on the
# cluster's file system in jobs_per_s: every figure here is bound by commit
# latency, so compare runs only where that row is similar.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${ROUNDS:-1}
JOBS=${BENCH_FLEET_JOBS:-20000}
OUT=${BENCH_FLEET_OUT:-$HERE/results.tsv}
TMPBASE=${BENCH_FLEET_TMPDIR:-/var/tmp}
TIMEOUT=${BENCH_FLEET_TIMEOUT:-600}
ONLY=" ${BENCH_FLEET_ONLY:-gw boss raw latency} "
LAT_JOBS=200 LAT_RATE=20
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
export FLEET_TIMEOUT=$TIMEOUT   # the node runners' own bound, inside timeout(1)'s
sizes=("$JOBS")
[[ ${BENCH_FLEET_BIG:-0} == 1 ]] && sizes+=(100000)

# shellcheck source=pg.sh
source "$HERE/pg.sh"

log() { printf '%s fleet: %s\n' "$(date +%T)" "$*" >&2; }
ran_any=0
want() { [[ $ONLY == *" $1 "* ]]; }

[[ -x $PG_BIN/initdb ]] || { log "no PostgreSQL server binaries in $PG_BIN (apt-get install postgresql)"; exit 1; }
command -v node >/dev/null || { log "no node (apt-get install nodejs npm)"; exit 1; }
[[ ${BENCH_FLEET_NO_INSTALL:-0} == 1 ]] || "$HERE/setup.sh" >&2

# Cleanup on any exit: the measurement in flight (its process group: timeout(1)
# makes one, and the node runners kill their worker processes on TERM), then
# the cluster and its directory.
DIR= CHILD=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [[ -n $CHILD ]] && kill -0 "$CHILD" 2>/dev/null; then
		kill -TERM "$CHILD" 2>/dev/null || true
		sleep 1
		kill -KILL "$CHILD" 2>/dev/null || true
	fi
	[[ -n $DIR ]] && pg_stop "$DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Run a measurement in the background, its stdout into $RES, so that a signal
# to this script is seen at once (bash runs traps only between commands, and
# not while it reads a command substitution), bounded by timeout(1).
bounded() {
	timeout --kill-after=10 "$TIMEOUT" "$@" >"$RES" &
	CHILD=$!
	local rc=0
	wait "$CHILD" || rc=$?
	CHILD=
	((rc == 0)) || { log "failed ($rc): ${*##*/}"; exit 1; }
}

DIR=$(mktemp -d "$TMPBASE/chute-fleet.XXXXXX")
RES=$DIR/result
pg_start "$DIR" >/dev/null
log "cluster in $DIR ($("$PG_BIN/postgres" --version))"

printf 'system\tconfig\tround\tjobs\tseconds\tjobs_per_s\tp50_ms\tp99_ms\n' >"$OUT"
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$OUT"; }

# The JSON line in $RES from a runner -> TSV row.
json_row() {
	local round=$1 json
	json=$(cat "$RES")
	node -e '
		const r = JSON.parse(process.argv[1]), f = (x, d) => x === undefined ? "-" : x.toFixed(d);
		const cfg = r.p50_ms !== undefined ? "latency:" + r.config : r.config;
		console.log([r.system, cfg, process.argv[2], r.jobs, f(r.seconds, 3), f(r.jobs_per_s, 0), f(r.p50_ms, 1), f(r.p99_ms, 1)].join("\t"));
		// CPU per job, and how much of the machine went to other load meanwhile.
		if (r.worker_cpu_s != null && r.server_cpu_s != null && r.machine_cpu_s != null) {
			const ncpu = require("os").cpus().length, us = (x) => (1e6 * x / r.jobs).toFixed(0), other = r.machine_cpu_s - r.worker_cpu_s - r.server_cpu_s;
			console.error(`  ${r.jobs_per_s.toFixed(0)} jobs/s; CPU per job: workers ${us(r.worker_cpu_s)} us, server ${us(r.server_cpu_s)} us;` +
				` other load ${(100 * Math.max(0, other) / (ncpu * r.seconds)).toFixed(0)}% of ${ncpu} cores`);
		}
	' "$json" "$round" >>"$OUT"
}

# The disk's commit latency decides most figures below; record it: 8 kB
# rewritten in place and fdatasync'd for 2 s, as WAL is (pg_test_fsync's
# "one 8kB write" line, without its other 30 s of tests).
probe=$(node -e '
	const fs = require("fs"), f = process.argv[1], b = Buffer.alloc(8192, 1);
	const fd = fs.openSync(f, "w"); fs.writeSync(fd, b, 0, b.length, 0); fs.fsyncSync(fd);
	let n = 0; const t0 = process.hrtime.bigint(), end = t0 + 2000000000n;
	while (process.hrtime.bigint() < end) { fs.writeSync(fd, b, 0, b.length, 0); fs.fdatasyncSync(fd); n++; }
	fs.closeSync(fd); fs.unlinkSync(f);
	console.log((n / (Number(process.hrtime.bigint() - t0) / 1e9)).toFixed(0));' "$DIR/fsync.probe") || probe=-
row machine fdatasync-8k - - - "$probe" - -
log "fdatasync of 8 kB: $probe per second"

# A fresh database for every measurement: sets $URI.
seq=0
db() { seq=$((seq + 1)); URI=$(pg_createdb "$DIR" "b${seq}_$1"); }
load() { cut -d' ' -f1-3 /proc/loadavg; }

t_all=$(date +%s)
for ((round = 1; round <= ROUNDS; round++)); do
	for n in "${sizes[@]}"; do
		if want gw; then
			for cfg in defaults batched; do
				log "round $round: graphile-worker $cfg, $n jobs (load $(load))"
				db gw
				bounded node "$HERE/gw.js" throughput "$URI" "$n" "$cfg"
				json_row "$round"
				ran_any=1
			done
		fi
		if want boss; then
			for cfg in b1000 b1000-p05; do
				log "round $round: pg-boss $cfg, $n jobs (load $(load))"
				db boss
				bounded node "$HERE/boss.js" throughput "$URI" "$n" "$cfg"
				json_row "$round"
				ran_any=1
			done
		fi
		if want raw; then
			for b in 1 10 100; do
				log "round $round: raw claim+ack, batch $b, $n jobs (load $(load))"
				db raw
				bounded "$HERE/raw.sh" "$URI" "$n" "$b" 2
				read -r s rate <"$RES"
				row raw-claim-ack "b$b-c2" "$round" "$n" "$s" "$rate" - -
				ran_any=1
			done
		fi
	done
	if want latency; then
		# graphile-worker's LISTEN/NOTIFY path at its defaults; pg-boss polls, and
		# needs a batch size that keeps up with 20 jobs/s (4 slots x 1 job per 2 s
		# poll is 2 jobs/s), so its throughput configurations.
		for spec in "gw defaults" "boss b1000" "boss b1000-p05"; do
			read -r peer cfg <<<"$spec"
			log "round $round: latency $peer $cfg, $LAT_JOBS jobs at $LAT_RATE/s (load $(load))"
			db "lat$peer"
			bounded node "$HERE/$peer.js" latency "$URI" "$LAT_JOBS" "$LAT_RATE" "$cfg"
			json_row "$round"
			ran_any=1
		done
	fi
done
((ran_any)) || { log "nothing selected by BENCH_FLEET_ONLY=$ONLY"; exit 64; }
log "done in $(($(date +%s) - t_all)) s; wrote $OUT"

# Short table: one line per measurement.
column -t -s $'\t' "$OUT"
