#!/usr/bin/env bash
# t_stalled: one stalled upstream name must not freeze the rest (issue 27 finding 2,
# issue 22 item 4). evil_upstream.py in mode "stall" accepts the requests for eight
# names and never answers them; it serves every other name honestly. One sidecar
# (--upstream-timeout 120s, --upstream-ttl 1s) also serves a writable local root.
# While the eight GETs of the stalled names are pending (the upstream's log shows
# eight stalled requests):
#   - two healthy files already cached and past their TTL answer 200, byte-exact
#     (stale-while-revalidate: their revalidation runs in the background);
#   - two healthy uncached files answer 200, byte-exact (opened in parallel with the
#     stalled opens: no global lock across the network);
#   - a PUT, a DELETE and a session commit each succeed (upstream waits never occupy
#     the publish queue).
# Checked by order, not by time: once all that healthy work has answered, every one
# of the eight stalled GETs is still pending. Then the upstream goes away and each
# stalled GET ends with a 502/504 JSON error, never a 200.
# Fails without ee38fba: the opens share one session under one lock and run on the
# publish queue, so the healthy reads and the writes wait behind the stalled opens
# (they answer only after the stalled GETs ended, or not within curl's limit).
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/evil_lib.sh"

NSTALL=8
mkdir -p "$T/up" "$T/side"
for i in 0 1 2 3; do
    rand "$T/h$i.bin" $((256 << 10))
    pack "$T/up/h$i.zt" w=u8:$((256 << 10)):"$T/h$i.bin" || finish
done
rand "$T/s.bin" 1000
for i in $(seq 0 $((NSTALL - 1))); do
    pack "$T/up/s$i.zt" w=u8:1000:"$T/s.bin" || finish
done
rand "$T/p.bin" 5000
pack "$T/p.zt" w=u8:5000:"$T/p.bin" || finish
rand "$T/k.raw" 3000

# Stall every request for s0.zt ... s7.zt, for up to 300 s (or until the client goes).
start_evil "$T/up" stall '^/s[0-9]+\.zt' 300 || finish
start_sidecar "$T/side" "$E_URL" "$T/cache" --upstream-kind plain --upstream-retries 0 \
    --upstream-timeout 120s --upstream-ttl 1s "${OPEN[@]}" || finish

# ---- two healthy files cached before the stall
for i in 0 1; do
    http "$T/warm$i" "$URL/v1/files/h$i.zt/objects/w/data"
    LAST=$T/warm$i
    check_code "warm h$i: 200" 200
    check_same "warm h$i: bytes" "$T/warm$i.body" "$T/h$i.bin"
done

# ---- eight GETs of stalled names, in the background
SPIDS=()
for i in $(seq 0 $((NSTALL - 1))); do
    curl -s --max-time 280 -o "$T/st$i.body" -w '%{http_code}' \
        "$URL/v1/files/s$i.zt/objects/w/data" >"$T/st$i.code" 2>/dev/null &
    SPIDS+=($!)
done
# stalled: how many names the upstream holds a request of (an open asks for the head and
# the tail of a file at once: two requests a name)
stalled() { awk '/ -> stall$/ { print $3 }' "$ELOG" | sort -u | wc -l; }
for _ in $(seq 1 300); do # bounded: up to about 60 s
    [ "$(stalled)" -ge "$NSTALL" ] && break
    sleep 0.2
done
check_eq "the upstream holds requests of $NSTALL stalled names" "$(stalled)" "$NSTALL"
# The two cached files are past their TTL (1 s) by now; wait out one more TTL to be sure.
sleep 1.5

# ---- healthy work, all at once (each bounded by curl's limit)
get_job() { # NAME URL: status into $T/NAME.code, body into $T/NAME.body
    curl -s --max-time 100 -o "$T/$1.body" -w '%{http_code}' "$2" >"$T/$1.code" 2>/dev/null
}
session_job() { # POST /v1/uploads, PUT one component, commit: the three statuses
    local id codes
    codes=$(curl -s --max-time 100 -o "$T/sess.open" -w '%{http_code}' -X POST \
        -H 'Content-Type: application/json' --data-binary '{"file":"local/s.zt"}' \
        "$URL/v1/uploads")
    id=$($HELP get "$T/sess.open" id 2>/dev/null)
    codes="$codes $(curl -s --max-time 100 -o /dev/null -w '%{http_code}' -T "$T/k.raw" \
        "$URL/v1/uploads/$id/components/k")"
    codes="$codes $(curl -s --max-time 100 -o "$T/sess.commit" -w '%{http_code}' -X POST \
        -H 'Content-Type: application/json' \
        --data-binary '{"objects":{"k":{"shape":[3000],"components":{"data":{"key":"k","dtype":"u8"}}}}}' \
        "$URL/v1/uploads/$id/commit")"
    echo "$codes" >"$T/sess.code"
}
write_job() { # PUT a file, then DELETE it
    curl -s --max-time 100 -o /dev/null -w '%{http_code}' -T "$T/p.zt" \
        "$URL/v1/files/local/p.zt" >"$T/put.code" 2>/dev/null
    curl -s --max-time 100 -o /dev/null -w '%{http_code}' -X DELETE \
        "$URL/v1/files/local/p.zt" >"$T/del.code" 2>/dev/null
}
HPIDS=()
for i in 0 1 2 3; do
    get_job "h$i" "$URL/v1/files/h$i.zt/objects/w/data" &
    HPIDS+=($!)
done
session_job &
HPIDS+=($!)
write_job &
HPIDS+=($!)
for p in "${HPIDS[@]}"; do wait "$p"; done

# ---- the order: every stalled GET is still pending now
pending=0
for i in $(seq 0 $((NSTALL - 1))); do
    if kill -0 "${SPIDS[$i]}" 2>/dev/null && [ ! -s "$T/st$i.code" ]; then
        pending=$((pending + 1))
    fi
done
check_eq "after the healthy work: all $NSTALL stalled GETs still pending" "$pending" "$NSTALL"

for i in 0 1; do
    check_eq "cached h$i past its TTL: 200" "$(cat "$T/h$i.code")" 200
    check_same "cached h$i past its TTL: bytes" "$T/h$i.body" "$T/h$i.bin"
done
for i in 2 3; do
    check_eq "uncached h$i: 200" "$(cat "$T/h$i.code")" 200
    check_same "uncached h$i: bytes" "$T/h$i.body" "$T/h$i.bin"
done
check_eq "PUT: 201" "$(cat "$T/put.code")" 201
check_eq "DELETE: 204" "$(cat "$T/del.code")" 204
check_eq "session: open 201, component 201, commit 201" "$(cat "$T/sess.code")" "201 201 201"
check "the committed file is in the root" [ -f "$T/side/local/s.zt" ]
req "the committed file is served" 200 "$URL/v1/files/local/s.zt/objects/k/data"
check_same "the committed file: bytes" "$LAST.body" "$T/k.raw"
# The stale files were revalidated in the background (upstream requests for them after
# the stall began): bounded wait for the log to show it.
revalidated() { sed -n '/ -> stall$/,$p' "$ELOG" | grep -q " /h$1\.zt "; }
both_revalidated() { revalidated 0 && revalidated 1; }
for _ in $(seq 1 100); do
    both_revalidated && break
    sleep 0.2
done
check "the stale files were revalidated at the upstream" both_revalidated

# ---- the upstream goes: each stalled GET ends with an error, never a 200
stop_evil
for p in "${SPIDS[@]}"; do wait "$p"; done
errs=0
for i in $(seq 0 $((NSTALL - 1))); do
    c=$(cat "$T/st$i.code")
    case $c in 502 | 504) errs=$((errs + 1)) ;; *) note "stalled s$i: HTTP $c" ;; esac
done
check_eq "stalled GETs end with 502/504 once the upstream goes" "$errs" "$NSTALL"
daemon_alive "daemon alive"
finish
