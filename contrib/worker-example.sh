#!/bin/sh
# worker-example.sh: a persistent worker for `chute run --persistent`.
# chute writes one job per line on stdin, "ID<TAB>PATH"; answer each with
# one line on stdout: "ok", "retry REASON" or "fail REASON".  Anything
# else you print goes to stderr, never stdout.  Exit when stdin ends.
#
# With `chute run --inline` (CHUTE_INLINE=1 here), each job comes as
# "ID<TAB>LENGTH" and then LENGTH bytes, its payload: read exactly that
# many before you answer, with `head -c "$len"` (GNU head reads no
# further), or `dd bs=65536 count="$len" iflag=count_bytes,fullblock
# status=none`; never with `cat`, which reads on into the next job.
tab=$(printf '\t')
if [ "${CHUTE_INLINE:-}" = 1 ]; then
	while IFS="$tab" read -r id len; do
		case $len in
		''|*[!0-9]*) exit 1 ;;	# not a frame: start again
		esac
		bytes=$(head -c "$len" | wc -c)
		[ "$bytes" -eq "$len" ] || exit 1	# stdin ended mid-job
		echo "worker $$: job $id, $bytes bytes" >&2
		echo ok
	done
	exit 0
fi
while IFS="$tab" read -r id path; do
	if [ ! -r "$path" ]; then
		echo "fail cannot read $path"
		continue
	fi
	bytes=$(wc -c < "$path")
	echo "worker $$: job $id, $bytes bytes" >&2
	echo ok
done
