# tests/tmux-tap.sh: sourced by the scripts that drive chute in a tmux pane
# (top.sh, progress.sh).  They set $tmp (a scratch directory) and $pane
# (the tmux target) first.  One "ok - ..." or "not ok - ..." line per
# check; a failed check shows the pane's last screen.  Every wait is a poll
# every 50 ms up to a deadline, for a condition the check names.
pass=0 fail=0
tm() { tmux -S "$tmp/tmux" -f /dev/null "$@"; }
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() {
	fail=$((fail + 1)); printf 'not ok - %s\n' "$*"
	[ -s "$tmp/screen" ] && sed 's/^/#   |/' "$tmp/screen"
}
# check DESCRIPTION COMMAND...
check() { local what=$1; shift; if "$@"; then ok "$what"; else notok "$what"; fi; }

ms() { date +%s%3N; }
# until_ok MS COMMAND...: run COMMAND every 50 ms until it succeeds or MS pass.
until_ok() {
	local deadline=$(($(ms) + $1)); shift
	until "$@"; do
		[ "$(ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}
# The pane's screen, as text, into $tmp/screen; has REGEX: a line matches.
grab() { tm capture-pane -p -t "$pane" > "$tmp/screen"; }
has() { grab && grep -Eq -- "$1" "$tmp/screen"; }
hasnt() { grab && ! grep -Eq -- "$1" "$tmp/screen"; }
