#!/usr/bin/env bash
# tests/netns.sh CHUTE [SCENARIO...]: the fleet across hosts, as hosts
# really fail.  Each host is a network namespace of its own: the server's
# (chute-RUN-srv: a bridge holding 198.18.0.1, the primary, and 198.18.0.2,
# the standby), and one per worker, submitter and forward, joined to the
# bridge by a veth pair and talking TCP to PostgreSQL, never its Unix
# socket.  198.18.0.0/15 is RFC 2544's benchmarking range: these addresses
# exist only inside the namespaces, and no packet leaves the veth pairs.
#
# Scenarios (all by default, or those named):
#   partition-both partition-in partition-out partition-link
#	a worker cut off (packets dropped both ways, only server->worker,
#	only worker->server, its link down) for longer than the lease
#   keylimit	a key at 2 whose two runs' worker is cut off
#   blip	the same cut, healed after less than the lease
#   submit	a submitter cut off: exit 75 and nothing printed
#   forward	chute forward cut off, then healed
#   standby	a multi-host URI whose first host is a standby (in recovery)
#   demote	the primary made read-only, the standby promoted
#   failover	kill -9 of the primary host under load, standby promoted
#   unique	submits with --unique from three hosts in each mode, the
#		primary's host killed midway: one job per key, retries exact
#   async	an asynchronous standby promoted: a fencing token given twice
#   clock	workers whose wall clocks are hours wrong (faketime)
#   torture[=N]	N rounds (3) of random cuts and failovers under load
#
# A cut drops packets with nftables at the receiving end of each direction
# (an ingress hook on the veth: no reset, no ICMP, and neither host's
# stack learns of it); "link" takes the worker's interface down, which its
# stack does see.  Every wait is a poll every 50 ms up to a deadline, for a
# condition the check names.  One "ok - ..." or "not ok - ..." line per
# check, then "N passed, M failed"; where namespaces cannot be made (not
# root, no ip, nft or PostgreSQL), one "skip" line, exit 0.  Everything is
# torn down on exit, failure included; namespaces of an earlier run that
# was killed are removed at the start.
set -u
export LC_ALL=C
[ $# -ge 1 ] || { echo "usage: tests/netns.sh CHUTE [SCENARIO...]" >&2; exit 64; }
chute=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
skip() { echo "skip - tests/netns.sh: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "network namespaces need root"
for c in ip nft nsenter runuser flock; do
	command -v $c >/dev/null || skip "no $c (apt-get install iproute2 nftables util-linux)"
done
pgbin=$(pg_config --bindir 2>/dev/null)
[ -x "$pgbin/initdb" ] || pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] && [ -x "$pgbin/pg_basebackup" ] ||
	skip "no PostgreSQL server (apt-get install postgresql)"
id postgres >/dev/null 2>&1 || skip "no postgres user (apt-get install postgresql)"

# Namespaces of runs whose script died without its cleanup (kill -9);
# what still runs in them is left alone.
for n in $(ip netns list 2>/dev/null | grep -o '^chute-c[0-9]*-[a-z0-9]*'); do
	p=${n#chute-c}; p=${p%%-*}
	kill -0 "$p" 2>/dev/null || ip netns del "$n" 2>/dev/null
done

run=c$$
# The servers run as postgres, with their sockets in $tmp: TMPDIR unless
# postgres cannot reach it or a socket's path would be too long there.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/chute-netns.XXXXXX") || exit 1
chmod 755 "$tmp"
if [ ${#tmp} -gt 64 ] || ! runuser -u postgres -- test -x "$tmp"; then
	rmdir "$tmp"; tmp=$(mktemp -d /tmp/chute-netns.XXXXXX) || exit 1
	chmod 755 "$tmp"
fi
LEASE_MS=2000
LEASE=2s
pass=0 fail=0
hosts=""		# the namespaces made, for the cleanup
started=""		# background processes started, for the cleanup

ok()    { pass=$((pass + 1)); printf 'ok - %s\n' "$*"; }
notok() { fail=$((fail + 1)); printf 'not ok - %s\n' "$*"; }
# check DESCRIPTION COMMAND...
check() { local what=$1; shift; if "$@"; then ok "$what"; else notok "$what"; fi; }
ms() { date +%s%3N; }
# until_ok MS COMMAND...: run COMMAND every 50 ms until it succeeds or MS pass.
until_ok() {
	local deadline=$(($(ms) + $1)); shift
	until "$@"; do
		[ "$(ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}
say() { printf '# %s\n' "$*"; }
# show FILE: its last lines, as the comment of a failed check.
show() { [ -f "$1" ] && tail -n 15 "$1" | sed "s,^,#   $(basename "$1"): ,"; }

ns() { echo "chute-$run-$1"; }
# inns HOST COMMAND...: COMMAND in HOST's namespace.  nsenter execs it
# (ip netns exec forks, and a pid we signal must be the program's own).
inns() { local h=$1; shift; nsenter --net="/run/netns/$(ns "$h")" -- "$@"; }

# Every process we started, every server, every namespace: gone.
cleanup() {
	local p
	for p in $started; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for d in "$tmp"/pg-*; do
		[ -f "$d/postmaster.pid" ] || continue
		runuser -u postgres -- "$pgbin/pg_ctl" -D "$d" -m immediate stop >/dev/null 2>&1
	done
	for h in $hosts; do
		for p in $(ip netns pids "$(ns "$h")" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	done
	for h in $hosts; do ip netns del "$(ns "$h")" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- hosts ----

# The server's host: a bridge with the primary's and the standby's addresses.
ip netns add "$(ns srv)" 2>"$tmp/err" || skip "cannot make a network namespace: $(cat "$tmp/err")"
hosts=srv
ip -n "$(ns srv)" link set lo up
ip -n "$(ns srv)" link add br0 type bridge 2>"$tmp/err" || skip "cannot make a bridge: $(cat "$tmp/err")"
ip -n "$(ns srv)" addr add 198.18.0.1/24 dev br0
ip -n "$(ns srv)" addr add 198.18.0.2/24 dev br0
ip -n "$(ns srv)" link set br0 up
nhost=0
# addhost NAME: a host of its own at 198.18.0.(10+N), linked to the bridge
# by ${run}aN (its end) and ${run}bN (the server's end).
addhost() {
	nhost=$((nhost + 1))
	local a=${run}a$nhost b=${run}b$nhost
	ip netns add "$(ns "$1")" && hosts="$hosts $1" &&
	ip -n "$(ns "$1")" link set lo up &&
	ip link add "$a" type veth peer name "$b" &&
	ip link set "$a" netns "$(ns "$1")" &&
	ip link set "$b" netns "$(ns srv)" &&
	ip -n "$(ns srv)" link set "$b" master br0 up &&
	ip -n "$(ns "$1")" addr add "198.18.0.$((10 + nhost))/24" dev "$a" &&
	ip -n "$(ns "$1")" link set "$a" up || skip "cannot link a namespace by veth"
	eval "if_$1=$nhost"
}
for h in w1 w2 w3 sub fwd; do addhost $h; done
nft -f /dev/null 2>/dev/null || skip "nft does not work here"

# cut HOST both|in|out|link: HOST loses the server; heal HOST undoes it.
# "in" drops what reaches HOST, "out" what HOST sends; each is dropped on
# arrival, at the far end of the veth from its sender.
cut() {
	local i; eval "i=\$if_$1"
	case $2 in
	both|in) inns "$1" nft add table netdev chute_cut &&
		inns "$1" nft add chain netdev chute_cut c "{ type filter hook ingress device ${run}a$i priority 0; policy drop; }" ;;
	esac
	case $2 in
	both|out) inns srv nft add table netdev "chute_cut_$1" &&
		inns srv nft add chain netdev "chute_cut_$1" c "{ type filter hook ingress device ${run}b$i priority 0; policy drop; }" ;;
	link) ip -n "$(ns "$1")" link set "${run}a$i" down ;;
	esac
}
heal() {
	local i; eval "i=\$if_$1"
	inns "$1" nft delete table netdev chute_cut 2>/dev/null
	inns srv nft delete table netdev "chute_cut_$1" 2>/dev/null
	ip -n "$(ns "$1")" link set "${run}a$i" up
}

# ---- servers ----

# pg_make NAME ADDR: a cluster in $tmp/pg-NAME listening on ADDR:5432
# (TCP, in the server's namespace) and on a Unix socket in
# $tmp/sock-NAME, which only the test's own psql uses.
pg_conf() {
	cat >> "$tmp/pg-$1/postgresql.conf" <<END
listen_addresses = '$2'
port = 5432
unix_socket_directories = '$tmp/sock-$1'
shared_buffers = 16MB
max_connections = 60
wal_level = replica
max_wal_senders = 4
wal_keep_size = 64MB
fsync = on
synchronous_commit = on
END
}
pg_make() {
	mkdir -p "$tmp/sock-$1" "$tmp/pg-$1" && chown postgres "$tmp/sock-$1" "$tmp/pg-$1" &&
	chmod 700 "$tmp/pg-$1"
	runuser -u postgres -- "$pgbin/initdb" -D "$tmp/pg-$1" -A trust -U postgres \
		>"$tmp/initdb.log" 2>&1 || { say "$(tail -5 "$tmp/initdb.log")"; return 1; }
	pg_conf "$1" "$2"
	cat >> "$tmp/pg-$1/pg_hba.conf" <<END
host all all 198.18.0.0/24 trust
host replication all 198.18.0.0/24 trust
END
}
pg_start() {
	inns srv runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg-$1" -l "$tmp/sock-$1/server.log" \
		-w -t 60 start >/dev/null 2>&1 || { show "$tmp/sock-$1/server.log"; return 1; }
}
# psql on NAME's socket, to database DB: psqlx NAME DB SQL
psqlx() { "$pgbin/psql" -X -A -t -q -v ON_ERROR_STOP=1 "host=$tmp/sock-$1 port=5432 user=postgres dbname=$2" -c "$3"; }
pg_make p 198.18.0.1 && pg_start p || { notok "the primary starts in its namespace"; exit 1; }
P="198.18.0.1:5432"
S="198.18.0.2:5432"

# ---- jobs and workers ----

mkdir -p "$tmp/locks"
# The handler, run as `h HOST`: its job's first word says what it does.
# Every run appends "start ID ATTEMPT HOST PID" to the journal and holds the
# witness lock on locks/ID (its commands get 9>&-, so only this shell holds
# it): a second run of the job at the same time finds it taken and writes
# CONCURRENT.  block: the first attempt waits for release-ID (30 s at
# most) and exits 0, later ones exit 0 at once; fail1: the same, but the
# first attempt exits 1; quick: exit 0; slow: wait 3 leases, exit 0.
# keyed N hold|quick: job KEY-M of a key at N running: the run takes the
# first free of the slots locks/slot.KEY.1..N (held by its process group
# until it is gone; none free: OVER ID, a limit exceeded) and says
# "slot KEY I"; hold then waits as block does, quick exits 0.
cat > "$tmp/h" <<END
#!/bin/sh
exec 9> "$tmp/locks/\$CHUTE_ID"
flock -n 9 || echo "CONCURRENT \$CHUTE_ID" >> "$tmp/journal"
echo "start \$CHUTE_ID \$CHUTE_ATTEMPT \$1 \$\$" >> "$tmp/journal"
read kind rest
case "\$kind" in
quick) exit 0 ;;
nap) sleep 0.\$((\$\$ % 8)) 9>&-; exit 0 ;;
slow) sleep $((3 * LEASE_MS / 1000)) 9>&-; exit 0 ;;
keyed)
	set -- \$rest; k=\${CHUTE_ID%%-*}; i=1
	while :; do
		exec 8> "$tmp/locks/slot.\$k.\$i"
		flock -n 8 && break
		[ \$i -ge \$1 ] && { echo "OVER \$CHUTE_ID" >> "$tmp/journal"; break; }
		i=\$((i + 1))
	done
	echo "slot \$k \$i \$CHUTE_ID" >> "$tmp/journal"
	[ "\$2" = hold ] || exit 0 ;;
esac
[ "\$CHUTE_ATTEMPT" = 1 ] || exit 0
i=0
while [ ! -e "$tmp/release-\$CHUTE_ID" ] && [ \$i -lt 600 ]; do sleep 0.05 9>&-; i=\$((i + 1)); done
[ "\$kind" = fail1 ] && exit 1
exit 0
END
chmod +x "$tmp/h"

db=""
dbn=0
# newdb: a fresh database with chute's schema, as $db, and its URIs: $U
# (the primary), $U2 (primary, then standby, read-write only).
newdb() {
	dbn=$((dbn + 1)); db=t$dbn
	psqlx p postgres "CREATE DATABASE $db" || return 1
	U="postgresql://postgres@$P/$db"
	U2="postgresql://postgres@$P,$S/$db?target_session_attrs=read-write"
	inns sub "$chute" init "$U" >/dev/null 2>"$tmp/init.err" || { show "$tmp/init.err"; return 1; }
	: > "$tmp/journal"
	rm -f "$tmp"/release-* "$tmp"/locks/*
}
# worker NAME HOST URI ARGS...: chute run in HOST's namespace, in the
# background; its pid in $NAME, its stderr in $tmp/NAME.log.
worker() {
	local name=$1 host=$2 uri=$3; shift 3
	# Not inns: a function in the background is a subshell, whose pid
	# is not the worker's.
	nsenter --net="/run/netns/$(ns "$host")" -- "$chute" run "$uri" \
		--lease $LEASE "$@" -- "$tmp/h" "$name" >/dev/null 2>"$tmp/$name.log" &
	eval "$name=$!"
	started="$started $!"
}
# stop PID: SIGTERM, and its exit status (within 20 s, else it is killed).
stop() {
	kill -TERM "$1" 2>/dev/null
	until_ok 20000 eval "! kill -0 $1 2>/dev/null" || kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# submit HOST URI ID KIND: prints what submit printed; its status.
submit() { echo "$4" | inns "$1" "$chute" submit "$2" --id "$3" 2>>"$tmp/submit.err"; }
state() { psqlx "${2:-p}" "$db" "SELECT state || ' attempts=' || attempts FROM chute.jobs WHERE id = '$1'"; }
is_state() { [ "$(state "$1" "${3:-p}" 2>/dev/null)" = "$2" ]; }
# is_state_any ID STATE [SERVER]: in STATE, whatever its attempts.
is_state_any() { [ "$(psqlx "${3:-p}" "$db" "SELECT state FROM chute.jobs WHERE id = '$1'" 2>/dev/null)" = "$2" ]; }
started_run() { grep -q "^start $1 $2 $3 " "$tmp/journal"; }
pid_of_run() { grep "^start $1 $2 " "$tmp/journal" | awk '{print $5}'; }
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
no_concurrent() { ! grep -q CONCURRENT "$tmp/journal"; }
logs() { grep -q -- "$2" "$tmp/$1.log"; }
# workers_up N: N workers' sessions (after LISTEN: they recover) in $db.
workers_up() {
	[ "$(psqlx "${2:-p}" "$db" "SELECT count(*) FROM pg_stat_activity WHERE
	    application_name = 'chute-worker' AND datname = '$db'")" -ge "$1" ]
}

# ---- partitions ----

# A worker cut off for longer than the lease, one of four ways: its
# handlers stop within 5/6 of the lease; another worker takes the jobs over
# only after the lease; never two runs at once; its late outcome is
# refused; healed, it reconnects by itself and runs new jobs; nothing lost;
# a submit meanwhile prints an ID that exists.
partition() {
	local mode=$1 t_cut t_dead t_b hp
	say "partition: $mode, healed after more than the lease"
	newdb || { notok "$mode: a database"; return; }
	check "$mode: submits from their own host print their IDs" \
		eval '[ "$(submit sub "$U" p block)" = p ] && [ "$(submit sub "$U" q fail1)" = q ]'
	worker A w1 "$U" -j 2 --max-attempts 3
	check "$mode: worker A runs both jobs, over TCP from its namespace" \
		until_ok 20000 eval 'started_run p 1 A && started_run q 1 A'
	worker B w2 "$U" -j 2 --max-attempts 3
	until_ok 10000 workers_up 2	# B is up: it would recover A's jobs
	hp=$(pid_of_run p 1)
	cut w1 "$mode"; t_cut=$(ms)
	touch "$tmp/release-q"	# A's q ends now, its outcome stuck in A
	check "$mode: a submit during the partition prints its ID, which exists" \
		eval '[ "$(submit sub "$U" s block)" = s ] && [ -n "$(state s)" ]'
	touch "$tmp/release-s"
	if until_ok 10000 dead "$hp"; then
		t_dead=$(ms)
		say "$mode: A's handler gone $((t_dead - t_cut)) ms after the cut, seen by a 50 ms poll (lease $LEASE_MS ms; A kills it 5/6 of it, $((LEASE_MS * 5 / 6)) ms, after its last renewal, which precedes the cut)"
		check "$mode: A stops its handler before its lease can run out" \
			[ $((t_dead - t_cut)) -lt $LEASE_MS ]
	else
		notok "$mode: A stops its handler when it cannot renew"; show "$tmp/A.log"
	fi
	check "$mode: A says why it stopped its handler" logs A "cannot renew its lease"
	if until_ok 20000 eval 'started_run p 2 B && started_run q 2 B'; then
		t_b=$(ms)
		say "$mode: B took both jobs over $((t_b - t_cut)) ms after the cut"
		ok "$mode: worker B recovers both jobs"
		# The last renewal came at most a third of a lease before the cut.
		check "$mode: ... only after the lease" [ $((t_b - t_cut)) -ge $((LEASE_MS * 2 / 3)) ]
	else
		notok "$mode: worker B recovers both jobs"; show "$tmp/B.log"
	fi
	check "$mode: never two runs of a job at once" no_concurrent
	check "$mode: B's outcomes stand" until_ok 15000 eval \
		'is_state p "done attempts=2" && is_state q "done attempts=2"'
	# The cut's length, not a wait for anything: half a lease beyond it.
	while [ "$(ms)" -lt $((t_cut + LEASE_MS * 3 / 2)) ]; do sleep 0.05; done
	heal w1; say "$mode: healed $(( $(ms) - t_cut )) ms after the cut"
	check "$mode: healed, A reconnects by itself" until_ok 20000 logs A "connected again"
	check "$mode: A's late outcome of q is refused" until_ok 10000 logs A "job=q outcome .*refused"
	check "$mode: ... and q stays done by B" is_state q "done attempts=2"
	stop "$B"
	check "$mode: A carries on: it runs a new job" eval \
		'[ "$(submit sub "$U" n quick)" = n ] && until_ok 20000 is_state n "done attempts=1" && started_run n 1 A'
	check "$mode: no job lost: 4 jobs, all done" eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FILTER (WHERE state = '\''done'\''), count(*) FROM chute.jobs")" = "4|4" ]'
	stop "$A"; check "$mode: A exits 0 when stopped" [ $? -eq 0 ]
	[ "$fail" -eq 0 ] || { show "$tmp/A.log"; show "$tmp/journal"; }
}

# The same cut, healed after a third of the lease: the worker keeps its
# job (or, on a slow machine, loses it safely); either way it reconnects,
# nothing runs twice at once and the job ends done once.
blip() {
	local mode=$1 hp
	say "blip: $mode, healed after a third of the lease"
	newdb || { notok "blip $mode: a database"; return; }
	submit sub "$U" b block >/dev/null
	worker A w1 "$U"
	worker B w2 "$U"
	until_ok 20000 eval 'started_run b 1 A || started_run b 1 B'
	if started_run b 1 A; then x=A y=w1; else x=B y=w2; fi
	hp=$(pid_of_run b 1)
	cut "$y" "$mode"
	sleep $(awk "BEGIN { print $LEASE_MS / 3000 }")	# the cut's length, not a wait for anything
	heal "$y"
	touch "$tmp/release-b"
	check "blip $mode: the job ends done" until_ok 20000 eval 'is_state b "done attempts=1" || is_state b "done attempts=2"'
	if is_state b "done attempts=1"; then
		say "blip $mode: the worker kept its job through the cut"
	else
		say "blip $mode: the worker lost its job (the cut outlasted a renewal's deadline)"
	fi
	check "blip $mode: never two runs at once" no_concurrent
	# The other worker gone, the one that was cut off runs a new job.
	if [ $x = A ]; then stop "$B"; else stop "$A"; fi
	check "blip $mode: the worker that was cut off carries on" eval \
		'[ "$(submit sub "$U" b2 quick)" = b2 ] && until_ok 20000 is_state b2 "done attempts=1" && started_run b2 1 $x'
	stop "$A"; stop "$B"
}

# A submitter cut off: exit 75, nothing printed, nothing inserted.
submit_cut() {
	local out rc
	say "submit: the submitter's host cut off"
	newdb || { notok "submit: a database"; return; }
	for mode in both in out link; do
		cut sub $mode
		out=$(echo quick | inns sub "$chute" submit "$U?connect_timeout=2" --id "x-$mode" 2>"$tmp/sub.err")
		rc=$?
		heal sub
		check "submit cut ($mode): exit 75 ($rc), nothing printed, nothing inserted" \
			eval '[ $rc -eq 75 ] && [ -z "$out" ] && [ -z "$(state x-$mode)" ]'
		check "submit cut ($mode): one line naming the server, without a password" \
			eval '[ "$(wc -l < "$tmp/sub.err")" -eq 1 ] && grep -q "198.18.0.1" "$tmp/sub.err"'
	done
}

# chute forward in its own host, cut off and healed: every job arrives.
forward_cut() {
	local spool=$tmp/spool-fwd f n
	say "forward: its host cut off, healed after more than the lease"
	newdb || { notok "forward: a database"; return; }
	rm -rf "$spool"; "$chute" init "$spool" >/dev/null
	for n in 1 2 3; do echo quick | "$chute" submit "$spool" --id "f$n" >/dev/null; done
	nsenter --net="/run/netns/$(ns fwd)" -- "$chute" forward "$spool" "$U" >/dev/null 2>"$tmp/F.log" &
	f=$!; started="$started $f"
	check "forward: jobs reach the database over TCP" until_ok 20000 eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM chute.jobs")" = 3 ]'
	cut fwd both
	for n in 4 5 6; do echo quick | "$chute" submit "$spool" --id "f$n" >/dev/null; done
	sleep $((LEASE_MS * 2 / 1000))	# the cut's length, not a wait for anything
	heal fwd
	check "forward: healed, it delivers what came in meanwhile" until_ok 30000 eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM chute.jobs")" = 6 ]'
	check "forward: each once, under its own ID" eval \
		'[ "$(psqlx p "$db" "SELECT string_agg(id, '\'' '\'' ORDER BY id) FROM chute.jobs")" = "f1 f2 f3 f4 f5 f6" ]'
	check "forward: its spool has them all in done/" eval '[ "$(ls "$spool/done" | wc -l)" -eq 6 ]'
	stop "$f"
}

# ---- the standby, and failover ----

# addr p|s: the server's address: the first host's, or the second's.
addr() { [ "$1" = p ] && echo 198.18.0.1 || echo 198.18.0.2; }

# standby_of FROM TO: a streaming standby of FROM (pg_basebackup) at TO's
# address, made FROM's synchronous standby.  TO's old cluster, if any (a
# host that died), is thrown away first.
standby_of() {
	local f=$1 t=$2
	[ -f "$tmp/pg-$t/postmaster.pid" ] &&
		runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg-$t" -m immediate stop >/dev/null 2>&1
	rm -rf "$tmp/pg-$t" "$tmp/sock-$t"
	mkdir -p "$tmp/sock-$t" "$tmp/pg-$t" && chown postgres "$tmp/sock-$t" "$tmp/pg-$t" &&
	chmod 700 "$tmp/pg-$t" || return 1
	runuser -u postgres -- "$pgbin/pg_basebackup" -d "host=$tmp/sock-$f port=5432 user=postgres" \
		-D "$tmp/pg-$t" -R -X stream -c fast >"$tmp/basebackup.log" 2>&1 || { show "$tmp/basebackup.log"; return 1; }
	# The copy has FROM's settings: its own address and socket after
	# them, and no synchronous standby of its own until it is promoted.
	pg_conf "$t" "$(addr "$t")"
	cat >> "$tmp/pg-$t/postgresql.auto.conf" <<END
primary_conninfo = 'host=$(addr "$f") port=5432 user=postgres application_name=standby'
synchronous_standby_names = ''
END
	pg_start "$t" || return 1
	psqlx "$f" postgres "ALTER SYSTEM SET synchronous_standby_names = 'standby'" &&
	psqlx "$f" postgres "SELECT pg_reload_conf()" >/dev/null &&
	until_ok 30000 eval '[ "$(psqlx "$f" postgres "SELECT sync_state FROM pg_stat_replication")" = sync ]'
}
# The first standby: of the primary, at 198.18.0.2.
standby_make() { [ -d "$tmp/pg-s" ] || standby_of p s; }

# host_dies p|s: that server's host dies: nothing more reaches or leaves
# its address (no reset), then every process of its server is killed.
host_dies() {
	local pm
	inns srv nft add table inet chute_dead &&
	inns srv nft add chain inet chute_dead in "{ type filter hook input priority -300; ip daddr $(addr "$1") drop; }" &&
	inns srv nft add chain inet chute_dead out "{ type filter hook output priority -300; ip saddr $(addr "$1") drop; }" ||
		return 1
	pm=$(head -1 "$tmp/pg-$1/postmaster.pid")
	kill -9 "$pm" $(ps -o pid= --ppid "$pm")
}
promote() { inns srv runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg-$1" -w -t 60 promote >/dev/null; }

# A URI whose first host is the standby, without target_session_attrs: a
# worker connecting there finds it in recovery (LISTEN fails) and must
# not stay: it reaches the primary and runs the job.  A submit that lands
# on the standby exits 75 (try later) and prints nothing.
standby_first() {
	local out rc
	say "standby: a URI that names the standby first"
	newdb || { notok "standby: a database"; return; }
	standby_make || { notok "standby: a synchronous standby by pg_basebackup"; return; }
	until_ok 10000 eval '[ "$(psqlx s postgres "SELECT count(*) FROM pg_database WHERE datname = '\'$db\''")" = 1 ]'
	local SF="postgresql://postgres@$S,$P/$db"
	out=$(echo quick | inns sub "$chute" submit "postgresql://postgres@$S/$db" --id r0 2>"$tmp/sub.err")
	rc=$?
	check "standby: a submit to a server in recovery exits 75 ($rc) and prints nothing" \
		eval '[ $rc -eq 75 ] && [ -z "$out" ]'
	check "standby: ... saying why, in one line" eval '[ "$(wc -l < "$tmp/sub.err")" -eq 1 ] && grep -q "read-only" "$tmp/sub.err"'
	submit sub "$U" r1 quick >/dev/null
	worker A w1 "$SF"
	check "standby: a worker sent to the standby first reaches the primary and runs the job" \
		until_ok 20000 is_state r1 "done attempts=1"
	logs A "LISTEN" && say "standby: A said: $(grep -m1 LISTEN "$tmp/A.log")"
	stop "$A"
}

# The audit: every change of a job, committed with it (and so replicated
# with it: synchronously), with the session that made it (a worker's URI
# may name it: application_name) and whether the old lease had run out by
# the statement's now().
audit_install() {
	psqlx p "$db" "CREATE TABLE audit (n bigserial, id text, old_state text,
	    new_state text, old_token bigint, new_token bigint, app text,
	    expired boolean);
	  CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
	    IF TG_OP = 'DELETE' THEN
	      INSERT INTO audit (id, old_state, new_state, old_token, app, expired)
	      SELECT OLD.id, OLD.state, f.state, OLD.token,
	        current_setting('application_name'), OLD.lease_until < now()
	      FROM chute.finished f WHERE f.queue = OLD.queue AND f.id = OLD.id;
	      RETURN OLD;
	    END IF;
	    INSERT INTO audit (id, old_state, new_state, old_token, new_token, app, expired)
	    VALUES (NEW.id, OLD.state, NEW.state, OLD.token, NEW.token,
	      current_setting('application_name'), OLD.lease_until < now());
	    RETURN NEW; END \$\$;
	  CREATE TRIGGER audit AFTER UPDATE OR DELETE ON chute.live FOR EACH ROW EXECUTE FUNCTION audit()"
}

# pair_fresh: a new primary (and no standby), for a scenario that needs a
# pair of its own after one that promoted the standby.
pair_fresh() {
	local d
	for d in p s; do
		[ -f "$tmp/pg-$d/postmaster.pid" ] &&
			runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg-$d" -m immediate stop >/dev/null 2>&1
		rm -rf "$tmp/pg-$d" "$tmp/sock-$d"
	done
	inns srv nft delete table inet chute_dead 2>/dev/null
	pg_make p 198.18.0.1 && pg_start p
}

# The primary demoted the way a fencing script does it
# (default_transaction_read_only, reloaded: its sessions stay up but can
# no longer write), the standby promoted: workers connected to the old
# primary must leave it for the new one by themselves.
demote() {
	say "demote: the primary turned read-only, the standby promoted"
	newdb || { notok "demote: a database"; return; }
	standby_make || { notok "demote: a synchronous standby by pg_basebackup"; return; }
	submit sub "$U2" d1 quick >/dev/null
	worker A w1 "$U2"
	worker B w2 "$U2"
	check "demote: the workers run a job on the primary" until_ok 20000 is_state d1 "done attempts=1"
	until_ok 10000 workers_up 2
	psqlx p postgres "ALTER SYSTEM SET synchronous_standby_names = ''" &&
	psqlx p postgres "ALTER SYSTEM SET default_transaction_read_only = on" &&
	psqlx p postgres "SELECT pg_reload_conf()" >/dev/null
	check "demote: the standby is promoted" \
		inns srv runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg-s" -w -t 60 promote >/dev/null
	check "demote: a submit reaches the new primary" eval '[ "$(submit sub "$U2" d2 quick)" = d2 ]'
	check "demote: the workers leave the read-only server and run it there" \
		until_ok 20000 is_state d2 "done attempts=1" s
	check "demote: both workers moved" until_ok 20000 workers_up 2 s
	stop "$A"; stop "$B"
	pair_fresh || notok "demote: a new primary after it"
}

# An asynchronous standby promoted after the primary died with a claim it
# had not sent: the job is new again there, and the sequence is behind, so
# the new primary gives another worker the same fencing token.  The
# worker that held it first must not pass for the new holder: once it
# reconnects, its renewal finds the claim gone and stops its handler, and
# the new holder's outcome stands.  (Two runs at once cannot be avoided
# here: the claim itself was lost.)
async_token() {
	local ta tb lsn
	say "async: an asynchronous standby promoted, a fencing token given again"
	newdb || { notok "async: a database"; return; }
	standby_make || { notok "async: a standby"; return; }
	psqlx p postgres "ALTER SYSTEM SET synchronous_standby_names = ''" &&
	psqlx p postgres "SELECT pg_reload_conf()" >/dev/null
	submit sub "$U" j block >/dev/null
	# The sequence logs 32 values ahead: a checkpoint, then one value,
	# makes its next record at exactly 33 values on.  All of it reaches
	# the standby; then it receives nothing more.
	psqlx p "$db" "CHECKPOINT; SELECT nextval('chute.fence')" >/dev/null
	lsn=$(psqlx p postgres "SELECT pg_current_wal_lsn()")
	until_ok 20000 eval '[ "$(psqlx s postgres "SELECT pg_last_wal_replay_lsn() >= '\''$lsn'\''")" = t ]'
	psqlx s postgres "ALTER SYSTEM SET primary_conninfo = ''" &&
	psqlx s postgres "SELECT pg_reload_conf()" >/dev/null
	until_ok 20000 eval '[ "$(psqlx s postgres "SELECT count(*) FROM pg_stat_wal_receiver")" = 0 ]' ||
		{ notok "async: the standby stops receiving"; return; }
	psqlx p "$db" "SELECT nextval('chute.fence') FROM generate_series(1, 32)" >/dev/null
	worker A w1 "$U2" --prefetch 0
	until_ok 20000 started_run j 1 A || { notok "async: A runs the job"; return; }
	ta=$(psqlx p "$db" "SELECT token FROM chute.jobs WHERE id = 'j'")
	host_dies p
	promote s || { notok "async: the standby is promoted"; return; }
	check "async: the promoted standby lost A's claim" is_state j "new attempts=0" s
	# B knows only the new primary: with the multi-host URI its first
	# connect waits out the dead host, and A, reconnecting meanwhile,
	# found j new and claimed it again itself (the scenario not made).
	worker B w2 "postgresql://postgres@$S/$db" --prefetch 0
	check "async: B claims j on the new primary" until_ok 20000 started_run j 1 B
	tb=$(psqlx s "$db" "SELECT token FROM chute.jobs WHERE id = 'j'")
	say "async: A's token $ta on the old primary, B's $tb on the new one"
	check "async: (the scenario) the new primary gave B A's token again" [ "$ta" = "$tb" ]
	check "async: A reconnects to the new primary" until_ok 20000 logs A "connected again"
	check "async: A's renewal finds its claim gone, and it stops its handler" \
		until_ok 10000 eval 'logs A "taken away" && dead "$(pid_of_run j 1 | head -1)"'
	touch "$tmp/release-j"
	check "async: B's outcome stands" until_ok 20000 is_state j "done attempts=1" s
	check "async: B recorded it" until_ok 10000 logs B "job=j cur->done"
	check "async: nothing of A's was recorded" eval '! logs A "job=j cur->done" && ! logs B refused'
	stop "$A"; stop "$B"
	pair_fresh || notok "async: a new primary after it"
}

# Under load (two workers, a submitter, a forward), the primary's host
# dies: its packets dropped (no reset) and every process of it killed -9;
# the standby is promoted.  Workers and forward reach it by themselves;
# every ID submit printed is there; every job ends done once, or ran again
# under a new fencing token; no token repeats.
failover() {
	local spool=$tmp/spool-fo f i pm out rc n
	# A claim, in the audit (not a renewal: that stays in cur).
	local claims="new_state = 'cur' AND old_state <> 'cur'"
	say "failover: kill -9 of the primary's host under load, the standby promoted"
	newdb || { notok "failover: a database"; return; }
	audit_install || { notok "failover: the audit trigger"; return; }
	standby_make || { notok "failover: a synchronous standby by pg_basebackup"; return; }
	worker A w1 "$U2" -j 2
	worker B w2 "$U2" -j 2
	rm -rf "$spool"; "$chute" init "$spool" >/dev/null
	nsenter --net="/run/netns/$(ns fwd)" -- "$chute" forward "$spool" "$U2" >/dev/null 2>"$tmp/F.log" &
	f=$!; started="$started $f"
	# The load: 16 submits, one job each (those after the failover wait
	# out connect_timeout on the dead host first), and 16 jobs into
	# forward's spool.
	: > "$tmp/submits"
	(
		for i in $(seq 1 16); do
			out=$(echo quick | inns sub "$chute" submit "$U2&connect_timeout=2" --id "s$i" 2>>"$tmp/submit.err")
			echo "s$i $? $out" >> "$tmp/submits"
			echo quick | "$chute" submit "$spool" --id "g$i" >/dev/null
		done
	) &
	n=$!; started="$started $n"
	until_ok 30000 eval '[ "$(wc -l < "$tmp/submits")" -ge 6 ]'
	# One submit in flight at the crash, for certain: its insert waits
	# for a lock on chute.payloads that a session of ours holds.
	"$pgbin/psql" -X -q "host=$tmp/sock-p port=5432 user=postgres dbname=$db" \
		-c "BEGIN; LOCK TABLE chute.payloads IN SHARE MODE; SELECT pg_sleep(60)" >/dev/null 2>&1 &
	started="$started $!"
	until_ok 10000 eval '[ "$(psqlx p "$db" "SELECT count(*) FROM pg_locks WHERE granted AND mode = '\''ShareLock'\'' AND relation = '\''chute.payloads'\''::regclass")" = 1 ]'
	# Its own application_name: the load's submits wait for that lock too,
	# and only this one's wait says it is in flight (a slow build may not
	# have connected yet when the host dies, and then rightly succeeds).
	( out=$(echo quick | inns sub "$chute" submit "$U2&connect_timeout=2&application_name=inflight" --id inflight 2>"$tmp/inflight.err")
	  echo "$? $out" > "$tmp/inflight" ) &
	started="$started $!"
	check "failover: a submit waits for the lock when the primary dies" until_ok 10000 eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = '\''Lock'\'' AND application_name = '\''inflight'\''")" = 1 ]'
	# The host dies: nothing more reaches or leaves 198.18.0.1, then
	# every process of its server is killed at once.
	host_dies p
	say "failover: primary killed after $(wc -l < "$tmp/submits") submits"
	check "failover: the standby is promoted" promote s
	check "failover: the load's 16 submits end (each bounded)" until_ok 120000 eval '[ "$(wc -l < "$tmp/submits")" -ge 16 ]'
	wait "$n" 2>/dev/null
	check "failover: every submit printed its ID (exit 0) or exited 75 and printed nothing" eval \
		'! awk '\''!(($2 == 0 && $3 == $1) || ($2 == 75 && NF == 2))'\'' "$tmp/submits" | grep -q .'
	say "failover: $(awk '$2 == 0' "$tmp/submits" | wc -l) submits printed their ID, $(awk '$2 == 75' "$tmp/submits" | wc -l) exited 75"
	check "failover: the submit in flight at the crash exits 75 and prints nothing" until_ok 30000 eval \
		'[ "$(cat "$tmp/inflight" 2>/dev/null)" = "75 " ]'
	say "failover: it said: $(cat "$tmp/inflight.err")"
	check "failover: every ID submit printed is on the new primary" eval \
		'for i in $(awk '\''$2 == 0 { print $1 }'\'' "$tmp/submits"); do [ -n "$(state $i s)" ] || exit 1; done'
	check "failover: forward reaches the new primary: all 16 of its jobs arrive" until_ok 60000 eval \
		'[ "$(psqlx s "$db" "SELECT count(*) FROM chute.jobs WHERE id LIKE '\''g%'\''")" = 16 ]'
	check "failover: workers reach the new primary: every job ends done" until_ok 60000 eval \
		'[ "$(psqlx s "$db" "SELECT count(*) FROM chute.jobs WHERE state <> '\''done'\''")" = 0 ]'
	check "failover: both workers said they connected again" eval 'logs A "connected again" && logs B "connected again"'
	check "failover: never two runs of a job at once" no_concurrent
	check "failover: each job reached done once (the audit)" eval \
		'[ -z "$(psqlx s "$db" "SELECT id FROM audit WHERE new_state = '\''done'\'' GROUP BY id HAVING count(*) > 1")" ]'
	check "failover: no fencing token was given twice (the audit, across the failover)" eval \
		'[ -z "$(psqlx s "$db" "SELECT new_token FROM audit WHERE $claims GROUP BY new_token HAVING count(*) > 1")" ]'
	check "failover: a job that ran twice ran under two tokens" eval \
		'[ -z "$(psqlx s "$db" "SELECT id FROM audit WHERE $claims GROUP BY id HAVING count(*) <> count(DISTINCT new_token)")" ]'
	say "failover: $(psqlx s "$db" "SELECT count(*) FROM chute.jobs") jobs, $(grep -c '^start' "$tmp/journal") runs, $(psqlx s "$db" "SELECT count(*) FROM audit WHERE $claims") claims audited"
	stop "$A"; stop "$B"; stop "$f"
	pair_fresh || notok "failover: a new primary after it"
}

# ---- unique keys ----

# usub HOST KEY MODE: `submit --unique KEY --on-duplicate MODE` from HOST
# (its input "HOST KEY"), one line "HOST KEY MODE STATUS [ID]" in
# $tmp/usubs per try; a try that exits 75 is tried again at once (each is
# bounded by connect_timeout; 60 tries at most), as a submitter would.
usub() {
	local out rc n=0
	while :; do
		out=$(echo "$1 $2" | inns "$1" "$chute" submit "$U2&connect_timeout=2" \
			--unique "$2" --on-duplicate "$3" 2>>"$tmp/usub.err")
		rc=$?
		echo "$1 $2 $3 $rc $out" >> "$tmp/usubs"
		[ $rc = 75 ] && [ $((n += 1)) -lt 60 ] || return 0
	done
}
# uround FROM TO: hosts w1, w2 and w3 at once, each submitting keys
# u-MODE-FROM..u-MODE-TO of each mode in the same order (so that they
# race for each key); in the background, its pids in $upids.
uround() {
	local h
	upids=""
	for h in w1 w2 w3; do
		( for k in $(seq "$1" "$2"); do
			for m in refuse keep replace; do usub $h "u-$m-$k" $m; done
		  done ) &
		upids="$upids $!"; started="$started $!"
	done
}
# ukeys_ok SERVER: every try's status is 0, 3 (refuse only) or 75 with
# nothing printed; each key's last tries (one per host): refuse's at most
# one 0, the others 3; keep's and replace's all 0; every ID printed is
# the one job of its key on SERVER.
ukeys_ok() {
	psqlx "$1" "$db" "SELECT unique_key, id FROM chute.payloads WHERE unique_key IS NOT NULL" |
		tr '|' ' ' > "$tmp/ukeys"
	awk 'NR == FNR { job[$1] = $2; next }
	    { st = $4; bad = 0 }
	    st == 75 && NF != 4 { bad = 1 }
	    st != 75 && (NF != 5 || $5 != job[$2]) { bad = 1 }
	    st != 0 && st != 75 && !(st == 3 && $3 == "refuse") { bad = 1 }
	    bad { print "#   bad try: " $0; e = 1 }
	    st != 75 { last[$1 " " $2] = st; mode[$2] = $3 }
	    END {
		for (hk in last) { split(hk, a, " "); n[a[2]]++; if (last[hk] == 0) z[a[2]]++ }
		for (k in n) {
			if (n[k] != 3) { print "#   " k ": " n[k] " hosts ended"; e = 1 }
			if (mode[k] == "refuse" && z[k] > 1) { print "#   " k ": " z[k] " made it"; e = 1 }
			if (mode[k] != "refuse" && z[k] != 3) { print "#   " k ": " z[k] " of 3 exited 0"; e = 1 }
		}
		exit e
	    }' "$tmp/ukeys" "$tmp/usubs"
}

# Submitters on three hosts race for 12 unique keys, 4 in each of the
# modes refuse, keep and replace, against one queue whose primary's host
# dies midway (its synchronous standby promoted; their URI names both,
# read-write only): the second half's first submits, and one more for
# certain, in flight at the crash (they wait for a lock on
# chute.unique_keys that a session of ours holds).
# A submit cut off by the failover exits 75 and prints nothing; tried
# again, it makes the one job of its key or finds it made: exactly one
# job per key, no second one by a retry, and the statuses as documented.
unique_keys() {
	local out again rc t0=$(ms) lk uf
	say "unique: --unique from three hosts in each mode, the primary's host killed midway"
	newdb || { notok "unique: a database"; return; }
	standby_make || { notok "unique: a synchronous standby by pg_basebackup"; return; }
	: > "$tmp/usubs"
	uround 1 2
	for p in $upids; do wait "$p"; done
	check "unique: before the failover: one job per key, the statuses as documented" ukeys_ok p
	"$pgbin/psql" -X -q "host=$tmp/sock-p port=5432 user=postgres dbname=$db" \
		-c "BEGIN; LOCK TABLE chute.unique_keys IN SHARE MODE; SELECT pg_sleep(60)" >/dev/null 2>&1 &
	lk=$!; started="$started $lk"
	until_ok 10000 eval '[ "$(psqlx p "$db" "SELECT count(*) FROM pg_locks WHERE granted AND mode = '\''ShareLock'\'' AND relation = '\''chute.unique_keys'\''::regclass")" = 1 ]'
	uround 3 4
	( out=$(echo "w1 uf" | inns w1 "$chute" submit "$U2&connect_timeout=2&application_name=inflight" \
		--unique uf 2>"$tmp/uinflight.err")
	  echo "$? $out" > "$tmp/uinflight" ) &
	uf=$!; started="$started $uf"
	check "unique: a submit waits for the key's lock when the primary dies" until_ok 10000 eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = '\''Lock'\'' AND application_name = '\''inflight'\''")" = 1 ]'
	host_dies p
	say "unique: primary killed after $(wc -l < "$tmp/usubs") tries"
	check "unique: the standby is promoted" promote s
	for p in $upids; do wait "$p"; done
	wait "$uf" 2>/dev/null
	check "unique: the submit in flight at the crash exits 75 and prints nothing" \
		eval '[ "$(cat "$tmp/uinflight")" = "75 " ]'
	say "unique: it said: $(cat "$tmp/uinflight.err")"
	check "unique: ... and its key is free on the new primary (nothing was committed)" \
		eval '[ "$(psqlx s "$db" "SELECT count(*) FROM chute.payloads WHERE unique_key = '\''uf'\''")" = 0 ]'
	out=$(echo "w1 uf" | inns w1 "$chute" submit "$U2&connect_timeout=2" --unique uf 2>>"$tmp/usub.err")
	rc=$?
	check "unique: tried again, it makes the key's job (exit 0, its ID)" eval \
		'[ $rc = 0 ] && [ "$out" = "$(psqlx s "$db" "SELECT id FROM chute.payloads WHERE unique_key = '\''uf'\''")" ]'
	again=$(echo "w1 uf" | inns w1 "$chute" submit "$U2&connect_timeout=2" --unique uf 2>>"$tmp/usub.err")
	rc=$?
	check "unique: tried once more, refused (exit 3) naming that job: no second one" eval \
		'[ $rc = 3 ] && [ "$again" = "$out" ]'
	say "unique: $(awk '$4 == 75' "$tmp/usubs" | wc -l) tries exited 75 at the failover and were tried again"
	check "unique: after the failover: one job per key, the statuses as documented, every ID printed the key's job" ukeys_ok s
	check "unique: exactly one job for each of the 13 keys, and no other job" eval \
		'[ "$(psqlx s "$db" "SELECT count(DISTINCT unique_key) || '\'' '\'' || count(*) || '\'' '\'' || (SELECT count(*) FROM chute.jobs) FROM chute.payloads WHERE unique_key IS NOT NULL")" = "13 13 13" ]'
	check "unique: a replaced job holds one of its submitters' inputs" eval \
		'[ "$(psqlx s "$db" "SELECT count(*) FROM chute.payloads WHERE unique_key LIKE '\''u-replace-%'\'' AND convert_from(body, '\''UTF8'\'') ~ ('\''^w[123] '\'' || unique_key || '\''\n$'\'')")" = 4 ]'
	[ "$fail" = 0 ] || { show "$tmp/usubs"; show "$tmp/usub.err"; }
	say "unique: $(wc -l < "$tmp/usubs") tries, $(( ($(ms) - t0) / 1000 )) s"
	kill "$lk" 2>/dev/null; wait "$lk" 2>/dev/null
	pair_fresh || notok "unique: a new primary after it"
}

# ---- clocks ----

# Workers whose wall clocks are 5 hours behind and ahead (libfaketime;
# their monotonic clocks untouched), each running a job for three leases,
# with an honest worker idle beside them that would recover any lease
# that ran out.  Leases follow the server's now(): each job runs once,
# renewed, and is recorded at the server's time.
clocks() {
	local lib
	say "clock: workers 5 h behind and 5 h ahead"
	lib=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -1)
	[ -n "$lib" ] || { echo "skip - clock: no libfaketime (apt-get install faketime)"; return; }
	newdb || { notok "clock: a database"; return; }
	[ "$(LD_PRELOAD=$lib FAKETIME=-5h FAKETIME_DONT_FAKE_MONOTONIC=1 date +%s)" -lt $(($(date +%s) - 4 * 3600)) ] ||
		{ notok "clock: faketime puts a clock 5 h behind"; return; }
	submit sub "$U" k1 slow >/dev/null
	submit sub "$U" k2 slow >/dev/null
	LD_PRELOAD=$lib FAKETIME=-5h FAKETIME_DONT_FAKE_MONOTONIC=1 worker A w1 "$U" --prefetch 0
	until_ok 20000 eval 'started_run k1 1 A || started_run k2 1 A'
	LD_PRELOAD=$lib FAKETIME=+5h FAKETIME_DONT_FAKE_MONOTONIC=1 worker B w2 "$U" --prefetch 0
	until_ok 20000 eval 'grep -c "^start k. 1 [AB] " "$tmp/journal" | grep -qx 2'
	worker C w3 "$U"
	say "clock: leases left, on the server's clock: $(psqlx p "$db" "SELECT string_agg(id || ' ' || (lease_until - now()), ', ' ORDER BY id) FROM chute.jobs WHERE state = 'cur'")"
	check "clock: the leases end within a lease of the server's now()" eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM chute.jobs WHERE state = '\''cur'\'' AND lease_until > now() AND lease_until <= now() + interval '\''$LEASE_MS ms'\''")" = 2 ]'
	check "clock: both jobs end done, first attempt" until_ok 30000 eval \
		'is_state k1 "done attempts=1" && is_state k2 "done attempts=1"'
	check "clock: each ran once: the honest worker recovered nothing" eval \
		'[ "$(grep -c "^start" "$tmp/journal")" = 2 ] && ! logs C recovered'
	check "clock: recorded at the server's time, not the workers'" eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM chute.jobs WHERE abs(extract(epoch FROM run_at - now())) < 600")" = 2 ]'
	check "clock: never two runs at once" no_concurrent
	stop "$A"; stop "$B"; stop "$C"
}

# ---- recurring jobs ----

# ticker K: `chute tick U --follow` on host wK, in the background, its pid
# in $TK (K 2: a wall clock 5 h behind; K 3: 5 h ahead, when libfaketime
# is there: the server's clock is the one that counts).
ticker() {
	local k=$1 pre=""
	[ -n "$ftlib" ] && [ "$k" != 1 ] &&
		pre="LD_PRELOAD=$ftlib FAKETIME=$([ "$k" = 2 ] && echo -5h || echo +5h) FAKETIME_DONT_FAKE_MONOTONIC=1"
	env $pre nsenter --net="/run/netns/$(ns w$k)" -- "$chute" tick "$U" --follow \
		>/dev/null 2>>"$tmp/tick$k.log" &
	eval "TK$k=$!"
	started="$started $!"
}
tick_jobs() { psqlx p "$db" "SELECT count(*) FROM chute.jobs"; }

# Three schedulers on three hosts, a 200 ms schedule (catch-up all), one
# killed -9 at random after every two ticks and started again, one cut off
# from the server (both ways) for four ticks of the others midway: through
# more than 60 ticks, every tick from the first to the last has exactly one
# job and one row in chute.ticks.  A scheduler cut off holding the
# schedules' locks holds them until the server ends its idle transaction
# (10 s): the others wait, say so (75) and make the ticks after.
ticks() {
	local seen=0 n=0 k cutk=0 seed=${NETNS_SEED:-$$}
	RANDOM=$seed
	ftlib=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -1)
	say "ticks: three schedulers on three hosts, seed $seed${ftlib:+, two of them with clocks 5 h off}"
	newdb || { notok "ticks: a database"; return; }
	inns sub "$chute" schedule "$U" hb --every 200ms --catch-up all -- quick \
		>/dev/null 2>"$tmp/sched.err" || { notok "ticks: declared"; show "$tmp/sched.err"; return; }
	: > "$tmp/tick1.log"; : > "$tmp/tick2.log"; : > "$tmp/tick3.log"
	ticker 1; ticker 2; ticker 3
	while [ "$seen" -le 62 ]; do
		until_ok 30000 eval '[ "$(tick_jobs)" -ge $((seen + 2)) ]' ||
			{ notok "ticks: two more ticks after $seen"; break; }
		seen=$(tick_jobs); n=$((n + 1)); k=$((RANDOM % 3 + 1))
		if [ $n = 8 ]; then
			cutk=$k
			say "ticks: w$k cut off at $seen ticks"
			cut w$k both
			until_ok 30000 eval '[ "$(tick_jobs)" -ge $((seen + 4)) ]' ||
				notok "ticks: the others go on while w$k is cut off"
			heal w$k
			continue
		fi
		eval "kill -9 \$TK$k; wait \$TK$k 2>/dev/null"
		ticker $k
	done
	for k in 1 2 3; do eval "kill -9 \$TK$k; wait \$TK$k 2>/dev/null"; done
	say "ticks: $(tick_jobs) jobs, $n rounds, w$cutk cut off once"
	check "ticks: more than 60 ticks made" eval '[ "$(tick_jobs)" -gt 60 ]'
	check "ticks: every tick from the first to the last, once" eval \
		'[ "$(psqlx p "$db" "SELECT count(*) = count(DISTINCT tick_ms) AND count(*) = (max(tick_ms) - min(tick_ms)) / 200 + 1 FROM chute.ticks")" = t ]'
	check "ticks: a job for each tick, and no other" eval \
		'[ "$(psqlx p "$db" "SELECT (SELECT count(*) FROM chute.jobs) = (SELECT count(*) FROM chute.ticks k JOIN chute.jobs j ON j.id = k.id)")" = t ]'
	check "ticks: no scheduler found a tick made twice" eval \
		'! grep -q -e "duplicate key" -e "not made again" "$tmp"/tick?.log'
	[ "$fail" = 0 ] || { show "$tmp/tick1.log"; show "$tmp/tick2.log"; show "$tmp/tick3.log"; }
}

# ---- torture ----

# round_done R SERVER: every job of round R whose ID submit printed is done.
round_done() {
	local ids
	ids=$(awk -v r="t$1-" '$2 == 0 && index($1, r) == 1 { printf "%s'\''%s'\''", n++ ? "," : "", $1 }' "$tmp/submits")
	[ -z "$ids" ] && return 0
	[ "$(psqlx "$2" "$db" "SELECT count(*) FROM chute.jobs WHERE id IN ($ids) AND state <> 'done'")" = 0 ]
}

# torture ROUNDS: three workers (-j 2, 2 s lease, each with its own
# application_name), a submitter and random events, one a round, while
# jobs come in: a worker cut off both ways, one way or by its link, for a
# third of a lease or one and a half; or the primary's host killed and the
# standby promoted, the dead host then coming back as the new primary's
# standby (at least one failover a run).  Then everything healed, a drain, and the
# invariants: every submit printed its ID or exited 75 with nothing; every
# printed ID done (or failed) exactly once; from the audit, no token given
# twice, every outcome recorded by the session holding the claim, every
# recovery of a lease that had run out; from the journal, never two runs
# at once.  RANDOM's seed is printed, and NETNS_SEED sets it.
torture() {
	local rounds=$1 r ev w d i out rc cur=p ncut=0 nfail=0 t0=$(ms)
	local seed=${NETNS_SEED:-$$}
	RANDOM=$seed
	say "torture: $rounds rounds, seed $seed (NETNS_SEED=$seed to replay)"
	newdb || { notok "torture: a database"; return; }
	audit_install || { notok "torture: the audit trigger"; return; }
	standby_make || { notok "torture: a synchronous standby"; return; }
	for w in 1 2 3; do
		worker T$w w$w "$U2&application_name=tw$w" -j 2 --max-attempts 5
	done
	: > "$tmp/submits"
	for r in $(seq 1 "$rounds"); do
		# This round's jobs, submitted while its event happens.
		( for i in 1 2 3 4 5 6; do
			out=$(echo nap | inns sub "$chute" submit "$U2&connect_timeout=2" --id "t$r-$i" 2>>"$tmp/submit.err")
			echo "t$r-$i $? $out" >> "$tmp/submits"
		  done ) &
		started="$started $!"
		ev=$((RANDOM % 5)); w=w$((RANDOM % 3 + 1))
		[ $r -eq "$rounds" ] && [ $nfail -eq 0 ] && ev=4	# a failover in every run
		if [ $ev -lt 4 ]; then
			local modes=(both in out link) lens=($((LEASE_MS / 3)) $((LEASE_MS * 3 / 2)))
			d=${lens[$((RANDOM % 2))]}
			say "torture: round $r: $w cut (${modes[$ev]}) for $d ms"
			cut $w "${modes[$ev]}"
			sleep "$(awk "BEGIN { print $d / 1000 }")"	# the cut's length
			heal $w
			ncut=$((ncut + 1))
		else
			local was=$cur
			[ "$cur" = p ] && cur=s || cur=p
			say "torture: round $r: the primary's host ($(addr $was)) killed, the standby promoted"
			host_dies $was && promote $cur || notok "torture: round $r: the standby is promoted"
			nfail=$((nfail + 1))
			# With the old primary's host still dead, the workers must
			# reach the new one by themselves and run this round's jobs.
			wait $! 2>/dev/null
			until_ok 30000 round_done $r $cur ||
				notok "torture: round $r: the workers run the jobs submitted after the failover"
			# The dead host comes back, as the new primary's standby.
			inns srv nft delete table inet chute_dead
			standby_of $cur $was || notok "torture: round $r: a new standby of the new primary"
		fi
		wait $!	2>/dev/null # the round's submits (each bounded by its timeouts)
	done
	check "torture: every submit printed its ID or exited 75 and printed nothing" eval \
		'! awk '\''!(($2 == 0 && $3 == $1) || ($2 == 75 && NF == 2))'\'' "$tmp/submits" | grep -q .'
	check "torture: the drain: nothing left in new, cur or defer" until_ok 90000 eval \
		'[ "$(psqlx $cur "$db" "SELECT count(*) FROM chute.jobs WHERE state IN ('\''new'\'', '\''cur'\'', '\''defer'\'')")" = 0 ]'
	for w in 1 2 3; do eval "stop \$T$w"; done
	check "torture: every printed ID is there, done" eval \
		'for i in $(awk '\''$2 == 0 { print $1 }'\'' "$tmp/submits"); do is_state_any $i done $cur || exit 1; done'
	check "torture: never two runs of a job at once" no_concurrent
	check "torture: no fencing token given twice" eval \
		'[ -z "$(psqlx $cur "$db" "SELECT new_token FROM audit WHERE new_state = '\''cur'\'' AND old_state <> '\''cur'\'' GROUP BY new_token HAVING count(*) > 1")" ]'
	check "torture: each job finished once" eval \
		'[ -z "$(psqlx $cur "$db" "SELECT id FROM audit WHERE new_state IN ('\''done'\'', '\''failed'\'') GROUP BY id HAVING count(*) > 1")" ]'
	# An outcome (cur -> done) is the claim holder's: the session that
	# made the claim with that token.
	check "torture: every outcome was recorded by the worker holding the claim" eval \
		'[ "$(psqlx $cur "$db" "SELECT count(*) FROM audit o WHERE o.old_state = '\''cur'\'' AND o.new_state = '\''done'\''
		    AND NOT EXISTS (SELECT 1 FROM audit c WHERE c.new_token = o.old_token AND c.old_state <> '\''cur'\''
		    AND c.new_state = '\''cur'\'' AND c.app = o.app)")" = 0 ]'
	# A claim ended by anyone but its holder is a recovery.
	check "torture: every recovery was of a lease that had run out" eval \
		'[ "$(psqlx $cur "$db" "SELECT count(*) FROM audit o WHERE o.old_state = '\''cur'\''
		    AND o.new_state IN ('\''new'\'', '\''failed'\'') AND NOT o.expired
		    AND NOT EXISTS (SELECT 1 FROM audit c WHERE c.new_token = o.old_token AND c.old_state <> '\''cur'\''
		    AND c.new_state = '\''cur'\'' AND c.app = o.app)")" = 0 ]'
	say "torture: $rounds rounds, $ncut cuts, $nfail failover, $(wc -l < "$tmp/submits") submits ($(awk '$2 == 75' "$tmp/submits" | wc -l) exited 75), $(grep -c '^start' "$tmp/journal") runs, $(psqlx $cur "$db" "SELECT count(*) FROM audit WHERE new_state = 'cur' AND old_state <> 'cur'") claims, $(psqlx $cur "$db" "SELECT count(*) FROM audit WHERE old_state = 'cur' AND new_state = 'new'") recoveries, $(( ($(ms) - t0) / 1000 )) s"
	pair_fresh || notok "torture: a new primary after it"
}

# A key at 2 (issue 36): worker A runs its two jobs, held, and is cut off;
# worker B starts no job of the key until A's handlers are gone (A stops
# them at 5/6 of its lease, its reaper at 11/12) and the lease has run
# out; then it runs every job of the key, never more than 2 at once.
keylimit() {
	local k
	say "keylimit: a key's limit of 2 across a partition"
	newdb || { notok "keylimit: a database"; return; }
	inns sub "$chute" limit "$U" --key A --max 2 >/dev/null 2>>"$tmp/submit.err"
	for k in 1 2 3 4 5 6; do
		echo "keyed 2 $([ $k -le 2 ] && echo hold || echo quick)" |
		    inns sub "$chute" submit "$U" --id "A-$k" --key A >/dev/null 2>>"$tmp/submit.err"
	done
	check "keylimit: the key's six jobs and its rule are in" eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM chute.jobs WHERE key = '\''A'\''")" = 6 ]'
	worker A w1 "$U" -j 4
	check "keylimit: worker A runs A-1 and A-2" \
		until_ok 20000 eval 'started_run A-1 1 A && started_run A-2 1 A'
	worker B w2 "$U" -j 4
	until_ok 10000 workers_up 2
	cut w1 both
	check "keylimit: B runs every job of the key" until_ok 40000 eval \
		'[ "$(psqlx p "$db" "SELECT count(*) FROM chute.jobs WHERE key = '\''A'\'' AND state = '\''done'\''")" = 6 ]'
	check "keylimit: never more than 2 of the key at once" eval '! grep -q "^OVER" "$tmp/journal"'
	check "keylimit: 2 at once, reached" grep -q "^slot A 2 " "$tmp/journal"
	check "keylimit: A-1 and A-2 ran again after the lease" eval \
		'started_run A-1 2 B && started_run A-2 2 B'
	heal w1
	stop "$B"; stop "$A"
}

all="partition-both partition-in partition-out partition-link keylimit blip submit forward standby demote failover unique async clock ticks torture"
for s in ${@:-$all}; do
	case $s in
	partition-*) partition "${s#partition-}" ;;
	keylimit) keylimit ;;
	blip) blip both; blip link ;;
	submit) submit_cut ;;
	forward) forward_cut ;;
	standby) standby_first ;;
	demote) demote ;;
	failover) failover ;;
	unique) unique_keys ;;
	async) async_token ;;
	clock) clocks ;;
	ticks) ticks ;;
	torture) torture 3 ;;
	torture=*) torture "${s#torture=}" ;;
	*) echo "tests/netns.sh: no scenario $s" >&2; exit 64 ;;
	esac
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
