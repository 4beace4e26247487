#!/usr/bin/env bash
# bench/fleet/run.sh: the fleet benchmark (issue 9): chute's PostgreSQL queue and
# its peers, side by side, in one run, on this machine, server included.
# Starts a throwaway PostgreSQL cluster, and for each system a fresh database
# with the same jobs bulk-added beforehand, then 2 worker processes x 2 slots
# with no-op handlers:
#   graphile-worker  defaults | batched (localQueue.size 100, completeJobBatchDelay 0)
#   pg-boss          b1000 (batchSize 1000, 2 s poll) | b1000-p05 (0.5 s poll)
#   raw-claim-ack    pgbench, 2 clients, SKIP LOCKED claim of B rows + delete, B = 1, 4, 10, 100
#   chute            persistent-2x2: 2 x `chute run URL --persistent -j 2 --drain -- worker`,
#                    local copies in RUNTIME_DIRECTORY on /dev/shm as the systemd unit has
#                    them (persistent-2x2-tmp: in /tmp instead; persistent-2x2-inline:
#                    with --inline, the payload on the worker's pipe and no local copy;
#                    persistent-2x2-inline-keep0: --inline on a queue that keeps no
#                    done job, `chute retention URL --done 0`)
# and submit-to-handler-start latency at 20 jobs/s for 200 jobs. chute's own rows
# (bench/fleet/chute.sh) add: exec per job (/bin/true) through the database and
# through chute's own spool, latency with a persistent and an exec'd handler, and
# the claim rate with 1,000 queued, 1,000,000 queued and after 1,000,000 finished.
# `chute forward` (bench/fleet/forward.sh): N jobs of 100 bytes from a spool into
# the database in batches of 256, against fwdraw, forward's own statement sent
# from memory in the same batches over one connection (alternating, each round).
#
# Environment (all optional):
#   ROUNDS               rounds of everything (default 1; make bench uses its own, 3)
#   BENCH_FLEET_BIG=1    also N=100000 for the throughput runs
#   BENCH_FLEET_JOBS     N of the standard runs (default 20000)
#   BENCH_FLEET_EXEC_JOBS    jobs of the exec rows (default 2000)
#   BENCH_FLEET_BACKLOG  the big backlog of the claim rows (default 1000000)
#   BENCH_FLEET_CLAIM_JOBS   jobs timed with the big backlog (default 20000)
#   BENCH_FLEET_OUT      TSV written (default bench/fleet/results.tsv)
#   BENCH_FLEET_TMPDIR   where the cluster lives (default /var/tmp: a real disk, fsync on)
#   BENCH_FLEET_TIMEOUT  seconds allowed for any one measurement (default 600)
#   BENCH_FLEET_ONLY     space-separated subset of: gw boss raw latency chute chute-exec
#                        chute-latency chute-claim forward sched sched-claim (latency: the
#                        peers'; chute: its throughput; forward: chute forward and the raw
#                        INSERT loop; sched: the scheduling rows of issue 36, chute and its
#                        peers with priorities, per-key limits and a hot key, each counted
#                        by the witness; sched-claim: chute's claim rate with priorities and
#                        keys against without, at 1,000 and 100,000 queued)
#                        uniq after (issue 37, in the default set too: uniq: submit
#                        throughput with a distinct unique key per job against without, for
#                        chute (its statement over open connections, its CLI on a queue and
#                        on a spool), graphile-worker jobKey, pg-boss 10 and 12 singletonKey;
#                        after: the cost of waking BENCH_FLEET_AFTER dependents, chute's
#                        queue and spool, and pg-boss 12's flow() at flowIntervalSeconds 5 and 1)
#   BENCH_FLEET_UNIQ_JOBS     submits of each uniq row (default 2000)
#   BENCH_FLEET_UNIQ_PROCS    submitters in parallel (default 4)
#   BENCH_FLEET_UNIQ_CLI_JOBS submits of chute's CLI rows on a queue (default 500: a process pair
#                        and a connection each)
#   BENCH_FLEET_AFTER         dependents of the after rows (default 1000)
#   BENCH_FLEET_SCHED_JOBS    jobs of the sched rows (default 20000)
#   BENCH_FLEET_SCHED_KEYS    keys they are spread over (default 50)
#   BENCH_FLEET_SCHED_N       the per-key limit of the keys-lN rows (default 2)
#   BENCH_FLEET_SCHED_HOT     jobs of the hot key (default 100000; limit 1)
#   BENCH_FLEET_SCHED_OTHERS  jobs of other keys beside it, one key each (default 200)
#   BENCH_FLEET_SCHED_MIXES   the sched rows run (default "plain prio keys-l1 keys-lN hotbase hot")
#   BENCH_FLEET_SCHED_PEERS   their systems (default "gw-defaults gw-batched boss12 chute")
#   BENCH_FLEET_HOLD_US       how long each job of the sched rows runs (default 1000)
#   BENCH_FLEET_SCHED_QUEUED  the backlogs of the sched-claim rows (default "1000 100000")
#   BENCH_FLEET_XMIN=1   every measurement under a held xmin: a session of the measured
#                        database holds a transaction ID (BEGIN; SELECT txid_current()) from
#                        before the jobs are added until the measurement ends, so that vacuum
#                        can remove nothing meanwhile (issue 24); rows get the note xmin=held
#                        and report.py keys them as `CONFIG xmin`
#   BENCH_FLEET_GW_CONFIGS    graphile-worker's configs run (default "defaults batched")
#   BENCH_FLEET_CHUTE_CONFIGS chute's throughput configs run (default
#                        "persistent-2x2 persistent-2x2-tmp"; persistent-2x2-inline too)
#   BENCH_FLEET_NO_INSTALL=1  do not run setup.sh (node_modules must be there)
#   BENCH_FLEET_PIN=1    the machine split alike for chute and its peers: the PostgreSQL
#                        server (the postmaster, started under `taskset -c 0`, and every
#                        backend and auxiliary process it forks) on CPU 0, and every
#                        measurement (`taskset -c 1` around what bounded() runs: the node
#                        driver and worker processes of graphile-worker and pg-boss, chute.sh
#                        with its `chute run` workers and their handlers, pgbench, the
#                        helpers) on CPU 1. Setup inside a measurement (bulk add, ANALYZE,
#                        CHECKPOINT) runs pinned too, untimed. While each measurement runs,
#                        a sampler (itself on CPU 1, bash builtins only, every 0.5 s) reads
#                        Cpus_allowed_list of the postmaster's tree and of the measurement's,
#                        and the CPU each last ran on; every row's notes get
#                        pin=server:LIST;workers:LIST (what it saw), pin_ran=... (CPUs they
#                        ran on) and pin_procs=S;W (processes seen), the run stops if the
#                        pinning did not hold, and the processes seen go to OUT.pin.
#                        report.py keys such rows as "CONFIG pinned". Needs 2 CPUs.
#   CHUTE_BIN            the chute measured (default build/chute; chute-pgsql next to it)
#
# Other load on the machine (another user's build) is not pinned: with BENCH_FLEET_PIN=1
# it still shares both CPUs, and other_load_pct in the notes says how much it took.
#
# TSV columns: system config round jobs seconds jobs_per_s p50_ms p99_ms notes ("-"
# where not applicable; notes are key=value,...: CPU per job, the claim rows' steady
# rate, dead tuples, index size). Latency rows have config "latency:<config>". One row
# "machine fdatasync-8k" gives the rate of 8 kB fdatasync'd writes on the cluster's
# file system in jobs_per_s: every figure here is bound by commit latency, so compare
# runs only where that row is similar. Rows "meta KEY" hold the run's date, load, N.
# At the end the TSV is printed as a table, then as markdown with the ratios
# (bench/report.py fleet), which make bench puts into bench/RESULTS.md.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${ROUNDS:-1}
JOBS=${BENCH_FLEET_JOBS:-20000}
OUT=${BENCH_FLEET_OUT:-$HERE/results.tsv}
TMPBASE=${BENCH_FLEET_TMPDIR:-/var/tmp}
TIMEOUT=${BENCH_FLEET_TIMEOUT:-600}
ONLY=" ${BENCH_FLEET_ONLY:-gw boss raw latency chute chute-exec chute-latency chute-claim forward sched sched-claim uniq after} "
GW_CONFIGS=${BENCH_FLEET_GW_CONFIGS:-defaults batched}
CHUTE_CONFIGS=${BENCH_FLEET_CHUTE_CONFIGS:-persistent-2x2 persistent-2x2-tmp}
FWD_BATCH=256 FWD_SIZE=100
LAT_JOBS=200 LAT_RATE=20
EXEC_JOBS=${BENCH_FLEET_EXEC_JOBS:-2000}
BACKLOG=${BENCH_FLEET_BACKLOG:-1000000}
CLAIM_JOBS=${BENCH_FLEET_CLAIM_JOBS:-20000}
SMALL_BACKLOG=1000
UNIQ_JOBS=${BENCH_FLEET_UNIQ_JOBS:-2000}
UNIQ_PROCS=${BENCH_FLEET_UNIQ_PROCS:-4}
UNIQ_CLI_JOBS=${BENCH_FLEET_UNIQ_CLI_JOBS:-500}
AFTER_N=${BENCH_FLEET_AFTER:-1000}
SCHED_JOBS=${BENCH_FLEET_SCHED_JOBS:-20000}
SCHED_KEYS=${BENCH_FLEET_SCHED_KEYS:-50}
SCHED_N=${BENCH_FLEET_SCHED_N:-2}
SCHED_HOT=${BENCH_FLEET_SCHED_HOT:-100000}
SCHED_OTHERS=${BENCH_FLEET_SCHED_OTHERS:-200}
SCHED_MIXES=${BENCH_FLEET_SCHED_MIXES:-plain prio keys-l1 keys-lN hotbase hot}
SCHED_PEERS=${BENCH_FLEET_SCHED_PEERS:-gw-defaults gw-batched boss12 chute}
SCHED_QUEUED=${BENCH_FLEET_SCHED_QUEUED:-1000 100000}
export FLEET_HOLD_US=${BENCH_FLEET_HOLD_US:-1000}
ROOT=$(cd "$HERE/../.." && pwd)
CHUTE_BIN=${CHUTE_BIN:-$ROOT/build/chute}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
export FLEET_TIMEOUT=$TIMEOUT   # the node runners' own bound, inside timeout(1)'s
PIN=${BENCH_FLEET_PIN:-0}
XMIN=${BENCH_FLEET_XMIN:-0}
PIN_SERVER=0 PIN_WORKERS=1
sizes=("$JOBS")
[[ ${BENCH_FLEET_BIG:-0} == 1 ]] && sizes+=(100000)

# shellcheck source=pg.sh
source "$HERE/pg.sh"

log() { printf '%s fleet: %s\n' "$(date +%T)" "$*" >&2; }
ran_any=0
want() { [[ $ONLY == *" $1 "* ]]; }

[[ -x $PG_BIN/initdb ]] || { log "no PostgreSQL server binaries in $PG_BIN (apt-get install postgresql)"; exit 1; }
command -v node >/dev/null || { log "no node (apt-get install nodejs npm)"; exit 1; }
want_chute=0
for k in chute chute-exec chute-latency chute-claim forward sched-claim uniq after; do want "$k" && want_chute=1; done
want sched && [[ " $SCHED_PEERS " == *" chute "* ]] && want_chute=1
if ((want_chute)); then
	[[ -x $CHUTE_BIN && -x $(dirname "$CHUTE_BIN")/chute-pgsql ]] ||
		{ log "no $CHUTE_BIN with chute-pgsql next to it (make first)"; exit 1; }
	pkg-config --exists libpq 2>/dev/null || { log "no libpq-dev (apt-get install libpq-dev)"; exit 1; }
fi
PIN_CMD=()
if [[ $PIN == 1 ]]; then
	command -v taskset >/dev/null || { log "BENCH_FLEET_PIN=1: no taskset (apt-get install util-linux)"; exit 1; }
	if ! taskset -c "$PIN_SERVER" true 2>/dev/null || ! taskset -c "$PIN_WORKERS" true 2>/dev/null; then
		log "BENCH_FLEET_PIN=1: CPUs $PIN_SERVER and $PIN_WORKERS are not both available here"; exit 1
	fi
	export PG_CPUS=$PIN_SERVER   # pg.sh: pg_ctl start under taskset
	PIN_CMD=(taskset -c "$PIN_WORKERS")
fi
[[ ${BENCH_FLEET_NO_INSTALL:-0} == 1 ]] || "$HERE/setup.sh" >&2

# Cleanup on any exit: the measurement in flight (its process group: timeout(1)
# makes one, and the node runners kill their worker processes on TERM), then
# the cluster and its directory.
DIR= CHILD=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	[[ -z $XMIN_PID ]] || kill "$XMIN_PID" 2>/dev/null || true
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

# BENCH_FLEET_PIN=1: what the processes of a measurement are allowed to run on.
# pin_walk SIDE PID: PID and its descendants (/proc/PID/task/*/children); the first
# time a PID is seen, "proc SIDE PID NAME CPUS_ALLOWED_LIST" on stdout; every time,
# "ran SIDE CPU" for a CPU it last ran on (/proc/PID/stat field 39) not yet reported.
# Bash builtins only: no fork per sample.
declare -A PIN_SEEN=() PIN_RAN=()
pin_walk() {
	local side=$1 p=$2 k v name="" allowed="" line t kids f
	if [[ -z ${PIN_SEEN[$p]:-} ]]; then
		while IFS=$'\t' read -r k v; do
			case $k in
			Name:) name=$v ;;
			Cpus_allowed_list:) allowed=$v; break ;;
			esac
		done 2>/dev/null <"/proc/$p/status" || true
		[[ -n $allowed ]] || return 0 # gone
		PIN_SEEN[$p]=1
		printf 'proc %s %s %s %s\n' "$side" "$p" "$name" "$allowed"
	fi
	if { read -r line; } 2>/dev/null <"/proc/$p/stat"; then
		read -r -a f <<<"${line##*) }" # f[0] is field 3 (state): processor is f[36]
		if [[ -n ${f[36]:-} && -z ${PIN_RAN[$side.${f[36]}]:-} ]]; then
			PIN_RAN[$side.${f[36]}]=1
			printf 'ran %s %s\n' "$side" "${f[36]}"
		fi
	fi
	for t in /proc/"$p"/task/*/children; do
		kids=()
		{ read -r -a kids; } 2>/dev/null <"$t" || true
		for k in "${kids[@]}"; do pin_walk "$side" "$k"; done
	done
}

# pin_sampler ROOT: on CPU $PIN_WORKERS, every 0.5 s while ROOT lives, the postmaster's
# tree (server) and ROOT's (workers), through pin_walk. The wait is read -t on a FIFO
# nobody writes: no sleep(1) process twice a second.
pin_sampler() {
	local root=$1 pm fd
	taskset -cp "$PIN_WORKERS" "$BASHPID" >/dev/null
	pm=$(head -1 "$DIR/data/postmaster.pid")
	exec {fd}<>"$DIR/pin.fifo"
	while kill -0 "$root" 2>/dev/null; do
		pin_walk server "$pm"
		pin_walk workers "$root"
		read -r -t 0.5 -u "$fd" _ || true
	done
}

# pin_note FILE: the sampler's lines -> "pin=server:L;workers:L,pin_ran=...,pin_procs=S;W"
# (L: the distinct Cpus_allowed_list values seen, "+"-joined; "?" where none).
pin_note() {
	awk -v want_s="$PIN_SERVER" -v want_w="$PIN_WORKERS" '
		function add(a, what, side, x) { if (!((what, side, x) in seen)) { seen[what, side, x] = 1; a[side] = a[side] == "" ? x : a[side] "+" x } }
		$1 == "proc" { add(allowed, "a", $2, $5); n[$2]++ }
		$1 == "ran" { add(ran, "r", $2, $3) }
		function g(a, side) { return a[side] == "" ? "?" : a[side] }
		END {
			printf "pin=server:%s;workers:%s,pin_ran=server:%s;workers:%s,pin_procs=%d;%d\n",
				g(allowed, "server"), g(allowed, "workers"), g(ran, "server"), g(ran, "workers"), n["server"], n["workers"]
			exit !(allowed["server"] == want_s && allowed["workers"] == want_w)
		}' "$1"
}

# Run a measurement in the background, its stdout into $RES, so that a signal
# to this script is seen at once (bash runs traps only between commands, and
# not while it reads a command substitution), bounded by timeout(1). With
# BENCH_FLEET_PIN=1 on CPU $PIN_WORKERS (taskset execs timeout: $CHILD is still
# timeout's process group), sampled by pin_sampler; PIN_NOTE is then its note.
PIN_NOTE=
bounded() {
	local rc=0 sampler="" pinlog cpus0
	xmin_hold
	cpus0=$(cpu_ticks)
	"${PIN_CMD[@]}" timeout --kill-after=10 "$TIMEOUT" "$@" >"$RES" &
	CHILD=$!
	if [[ $PIN == 1 ]]; then
		pinlog=$(mktemp "$DIR/pin.XXXXXX")
		pin_sampler "$CHILD" >"$pinlog" &
		sampler=$!
	fi
	wait "$CHILD" || rc=$?
	CHILD=
	if [[ -n $sampler ]]; then
		kill "$sampler" 2>/dev/null || true
		wait "$sampler" 2>/dev/null || true
		{ printf '# %s\n' "${*##*/}"; cat "$pinlog"; } >>"$OUT.pin"
		PIN_NOTE=$(pin_note "$pinlog") || { log "pinning did not hold ($PIN_NOTE; see $OUT.pin): ${*##*/}"; exit 1; }
		log "  $PIN_NOTE"
	fi
	xmin_release
	CPU_NOTE=$(cpu_busy "$cpus0" "$(cpu_ticks)")
	BOUNDED_RC=$rc
	# BOUNDED_TIMEOUT_OK=1: running out of time is a result (the caller records it).
	[[ $rc == 124 && ${BOUNDED_TIMEOUT_OK:-0} == 1 ]] && { log "timed out after $TIMEOUT s: ${*##*/}"; return 0; }
	((rc == 0)) || { log "failed ($rc): ${*##*/}"; exit 1; }
}

# Each CPU's busy and total ticks from /proc/stat ("busy/total" per CPU, in order).
cpu_ticks() {
	awk '/^cpu[0-9]/ { t = 0; for (i = 2; i <= NF; i++) t += $i; printf "%d/%d ", t - $5 - $6, t }' /proc/stat
}
# cpu_busy BEFORE AFTER -> "cpu_busy_pct=A;B": how busy each CPU was over the measurement
# (set-up included), whoever used it: the saturated resource, where there is one.
CPU_NOTE=
cpu_busy() {
	local a=($1) b=($2) out="" i x y
	for ((i = 0; i < ${#b[@]}; i++)); do
		x=${a[i]:-0/0} y=${b[i]}
		out+="${out:+;}$(( (100 * (${y%/*} - ${x%/*})) / ((${y#*/} - ${x#*/}) > 0 ? (${y#*/} - ${x#*/}) : 1) ))"
	done
	printf 'cpu_busy_pct=%s' "$out"
}

# BENCH_FLEET_XMIN=1: a session of $URI holds a transaction ID open, idle in
# transaction, for the length of one measurement; XMIN_NOTE is then its note.
XMIN_NOTE= XMIN_PID= XMIN_FD= XMIN_OUT=
xmin_hold() {
	local xid=
	XMIN_NOTE=
	[[ $XMIN == 1 ]] || return 0
	rm -f "$DIR/xmin.in" "$DIR/xmin.out"
	mkfifo "$DIR/xmin.in" "$DIR/xmin.out"
	"$PG_BIN/psql" "$URI" -qAtX -v ON_ERROR_STOP=1 <"$DIR/xmin.in" >"$DIR/xmin.out" 2>&1 &
	XMIN_PID=$!
	exec {XMIN_FD}>"$DIR/xmin.in" {XMIN_OUT}<"$DIR/xmin.out"
	printf 'BEGIN;\nSELECT txid_current();\n' >&"$XMIN_FD"
	read -r -t 30 -u "$XMIN_OUT" xid || true
	[[ $xid =~ ^[0-9]+$ ]] || { log "BENCH_FLEET_XMIN=1: the holding session said '$xid'"; exit 1; }
	XMIN_NOTE="xmin=held,xmin_xid=$xid"
	log "  holding xid $xid"
}
xmin_release() {
	[[ -n $XMIN_PID ]] || return 0
	printf 'ROLLBACK;\n' >&"$XMIN_FD" 2>/dev/null || true
	exec {XMIN_FD}>&- {XMIN_OUT}<&-
	wait "$XMIN_PID" 2>/dev/null || true
	XMIN_PID=
}

# extra_notes: the notes every row of the measurement just made gets.
extra_notes() {
	local x out=
	for x in "$PIN_NOTE" "$XMIN_NOTE" "$CPU_NOTE"; do
		[[ -z $x ]] || out+="${out:+,}$x"
	done
	printf '%s' "$out"
}
# pin_notes NOTES: NOTES with PIN_NOTE added (pinned runs), NOTES otherwise.
pin_notes() {
	local x
	x=$(extra_notes)
	if [[ -z $x ]]; then printf '%s' "$1"
	elif [[ $1 == - || -z $1 ]]; then printf '%s' "$x"
	else printf '%s,%s' "$1" "$x"; fi
}

DIR=$(mktemp -d "$TMPBASE/chute-fleet.XXXXXX")
RES=$DIR/result
pg_start "$DIR" >/dev/null
log "cluster in $DIR ($("$PG_BIN/postgres" --version))"
if [[ $PIN == 1 ]]; then
	mkfifo "$DIR/pin.fifo"
	: >"$OUT.pin"
	pm_cpus=$(awk '$1 == "Cpus_allowed_list:" { print $2 }' "/proc/$(head -1 "$DIR/data/postmaster.pid")/status")
	[[ $pm_cpus == "$PIN_SERVER" ]] || { log "BENCH_FLEET_PIN=1: the postmaster may run on $pm_cpus, not $PIN_SERVER"; exit 1; }
	log "pinned: server (postmaster) on CPU $pm_cpus, measurements on CPU $PIN_WORKERS"
fi

# chute's side: a private copy of the binaries (a rebuild during the run changes
# nothing measured), and the helpers compiled next to them.
if ((want_chute)); then
	mkdir -p "$DIR/bin"
	cp "$CHUTE_BIN" "$DIR/bin/chute"
	cp "$(dirname "$CHUTE_BIN")/chute-pgsql" "$DIR/bin/chute-pgsql"
	for p in "$HERE/../worker.c" "$HERE/../stamp.c" "$HERE/pstamp.c" "$HERE/pulse.c" "$HERE/../witness.c"; do
		cc -O2 -Wall -Wextra -D_GNU_SOURCE -o "$DIR/bin/$(basename "$p" .c)" "$p"
	done
	# shellcheck disable=SC2046
	cc -O2 -Wall -Wextra -D_GNU_SOURCE $(pkg-config --cflags libpq) -o "$DIR/bin/psubmit" \
		"$HERE/psubmit.c" $(pkg-config --libs libpq)
	# shellcheck disable=SC2046
	cc -O2 -Wall -Wextra -D_GNU_SOURCE $(pkg-config --cflags libpq) -o "$DIR/bin/usubmit" \
		"$HERE/usubmit.c" $(pkg-config --libs libpq)
	# shellcheck disable=SC2046
	cc -O2 -Wall -Wextra $(pkg-config --cflags libpq) -o "$DIR/bin/fwdraw" \
		"$HERE/fwdraw.c" $(pkg-config --libs libpq)
	export CHUTE=$DIR/bin/chute FLEET_BIN=$DIR/bin
	log "chute: $CHUTE_BIN ($(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?'))"
fi

printf 'system\tconfig\tround\tjobs\tseconds\tjobs_per_s\tp50_ms\tp99_ms\tnotes\n' >"$OUT"
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$OUT"; }
meta() { row meta "$1" - - - - - - "$2"; }
meta date "$(date -u +%Y-%m-%dT%H:%MZ)"
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"
meta nproc "$(nproc)"
meta rounds "$ROUNDS"
meta postgres "$("$PG_BIN/postgres" --version | awk '{ print $3 }')"
meta node "$(node --version)"
((PIN)) && meta pin "server:$PIN_SERVER;workers:$PIN_WORKERS"
((XMIN)) && meta xmin held
((want_chute)) && meta chute "$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"

# The JSON line in $RES from a runner -> TSV row.
json_row() {
	local round=$1 json
	json=$(cat "$RES")
	node -e '
		const r = JSON.parse(process.argv[1]), f = (x, d) => x === undefined ? "-" : x.toFixed(d);
		const cfg = r.p50_ms !== undefined ? "latency:" + r.config : r.config;
		const notes = [];
		// CPU per job, and how much of the machine went to other load meanwhile.
		if (r.worker_cpu_s != null && r.server_cpu_s != null && r.machine_cpu_s != null) {
			const ncpu = require("os").cpus().length, us = (x) => (1e6 * x / r.jobs).toFixed(0), other = r.machine_cpu_s - r.worker_cpu_s - r.server_cpu_s;
			const pct = (100 * Math.max(0, other) / (ncpu * r.seconds)).toFixed(0);
			console.error(`  ${r.jobs_per_s.toFixed(0)} jobs/s; CPU per job: workers ${us(r.worker_cpu_s)} us, server ${us(r.server_cpu_s)} us;` +
				` other load ${pct}% of ${ncpu} cores`);
			notes.push(`cpu_worker_us=${us(r.worker_cpu_s)}`, `cpu_server_us=${us(r.server_cpu_s)}`, `other_load_pct=${pct}`);
		}
		if (r.startup_s !== undefined) notes.push(`startup_s=${r.startup_s.toFixed(2)}`);
		if (r.max_ms !== undefined) notes.push(`max_ms=${r.max_ms.toFixed(1)}`);
		if (process.argv[3]) notes.push(process.argv[3]);
		console.log([r.system, cfg, process.argv[2], r.jobs, f(r.seconds, 3), f(r.jobs_per_s, 0), f(r.p50_ms, 1), f(r.p99_ms, 1),
			notes.length ? notes.join(",") : "-"].join("\t"));
	' "$json" "$round" "$(extra_notes)" >>"$OUT"
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
row machine fdatasync-8k - - - "$probe" - - -
log "fdatasync of 8 kB: $probe per second"

# A fresh database for every measurement: sets $URI.
seq=0
db() { seq=$((seq + 1)); URI=$(pg_createdb "$DIR" "b${seq}_$1"); }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# chute.sh NAME ARGS...: one of chute's measurements, bounded like the others, in a
# scratch directory of its own; its line "JOBS SECONDS RATE P50 P99 NOTES" -> a TSV row.
# ROW_SH=forward.sh: the same with forward.sh.
chute_row() {
	local sys=$1 cfg=$2 round=$3 jobs s rate p50 p99 notes
	shift 3
	FLEET_WORK=$(mktemp -d "$DIR/work.XXXXXX")
	export FLEET_WORK
	bounded "$HERE/${ROW_SH:-chute.sh}" "$@"
	read -r jobs s rate p50 p99 notes <"$RES"
	row "$sys" "$cfg" "$round" "$jobs" "$s" "$rate" "$p50" "$p99" "$(pin_notes "$notes")"
	ran_any=1
}

# on_shm CMD...: CMD with RUNTIME_DIRECTORY a fresh directory on /dev/shm, as
# contrib/chute-worker@.service's RuntimeDirectory= (a tmpfs) gives a worker.
on_shm() {
	local rc=0
	RUNTIME_DIRECTORY=$(mktemp -d /dev/shm/chute-bench.XXXXXX)
	export RUNTIME_DIRECTORY
	"$@" || rc=$?
	rm -rf -- "$RUNTIME_DIRECTORY"
	unset RUNTIME_DIRECTORY
	return "$rc"
}

# ---- the scheduling rows (issue 36)

# sched_mix LABEL -> the mix (lib.js schedMix, chute.sh mix_parse) of a sched row.
sched_mix() {
	case $1 in
	plain) echo "plain:$SCHED_JOBS" ;;
	prio) echo "prio:$SCHED_JOBS" ;;
	keys-l1) echo "keys:$SCHED_JOBS:$SCHED_KEYS:1" ;;
	keys-lN) echo "keys:$SCHED_JOBS:$SCHED_KEYS:$SCHED_N" ;;
	hotbase) echo "hotbase:$SCHED_OTHERS" ;;
	hot) echo "hot:$SCHED_HOT:$SCHED_OTHERS" ;;
	*) log "BENCH_FLEET_SCHED_MIXES: unknown $1 (plain prio keys-l1 keys-lN hotbase hot)"; exit 64 ;;
	esac
}
# The row's name for a mix: keys-lN with N said.
sched_label() { [[ $1 == keys-lN ]] && echo "keys-l$SCHED_N" || echo "$1"; }

# witness_notes MIX FILE T0_US: bench/witness.py's verdict on FILE as notes: the mix's limit
# (none for plain and prio), starts per 1 s window, and for hot/hotbase the others' starts.
witness_notes() {
	local mix=$1 f=$2 t0=$3 args=(--window-ms 1000) lim
	case $mix in
	keys:* | both:*) lim=${mix##*:} ;;
	hot:* | hotbase:*) lim=1; args+=(--t0-us "$t0" --others o) ;;
	esac
	[[ -z ${lim:-} ]] || args+=(--limit "$lim")
	python3 "$HERE/../witness.py" "$f" "${args[@]}" | tr ' ' ','
}

# sched_peer PEER LABEL ROUND: one node peer's sched row (lib.js sched), its witness checked.
sched_peer() {
	local peer=$1 label=$2 round=$3 mix js cfg wf t0 line sys jobs s rate notes
	mix=$(sched_mix "$label")
	case $peer in
	gw-defaults) js=gw.js cfg=defaults ;;
	gw-batched) js=gw.js cfg=batched ;;
	boss12) js=boss12.js cfg=b20-burst ;;
	*) log "BENCH_FLEET_SCHED_PEERS: unknown $peer (gw-defaults gw-batched boss12 chute)"; exit 64 ;;
	esac
	if [[ $js == gw.js && $label == keys-lN ]]; then
		log "round $round: graphile-worker $cfg: no per-key limit above 1 (a named queue runs one job at a time): no keys-l$SCHED_N row"
		return 0
	fi
	log "round $round: sched $(sched_label "$label") ($mix), $peer, hold ${FLEET_HOLD_US} us (load $(load))"
	db "s$peer"
	wf=$(mktemp "$DIR/witness.XXXXXX")
	# A peer that never ends a row (its other keys starved behind a hot key) is a result:
	# the row says it ran out of time, and the run goes on.
	BOUNDED_TIMEOUT_OK=1 FLEET_WITNESS=$wf bounded node "$HERE/$js" sched "$URI" "$cfg" "$mix"
	if [[ $BOUNDED_RC == 124 ]]; then
		sys=graphile-worker
		[[ $peer == boss12 ]] && sys=pg-boss-12
		row "$sys" "sched:$(sched_label "$label"):$cfg" "$round" - "$TIMEOUT" - - - "timed_out=${TIMEOUT}s,mix=$mix,witness_lines=$(wc -l <"$wf")"
		ran_any=1
		return 0
	fi
	t0=$(node -e 'console.log(JSON.parse(process.argv[1]).t0_us)' "$(cat "$RES")")
	line=$(node -e '
		const r = JSON.parse(process.argv[1]), f = (x, d) => x === undefined ? "-" : x.toFixed(d), notes = [];
		if (r.worker_cpu_s != null && r.server_cpu_s != null && r.machine_cpu_s != null) {
			const ncpu = require("os").cpus().length, us = (x) => (1e6 * x / r.jobs).toFixed(0), other = r.machine_cpu_s - r.worker_cpu_s - r.server_cpu_s;
			notes.push(`cpu_worker_us=${us(r.worker_cpu_s)}`, `cpu_server_us=${us(r.server_cpu_s)}`,
				`other_load_pct=${(100 * Math.max(0, other) / (ncpu * r.seconds)).toFixed(0)}`);
		}
		notes.push(`startup_s=${r.startup_s.toFixed(2)}`, `handled=${r.handled}`, `mix=${r.mix}`, `hold_us=${process.argv[3]}`);
		console.log([r.system, "sched:" + process.argv[2] + ":" + r.config, r.jobs, f(r.seconds, 3), f(r.jobs_per_s, 0), notes.join(",")].join("\t"));
	' "$(cat "$RES")" "$(sched_label "$label")" "$FLEET_HOLD_US")
	IFS=$'\t' read -r sys cfg jobs s rate notes <<<"$line"
	notes+=",$(witness_notes "$mix" "$wf" "$t0")"
	log "  $sys $cfg: $rate jobs/s; witness: ${notes##*mix=}"
	row "$sys" "$cfg" "$round" "$jobs" "$s" "$rate" - - "$(pin_notes "$notes")"
	ran_any=1
}

# sched_chute_row CONFIG ROUND MIX chute.sh-ARGS...: a chute.sh sched or schedclaim row, its
# witness checked; a "skip REASON" from chute.sh (this chute has no priorities or keys yet)
# becomes a "meta skip" row and a log line.
sched_chute_row() {
	local cfg=$1 round=$2 mix=$3 jobs s rate p50 p99 notes wf t0
	shift 3
	FLEET_WORK=$(mktemp -d "$DIR/work.XXXXXX")
	export FLEET_WORK
	bounded "$HERE/chute.sh" "$@"
	read -r jobs s rate p50 p99 notes <"$RES"
	if [[ $jobs == skip ]]; then
		log "  skipped: chute $cfg: $s $rate $p50 $p99 $notes"
		meta "skip:chute:$cfg" "$s $rate $p50 $p99 $notes"
		return 0
	fi
	wf=${notes##*witness=} t0=${notes##*t0_us=} t0=${t0%%,*}
	notes="${notes%,t0_us=*},mix=$mix,$(witness_notes "$mix" "$wf" "$t0")"
	[[ $cfg == sched:* ]] && notes+=",hold_us=$FLEET_HOLD_US"
	log "  chute $cfg: $rate jobs/s; witness: ${notes##*mix=}"
	row chute "$cfg" "$round" "$jobs" "$s" "$rate" "$p50" "$p99" "$(pin_notes "$notes")"
	ran_any=1
}

# ---- issue 37: unique keys and dependencies

# uniq_chute_row CONFIG ROUND uniq.sh-ARGS...: a uniq.sh row; "skip REASON" (this chute has no
# unique keys or dependencies) becomes a "meta skip" row and a log line, as sched_chute_row's.
uniq_chute_row() {
	local sys=$1 cfg=$2 round=$3 jobs s rate p50 p99 notes
	shift 3
	FLEET_WORK=$(mktemp -d "$DIR/work.XXXXXX")
	export FLEET_WORK
	bounded "$HERE/uniq.sh" "$@"
	read -r jobs s rate p50 p99 notes <"$RES"
	if [[ $jobs == skip ]]; then
		log "  skipped: $sys $cfg: $s $rate $p50 $p99 $notes"
		meta "skip:$sys:$cfg" "$s $rate $p50 $p99 $notes"
		return 0
	fi
	row "$sys" "$cfg" "$round" "$jobs" "$s" "$rate" "$p50" "$p99" "$(pin_notes "$notes")"
	ran_any=1
}

# uniq_peer PEER MODE ROUND: uniq.js's row for a node peer.
uniq_peer() {
	local peer=$1 mode=$2 round=$3 line
	db "u$peer"
	bounded node "$HERE/uniq.js" "$peer" "$URI" "$UNIQ_JOBS" "$UNIQ_PROCS" "$mode"
	line=$(node -e '
		const r = JSON.parse(process.argv[1]);
		console.log([r.system, "uniq:" + r.mode, process.argv[2], r.jobs, r.seconds.toFixed(3), r.jobs_per_s.toFixed(0), "-", "-",
			`via=one_pool,conc=${r.conc},checked=${r.counted}` + (process.argv[3] ? "," + process.argv[3] : "")].join("\t"));
	' "$(cat "$RES")" "$round" "$(extra_notes)")
	printf '%s\n' "$line" >>"$OUT"
	log "  $(cut -f1,2,6 <<<"$line" | tr '\t' ' ') jobs/s"
	ran_any=1
}

export FLEET_PG_LOG=$DIR/server.log
t_all=$(date +%s)
for ((round = 1; round <= ROUNDS; round++)); do
	for n in "${sizes[@]}"; do
		if want gw; then
			for cfg in $GW_CONFIGS; do
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
			for b in 1 4 10 100; do
				log "round $round: raw claim+ack, batch $b, $n jobs (load $(load))"
				db raw
				bounded "$HERE/raw.sh" "$URI" "$n" "$b" 2
				read -r s rate <"$RES"
				row raw-claim-ack "b$b-c2" "$round" "$n" "$s" "$rate" - - "$(pin_notes -)"
				ran_any=1
			done
		fi
		if want chute; then
			# As contrib/chute-worker@.service runs it: local copies in its
			# RuntimeDirectory= (a tmpfs); then with them in /tmp, on this disk.
			if [[ " $CHUTE_CONFIGS " == *" persistent-2x2 "* ]]; then
				log "round $round: chute --persistent, 2 processes x -j 2, $n jobs (load $(load))"
				db chute
				on_shm chute_row chute persistent-2x2 "$round" throughput "$URI" "$n"
			fi
			if [[ " $CHUTE_CONFIGS " == *" persistent-2x2-inline "* ]]; then
				log "round $round: chute --inline, 2 processes x -j 2, $n jobs (load $(load))"
				db chute
				on_shm chute_row chute persistent-2x2-inline "$round" throughput-inline "$URI" "$n"
			fi
			if [[ " $CHUTE_CONFIGS " == *" persistent-2x2-inline-keep0 "* ]]; then
				log "round $round: chute --inline, done kept 0, 2 processes x -j 2, $n jobs (load $(load))"
				db chute
				on_shm chute_row chute persistent-2x2-inline-keep0 "$round" throughput-inline-keep0 "$URI" "$n"
			fi
			if [[ " $CHUTE_CONFIGS " == *" persistent-2x2-tmp "* ]]; then
				log "round $round: chute --persistent, local copies in /tmp, $n jobs (load $(load))"
				db chute
				chute_row chute persistent-2x2-tmp "$round" throughput "$URI" "$n"
			fi
		fi
		if want forward; then
			cfg=b$FWD_BATCH-s$FWD_SIZE
			log "round $round: raw batched INSERT (fwdraw), $cfg, $n jobs (load $(load))"
			db fwdraw
			ROW_SH=forward.sh chute_row forward-raw-insert "$cfg" "$round" raw "$URI" "$n" "$FWD_BATCH" "$FWD_SIZE"
			log "round $round: chute forward, $cfg, $n jobs (load $(load))"
			db forward
			ROW_SH=forward.sh chute_row chute-forward "$cfg" "$round" chute "$URI" "$n" "$FWD_BATCH" "$FWD_SIZE"
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
	if want chute-latency; then
		# A persistent stamping worker (pstamp) and an exec'd one (bench/stamp), each
		# with jobs from one open connection (psubmit: the peers' way) and from one
		# `chute submit URL FILE` process per job (pulse).
		for via in conn cli; do
			for mode in persistent exec; do
				log "round $round: latency chute $mode, submit via $via, $LAT_JOBS jobs at $LAT_RATE/s (load $(load))"
				db latchute
				chute_row chute "latency:$mode-$via" "$round" latency "$URI" "$LAT_JOBS" $((1000 / LAT_RATE)) "$mode" "$via"
			done
		done
	fi
	if want chute-exec; then
		# /bin/true per job through the database (2 processes, as the throughput rows;
		# and 1, the spool's shape) and through chute's own spool (one owner, -j 2).
		for procs in 2 1; do
			log "round $round: chute exec /bin/true, $procs process(es) x -j 2, $EXEC_JOBS jobs (load $(load))"
			db exec
			chute_row chute "exec-true-${procs}x2" "$round" exec "$URI" "$EXEC_JOBS" "$procs"
		done
		log "round $round: chute spool exec /bin/true, -j 2, $EXEC_JOBS jobs (load $(load))"
		spool=$(mktemp -d "$DIR/spool.XXXXXX")
		chute_row chute-spool exec-true-j2 "$round" spool "$spool" "$EXEC_JOBS"
	fi
	if want chute-claim; then
		# One worker (--persistent -j 2) with SMALL_BACKLOG queued, BACKLOG queued, and
		# SMALL_BACKLOG queued after BACKLOG finished jobs; local copies on a tmpfs as
		# the unit has them, so that these rows measure the queue, not how this disk
		# allocates an inode per job (fleet.md, "Local copies").
		log "round $round: chute claim rate, $SMALL_BACKLOG queued (load $(load))"
		db claim
		on_shm chute_row chute "claim-q$SMALL_BACKLOG" "$round" claim "$URI" "$SMALL_BACKLOG" "$CLAIM_JOBS"
		log "round $round: chute claim rate, $BACKLOG queued, first $CLAIM_JOBS jobs (load $(load))"
		db claim
		on_shm chute_row chute "claim-q$BACKLOG" "$round" claim "$URI" "$BACKLOG" "$CLAIM_JOBS"
		log "round $round: chute claim rate, $SMALL_BACKLOG queued after $BACKLOG finished (load $(load))"
		db claim
		on_shm chute_row chute "claim-q$SMALL_BACKLOG-after-$BACKLOG-done" "$round" claim "$URI" "$SMALL_BACKLOG" "$CLAIM_JOBS" "$BACKLOG"
	fi
	if want sched; then
		# Each mix through each system in turn, so that the rows of one mix are close in time.
		for label in $SCHED_MIXES; do
			for peer in $SCHED_PEERS; do
				if [[ $peer == chute ]]; then
					log "round $round: sched $(sched_label "$label") ($(sched_mix "$label")), chute persistent-2x2, hold ${FLEET_HOLD_US} us (load $(load))"
					db schute
					on_shm sched_chute_row "sched:$(sched_label "$label"):persistent-2x2" "$round" "$(sched_mix "$label")" \
						sched "$URI" "$(sched_mix "$label")" "$FLEET_HOLD_US"
				else
					sched_peer "$peer" "$label" "$round"
				fi
			done
		done
	fi
	if want sched-claim; then
		# chute's claim rate with priorities and keys in use (a mix of priorities -2..2, 100
		# keys at most 1 running each) against without, alternated, at each backlog.
		for q in $SCHED_QUEUED; do
			for mix in "plain:$q" "both:$q:100:1"; do
				cfg=sched-claim-q$q
				[[ $mix == both:* ]] && cfg+=-keyed
				log "round $round: chute claim rate, $q queued, $mix (load $(load))"
				db sclaim
				on_shm sched_chute_row "$cfg" "$round" "$mix" schedclaim "$URI" "$q" "$CLAIM_JOBS" "$mix"
			done
		done
	fi
	if want uniq; then
		# Plain, then keyed, one system after the other; each in a fresh database or spool.
		for peer in gw boss boss12; do
			for mode in plain keyed; do
				log "round $round: uniq $peer $mode, $UNIQ_JOBS submits, $UNIQ_PROCS at a time (load $(load))"
				uniq_peer "$peer" "$mode" "$round"
			done
		done
		for mode in plain keyed; do
			log "round $round: uniq chute statement (usubmit) $mode, $UNIQ_JOBS submits over $UNIQ_PROCS connections (load $(load))"
			db uconn
			uniq_chute_row chute "uniq:$mode:statement" "$round" conn "$URI" "$UNIQ_JOBS" "$UNIQ_PROCS" "$mode"
		done
		for mode in plain keyed; do
			log "round $round: uniq chute CLI on a queue, $mode, $UNIQ_CLI_JOBS processes, $UNIQ_PROCS at a time (load $(load))"
			db ucli
			uniq_chute_row chute "uniq:$mode:cli-queue" "$round" cli "$URI" "$UNIQ_CLI_JOBS" "$UNIQ_PROCS" "$mode"
		done
		for mode in plain keyed; do
			log "round $round: uniq chute CLI on a spool, $mode, $UNIQ_JOBS processes, $UNIQ_PROCS at a time (load $(load))"
			spool=$(mktemp -d "$DIR/spool.XXXXXX")
			uniq_chute_row chute-spool "uniq:$mode:cli" "$round" cli "$spool/s" "$UNIQ_JOBS" "$UNIQ_PROCS" "$mode"
		done
	fi
	if want after; then
		# The outcome that wakes nobody (the baseline), then the one that wakes AFTER_N.
		for k in 0 "$AFTER_N"; do
			log "round $round: after: chute queue, one job's outcome waking $k (load $(load))"
			db after
			uniq_chute_row chute "after:wake-$k" "$round" after-pg "$URI" "$k"
		done
		log "round $round: after: chute spool, one job's done waking $AFTER_N (load $(load))"
		spool=$(mktemp -d "$DIR/spool.XXXXXX")
		uniq_chute_row chute-spool "after:wake-$AFTER_N" "$round" after-spool "$spool" "$AFTER_N"
		# pg-boss 12's flow(): its resolver unblocks every flowIntervalSeconds (5 by default, 1 at least).
		for flow in 5 1; do
			log "round $round: after: pg-boss 12 flow(), complete() waking $AFTER_N, flowIntervalSeconds $flow (load $(load))"
			db aboss12
			bounded node "$HERE/uniq.js" boss12-after "$URI" "$AFTER_N" "$flow"
			node -e '
				const r = JSON.parse(process.argv[1]);
				console.log([r.system, `after:wake-${r.woken}:flow${r.flow_s}`, process.argv[2], r.woken, (r.wake_ms / 1000).toFixed(4), "-",
					r.wake_ms.toFixed(1), "-", `complete_ms=${r.complete_ms.toFixed(1)},from=complete_return,poll_ms=5` +
					(process.argv[3] ? "," + process.argv[3] : "")].join("\t"));
			' "$(cat "$RES")" "$round" "$(extra_notes)" >>"$OUT"
			ran_any=1
		done
		meta "skip:graphile-worker:after" "no dependencies (graphile-worker declined them, #458)"
		meta "skip:pg-boss:after" "pg-boss 10.4.2 has no dependsOn (pg-boss 12's flow() is measured)"
		log "  graphile-worker: no dependencies (#458); pg-boss 10.4.2: none"
	fi
done
((ran_any)) || { log "nothing selected by BENCH_FLEET_ONLY=$ONLY"; exit 64; }
meta load_end "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"
meta seconds "$(($(date +%s) - t_all))"
log "done in $(($(date +%s) - t_all)) s; wrote $OUT"

# Short table: one line per measurement; then the ratios, as make bench reports them.
column -t -s $'\t' "$OUT"
echo
python3 "$HERE/../report.py" fleet "$OUT" || log "bench/report.py fleet failed"
