#!/usr/bin/env bash
# tests/completion.sh CHUTE: contrib/completion/chute.bash in a real bash,
# on a spool whose job IDs are what a hostile submitter would choose:
# $(...), `...`, globs, spaces, quotes, a leading dash, a tilde, bytes
# above 0x7e.  The completion function is called as bash calls it (the
# file sourced, COMP_WORDS and COMP_CWORD set) in a directory where a glob
# would match, and must offer every ID literally and run none of them.
# Then the same IDs completed in a terminal (a tmux pane) with TAB, where
# readline quotes what it inserts: the line run must pass each ID
# unchanged.  One "ok - ..." or "not ok - ..." line per check, then
# "N passed, M failed"; without tmux, the terminal's checks skip with one
# line.  Then a PostgreSQL queue's IDs, on a server of its own (a unix
# socket in the test's directory, run as Debian's postgres user): skipped
# with one line where there is none.
set -u
export LC_ALL=C
[ $# -eq 1 ] || { echo "usage: tests/completion.sh CHUTE" >&2; exit 64; }
chute=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$(dirname "$0")/.." && pwd)/contrib/completion/chute.bash
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-completion.XXXXXX") || exit 1
pane=c
. "$(dirname "$0")/tmux-tap.sh"
. "$(dirname "$0")/pg-server.sh"
trap 'tm kill-server 2>/dev/null; $pgstop; rm -rf "$tmp"' EXIT
# The completion runs `chute`: this one.
mkdir "$tmp/bin" "$tmp/cwd"
ln -s "$chute" "$tmp/bin/chute"
export PATH=$tmp/bin:$PATH
spool=$tmp/spool
"$chute" init "$spool" >/dev/null || exit 1

# $(>pwned5) makes a file even when the space of $(touch pwned) is
# escaped (ls shows it as \s).
ids=('$(touch pwned)' '`touch pwned2`' '$(touch pwned3)x' '$(>pwned5)'
    '`>pwned6`' 'a b' '*' 'a*'
    '[ab]' "it's" 'q"q' 'a\b' '-e' '~root' 'x;touch pwned4' 'bang!x' $'\xc3\xa9t\xc3\xa9')
for id in "${ids[@]}"; do
	echo job | "$chute" submit "$spool" --id "$id" >/dev/null ||
		notok "submit --id $id"
done
# Files a glob or an expansion would find or make.
touch "$tmp/cwd/a" "$tmp/cwd/b" "$tmp/cwd/ab"

# complete WORD...: the replies _chute gives for the command line
# "chute WORD...", the cursor at the end of the last WORD (which may be
# empty), one per line; run in $tmp/cwd by a bash of its own.  COMP_WORDS
# is WORD... as they are: none holds a COMP_WORDBREAKS character that bash
# would split it at.  The text readline completes ($2) is the last WORD
# without the quote it opens with, if any.
complete() {
	local text=${!#}
	case $text in [\"\']*) text=${text:1} ;; esac
	(cd "$tmp/cwd" && bash --norc --noprofile -c '
		. "$1" || exit 1
		text=$2
		shift 2
		COMP_WORDS=(chute "$@")
		COMP_CWORD=$#
		COMP_LINE="chute $*"
		COMP_POINT=${#COMP_LINE}
		_chute chute "$text" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' complete "$src" "$text" "$@")
}
# readback OPEN REPLIES: each reply as the shell reads the word readline
# makes of it (OPEN, the quote the word was opened with, then the reply,
# then OPEN again to close it), one per line, sorted.  A reply quoted
# wrongly runs its $(...) here, which unexpanded then finds.
readback() {
	local r
	while IFS= read -r r; do
		(cd "$tmp/cwd" && eval "printf '%s\n' $1$r$1")
	done <<<"$2" | sort
}
# Nothing was run: no pwned* anywhere under $tmp.
unexpanded() {
	local made
	made=$(find "$tmp" -name 'pwned*')
	[ -z "$made" ] || { echo "#   made: $made"; return 1; }
}
# same GOT WANT...: GOT (lines) is the sorted list of WANT.
same() {
	local got=$1 want
	shift
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] && return 0
	diff <(echo "$want") <(echo "$got") | sed 's/^/#   /'
	return 1
}

got=$(complete status "$spool" '')
check "status SPOOL <TAB> offers every ID" same "$(readback '' "$got")" "${ids[@]}"
check "... and runs none of them" unexpanded
got=$(complete cancel "$spool" '\$\(t')
check 'a typed prefix \$\(t is compared unquoted' \
	same "$(readback '' "$got")" '$(touch pwned)' '$(touch pwned3)x'
got=$(complete log "$spool" "'\$(touch pwned")
check "within an open single quote: '\$(touch pwned -> both that begin so" \
	same "$(readback "'" "$got")" '$(touch pwned)' '$(touch pwned3)x'
got=$(complete wait "$spool" '"a')
check 'within an open double quote: "a -> a b, a*, a\b' \
	same "$(readback '"' "$got")" 'a b' 'a*' 'a\b'
got=$(complete wait "$spool" '"x')
check 'within an open double quote: "x -> x;touch pwned4' \
	same "$(readback '"' "$got")" 'x;touch pwned4'
got=$(complete status "$spool" '*')
check 'a * typed is a character, not a glob' same "$(readback '' "$got")" '*'
got=$(complete status "$spool" '[a')
check '[a is a prefix, not a bracket expression' \
	same "$(readback '' "$got")" '[ab]'
got=$(complete status "$spool" '~')
check '~ is a prefix, not a home directory' \
	same "$(readback '' "$got")" '~root'
check "... and still nothing was run" unexpanded
# What it completed before still completes: subcommands, options, states.
check "sta<TAB> -> status, stats" same "$(complete sta | sort)" status stats
check "re<TAB> -> resume, retention, retry" same "$(complete re | sort)" resume retention retry
check "wo<TAB> -> workers" same "$(complete wo)" workers
check "pause SPOOL <TAB> -> nothing: it takes no job" \
	same "$(complete pause "$spool" '')"
check "run SPOOL --dr<TAB> -> --drain" same "$(complete run "$spool" --dr)" \
	--drain
check "retention SPOOL --<TAB> -> --done, --failed" \
	same "$(complete retention "$spool" -- | sort)" --done --failed
check "purge SPOOL --state <TAB> -> done, failed" \
	same "$(complete purge "$spool" --state '' | sort)" done failed
check "ls SPOOL <TAB> -> the states" same "$(complete ls "$spool" '' | sort)" \
	cur defer done failed new wait
# A URI's IDs: bash splits postgresql://... at its : and @ (COMP_WORDBREAKS)
# and these are the pieces it gives; the spool must be the URI again for
# the IDs to come from its queue.  (Which IDs a queue has and how they
# are offered is the spool's code above: both come from `chute ls`.)
uri=$(cd "$tmp/cwd" && bash --norc --noprofile -c '
	. "$1" || exit 1
	COMP_WORDS=(chute status postgresql : //app @ db.example : 5432/jobs
	    --queue mail "")
	COMP_CWORD=11
	COMP_LINE="chute status postgresql://app@db.example:5432/jobs --queue mail "
	COMP_POINT=${#COMP_LINE}
	_chute_words
	argopts=(--queue)
	_chute_scan_words
	printf "%s|%s|%s|%s\n" "$cword" "$spool" "$queue" "${words[cword]}"
	' uri "$src")
check "a URI that COMP_WORDBREAKS split is one word again" \
	same "$uri" '5|postgresql://app@db.example:5432/jobs|mail|'
# A failed job, for retry's list of failed IDs.
mv "$spool/new/\$(touch pwned)" "$spool/failed/"
got=$(complete retry "$spool" '')
check "retry SPOOL <TAB> offers the failed ID" \
	same "$(readback '' "$got")" '$(touch pwned)'
check "... and runs it not" unexpanded
mv "$spool/failed/\$(touch pwned)" "$spool/new/"

# In a terminal: TAB inserts the ID quoted so that the line run passes it
# as it is.  show prints its arguments between < and >.
if ! command -v tmux >/dev/null; then
	echo "skip - tests/completion.sh: tmux is not installed (apt-get install tmux)"
else
	cat >"$tmp/rc" <<END
PS1='$ '
. "$src"
cd "$tmp/cwd"
show() { printf '<%s>\n' "\$@"; }
complete -F _chute show
END
	tm new-session -d -s c -x 200 -y 50 "bash --rcfile '$tmp/rc' --noprofile -i"
	check "the shell in the pane starts" until_ok 10000 has '^\$ ?$'
	# tab TYPED WANT [SPOOL]: type "show status SPOOL TYPED", TAB, Enter;
	# the line must show WANT as the third argument.
	# Readline runs the completion before it reads the Enter behind the
	# TAB: no wait between them.
	# The screen is cleared first, and the test waits until it holds the
	# prompt alone: no output of an earlier case can pass for this one's.
	tab() {
		local keys
		# In hexadecimal: tmux would take a \; for its own separator.
		keys=$(printf 'show status %s %s' "${3:-$spool}" "$1" | od -An -tx1)
		# C-u, not C-c: after a SIGINT readline drops what is typed
		# ahead, and "clear" would lose its first letters.
		tm send-keys -t c C-u && tm send-keys -t c clear Enter &&
			until_ok 10000 prompt_alone &&
			tm send-keys -t c -H $keys &&
			tm send-keys -t c Tab Enter &&
			until_ok 10000 shown "<$2>"
	}
	prompt_alone() { grab && [ "$(grep -c . "$tmp/screen")" = 1 ] && grep -Eq '^\$ ?$' "$tmp/screen"; }
	shown() { grab && grep -Fxq -- "$1" "$tmp/screen"; }
	for pair in '\$\(touch\ pwned3:$(touch pwned3)x' '\`t:`touch pwned2`' '\`\>:`>pwned6`' \
	    "it:it's" 'q:q"q' 'x\;:x;touch pwned4' '\~:~root' \
	    "'\$(touch pwned3:\$(touch pwned3)x" '"x:x;touch pwned4' 'ba:bang!x' '"ba:bang!x' "$(printf '\303\251'):$(printf '\303\251t\303\251')"; do
		check "TAB after '${pair%%:*}' inserts '${pair#*:}' so that it is passed as it is" \
			tab "${pair%%:*}" "${pair#*:}"
	done
	check "... and nothing was run" unexpanded
fi
# A queue's IDs come through the same code, from `chute ls URL`, the URI
# typed as it is and split by bash at its : and @.
if ! pg_can; then
	echo "skip - tests/completion.sh: a queue's IDs $pg_why"
else
	check "a PostgreSQL server of the test's own starts" pg_start
	host=$(printf '%s' "$tmp/pg" | sed 's,/,%2F,g')
	url=$pgurl
	qids=('$(>pwnedq)' '`>pwnedq2`' 'q b' 'q*')
	"$chute" init "$url" >/dev/null || notok "chute init $url"
	for id in "${qids[@]}"; do
		echo job | "$chute" submit "$url" --id "$id" >/dev/null ||
			notok "submit $url --id $id"
	done
	# The pieces bash makes of the URI, and the text after them.
	got=$(cd "$tmp/cwd" && bash --norc --noprofile -c '
		. "$1" || exit 1
		COMP_WORDS=(chute status postgresql : //postgres @ "$2" : \
		    5432/postgres "")
		COMP_CWORD=9
		COMP_LINE="chute status $3 "
		COMP_POINT=${#COMP_LINE}
		_chute chute "" 5432/postgres
		printf "%s\n" "${COMPREPLY[@]}"' complete "$src" "$host" "$url")
	check "status URL <TAB> offers every ID of the queue" \
		same "$(readback '' "$got")" "${qids[@]}"
	check "... and runs none of them" unexpanded
	if command -v tmux >/dev/null; then
		check "TAB after '\\$\(' with a URL inserts the queue's ID \$(>pwnedq)" \
			tab '\$\(' '$(>pwnedq)' "$url"
		check "... and nothing was run" unexpanded
	fi
fi
printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
