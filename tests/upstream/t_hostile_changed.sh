#!/usr/bin/env bash
# t_hostile_changed: a plain upstream (evil_upstream.py, honest but for ignoring
# If-Match and If-Range) whose file is replaced between the open and the fill, by one of
# the same size: the sidecar must notice (the answers' ETag is not the pinned one) and
# never serve the new bytes under the old manifest as a complete answer, with or without
# a digest to check them against; also when the upstream sends no ETag nor
# Last-Modified (fails: nothing tells the versions apart, and a component without a
# digest is served complete with the new bytes under the old manifest). Then, after upstream_ttl, the new file is served right.
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/evil_lib.sh"

mkdir -p "$T/up" "$T/new"
rand "$T/a.bin" $((1 << 20))
rand "$T/b.bin" $((1 << 20))
for d in sha256 none; do
    pack "$T/up/$d.zt" --digest "$d" w=u8:$((1 << 20)):"$T/a.bin" || finish
    pack "$T/new/$d.zt" --digest "$d" w=u8:$((1 << 20)):"$T/b.bin" || finish
done
mkdir -p "$T/keep" && cp "$T/up/"*.zt "$T/keep/"
check_eq "the two versions have the same size" "$(stat -c %s "$T/up/none.zt")" \
    "$(stat -c %s "$T/new/none.zt")"
# MODE "": the upstream sends ETag and Last-Modified; "noval": neither
for MODE in pass noval; do
cp "$T/keep/"*.zt "$T/up/"
start_evil "$T/up" $MODE || finish
start_rootless "$E_URL" "$T/cache.$MODE" --upstream-kind plain --upstream-retries 0 \
    --upstream-ttl 2s || finish
for d in sha256 none; do
    ttl_start
    curl -s -o /dev/null "$URL/v1/files/$d.zt"
    cp "$T/new/$d.zt" "$T/up/$d.zt"
    touch -d '+5 seconds' "$T/up/$d.zt" # another mtime: another ETag
    code=$(curl -s --max-time 30 -o "$T/$d.body" -w '%{http_code}' "$URL/v1/files/$d.zt/objects/w/data")
    rc=$?
    note "$MODE $d: HTTP $code, curl exit $rc, $(stat -c %s "$T/$d.body") bytes; $(head -c 300 "$T/$d.body" | tr -d '\0' | grep -a -o '"message":"[^"]*"')"
    if ! within_ttl 2; then # reopened: the new version, rightly
        skip "$MODE $d: replaced upstream after the open: not a complete 200" "the steps outlasted the 2 s TTL"
    elif [ "$code" = 200 ] && [ "$rc" = 0 ]; then
        bad "$MODE $d: replaced upstream after the open: not a complete 200" "a complete 200 was served"
        if cmp -s "$T/$d.body" "$T/b.bin"; then note "$MODE $d: ...with the new bytes under the old manifest"; fi
    else
        ok "$MODE $d: replaced upstream after the open: not a complete 200 (HTTP $code, curl $rc)"
    fi
    check "$MODE $d: daemon alive" daemon_alive "$D_PID"
done
sleep 2.5 # upstream_ttl: reopened, the new version
for d in sha256 none; do
    http "$T/r" "$URL/v1/files/$d.zt/objects/w/data"
    if [ "$MODE" = noval ]; then # no validator: never served (docs/API.md, Plain upstream)
        check_code "$MODE $d: after upstream_ttl: 502" 502
        check_match "$MODE $d: the error says why" "$(cat "$T/r.body")" \
            'upstream_failed.*no ETag and no Last-Modified'
        continue
    fi
    check_code "$MODE $d: after upstream_ttl: 200" 200
    check_same "$MODE $d: after upstream_ttl: the new bytes" "$T/r.body" "$T/b.bin"
done
stop_daemon
done
finish
