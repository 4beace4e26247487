#!/usr/bin/env bash
# bench/fleet/forward.sh: `chute forward` against the database's own limit
# (issue 10), one measurement per call, in a database made by `chute init`:
#
#   forward.sh chute URI N BATCH SIZE   N jobs of SIZE bytes dropped into a
#                                       fresh spool beforehand, then timed:
#                                       chute forward SPOOL URI --drain --batch BATCH
#   forward.sh raw URI N BATCH SIZE     fwdraw: the same INSERT statement, BATCH
#                                       jobs each, payloads from memory, no spool
#
# Prints "JOBS SECONDS JOBS_PER_S - - notes" (run.sh's chute.sh line; notes:
# batch, size, cpu_client_us: user+sys of forward or fwdraw per job); fails
# unless the database then holds exactly N jobs with N payloads of SIZE bytes.
# Needs CHUTE (a chute with chute-pgsql next to it) and FLEET_BIN (fwdraw);
# works in FLEET_WORK (default: a temporary directory).
set -euo pipefail
mode=$1 uri=$2 n=$3 batch=$4 size=$5
work=${FLEET_WORK:-$(mktemp -d)}
TIMEFORMAT='%3U %3S'	# bash's time: the client's user and system seconds
now() { date +%s.%N; }
psql_1() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$uri" -c "$1"; }

"$CHUTE" init "$uri" >/dev/null
case $mode in
chute)
	spool=$work/spool
	"$CHUTE" init "$spool" >/dev/null
	# The jobs arrive as mv delivers them: written in tmp/, renamed into new/.
	python3 - "$spool" "$n" "$size" <<'PY'
import os, sys
spool, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = b"x" * size
for i in range(n):
    name = "f%09d" % i
    with open(os.path.join(spool, "tmp", name), "wb") as f:
        f.write(body)
    os.rename(os.path.join(spool, "tmp", name), os.path.join(spool, "new", name))
PY
	sync
	t0=$(now)
	{ time "$CHUTE" forward "$spool" "$uri" --drain --batch "$batch" 2>"$work/forward.log"; } 2>"$work/cpu"
	t1=$(now)
	left=$(find "$spool/new" "$spool/cur" "$spool/failed" -type f | wc -l)
	[[ $left == 0 ]] || { echo "forward.sh: $left jobs left in the spool" >&2; exit 1; }
	;;
raw)
	t0=$(now)
	{ time "$FLEET_BIN/fwdraw" "$uri" "$n" "$batch" "$size" >/dev/null; } 2>"$work/cpu"
	t1=$(now)
	;;
*) echo "usage: forward.sh chute|raw URI N BATCH SIZE" >&2; exit 64 ;;
esac
got=$(psql_1 "SELECT count(*) FROM chute.jobs j JOIN chute.payloads p USING (queue, id) WHERE length(p.body) = $size")
[[ $got == "$n" ]] || { echo "forward.sh: $got of $n jobs in the database" >&2; exit 1; }
read -r cpu_u cpu_s <"$work/cpu"
awk -v n="$n" -v a="$t0" -v b="$t1" -v batch="$batch" -v size="$size" -v u="$cpu_u" -v y="$cpu_s" \
	'BEGIN { s = b - a; printf "%d %.3f %.0f - - batch=%d,size=%d,cpu_client_us=%.0f\n",
		n, s, n / s, batch, size, 1e6 * (u + y) / n }'
