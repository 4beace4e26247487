#!/usr/bin/env bash
# bench/fleet/pressure.sh: the fleet under pressure (issue 24): chute, graphile-worker (defaults
# and batched) and pg-boss in one run, on this machine, each through the same cells, each cell in
# a fresh database of one throwaway cluster: a steady producer at a baseline rate, a pressure for
# a while, the baseline again until the queue has recovered (pressure.js has the details):
#   xmin     an idle-in-transaction session holding an XID
#   readers  four REPEATABLE READ readers scanning the queue's tables
#   high     1.5x the baseline's offered load, then back
#   kill     pg_terminate_backend of the system's sessions 3 times a second
#   idle     300 idle connections held open
# Sampled every second: completion rate, claim latency p50/p99 (submit to handler start), queue
# depth (counted 10 times a second), dead tuples, size of the tables and indexes of the system's schema, CPU of the server,
# the workers and everything else. Written to a TSV of seconds and a TSV of cells; then the
# markdown section (bench/report.py pressure) and the plot (bench/pressure.gp).
#
# Environment (all optional):
#   SHORT=1                 smoke run: cells of about 25 s (warm 2, base 6, pressure 8, recovery 4-10 s)
#   PRESSURE_RATE           baseline jobs/s (default 200: see README.md for how it was chosen)
#   PRESSURE_WARM_S, PRESSURE_BASE_S, PRESSURE_STRESS_S, PRESSURE_RECOVER_MIN_S,
#   PRESSURE_RECOVER_MAX_S  the phases (default 5, 20, 30, 15, 75 s: about 30 minutes for all)
#   PRESSURE_CELLS          subset of: xmin readers high kill idle none (default the first five)
#   PRESSURE_SYSTEMS        subset of: chute gw gw-batched boss (default all four)
#   PRESSURE_OUT            the cells' TSV (default bench/fleet/pressure.tsv); the seconds go to
#                           ${PRESSURE_OUT%.tsv}-seconds.tsv
#   PRESSURE_PNG            the plot (default ${PRESSURE_OUT%.tsv}.png; none without gnuplot)
#   PRESSURE_MD             also write the markdown section there
#   BENCH_FLEET_TMPDIR      where the cluster lives (default /var/tmp)
#   BENCH_FLEET_NO_INSTALL=1  do not run setup.sh
#   CHUTE_BIN               the chute measured (default build/chute; chute-pgsql next to it)
# Other PRESSURE_* (pressure.js's header) are passed on.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CHUTE_BIN=${CHUTE_BIN:-$ROOT/build/chute}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
TMPBASE=${BENCH_FLEET_TMPDIR:-/var/tmp}
OUT=${PRESSURE_OUT:-$HERE/pressure.tsv}
SECONDS_OUT=${OUT%.tsv}-seconds.tsv
PNG=${PRESSURE_PNG:-${OUT%.tsv}.png}
CELLS=${PRESSURE_CELLS:-xmin readers high kill idle}
SYSTEMS=${PRESSURE_SYSTEMS:-chute gw gw-batched boss}
if [[ ${SHORT:-0} == 1 ]]; then
	: "${PRESSURE_WARM_S:=2}" "${PRESSURE_BASE_S:=6}" "${PRESSURE_STRESS_S:=8}" \
		"${PRESSURE_RECOVER_MIN_S:=4}" "${PRESSURE_RECOVER_MAX_S:=10}" "${PRESSURE_HOLD_S:=3}" \
		"${PRESSURE_DRAIN_S:=40}"
fi
export PRESSURE_RATE=${PRESSURE_RATE:-200} PRESSURE_WARM_S=${PRESSURE_WARM_S:-5} \
	PRESSURE_BASE_S=${PRESSURE_BASE_S:-20} PRESSURE_STRESS_S=${PRESSURE_STRESS_S:-30} \
	PRESSURE_RECOVER_MIN_S=${PRESSURE_RECOVER_MIN_S:-15} PRESSURE_RECOVER_MAX_S=${PRESSURE_RECOVER_MAX_S:-75} \
	PRESSURE_HOLD_S=${PRESSURE_HOLD_S:-10} PRESSURE_DRAIN_S=${PRESSURE_DRAIN_S:-60}
# The longest a cell may take: its phases, the drain, start and stop, with room.
CELL_TIMEOUT=$((PRESSURE_WARM_S + PRESSURE_BASE_S + PRESSURE_STRESS_S + PRESSURE_RECOVER_MAX_S + PRESSURE_DRAIN_S + 120))
# 300 idle connections beside the systems' (graphile-worker and pg-boss pool up to 10 per
# process, and the producer's pool) and the harness's own.
export PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-500}

# shellcheck source=pg.sh
source "$HERE/pg.sh"
log() { printf '%s pressure: %s\n' "$(date +%T)" "$*" >&2; }

[[ -x $PG_BIN/initdb ]] || { log "no PostgreSQL server binaries in $PG_BIN (apt-get install postgresql)"; exit 1; }
command -v node >/dev/null || { log "no node (apt-get install nodejs npm)"; exit 1; }
[[ -x $CHUTE_BIN && -x $(dirname "$CHUTE_BIN")/chute-pgsql ]] ||
	{ log "no $CHUTE_BIN with chute-pgsql next to it (make first)"; exit 1; }
[[ ${BENCH_FLEET_NO_INSTALL:-0} == 1 ]] || "$HERE/setup.sh" >&2

DIR= CHILD=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [[ -n $CHILD ]] && kill -0 "$CHILD" 2>/dev/null; then
		kill -TERM "$CHILD" 2>/dev/null || true
		sleep 2
		kill -KILL "$CHILD" 2>/dev/null || true
	fi
	[[ -n $DIR ]] && pg_stop "$DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

DIR=$(mktemp -d "$TMPBASE/chute-pressure.XXXXXX")
pg_start "$DIR" >/dev/null
log "cluster in $DIR ($("$PG_BIN/postgres" --version), max_connections $PG_MAX_CONNECTIONS)"
# A private copy of chute (a rebuild during the run changes nothing measured) and pstamp.
mkdir -p "$DIR/bin"
cp "$CHUTE_BIN" "$DIR/bin/chute"
cp "$(dirname "$CHUTE_BIN")/chute-pgsql" "$DIR/bin/chute-pgsql"
cc -O2 -Wall -Wextra -D_GNU_SOURCE -o "$DIR/bin/pstamp" "$HERE/pstamp.c"
export CHUTE=$DIR/bin/chute FLEET_BIN=$DIR/bin PGOPTIONS="-c client_min_messages=warning"

COLS=(system config cell rate stress_rate submitted submit_errors handled_jobs lost dup_runs extra_runs
	left_in_db completed_all drain_s seconds clean_p50 clean_p99 stress_p50 stress_p99 recover_p99
	max_latency base_rate stress_rate_handled base_depth_thr recovery_s recover_window_s max_depth
	max_dead base_dead max_bytes base_bytes end_bytes worker_exits harness_errors cpu_server_us
	cpu_workers_us other_load_pct load_start load_end kills idle_open idle_refused scans first_error)
(IFS=$'\t'; echo "${COLS[*]}") >"$OUT"
printf 'system\tconfig\tcell\tt\tphase\toffered\thandled\tp50_ms\tp99_ms\tdepth\tdepth_max\tdead_tup\tlive_tup\ttable_bytes\tindex_bytes\tautovacuums\tsample_ms\tcpu_server_pct\tcpu_workers_pct\tcpu_harness_pct\tcpu_machine_pct\n' >"$SECONDS_OUT"
meta() { printf 'meta\t%s\t%s\n' "$1" "$2" >>"$OUT"; }
meta date "$(date -u +%Y-%m-%dT%H:%MZ)"
meta chute "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
meta postgres "$("$PG_BIN/postgres" --version | awk '{ print $3 }')"
meta node "$(node --version)"
meta nproc "$(nproc)"
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta phases "warm=$PRESSURE_WARM_S base=$PRESSURE_BASE_S stress=$PRESSURE_STRESS_S recover=$PRESSURE_RECOVER_MIN_S-$PRESSURE_RECOVER_MAX_S hold=$PRESSURE_HOLD_S"
meta rate "$PRESSURE_RATE"
meta command "${PRESSURE_CMD:-bench/fleet/pressure.sh}"

# The JSON summary in $RES -> one row in the order of COLS.
json_row() {
	node -e '
		const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")), cols = process.argv.slice(2);
		const f = (v) => v === undefined || v === null ? "-" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : String(v).replace(/[\t\n]/g, " ");
		console.log(cols.map((c) => f(r[c])).join("\t"));' "$1" "${COLS[@]}"
}

seq=0
t_all=$(date +%s)
for cell in $CELLS; do
	# Cell by cell, every system in turn: what the machine does meanwhile falls on all of them.
	for s in $SYSTEMS; do
		case $s in
		chute) sys=chute cfg=- ;;
		gw) sys=graphile-worker cfg=defaults ;;
		gw-batched) sys=graphile-worker cfg=batched ;;
		boss) sys=pg-boss cfg=b1000-p05 ;;
		*) log "unknown system $s (chute gw gw-batched boss)"; exit 64 ;;
		esac
		seq=$((seq + 1))
		uri=$(pg_createdb "$DIR" "p${seq}_$s")
		work=$(mktemp -d "$DIR/cell.XXXXXX")
		RES=$work/summary.json
		log "$cell: $sys $cfg (load $(cut -d' ' -f1-3 /proc/loadavg))"
		timeout --kill-after=10 "$CELL_TIMEOUT" node "$HERE/pressure.js" cell "$sys" "$cfg" "$cell" "$uri" "$work" >"$RES" &
		CHILD=$!
		rc=0
		wait "$CHILD" || rc=$?
		CHILD=
		if ((rc != 0)); then
			log "$cell: $sys $cfg failed ($rc); its row says so"
			printf '{"system":"%s","config":"%s","cell":"%s","first_error":"the cell failed (exit %s)"}\n' "$sys" "$cfg" "$cell" "$rc" >"$RES"
		fi
		json_row "$RES" >>"$OUT"
		[[ -f $work/seconds.tsv ]] && cat "$work/seconds.tsv" >>"$SECONDS_OUT"
		# What a cell leaves behind (a held-xmin's dead rows) is no later cell's: drop its database.
		_pg_as "$PG_BIN/psql" -h "$DIR/sock" -U "$PG_USER" -d postgres -qAt \
			-c "DROP DATABASE IF EXISTS \"p${seq}_$s\" WITH (FORCE)" >/dev/null || true
	done
done
meta load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta seconds "$(($(date +%s) - t_all))"
log "done in $(($(date +%s) - t_all)) s; wrote $OUT and $SECONDS_OUT"

MD=$(python3 "$HERE/../report.py" pressure "$OUT" "$DIR/plot") || { log "bench/report.py pressure failed"; exit 1; }
[[ -n ${PRESSURE_MD:-} ]] && printf '%s\n' "$MD" >"$PRESSURE_MD"
printf '%s\n' "$MD"
if command -v gnuplot >/dev/null; then
	gnuplot -e "dir='$DIR/plot'; out='$PNG'" "$HERE/../pressure.gp" && log "plot: $PNG" || log "gnuplot failed: no plot"
else
	log "no gnuplot (apt-get install gnuplot-nox): no plot"
fi
