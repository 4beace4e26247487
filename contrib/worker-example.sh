#!/bin/sh
# worker-example.sh: a persistent worker for `chute run --persistent`.
# chute writes one job per line on stdin, "ID<TAB>PATH"; answer each with
# one line on stdout: "ok", "retry REASON" or "fail REASON".  Anything
# else you print goes to stderr, never stdout.  Exit when stdin ends.
tab=$(printf '\t')
while IFS="$tab" read -r id path; do
	if [ ! -r "$path" ]; then
		echo "fail cannot read $path"
		continue
	fi
	bytes=$(wc -c < "$path")
	echo "worker $$: job $id, $bytes bytes" >&2
	echo ok
done
