#!/usr/bin/env bash
# zt pull --json (issue 26 section 3), against ztensord on 127.0.0.1 through
# relay.py: JSON Lines on stdout, every line parsed by python's json:
#   - one "file" event per file with its outcome (pulled, then skipped on a
#     second run), the summary last;
#   - a failure: the file's event has its error {code, message, url}, and
#     the error also goes to stderr as text;
#   - SIGINT in the middle of a file: the event of that file (interrupted),
#     one for the file not started, then a summary saying interrupted; exit
#     status 130.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
rand "$T/w.raw" $((8 << 20))
pack "$root/big.zt" w=u8:$((8 << 20)):"$T/w.raw" || rfinish
echo '{"model_type": "test"}' >"$root/config.json"
start_daemon "$root" || rfinish

# events FILE: every line of FILE is a JSON object (else exit 1, naming
# it); prints "EVENT FILE OUTCOME ERRORCODE" a line, the file's last segment.
events() {
    $PY - "$1" <<'PY'
import json, os, sys
for n, ln in enumerate(open(sys.argv[1]).read().splitlines(), 1):
    try:
        e = json.loads(ln)
    except ValueError:
        sys.exit("line %d is not JSON: %r" % (n, ln))
    err = e.get("error")
    if err is not None and not (err.get("code") and err.get("message") and err.get("url")):
        sys.exit("line %d: an error without code, message or url: %r" % (n, ln))
    print(e["event"], os.path.basename(e.get("file", "-")), e.get("outcome", "-"),
          err["code"] if err else "-")
PY
}

note "a prefix: one event per file, the summary last"
"$ZT" pull --json "$URL/v1/files/" -o "$T/o" >"$T/p1.out" 2>"$T/p1.err"
check_eq "exit 0" "$?" 0
check "every line is JSON" events "$T/p1.out"
check_eq "one event per file, then the summary" "$(events "$T/p1.out" | sort)" \
    "$(printf 'file big.zt pulled -\nfile config.json pulled -\nsummary - - -')"
check_match "the summary is the last line" "$(tail -n 1 "$T/p1.out")" '^\{"event":"summary","interrupted":false,"files":2,"failed":0'
"$ZT" pull --json "$URL/v1/files/" -o "$T/o" >"$T/p2.out" 2>"$T/p2.err"
check_eq "a second run: both skipped" "$(events "$T/p2.out" | sort)" \
    "$(printf 'file big.zt skipped -\nfile config.json skipped -\nsummary - - -')"

note "a failure"
"$ZT" pull --json "$URL/v1/files/big.zt" "$URL/v1/files/nope.zt" -o "$T/o2" >"$T/p3.out" 2>"$T/p3.err"
check_eq "exit status 3" "$?" 3
check "every line is JSON" events "$T/p3.out"
check_eq "the events" "$(events "$T/p3.out" | sort)" \
    "$(printf 'file big.zt pulled -\nfile nope.zt failed ZT_E_NOT_FOUND\nsummary - - -')"
check_match "its error: code, message and the URL asked for" "$(grep nope.zt "$T/p3.out" |
    $PY -c 'import json,sys; e=json.load(sys.stdin)["error"]; print(e["code"], e["url"], e["message"])')" \
    '^ZT_E_NOT_FOUND http://127\.0\.0\.1:[0-9]+/v1/files/nope\.zt/raw .*no file "nope\.zt"'
check_match "the error on stderr as text" "$(cat "$T/p3.err")" '^zt pull: .*nope\.zt: ZT_E_NOT_FOUND'

note "SIGINT in the middle of a file"
# The 4th GET (the first range of big.zt, after the listing and the open's
# two) waits until $T/gate exists.
start_relay "$PORT" gate 3 "$T/gate" || rfinish
"$ZT" pull --json --jobs 1 --connections 1 --chunk-size 256K \
    "http://127.0.0.1:$RPORT/v1/files/" -o "$T/o3" >"$T/p4.out" 2>"$T/p4.err" &
pid=$!
for _ in $(seq 1 6000); do # up to 60 s for big.zt's pull to begin
    [ -e "$T/o3/big.zt.ztpull" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
done
kill -INT $pid 2>/dev/null
touch "$T/gate"
rc=
for _ in $(seq 1 3000); do # up to 30 s
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
done
kill -0 $pid 2>/dev/null && kill -9 $pid
wait $pid
rc=$?
check_eq "exit status 130" "$rc" 130
check "every line is JSON" events "$T/p4.out"
check_eq "the file interrupted, the other not started, the summary" "$(events "$T/p4.out" | cut -d' ' -f1-3)" \
    "$(printf 'file big.zt interrupted\nfile config.json not_started\nsummary - -')"
check_match "the summary says interrupted" "$(tail -n 1 "$T/p4.out")" '"interrupted":true'
check_match "stderr says it as text" "$(cat "$T/p4.err")" 'interrupted: 2 of 2 files not finished'
rfinish
