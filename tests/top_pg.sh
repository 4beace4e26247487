#!/usr/bin/env bash
# tests/top_pg.sh CHUTE: `chute top URL` driven in a real terminal, as
# top.sh drives it on a spool, against a PostgreSQL server of the test's
# own (pg-server.sh).  Jobs are submitted and run by a real worker while
# the view is up: the counts on screen must follow, a running job must
# show its worker, a failure its reason; the keys cancel and retry in the
# database; the server is stopped as in a crash and started again, and
# the view says so, then follows the queue again.
#
# Every wait is a poll of the screen (or of a command) every 50 ms up to a
# deadline, for a condition named in the check that fails; nothing here
# sleeps to let something happen.  One "ok - ..." or "not ok - ..." line
# per check, then "N passed, M failed"; without tmux or a server, one
# "skip" line, exit 0.
set -u
export LC_ALL=C
[ $# -eq 1 ] || { echo "usage: tests/top_pg.sh CHUTE" >&2; exit 64; }
chute=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if ! command -v tmux >/dev/null; then
	echo "skip - tests/top_pg.sh: tmux is not installed (apt-get install tmux)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-top-pg.XXXXXX") || exit 1
pane=top worker=''
. "$(dirname "$0")/tmux-tap.sh"
. "$(dirname "$0")/pg-server.sh"
cleanup() {
	[ -n "$worker" ] && kill "$worker" 2>/dev/null && wait "$worker" 2>/dev/null
	tm kill-server 2>/dev/null
	$pgstop
	rm -rf "$tmp"
}
trap cleanup EXIT
if ! pg_can; then
	echo "skip - tests/top_pg.sh: a server of its own would $pg_why"
	exit 0
fi
check "a PostgreSQL server of the test's own starts" pg_start || exit 1
url=$pgurl

. "$(dirname "$0")/top-lib.sh"
# status ID WORDS: chute status URL ID says them (its state, attempts=N...).
status() {
	local id=$1
	shift
	[ "$("$chute" status "$url" "$id" 2>&1)" = "$id $*" ]
}

submit() { echo "$2" | "$chute" submit "$url" --id "$1" > /dev/null; }

"$chute" init "$url" > /dev/null || { echo "not ok - chute init"; exit 1; }

# ---- the view, in a shell, in 80x24 ----
top_start "$url"
check "the title names the queue" screen '^chute top .*--queue default +0 workers'

submit b1 block && submit b2 block && submit f1 fail
check "three submitted jobs appear with no key pressed" screen '^wait 0 +new 3 +cur 0 '

# --prefetch 0: it claims only what it starts, as an owner of a spool.
"$chute" run "$url" -j 2 --prefetch 0 --max-attempts 1 -- "$tmp/handler" \
	2> "$tmp/worker.log" &
worker=$!
me=$(hostname):$worker
check "a worker's two claims show as two running jobs" screen '^wait 0 +new 1 +cur 2 '
running() { screen "^ +[0-9]+s +$me +[0-9]+[sm] +$1 *\$"; }
check "the running list names them with their worker ($me), elapsed time and lease" \
	eval 'running b1 && running b2'
check "the worker is listed alive, two of its two slots running" \
	screen "^$me +alive +2/2 +[0-9]+s +[0-9]+s  [0-9]"
check "... and the title counts it" screen '--queue default +1 worker '

touch "$tmp/release-b1" "$tmp/release-b2"
check "finished jobs move the counts to done and failed" \
	screen '^wait 0 +new 0 +cur 0 +defer 0 +done 2 +failed 1'
check "the failure is listed with its reason" screen '^ +[0-9]+s +1 +exit=3 +f1 *$'
check "throughput counts the three jobs of the last minute" \
	screen '^last minute: 2 done, 1 failed, 0\.05/s'

# ---- resizing ----
top_resize

# ---- keys: cancel the selected running job, retry it ----
submit b3 block
check "a new job is running" running b3
tm send-keys -t top Down
tm send-keys -t top c
check "down then c cancels the selected running job" screen '^b3 cur->failed$'
check "... in the database" status b3 failed attempts=1 cancelled
check "... which is then listed as a failure" screen 'cancelled +b3 *$'
tm send-keys -t top r
check "r retries the selected failed job" screen '^b3 failed->new$'
check "... and its log says who" eval '"$chute" log "$url" b3 | grep -q "reset by \`chute top\`"'
check "... which runs again" running b3
touch "$tmp/release-b3"
check "... and finishes in done" screen '^wait 0 +new 0 +cur 0 +defer 0 +done 3 +failed 1'

# ---- the server goes away and comes back ----
pg_down
check "the server gone: the view says so" screen '^lost the server at [0-9:]+, connecting again'
check "... and still shows what it knew" has '^wait 0 +new 0 +cur 0 +defer 0 +done 3 +failed 1'
pg_up
check "the server back: the view connects again" until_ok 20000 hasnt '^lost the server'
submit n1 ok
check "... and follows the queue again: a job submitted runs and is counted" \
	screen '^wait 0 +new 0 +cur 0 +defer 0 +done 4 +failed 1'

# ---- paused ----
"$chute" pause "$url" > /dev/null
who=$(id -un)@$(hostname)
check "a paused queue says so, and by whom" \
	eval 'screen "--queue default +paused +1 worker " && screen "^paused by $who"'
"$chute" resume "$url" > /dev/null
check "... and no more once resumed" until_ok 10000 hasnt 'paused'

# ---- the worker stops ----
kill "$worker" && wait "$worker"
worker=''
check "a worker stopped is listed as stopped" screen "^$me +stopped "
check "... and the title counts none" screen '--queue default +0 workers '

# ---- leaving ----
top_leave "$url" 'done 4 +failed 1'

# ---- without a terminal ----
top_summary "$url" 'wait 0 +new 0 +cur 0 +defer 0 +done 4 +failed 1'
pg_down
"$chute" top "$url" > "$tmp/screen" 2>&1
rc=$?
check "the server down: exit 75 and one line naming it" eval \
	'[ $rc -eq 75 ] && [ "$(wc -l < "$tmp/screen")" -eq 1 ] && grep -q "^chute: postgresql://postgres@" "$tmp/screen"'

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
