#!/usr/bin/env bash
# bench/fleet/chute.sh: chute's side of the fleet benchmark (issue 9), one
# measurement per call, run by run.sh in the same cluster as the peers.
#
#   chute.sh throughput URI N         N jobs bulk-inserted, then 2 x `chute run URI --persistent
#                                     -j 2 --drain -- worker`, timed from their start to the
#                                     last outcome's commit (the peers' end; exit_s: to their exit)
#   chute.sh throughput-inline URI N  the same with --inline (bench/worker reads each payload)
#   chute.sh throughput-inline-keep0 URI N  --inline on a queue that keeps no done job
#                                     (retention --done 0), timed to the workers' exit
#   chute.sh exec URI N PROCS         the same with `-j 2 --drain -- /bin/true`, PROCS processes
#   chute.sh spool DIR N              chute's own spool: N jobs queued in DIR, then
#                                     `chute run DIR -j 2 --drain -- /bin/true`, timed
#   chute.sh latency URI COUNT GAP_MS persistent|exec cli|conn
#                                     one `chute run URI -j 2` (pstamp worker, or bench/stamp
#                                     exec'd per job); COUNT jobs GAP_MS apart over one open
#                                     connection (conn: psubmit; latency from before the INSERT,
#                                     where lib.js takes the peers'), or each by its own
#                                     `chute submit URI FILE` process (cli: pulse -1, one at a
#                                     time, GAP_MS apart or later; latency from the submit's
#                                     end); submit to handler start, p50 and p99
#   chute.sh claim URI QUEUED MEASURE [DONE]
#                                     DONE finished jobs (default 0) and QUEUED queued jobs
#                                     bulk-inserted; one `chute run URI --persistent -j 2` over
#                                     the first MEASURE jobs (--drain when QUEUED <= MEASURE,
#                                     else stopped by SIGTERM after MEASURE jobs)
#   chute.sh sched URI MIX HOLD_US    the scheduling rows (issue 36): the jobs of MIX (as lib.js's
#                                     schedMix: plain:N prio:N keys:N:K:L both:N:K:L hot:H:O
#                                     hotbase:O) bulk-inserted with their priority and key, the
#                                     mix's limit set (`chute limit URI --default --max L`), then
#                                     2 x `chute run URI --persistent -j 2 -- witness persistent
#                                     FILE HOLD_US`, --drain, timed to the last outcome's commit
#                                     (hot/hotbase: until the others have run: the witness that
#                                     runs the last of them stops its owner, then the other one
#                                     is stopped). NOTES end with t0_us= and witness=FILE, for
#                                     run.sh's checker (bench/witness.py)
#   chute.sh schedclaim URI QUEUED MEASURE MIX
#                                     as claim, with witness persistent (no hold) as the handler,
#                                     the QUEUED jobs of MIX (plain:QUEUED, or both:QUEUED:K:L
#                                     with its limit set)
# A mix with priorities or keys needs chute's schema 8 (chute.live's priority and key) and
# `chute limit` on a queue: where this chute has neither, sched and schedclaim print
# "skip REASON" instead of a result, and run.sh writes that down rather than failing.
#
# Environment: CHUTE (the chute binary, chute-pgsql next to it), FLEET_BIN (the compiled
# helpers: worker, stamp, pstamp, pulse, witness), FLEET_WORK (an empty scratch directory),
# FLEET_TIMEOUT (seconds, default 600: the bound of every wait here), PG_BIN.
#
# Prints one line on stdout: "JOBS SECONDS JOBS_PER_S P50_MS P99_MS NOTES" ("-" where not
# applicable; NOTES is key=value,... without spaces). Progress and CPU per job on stderr.
# Every process started here is stopped on exit (SIGTERM, then SIGKILL after 10 s).
set -euo pipefail
export LC_ALL=C

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
CHUTE=${CHUTE:?CHUTE: the chute binary}
BIN=${FLEET_BIN:?FLEET_BIN: the helpers directory}
WORK=${FLEET_WORK:?FLEET_WORK: a scratch directory}
TIMEOUT=${FLEET_TIMEOUT:-600}
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"

say() { printf '  chute: %s\n' "$*" >&2; }
die() { printf 'chute.sh: %s\n' "$*" >&2; exit 1; }
now_ms() { local t; t=$(date +%s.%N); echo "${t%.*}${t#*.}" | cut -c1-13; }
calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }

# ---- processes: everything started here is tracked and stopped on exit

PIDS=()
stop_all() {
	local p i
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for ((i = 0; i < 100; i++)); do
		local left=0
		for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
		((left)) || break
		sleep 0.1
	done
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	PIDS=()
}
trap 'rc=$?; trap - EXIT; stop_all; exit $rc' EXIT
trap 'exit 143' TERM HUP
trap 'exit 130' INT

# bounded CMD...: CMD, killed past $TIMEOUT (exit 124), for a measured run to be waited for with
# wait(1).  Not a loop of `kill -0; sleep`: each sleep is a fork and an exec, and on a
# paravirtualised 2-core machine 20 of them a second took 12% of the samples of a persistent
# run (perf), CPU taken from the measured workers, which the peers' in-process waits do not.
bounded() { exec timeout --kill-after=10 "$TIMEOUT" "$@"; }

# wait_pid PID SECONDS: its exit status, or 124 (and it is killed) past SECONDS.
wait_pid() {
	local pid=$1 i rc=0
	for ((i = 0; i < $2 * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		sleep 2
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		return 124
	fi
	wait "$pid" || rc=$?
	return "$rc"
}

# wait_until SECONDS WHAT COMMAND...: poll COMMAND every 20 ms.
wait_until() {
	local s=$1 what=$2 i
	shift 2
	for ((i = 0; i < s * 50; i++)); do
		"$@" && return 0
		sleep 0.02
	done
	die "timed out after $s s waiting for $what"
}

# ---- the database

sql() { "$PG_BIN/psql" "$URI" -qAt -v ON_ERROR_STOP=1 "$@"; }

# bulk STATE N FIRST: N jobs with IDs FIRST.. in one INSERT ... SELECT generate_series each
# for chute.live (or chute.finished) and chute.payloads (the same statement, as `chute submit`
# does), as the peers' jobs are added in bulk beforehand. IDs have the shape of generated ones;
# the payload is the peers' {"i":N}. 'new' jobs are due now; 'done' ones finished a day ago,
# with their log in their row, as an outcome leaves it (schema version 5).
bulk() {
	local state=$1 n=$2 first=$3
	sql -v n="$n" -v first="$first" -v state="$state" <<-'SQL'
		WITH src AS MATERIALIZED (
			SELECT format('%s.%s.0004242_0000.bench', 1764000000 + i / 1000000,
				lpad((i % 1000000)::text, 6, '0')) AS id,
			       convert_to('{"i":' || i || '}', 'UTF8') AS body
			FROM generate_series(:first::bigint, :first::bigint + :n - 1) i),
		j AS (INSERT INTO chute.live (queue, id, state, run_at, size)
			SELECT 'default', id, 'new', now(), length(body) FROM src WHERE :'state' = 'new'),
		f AS (INSERT INTO chute.finished (queue, id, state, run_at, attempts, last, size, log)
			SELECT 'default', id, 'done', now() - interval '1 day', 1, 'reply=ok', length(body),
			       convert_to('@chute attempt=1 start' || chr(10) ||
			       '@chute attempt=1 reply=ok time=1ms' || chr(10), 'UTF8')
			FROM src WHERE :'state' <> 'new')
		INSERT INTO chute.payloads (queue, id, body) SELECT 'default', id, body FROM src;
	SQL
}

# A fresh database gets chute's schema, its jobs, then ANALYZE and CHECKPOINT, as lib.js
# does for the peers (statistics of the filled table; the fill's dirty pages written).
# With VACUUM=1 (the claim rows), VACUUM ANALYZE instead: a backlog that built up over
# time has been vacuumed on the way (chute.live: autovacuum every 10,000 inserts), and
# the insert-triggered vacuum of a million fresh rows would otherwise run during the
# timed window, as raw.sh avoids for its table too.
prepare() {
	local queued=$1 finished=${2:-0} t
	"$CHUTE" init "$URI" >/dev/null
	t=$(now_ms)
	((finished == 0)) || bulk 'done' "$finished" 10000001
	bulk new "$queued" 1
	if [[ ${VACUUM:-0} == 1 ]]; then sql -c 'VACUUM ANALYZE' -c 'CHECKPOINT'; else sql -c 'ANALYZE' -c 'CHECKPOINT'; fi
	say "bulk insert of $queued queued + $finished finished: $(calc "($(now_ms) - $t) / 1000") s"
	[[ $(sql -c "SELECT count(*) FROM chute.jobs WHERE state = 'new'") == "$queued" ]] ||
		die "expected $queued queued jobs"
}

count_state() { sql -c "SELECT count(*) FROM chute.jobs WHERE state = '$1'"; }

# ---- CPU accounting (as lib.js: workers, server, the rest of the machine)

DATADIR=
server_cpu() {
	local pm
	[[ -n $DATADIR ]] || DATADIR=$(sql -c 'SHOW data_directory')
	pm=$(head -1 "$DATADIR/postmaster.pid" 2>/dev/null) || { echo -1; return; }
	# The postmaster's own and reaped children's time, plus every live child's.
	{ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v pm="$pm" '
		{ pid = $1; sub(/^.*\) /, ""); split($0, f, " ")
		  if (pid == pm) t += f[12] + f[13] + f[14] + f[15]
		  else if (f[2] == pm) t += f[12] + f[13] }
		END { printf "%.2f\n", t / 100 }'
}
machine_cpu() { awk '$1 == "cpu" { printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / 100; exit }' /proc/stat; }

# cpu_notes JOBS SECONDS WORKER_S SERVER0 SERVER1 MACHINE0 MACHINE1: the NOTES part, and a line on stderr.
cpu_notes() {
	local n=$1 s=$2 w=$3 ncpu srv mach other
	# The machine's CPUs, as /proc/stat counts them and lib.js (os.cpus()) does: not nproc,
	# which under run.sh's BENCH_FLEET_PIN=1 (taskset -c 1) says 1.
	ncpu=$(getconf _NPROCESSORS_ONLN)
	srv=$(calc "$5 - $4")
	mach=$(calc "$7 - $6")
	other=$(awk -v m="$mach" -v w="$w" -v v="$srv" -v c="$ncpu" -v s="$s" \
		'BEGIN { o = m - w - v; if (o < 0) o = 0; printf "%.0f", 100 * o / (c * s) }')
	say "$(awk -v n="$n" -v s="$s" -v w="$w" -v v="$srv" 'BEGIN { printf "%.0f jobs/s; CPU per job: workers %.0f us, server %.0f us;", n / s, 1e6 * w / n, 1e6 * v / n }')" \
		"other load ${other}% of $ncpu cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
	printf 'cpu_worker_us=%.0f,cpu_server_us=%.0f,other_load_pct=%s' \
		"$(calc "1e6 * $w / $n")" "$(calc "1e6 * $srv / $n")" "$other"
}

# children_cpu FILE: user+sys seconds from the second line of bash's `times` in FILE.
children_cpu() {
	sed -n 2p "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.2f\n", t }'
}

# ---- measurements

# run_workers PROCS ARGS...: start PROCS `chute run URI ARGS` at once, wait for all (bounded),
# their CPU (children included) into $WORK/times. Sets T0 and T1 (ms).
run_workers() {
	local procs=$1 i
	shift
	T0=$(now_ms)
	(
		pids=()
		trap 'kill -TERM "${pids[@]}" 2>/dev/null; exit 143' TERM INT HUP
		for ((i = 1; i <= procs; i++)); do
			bounded "$CHUTE" run "$URI" "$@" 2>"$WORK/worker$i.err" &
			pids+=($!)
		done
		rc=0
		for p in "${pids[@]}"; do wait "$p" || rc=$?; done
		times >"$WORK/times"
		exit "$rc"
	) &
	PIDS+=($!)
	local rc=0
	wait $! || rc=$?
	T1=$(now_ms)
	((rc == 0)) || { tail -n 3 "$WORK"/worker*.err >&2; die "a worker exited $rc"; }
}

# timed_drain N PROCS ARGS...: N jobs bulk-inserted beforehand, PROCS workers with ARGS.
timed_drain() {
	local n=$1 procs=$2 s0 m0 s1 m1 s end_s
	shift 2
	prepare "$n"
	# KEEP_DONE=0: the queue keeps no done job (issue 38's retention): each
	# leaves the database in its outcome statement.
	[[ -z ${KEEP_DONE:-} ]] || "$CHUTE" retention "$URI" --done "$KEEP_DONE" >/dev/null
	# BENCH_PRE_SQL: a statement run after the setup, for an experiment.
	[[ -z ${BENCH_PRE_SQL:-} ]] || sql -c "$BENCH_PRE_SQL" >/dev/null
	s0=$(server_cpu) m0=$(machine_cpu)
	run_workers "$procs" "$@"
	s1=$(server_cpu) m1=$(machine_cpu)
	# BENCH_POST_SQL: a statement run after the drain (pg_stat_statements),
	# its output appended to BENCH_POST_OUT.
	[[ -z ${BENCH_POST_SQL:-} ]] || sql -c "$BENCH_POST_SQL" >>"${BENCH_POST_OUT:-/dev/null}"
	if [[ ${KEEP_DONE:-} == 0 ]]; then
		# Nothing left: no row, no payload, no failure (failed jobs are kept).
		[[ $(sql -c 'SELECT (SELECT count(*) FROM chute.jobs) + (SELECT count(*) FROM chute.payloads)') == 0 ]] ||
			die "jobs left: $(sql -c 'SELECT state, count(*) FROM chute.jobs GROUP BY 1')"
		END=exit
	else
		[[ $(count_state 'done') == "$n" ]] || die "not every job is done: $(sql -c 'SELECT state, count(*) FROM chute.jobs GROUP BY 1')"
	fi
	s=$(calc "($T1 - $T0) / 1000")
	# The database's end: the last outcome recorded (run_at of a done job is its commit's now()).
	end_s=$(sql -c "SELECT round((extract(epoch FROM max(run_at)) * 1000 - $T0)::numeric / 1000, 3) FROM chute.jobs")
	# END=db: timed to the database's end, as lib.js times the peers (it stops its clock
	# when the database says every job is finished, not when the workers have exited);
	# still from before the workers' start, where the peers' clocks start after it.
	local t=$s other="last_done_s=$end_s"
	# Kept 0, no row says when the last job ended: timed to the workers' exit.
	[[ ${KEEP_DONE:-} == 0 ]] && end_s=$s
	[[ ${END:-exit} == db ]] && t=$end_s other="exit_s=$s"
	echo "$n $t $(rate "$n" "$t") - - $other,$(cpu_notes "$n" "$t" "$(children_cpu "$WORK/times")" "$s0" "$s1" "$m0" "$m1")"
}

# Against the peers: to the database's end, as they are timed.
m_throughput() {
	URI=$1
	END=db timed_drain "$2" 2 --persistent -j 2 --drain -- "$BIN/worker"
}

# The same with --inline: each payload on the worker's pipe, no local copy.
m_throughput_inline() {
	URI=$1
	END=db timed_drain "$2" 2 --inline -j 2 --drain -- "$BIN/worker"
}

# --inline with the queue keeping no done job: the lightest path.
m_throughput_inline_keep0() {
	URI=$1
	KEEP_DONE=0 timed_drain "$2" 2 --inline -j 2 --drain -- "$BIN/worker"
}

m_exec() {
	URI=$1
	timed_drain "$2" "$3" -j 2 --drain -- /bin/true
}

m_spool() {
	local s=$1/spool n=$2 i t0 t1
	"$CHUTE" init "$s" >/dev/null
	mkdir -p "$1/in"
	for ((i = 1; i <= n; i++)); do printf '{"i":%d}' "$i" >"$1/in/$i"; done
	(cd "$1/in" && find . -type f -printf '%P\n' | xargs "$CHUTE" submit "$s" >/dev/null)
	sync
	t0=$(now_ms)
	bounded "$CHUTE" run "$s" -j 2 --drain -- /bin/true 2>"$WORK/owner.err" &
	PIDS+=($!)
	wait $! || { tail -n 3 "$WORK/owner.err" >&2; die "spool owner failed"; }
	t1=$(now_ms)
	[[ $(find "$s/done" -type f | wc -l) == "$n" ]] || die "spool: not every job is in done/"
	echo "$n $(calc "($t1 - $t0) / 1000") $(rate "$n" "$(calc "($t1 - $t0) / 1000")") - - -"
}

# Nearest-rank percentiles (as lib.js) of the numbers on stdin: "P50 P99 N".
pcts() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1
	i = int(0.5 * NR); if (i < 0.5 * NR) i++; j = int(0.99 * NR); if (j < 0.99 * NR) j++
	printf "%.1f %.1f %d\n", v[i], v[j], NR }'; }

m_latency() {
	URI=$1
	local count=$2 gap=$3 mode=$4 via=$5 st=$WORK/stamps pid probe i got rps
	"$CHUTE" init "$URI" >/dev/null
	printf '{"i":0}' >"$WORK/payload"
	if [[ $mode == persistent ]]; then
		: >"$st"
		"$CHUTE" run "$URI" --persistent -j 2 -- "$BIN/pstamp" "$st" 2>"$WORK/worker.err" &
	else
		mkdir -p "$st"
		"$CHUTE" run "$URI" -j 2 -- "$BIN/stamp" "$st" 2>"$WORK/worker.err" &
	fi
	pid=$!
	PIDS+=("$pid")
	# Started and listening: a probe job runs through it (bounded), then 1 s of rest, as the
	# peers' workers get before the first job.
	probe=$("$CHUTE" submit "$URI" "$WORK/payload")
	stamped() {
		if [[ $mode == persistent ]]; then grep -q "^$1 " "$st"; else [[ -e $st/$1 ]]; fi
	}
	wait_until 30 "the probe job" stamped "$probe"
	sleep 1
	if [[ $via == cli ]]; then
		# One at a time: 20 submit processes a second, each with its own server backend, can
		# be more than a loaded machine does, and then they pile up (README.md).
		"$BIN/pulse" -1 "$count" "$gap" "$WORK/submitted" "$CHUTE" submit "$URI" "$WORK/payload"
	else
		"$BIN/psubmit" "$URI" "$count" "$gap" "$WORK/submitted"
	fi
	all_started() {
		local n
		if [[ $mode == persistent ]]; then n=$(wc -l <"$st"); else n=$(find "$st" -name '[!.]*' -type f | wc -l); fi
		((n >= count + 1))
	}
	wait_until 30 "$count handler starts" all_started
	kill -TERM "$pid"
	wait_pid "$pid" 30 || die "worker exited $?"
	if [[ $mode == persistent ]]; then
		cat "$st"
	else
		for i in "$st"/*; do awk -v id="${i##*/}" '{ printf "%s %.3f\n", id, $1 * 1000 }' "$i"; done
	fi >"$WORK/started"
	# Handler start - the submit's end (its ID printed or its notify answered), and - its start.
	awk 'NR == FNR { s[$1] = $2; e[$1] = $3; next } ($1 in e) { print $2 - e[$1], $2 - s[$1] }' \
		"$WORK/submitted" "$WORK/started" >"$WORK/lat"
	read -r e50 e99 got <<<"$(cut -d' ' -f1 "$WORK/lat" | pcts)"
	((got == count)) || die "$got of $count jobs have a start stamp"
	read -r s50 s99 _ <<<"$(cut -d' ' -f2 "$WORK/lat" | pcts)"
	read -r d50 d99 _ <<<"$(awk '{ print $3 - $2 }' "$WORK/submitted" | pcts)"
	# The rate the submits achieved (first start to last start).
	rps=$(sort -k2 -g "$WORK/submitted" | awk 'NR == 1 { a = $2 } { b = $2 } END { printf "%.1f", (NR - 1) * 1000 / (b - a) }')
	say "latency $mode via $via: p50/p99 $e50/$e99 ms from each submit's end, $s50/$s99 ms from its start" \
		"(the submit itself: p50 $d50 ms, p99 $d99 ms; $rps submits/s)"
	if [[ $via == cli ]]; then
		echo "$count - - $e50 $e99 from=submit_end,from_start_p50=$s50,from_start_p99=$s99,submit_p50_ms=$d50,submit_p99_ms=$d99,submits_per_s=$rps"
	else
		echo "$count - - $s50 $s99 from=submit_start,from_end_p50=$e50,from_end_p99=$e99,submit_p50_ms=$d50,submit_p99_ms=$d99,submits_per_s=$rps"
	fi
}

# The rate of jobs K1 to K2 by handler start (pstamp's stamps): jobs/s.
steady() { cut -d' ' -f2 "$1" | sort -g | awk -v a="$2" -v b="$3" 'NR == a { t1 = $1 } NR == b { t2 = $1 }
	END { if (t2 > t1) printf "%.0f\n", (b - a) * 1000 / (t2 - t1); else print "-" }'; }

m_claim() {
	URI=$1
	local queued=$2 measure=$3 finished=${4:-0} st=$WORK/stamps n s k1 r dead due jobs s0 s1 m0 m1
	VACUUM=1 prepare "$queued" "$finished"
	: >"$st"
	s0=$(server_cpu) m0=$(machine_cpu)
	if ((queued <= measure)); then
		run_workers 1 --persistent -j 2 --drain -- "$BIN/pstamp" "$st"
		measure=$queued
	else
		# The worker whose job is the MEASUREth sends SIGTERM to its owner (pstamp COUNT N).
		run_workers 1 --persistent -j 2 -- "$BIN/pstamp" "$st" "$WORK/count" "$measure"
	fi
	s1=$(server_cpu) m1=$(machine_cpu)
	n=$(count_state 'done')
	n=$((n - finished))
	((n >= measure)) || die "only $n jobs done, wanted $measure"
	s=$(calc "($T1 - $T0) / 1000")
	k1=$((measure / 10))
	r=$(steady "$st" "$k1" "$measure")
	# pg_stat counters are flushed by each backend at its exit and at most every second.
	sleep 1.5
	read -r dead jobs due <<<"$(sql -F ' ' -c "SELECT n_dead_tup, pg_relation_size('chute.live'),
		pg_relation_size('chute.jobs_due') FROM pg_stat_user_tables WHERE relid = 'chute.live'::regclass")"
	say "claim, $queued queued, $finished finished: $n jobs in $s s, $(rate "$n" "$s")/s; jobs $k1 to $measure at $r/s;" \
		"n_dead_tup $dead, chute.live $((jobs / 1024)) KiB, jobs_due $((due / 1024)) KiB"
	echo "$n $s $(rate "$n" "$s") - - steady_${k1}_${measure}=$r,n_dead_tup=$dead,jobs_kib=$((jobs / 1024)),jobs_due_kib=$((due / 1024)),$(cpu_notes "$n" "$s" "$(children_cpu "$WORK/times")" "$s0" "$s1" "$m0" "$m1")"
}

# ---- the scheduling rows (issue 36)

# mix_parse MIX: sets MIX_N (jobs inserted), MIX_LIMIT (per-key max, 0 none), MIX_WAIT (jobs the
# run waits for), MIX_OTHERS (the others' key prefix for hot/hotbase, else empty), MIX_SQL_PRIO
# and MIX_SQL_KEY (SQL of i, the job's index from 0, as lib.js's schedMix spec(i)).
mix_parse() {
	local f h
	IFS=: read -r -a f <<<"$1"
	MIX_LIMIT=0 MIX_OTHERS='' MIX_SQL_PRIO=0 MIX_SQL_KEY=NULL
	case ${f[0]} in
	plain) MIX_N=${f[1]} ;;
	prio) MIX_N=${f[1]} MIX_SQL_PRIO='(i * 7) % 5 - 2' ;;
	keys | both)
		MIX_N=${f[1]} MIX_LIMIT=${f[3]} MIX_SQL_KEY="'k' || (i % ${f[2]})"
		[[ ${f[0]} == both ]] && MIX_SQL_PRIO='(i * 7) % 5 - 2' ;;
	hot)
		h=${f[1]} MIX_N=$((f[1] + f[2])) MIX_LIMIT=1 MIX_OTHERS=o
		MIX_SQL_KEY="CASE WHEN i < $h THEN 'hot' ELSE 'o' || (i - $h) END" ;;
	hotbase) MIX_N=${f[1]} MIX_LIMIT=1 MIX_OTHERS=o MIX_SQL_KEY="'o' || i" ;;
	*) die "unknown mix $1" ;;
	esac
	[[ $MIX_N =~ ^[1-9][0-9]*$ ]] || die "mix $1: no job count"
	MIX_WAIT=$MIX_N
	[[ -z $MIX_OTHERS ]] || MIX_WAIT=${f[-1]}
}

# sched_ready: can this chute's queue take priorities, keys and limits? "" if so, else the reason.
# Asked of the database chute init made (schema 8's columns) and of `chute limit` itself.
sched_ready() {
	local cols
	cols=$(sql -c "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'chute'
		AND table_name = 'live' AND column_name IN ('priority', 'key')")
	[[ $cols == 2 ]] || { echo "chute.live has no priority and key columns (schema 8, issue 36: not in this build)"; return; }
	if ((MIX_LIMIT > 0)) && ! "$CHUTE" limit "$URI" --default --max "$MIX_LIMIT" >"$WORK/limit.out" 2>&1; then
		echo "\`chute limit URL --default --max $MIX_LIMIT\` failed: $(head -1 "$WORK/limit.out")"
	fi
}

# sched_prepare MIX: chute init, the mix's jobs in one INSERT (as bulk(): IDs in order, due now,
# the payload {"i":N} or {"i":N,"k":"KEY"}, with priority and key where the mix has them), the
# limit, ANALYZE (VACUUM ANALYZE with VACUUM=1) and CHECKPOINT. Prints "skip REASON" and exits 0
# where this chute cannot take the mix.
sched_prepare() {
	local why t cols=
	mix_parse "$1"
	"$CHUTE" init "$URI" >/dev/null
	if [[ $MIX_SQL_PRIO != 0 || $MIX_SQL_KEY != NULL ]]; then
		why=$(sched_ready)
		if [[ -n $why ]]; then
			say "skipped: $why"
			echo "skip $why"
			exit 0
		fi
		cols=", priority, key"
	fi
	t=$(now_ms)
	sql <<-SQL
		WITH src AS MATERIALIZED (
			SELECT format('%s.%s.0004242_0000.bench', 1764000000 + i / 1000000,
				lpad((i % 1000000)::text, 6, '0')) AS id,
			       ($MIX_SQL_PRIO)::smallint AS prio, ($MIX_SQL_KEY)::text AS key,
			       convert_to('{"i":' || i || coalesce(',"k":"' || ($MIX_SQL_KEY) || '"', '') || '}', 'UTF8') AS body
			FROM generate_series(0, $MIX_N - 1) i),
		j AS (INSERT INTO chute.live (queue, id, state, run_at, size${cols})
			SELECT 'default', id, 'new', now(), length(body)${cols:+, prio, key} FROM src)
		INSERT INTO chute.payloads (queue, id, body) SELECT 'default', id, body FROM src;
	SQL
	if [[ ${VACUUM:-0} == 1 ]]; then sql -c 'VACUUM ANALYZE' -c 'CHECKPOINT'; else sql -c 'ANALYZE' -c 'CHECKPOINT'; fi
	say "bulk insert of $MIX_N jobs ($1): $(calc "($(now_ms) - $t) / 1000") s"
	[[ $(sql -c "SELECT count(*) FROM chute.jobs WHERE state = 'new'") == "$MIX_N" ]] ||
		die "expected $MIX_N queued jobs"
}

# run_until_others N: 2 x `chute run URI --persistent -j 2` with the witness counting the
# others; the first owner stopped by its witness ends the run, the other is stopped then.
# Sets T0 and T1 (ms) and T0_US (the witness's clock).
run_until_others() {
	local i
	T0_US=$("$BIN/witness" now)
	T0=$(now_ms)
	(
		pids=()
		trap 'kill -TERM "${pids[@]}" 2>/dev/null; exit 143' TERM INT HUP
		for ((i = 1; i <= 2; i++)); do
			bounded "$CHUTE" run "$URI" --persistent -j 2 -- "$BIN/witness" persistent "$WORK/witness" \
				"$HOLD" "$WORK/count" "$MIX_WAIT" "$MIX_OTHERS" 2>"$WORK/worker$i.err" &
			pids+=($!)
		done
		wait -n "${pids[@]}" || true
		kill -TERM "${pids[@]}" 2>/dev/null || true
		for p in "${pids[@]}"; do wait "$p" || true; done
		times >"$WORK/times"
	) &
	PIDS+=($!)
	wait $! || true
	T1=$(now_ms)
}

m_sched() {
	URI=$1
	local mix=$2 s0 s1 m0 m1 s n h end_s other
	HOLD=$3
	sched_prepare "$mix"
	: >"$WORK/witness"
	s0=$(server_cpu) m0=$(machine_cpu)
	if [[ -n $MIX_OTHERS ]]; then
		run_until_others
	else
		T0_US=$("$BIN/witness" now)
		run_workers 2 --persistent -j 2 --drain -- "$BIN/witness" persistent "$WORK/witness" "$HOLD"
	fi
	s1=$(server_cpu) m1=$(machine_cpu)
	s=$(calc "($T1 - $T0) / 1000")
	if [[ -n $MIX_OTHERS ]]; then
		# The witness's count: a handler's line is written as its job ends.
		read -r n h <<<"$(awk -v p="$MIX_OTHERS" 'index($1, p) == 1 { n++ } $1 == "hot" { h++ } END { print n + 0, h + 0 }' "$WORK/witness")"
		((n >= MIX_WAIT)) || die "only $n of the $MIX_WAIT others ran"
		other="exit_s=$s,hot_ran=$h"
	else
		[[ $(count_state 'done') == "$MIX_N" ]] || die "not every job is done: $(sql -c 'SELECT state, count(*) FROM chute.jobs GROUP BY 1')"
		end_s=$(sql -c "SELECT round((extract(epoch FROM max(run_at)) * 1000 - $T0)::numeric / 1000, 3) FROM chute.jobs")
		other="exit_s=$s"
		s=$end_s
	fi
	echo "$MIX_WAIT $s $(rate "$MIX_WAIT" "$s") - - $other,$(cpu_notes "$MIX_WAIT" "$s" "$(children_cpu "$WORK/times")" "$s0" "$s1" "$m0" "$m1"),t0_us=$T0_US,witness=$WORK/witness"
}

m_schedclaim() {
	URI=$1
	local queued=$2 measure=$3 mix=$4 wf=$WORK/witness n s k1 r s0 s1 m0 m1
	VACUUM=1 sched_prepare "$mix"
	((MIX_N == queued)) || die "mix $mix is not of $queued jobs"
	: >"$wf"
	[[ -z ${BENCH_PRE_SQL:-} ]] || sql -c "$BENCH_PRE_SQL" >/dev/null
	s0=$(server_cpu) m0=$(machine_cpu)
	T0_US=$("$BIN/witness" now)
	if ((queued <= measure)); then
		run_workers 1 --persistent -j 2 --drain -- "$BIN/witness" persistent "$wf" 0
		measure=$queued
	else
		run_workers 1 --persistent -j 2 -- "$BIN/witness" persistent "$wf" 0 "$WORK/count" "$measure"
	fi
	s1=$(server_cpu) m1=$(machine_cpu)
	[[ -z ${BENCH_POST_SQL:-} ]] || sql -c "$BENCH_POST_SQL" >>"${BENCH_POST_OUT:-/dev/null}"
	n=$(count_state 'done')
	((n >= measure)) || die "only $n jobs done, wanted $measure"
	s=$(calc "($T1 - $T0) / 1000")
	k1=$((measure / 10))
	# The steady rate by handler start, as claim's steady_K1_K2 (microseconds here).
	r=$(cut -d' ' -f2 "$wf" | sort -g | awk -v a="$k1" -v b="$measure" 'NR == a { t1 = $1 } NR == b { t2 = $1 }
		END { if (t2 > t1) printf "%.0f\n", (b - a) * 1e6 / (t2 - t1); else print "-" }')
	say "claim ($mix), $queued queued: $n jobs in $s s, $(rate "$n" "$s")/s; jobs $k1 to $measure at $r/s"
	echo "$n $s $(rate "$n" "$s") - - steady_${k1}_${measure}=$r,$(cpu_notes "$n" "$s" "$(children_cpu "$WORK/times")" "$s0" "$s1" "$m0" "$m1"),t0_us=$T0_US,witness=$wf"
}

cmd=${1:-}
shift || true
case $cmd in
throughput) m_throughput "$@" ;;
throughput-inline) m_throughput_inline "$@" ;;
throughput-inline-keep0) m_throughput_inline_keep0 "$@" ;;
exec) m_exec "$@" ;;
spool) m_spool "$@" ;;
latency) m_latency "$@" ;;
claim) m_claim "$@" ;;
sched) m_sched "$@" ;;
schedclaim) m_schedclaim "$@" ;;
*) die "usage: chute.sh throughput|throughput-inline|exec|spool|latency|claim|sched|schedclaim ... (see the header)" ;;
esac
