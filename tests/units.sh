#!/usr/bin/env bash
# units.sh CHUTE: chute's systemd units in contrib/ (the six that run
# chute: a spool's owner, a worker, forward, the metrics, the dashboard,
# the recurring jobs' tick),
# checked by systemd.
# Each is copied with its /usr/local/bin/chute rewritten to CHUTE (as
# debian/rules rewrites it to /usr/bin/chute), a template given an
# instance, and run through `systemd-analyze verify`, which must print
# nothing: it exits 0 even for an unknown key or a bad value, and says so
# only on stderr.  Then what chute relies on: Type=notify with
# NotifyAccess=main, one ExecStart= line (the package rewrites it), the
# dashboard's --auth-file (it does not start without one), and every
# CHUTE_* variable a unit uses documented in contrib/chute.conf.example.
# Then each unit's exposure, as `systemd-analyze security --offline=yes`
# rates it (0 to 10, lower is better), at most $bound: the hardening the
# units ship (README, "Running it from systemd or cron") must not slide back.
# Without systemd-analyze: one line saying so, and success.
set -u
[ $# -eq 1 ] || { echo "usage: units.sh /abs/path/to/chute" >&2; exit 64; }
chute=$1
cd "$(dirname "$0")/.." || exit 70
pass=0 fail=0
ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }

if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "skip - units.sh: systemd-analyze not installed (apt-get install systemd)"
	exit 0
fi
tmp=$(mktemp -d) || exit 73
trap 'rm -rf "$tmp"' EXIT

# install FILE: the unit FILE in $tmp, running CHUTE and, for the metrics,
# contrib's script.
install_unit() {
	sed -e "s,/usr/local/bin/chute,$chute,g" \
	    -e "s,/usr/local/libexec/chute/chute-metrics,$PWD/contrib/chute-metrics.sh,g" \
	    "$1" >"$tmp/$(basename "$1")"
}
# verify FILE NAME: the unit FILE, installed as NAME in $tmp, verified.
verify() {
	install_unit "$1"
	(cd "$tmp" && systemd-analyze verify --man=no "$2" 2>&1)
}
# exposure FILE NAME: the overall exposure systemd-analyze gives the unit
# FILE, installed as NAME in $tmp (a number such as 1.6), or nothing.
exposure() {
	install_unit "$1"
	(cd "$tmp" && systemd-analyze security --offline=yes --no-pager "$2" 2>&1) |
		sed -n 's/^.*Overall exposure level for [^ ]*: \([0-9.]*\) .*$/\1/p'
}
# unit_name FILE: a template given the instance "test".
unit_name() {
	local name
	name=$(basename "$1")
	case $name in *@.*) name=${name/@./@test.} ;; esac
	echo "$name"
}

# The check must be able to fail: a bad Type= is reported.
sed 's/^Type=.*/Type=bogus/' contrib/chute@.service >"$tmp/broken@.service"
if [ -n "$(cd "$tmp" && systemd-analyze verify --man=no broken@x.service 2>&1)" ]; then
	ok "systemd-analyze verify reports a bad Type= (systemd $(systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'))"
else
	notok "systemd-analyze verify is silent on Type=bogus: it checks nothing here"
fi

# The units that run chute, and the metrics' (its script from contrib/).
for f in contrib/chute@.service contrib/chute-worker@.service \
    contrib/chute-forward@.service contrib/chute-metrics.service \
    contrib/chute-web@.service contrib/chute-tick@.service \
    contrib/chute-tick@.timer; do
	name=$(unit_name "$f")
	out=$(verify "$f" "$name")
	if [ $? = 0 ] && [ -z "$out" ]; then
		ok "$f: systemd-analyze verify is silent"
	else
		notok "$f: systemd-analyze verify: $(echo "$out" | tr '\n' ' ')"
	fi
done

for f in contrib/chute@.service contrib/chute-worker@.service; do
	grep -qx 'Type=notify' "$f" && grep -qx 'NotifyAccess=main' "$f" &&
		ok "$f: Type=notify, NotifyAccess=main" ||
		notok "$f: not Type=notify with NotifyAccess=main"
	n=$(grep -c '^ExecStart=' "$f")
	grep -q '^ExecStart=/usr/local/bin/chute run ' "$f" && [ "$n" = 1 ] &&
		ok "$f: one ExecStart= line, running /usr/local/bin/chute run" ||
		notok "$f: want one ExecStart=/usr/local/bin/chute run ... line, have $n"
	for v in $(grep -o '\${\?CHUTE_[A-Z_]*' "$f" | tr -d '${' | sort -u); do
		grep -q "^#\?$v=" contrib/chute.conf.example &&
			ok "$f: $v is documented in contrib/chute.conf.example" ||
			notok "$f: $v is not in contrib/chute.conf.example"
	done
done
# The dashboard's: it does not start without its users file, so the unit
# gives one, its variables documented as the others'.
f=contrib/chute-web@.service
grep -q '^ExecStart=/usr/local/bin/chute web ${CHUTE_SPOOL} --auth-file ${CHUTE_WEB_USERS} ' "$f" &&
	ok "$f: ExecStart= gives chute web its --auth-file" ||
	notok "$f: ExecStart= gives chute web no --auth-file (it would not start)"
for v in $(grep -o '\${\?CHUTE_[A-Z_]*' "$f" | tr -d '${' | sort -u); do
	grep -q "^#\?$v=" contrib/chute.conf.example &&
		ok "$f: $v is documented in contrib/chute.conf.example" ||
		notok "$f: $v is not in contrib/chute.conf.example"
done
# The exposure of each unit.  Before the hardening of issue 26: 7.0 for the
# three that run chute, 5.0 for the metrics.
bound=2.0
if ! systemd-analyze security --help 2>&1 | grep -q -- --offline; then
	echo "skip - units.sh: this systemd-analyze has no security --offline (systemd 250 or later)"
else
	# The check must be able to fail: chute@.service without its
	# hardening (every line from "# Hardening" to [Install]) rates worse.
	mkdir "$tmp/bare"
	sed '/^# Hardening/,/^\[Install\]/{/^\[Install\]/!d}' \
	    contrib/chute@.service >"$tmp/bare/bare@.service"
	e=$(exposure "$tmp/bare/bare@.service" bare@test.service)
	if [ -n "$e" ] && awk -v e="$e" -v b="$bound" 'BEGIN { exit !(e > b) }'; then
		ok "chute@.service without its hardening rates $e, above $bound"
	else
		notok "chute@.service without its hardening rates '$e', not above $bound"
	fi
	for f in contrib/chute@.service contrib/chute-worker@.service \
	    contrib/chute-forward@.service contrib/chute-metrics.service \
	    contrib/chute-web@.service contrib/chute-tick@.service; do
		e=$(exposure "$f" "$(unit_name "$f")")
		if [ -n "$e" ] && awk -v e="$e" -v b="$bound" 'BEGIN { exit !(e <= b) }'; then
			ok "$f: systemd-analyze security rates it $e, at most $bound"
		else
			notok "$f: systemd-analyze security rates it '$e', above $bound"
		fi
	done
fi
printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
