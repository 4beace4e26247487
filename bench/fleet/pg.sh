#!/usr/bin/env bash
# bench/fleet/pg.sh: a throwaway PostgreSQL cluster for the fleet benchmark.
#
#   pg.sh start DIR          initdb in DIR (created, must not exist) and start the
#                            server on a Unix socket in DIR only; prints the URI
#   pg.sh createdb DIR NAME  (re)create database NAME; prints its URI
#   pg.sh uri DIR [NAME]     prints the URI of NAME (default postgres)
#   pg.sh stop DIR           stop the server (fast, then immediate) and remove DIR
#
# Also a library: `source pg.sh` defines pg_start, pg_createdb, pg_uri, pg_stop
# with the same arguments.
#
# The server runs as the `postgres` user (initdb refuses root), listens on no
# TCP address (listen_addresses = ''), and trusts local connections: the socket
# is in a directory only postgres and root can enter. Settings are the stock
# defaults (fsync on, synchronous_commit on, shared_buffers 128MB) except what
# a benchmark needs to be quiet and bounded. PG_MAX_CONNECTIONS (default 100, the
# stock value) raises max_connections: the pressure runs (pressure.sh) hold 300
# idle connections beside the systems' own. PG_CPUS (a taskset(1) CPU list, e.g. 0)
# starts the server under `taskset -c PG_CPUS`: the postmaster and every backend
# and auxiliary process it forks inherit that affinity (run.sh's BENCH_FLEET_PIN=1).

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=${PG_USER:-postgres}
PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-100}
PG_CPUS=${PG_CPUS:-}

_pg_as() { runuser -u "$PG_USER" -- "$@"; }

# URI with the socket directory percent-encoded as host: libpq, node-postgres
# (pg-connection-string) and pgbench all accept this form.
pg_uri() {
	local dir=$1 db=${2:-postgres} enc
	enc=$(printf '%s' "$dir/sock" | sed 's,%,%25,g; s,/,%2F,g')
	printf 'postgresql://%s@%s/%s\n' "$PG_USER" "$enc" "$db"
}

pg_start() {
	local dir=$1
	[[ -n $dir && ! -e $dir/data ]] || { echo "pg.sh: $dir/data exists or no DIR given" >&2; return 64; }
	mkdir -p "$dir/sock" "$dir/data" || return 1
	chown "$PG_USER:" "$dir" "$dir/sock" "$dir/data"
	chmod 700 "$dir" "$dir/sock" "$dir/data"
	_pg_as "$PG_BIN/initdb" -D "$dir/data" -U "$PG_USER" --auth=trust \
		--encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<-CONF
		# bench/fleet/pg.sh: Unix socket only, otherwise stock settings.
		listen_addresses = ''
		unix_socket_directories = '$dir/sock'
		shared_buffers = 128MB
		fsync = on
		synchronous_commit = on
		max_connections = $PG_MAX_CONNECTIONS
		logging_collector = off
		log_min_messages = warning
		log_checkpoints = off
	CONF
	# -w -t: wait for the server to accept connections, at most 60 s. With PG_CPUS
	# the postmaster (and so every process it forks) is pinned to those CPUs.
	local pin=()
	[[ -z $PG_CPUS ]] || pin=(taskset -c "$PG_CPUS")
	"${pin[@]}" runuser -u "$PG_USER" -- "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
		{ tail -20 "$dir/server.log" >&2; return 1; }
	pg_uri "$dir"
}

pg_createdb() {
	local dir=$1 db=$2
	PGOPTIONS="-c client_min_messages=warning" _pg_as "$PG_BIN/psql" -h "$dir/sock" -U "$PG_USER" -d postgres -qAt -v ON_ERROR_STOP=1 \
		-c "DROP DATABASE IF EXISTS \"$db\"" -c "CREATE DATABASE \"$db\"" >/dev/null || return 1
	pg_uri "$dir" "$db"
}

pg_stop() {
	local dir=$1
	[[ -n $dir && -d $dir ]] || return 0
	if [[ -f $dir/data/postmaster.pid ]]; then
		_pg_as "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
			_pg_as "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1
	fi
	rm -rf -- "$dir"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	cmd=${1:-}; shift || true
	case $cmd in
	start) pg_start "$@" ;;
	createdb) pg_createdb "$@" ;;
	uri) pg_uri "$@" ;;
	stop) pg_stop "$@" ;;
	*) echo "usage: pg.sh start|createdb|uri|stop DIR [NAME]" >&2; exit 64 ;;
	esac
fi
