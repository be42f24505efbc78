#!/usr/bin/env bash
# t_plain_files: a sidecar in front of an origin ztensord whose root has plain files
# (config.json, tokenizer.json, sub/generation_config.json) beside a .zt file. The sidecar
# lists them as the origin does (format "file", the origin's sha256), serves their bytes
# byte-exact with ranges through its cache (the second read and a range are not asked of
# the origin again; ETag "sha256:<hex>" and Repr-Digest as the origin's), and a byte
# flipped on the way (tests/sh/relay.py) fails the fill and caches nothing: the next read
# is fetched again, whole and right. From an origin that has not hashed them, they are
# cached by version and served with no digest claimed.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/files/sub" "$T/side" "$T/cache" "$T/side2" "$T/cache2"
rand "$T/w.bin" 200000
pack "$T/files/m.zt" w=u8:200000:"$T/w.bin" || finish
printf '{"architectures": ["LlamaForCausalLM"], "hidden_size": 64}\n' >"$T/files/config.json"
text "$T/files/tokenizer.json" 300000
printf '{"max_new_tokens": 16}\n' >"$T/files/sub/generation_config.json"
PLAIN="config.json tokenizer.json sub/generation_config.json"

start_origin "$T/files" || finish
# the origin's verifier hashes its plain files; their sha256 is listed once it has
for i in $(seq 1 300); do
    curl -s --max-time 5 "$O_URL/v1/files" >"$T/olist" || true
    n=0
    for f in $PLAIN; do
        [ "$($HELP listing "$T/olist" "$f" sha256)" != "-" ] && n=$((n + 1))
    done
    [ "$n" = 3 ] && break
    sleep 0.1
done
check_eq "origin: plain files hashed" "$n" 3

start_relay "${O_URL##*:}" pass || finish
start_sidecar "$T/side" "http://127.0.0.1:$RPORT" "$T/cache" || finish

# listed as the origin lists them
http "$T/r" "$URL/v1/files"
check_code "listing" 200
for f in $PLAIN; do
    check_eq "listing: $f is a file" "$($HELP listing "$T/r.body" "$f" format)" file
    check_eq "listing: $f's sha256 is the origin's" "$($HELP listing "$T/r.body" "$f" sha256)" \
        "$($HELP listing "$T/olist" "$f" sha256)"
done
check_eq "listing: m.zt too" "$($HELP listing "$T/r.body" m.zt format)" "$($HELP listing "$T/olist" m.zt format)"

# bytes, byte-exact
raw_gets() { grep -c "GET /v1/files/$1/raw " "$RLOG" || true; }
for f in $PLAIN; do
    http "$T/r" "$URL/v1/files/$f/raw"
    check_code "$f: raw" 200
    check_same "$f: raw is the file" "$T/r.body" "$T/files/$f"
done
sha=$(openssl dgst -sha256 -r "$T/files/tokenizer.json" | cut -c1-64)
http "$T/r" "$URL/v1/files/tokenizer.json/raw"
check_eq "tokenizer.json: ETag \"sha256:<hex>\"" "$(hdr "$T/r.hdr" etag)" "\"sha256:$sha\""
check_match "tokenizer.json: Repr-Digest" "$(hdr "$T/r.hdr" repr-digest)" '^sha-256=:'
check_eq "tokenizer.json: fetched from the origin once" "$(raw_gets tokenizer.json)" 1
check_same "tokenizer.json: second read" "$T/r.body" "$T/files/tokenizer.json"
http "$T/r" "$URL/v1/files/tokenizer.json/raw" -H 'Range: bytes=1000-250999'
check_code "tokenizer.json: range" 206
check_same "tokenizer.json: range bytes" "$T/r.body" <(slice "$T/files/tokenizer.json" 1000 250000)
http "$T/r" "$URL/v1/files/tokenizer.json/raw" -H 'Range: bytes=0-9,20-29'
check_code "tokenizer.json: two ranges" 206
check_eq "tokenizer.json: still fetched once (cache)" "$(raw_gets tokenizer.json)" 1
check_eq "config.json: fetched once" "$(raw_gets config.json)" 1
http "$T/r" "$URL/v1/files/config.json"
check_code "config.json: its document" 200
http "$T/r" "$URL/v1/files/config.json/objects/x"
check_code "config.json: no objects" 404

# a byte flipped on the way: the fill fails, nothing is cached, the next read fetches again
stop_relay
# the sidecar's GETs through it: its probe, the origin's listing (the relay keeps no
# Repr-Digest on a HEAD, so the sha256 comes from the listing), then the bytes: flipped
start_relay "${O_URL##*:}" flipone 2 || finish
keep_url=$URL keep_pid=$D_PID keep_err=$D_ERR
D_PID=
start_sidecar "$T/side2" "http://127.0.0.1:$RPORT" "$T/cache2" || finish
http "$T/r" "$URL/v1/files/tokenizer.json/raw"
if cmp -s "$T/r.body" "$T/files/tokenizer.json"; then
    bad "flipped: the body is not the file" "the whole file came"
else
    ok "flipped: the body is not the file (cut or refused)"
fi
check_eq "flipped: the relay flipped the /raw GET" "$(grep -c "GET /v1/files/tokenizer.json/raw " "$RLOG")" 1
check_ge "flipped: a digest failure counted" "$(metric "$URL" '^ztensord_upstream_digest_failures_total')" 1
check_eq "flipped: nothing cached" "$(find "$T/cache2" -type f -path '*blobs*' | wc -l)" 0
http "$T/r" "$URL/v1/files/tokenizer.json/raw"
check_code "flipped, then: raw" 200
check_same "flipped, then: the file" "$T/r.body" "$T/files/tokenizer.json"
check_eq "flipped, then: fetched again" "$(grep -c "GET /v1/files/tokenizer.json/raw " "$RLOG")" 2
stop_daemon
D_PID=$keep_pid D_ERR=$keep_err URL=$keep_url

# an origin that has not hashed its plain files (verify_digests off): no sha256 to check,
# the bytes are cached by the file's URL and validator, and no digest is claimed
stop_origin
start_origin "$T/files" --no-verify-digests || finish
stop_relay
start_relay "${O_URL##*:}" pass || finish
mkdir -p "$T/side3" "$T/cache3"
D_PID=
start_sidecar "$T/side3" "http://127.0.0.1:$RPORT" "$T/cache3" || finish
http "$T/r" "$URL/v1/files"
check_eq "not hashed: listed without a sha256" "$($HELP listing "$T/r.body" tokenizer.json sha256)" -
check_eq "not hashed: listed as a file" "$($HELP listing "$T/r.body" tokenizer.json format)" file
http "$T/r" "$URL/v1/files/tokenizer.json/raw"
check_code "not hashed: raw" 200
check_same "not hashed: the file" "$T/r.body" "$T/files/tokenizer.json"
check_match "not hashed: an identity ETag, no sha256 claimed" "$(hdr "$T/r.hdr" etag)" '^"[0-9a-f]{32}"$'
check_eq "not hashed: no Repr-Digest" "$(hdr "$T/r.hdr" repr-digest)" ""
http "$T/r" "$URL/v1/files/tokenizer.json/raw" -H 'Range: bytes=5-104'
check_same "not hashed: a range" "$T/r.body" <(slice "$T/files/tokenizer.json" 5 100)
check_eq "not hashed: fetched from the origin once" "$(raw_gets tokenizer.json)" 1
check_eq "not hashed: cached by version (parts/)" "$(find "$T/cache3" -type f -path '*parts*' | wc -l)" 1
stop_daemon
D_PID=$keep_pid D_ERR=$keep_err URL=$keep_url
stop_origin
rfinish
