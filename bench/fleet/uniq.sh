#!/usr/bin/env bash
# bench/fleet/uniq.sh: chute's rows of issue 37 (unique keys, dependencies), one
# measurement per call, run by run.sh (BENCH_FLEET_ONLY="uniq after").
#
#   uniq.sh conn URI N PROCS plain|keyed
#       the statement's cost: usubmit, PROCS processes each over one open connection, N
#       single-job submits in all, `chute submit`'s statement (plain) or `chute submit
#       --unique KEY`'s (keyed: a distinct key per job, --unique-while active)
#   uniq.sh cli TARGET N PROCS plain|keyed
#       what a user runs: N `chute submit TARGET [--unique uI] FILE` processes, PROCS at a
#       time (xargs -P); TARGET a queue's URI or a spool (made here with `chute init`)
#   uniq.sh after-pg URI K
#       one job A and K jobs waiting for it (`chute.submit_after`, submit --after's one
#       statement, K calls in one SELECT; untimed), then `chute run URI -j 1 -- HANDLER`:
#       A's outcome wakes the K in its own transaction (the trigger live_after_ended), so
#       the cost is that statement's: its execute's duration from the server's log
#       (log_min_duration_statement = 0 for this database; FLEET_PG_LOG is the log).
#       The woken jobs' handler holds (it reads a FIFO nobody writes), so no other outcome
#       follows; with K = 0 it is the same outcome waking nobody (run.sh's baseline)
#   uniq.sh after-spool DIR K
#       the same on a spool: A and K `chute submit DIR --after A` (untimed), then the owner
#       (`chute run DIR -j 1`); timed from A's rename into done/ to the last rename of a
#       woken job into new/ (their ctimes: the kernel's clock at each rename)
#   uniq.sh hold FIFO       (internal) the handler: job A ends at once, the others block
#
# A chute without `submit --unique` (schema 10's chute.unique_keys on a queue) or `submit
# --after` prints "skip REASON" instead, and run.sh writes that down.
#
# Environment: CHUTE, FLEET_BIN, FLEET_WORK, FLEET_TIMEOUT, PG_BIN, FLEET_PG_LOG (after-pg).
# Prints one line on stdout: "JOBS SECONDS JOBS_PER_S P50_MS P99_MS NOTES", as chute.sh.
set -euo pipefail
export LC_ALL=C

if [[ ${1:-} == hold ]]; then
	[[ $CHUTE_ID == A* ]] && exit 0
	exec cat "$2" >/dev/null
fi

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
CHUTE=${CHUTE:?CHUTE: the chute binary}
BIN=${FLEET_BIN:?FLEET_BIN: the helpers directory}
WORK=${FLEET_WORK:?FLEET_WORK: a scratch directory}
TIMEOUT=${FLEET_TIMEOUT:-600}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"

say() { printf '  chute: %s\n' "$*" >&2; }
die() { printf 'uniq.sh: %s\n' "$*" >&2; exit 1; }
skip() { echo "skip $*"; exit 0; }
now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }

OWNER=
trap 'rc=$?; trap - EXIT; [[ -z $OWNER ]] || { kill -TERM "$OWNER" 2>/dev/null; wait "$OWNER" 2>/dev/null; }; exit $rc' EXIT
trap 'exit 143' TERM HUP
trap 'exit 130' INT

URI=
sql() { "$PG_BIN/psql" "$URI" -qAt -v ON_ERROR_STOP=1 "$@"; }
is_uri() { [[ $1 == postgres://* || $1 == postgresql://* ]]; }

# wait_until SECONDS WHAT COMMAND...: poll COMMAND every 20 ms (untimed: the figures come
# from the server's log or the files' ctimes, not from when this loop notices).
wait_until() {
	local wu_limit=$1 wu_what=$2 wu_i
	shift 2
	for ((wu_i = 0; wu_i < wu_limit * 50; wu_i++)); do
		"$@" && return 0
		sleep 0.02
	done
	die "timed out after $wu_limit s waiting for $wu_what"
}

# init_target TARGET: chute init; skip where this chute has no unique keys on it.
init_target() {
	"$CHUTE" init "$1" >/dev/null
	if is_uri "$1"; then
		URI=$1
		[[ $(sql -c "SELECT to_regclass('chute.unique_keys') IS NOT NULL") == t ]] ||
			skip "this chute's queue has no chute.unique_keys (submit --unique)"
	fi
	"$CHUTE" submit --help 2>&1 | grep -q -- --unique || skip "this chute has no submit --unique"
}

# count TARGET: its jobs (a queue's in chute.live, a spool's in new/).
count() {
	if is_uri "$1"; then
		URI=$1 sql -c "SELECT count(*) FROM chute.live"
	else
		find "$1/new" -maxdepth 1 -type f | wc -l
	fi
}

# check TARGET N MODE: exactly N jobs, and keyed: N keys held (a lost or a doubled insert fails).
check() {
	local got keys
	got=$(count "$1")
	[[ $got == "$2" ]] || die "$3: $got jobs after $2 submits"
	if [[ $3 == keyed ]] && is_uri "$1"; then
		keys=$(URI=$1 sql -c "SELECT count(DISTINCT unique_key) FROM chute.live")
		[[ $keys == "$2" ]] || die "keyed: $keys distinct keys for $2 jobs"
	fi
}

m_conn() {
	local uri=$1 n=$2 procs=$3 mode=$4 s r
	init_target "$uri"
	read -r s r < <(timeout "$TIMEOUT" "$BIN/usubmit" "$uri" "$n" "$procs" "$mode") || die "usubmit failed"
	[[ -n ${s:-} ]] || die "usubmit said nothing"
	check "$uri" "$n" "$mode"
	say "statement $mode: $n submits over $procs connections in $s s, $r/s"
	echo "$n $s $r - - via=usubmit,procs=$procs,checked=$n"
}

m_cli() {
	local t=$1 n=$2 procs=$3 mode=$4 t0 t1 s key=()
	init_target "$t"
	printf '{"i":0}' >"$WORK/payload"
	[[ $mode == keyed ]] && key=(--unique 'u{}')
	t0=$(now_ns)
	seq 0 $((n - 1)) | timeout "$TIMEOUT" xargs -P "$procs" -I{} "$CHUTE" submit "$t" "${key[@]}" "$WORK/payload" >/dev/null ||
		die "a submit failed"
	t1=$(now_ns)
	s=$(secs "$t0" "$t1")
	check "$t" "$n" "$mode"
	say "cli $mode: $n submit processes, $procs at a time, in $s s, $(rate "$n" "$s")/s"
	echo "$n $s $(rate "$n" "$s") - - via=cli,procs=$procs,checked=$n"
}

m_after_pg() {
	local uri=$1 k=$2 a off line ms nlines
	URI=$uri
	"$CHUTE" init "$uri" >/dev/null
	[[ $(sql -c "SELECT to_regproc('chute.submit_after') IS NOT NULL") == t ]] ||
		skip "this chute's queue has no chute.submit_after (submit --after)"
	[[ -r ${FLEET_PG_LOG:-} ]] || die "FLEET_PG_LOG: the server's log is not readable"
	printf '{"i":0}' >"$WORK/payload"
	a=$("$CHUTE" submit "$uri" --id A0 "$WORK/payload")
	((k == 0)) || sql -c "SELECT count(*) FROM (SELECT chute.submit_after('default', 'D' || i, '{\"i\":1}'::bytea,
		ARRAY['$a'], false, 0::smallint, NULL) FROM generate_series(1, $k) i) x" >/dev/null
	[[ $(sql -c "SELECT count(*) FROM chute.live WHERE state = 'wait'") == "$k" ]] || die "not $k jobs waiting"
	sql -c "ALTER DATABASE $(sql -c 'SELECT current_database()') SET log_min_duration_statement = 0"
	sql -c "VACUUM ANALYZE" -c "CHECKPOINT"
	mkfifo "$WORK/hold"
	off=$(stat -c %s "$FLEET_PG_LOG")
	timeout "$TIMEOUT" "$CHUTE" run "$uri" -j 1 --grace 100ms -- "$HERE/uniq.sh" hold "$WORK/hold" 2>"$WORK/owner.err" &
	OWNER=$!
	a_done() { [[ $(sql -c "SELECT count(*) FROM chute.finished WHERE id = '$a' AND state = 'done'") == 1 ]]; }
	wait_until "$TIMEOUT" "A done" a_done
	[[ $(sql -c "SELECT count(*) FROM chute.live WHERE state = 'wait'") == 0 ]] || die "dependents still waiting after A's outcome"
	kill -TERM "$OWNER"
	wait "$OWNER" 2>/dev/null || true
	OWNER=
	sql -c "ALTER DATABASE $(sql -c 'SELECT current_database()') RESET log_min_duration_statement"
	# The first outcome's execute line (queue_pg_outcome.c: "gone AS (DELETE FROM chute.live j"),
	# A's: the owner's shutdown sends another, putting the held job back in new.
	tail -c +$((off + 1)) "$FLEET_PG_LOG" >"$WORK/log"
	nlines=$(grep -c 'duration: .* execute .*gone AS (DELETE FROM chute.live j' "$WORK/log" || true)
	((nlines >= 1)) || die "no outcome statement in the server's log"
	line=$(grep -m 1 'duration: .* execute .*gone AS (DELETE FROM chute.live j' "$WORK/log")
	ms=$(sed -E 's/.*duration: ([0-9.]+) ms.*/\1/' <<<"$line")
	say "after-pg: A's outcome, waking $k, took $ms ms in the server"
	echo "$k $(awk -v m="$ms" 'BEGIN { printf "%.4f", m / 1000 }') - $ms - woken=$k,from=server_log_execute"
}

m_after_spool() {
	local s=$1/spool k=$2 a
	"$CHUTE" init "$s" >/dev/null
	"$CHUTE" submit --help 2>&1 | grep -q -- --after || skip "this chute has no submit --after"
	printf '{"i":0}' >"$WORK/payload"
	a=$("$CHUTE" submit "$s" --id A0 "$WORK/payload")
	seq 1 "$k" | timeout "$TIMEOUT" xargs -P 2 -I{} "$CHUTE" submit "$s" --id 'D{}' --after "$a" "$WORK/payload" >/dev/null ||
		die "a submit --after failed"
	[[ $(find "$s/wait" -maxdepth 1 -type f | wc -l) == "$k" ]] || die "not $k jobs in wait/"
	sync
	mkfifo "$WORK/hold"
	timeout "$TIMEOUT" "$CHUTE" run "$s" -j 1 --grace 100ms -- "$HERE/uniq.sh" hold "$WORK/hold" 2>"$WORK/owner.err" &
	OWNER=$!
	woken() { local w=("$s"/wait/*); [[ -e $s/done/$a && ! -e ${w[0]} ]]; }
	wait_until "$TIMEOUT" "A in done/ and wait/ empty" woken
	# Every woken job in new/ or (the one started, held) cur/; their ctimes against A's.
	python3 - "$s" "$a" "$k" >"$WORK/span" <<-'EOF' || die "spool wake: $(cat "$WORK/span")"
		import os, sys
		s, a, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
		done = os.stat(f"{s}/done/{a}").st_ctime_ns
		new = [os.stat(f"{s}/new/{f}").st_ctime_ns for f in os.listdir(f"{s}/new")]
		cur = [f for f in os.listdir(f"{s}/cur") if not f.startswith(".")]
		if len(new) + len(cur) != k: print(f"{len(new)} in new/, {len(cur)} in cur/, not {k}"); sys.exit(1)
		print(f"{(max(new) - done) / 1e9:.4f} {len(new)} {len(cur)}" if new else "0 0 0")
	EOF
	kill -TERM "$OWNER"
	wait "$OWNER" 2>/dev/null || true
	OWNER=
	read -r sec nnew ncur <"$WORK/span"
	say "after-spool: A done to the last of $k in new/: $sec s ($nnew in new/, $ncur started)"
	echo "$k $sec - $(awk -v x="$sec" 'BEGIN { printf "%.1f", x * 1000 }') - woken=$k,in_new=$nnew,started=$ncur,from=ctime"
}

case ${1:-} in
conn) m_conn "$2" "$3" "$4" "$5" ;;
cli) m_cli "$2" "$3" "$4" "$5" ;;
after-pg) m_after_pg "$2" "$3" ;;
after-spool) m_after_spool "$2" "$3" ;;
*) die "usage: uniq.sh conn|cli|after-pg|after-spool ..." ;;
esac
