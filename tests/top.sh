#!/usr/bin/env bash
# tests/top.sh CHUTE: `chute top` driven in a real terminal.  A tmux server
# of its own runs a shell in an 80x24 pane; the test types into it
# (send-keys), reads the screen back (capture-pane) and asks tmux whether
# the pane is on the alternate screen.  Jobs are submitted and run by a
# real owner while the view is up: the counts on screen must follow.
#
# Every wait is a poll of the screen (or of a file) every 50 ms up to a
# deadline, for a condition named in the check that fails; nothing here
# sleeps to let something happen.  One "ok - ..." or "not ok - ..." line per
# check, then "N passed, M failed"; without tmux, one "skip" line, exit 0.
set -u
export LC_ALL=C
[ $# -eq 1 ] || { echo "usage: tests/top.sh CHUTE" >&2; exit 64; }
chute=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if ! command -v tmux >/dev/null; then
	echo "skip - tests/top.sh: tmux is not installed (apt-get install tmux)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-top.XXXXXX") || exit 1
spool=$tmp/spool owner=''
pane=top
. "$(dirname "$0")/tmux-tap.sh"
cleanup() {
	[ -n "$owner" ] && kill "$owner" 2>/dev/null && wait "$owner" 2>/dev/null
	tm kill-server 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "$0")/top-lib.sh"
submit() { echo "$2" | "$chute" submit "$spool" --id "$1" > /dev/null; }

"$chute" init "$spool" > /dev/null || { echo "not ok - chute init"; exit 1; }

# ---- the view, in a shell, in 80x24 ----
top_start "$spool"

submit b1 block && submit b2 block && submit f1 fail
check "three submitted jobs appear in new/ with no key pressed" \
	screen '^wait 0 +new 3 +cur 0 '

"$chute" run "$spool" -j 2 --max-attempts 1 -- "$tmp/handler" \
	2> "$tmp/owner.log" &
owner=$!
check "an owner's two claims show as two running jobs" \
	screen '^wait 0 +new 1 +cur 2 '
running() { screen "^ +[0-9]+s +$1 *\$"; }
check "the running list names them with their elapsed time" \
	eval 'running b1 && running b2'
check "the title shows the owner's pid" screen "owner $owner "
check "... and the owner's row its host, pid and running jobs" \
	screen "^$(hostname):$owner +alive +2 +- +[0-9]+[sm]"

touch "$tmp/release-b1" "$tmp/release-b2"
check "finished jobs move the counts to done/ and failed/" \
	screen '^wait 0 +new 0 +cur 0 +defer 0 +done 2 +failed 1'
check "the failure is listed with its reason" screen '^ +[0-9]+s +1 +exit=3 +f1 *$'
check "throughput counts the three jobs of the last minute" \
	screen '^last minute: 2 done, 1 failed, 0\.05/s'

# ---- resizing ----
top_resize

# ---- paused: a file an operator may make by hand ----
echo "ops@there 2026-12-03T00:00:00Z" > "$spool/paused"
check "a paused spool says so, and by whom" \
	eval 'screen "paused +owner $owner " && screen "^paused by ops@there"'
rm "$spool/paused"
check "... and no more once resumed" until_ok 10000 hasnt 'paused'

# ---- keys: cancel the selected running job, retry it ----
submit b3 block
check "a new job is running" running b3
tm send-keys -t top Down
tm send-keys -t top c
check "down then c cancels the selected running job" \
	screen '^b3 cur->failed$'
check "... which is then listed as a failure" screen 'cancelled +b3 *$'
tm send-keys -t top r
check "r retries the selected failed job" screen '^b3 failed->new$'
check "... which runs again" running b3
touch "$tmp/release-b3"
check "... and finishes in done/" screen '^wait 0 +new 0 +cur 0 +defer 0 +done 3 +failed 1'

# ---- keys: a key at its limit (set while the owner runs), in a list ----
"$chute" limit "$spool" --key cust --max 1 > /dev/null
for i in 1 2 3; do
	echo block | "$chute" submit "$spool" --id "k$i" --key cust > /dev/null
done
check "a keyed job runs, its key in its ID" running 'k1,k=cust'
check "the keys' list: the key at its limit, 1 running, 2 waiting, max 1" \
	eval 'screen "^KEY +RUNNING +WAITING +MAX +RATE +KEYS 1\$" &&
	    screen "^cust +1 +2 +1 +- *\$"'
check "... and no second job of it runs" eval '! running "k2,k=cust"'
touch "$tmp/release-k1,k=cust" "$tmp/release-k2,k=cust" "$tmp/release-k3,k=cust"
check "... then its jobs run one at a time to done/" \
	screen '^wait 0 +new 0 +cur 0 +defer 0 +done 6 +failed 1'
check "... and the keys' list is gone with them" until_ok 10000 hasnt '^KEY '

# ---- schedules: the next tick beside the rate ----
"$chute" schedule "$spool" nightly --every 1d -- x > /dev/null
check "a schedule declared shows its next tick beside the rate, within a day" \
	screen '^last minute: .*   next tick: nightly in ([0-9]+h)?[0-9]+m *$'
"$chute" schedule "$spool" nightly --remove > /dev/null
check "... and is gone once it is removed" until_ok 10000 hasnt 'next tick:'

# ---- leaving ----
top_leave "$spool" 'done 6 +failed 1'

# ---- without a terminal ----
top_summary "$spool" 'wait 0 +new 0 +cur 0 +defer 0 +done 6 +failed 1'

# A queue's view is tests/top_pg.sh's; here only one no server answers.
"$chute" top postgresql://127.0.0.1:1/none > "$tmp/screen" 2>&1
rc=$?
one_line_75() {
	[ $rc -eq 75 ] && [ "$(wc -l < "$tmp/screen")" -eq 1 ] &&
	    grep -q '^chute: postgresql://127.0.0.1:1/none: connect: ' "$tmp/screen"
}
check "chute top URL of no server: exit 75 and one line naming it" one_line_75
"$chute" top > "$tmp/screen" 2>&1
rc=$?
check "chute top without a spool is a usage error (64)" eval '[ $rc -eq 64 ]'

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
