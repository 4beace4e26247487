#!/bin/sh
# chute-metrics.sh [SPOOL...]: `chute stats SPOOL --prometheus` of each
# spool (none given: every spool under /var/spool/chute) into
# $CHUTE_METRICS_DIR/chute-NAME.prom, NAME being the spool's last path
# component, for node_exporter's textfile collector.  Run it every minute
# (chute-metrics.timer, or cron); install it as
# /usr/local/libexec/chute/chute-metrics.
#
# Each file is written under a temporary name in the same directory (which
# node_exporter skips: it reads only *.prom) and renamed over the old one,
# so node_exporter never reads half a file.  A spool that cannot be read
# keeps its old file, whose chute_stats_timestamp_seconds then stops
# moving: alert on  time() - chute_stats_timestamp_seconds > 300.
#
# Environment: CHUTE_METRICS_DIR (default /var/lib/prometheus/node-exporter,
# the directory Debian's prometheus-node-exporter reads), CHUTE (default
# chute).  Exit status: 0, or that of the last stats or write that failed.
set -u
dir=${CHUTE_METRICS_DIR:-/var/lib/prometheus/node-exporter}
chute=${CHUTE:-chute}
rc=0

# Every directory of /var/spool/chute that has a new/ is a spool; one
# named on the command line is taken as given, and chute says if it is not.
if [ $# -eq 0 ]; then
	for s in /var/spool/chute/*/; do
		[ -d "$s/new" ] && set -- "$@" "${s%/}"
	done
fi

for spool in "$@"; do
	name=$(basename "$spool")
	if ! tmp=$(mktemp "$dir/.chute-$name.XXXXXX"); then
		rc=73
		continue
	fi
	"$chute" stats "$spool" --prometheus >"$tmp" &&
	    chmod 0644 "$tmp" && mv -f "$tmp" "$dir/chute-$name.prom"
	st=$?
	if [ $st -ne 0 ]; then
		rm -f "$tmp"
		rc=$st
	fi
done
exit $rc
