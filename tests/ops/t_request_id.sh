#!/bin/bash
# Request ids and access logs. request_id_header=echo (the default): a sane id sent by the
# client (1-64 of [A-Za-z0-9-_.:]) is echoed on its response, anything else is replaced by
# 16 random hex digits, which error responses (>= 400) carry and other responses do not; a
# manifest's 200 answer is then one response shared by every request (same bytes, same
# headers, the new version's once the file is replaced). request_id_header=always: every
# response carries an id. The JSON access log (--access-log-format json) has one JSON
# object per line with a request_id for every request, equal to the header where one was
# sent; the text format ends with rid=ID; a log moved away is reopened on SIGHUP.
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
    [ -z "$RID" ] || IDS+=("$path $RID")
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

# echo: errors carry a generated id, other answers only the client's
rid "component" /v1/files/a.zt/objects/w/data
check_eq "component: 200" "$CODE" 200
check_eq "echo: a 200 to a client without an id has no X-Request-Id" "$RID" ""
rid "range" /v1/files/a.zt/objects/w/data -r 0-99
check_eq "range: 206" "$CODE" 206
check_eq "echo: a 206 to a client without an id has no X-Request-Id" "$RID" ""
rid "component with id" /v1/files/a.zt/objects/w/data -H 'X-Request-Id: comp-1'
check_eq "echo: a 200 echoes the client's id" "$RID" comp-1
rid "method" /healthz -X POST
check_eq "POST /healthz: 405" "$CODE" 405
check_match "405 response has a generated X-Request-Id" "$RID" "$HEX16"
rid "unknown route" /nope
check_match "404 response has a generated X-Request-Id" "$RID" "$HEX16"
rid "metrics" /metrics
check_eq "echo: /metrics without an id has no X-Request-Id" "$RID" ""

# the manifest's shared 200: the same answer for every request that sent no id
MAN=/v1/files/a.zt
for i in 1 2 3; do
    http "$T/m$i" "$URL$MAN"
    check_eq "manifest $i: 200" "$CODE" 200
    check_eq "manifest $i: no X-Request-Id" "$(hdr "$T/m$i.hdr" X-Request-Id)" ""
done
check "manifest: the same body each time" cmp -s "$T/m1.body" "$T/m2.body"
check "manifest: the same body the third time" cmp -s "$T/m1.body" "$T/m3.body"
check_eq "manifest: the same ETag" "$(hdr "$T/m3.hdr" ETag)" "$(hdr "$T/m1.hdr" ETag)"
check_eq "manifest: Content-Length is the body's" "$(hdr "$T/m2.hdr" Content-Length)" \
    "$(stat -c %s "$T/m2.body")"
check_match "manifest: it is a.zt's, with object w" "$(cat "$T/m1.body")" '"objects":\{"w":'
check_eq "manifest: Vary" "$(hdr "$T/m1.hdr" Vary)" "Accept-Encoding"
check_match "manifest: Server" "$(hdr "$T/m1.hdr" Server)" '^ztensord/'
http "$T/mh" -I "$URL$MAN"
check_eq "manifest HEAD: 200" "$CODE" 200
check_eq "manifest HEAD: the GET's Content-Length" "$(hdr "$T/mh.hdr" Content-Length)" \
    "$(stat -c %s "$T/m1.body")"
check_nomatch "manifest HEAD: no body (curl -I writes the headers alone)" "$(cat "$T/mh.body")" \
    '"objects"'
rid "manifest with id" "$MAN" -H 'X-Request-Id: man-7'
check_eq "manifest: a client's id is echoed" "$RID" man-7
check "manifest with an id: the same body" cmp -s "$T/q.body" "$T/m1.body"
http "$T/m304" -H "If-None-Match: $(hdr "$T/m1.hdr" ETag)" "$URL$MAN"
check_eq "manifest: If-None-Match gets 304, not the shared 200" "$CODE" 304
http "$T/mr" -r 0-9 "$URL$MAN"
check_eq "manifest: Range gets 206, not the shared 200" "$CODE" 206
check_eq "manifest: the range's bytes" "$(cat "$T/mr.body")" "$(head -c 10 "$T/m1.body")"
# a new version of the file: a new shared answer
rand "$T/v.raw" 300
pack "$T/a2.zt" v=u8:300:"$T/v.raw"
mv "$T/a2.zt" "$R/a.zt"
for i in $(seq 1 100); do
    http "$T/m4" "$URL$MAN"
    [ "$(hdr "$T/m4.hdr" ETag)" != "$(hdr "$T/m1.hdr" ETag)" ] && break
    sleep 0.1
done
check_ne "replaced file: a new ETag" "$(hdr "$T/m4.hdr" ETag)" "$(hdr "$T/m1.hdr" ETag)"
check_match "replaced file: the new manifest, with object v" "$(cat "$T/m4.body")" \
    '"objects":\{"v":'
check_eq "replaced file: Content-Length is the new body's" "$(hdr "$T/m4.hdr" Content-Length)" \
    "$(stat -c %s "$T/m4.body")"
http "$T/m5" "$URL$MAN"
check "replaced file: the same new body again" cmp -s "$T/m4.body" "$T/m5.body"
pack "$R/a.zt" w=u8:10000:"$T/w.raw" # back, for the text-format check below

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

# ---- request_id_header=always: every response carries an id; the text format too
LOG2=$T/access-text.log
start_daemon "$R" --access-log "$LOG2" --access-log-format text --request-id-header always ||
    finish
rid "always: component" /v1/files/a.zt/objects/w/data
check_match "always: a 200 has a generated X-Request-Id" "$RID" "$HEX16"
rid "always: range" /v1/files/a.zt/objects/w/data -r 0-99
check_match "always: a 206 has one" "$RID" "$HEX16"
rid "always: metrics" /metrics
check_match "always: /metrics has one" "$RID" "$HEX16"
rid "always: manifest" /v1/files/a.zt
check_eq "always: manifest 200" "$CODE" 200
check_match "always: the manifest has one" "$RID" "$HEX16"
A=$RID
rid "always: manifest again" /v1/files/a.zt
check_ne "always: each manifest answer has its own id" "$RID" "$A"
rid "always: client id" /v1/files/a.zt -H 'X-Request-Id: mine-1'
check_eq "always: a client's id is echoed" "$RID" mine-1
# two requests on one keep-alive connection: one id each
curl -s -D "$T/ka.hdr" -o /dev/null -o /dev/null "$URL/healthz" "$URL/readyz"
kaids=$(tr -d '\r' <"$T/ka.hdr" | awk 'tolower($1) == "x-request-id:" { print $2 }' | sort -u | wc -l)
check_eq "keep-alive: two requests, two distinct ids" "$kaids" 2
rid "text format" /v1/files/a.zt/objects/w/data -H 'X-Request-Id: text-id-42'
for i in $(seq 1 50); do
    grep -q text-id-42 "$LOG2" && break
    sleep 0.1
done
check_match "text format: the line ends with rid=ID" "$(grep text-id-42 "$LOG2")" \
    '^127\.0\.0\.1 - - \[[^]]+\] "GET /v1/files/a\.zt/objects/w/data HTTP/1\.1" 200 10000 [0-9.]+ rid=text-id-42$'
finish
