# tests/top-lib.sh: what top.sh (a spool) and top_pg.sh (a queue) share,
# sourced after tmux-tap.sh with $tmp, $chute and $pane (top) set: the
# waits on the screen, the handler both run, and the checks that are the
# same whatever the view watches (the view starting, leaving it, the
# summary without a terminal).  WHERE below is the spool or the URL.

# screen REGEX: wait (10 s at most) for a line of the screen to match.
screen() { until_ok 10000 has "$1"; }
alt() { [ "$(tm display-message -p -t top '#{alternate_on}')" = "$1" ]; }
# type TEXT: the literal text and Enter, at the shell's prompt.
type_line() { tm send-keys -t top -l "$1" && tm send-keys -t top Enter; }
# keys_on N: the key line is the Nth, the last of an N-line pane.
keys_on() { grab && sed -n "$1p" "$tmp/screen" | grep -q '^q quit'; }
title_width() { [ "$(head -n 1 "$tmp/screen" | wc -L)" -eq "$1" ]; }

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

# top_start WHERE: the view of WHERE, in a shell in an 80x24 pane, which
# says afterwards how it ended and whether the terminal's modes are back.
top_start() {
	tm new-session -d -s top -x 80 -y 24 "env PS1='$ ' sh" || {
		echo "not ok - tmux new-session"; exit 1; }
	check "the shell in the pane shows its prompt" screen '^\$ ?$'
	type_line "S=\$(stty -g); $chute top $1; echo top-exit=\$? tty-same=\$([ \"\$S\" = \"\$(stty -g)\" ] && echo yes)"
	check "chute top shows the empty counts" \
		screen '^wait 0 +new 0 +cur 0 +defer 0 +done 0 +failed 0'
	check "the view is on the alternate screen" until_ok 10000 alt 1
	check "the view fits 80 columns: its key line is the 24th" \
		until_ok 10000 keys_on 24
}

# top_resize: to 100x30 and back, the failure f1 (exit=3) on screen.
top_resize() {
	tm resize-window -t top -x 100 -y 30
	check "after a resize to 100x30 the key line is the 30th" \
		until_ok 10000 keys_on 30
	check "... and the title reaches the 100th column" title_width 100
	check "... and the reasons' column is wider" \
		screen '^ +[0-9]+s +1 +exit=3 {30,}f1 *$'
	tm resize-window -t top -x 80 -y 24
	# tmux keeps the old screen's lines, cut, until the view redraws:
	# the reasons' column back at 24 characters is the sign that it did.
	check "back at 80x24 the reasons' column is narrow again" \
		screen '^ +[0-9]+s +1 +exit=3 {20}f1 *$'
	check "... the key line is the 24th" keys_on 24
	check "... and the title ends at the 80th column" title_width 80
}

# top_leave WHERE COUNTS: q, then a second view ended by ^C, a third by
# SIGTERM; COUNTS, a regex of the counts, says the second is up.
top_leave() {
	local pid counts=$2
	tm send-keys -t top q
	check "q ends the view with status 0 and the terminal's modes as they were" \
		screen '^top-exit=0 tty-same=yes$'
	check "... and off the alternate screen" until_ok 10000 alt 0
	type_line "$chute top $1; echo second-exit=\$?"
	check "a second view comes up" eval 'until_ok 10000 alt 1 && screen "$counts"'
	tm send-keys -t top C-c
	check "^C (SIGINT) ends it with status 0" screen '^second-exit=0$'
	check "... and off the alternate screen" until_ok 10000 alt 0
	type_line "$chute top $1; echo third-exit=\$?"
	until_ok 10000 alt 1
	pid=$(ps -o pid= --ppid "$(tm display-message -p -t top '#{pane_pid}')" | tr -d ' ')
	[ -n "$pid" ] && kill -TERM "$pid"
	check "SIGTERM ends it with status 0, off the alternate screen" \
		eval 'screen "^third-exit=0\$" && until_ok 10000 alt 0'
}

# top_summary WHERE COUNTS: stdout not a terminal: the counts line is
# exactly COUNTS (a regex), with the failure f1 and its reason, no escape.
top_summary() {
	local rc counts=$2
	"$chute" top "$1" > "$tmp/summary" 2> "$tmp/err"
	rc=$?
	cp "$tmp/summary" "$tmp/screen"
	check "stdout not a terminal: a one-shot summary, exit 0" eval \
		'[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && grep -Eq "^$counts\$" "$tmp/summary"'
	check "... with the failure and its reason" \
		grep -Eq '^ +[0-9]+s +1 +exit=3 +f1$' "$tmp/summary"
	check "... and no escape sequence" eval '! grep -q "$(printf "\033")" "$tmp/summary"'
}
