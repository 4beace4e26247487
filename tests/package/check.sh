#!/usr/bin/env bash
# tests/package/check.sh OUTDIR: make check-package.  Builds the Debian
# packages (debian/make-deb OUTDIR), holds them to lintian (no error, no
# warning), installs them on this machine with dpkg -i, runs chute --version
# and one job as the chute user from the installed files, then removes and
# purges them and checks that what is left is the spool and the chute user
# (Debian leaves system users: files they own may outlive the package).
#
# It installs into the running system, so it refuses, with one line and
# status 0, to run other than as root or where a chute package is already
# installed: it never touches a chute it did not install.  Whatever it
# installed or made it removes on exit, the chute user too unless it
# existed before.
set -uo pipefail

me=check-package
out=${1:?usage: tests/package/check.sh OUTDIR}
pass=0 fail=0
installed=0 had_user=0 had_root=0 had_etc=0
spool= work= jobid= web=

skip() { echo "$me: skipped: $*"; exit 0; }
die() { echo "$me: FAIL: $*" >&2; exit 1; }

# check DESCRIPTION COMMAND...: one verdict line; the run goes on either way.
check() {
	local what=$1
	shift
	if "$@"; then
		echo "$me: ok: $what"
		((pass++))
	else
		echo "$me: FAIL: $what" >&2
		((fail++))
	fi
}

preflight() {
	local t pkg
	[[ $(id -u) == 0 ]] || skip "needs root (it installs with dpkg -i)"
	for t in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian \
	    fakeroot:fakeroot runuser:util-linux setpriv:util-linux \
	    systemd-sysusers:systemd curl:curl; do
		command -v "${t%%:*}" >/dev/null ||
		    skip "${t%%:*} not found (apt-get install ${t#*:})"
	done
	# Installed, or removed with its configuration left: not ours.
	for pkg in chute chute-pgsql chute-web chute-web-pgsql; do
		case $(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null) in
		"" | not-installed) ;;
		*) skip "package $pkg is on this machine already (dpkg -l $pkg); it only tests packages it installs" ;;
		esac
	done
}

cleanup() {
	[[ -n $web ]] && kill "$web" 2>/dev/null && wait "$web" 2>/dev/null
	if ((installed)); then
		dpkg --purge chute-web-pgsql chute-web chute-pgsql chute >/dev/null 2>&1
	fi
	[[ -n $spool ]] && rm -rf -- "$spool"
	((had_root)) || rmdir /var/spool/chute 2>/dev/null
	((had_etc)) || rmdir /etc/chute 2>/dev/null
	if ((!had_user)) && getent passwd chute >/dev/null; then
		userdel chute
		getent group chute >/dev/null && groupdel chute
	fi
	[[ -n $work ]] && rm -rf -- "$work"
}

build() {
	local log=$work/build.log
	echo "$me: building the packages into $out (log: on failure)"
	if ! debian/make-deb "$out" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "debian/make-deb $out"
	fi
	check "lintian: no error, no warning" run_lintian
}

# lintian on the .changes (the source and both packages), without the one
# line it prints on stderr for being run as root, which this test must be.
run_lintian() {
	lintian --fail-on error,warning "$out"/chute_*.changes 2>&1 |
	    { grep -v '^running with root privileges is not recommended!$' || true; }
}

install_packages() {
	installed=1
	dpkg -i "$out"/chute_*_*.deb "$out"/chute-pgsql_*_*.deb \
	    "$out"/chute-web_*_*.deb "$out"/chute-web-pgsql_*_*.deb \
	    >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; die "dpkg -i"; }
	# Every file and symlink of the packages, to look for after the purge.
	dpkg -L chute chute-pgsql chute-web chute-web-pgsql | while read -r p; do
		# Not /lib, which is a symlink to a directory on a merged /usr.
		[[ ! -d $p && ( -e $p || -L $p ) ]] && echo "$p"
	done >"$work/files"
}

user_is_system_user() {
	local ent
	IFS=: read -r -a ent < <(getent passwd chute) || return 1
	((ent[2] < 1000)) && [[ ${ent[5]} == /var/spool/chute &&
	    ${ent[6]} == /usr/sbin/nologin ]]
}

# The job: submitted and run by the chute user, with the installed chute,
# by a handler that writes who ran it and its first line into the job's log.
run_one_job() {
	local id handler=$work/handler
	printf '#!/bin/sh\necho "handled by $(id -un): $(head -n 1)"\n' >"$handler"
	chmod 0755 "$work" "$handler"
	spool=/var/spool/chute/check-package.$$
	runuser -u chute -- /usr/bin/chute init "$spool" || return 1
	id=$(echo "hello from $me" | runuser -u chute -- /usr/bin/chute submit "$spool") ||
	    return 1
	runuser -u chute -- /usr/bin/chute run "$spool" --drain -- "$handler" \
	    2>"$work/run.log" || { cat "$work/run.log" >&2; return 1; }
	check "the job is done" \
	    grep -q "^$id done attempts=1 exit=0" <(/usr/bin/chute status "$spool" "$id")
	check "its handler ran as chute" \
	    grep -q "^handled by chute: hello from $me" <(/usr/bin/chute log "$spool" "$id")
	check "its file belongs to chute" \
	    test "$(stat -c %U "$spool/done/$id")" = chute
	jobid=$id
}

# The installed chute-metrics (what chute-metrics.service runs) on the
# job's spool, into a directory of the test's.
metrics_written() {
	mkdir -p "$work/metrics" || return 1
	CHUTE_METRICS_DIR=$work/metrics CHUTE=/usr/bin/chute \
	    /usr/libexec/chute/chute-metrics "$spool" || return 1
	grep -qx "chute_jobs{spool=\"$spool\",state=\"done\"} 1" \
	    "$work/metrics/chute-${spool##*/}.prom"
}

# The installed chute web on the job's spool, as the chute user, on a port
# the kernel picks: its overview is served (200) and shows the done job.
# setpriv execs it (runuser would stay its parent), so that $web is chute
# web's own pid, for SIGTERM and its exit status.
web_serves() {
	local base='' i pw=check-package-$$
	# Its one user, in a file only chute may read (chute web wants one).
	perl -e 'print "pkg:", crypt($ARGV[0], "\$6\$chutepkg\$"), "\n"' "$pw" \
	    >"$work/web.users" && chown chute:chute "$work/web.users" &&
	    chmod 0600 "$work/web.users" || return 1
	setpriv --reuid=chute --regid=chute --init-groups -- /usr/bin/chute web \
	    "$spool" --auth-file "$work/web.users" --listen 127.0.0.1:0 \
	    2>"$work/web.log" &
	web=$!
	# Until it says where it listens: 10 s at most.
	for ((i = 0; i < 100; i++)); do
		base=$(sed -n 's|^chute: web: .* on \(http://127.0.0.1:[0-9]*\)/.*|\1|p' \
		    "$work/web.log")
		[[ -n $base ]] && break
		sleep 0.1
	done
	local served=1
	[[ -n $base ]] && curl -sf -u "pkg:$pw" -o "$work/web.html" "$base/" &&
	    grep -q 'id="c-done" href="/jobs?state=done">1<' "$work/web.html" &&
	    served=0
	# SIGTERM ends it with exit status 0.
	kill "$web" && wait "$web" || served=1
	web=
	return $served
}

# The installed completion, sourced as bash-completion would load it.
completes() {
	local want=$1
	shift
	bash -c '. /usr/share/bash-completion/completions/chute &&
	    COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && _chute &&
	    printf "%s\n" "${COMPREPLY[@]}"' bash "$@" |
	    grep -x -- "$want" >/dev/null  # not -q: pipefail and SIGPIPE
}

after_purge() {
	local p left=0
	while read -r p; do
		if [[ -e $p || -L $p ]]; then
			echo "$me: left behind: $p" >&2
			left=1
		fi
	done <"$work/files"
	((left == 0))
}

not_known_to_dpkg() {
	local pkg
	for pkg in chute chute-pgsql chute-web chute-web-pgsql; do
		case $(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null) in
		"" | not-installed) ;;
		*) return 1 ;;
		esac
	done
}

main() {
	local version start=$SECONDS
	preflight
	getent passwd chute >/dev/null && had_user=1
	[[ -d /var/spool/chute ]] && had_root=1
	[[ -d /etc/chute ]] && had_etc=1
	work=$(mktemp -d /tmp/chute-check-package.XXXXXX) || die mktemp
	trap cleanup EXIT
	version=$(dpkg-parsechangelog -S Version) || die "dpkg-parsechangelog"

	build
	install_packages
	check "chute --version is $version" \
	    test "$(/usr/bin/chute --version)" = "chute $version"
	check "the chute user: a system user, home /var/spool/chute, no login" \
	    user_is_system_user
	check "/var/spool/chute belongs to chute" \
	    test "$(stat -c %U:%G /var/spool/chute)" = chute:chute
	check "chute@.service runs /usr/bin/chute" \
	    grep -q '^ExecStart=/usr/bin/chute ' /lib/systemd/system/chute@.service
	run_one_job || die "a job as the chute user"
	check "chute-metrics writes the spool's metrics as chute-NAME.prom" \
	    metrics_written
	check "chute web (chute-web) serves the spool's overview" web_serves
	check "chute-web@.service runs /usr/bin/chute" \
	    grep -q '^ExecStart=/usr/bin/chute web ' /lib/systemd/system/chute-web@.service
	check "completion: subcommands" completes status chute st
	check "completion: the spool's job IDs" \
	    completes "$jobid" chute status "$spool" ""
	# A URI goes to chute-pgsql: 75 is its "server unreachable", 69 is
	# chute's "chute-pgsql is not installed".
	check "chute-pgsql is found and runs" test "$(uri_status)" = 75
	# A spool's dashboard needs no libpq; a URI's is chute-web-pgsql's.
	check "chute-web needs no libpq" web_without_libpq
	check "chute web URL runs chute-web-pgsql" \
	    test "$(web_uri_status)" = 75
	dpkg --remove chute-web-pgsql >/dev/null ||
	    die "dpkg --remove chute-web-pgsql"
	check "without chute-web-pgsql, chute web URL is 'unavailable' (69)" \
	    test "$(web_uri_status)" = 69
	dpkg --remove chute-web >/dev/null || die "dpkg --remove chute-web"
	check "without chute-web, chute web is 'unavailable' (69)" \
	    test "$(web_status)" = 69
	dpkg --remove chute-pgsql >/dev/null || die "dpkg --remove chute-pgsql"
	check "without chute-pgsql, a URI is 'unavailable' (69)" \
	    test "$(uri_status)" = 69
	dpkg --remove chute >/dev/null || die "dpkg --remove chute"
	check "removed: /usr/bin/chute is gone" test ! -e /usr/bin/chute
	# Nothing to do if --remove left no configuration (no conffiles).
	dpkg --purge chute-web-pgsql chute-web chute-pgsql chute >"$work/dpkg.log" 2>&1 ||
	    { cat "$work/dpkg.log" >&2; die "dpkg --purge"; }
	installed=0
	check "purged: dpkg knows neither package" not_known_to_dpkg
	check "purged: no file of the packages is left" after_purge
	((had_etc)) || check "purged: /etc/chute is gone" test ! -e /etc/chute
	check "purged: the spool and its job are left" \
	    test -f "$spool/done/$jobid"
	check "purged: the chute user is left (Debian leaves system users)" \
	    user_is_system_user

	echo "$me: $((SECONDS - start)) s"
	echo "$me: $pass passed, $fail failed"
	((fail == 0))
}

# The exit status of chute web on the spool, on a port the kernel picks.
web_status() {
	/usr/bin/chute web "$spool" --listen 127.0.0.1:0 >/dev/null 2>&1
	echo $?
}

# chute-web, its package's dependencies and its libraries: no libpq.
web_without_libpq() {
	! dpkg-query -W -f='${Depends}\n' chute-web | grep -q libpq &&
	    ! ldd /usr/bin/chute-web | grep -q libpq
}

# chute web URL against a server that is not there: 75 from
# chute-web-pgsql, 69 when it is not installed.
web_uri_status() {
	[[ -e $work/root.users ]] || (umask 077 &&
	    perl -e 'print "pkg:", crypt("x", "\$6\$chutepkg\$"), "\n"' \
	    >"$work/root.users")
	/usr/bin/chute web 'postgresql:///chute?host=/nonexistent' \
	    --auth-file "$work/root.users" --listen 127.0.0.1:0 >/dev/null 2>&1
	echo $?
}

# The exit status of a URI subcommand against a server that is not there.
uri_status() {
	/usr/bin/chute ls 'postgresql:///chute?host=/nonexistent' >/dev/null 2>&1
	echo $?
}

main "$@"
