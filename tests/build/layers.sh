#!/usr/bin/env bash
# layers.sh LIBCHUTE.A [OBJECT...]: the design's arrows, checked on the
# objects of the library and of the programs, and on the #include lines
# of every source and header file under src/.  Which object uses a symbol
# another defines (nm), then: no circle between objects (tsort finds
# loops); no arrow from a lower layer up to a higher one (the folders of
# src/, as HACKING.md maps them), by symbol or by #include; and no arrow
# from one program's folder (src/chute, src/chute-pgsql, src/chute-web)
# into another's, by symbol or by #include: a program links libraries,
# never another program's objects.  Prints "ok - ..." / "not ok - ..."
# lines and "N passed, M failed".
#
# The arrows that break these rules today, and are being removed, are
# listed by name in TEMPORARY_EXCEPTIONS below, and nowhere else.
#
# layers.sh --self-test: each check shown to fail.  A copy of src/ and
# HACKING.md in a temporary directory gets planted violations (a call and
# an #include from src/chute into src/chute-pgsql, an #include from
# src/store up into src/run, a call from src/base up into src/run, an
# exception that matches nothing), the calls compiled into throwaway
# objects; the script run on that copy (LAYERS_ROOT) must print each
# one's "not ok" line and fail.  `make check` runs it after the real run.
# LAYERS_NO_EXCEPTIONS=1 runs the checks with the exceptions ignored, to
# see today's arrows that they let through.
set -u
pass=0 fail=0
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }

# ---- TEMPORARY_EXCEPTIONS --------------------------------------------
# Known arrows against the rules, each TEMPORARY: the branch named beside
# it removes the arrow, and whoever merges that branch deletes its line
# here (a line that no longer matches any arrow is itself "not ok", so a
# stale one cannot stay to let a new arrow through).  Forms:
#   "program FROM TO"      program folder FROM uses program folder TO
#                          (symbols or includes)
#   "include FILE HEADER"  src/FILE's #include "HEADER" points up a layer
TEMPORARY_EXCEPTIONS=(
)
# ----------------------------------------------------------------------

here=${LAYERS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
[ "${LAYERS_NO_EXCEPTIONS:-}" = 1 ] && TEMPORARY_EXCEPTIONS=()
declare -A used_exception=()
excepted() {
	local e
	for e in "${TEMPORARY_EXCEPTIONS[@]}"; do
		if [ "$e" = "$*" ]; then
			used_exception[$e]=1
			return 0
		fi
	done
	return 1
}

# The layer of each folder of src/ (HACKING.md, "The tree is the
# design"), lowest first; 0: in none.
folder_layer() {
	case $1 in
	base) echo 1 ;;
	store) echo 2 ;;
	queue|queue/spool|queue/pg) echo 3 ;;
	run) echo 4 ;;
	cli|top) echo 5 ;;
	chute|chute-pgsql|chute-web) echo 6 ;;
	*) echo 0 ;;
	esac
}
# The programs' own folders: none may use another's.
is_program() {
	case $1 in chute|chute-pgsql|chute-web) return 0 ;; esac
	return 1
}

self_test() {
	local tmp out rc me
	me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	tmp=$(mktemp -d) || exit 70
	trap 'rm -rf "$tmp"' EXIT
	cp -r "$here/src" "$here/HACKING.md" "$tmp/" || exit 70
	# A call and an include from chute into chute-pgsql; an include
	# from store (2) up into run (4); each file with a line in the map.
	cat >"$tmp/src/chute/zz_plant_a.c" <<-'EOF'
	#include "chute-pgsql/pg_cmd.h"
	int zz_plant_b(void);
	int zz_plant_a(void) { return zz_plant_b(); }
	EOF
	echo 'int zz_plant_b(void) { return 1; }' >"$tmp/src/chute-pgsql/zz_plant_b.c"
	echo '#include "run/supervise.h"' >"$tmp/src/store/zz_plant_c.h"
	# And the checks that were here before: a call from base up into run.
	printf 'int zz_plant_e(void);\nint zz_plant_d(void) { return zz_plant_e(); }\n' \
	    >"$tmp/src/base/zz_plant_d.c"
	echo 'int zz_plant_e(void) { return 1; }' >"$tmp/src/run/zz_plant_e.c"
	for f in chute/zz_plant_a chute-pgsql/zz_plant_b base/zz_plant_d run/zz_plant_e; do
		printf '| `src/%s.c` | planted |\n' "$f" >>"$tmp/HACKING.md"
		${CC:-cc} -c -o "$tmp/${f#*/}.o" -I"$tmp/src" "$tmp/src/$f.c" || exit 70
	done
	out=$(LAYERS_ROOT=$tmp LAYERS_PLANT_EXCEPTION=1 "$me" "$tmp"/zz_plant_?.o)
	rc=$?
	if [ $rc = 1 ]; then
		ok "self-test: the planted tree fails (exit 1)"
	else
		notok "self-test: the planted tree exits $rc, not 1"
	fi
	expect "$out" "not ok - zz_plant_a.o (src/chute) uses zz_plant_b.o (src/chute-pgsql): another program's" \
	    "a call from one program's folder into another's"
	expect "$out" "not ok - src/chute/zz_plant_a.c includes chute-pgsql/pg_cmd.h: another program's" \
	    "an #include from one program's folder into another's"
	expect "$out" "not ok - src/store/zz_plant_c.h (layer 2) includes run/supervise.h (layer 4): up" \
	    "an #include up a layer"
	expect "$out" "not ok - zz_plant_d.o (layer 1) calls up into zz_plant_e.o (layer 4)" \
	    "a call up a layer"
	expect "$out" "not ok - the temporary exception \"include base/zz_gone.c store/spool.h\" matches no arrow: delete it from TEMPORARY_EXCEPTIONS in tests/build/layers.sh" \
	    "an exception that matches nothing"
	printf '%d passed, %d failed\n' "$pass" "$fail"
	[ "$fail" = 0 ]
	exit
}
# expect OUTPUT LINE WHAT: the self-test's check that LINE was printed.
expect() {
	if grep -qxF -- "$2" <<<"$1"; then
		ok "self-test: $3 is caught"
	else
		notok "self-test: $3 is not caught (no line \"$2\")"
	fi
}

if [ "${1:-}" = --self-test ]; then
	self_test
fi
[ $# -ge 1 ] || { echo "usage: layers.sh build/libchute.a [OBJECT...] | --self-test" >&2; exit 64; }
# Only the self-test's run: an exception that no arrow matches.
[ "${LAYERS_PLANT_EXCEPTION:-}" = 1 ] &&
	TEMPORARY_EXCEPTIONS+=("include base/zz_gone.c store/spool.h")

# Each source file's folder under src/, by the object's name (NAME.o is
# src/FOLDER/NAME.c), read once.
declare -A folder_of=()
while IFS= read -r f; do
	n=${f##*/}
	folder_of[${n%.c}]=${f%/*}
done < <(cd "$here/src" && find . -name '*.c' | sed 's|^\./||')
layer() {
	local d=${folder_of[$1]:-}
	[ -n "$d" ] || { echo 0; return; }
	folder_layer "$d"
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
	f=${folder_of[$n]:-}/$n.c
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
up=0 cross=0 crossed=0
while read -r from to; do
	lf=$(layer "$from") lt=$(layer "$to")
	df=${folder_of[$from]:-} dt=${folder_of[$to]:-}
	if [ "$lf" != 0 ] && [ "$lt" -gt "$lf" ]; then
		notok "$from.o (layer $lf) calls up into $to.o (layer $lt)"
		up=1
	fi
	if is_program "$df" && is_program "$dt" && [ "$df" != "$dt" ]; then
		if excepted program "$df" "$dt"; then
			crossed=$((crossed + 1))
		else
			notok "$from.o (src/$df) uses $to.o (src/$dt): another program's"
			cross=1
		fi
	fi
done <"$edges"
# "N of a temporary exception", when there are some.
of_exception() { [ "$1" = 0 ] || echo ", $1 of a temporary exception"; }
[ $up = 1 ] || ok "every arrow points down a layer or within one ($(wc -l <"$edges") arrows)"
[ $cross = 1 ] || ok "no program's objects use another program's ($(wc -l <"$edges") arrows$(of_exception $crossed))"

# The #include "dir/x.h" lines of every source and header file under src/:
# the header's folder is the arrow's end.
iup=0 icross=0 iupexc=0 icrossexc=0 nincl=0
while IFS=: read -r file hdr; do
	nincl=$((nincl + 1))
	df=${file%/*} dt=${hdr%/*}
	[ "$dt" = "$hdr" ] && dt=.
	lf=$(folder_layer "$df") lt=$(folder_layer "$dt")
	if [ "$lt" = 0 ]; then
		notok "src/$file includes $hdr: a folder in no layer"
		iup=1
	elif [ "$lf" = 0 ]; then
		# Sources are named by the objects' check; a header here.
		case $file in *.h) notok "src/$file is in no layer"; iup=1 ;; esac
	elif [ "$lt" -gt "$lf" ]; then
		if excepted include "$file" "$hdr"; then
			iupexc=$((iupexc + 1))
		else
			notok "src/$file (layer $lf) includes $hdr (layer $lt): up"
			iup=1
		fi
	fi
	if is_program "$df" && is_program "$dt" && [ "$df" != "$dt" ]; then
		if excepted program "$df" "$dt"; then
			icrossexc=$((icrossexc + 1))
		else
			notok "src/$file includes $hdr: another program's"
			icross=1
		fi
	fi
done < <(cd "$here/src" && find . \( -name '*.c' -o -name '*.h' \) -type f |
	sed 's|^\./||' | sort | while IFS= read -r f; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		    sed "s|^|$f:|"
	done)
[ $iup = 1 ] || ok "every #include points down a layer or within one ($nincl includes$(of_exception $iupexc))"
[ $icross = 1 ] || ok "no program's file includes another program's header ($nincl includes$(of_exception $icrossexc))"

for e in "${TEMPORARY_EXCEPTIONS[@]}"; do
	[ -n "${used_exception[$e]:-}" ] ||
		notok "the temporary exception \"$e\" matches no arrow: delete it from TEMPORARY_EXCEPTIONS in tests/build/layers.sh"
done
printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
