#!/usr/bin/env bash
# tests/man.sh CHUTE: chute.1 is clean for mandoc -Tlint and covers what the
# program has: every subcommand and option of its usage (spool and URL),
# every exit status in src/base/chute.h, every CHUTE_* variable a handler
# or worker is given, every directory of a spool.  One "ok"/"not ok" line
# per check; without mandoc, one "skip" line, exit 0.
set -u
export LC_ALL=C
[ $# -eq 1 ] || { echo "usage: tests/man.sh CHUTE" >&2; exit 64; }
cd "$(dirname "$0")/.." || exit 1
chute=$1 man=chute.1
pass=0 fail=0
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }

if command -v mandoc >/dev/null; then
	lint=$(mandoc -Tlint -W warning "$man" 2>&1)
	if [ -z "$lint" ]; then ok "mandoc -Tlint -W warning $man: clean"
	else notok "mandoc -Tlint -W warning $man:"; printf '#   %s\n' "$lint"; fi
else
	echo "skip - mandoc -Tlint: mandoc is not installed (apt-get install mandoc)"
fi

# The page's text with mdoc's escapes undone enough to search: "\-" -> "-".
text=$(sed 's/\\-/-/g' "$man")
has() { grep -Fq -- "$1" <<<"$text"; }
missing=()
# The usage of both programs: chute's, and chute-pgsql's (printed with a
# usage error when it is run with no argument).
usage=$("$chute" --help 2>&1; "$(dirname "$chute")/chute-pgsql" 2>&1)
for cmd in $(sed -n 's/^  chute \([a-z]*\) .*/\1/p' <<<"$usage" | sort -u); do
	has "Cm $cmd" || missing+=("subcommand $cmd")
done
for opt in $(grep -oE -- '(\[|\| )--?[a-z][-a-z]*' <<<"$usage" | sed 's/^\[//; s/^| //' | sort -u); do
	has "Fl ${opt#-}" || missing+=("option $opt")
done
# Each list is read from the source; an empty one means the source moved
# and this script looks in the wrong place: that fails, never passes.
codes=$(sed -n 's/^#define EX[A-Z_]*[[:space:]]*\([0-9]*\).*/\1/p' src/base/chute.h | sort -un)
vars=$(grep -rhoE '"CHUTE_[A-Z]*=%' src | tr -d '"=%' | sort -u)
[ -n "$codes" ] || missing+=("(no exit status found in src/base/chute.h)")
[ -n "$vars" ] || missing+=("(no CHUTE_* variable found under src/)")
for code in $codes; do
	awk '/^\.Sh EXIT STATUS/ { on = 1; next } /^\.Sh/ { on = 0 } on' "$man" |
	    grep -qx "\.It $code" || missing+=("exit status $code")
done
for v in $vars; do
	has "Ev $v" || missing+=("variable $v")
done
# The states' directories from their table (src/base/jobstate.h), and the rest.
states=$(sed -n 's/^[[:space:]]*X(ST_[A-Z]*,[[:space:]]*"\([a-z]*\)".*/\1/p' src/base/jobstate.h)
[ -n "$states" ] || missing+=("(no state found in src/base/jobstate.h)")
for d in tmp $states log unique after; do
	has "Pa $d/" || has "$d/" || missing+=("directory $d/")
done
if [ ${#missing[@]} -eq 0 ]; then
	ok "$man covers every subcommand, option, exit status, variable and directory"
else
	notok "$man does not mention: ${missing[*]}"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
