#!/usr/bin/env bash
# tests/web.sh CHUTE CDP: `chute web` in a real browser.  chute-web serves
# a spool of the test's own (and then a PostgreSQL queue, on a server of
# the test's own), and Debian's headless Chromium, driven through the
# DevTools protocol by CDP (tests/cdp.c, built by make), reads its pages:
# the counts on the overview are those `chute stats` gives and follow the
# store live (Server-Sent Events, no reload); a cancel and a retry are
# made by clicking the pages' buttons (real form POSTs, with the CSRF
# token in the page and basic auth from the browser), and a retry of
# every failed job matching a filter through its confirmation; jobs whose
# IDs and logs hold <script> and "><img onerror=...> run nothing: the
# page's title is never changed, no dialog opens and no request names
# them.  curl shows what a browser does not: no credentials or wrong ones
# get 401, a POST without the token or from another site 403 (its path
# escaped in the journal), the headers (a strict Content-Security-Policy),
# the bounds (request size, live streams, Host, 10 s for a request to
# arrive against 64 connections trickling headers), /metrics equal to
# `chute stats --prometheus`, close-on-exec descriptors, and SIGTERM
# ending it cleanly; no --auth-file, or one another user may read (mode
# or ACL) or owns, or a FIFO, is refused at the start; a 401 takes as long for a name not in
# the file, or a wrong password for a user whose hash is cheap, as for a
# user whose hash is dear, and costs one crypt at most, not one per user.
#
# Every wait is a poll with a bound, for a condition the check names.
# One "ok - ..." or "not ok - ..." line per check, then "N passed, M
# failed"; without chromium, curl or openssl, one "skip" line, exit 0.
set -u
export LC_ALL=C
[ $# -eq 2 ] || { echo "usage: tests/web.sh CHUTE CDP" >&2; exit 64; }
chute=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cdp=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
chromium=$(command -v chromium || true)
for t in "chromium:$chromium" "curl:$(command -v curl)" \
    "openssl:$(command -v openssl)"; do
	if [ -z "${t#*:}" ]; then
		echo "skip - tests/web.sh: ${t%%:*} is not installed (apt-get install ${t%%:*})"
		exit 0
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-web.XXXXXX") || exit 1
spool=$tmp/spool web='' webro='' streams=() cdp_pid=''

# The check and until_ok helpers (no tmux is used here), and a
# PostgreSQL server of the test's own (pg_start).
pane=none
. "$(dirname "$0")/tmux-tap.sh"
. "$(dirname "$0")/pg-server.sh"
cleanup() {
	for p in "${streams[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$web" ] && kill "$web" 2>/dev/null && wait "$web" 2>/dev/null
	[ -n "$webro" ] && kill "$webro" 2>/dev/null && wait "$webro" 2>/dev/null
	[ -n "${cdp_pid:-}" ] && kill "$cdp_pid" 2>/dev/null
	[ -n "${slow:-}" ] && kill "$slow" 2>/dev/null && wait "$slow" 2>/dev/null
	$pgstop
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- helpers ----

# urlenc STRING: every byte but A-Z a-z 0-9 - . _ ~ as %XX.
urlenc() {
	local s=$1 out='' c i
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	printf '%s' "$out"
}
# stat_of STATE [TARGET]: the count `chute stats` gives.
stat_of() { "$chute" stats "${2:-$spool}" | awk -v s="$1" '$1 == s { print $2 }'; }
state_of() { "$chute" status "${2:-$spool}" "$1" | awk '{ print $2 }'; }

# only_std CMD...: exec CMD with no descriptor but 0, 1 and 2: what the
# test's shell holds open must not pass for chute web's own.
only_std() {
	local fd
	for fd in $(ls /proc/$BASHPID/fd); do
		[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
	done
	exec "$@"
}
# start_web LOG ARGS...: chute web in the background; $started is its
# pid, $base its URL once it says where it listens.
start_web() {
	local log=$1
	shift
	(only_std "$chute" web "$@" --listen 127.0.0.1:0 2>"$log") &
	started=$!
	base=''
	listening() { base=$(sed -n 's|^chute: web: .* on \(http://127.0.0.1:[0-9]*\)/.*|\1|p' "$log"); [ -n "$base" ]; }
	until_ok 10000 listening
}

# The browser: one line to cdp, one line back (30 s at most).
b() {
	printf '%s\n' "$*" >&"${CDP[1]}"
	IFS= read -r -t 30 reply <&"${CDP[0]}" || reply="error: no answer"
}
# b_ok COMMAND: the browser answered "ok".
b_ok() { b "$@"; [ "$reply" = ok ]; }
# js_str STRING: STRING as a JavaScript string literal.
js_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}
# b_is EXPR WANT: the expression's value in the page is WANT.
b_is() { b "eval $1"; [ "$reply" = "$2" ] || { echo "#   $1: '$reply', want '$2'"; false; }; }
# b_wait MS EXPR: poll EXPR in the page until true.
b_wait() { b "wait $1 $2"; [ "$reply" = ok ]; }
# sched_shown STORE: the overview's schedules table (live) has webtick,
# every 1d, with the next tick `chute schedule STORE` lists.
sched_shown() {
	local next
	next=$("$chute" schedule "$1" | sed -n 's/^webtick .* next=\([^ ]*\) .*/\1/p')
	# One line: the browser's commands are lines.
	[ -n "$next" ] && b_wait 10000 "!document.getElementById('schedbox').hidden && document.querySelector('#scheds tr td').textContent === 'webtick' && document.querySelectorAll('#scheds tr td')[2].textContent === '$next'"
}
# b_click CSS: click the first element CSS selects, then wait for the
# page it leads to: a new document (the mark set on this one is gone),
# loaded.
b_click() {
	b "eval (function(){var e=document.querySelector('$1'); if(!e) return 'none'; window.clickmark=1; e.click(); return 'clicked'})()"
	[ "$reply" = clicked ] &&
	    b_wait 10000 "typeof window.clickmark === 'undefined' && document.readyState === 'complete'"
}

# ---- the spool: hostile IDs, failures, jobs waiting ----

"$chute" init "$spool" >/dev/null || { echo "not ok - chute init"; exit 1; }
cat >"$tmp/handler" <<'END'
#!/bin/sh
read -r what
case $what in
ok)	exit 0 ;;
esac
# A log that a page must show as text.
echo "<script>document.title='pwned4';fetch('/pwned4')</script>"
echo "\"><img src=/pwned5 onerror=\"document.title='pwned5'\">"
echo "@chute 2026-01-01T00:00:00.000Z attempt=1 exit=<img src=/pwned6 onerror=alert(6)>"
exit 3
END
chmod +x "$tmp/handler"
# IDs may hold no '/': the script tag stays open, the others need none.
hostile=("<script>document.title='pwned1';fetch('pwned1')<"
    "\"><img src=pwned2 onerror=document.title='pwned2'>"
    "'><svg onload=document.title='pwned3'>")
for id in "${hostile[@]}"; do
	echo fail | "$chute" submit "$spool" --id "$id" >/dev/null || notok "submit --id $id"
done
for i in 1 2 3; do
	echo ok | "$chute" submit "$spool" --id "ok-$i" >/dev/null
	echo fail | "$chute" submit "$spool" --id "bulk-$i" >/dev/null
done
"$chute" run "$spool" --drain --max-attempts 1 -- "$tmp/handler" 2>"$tmp/run.log" ||
	notok "the owner's drain: $(tail -2 "$tmp/run.log")"
for i in 1 2 3 4; do echo ok | "$chute" submit "$spool" --id "n$i" >/dev/null; done
echo ok | "$chute" submit "$spool" --id later --delay 1h >/dev/null
for i in $(seq -w 1 120); do echo ok | "$chute" submit "$spool" --id "p-$i" >/dev/null; done

# ---- refused at the start ----

user=alice password=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '# the users of tests/web.sh\n%s:%s\n' "$user" \
    "$(openssl passwd -6 "$password")" >"$tmp/users"
chmod 0644 "$tmp/users"
"$chute" web "$spool" --allow-actions --auth-file "$tmp/users" \
    --listen 127.0.0.1:0 >/dev/null 2>"$tmp/refused.err"
rc=$?
check "an --auth-file others may read is refused (exit 78, the reason)" \
	eval '[ $rc = 78 ] && grep -q "others may read it" "$tmp/refused.err"'
# acl_read FILE: let user 65534 read FILE by an ACL entry of its own
# (setfacl -m u:65534:r), its mode showing 0640 after; without setfacl
# (Debian's acl package), the xattr the kernel keeps it in, written
# whole.  2: neither setfacl nor python3 here.
acl_read() {
	if command -v setfacl >/dev/null; then
		setfacl -m u:65534:r "$1"
	elif command -v python3 >/dev/null; then
		python3 -c 'import os, struct, sys
def e(tag, perm, uid=0xffffffff): return struct.pack("<HHI", tag, perm, uid)
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) +
    e(0x01, 6) + e(0x02, 4, 65534) + e(0x04, 4) + e(0x10, 4) + e(0x20, 0))' "$1"
	else
		return 2
	fi
}
chmod 0600 "$tmp/users"
cp -p "$tmp/users" "$tmp/users.acl"
acl_read "$tmp/users.acl"
case $? in
0)	# (timeout: a chute web that took it would serve until killed)
	timeout 10 "$chute" web "$spool" --auth-file "$tmp/users.acl" \
	    --listen 127.0.0.1:0 >/dev/null 2>"$tmp/refused.err"
	rc=$?
	check "an --auth-file whose ACL lets another user read it (mode $(stat -c %04a "$tmp/users.acl")) is refused (exit 78, the reason)" \
		eval '[ $rc = 78 ] && grep -q "its ACL lets user 65534 read or write it" "$tmp/refused.err"' ;;
2)	echo "skip - an --auth-file's ACL: neither setfacl nor python3 to write one" ;;
*)	notok "an ACL on $tmp/users.acl: this file system takes none?" ;;
esac
# An --auth-file of another user's (nobody's, 0600): its owner may write
# it (a user of her own) and chmod it, whatever its mode says.  Only root
# can give a file away.
if [ "$(id -u)" = 0 ]; then
	cp -p "$tmp/users" "$tmp/users.theirs" && chown 65534 "$tmp/users.theirs"
	timeout 10 "$chute" web "$spool" --auth-file "$tmp/users.theirs" \
	    --listen 127.0.0.1:0 >/dev/null 2>"$tmp/refused.err"
	rc=$?
	check "an --auth-file owned by another user (mode 0600) is refused (exit 78, the reason)" \
		eval '[ $rc = 78 ] && grep -q "owned by user 65534, who may change it" "$tmp/refused.err"'
else
	echo "skip - an --auth-file owned by another user: only root can make one"
fi
# A FIFO in its place: refused at once (its open waited for a writer).
mkfifo "$tmp/users.fifo"
timeout 10 "$chute" web "$spool" --auth-file "$tmp/users.fifo" \
    --listen 127.0.0.1:0 >/dev/null 2>"$tmp/refused.err"
rc=$?
check "an --auth-file that is a FIFO is refused (exit 78), not waited on" \
	eval '[ $rc = 78 ] && grep -q "not a regular file" "$tmp/refused.err"'
# No --auth-file: any local user reaching 127.0.0.1 would read every
# job's ID, state and log of a 0700 spool, or a queue its database
# keeps behind a password.  (timeout: one that started would serve
# until killed.)
no_auth() {
	timeout 10 "$chute" web "$@" --listen 127.0.0.1:0 >/dev/null 2>"$tmp/refused.err"
	rc=$?
	[ $rc = 64 ] && grep -q "want --auth-file FILE" "$tmp/refused.err" ||
	    { echo "#   chute web $*: exit $rc, $(head -1 "$tmp/refused.err")"; false; }
}
check "chute web SPOOL without --auth-file is a usage error (64), read-only too" \
	eval 'no_auth "$spool" && no_auth "$spool" --allow-actions'
check "... and so is chute web URL" no_auth postgresql://nobody@localhost/none

# chute without chute-web beside it or on PATH: one line, exit 69.
mkdir "$tmp/alone" && cp "$chute" "$tmp/alone/chute"
PATH=/nonexistent "$tmp/alone/chute" web "$spool" >/dev/null 2>"$tmp/alone.err"
rc=$?
check "chute web without chute-web: exit 69, one line naming the package" \
	eval '[ $rc = 69 ] && [ "$(wc -l <"$tmp/alone.err")" = 1 ] && grep -q "chute-web package" "$tmp/alone.err"'
check "chute web --help: its usage, exit 0, also without chute-web" \
	eval 'PATH=/nonexistent "$tmp/alone/chute" web --help | grep -q "^usage: chute web SPOOL|URL"'
# A spool's dashboard links no libpq; a URL's is chute-web-pgsql, which
# chute web URL execs, and without it is unavailable too.
bin=$(dirname "$chute")
check "chute-web links no libpq; chute-web-pgsql does" \
	eval '! ldd "$bin/chute-web" | grep -q libpq && ldd "$bin/chute-web-pgsql" | grep -q libpq'
cp "$bin/chute-web" "$tmp/alone/chute-web"
PATH=/nonexistent "$tmp/alone/chute" web postgresql://nobody@localhost/none \
    >/dev/null 2>"$tmp/alone.err"
rc=$?
check "chute web URL without chute-web-pgsql: exit 69, one line naming it" \
	eval '[ $rc = 69 ] && [ "$(wc -l <"$tmp/alone.err")" = 1 ] && grep -q "chute-web-pgsql package" "$tmp/alone.err"'
"$bin/chute-web" web postgresql://nobody@localhost/none --auth-file \
    "$tmp/users" >/dev/null 2>"$tmp/alone.err"
rc=$?
check "chute-web given a URL: exit 69, one line naming chute-web-pgsql" \
	eval '[ $rc = 69 ] && [ "$(wc -l <"$tmp/alone.err")" = 1 ] && grep -q "chute-web-pgsql" "$tmp/alone.err"'
rm "$tmp/alone/chute-web"
"$chute" web postgresql://nobody@localhost/none --no-such-option >/dev/null 2>"$tmp/opt.err"
rc=$?
check "chute web URI --no-such-option: exit 64, with its usage" \
	eval '[ $rc = 64 ] && grep -q "usage: chute web" "$tmp/opt.err"'
# completes_web SPOOL: web's options offered (bash runs a completion without set -u).
completes_web() {
	(set +u; . "$(dirname "$0")/../contrib/completion/chute.bash" &&
	    PATH=$(dirname "$chute"):$PATH && COMP_WORDS=(chute web "$1" --a) &&
	    COMP_CWORD=3 && _chute && printf '%s\n' "${COMPREPLY[@]}") |
	    grep -qx -- --allow-actions
}
check "the completion offers web's options, for a spool and a URI" \
	eval 'completes_web "$spool" && completes_web postgresql://x@localhost/y'

start_web "$tmp/web.log" "$spool" --allow-actions --auth-file "$tmp/users"
web=$started
check "chute web listens on 127.0.0.1 and says where ($base)" test -n "$base"
[ -n "$base" ] || { printf '%d passed, %d failed\n' "$pass" "$fail"; exit 1; }

# ---- curl: credentials, headers, bounds ----

code() { curl -s -m 10 -o /dev/null -w "%{http_code}" "$@"; }
auth=(-u "$user:$password")
check "/ without credentials: 401" test "$(code "$base/")" = 401
check "... with a challenge for basic auth" \
	eval 'curl -sI "$base/" | grep -qi "^WWW-Authenticate: Basic realm=\"chute\""'
check "/events and /metrics without credentials: 401" \
	eval '[ "$(code "$base/events")" = 401 ] && [ "$(code "$base/metrics")" = 401 ]'
check "a POST without credentials: 401" \
	test "$(code -d id=n1 "$base/action/cancel")" = 401
check "a wrong password: 401 (and said in the log)" \
	eval '[ "$(code -u "$user:wrong" "$base/")" = 401 ] && grep -q "alice: wrong user or password" "$tmp/web.log"'
check "the right one: 200" test "$(code "${auth[@]}" "$base/")" = 200
check "the overview says no retention while the spool keeps everything" \
	eval '! curl -s "${auth[@]}" "$base/" | grep -q "id=\"kept\""'
check "... and the spool's retention once it is set" \
	eval '"$chute" retention "$spool" --failed 7d >/dev/null && curl -s "${auth[@]}" "$base/" | grep -qF "<p id=\"kept\">finished jobs kept: done forever, failed 7d</p>" && "$chute" retention "$spool" --failed forever >/dev/null'
curl -s -D "$tmp/headers" -o "$tmp/overview.html" "${auth[@]}" "$base/"
header() { grep -qiF "$1" "$tmp/headers"; }
check "Content-Security-Policy: default-src 'none'; script-src 'self' ..." \
	header "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
check "X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer" \
	eval 'header "X-Content-Type-Options: nosniff" && header "Referrer-Policy: no-referrer"'
check "the page has no inline script: one <script>, its src /static/chute.js" \
	eval '[ "$(grep -o "<script[^>]*>[^<]*" "$tmp/overview.html")" = "<script src=\"/static/chute.js\" defer>" ]'
check "the script is served as JavaScript, nosniff" \
	eval 'curl -s -D - -o /dev/null "${auth[@]}" "$base/static/chute.js" | grep -qi "^Content-Type: text/javascript"'
check "a Host that is not loopback's: 421 (DNS rebinding)" \
	test "$(code "${auth[@]}" -H "Host: evil.example:${base##*:}" "$base/")" = 421
head -c 5000 /dev/zero | tr '\0' a >"$tmp/big"
check "a POST body over 4096 bytes: 413" \
	test "$(code "${auth[@]}" --data-binary "@$tmp/big" "$base/action/cancel")" = 413
head -c 40000 /dev/zero | tr '\0' a >"$tmp/bighdr"
check "headers over the connection's 32 KiB: refused" \
	eval '[ "$(code "${auth[@]}" -H "X-Big: $(cat "$tmp/bighdr")" "$base/")" != 200 ]'

# /metrics is stats --prometheus, but for the time of the reading (and
# so the oldest job's age: the two are read apart).
untimed() { grep -v '^chute_stats_timestamp_seconds\|^chute_oldest_queued_seconds{'; }
oldest() { sed -n 's/^chute_oldest_queued_seconds{.*} //p'; }
same_metrics() {
	local target=$1
	curl -s "${auth[@]}" "$base/metrics" >"$tmp/metrics.web"
	"$chute" stats "$target" --prometheus >"$tmp/metrics.cli"
	diff <(untimed <"$tmp/metrics.web") <(untimed <"$tmp/metrics.cli") &&
	    awk -v a="$(oldest <"$tmp/metrics.web")" -v b="$(oldest <"$tmp/metrics.cli")" \
	    'BEGIN { d = a - b; exit !(a != "" && (d < 0 ? -d : d) < 2) }'
}
check "/metrics is what chute stats --prometheus prints" same_metrics "$spool"

# ---- the browser: counts, live updates ----

# b_start, b_stop: the browser, with a profile of its own each time
# (nothing remembered from the last), ended and waited for.
b_start() {
	rm -rf "$tmp/profile"
	coproc CDP { exec "$cdp" "$chromium" "$tmp/profile" 2>"$tmp/cdp.err"; }
	cdp_pid=$CDP_PID
	IFS= read -r -t 60 reply <&"${CDP[0]}" || reply="no answer"
	[ "$reply" = ready ]
}
gone() { ! kill -0 "$1" 2>/dev/null; }
b_stop() {
	b quit
	until_ok 10000 gone "$cdp_pid" || kill "$cdp_pid" 2>/dev/null
	wait "$cdp_pid" 2>/dev/null
	cdp_pid=''
}
check "headless Chromium starts under the DevTools client" b_start
b_ok "auth $user $password"
check "the overview loads, the browser giving the credentials it is asked for" \
	b_ok "open $base/"
counts_match() {
	local st
	for st in wait new cur defer done failed; do
		b "eval document.getElementById('c-$st').textContent"
		[ "$reply" = "$(stat_of $st "${1:-$spool}")" ] || return 1
	done
}
check "its counts are chute stats' (new $(stat_of new), defer $(stat_of defer), done $(stat_of done), failed $(stat_of failed))" \
	until_ok 10000 counts_match
check "the live stream connected (an update arrived)" \
	b_wait 10000 "Number(document.getElementById('overview').getAttribute('data-updates')) >= 1"
b "eval window.stayed = 'here', 'set'"
echo ok | "$chute" submit "$spool" --id n5 >/dev/null
check "a job submitted shows in the count of new/ without a reload" \
	eval 'until_ok 10000 counts_match && b_is "window.stayed" here'
check "the overview lists the newest failures, hostile IDs among them" \
	b_is "document.querySelectorAll('#fail tr').length > 0" true

# ---- keys: the overview's table, a job's page ----
check "no key in use: the keys' table is hidden" \
	b_is "document.getElementById('keysbox').hidden" true
"$chute" limit "$spool" --key webkey --max 2 >/dev/null
echo ok | "$chute" submit "$spool" --id kw1 --key webkey --priority 7 >/dev/null
check "a keyed job shows in the keys' table without a reload: key, running, waiting, max, rate" \
	b_wait 10000 "!document.getElementById('keysbox').hidden && document.querySelector('#keys tr').textContent === 'webkey012-'"
b_ok "open $base/job?id=$(urlenc 'kw1,p=7,k=webkey')"
check "a job's page shows its priority and key" \
	eval 'b_is "document.getElementById(\"prio\").textContent" 7 &&
	    b_is "document.getElementById(\"key\").textContent" webkey'
b_ok "open $base/"

# ---- schedules on the overview, a job's unique key on its page ----
check "no schedule: the schedules' table is hidden" \
	b_is "document.getElementById('schedbox').hidden" true
"$chute" schedule "$spool" webtick --every 1d -- x >/dev/null
check "a schedule shows in the overview without a reload, its next tick as chute schedule lists it" \
	sched_shown "$spool"
"$chute" schedule "$spool" webtick --remove >/dev/null
check "... and is gone once removed" \
	b_wait 10000 "document.getElementById('schedbox').hidden"
echo ok | "$chute" submit "$spool" --id uj1 --unique webu --delay 1h >/dev/null
b_ok "open $base/job?id=$(urlenc 'uj1,u=webu')"
check "a job's page shows its unique key" \
	b_is "document.getElementById('unique').textContent" webu
echo ok | "$chute" submit "$spool" --id wj1 --after 'uj1,u=webu' >/dev/null
b_ok "open $base/job?id=wj1"
check "a waiting job's page shows what it waits for" \
	b_is "document.getElementById('after').textContent" 'uj1,u=webu'
b_ok "open $base/job?id=$(urlenc 'kw1,p=7,k=webkey')"
check "... and a job without them shows neither" \
	eval 'b_is "document.getElementById(\"unique\") === null" true &&
	    b_is "document.getElementById(\"after\") === null" true'
b_ok "open $base/"

# ---- hostile IDs and logs execute nothing ----

# Nothing of the payloads ran: the title is the page's, no dialog, and
# no request for a /pwnedN (the pages' own URLs name them in queries).
untouched() {
	b_is "document.title.indexOf('pwned') < 0" true &&
	    b_is "typeof window.pwned" undefined &&
	    { b dialogs; [ "$reply" = 0 ]; } &&
	    { b requests; ! grep -Eq '/pwned[0-9]' <<<"$reply" || { echo "#   $reply"; false; }; }
}
# shows ID: the job's page shows its ID as `chute ls` does (a space as \s).
shows() {
	b_is "document.getElementById('id').textContent === $(js_str "${1// /\\s}")" true
}
shows_log() {
	b_is "document.getElementById('log').textContent.indexOf(\"<script>document.title='pwned4'\") >= 0" true
}
# What a handler's child left behind writes after the owner's last line:
# the job's last outcome, for the failures page.
printf '@chute 2026-01-01T00:00:00.000Z attempt=1 exit=<img src=/pwned6 onerror=alert(6)>\n' \
	>>"$spool/log/${hostile[1]}"
for id in "${hostile[@]}"; do
	b_ok "open $base/job?id=$(urlenc "$id")"
	check "the page of job $id shows its ID as text" shows "$id"
	check "... and its log as text, <script> and all" shows_log
	check "... and nothing in it ran" untouched
done
for page in "/" "/jobs?state=failed" "/workers" "/failures"; do
	b_ok "open $base$page"
	check "$page runs nothing of the hostile jobs'" untouched
done
check "/failures groups them by reason, a forged one shown as text" \
	b_is "document.getElementById('groups').textContent.indexOf('exit=<img src=/pwned6') >= 0" true

# ---- a cancel and a retry, clicked ----

result_is() { b_is "document.getElementById('result').textContent" "$1"; }
cancel_n1() {
	b_click '#list form[action="/action/cancel"] button' &&
	    result_is "n1 new->failed"
}
retry_n1() {
	b_click 'form[action="/action/retry"] button' &&
	    result_is "n1 failed->new" && [ "$(state_of n1)" = new ]
}
noted() {
	"$chute" log "$spool" n1 >"$tmp/n1.log" &&
	    grep -q 'cancelled by `chute web` (user alice' "$tmp/n1.log" &&
	    grep -q 'reset by `chute web` (user alice' "$tmp/n1.log"
}
b_ok "open $base/jobs?state=new&prefix=n1"
check "the list of new/ filtered by the prefix n1: one row" \
	b_is "document.querySelectorAll('#list tbody tr').length" 1
check "its cancel button posts the form: 'n1 new->failed'" cancel_n1
check "... and the spool has it in failed/ (chute status)" \
	test "$(state_of n1)" = failed
b_ok "open $base/job?id=n1"
check "the job's page offers a retry, which puts it back in new/" retry_n1
check "both are in the job's log, by the dashboard's user" noted

confirm_bulk() {
	b_click 'form[action="/action/retry-matching"] button' &&
	    b_is "document.getElementById('count').textContent.split(' ')[0]" 3
}
retry_bulk() {
	b_click 'form[action="/action/retry-matching"] button' &&
	    result_is "3 of 3 retried" &&
	    [ "$(state_of bulk-1)$(state_of bulk-2)$(state_of bulk-3)" = newnewnew ]
}
b_ok "open $base/jobs?state=failed&prefix=bulk-"
check "retry every failed job of a prefix: a confirmation first, with the count" \
	confirm_bulk
check "... nothing retried yet" test "$(state_of bulk-1)" = failed
check "... then 'retry them': 3 of 3, all in new/" retry_bulk

# The browser ends, and is waited for: its profile is in $tmp.
b_stop


# ---- curl: a POST's CSRF token and origin ----

token=$(curl -s "${auth[@]}" "$base/job?id=n2" |
	sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
check "the job's page carries the user's CSRF token" test ${#token} = 32
post() { code "${auth[@]}" "$@" "$base/action/cancel"; }
check "a POST without the CSRF token: 403, the job untouched" \
	eval '[ "$(post -d id=n2)" = 403 ] && [ "$(state_of n2)" = new ]'
case $token in *0) wrong=${token%?}1 ;; *) wrong=${token%?}0 ;; esac
check "... with a wrong token: 403" \
	eval '[ "$(post -d "id=n2&csrf=$wrong")" = 403 ] && [ "$(state_of n2)" = new ]'
check "... with the token but from another site (Origin): 403" \
	eval '[ "$(post -H "Origin: http://evil.example" -d "id=n2&csrf=$token")" = 403 ] && [ "$(state_of n2)" = new ]'
check "... with the token but Sec-Fetch-Site: cross-site: 403" \
	eval '[ "$(post -H "Sec-Fetch-Site: cross-site" -d "id=n2&csrf=$token")" = 403 ] && [ "$(state_of n2)" = new ]'
check "... not a form (text/plain): 403" \
	eval '[ "$(post -H "Content-Type: text/plain" -d "id=n2&csrf=$token")" = 403 ] && [ "$(state_of n2)" = new ]'
check "... with the token, from this origin: done (200), n2 in failed/" \
	eval '[ "$(post -H "Origin: $base" -d "id=n2&csrf=$token")" = 200 ] && [ "$(state_of n2)" = failed ]'
check "every refusal is said in the log" \
	test "$(grep -c '/action/cancel refused' "$tmp/web.log")" = 5
# The path a browser posts to is a page of another site's choice, and
# decoded before it is logged: its newline and escape stay escaped.
forged_path() {
	local c
	c=$(code "${auth[@]}" -H "Sec-Fetch-Site: cross-site" -d id=n2 \
	    "$base/action/x%0Aforged%1B%5B31m")
	[ "$c" = 403 ] || { echo "#   $c"; return 1; }
	grep -qF '/action/x\nforged\033[31m refused' "$tmp/web.log" &&
	    ! grep -q '^forged' "$tmp/web.log" &&
	    ! grep -q "$(printf '\033')" "$tmp/web.log"
}
check "a refused POST's path is escaped in the log: no line forged, no raw escape" \
	forged_path
check "pause claiming with the token: SPOOL/paused, by the dashboard's user" \
	eval '[ "$(code "${auth[@]}" -d "csrf=$token" "$base/action/pause")" = 200 ] && grep -q "^web:alice@" "$spool/paused"'
check "... and resume: gone" \
	eval '[ "$(code "${auth[@]}" -d "csrf=$token" "$base/action/resume")" = 200 ] && [ ! -e "$spool/paused" ]'

# ---- keyset pagination, in the order of chute ls ----

# The IDs of the list's pages, following the "next page" links.
pages() {
	local url="$base/jobs?state=new&rows=50" n=0
	while [ -n "$url" ] && [ $n -lt 10 ]; do
		curl -s "${auth[@]}" "$url" >"$tmp/page"
		sed 's/<tr>/\n/g' "$tmp/page" | sed -n 's/.*class="id" href="[^"]*">\([^<]*\)<.*/\1/p'
		url=$(sed -n 's/.*id="next" rel="next" href="\([^"]*\)".*/\1/p' "$tmp/page" | sed 's/&amp;/\&/g')
		[ -n "$url" ] && url=$base$url
		n=$((n + 1))
	done
}
pages >"$tmp/paged"
"$chute" ls "$spool" new | awk 'NR > 1 { print $NF }' >"$tmp/ls"
check "new/ a page of 50 at a time: $(wc -l <"$tmp/paged") IDs, those of chute ls in its order" \
	cmp -s "$tmp/paged" "$tmp/ls"

# ---- bounds, descriptors ----

# stream N: live stream N, held open by curl in the background.
stream() { curl -sN "${auth[@]}" "$base/events" >"$tmp/stream.$1" 2>/dev/null & streams[$1]=$!; }
# Every stream sent the overview.  One that found every place taken
# (503: the browser's stream of a moment ago, which chute web frees
# within a second of its page closing) is started again.
all_sent() {
	local i sent=0
	for i in $(seq 1 16); do
		if grep -q '^event: overview' "$tmp/stream.$i"; then
			sent=$((sent + 1))
		elif ! kill -0 "${streams[$i]}" 2>/dev/null; then
			stream "$i"
		fi
	done
	[ $sent = 16 ]
}
all_ended() {
	local p
	for p in "${streams[@]}"; do ! kill -0 "$p" 2>/dev/null || return 1; done
}
for i in $(seq 1 16); do stream $i; done
check "16 live streams at once, each sent the overview" until_ok 10000 all_sent
seventeenth() {
	local c
	c=$(code "${auth[@]}" "$base/events")
	[ "$c" = 503 ] || { echo "#   $c; $(wc -c "$tmp"/stream.* | tr '\n' ' ')"; false; }
}
check "a 17th: 503" seventeenth
cloexec() {
	local f flags ok=0
	for f in /proc/$web/fdinfo/*; do
		case ${f##*/} in 0|1|2) continue ;; esac
		flags=$(sed -n 's/^flags:[[:space:]]*//p' "$f" 2>/dev/null) || continue
		[ -n "$flags" ] || continue
		(( (8#$flags & 8#2000000) != 0 )) || { echo "#   fd ${f##*/}: flags $flags, $(readlink /proc/$web/fd/${f##*/})"; ok=1; }
	done
	return $ok
}
check "every descriptor of chute web is close-on-exec ($(ls /proc/$web/fd | wc -l) open, sockets too)" cloexec
check "SIGTERM with 16 streams open: it ends, exit 0" \
	eval 'kill -TERM $web && until_ok 10000 gone $web && wait $web'
web=''
check "... and the streams end" until_ok 10000 all_ended

# ---- read-only: no forms, no actions ----

start_web "$tmp/ro.log" "$spool" --auth-file "$tmp/users"
webro=$started
check "without --allow-actions: a page without credentials is 401, with them 200" \
	eval '[ "$(code "$base/jobs?state=new")" = 401 ] && [ "$(code "${auth[@]}" "$base/jobs?state=new")" = 200 ]'
check "... no form that posts" \
	eval '! curl -s "${auth[@]}" "$base/jobs?state=failed" | grep -q "method=\"post\""'
check "... and a POST is refused (403), the job untouched" \
	eval '[ "$(code "${auth[@]}" -d id=n3 "$base/action/cancel")" = 403 ] && [ "$(state_of n3)" = new ]'
kill "$webro" && wait "$webro"
webro=''

# ---- the time of a refusal tells no names ----

# Two users: the first's hash cheap (1,000 rounds of sha512-crypt), the
# second's dear (200,000: about 0.2 s).  A wrong password for the dear
# one, and any password for a name not in the file, are 401s that take
# as long, at the fastest of three each: the time of a refusal depends
# on no name.
hash6() { perl -e 'print crypt($ARGV[0], $ARGV[1])' "$1" "\$6\$rounds=$2\$$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')\$"; }
printf 'cheap:%s\ndear:%s\n' "$(hash6 "$password" 1000)" \
    "$(hash6 "$password" 200000)" >"$tmp/timed.users"
chmod 0600 "$tmp/timed.users"
start_web "$tmp/timed.log" "$spool" --auth-file "$tmp/timed.users"
webro=$started
# fastest USER: the fastest of three 401s for USER, a wrong password, in s.
fastest() {
	local i t min=''
	for i in 1 2 3; do
		t=$(curl -s -o /dev/null -m 10 -w '%{http_code} %{time_total}' \
		    -u "$1:wrong-$i" "$base/")
		[ "${t% *}" = 401 ] || { echo "#   $1: ${t% *}" >&2; echo 0; return; }
		min=$(awk -v a="${t#* }" -v b="$min" 'BEGIN { print (b == "" || a < b) ? a : b }')
	done
	echo "$min"
}
dear=$(fastest dear) unknown=$(fastest nosuchuser) cheap=$(fastest cheap)
check "a 401 for a name not in the file takes as long as one for a user whose hash is dear (unknown ${unknown}s, dear ${dear}s, cheap ${cheap}s)" \
	awk -v u="$unknown" -v d="$dear" -v c="$cheap" 'BEGIN { exit !(d > 0.05 && u > d / 2 && c > d / 2) }'
kill "$webro" && wait "$webro"
webro=''

# Eight users, every hash dear: a 401 costs one crypt at most, whatever
# the name, not one per user of the file.  N requests at once for a name
# not in the file cost chute-web (utime + stime of /proc/PID/stat, all
# its threads) under 3 x N crypts of CPU, one crypt's CPU as perl's
# crypt (the same libcrypt) takes here; a crypt per user would be 8 x N.
for i in 1 2 3 4 5 6 7 8; do
	printf 'dear%s:%s\n' "$i" "$(hash6 "$password" 200000)"
done >"$tmp/dear.users"
chmod 0600 "$tmp/dear.users"
start_web "$tmp/dear.log" "$spool" --auth-file "$tmp/dear.users"
webro=$started
# cpu_ticks PID: its user and system time, in clock ticks.
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
# crypt_s: the CPU seconds of one crypt of a dear hash, the mean of four.
crypt_s() {
	perl -e '@a = times; crypt("x", $ARGV[0]) for 1 .. 4; @b = times;
	    printf "%.4f\n", ($b[0] - $a[0] + $b[1] - $a[1]) / 4' "$(head -1 "$tmp/dear.users" | cut -d: -f2-)"
}
one=$(crypt_s) n=6 codes=()
before=$(cpu_ticks "$webro")
for ((i = 0; i < n; i++)); do
	curl -s -o /dev/null -m 20 -w '%{http_code}\n' -u "nosuchuser:wrong-$i" \
	    "$base/" >"$tmp/dear.$i" &
	codes+=($!)
done
wait "${codes[@]}"
after=$(cpu_ticks "$webro")
spent=$(awk -v a="$after" -v b="$before" -v t="$(getconf CLK_TCK)" 'BEGIN { printf "%.3f", (a - b) / t }')
check "$n 401s at once for a name not in a file of 8 dear users cost chute-web under 3 x $n crypts of CPU (${spent}s; one crypt ${one}s)" \
	eval '[ "$(cat "$tmp"/dear.[0-9] | sort -u)" = 401 ] &&
	    awk -v s="$spent" -v o="$one" -v n="$n" "BEGIN { exit !(o > 0.01 && s < 3 * n * o) }"'
kill "$webro" && wait "$webro"
webro=''

# ---- requests that never end arriving (slowloris) ----

# slowloris PORT N SECONDS: N connections to 127.0.0.1:PORT, each sending
# a request line and then a header line a second, never the empty line
# that ends them, for SECONDS at most.  A write to one chute web closed
# fails, quietly.
slowloris() {
	local port=$1 n=$2 end=$((SECONDS + $3)) i fd fds=()
	trap '' PIPE
	for ((i = 0; i < n; i++)); do
		exec {fd}<>"/dev/tcp/127.0.0.1/$port" || continue
		fds+=("$fd")
		printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n' "$port" >&"$fd"
	done
	while [ $SECONDS -lt $end ]; do
		for fd in "${fds[@]}"; do
			printf 'X-Slow: %d\r\n' $SECONDS >&"$fd"
		done 2>/dev/null
		sleep 1
	done
}
start_web "$tmp/slow.log" "$spool" --auth-file "$tmp/users"
webro=$started
sockets() { ls -l "/proc/$webro/fd" | grep -c 'socket:'; }
alone=$(sockets)
(slowloris "${base##*:}" 64 40) &
slow=$!
held() { [ "$(sockets)" -ge $((alone + 64)) ]; }
check "64 connections trickling header lines hold every place of chute web" \
	until_ok 10000 held
served() { [ "$(code "${auth[@]}" -m 5 "$base/")" = 200 ]; }
check "... yet within 25 s a request is answered (200): each had 10 s to arrive whole" \
	until_ok 25000 served
# (Opened over a second or more, they may be closed in more than one go;
# one that waited in the listen queue behind the full places, or behind
# the curl above, gets its 10 s from when it was taken: so up to 10 s
# after the first places freed, and a loaded machine adds to that.)
all_closed() {
	awk '/ closed: no whole request within 10 s$/ { n += $3 } END { exit !(n >= 64) }' "$tmp/slow.log"
}
check "... and the journal says they were closed, all 64" until_ok 20000 all_closed
kill "$slow" && wait "$slow"
slow=''
kill "$webro" && wait "$webro"
webro=''

# ---- a PostgreSQL queue, on a server of the test's own ----

queue_part() {
	local url=$pgurl id
	"$chute" init "$url" >/dev/null || { notok "chute init $url"; return; }
	for id in "${hostile[@]}"; do
		echo fail | "$chute" submit "$url" --id "$id" >/dev/null ||
			notok "submit $url --id $id"
	done
	for i in 1 2 3; do
		echo ok | "$chute" submit "$url" --id "ok-$i" >/dev/null
		echo fail | "$chute" submit "$url" --id "bulk-$i" >/dev/null
	done
	"$chute" run "$url" --drain --max-attempts 1 -- "$tmp/handler" \
		2>"$tmp/qrun.log" || notok "a worker's drain: $(tail -2 "$tmp/qrun.log")"
	for i in 1 2 3 4; do echo ok | "$chute" submit "$url" --id "n$i" >/dev/null; done
	echo ok | "$chute" submit "$url" --id later --delay 1h >/dev/null
	for i in $(seq -w 1 60); do echo ok | "$chute" submit "$url" --id "p-$i" >/dev/null; done

	start_web "$tmp/webq.log" "$url" --allow-actions --auth-file "$tmp/users"
	web=$started
	check "chute web URL listens and says where" test -n "$base"
	[ -n "$base" ] || return
	check "a queue's page without credentials: 401" test "$(code "$base/")" = 401
	check "a queue's /metrics is what chute stats URL --prometheus prints" \
		same_metrics "$url"
	check "the browser starts again" b_start
	b_ok "auth $user $password"
	b_ok "open $base/"
	check "the queue's counts on the page are chute stats URL's (new $(stat_of new "$url"), failed $(stat_of failed "$url"))" \
		until_ok 10000 counts_match "$url"
	b "eval window.stayed = 'here', 'set'"
	echo ok | "$chute" submit "$url" --id n5 >/dev/null
	check "a job submitted to the queue shows without a reload (LISTEN)" \
		eval 'until_ok 10000 counts_match "$url" && b_is "window.stayed" here'
	echo ok | "$chute" submit "$url" --id qk1 --key qkey --priority -4 >/dev/null
	b_ok "open $base/job?id=qk1"
	check "the queue's job page shows its priority and key" \
		eval 'b_is "document.getElementById(\"prio\").textContent" -4 &&
		    b_is "document.getElementById(\"key\").textContent" qkey'
	b_ok "open $base/"
	"$chute" schedule "$url" webtick --every 1d -- x >/dev/null
	check "a queue's schedule shows in the overview without a reload, its next tick as chute schedule URL lists it" \
		sched_shown "$url"
	"$chute" schedule "$url" webtick --remove >/dev/null
	id=$(echo ok | "$chute" submit "$url" --id uj1 --unique webu --delay 1h)
	b_ok "open $base/job?id=$(urlenc "$id")"
	check "a queue's job page shows its unique key" \
		b_is "document.getElementById('unique').textContent" webu
	echo ok | "$chute" submit "$url" --id wj1 --after "$id" >/dev/null
	b_ok "open $base/job?id=wj1"
	check "a queue's waiting job's page shows what it waits for" \
		b_is "document.getElementById('after').textContent" "$id"
	b_ok "open $base/"
	for id in "${hostile[@]}"; do
		b_ok "open $base/job?id=$(urlenc "$id")"
		check "the queue's job $id: its ID and log as text, nothing run" \
			eval 'shows "$id" && shows_log && untouched'
	done
	for page in "/" "/jobs?state=failed" "/workers" "/failures"; do
		b_ok "open $base$page"
		check "the queue's $page runs nothing of the hostile jobs'" untouched
	done
	b_ok "open $base/workers"
	check "the worker that ran them is on the workers page, stopped" \
		b_is "document.getElementById('workers').textContent.indexOf('stopped') >= 0" true
	b_ok "open $base/jobs?state=new&prefix=n1"
	check "the queue's n1: cancelled through its button" \
		eval 'cancel_n1 && [ "$(state_of n1 "$url")" = failed ]'
	b_ok "open $base/job?id=n1"
	check "... and retried through its page" \
		eval 'b_click "form[action=\"/action/retry\"] button" && result_is "n1 failed->new" && [ "$(state_of n1 "$url")" = new ]'
	check "... both in its log, by the dashboard's user" \
		eval '"$chute" log "$url" n1 | grep -q "cancelled by .chute web. (user alice" && "$chute" log "$url" n1 | grep -q "reset by .chute web. (user alice"'
	b_ok "open $base/jobs?state=failed&prefix=bulk-"
	check "the queue's failed bulk-*: a confirmation with the count, then 3 of 3 retried" \
		eval 'confirm_bulk && b_click "form[action=\"/action/retry-matching\"] button" && result_is "3 of 3 retried" && [ "$(state_of bulk-1 "$url")$(state_of bulk-2 "$url")$(state_of bulk-3 "$url")" = newnewnew ]'
	b_ok "open $base/"
	check "pause claiming, through the overview's button: the queue is paused" \
		eval 'b_click "form[action=\"/action/pause\"] button" && result_is "default paused" && "$chute" status "$url" | grep -qi paused'
	b_ok "open $base/"
	paused_shown() {
		b_wait 10000 "document.getElementById('paused').textContent.indexOf('paused') === 0 && !document.getElementById('resume').hidden" ||
		    { b "eval document.getElementById('paused').textContent"; echo "#   $reply"; false; }
	}
	check "... shown on the overview, live; then resumed" \
		eval 'paused_shown && b_click "form[action=\"/action/resume\"] button" && result_is "default resumed"'
	b_stop
	token=$(curl -s "${auth[@]}" "$base/job?id=n2" |
		sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
	check "a queue's POST without the CSRF token: 403, n2 untouched" \
		eval '[ "$(post -d id=n2)" = 403 ] && [ "$(state_of n2 "$url")" = new ]'
	check "... with it: done" \
		eval '[ "$(post -d "id=n2&csrf=$token")" = 200 ] && [ "$(state_of n2 "$url")" = failed ]'
	url_pages() {
		local next="$base/jobs?state=new&rows=25" n=0
		while [ -n "$next" ] && [ $n -lt 10 ]; do
			curl -s "${auth[@]}" "$next" >"$tmp/page"
			sed 's/<tr>/\n/g' "$tmp/page" | sed -n 's/.*class="id" href="[^"]*">\([^<]*\)<.*/\1/p'
			next=$(sed -n 's/.*id="next" rel="next" href="\([^"]*\)".*/\1/p' "$tmp/page" | sed 's/&amp;/\&/g')
			[ -n "$next" ] && next=$base$next
			n=$((n + 1))
		done
	}
	url_pages >"$tmp/qpaged"
	"$chute" ls "$url" new | awk 'NR > 1 { print $NF }' >"$tmp/qls"
	check "the queue's new jobs 25 at a time: $(wc -l <"$tmp/qpaged") IDs, those of chute ls URL in its order" \
		cmp -s "$tmp/qpaged" "$tmp/qls"
	kept_line='<p id="kept">finished jobs kept: done 1h, failed forever</p>'
	check "the queue's overview says no retention while it keeps everything" \
		eval '! curl -s "${auth[@]}" "$base/" | grep -q "id=\"kept\""'
	check "... and the queue's retention once it is set" \
		eval '"$chute" retention "$url" --done 1h >/dev/null && curl -s "${auth[@]}" "$base/" | grep -qF "$kept_line" && "$chute" retention "$url" --done forever >/dev/null'
	# Rows dated in the last years a timestamptz holds (finite: version
	# 7's checks let them by), new n3 and failed n2: their pages failed
	# "bigint out of range" (500).
	pg_sql "UPDATE chute.live SET run_at = '294276-12-31 23:59:59+00'
	    WHERE queue = 'default' AND id = 'n3';
	    UPDATE chute.finished SET run_at = '294276-12-31 23:59:59+00'
	    WHERE queue = 'default' AND id = 'n2'" >/dev/null
	far_pages() {
		local p c ok=0
		for p in "/jobs?state=new" "/job?id=n3" "/jobs?state=failed" \
		    "/job?id=n2" "/failures"; do
			c=$(code "${auth[@]}" "$base$p")
			[ "$c" = 200 ] || { echo "#   $p: $c"; ok=1; }
		done
		return $ok
	}
	check "the queue's pages with jobs dated in the year 294276: 200" far_pages
	check "SIGTERM ends chute web URL: exit 0" \
		eval 'kill -TERM $web && until_ok 10000 gone $web && wait $web'
	web=''
	# Past the checks, which the role that owns the tables may drop: the
	# failed n2 at infinity.  Its first hour took it from now() ("cannot
	# subtract infinite timestamps"), and chute web did not start.
	pg_sql "ALTER TABLE chute.finished DROP CONSTRAINT finished_times_finite;
	    UPDATE chute.finished SET run_at = 'infinity'
	    WHERE queue = 'default' AND id = 'n2'" >/dev/null
	start_web "$tmp/webinf.log" "$url" --auth-file "$tmp/users"
	web=$started
	check "... and with n2 at infinity past a dropped check: it starts, the same pages 200" \
		eval '[ -n "$base" ] && far_pages'
	kill -TERM $web && wait $web
	web=''
}
if ! pg_can; then
	echo "skip - tests/web.sh: a queue's dashboard: $pg_why"
elif pg_start; then
	queue_part
else
	notok "a PostgreSQL server of the test's own starts"
fi

printf '%d passed, %d failed\n' "$pass" "$fail"
[ "$fail" = 0 ]
