#!/bin/bash
# Request ids and access logs: every response carries X-Request-Id; a sane id sent by the
# client (1-64 of [A-Za-z0-9-_.:]) is reused, anything else is replaced by 16 random hex
# digits; the JSON access log (--access-log-format json) has one JSON object per line with
# request_id equal to the header; the text format ends with rid=ID; a log moved away is
# reopened on SIGHUP (logrotate).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 10000
pack "$R/a.zt" w=u8:10000:"$T/w.raw"
LOG=$T/access.log

start_daemon "$R" --access-log "$LOG" --access-log-format json || finish

HEX16='^[0-9a-f]{16}$'
IDS=() # "path id" pairs to find in the log
# rid NAME PATH [CURL ARGS...]: a request; sets RID to the response's X-Request-Id.
rid() {
    local name=$1 path=$2
    shift 2
    http "$T/q" "$@" "$URL$path"
    RID=$(hdr "$T/q.hdr" X-Request-Id)
    IDS+=("$path $RID")
}

rid "no id" /v1/files/n1.zt
check_match "no client id: X-Request-Id is 16 hex digits" "$RID" "$HEX16"
A=$RID
rid "no id again" /v1/files/n2.zt
check_match "second request: 16 hex digits" "$RID" "$HEX16"
check_ne "two requests get different ids" "$RID" "$A"

rid "client id" /v1/files/c1.zt -H 'X-Request-Id: abc-DEF_123.x:y'
check_eq "a client id is echoed" "$RID" 'abc-DEF_123.x:y'
ID64=$(head -c 200 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 64)
rid "64 chars" /v1/files/c2.zt -H "X-Request-Id: $ID64"
check_eq "a 64-character id is echoed" "$RID" "$ID64"

hostile() { # NAME PATH VALUE
    rid "$1" "$2" -H "X-Request-Id: $3"
    check_match "$1: replaced by a generated id" "$RID" "$HEX16"
    check_ne "$1: not echoed" "$RID" "$3"
}
hostile "65 chars" /v1/files/h1.zt "${ID64}x"
LONG=$(printf 'a%.0s' $(seq 1 200))
hostile "200 chars" /v1/files/h2.zt "$LONG"
hostile "spaces" /v1/files/h3.zt "has some spaces"
hostile "quote and braces" /v1/files/h4.zt 'x"},{"status":999'
hostile "non-ASCII" /v1/files/h5.zt "caf$(printf '\xc3\xa9')"
hostile "slash and percent" /v1/files/h6.zt 'a/b%0d%0aSet-Cookie:x'
rid "empty id" /v1/files/h7.zt -H 'X-Request-Id;'
check_match "an empty id is replaced" "$RID" "$HEX16"

# every kind of response carries it
rid "component" /v1/files/a.zt/objects/w/data
check_eq "component: 200" "$CODE" 200
check_match "200 response has X-Request-Id" "$RID" "$HEX16"
rid "range" /v1/files/a.zt/objects/w/data -r 0-99
check_eq "range: 206" "$CODE" 206
check_match "206 response has X-Request-Id" "$RID" "$HEX16"
rid "method" /healthz -X POST
check_eq "POST /healthz: 405" "$CODE" 405
check_match "405 response has X-Request-Id" "$RID" "$HEX16"
rid "unknown route" /nope
check_match "404 response has X-Request-Id" "$RID" "$HEX16"
rid "metrics" /metrics
check_match "/metrics has X-Request-Id" "$RID" "$HEX16"

# two requests on one keep-alive connection: one id each
curl -s -D "$T/ka.hdr" -o /dev/null -o /dev/null "$URL/healthz" "$URL/readyz"
kaids=$(tr -d '\r' <"$T/ka.hdr" | awk 'tolower($1) == "x-request-id:" { print $2 }' | sort -u | wc -l)
check_eq "keep-alive: two requests, two distinct ids" "$kaids" 2

# ---- the JSON access log
expected=$((${#IDS[@]} + 2))
for i in $(seq 1 50); do
    [ "$(wc -l <"$LOG")" -ge "$expected" ] && break
    sleep 0.1
done
check_ge "access log has a line per request" "$(wc -l <"$LOG")" "$expected"
printf '%s\n' "${IDS[@]}" >"$T/ids.txt"
why=$($PY - "$LOG" "$T/ids.txt" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
want = [l.split(" ", 1) for l in open(sys.argv[2]).read().splitlines()]
errs = []
by_path = {}
for n, l in enumerate(lines, 1):
    try:
        o = json.loads(l)
    except ValueError as e:
        errs.append("line %d is not JSON: %s" % (n, e))
        continue
    if not isinstance(o, dict):
        errs.append("line %d is not an object" % n)
        continue
    for k in ("time", "client", "method", "path", "protocol", "status", "bytes",
              "duration_ms", "request_id"):
        if k not in o:
            errs.append("line %d lacks %s" % (n, k))
    by_path.setdefault(o.get("path"), []).append(o.get("request_id"))
for path, rid in want:
    if rid not in by_path.get(path, []):
        errs.append("no line for %s with request_id %s (have %s)" % (path, rid, by_path.get(path)))
print("; ".join(errs[:5]))
EOF
)
check_eq "every line is a JSON object with the fields; request_id = X-Request-Id" "$why" ""
check_nomatch "a replaced hostile id is not in the log" "$(cat "$LOG")" "$LONG|has some spaces|status\":999"
check_eq "access log lines are single lines (no raw newline in a field)" \
    "$(grep -vc '^{.*}$' "$LOG")" 0

# ---- SIGHUP reopens the log (logrotate: move, then HUP)
mv "$LOG" "$LOG.1"
kill -HUP "$D_PID"
for i in $(seq 1 50); do
    [ -e "$LOG" ] && break
    sleep 0.1
done
check "SIGHUP: the access log is created again" test -e "$LOG"
rid "after HUP" /v1/files/after-hup.zt -H 'X-Request-Id: after-hup-1'
for i in $(seq 1 50); do
    grep -q after-hup-1 "$LOG" 2>/dev/null && break
    sleep 0.1
done
check_match "SIGHUP: new lines go to the new file" "$(cat "$LOG" 2>/dev/null)" '"request_id":"after-hup-1"'
check_nomatch "SIGHUP: the moved file gets no new line" "$(cat "$LOG.1")" 'after-hup-1'
stop_daemon

# ---- the text format carries the id too
LOG2=$T/access-text.log
start_daemon "$R" --access-log "$LOG2" --access-log-format text || finish
rid "text format" /v1/files/a.zt/objects/w/data -H 'X-Request-Id: text-id-42'
for i in $(seq 1 50); do
    grep -q text-id-42 "$LOG2" && break
    sleep 0.1
done
check_match "text format: the line ends with rid=ID" "$(grep text-id-42 "$LOG2")" \
    '^127\.0\.0\.1 - - \[[^]]+\] "GET /v1/files/a\.zt/objects/w/data HTTP/1\.1" 200 10000 [0-9.]+ rid=text-id-42$'
finish
