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

# screen REGEX: wait (10 s at most) for a line of the screen to match.
screen() { until_ok 10000 has "$1"; }
alt() { [ "$(tm display-message -p -t top '#{alternate_on}')" = "$1" ]; }
# type TEXT: the literal text and Enter, at the shell's prompt.
type_line() { tm send-keys -t top -l "$1" && tm send-keys -t top Enter; }

# The handler: the job's content says what to do.  "block" waits for
# $tmp/release-ID (30 s at most), "fail" exits 3, anything else exits 0.
cat > "$tmp/handler" <<END
#!/bin/sh
read -r what
case \$what in
block)	n=0
	while [ ! -e "$tmp/release-\$CHUTE_ID" ]; do
		n=\$((n + 1)); [ \$n -lt 600 ] || exit 99; sleep 0.05
	done ;;
fail)	exit 3 ;;
esac
exit 0
END
chmod +x "$tmp/handler"
submit() { echo "$2" | "$chute" submit "$spool" --id "$1" > /dev/null; }

"$chute" init "$spool" > /dev/null || { echo "not ok - chute init"; exit 1; }

# ---- the view, in a shell, in 80x24 ----
tm new-session -d -s top -x 80 -y 24 "env PS1='$ ' sh" || {
	echo "not ok - tmux new-session"; exit 1; }
check "the shell in the pane shows its prompt" screen '^\$ ?$'
type_line "S=\$(stty -g); $chute top $spool; echo top-exit=\$? tty-same=\$([ \"\$S\" = \"\$(stty -g)\" ] && echo yes)"
check "chute top shows the empty spool's counts" \
	screen '^new 0 +cur 0 +defer 0 +done 0 +failed 0'
check "the view is on the alternate screen" until_ok 10000 alt 1
# keys_on N: the key line is the Nth, the last of an N-line pane.
keys_on() { grab && sed -n "$1p" "$tmp/screen" | grep -q '^q quit'; }
check "the view fits 80 columns: its key line is the 24th" until_ok 10000 keys_on 24

submit b1 block && submit b2 block && submit f1 fail
check "three submitted jobs appear in new/ with no key pressed" \
	screen '^new 3 +cur 0 '

"$chute" run "$spool" -j 2 --max-attempts 1 -- "$tmp/handler" \
	2> "$tmp/owner.log" &
owner=$!
check "an owner's two claims show as two running jobs" \
	screen '^new 1 +cur 2 '
running() { screen "^ +[0-9]+s +$1 *\$"; }
check "the running list names them with their elapsed time" \
	eval 'running b1 && running b2'
check "the title shows the owner's pid" screen "owner $owner "
check "... and the owner's row its host, pid and running jobs" \
	screen "^$(hostname):$owner +alive +2 +- +[0-9]+[sm]"

touch "$tmp/release-b1" "$tmp/release-b2"
check "finished jobs move the counts to done/ and failed/" \
	screen '^new 0 +cur 0 +defer 0 +done 2 +failed 1'
check "the failure is listed with its reason" screen '^ +[0-9]+s +1 +exit=3 +f1 *$'
check "throughput counts the three jobs of the last minute" \
	screen '^last minute: 2 done, 1 failed, 0\.05/s'

# ---- resizing ----
tm resize-window -t top -x 100 -y 30
check "after a resize to 100x30 the key line is the 30th" until_ok 10000 keys_on 30
title_width() { [ "$(head -n 1 "$tmp/screen" | wc -L)" -eq "$1" ]; }
check "... and the title reaches the 100th column" title_width 100
check "... and the reasons' column is wider" screen '^ +[0-9]+s +1 +exit=3 {30,}f1 *$'
tm resize-window -t top -x 80 -y 24
# tmux keeps the old screen's lines, cut, until the view redraws: the
# reasons' column back at 24 characters is the sign that it did.
check "back at 80x24 the reasons' column is narrow again" \
	screen '^ +[0-9]+s +1 +exit=3 {20}f1 *$'
check "... the key line is the 24th" keys_on 24
check "... and the title ends at the 80th column" title_width 80

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
check "... and finishes in done/" screen '^new 0 +cur 0 +defer 0 +done 3 +failed 1'

# ---- leaving ----
tm send-keys -t top q
check "q ends the view with status 0 and the terminal's modes as they were" \
	screen '^top-exit=0 tty-same=yes$'
check "... and off the alternate screen" until_ok 10000 alt 0
type_line "$chute top $spool; echo second-exit=\$?"
check "a second view comes up" eval 'until_ok 10000 alt 1 && screen "done 3 +failed 1"'
tm send-keys -t top C-c
check "^C (SIGINT) ends it with status 0" screen '^second-exit=0$'
check "... and off the alternate screen" until_ok 10000 alt 0
type_line "$chute top $spool; echo third-exit=\$?"
until_ok 10000 alt 1
pid=$(ps -o pid= --ppid "$(tm display-message -p -t top '#{pane_pid}')" | tr -d ' ')
[ -n "$pid" ] && kill -TERM "$pid"
check "SIGTERM ends it with status 0, off the alternate screen" \
	eval 'screen "^third-exit=0\$" && until_ok 10000 alt 0'

# ---- without a terminal ----
"$chute" top "$spool" > "$tmp/summary" 2> "$tmp/err"
rc=$?
cp "$tmp/summary" "$tmp/screen"
summary_ok() {
	[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] &&
	    grep -Eq '^new 0 +cur 0 +defer 0 +done 3 +failed 1$' "$tmp/summary"
}
check "stdout not a terminal: a one-shot summary, exit 0" summary_ok
check "... with the failure and its reason" \
	grep -Eq '^ +[0-9]+s +1 +exit=3 +f1$' "$tmp/summary"
check "... and no escape sequence" eval '! grep -q "$(printf "\033")" "$tmp/summary"'

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
