#!/usr/bin/env bash
# tests/build/stale.sh: make never gives a chute that differs from a clean
# build.  In a copy of the tree it replays what a new user did (make without
# libbsd, install it, make again) and the other ways an object can outlive
# its flags or headers, then compares the results with a clean build made in
# the same directory (same paths, so the debug info matches).  make check
# runs it first.
#
# One "ok - ..." or "not ok - ..." line per check, then "N passed, M failed";
# exit status 1 if any check failed.  Missing packages are faked with an
# empty PKG_CONFIG_LIBDIR or a pkg-config earlier in PATH; file times are set
# with touch -d, never waited for.  The builds use CFLAGS='-O0 -g' (in the
# environment, as a user's would be): what is tested does not depend on the
# optimisation level, and -O0 keeps the five full builds to a few seconds.
set -u
export LC_ALL=C

root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-stale.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
mkdir "$tree" "$tmp/nopc" "$tmp/nocheck" "$tmp/empty" "$tmp/first" "$tmp/flagless" "$tmp/clean"
cp -a "$root/Makefile" "$root/src" "$root/tests" "$tree/" || exit 1
jobs=$(nproc 2>/dev/null || echo 2)

passed=0 failed=0
# check DESCRIPTION COMMAND...: one line, ok if COMMAND succeeds; if not,
# the end of the last command's output, as comments.
check() {
	local what=$1; shift
	if "$@"; then
		passed=$((passed + 1)); echo "ok - $what"
	else
		failed=$((failed + 1)); echo "not ok - $what"
		tail -n 15 "$tmp/log" | sed 's/^/#   /'
	fi
}

# make in the copy, in an environment of its own: none of the caller's
# MAKEFLAGS, CFLAGS, B... (make check-asan sets them) leaks in.  PATH and
# pkg-config's own variables pass, so `PATH=fake:$PATH mk` fakes pkg-config.
mk() {
	(cd "$tree" && env -i PATH="$PATH" HOME="$tmp" LC_ALL=C CFLAGS='-O0 -g' \
	    ${TMPDIR+TMPDIR="$TMPDIR"} \
	    ${PKG_CONFIG_PATH+PKG_CONFIG_PATH="$PKG_CONFIG_PATH"} \
	    ${PKG_CONFIG_LIBDIR+PKG_CONFIG_LIBDIR="$PKG_CONFIG_LIBDIR"} \
	    make -j"$jobs" "$@") > "$tmp/log" 2>&1
}

# Fake pkg-configs: one that knows no Check, one that knows everything and
# prints no flags (what the old Makefile took from a pkg-config without libbsd).
real_pc=$(command -v pkg-config) || { echo "stale.sh: no pkg-config" >&2; exit 1; }
cat > "$tmp/nocheck/pkg-config" <<END
#!/bin/sh
for a; do [ "\$a" = check ] && exit 1; done
exec $real_pc "\$@"
END
printf '#!/bin/sh\nexit 0\n' > "$tmp/empty/pkg-config"
chmod +x "$tmp/nocheck/pkg-config" "$tmp/empty/pkg-config"

# Every file of the copy is dated an hour ago.  settle dates the build
# outputs and $tmp/ref a step later: "rebuilt" is "newer than $tmp/ref".
clock=$(($(date +%s) - 3600))
find "$tree" -exec touch -h -d "@$clock" {} +
settle() {
	clock=$((clock + 10))
	find "$tree/build" -type f -exec touch -d "@$clock" {} +
	touch -d "@$clock" "$tmp/ref"
}
objects() { (cd "$tree" && find build -name '*.o' 2>/dev/null | sort); }
rebuilt() { (cd "$tree" && find build -name '*.o' -newer "$tmp/ref" | sort); }
one_line() { [[ $(wc -l < "$tmp/log") -eq 1 ]] && grep -q "$1" "$tmp/log"; }
keep() { cp "$tree/build/chute" "$tree/build/libchute.a" "$tmp/$1/"; }
same() { cmp "$tmp/$1/chute" "$tmp/$2/chute" > "$tmp/log" 2>&1 &&
	cmp "$tmp/$1/libchute.a" "$tmp/$2/libchute.a" >> "$tmp/log" 2>&1; }

# 1. No libbsd: make stops at once, one line naming the package; no object.
no_libbsd() {
	! PKG_CONFIG_LIBDIR=$tmp/nopc mk && one_line 'apt-get install libbsd-dev' &&
	    [[ -z $(objects) ]]
}
check "without libbsd, make stops in one line naming libbsd-dev, having compiled nothing" no_libbsd

# 2. Then libbsd is installed, but not Check: chute builds (and this is
# the second make of the issue), its tests stop at once.
no_check() { PATH=$tmp/nocheck:$PATH mk && keep first; }
check "without Check, make builds build/chute" no_check
no_check_tests() {
	! PATH=$tmp/nocheck:$PATH mk build/check_chute && one_line 'apt-get install check' &&
	    ! objects | grep -q tests/
}
check "without Check, make build/check_chute stops in one line naming check, having compiled nothing" no_check_tests

# 3. Nothing changed, nothing to do.
unchanged() { settle; mk && [[ -z $(rebuilt) ]] && grep -q "Nothing to be done for 'all'" "$tmp/log"; }
check "a second make with nothing changed compiles nothing" unchanged

# 4. The header included by the fewest sources (and by no other header), so
# that "only those" means something.
hdr='' want=''
for h in $(find "$tree/src" -name '*.h' | sort); do
	inc="#include \"${h#"$tree"/src/}\""
	# grep sees direct includes only: skip a header that headers include.
	grep -rqF --include='*.h' "$inc" "$tree/src" && continue
	w=$(grep -rlF --include='*.c' "$inc" "$tree/src" |
	    sed 's|.*/src/\(.*\)\.c$|build/obj/\1.o|' | sort)
	if [[ -n $w && ( -z $want || $(wc -l <<< "$w") -lt $(wc -l <<< "$want") ) ]]; then
		hdr=$h want=$w
	fi
done
touched_header() {
	[[ -n $hdr ]] || return 1
	settle
	touch -d "@$((clock + 5))" "$hdr"
	mk && [[ $(rebuilt) == "$want" ]]
}
check "touching ${hdr#"$tree"/} rebuilds the $(wc -l <<< "$want") objects that include it, no other" touched_header

# 5. Other CFLAGS rebuild everything.
all=$(objects)
rebuilds_all() { settle; "$@" && [[ $(rebuilt) == "$all" ]]; }
check "make CFLAGS=-O0 rebuilds all $(wc -l <<< "$all") objects" rebuilds_all mk CFLAGS=-O0

# 6. The issue's case as the old Makefile had it: pkg-config printed no
# flags and succeeded.  -k compiles every object that can be without
# libbsd's flags; an implicit strtonum (and the like) is an error now.
flagless() {
	! PATH=$tmp/empty:$PATH mk -k && grep -q 'implicit-function-declaration' "$tmp/log"
}
check "a build without libbsd's flags fails on an implicit declaration" flagless
check "make after it rebuilds every object" rebuilds_all mk
keep flagless

# 7. A source file that goes away leaves libchute.a.
gone() {
	printf 'int zz_stale_probe(void);\nint zz_stale_probe(void) { return 1; }\n' \
	    > "$tree/src/base/zz_stale_probe.c"
	mk && rm "$tree/src/base/zz_stale_probe.c" && mk &&
	    ! ar t "$tree/build/libchute.a" | grep -q zz_stale_probe
}
check "a source file removed from src/ leaves libchute.a" gone

# 8. The clean build the others are compared with.
clean() { rm -rf "$tree/build" && mk && keep clean; }
check "a clean build" clean
check "two clean builds give the same chute and libchute.a (so cmp can judge)" same first clean
check "after the build without libbsd's flags, make gives the clean build's chute" same flagless clean

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
