#!/usr/bin/env bash
# t_prefetch: --prefetch fills the cache at start-up and /readyz answers 503 until it is
# done; POST /v1/prefetch (write scope) queues a job of files and prefixes and answers its
# progress, GET /v1/prefetch follows it; what was prefetched is then read with no request
# to the upstream; progress shows in /metrics.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin/d" "$T/side" "$T/cache"
rand "$T/w.bin" $((4 << 20))
rand "$T/v.bin" 300000
rand "$T/s.bin" 1000
pack "$T/origin/a.zt" w=u8:$((4 << 20)):"$T/w.bin" v=u8:300000:"$T/v.bin" || finish
pack "$T/origin/d/b.zt" s=u8:1000:"$T/s.bin" v=u8:300000:"$T/v.bin" || finish
pack "$T/origin/d/c.zt" --digest none s=u8:1000:"$T/s.bin" || finish
pack "$T/origin/e.zt" s=u8:1000:"$T/s.bin" || finish
start_origin "$T/origin" || finish
oport=${O_URL##*:}

# ---- start-up: the first upstream answer stalls (3 s, upstream_timeout 1 s: resumed),
# so the prefetch takes a second at least, and /readyz says so meanwhile
start_relay "$oport" stall 0 3 || finish
"$ZTENSORD" --root "$T/side" --listen 127.0.0.1:0 --access-log off \
    --upstream "http://127.0.0.1:$RPORT" --upstream-kind ztensord --cache-dir "$T/cache" \
    --upstream-timeout 1s --prefetch a.zt 2>"$T/p.err" &
P=$!
at_exit "kill -KILL $P 2>/dev/null"
port=
for i in $(seq 1 300); do
    port=$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$T/p.err" 2>/dev/null | grep -o '[0-9]*$')
    [ -n "$port" ] && break
    sleep 0.05
done
check "prefetching daemon listens" [ -n "$port" ]
http "$T/r" "http://127.0.0.1:$port/readyz"
check_code "/readyz during the start-up prefetch: 503" 503
check_match "/readyz says why" "$(cat "$T/r.body")" "not_ready.*start-up prefetch"
ready=
for i in $(seq 1 300); do # up to 30 s
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ] && ready=1 && break
    sleep 0.1
done
check "/readyz 200 once the prefetch is done" [ -n "$ready" ]
check_eq "prefetched: both components in the cache" \
    "$(metric "http://127.0.0.1:$port" '^ztensord_cache_items$')" 2
check_eq "prefetch files done (metrics)" \
    "$(metric "http://127.0.0.1:$port" '^ztensord_prefetch_files\{state="done"\}')" 1
check_eq "prefetch bytes done (metrics)" \
    "$(metric "http://127.0.0.1:$port" '^ztensord_prefetch_bytes\{state="done"\}')" $(((4 << 20) + 300000))
kill -TERM "$P"
wait_exit "$P" 20
check_eq "prefetching daemon exit status" "$EXIT_RC" 0
check_sanitizers "prefetching daemon: no sanitizer report" "$T/p.err"
stop_relay

# ---- the upstream starts after the sidecar: /readyz stays 503 (the model is not here)
# until it answers, then the start-up prefetch finishes; a file the upstream does not
# have keeps /readyz 503 and says why
up=$(free_port)
"$ZTENSORD" --upstream "http://127.0.0.1:$up" --cache-dir "$T/cache4" --listen 127.0.0.1:0 \
    --access-log off --prefetch a.zt 2>"$T/late.err" &
L=$!
at_exit "kill -KILL $L 2>/dev/null"
lport=
for i in $(seq 1 300); do
    lport=$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$T/late.err" 2>/dev/null | grep -o '[0-9]*$')
    [ -n "$lport" ] && break
    sleep 0.05
done
sleep 2
http "$T/r" "http://127.0.0.1:$lport/readyz"
check_code "upstream not started: /readyz 503" 503
"$ZTENSORD" --root "$T/origin" --listen "127.0.0.1:$up" --access-log off 2>"$T/late-origin.err" &
LO=$!
at_exit "kill -KILL $LO 2>/dev/null"
ready=
for i in $(seq 1 300); do # the retries back off to 2 s, 4 s...: up to 30 s
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$lport/readyz")" = 200 ] && ready=1 && break
    sleep 0.1
done
check "upstream started: /readyz 200 once the prefetch is done" [ -n "$ready" ]
check_eq "upstream started late: the model is in the cache" \
    "$(metric "http://127.0.0.1:$lport" '^ztensord_cache_items$')" 2
kill -TERM "$L" "$LO"
wait_exit "$L" 20
check_eq "late-upstream daemon exit status" "$EXIT_RC" 0
check_sanitizers "late-upstream daemon: no sanitizer report" "$T/late.err"
wait_exit "$LO" 20

NO_READY=1 start_rootless "$O_URL" "$T/cache5" --prefetch missing.zt || finish
http "$T/r" "$URL/readyz"
for i in $(seq 1 50); do
    grep -q 'failed' "$T/r.body" && break
    sleep 0.1
    http "$T/r" "$URL/readyz"
done
check_code "a missing start-up file: /readyz 503" 503
check_match "a missing start-up file: /readyz says why" "$(cat "$T/r.body")" \
    "start-up prefetch failed.*missing.zt"
stop_daemon

# ---- POST /v1/prefetch
start_sidecar "$T/side" "$O_URL" "$T/cache" --allow-anonymous-writes || finish
http "$T/r" "$URL/v1/prefetch" -X POST -d '{"prefix": "d/", "files": ["e.zt"]}'
check_code "POST /v1/prefetch: 202" 202
id=$(jget "$T/r.body" id)
check_match "POST /v1/prefetch: a job id" "$id" '^[0-9]+$'
state=
for i in $(seq 1 200); do
    curl -s "$URL/v1/prefetch" >"$T/jobs"
    state=$($PY -c 'import json,sys; j=[x for x in json.load(open(sys.argv[1]))["jobs"] if x["id"]==int(sys.argv[2])][0]; print(j["state"], j["files_done"], j["files_total"])' "$T/jobs" "$id")
    case $state in done* | failed*) break ;; esac
    sleep 0.1
done
check_eq "the job: done, 3 of 3 files" "$state" "done 3 3"
before=$(metric "$O_URL" '^ztensord_requests_total')
for f in d/b.zt d/c.zt e.zt; do
    for c in s; do
        http "$T/r" "$URL/v1/files/$f/objects/$c/data"
        check_same "prefetched $f/$c: bytes" "$T/r.body" "$T/s.bin"
    done
done
http "$T/r" "$URL/v1/files/d/b.zt/objects/v/data"
check_same "prefetched d/b.zt/v: bytes" "$T/r.body" "$T/v.bin"
check_eq "prefetched: read with no request to the origin (one scrape)" \
    "$(($(metric "$O_URL" '^ztensord_requests_total') - before))" 1

# refused: malformed, or a name that could leave the tree
http "$T/r" "$URL/v1/prefetch" -X POST -d '{"files": ["../x.zt"]}'
check_code "POST /v1/prefetch ../: 400" 400
http "$T/r" "$URL/v1/prefetch" -X POST -d '{}'
check_code "POST /v1/prefetch of nothing: 400" 400
http "$T/r" "$URL/v1/prefetch" -X POST -d 'nope'
check_code "POST /v1/prefetch, not JSON: 400" 400
# a file the upstream does not have: the job fails and says why
http "$T/r" "$URL/v1/prefetch" -X POST -d '{"files": ["missing.zt"]}'
id=$(jget "$T/r.body" id)
for i in $(seq 1 100); do
    curl -s "$URL/v1/prefetch" >"$T/jobs"
    grep -q "\"id\":$id,\"state\":\"failed\"" "$T/jobs" && break
    sleep 0.1
done
check_match "a missing file: the job fails, naming it" "$(cat "$T/jobs")" \
    "\"id\":$id,\"state\":\"failed\".*no file .*missing.zt"
stop_daemon

# without a token and without allow_anonymous_writes, POST needs the write scope
start_sidecar "$T/side" "$O_URL" "$T/cache" || finish
http "$T/r" "$URL/v1/prefetch" -X POST -d '{"files": ["e.zt"]}'
check_code "POST /v1/prefetch without write access: 403" 403
stop_origin
finish
