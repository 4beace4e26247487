#!/usr/bin/env bash
# layers.sh LIBCHUTE.A [OBJECT...]: the design's arrows, checked on the
# objects of the library and of chute-pgsql.  Which object uses a symbol
# another defines (nm), then: no circle between objects (tsort finds
# loops), and no arrow from a lower layer up to a higher one (the folders
# of src/, as HACKING.md maps them).  Prints "ok - ..." / "not ok - ..."
# lines and "N passed, M failed".
set -u
[ $# -ge 1 ] || { echo "usage: layers.sh build/libchute.a [OBJECT...]" >&2; exit 64; }
pass=0 fail=0
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }

# The layer of each object is its source's folder (HACKING.md, "The
# layers"), lowest first.  An object whose source is in none of them, or
# that HACKING.md does not name, is an error.
here=$(cd "$(dirname "$0")/../.." && pwd)
folder_layer() {
	case $1 in
	base) echo 1 ;;
	store) echo 2 ;;
	queue/spool|queue/pg) echo 3 ;;
	run) echo 4 ;;
	cli|top) echo 5 ;;
	chute|chute-pgsql) echo 6 ;;
	*) echo 0 ;;
	esac
}
src_of() {
	(cd "$here/src" && find . -name "$1.c" | sed 's|^\./||')
}
layer() {
	local f
	f=$(src_of "$1")
	[ -n "$f" ] || { echo 0; return; }
	folder_layer "$(dirname "$f")"
}

# The objects: the library's members and any object named after it.
objs=$(for f in "$@"; do case $f in *.a) ar t "$f" ;; *) basename "$f" ;; esac; done |
	sed -n 's/\.o$//p')
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
# nm -A: "lib.a:member.o:VALUE TYPE SYMBOL" or "dir/x.o:VALUE TYPE SYMBOL";
# the object is the last colon-separated field ending in ".o".
nm -A "$@" | awk '{ n = split($1, p, ":"); o = ""
		for (i = 1; i <= n; i++) if (p[i] ~ /\.o$/) o = p[i]
		sub(/.*\//, "", o); sub(/\.o$/, "", o) }
	NF == 3 && $2 ~ /^[TDBRCG]$/ { def[$3] = o }
	NF == 3 && $2 == "U" { use[++k] = $3 " " o }
	END { for (i = 1; i <= k; i++) { split(use[i], u, " ")
		if (u[1] in def && def[u[1]] != u[2]) print u[2], def[u[1]] } }' |
	sort -u >"$edges"

for n in $objs; do
	f=$(src_of "$n")
	if [ "$(layer "$n")" = 0 ]; then
		notok "$n.o (src/$f) is in no layer: put it in a folder of tests/build/layers.sh and HACKING.md"
	elif ! grep -qF "\`$n.c\`" "$here/HACKING.md" &&
	    ! grep -qF "$n.c" "$here/HACKING.md"; then
		notok "src/$f has no line in HACKING.md"
	fi
done
if loop=$(tsort "$edges" 2>&1 >/dev/null) && [ -z "$loop" ]; then
	ok "no circle among $(echo "$objs" | wc -w) objects"
else
	notok "a circle between objects: $(echo "$loop" | tr '\n' ' ')"
fi
up=0
while read -r from to; do
	lf=$(layer "$from") lt=$(layer "$to")
	if [ "$lf" != 0 ] && [ "$lt" -gt "$lf" ]; then
		notok "$from.o (layer $lf) calls up into $to.o (layer $lt)"
		up=1
	fi
done <"$edges"
[ $up = 1 ] || ok "every arrow points down a layer or within one ($(wc -l <"$edges") arrows)"
printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
