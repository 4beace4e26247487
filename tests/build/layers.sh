#!/usr/bin/env bash
# layers.sh LIBCHUTE.A: the design's arrows, checked on the objects of the
# library.  Which object uses a symbol another defines (nm), then: no circle between
# objects (tsort finds loops), and no arrow from a lower layer up to a
# higher one (the map in HACKING.md).  Prints "ok - ..." / "not ok - ..."
# lines and "N passed, M failed".
set -u
lib=${1:?usage: layers.sh build/libchute.a}
pass=0 fail=0
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }

# The layer of each object, lowest first; an object not listed is an error.
layer() {
	case $1 in
	util|id|nameq|spool|state|joblog|lock|ready|watch|spawn|outcome) echo 1 ;;
	worker|queue_spool|queue_spool_scan|queue_spool_recover) echo 2 ;;
	supervise) echo 3 ;;
	owner|owner_job) echo 4 ;;
	cmd|cmd_*|listing) echo 5 ;;
	*) echo 0 ;;
	esac
}

objs=$(ar t "$lib" | sed -n 's/\.o$//p')
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
# nm -A: "lib.a:member.o:VALUE TYPE SYMBOL", or "lib.a:member.o: U SYMBOL".
nm -A "$lib" | awk '{ split($1, p, ":"); n = p[2]; sub(/\.o$/, "", n) }
	NF == 3 && $2 ~ /^[TDBRCG]$/ { def[$3] = n }
	NF == 3 && $2 == "U" { use[++k] = $3 " " n }
	END { for (i = 1; i <= k; i++) { split(use[i], u, " ")
		if (u[1] in def && def[u[1]] != u[2]) print u[2], def[u[1]] } }' |
	sort -u >"$edges"

for n in $objs; do
	[ "$(layer "$n")" != 0 ] || notok "$n.o is in no layer: add it to tests/build/layers.sh and HACKING.md"
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
