#!/bin/bash
# The S3 front against moto_server, the reference S3 (docs/S3.md): the same
# requests, good and bad, to both (moto_diff.py), reads and writes;
# statuses, S3 error codes, keys, common prefixes and pagination must agree. The deliberate
# differences are listed in docs/S3.md and not sent.
. "$(dirname "$0")/lib.sh" "$@"
need_s3py
command -v moto_server >/dev/null || { bad "moto_server on PATH" "the python3 on PATH has moto"; finish; }

ROOT=$T/root
make_tree "$ROOT"
start_daemon "$ROOT" --allow-anonymous-writes || finish
MPORT=$(free_port)
moto_server -H 127.0.0.1 -p "$MPORT" >"$T/moto.log" 2>&1 &
MOTO_PID=$!
at_exit "kill $MOTO_PID 2>/dev/null; wait $MOTO_PID 2>/dev/null"
for i in $(seq 1 150); do
    curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$MPORT/" && break
    sleep 0.2
done
s3py_checks moto_diff "$URL" "http://127.0.0.1:$MPORT" "$ROOT"
finish
