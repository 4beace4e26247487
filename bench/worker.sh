#!/bin/sh
# worker.sh: the shell persistent worker for `chute run --persistent`:
# for each "ID PATH" line on stdin, answer "ok".
while read -r id path; do
	echo ok
done
