#!/usr/bin/env bash
# tests/progress.sh CHUTE: the progress line of `chute run --drain` and of
# `chute wait` with several IDs, in a real terminal (a tmux pane of a tmux
# server of its own), and its absence when stderr is not a terminal.
#
# Every wait is a poll of the screen (or of a file) every 50 ms up to a
# deadline, for a condition named in the check that fails.  One "ok - ..."
# or "not ok - ..." line per check, then "N passed, M failed"; without
# tmux, one "skip" line, exit 0.
set -u
export LC_ALL=C
[ $# -eq 1 ] || { echo "usage: tests/progress.sh CHUTE" >&2; exit 64; }
chute=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
if ! command -v tmux >/dev/null; then
	echo "skip - tests/progress.sh: tmux is not installed (apt-get install tmux)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-progress.XXXXXX") || exit 1
spool=$tmp/spool
pane=p
. "$(dirname "$0")/tmux-tap.sh"
cleanup() { touch "$tmp/release"; tm kill-server 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

screen() { until_ok 15000 has "$1"; }

# Job ID waits for $tmp/release or $tmp/release-ID (30 s at most), then
# exits 0, or 3 when its content is "fail".
cat > "$tmp/handler" <<END
#!/bin/sh
i=0
while [ ! -e "$tmp/release" ] && [ ! -e "$tmp/release-\$CHUTE_ID" ] && [ \$i -lt 600 ]
do sleep 0.05; i=\$((i+1)); done
grep -q fail "\$1" && exit 3
exit 0
END
chmod +x "$tmp/handler"
"$chute" init "$spool" >/dev/null
for c in a b fail; do
	echo "$c" > "$tmp/in" && "$chute" submit "$spool" --id "job-$c" "$tmp/in" >/dev/null
done

tm new-session -d -s p -x 100 -y 20 "sh -c '\"$chute\" run \"$spool\" -j 2 --drain \
--max-attempts 1 -- \"$tmp/handler\" {}; echo EXIT=\$?; sleep 60'"
check "run --drain shows finished/total while jobs run" \
	screen '^drain: 0/3 finished, 0 failed, 2 running'
touch "$tmp/release-job-a"
check "a job done counts as finished" \
	screen '^drain: 1/3 finished, 0 failed, 2 running'
touch "$tmp/release-job-fail"
check "a failed job counts as finished and as failed" \
	screen '^drain: 2/3 finished, 1 failed, 1 running'
touch "$tmp/release"
check "run --drain exits 0 when drained" screen '^EXIT=0'
check "the progress line is erased, not left among the owner's lines" \
	hasnt '^drain: '
tm kill-session -t p

# wait: two jobs queued, nobody runs them yet.
rm -f "$tmp/release"
for c in c d; do echo "$c" > "$tmp/in"; "$chute" submit "$spool" --id "job-$c" "$tmp/in" >/dev/null; done
tm new-session -d -s p -x 100 -y 20 "sh -c '\"$chute\" wait \"$spool\" job-c job-d; echo EXIT=\$?; sleep 60'"
check "wait with several IDs shows finished/total" \
	screen '^wait: 0/2 finished, 0 failed, [0-9.]+m?s elapsed'
touch "$tmp/release"
"$chute" run "$spool" --drain -- "$tmp/handler" {} 2>/dev/null
check "wait exits 0 once both are done" screen '^EXIT=0'
check "wait erases its progress line" hasnt '^wait: '
tm kill-session -t p

# Not a terminal: not one byte more.
for c in e f; do echo "$c" > "$tmp/in"; "$chute" submit "$spool" --id "job-$c" "$tmp/in" >/dev/null; done
"$chute" run "$spool" --drain -- "$tmp/handler" {} 2>"$tmp/run.err"
check "run --drain into a file: no progress line" \
	bash -c "! grep -q 'drain: [0-9]' '$tmp/run.err' && ! grep -q \$'\\r' '$tmp/run.err'"
"$chute" wait "$spool" job-e job-f 2>"$tmp/wait.err"
check "wait into a file: nothing on stderr" test ! -s "$tmp/wait.err"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
