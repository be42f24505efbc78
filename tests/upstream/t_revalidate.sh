#!/usr/bin/env bash
# t_revalidate: a revalidation after upstream_ttl is a conditional request, not a read of
# the manifest (issue 26 §2). With --upstream-ttl 0 every request finds its file expired,
# so the revalidations are counted by requests (the sidecar's revalidation counters), not
# by the clock. After 10 of them with nothing changed, the origin has sent 0 body bytes
# (its own response_bytes_total) for a 1.x file, a v2 file and a sharded v2 root (its
# root and both shards revalidated), and opened nothing again. A file replaced at the
# origin, and a shard touched there, are picked up by the next revalidation (a HEAD
# answered 200 with another validator: the manifest is read again). Through relay.py
# lying with 304: a 304 naming another ETag is a change (opened again at once); a 304
# that echoes the old ETag for a file that changed cannot be told from the truth, but
# the first fill it leads to gets 412 (If-Match), which opens the file again without
# asking the HEAD: the new version is served from the next request on, never a mix. An
# upstream that answers HEAD 501 gets the full open it got before.
# Through nginx as a plain upstream: 10 revalidations are 10 HEADs answered 304 with no
# body byte (its access log).
. "$(dirname "$0")/lib.sh" "$@"

o=$T/origin
mkdir -p "$o"
rand "$T/w.bin" 300000
rand "$T/w2.bin" 300000
rand "$T/v.bin" 5000
pack "$o/one.zt" w=u8:300000:"$T/w.bin" v=u8:5000:"$T/v.bin" || finish
pack "$T/one2.zt" w=u8:300000:"$T/w2.bin" v=u8:5000:"$T/v.bin" || finish
"$ZT" pack --format v2 -o "$o/two.zt" w=u8:300000:"$T/w.bin" >/dev/null 2>"$T/pack.err" ||
    bad "zt pack --format v2" "$(cat "$T/pack.err")"
corpus=${ZT_CORPUS_V2_DIR:-}/accept
files=(one.zt two.zt)
if [ -f "$corpus/sharded.zt" ]; then
    cp "$corpus/sharded.zt" "$corpus"/sharded-0000?-of-00002.zt "$o/"
    files+=(sharded.zt)
else
    skip "a sharded v2 root" "ZT_CORPUS_V2_DIR not set (run ctest: corpus_v2_generate makes it)"
fi

mkdir -p "$T/side"
start_origin "$o" || finish
start_sidecar "$T/side" "$O_URL" "$T/cache" --upstream-ttl 0 || finish

side() { metric "$URL" "^ztensord_upstream_$1\$"; }
# etag_of URL: the ETag a HEAD gets
etag_of() { curl -sI --max-time 10 "$1" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }'; }

# ---- nothing changed: 10 revalidations of each file, no body byte from the origin
for f in "${files[@]}"; do
    http "$T/r" "$URL/v1/files/$f"
    check_code "$f: opened" 200
    [ "$f" = one.zt ] && http "$T/r" "$URL/v1/files/$f/objects/w/data" # cached now
    b0=$(origin_bytes) r0=$(side revalidations_unchanged_total) o0=$(side opens_total)
    for i in $(seq 1 40); do # 10 revalidations at least; each request makes one or more
        [ $(($(side revalidations_unchanged_total) - r0)) -ge 10 ] && break
        curl -s -o "$T/m.json" --max-time 30 "$URL/v1/files/$f"
        [ "$f" = one.zt ] && curl -s -o "$T/w.out" --max-time 30 "$URL/v1/files/$f/objects/w/data"
    done
    revals=$(($(side revalidations_unchanged_total) - r0))
    sent=$(($(origin_bytes) - b0))
    note "$f: $revals revalidations (shards counted apart), $sent body bytes from the origin"
    check_ge "$f: 10 revalidations, unchanged" "$revals" 10
    check_eq "$f: the origin sent no body byte for them" "$sent" 0
    check_eq "$f: nothing opened again" "$(($(side opens_total) - o0))" 0
    check_same "$f: the manifest is the origin's" "$T/m.json" <(curl -s "$O_URL/v1/files/$f")
done
check_same "one.zt: the cached component is right" "$T/w.out" "$T/w.bin"
if [ -f "$o/sharded.zt" ]; then # the root's and the shards' HEADs, 3 a request
    http "$T/r" "$URL/v1/files/sharded.zt/objects/layer1/data"
    check_code "sharded.zt: a part from a shard" 200
    check_same "sharded.zt: its bytes" "$T/r.body" "$corpus/sharded.d/1.bin"
fi

# wait_changed URL OLD: until the origin's ETag of URL is not OLD (bounded: 30 s for the
# origin's rescan on a busy machine)
wait_changed() {
    local i
    for i in $(seq 1 120); do
        [ "$(etag_of "$1")" != "$2" ] && return 0
        sleep 0.25
    done
    return 1
}

# ---- a file replaced at the origin: the next revalidation (200, another ETag) reads it
old=$(etag_of "$O_URL/v1/files/one.zt/raw")
cp "$T/one2.zt" "$o/.one.tmp" && mv "$o/.one.tmp" "$o/one.zt"
check "one.zt replaced: the origin serves it" wait_changed "$O_URL/v1/files/one.zt/raw" "$old"
o0=$(side opens_total)
http "$T/r" "$URL/v1/files/one.zt/objects/w/data"
check_code "one.zt replaced: 200" 200
check_same "one.zt replaced: the next request has the new bytes" "$T/r.body" "$T/w2.bin"
check_eq "one.zt replaced: opened again once" "$(($(side opens_total) - o0))" 1

# ---- a shard touched at the origin (another ETag): the root is opened again
if [ -f "$o/sharded.zt" ]; then
    s1=$o/sharded-00002-of-00002.zt
    old=$(etag_of "$O_URL/v1/files/sharded-00002-of-00002.zt/raw")
    touch -d '+10 seconds' "$s1"
    if wait_changed "$O_URL/v1/files/sharded-00002-of-00002.zt/raw" "$old"; then
        o0=$(side opens_total)
        http "$T/r" "$URL/v1/files/sharded.zt/objects/layer1/data"
        check_code "a shard touched: 200" 200
        check_same "a shard touched: its bytes" "$T/r.body" "$corpus/sharded.d/1.bin"
        check_eq "a shard touched: the root and its 2 shards opened again" \
            "$(($(side opens_total) - o0))" 3
    else
        skip "a shard touched: opened again" "the origin's ETag of a shard does not change with its mtime"
    fi
fi
stop_daemon

# ---- an origin that lies with 304
# lie304 other: a 304 with an ETag other than the pinned one is a change
start_relay "${O_URL##*:}" lie304 '"other"' || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache.l1" --upstream-ttl 0 \
    --upstream-kind ztensord || finish
http "$T/r" "$URL/v1/files/two.zt"
check_code "lie304 other: opened" 200
o0=$(side opens_total)
http "$T/r" "$URL/v1/files/two.zt"
check_code "lie304 other: 200" 200
check_eq "lie304 other: a 304 naming another ETag: opened again" "$(($(side opens_total) - o0))" 1
check_match "lie304 other: the relay answered the HEAD" "$(cat "$RLOG")" 'HEAD /v1/files/two.zt/raw .* 304'
stop_daemon
stop_relay

# lie304 echo: every HEAD is 304 with the old ETag, while one.zt changes at the origin
start_relay "${O_URL##*:}" lie304 echo || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache.l2" --upstream-ttl 0 \
    --upstream-kind ztensord --upstream-retries 0 || finish
http "$T/r" "$URL/v1/files/one.zt/objects/v/data"
check_code "lie304 echo: opened, one component cached" 200
old=$(etag_of "$O_URL/v1/files/one.zt/raw")
pack "$o/.one.tmp" w=u8:300000:"$T/w.bin" v=u8:5000:"$T/v.bin" && mv "$o/.one.tmp" "$o/one.zt"
check "lie304 echo: the origin serves a new version" wait_changed "$O_URL/v1/files/one.zt/raw" "$old"
o0=$(side opens_total)
code=$(curl -s --max-time 30 -o "$T/lie.body" -w '%{http_code}' "$URL/v1/files/one.zt/objects/w/data")
rc=$?
note "lie304 echo: an uncached component after the lie: HTTP $code, curl exit $rc"
if [ "$code $rc" = "200 0" ]; then # one version's bytes, whichever: never a mix
    check "lie304 echo: a complete answer is one version's bytes" \
        eval 'cmp -s "$T/lie.body" "$T/w2.bin" || cmp -s "$T/lie.body" "$T/w.bin"'
else
    ok "lie304 echo: the fill saw the change (412): not a complete 200"
fi
http "$T/r" "$URL/v1/files/one.zt/objects/w/data"
check_code "lie304 echo: the next request: 200" 200
check_same "lie304 echo: the next request: the new version's bytes" "$T/r.body" "$T/w.bin"
check_ge "lie304 echo: opened again, without asking the HEAD" "$(($(side opens_total) - o0))" 1
stop_daemon
stop_relay

# an upstream that answers HEAD 501 (relay.py nohead, as http.server does): opened again,
# as before this change, and served
start_relay "${O_URL##*:}" nohead || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache.l3" --upstream-ttl 0 \
    --upstream-kind ztensord || finish
http "$T/r" "$URL/v1/files/one.zt/objects/w/data"
check_code "HEAD 501: opened" 200
o0=$(side opens_total)
http "$T/r" "$URL/v1/files/one.zt/objects/w/data"
check_code "HEAD 501: revalidated: 200" 200
check_same "HEAD 501: the bytes" "$T/r.body" "$T/w.bin"
check_eq "HEAD 501: opened again" "$(($(side opens_total) - o0))" 1
check_eq "HEAD 501: not counted unchanged" "$(side revalidations_unchanged_total)" 0
stop_daemon
stop_relay

# ---- a plain upstream (nginx): the same, counted in nginx's access log
if start_nginx "$o"; then
    start_sidecar "$T/side" "http://127.0.0.1:$NPORT" "$T/cache.n" --upstream-kind plain \
        --upstream-ttl 0 || finish
    alog=$T/nginx/access.log
    for f in one.zt two.zt; do
        http "$T/r" "$URL/v1/files/$f"
        check_code "nginx $f: opened" 200
        n0=$(wc -l <"$alog") r0=$(side revalidations_unchanged_total)
        for i in $(seq 1 40); do
            [ $(($(side revalidations_unchanged_total) - r0)) -ge 10 ] && break
            curl -s -o /dev/null --max-time 30 "$URL/v1/files/$f"
        done
        tail -n +$((n0 + 1)) "$alog" >"$T/alog.$f"
        check_ge "nginx $f: 10 revalidations, unchanged" \
            "$(($(side revalidations_unchanged_total) - r0))" 10
        check_ge "nginx $f: HEADs answered 304" "$(grep -c "\"HEAD /$f HTTP/1.1\" 304 " "$T/alog.$f")" 10
        check_eq "nginx $f: no body byte sent" "$(awk '{ s += $10 } END { print s + 0 }' "$T/alog.$f")" 0
    done
    stop_daemon
fi
rfinish
