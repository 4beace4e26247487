#!/bin/sh
# demo-handler.sh: a chute handler that reports what it was given and succeeds.
# stdin is the job file; what this prints lands in SPOOL/log/$CHUTE_ID.
#   chute run ./spool -- contrib/demo-handler.sh
set -eu

size='?'
if [ -f /dev/stdin ]; then			# the job file: stat it, don't read it
	size=$(stat -L -c %s /dev/stdin)
fi
first=$(head -n 1)

printf 'demo-handler: id=%s attempt=%s bytes=%s first line: %s\n' \
    "${CHUTE_ID:-?}" "${CHUTE_ATTEMPT:-?}" "$size" "$first"
exit 0
