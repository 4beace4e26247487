#!/usr/bin/env bash
# layers.sh LIBCHUTE.A [OBJECT...]: the design's arrows, checked on the
# objects of the library and of chute-pgsql.  Which object uses a symbol
# another defines (nm), then: no circle between objects (tsort finds
# loops), and no arrow from a lower layer up to a higher one (the map in
# HACKING.md).  Prints "ok - ..." / "not ok - ..."
# lines and "N passed, M failed".
set -u
[ $# -ge 1 ] || { echo "usage: layers.sh build/libchute.a [OBJECT...]" >&2; exit 64; }
pass=0 fail=0
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }

# The layer of each object, lowest first; an object not listed is an error.
layer() {
	case $1 in
	util|id|nameq|spool|state|joblog|lock|ready|watch|spawn|reaper|outcome|notify|pump) echo 1 ;;
	pg_conn|pg_schema|pg_reply) echo 1 ;;
	worker|keeper|queue_spool|queue_spool_scan|queue_spool_recover|queue_pg) echo 2 ;;
	supervise) echo 3 ;;
	owner|owner_job) echo 4 ;;
	cmd|cmd_*|listing|top_*|pg_cmd|pg_cmd_*|pg_main|pg_forward) echo 5 ;;
	*) echo 0 ;;
	esac
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
