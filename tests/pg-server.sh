# tests/pg-server.sh: sourced by the shell tests that need a PostgreSQL
# server of their own (completion.sh, top_pg.sh): initdb and pg_ctl as
# Debian's postgres user, in a directory of the test's, listening on a
# unix socket there and on no TCP address.  The caller sets $tmp (its
# scratch directory, which the server's user must be able to enter).
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
pgstop=:
# pg_can: can this test have a server?  Else pg_why says why not.
pg_can() {
	pg_why="need root, the postgres user and initdb (apt-get install postgresql)"
	[ "$(id -u)" = 0 ] && getent passwd postgres >/dev/null &&
	    [ -x "$pgbin/initdb" ]
}
pg_ctl() { runuser -u postgres -- "$pgbin/pg_ctl" -D "$tmp/pg/data" "$@"; }
# pg_start: make and start the server in $tmp/pg; pgurl is then the
# superuser's URI and pgstop the command that stops it (for a trap).
# 0, or 1 after one line on stdout saying why not.
pg_start() {
	chmod 0755 "$tmp" && mkdir "$tmp/pg" && chown postgres "$tmp/pg" ||
		return 1
	pgstop=pg_stop
	if ! runuser -u postgres -- "$pgbin/initdb" -D "$tmp/pg/data" -A trust \
	    -U postgres >"$tmp/pg/initdb.log" 2>&1 || ! pg_up; then
		echo "# the PostgreSQL server does not start: $(tail -3 \
		    "$tmp/pg/log" "$tmp/pg/initdb.log" 2>&1)"
		return 1
	fi
	pgurl=postgresql://postgres@$(printf '%s' "$tmp/pg" |
	    sed 's,/,%2F,g'):5432/postgres
}
# pg_up, pg_down: start it (waiting until it accepts connections), stop
# it as in a crash (its socket goes, so a connect fails at once).
pg_up() {
	pg_ctl -w -t 60 -l "$tmp/pg/log" -o "-k $tmp/pg -c listen_addresses= -p 5432" \
	    -s start >/dev/null
}
pg_down() { pg_ctl -m immediate -s stop; }
# pg_stop: for the caller's trap: the server stopped, if it runs.
pg_stop() { [ ! -e "$tmp/pg/data/postmaster.pid" ] || pg_down; }
# pg_sql SQL: run it as the superuser, its rows on stdout, unaligned.
pg_sql() {
	runuser -u postgres -- "$pgbin/psql" -X -A -t -q -v ON_ERROR_STOP=1 \
	    -h "$tmp/pg" -p 5432 -d postgres -c "$1"
}
