#!/bin/sh
# tests/valgrind.sh CHUTE N: the owner under valgrind across N jobs.
# Fails on any invalid access or definite/indirect leak in the owner, or
# if any job does not reach done/.  Handlers (/bin/true) are not traced.
set -eu
chute=$1
n=${2:-10000}
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not installed" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/chute-valgrind.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$chute" init "$dir/spool"
mkdir "$dir/in"
i=0
while [ $i -lt "$n" ]; do echo "job $i" > "$dir/in/$i"; i=$((i + 1)); done
# One submit of many files keeps the batch path honest too.
(cd "$dir/in" && ls | xargs "$chute" submit "$dir/spool" > "$dir/ids")
valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    --trace-children=no --log-file="$dir/vg.log" \
    "$chute" run "$dir/spool" -j 2 --drain -- /bin/true 2> "$dir/run.log" || {
	rc=$?; cat "$dir/vg.log" >&2; tail -5 "$dir/run.log" >&2
	echo "valgrind.sh: owner exited $rc under valgrind" >&2; exit 1; }
done=$(ls "$dir/spool/done" | wc -l)
if [ -s "$dir/vg.log" ]; then cat "$dir/vg.log" >&2; echo "valgrind.sh: valgrind reported problems" >&2; exit 1; fi
if [ "$done" -ne "$n" ]; then echo "valgrind.sh: $done of $n jobs in done/" >&2; exit 1; fi
echo "valgrind.sh: $n jobs, owner clean under valgrind (no errors, no leaks)"

# The same with --persistent workers (contrib/worker-example.c).
here=$(cd "$(dirname "$0")/.." && pwd)
cc -O2 -o "$dir/worker" "$here/contrib/worker-example.c"
"$chute" init "$dir/p"
(cd "$dir/in" && ls | xargs "$chute" submit "$dir/p" > /dev/null)
valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    --trace-children=no --log-file="$dir/vgp.log" \
    "$chute" run "$dir/p" -j 2 --persistent --drain -- "$dir/worker" 2> "$dir/runp.log" || {
	rc=$?; cat "$dir/vgp.log" >&2; tail -5 "$dir/runp.log" >&2
	echo "valgrind.sh: persistent owner exited $rc under valgrind" >&2; exit 1; }
done=$(ls "$dir/p/done" | wc -l)
if [ -s "$dir/vgp.log" ]; then cat "$dir/vgp.log" >&2; echo "valgrind.sh: valgrind reported problems (--persistent)" >&2; exit 1; fi
if [ "$done" -ne "$n" ]; then echo "valgrind.sh: $done of $n jobs in done/ (--persistent)" >&2; exit 1; fi
echo "valgrind.sh: $n jobs with --persistent, owner clean under valgrind"
