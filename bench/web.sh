#!/usr/bin/env bash
# bench/web.sh: what an open dashboard costs the owner of a spool.  Not
# part of make check (a benchmark: figures, no threshold); loopback only,
# bounded (JOBS jobs a round).
#
# Each round drains JOBS jobs (empty files made in new/ by bench/mkqueue,
# the handler /bin/true, -j J) twice, in turn: without a dashboard, and
# with `chute web` on the spool, CLIENTS live streams (/events, as as many
# open overviews) and one client asking for a page every PAGE_MS (the
# overview, a page of done/, /metrics, in turn) for the whole drain.
# Prints the owner's jobs/s and CPU (user+system, from wait4) each way, the
# dashboard's CPU over the drain (/proc/PID/stat), the events it sent and
# the pages it served, and the medians over the rounds.
#
# Environment: CHUTE_BIN (default build/chute, chute-web beside it), JOBS
# (default 20000), J (4), ROUNDS (3), CLIENTS (16), PAGE_MS (200; 0: no
# page asked for, the streams alone),
# BENCH_WEB_TMPDIR (default /var/tmp).  The figures of the last run are in
# README.md, "A web dashboard".
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
chute=$(realpath "${CHUTE_BIN:-$root/build/chute}")
JOBS=${JOBS:-20000} J=${J:-4} ROUNDS=${ROUNDS:-3} CLIENTS=${CLIENTS:-16}
PAGE_MS=${PAGE_MS:-200}
tmp=$(mktemp -d "${BENCH_WEB_TMPDIR:-/var/tmp}/chute-bench-web.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/mkqueue" "$here/mkqueue.c"
hz=$(getconf CLK_TCK)
# The dashboard's one user (chute web wants an --auth-file): a right
# password is remembered, so only the first request of each costs a crypt.
pass=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
perl -e 'print "bench:", crypt($ARGV[0], "\$6\$chutebench\$"), "\n"' "$pass" \
    >"$tmp/users"
chmod 0600 "$tmp/users"

# cpu PID: its user+system time so far, in ms.
cpu() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' "/proc/$1/stat"; }

# drain SPOOL: the owner's wall time and CPU (ms), "WALL CPU".
drain() {
	local t0 t1 cpu0 cpu1 me=$BASHPID
	t0=$(date +%s%N)
	# The owner is a child of this (sub)shell: once waited for, its
	# user and system time are in this shell's cutime and cstime.
	cpu0=$(awk '{ sub(/^.*\) /, ""); print $14 + $15 }' /proc/$me/stat)
	"$chute" run "$1" --drain -j "$J" -- /bin/true 2>/dev/null
	t1=$(date +%s%N)
	cpu1=$(awk '{ sub(/^.*\) /, ""); print $14 + $15 }' /proc/$me/stat)
	echo "$(( (t1 - t0) / 1000000 )) $(( (cpu1 - cpu0) * 1000 / hz ))"
}

# pages BASE: a page every PAGE_MS until $tmp/stop exists (a load
# generator: the sleep paces it, it waits for nothing).
pages() {
	local n=0 url
	while [ ! -e "$tmp/stop" ]; do
		case $((n % 3)) in
		0) url="$1/" ;;
		1) url="$1/jobs?state=done" ;;
		2) url="$1/metrics" ;;
		esac
		curl -s -o /dev/null -u "bench:$pass" "$url" && n=$((n + 1))
		sleep "$(awk -v ms="$PAGE_MS" 'BEGIN { print ms / 1000 }')"
	done
	echo "$n" >"$tmp/pages"
}

# round N MODE: one drain; prints "MODE WALL_MS OWNER_CPU_MS RATE WEB_CPU_MS EVENTS PAGES".
round() {
	local mode=$2 spool=$tmp/spool.$1.$2 web='' base='' wcpu0=0 wcpu1=0 res i
	"$chute" init "$spool"
	"$tmp/mkqueue" "$spool/new" "$JOBS" "r$1"
	rm -f "$tmp/stop" "$tmp/pages" "$tmp"/events.*
	if [ "$mode" = with ]; then
		"$chute" web "$spool" --auth-file "$tmp/users" \
		    --listen 127.0.0.1:0 2>"$tmp/web.log" &
		web=$!
		pids+=("$web")
		# Until it says where it listens: 10 s at most.
		for ((i = 0; i < 100; i++)); do
			base=$(sed -n 's|^chute: web: .* on \(http://127.0.0.1:[0-9]*\)/.*|\1|p' "$tmp/web.log")
			[ -n "$base" ] && break
			sleep 0.1
		done
		for ((i = 0; i < CLIENTS; i++)); do
			curl -sN -u "bench:$pass" "$base/events" \
			    >"$tmp/events.$i" 2>/dev/null &
			pids+=("$!")
		done
		if [ "$PAGE_MS" -gt 0 ]; then
			pages "$base" &
			pids+=("$!")
		fi
		wcpu0=$(cpu "$web")
	fi
	res=$(drain "$spool")
	if [ "$mode" = with ]; then
		wcpu1=$(cpu "$web")
		touch "$tmp/stop"
		[ "$PAGE_MS" -gt 0 ] && { wait "${pids[-1]}" 2>/dev/null || true; }
		kill "$web"
		wait "$web" 2>/dev/null || true
	fi
	set -- $res
	printf '%s %s %s %.0f %.0f %s %s\n' "$mode" "$1" "$2" \
	    "$(awk -v n="$JOBS" -v ms="$1" 'BEGIN { print n * 1000 / ms }')" \
	    "$(awk -v a="$wcpu0" -v b="$wcpu1" 'BEGIN { print b - a }')" \
	    "$(cat "$tmp"/events.* 2>/dev/null | grep -c '^event: overview' || true)" \
	    "$(cat "$tmp/pages" 2>/dev/null || echo 0)"
	rm -rf "$spool"
}

echo "# bench/web.sh: $JOBS jobs a drain, -j $J, /bin/true; with: chute web, $CLIENTS live streams, a page every $PAGE_MS ms"
echo "# $(nproc) CPUs; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-8s %8s %10s %8s %10s %8s %6s\n" mode wall_ms owner+h_cpu jobs/s web_cpu events pages
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in without with; do
		round "$r" "$mode" | tee -a "$tmp/results" |
		    awk '{ printf "%-8s %8s %10s %8s %10s %8s %6s\n", $1, $2, $3, $4, $5, $6, $7 }'
	done
done
echo "# medians over $ROUNDS rounds"
for mode in without with; do
	awk -v m="$mode" '$1 == m' "$tmp/results" | sort -k4,4n | awk -v m="$mode" '
	{ rate[NR] = $4; cpu[NR] = $3; web[NR] = $5 }
	END { k = int((NR + 1) / 2)
		printf "%-8s jobs/s %s, owner and handlers CPU %s ms, dashboard CPU %s ms\n", m, rate[k], cpu[k], web[k] }'
done
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
