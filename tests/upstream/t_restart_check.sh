#!/usr/bin/env bash
# t_restart_check: what is in the cache directory after a restart is checked before it
# is served (issue 27, finding 5). A sidecar caches components a and b of m.zt, then
# stops. While it is down, b's file under blobs/sha256/ is replaced by 1 MiB of zeros
# (same size: a planted file, or bit rot), and a file of zeros is planted under c's
# digest (a component never fetched). After the restart:
#   - /v1/blobs/sha256:<c> before any file names it: 404, never the planted bytes;
#   - b and c: the right bytes (hashed, found wrong, fetched again), never the zeros
#     under the digest ETag; the files under their digests now hold the right bytes;
#   - a: served from the cache after its check, without a new fetch (the origin sends
#     the bytes of b and c only, and the sidecar counts two fills);
#   - the metrics count three checks and two failed ones.
# Fails before: the planted bytes are served as b and c with the digest ETag and
# Repr-Digest, and the blob route serves them under c's digest.
. "$(dirname "$0")/lib.sh" "$@"

MIB=$((1 << 20))
mkdir -p "$T/origin" "$T/side"
for x in a b c; do rand "$T/$x.bin" $MIB; done
head -c $MIB /dev/zero >"$T/zeros"
pack "$T/origin/m.zt" a=u8:$MIB:"$T/a.bin" b=u8:$MIB:"$T/b.bin" c=u8:$MIB:"$T/c.bin" || finish
start_origin "$T/origin" || finish
side() {
    start_sidecar "$T/side" "$O_URL" "$T/cache" --upstream-kind ztensord --upstream-retries 0 "$@"
}
blob_path() { # DIGEST-HEX: its file in the cache directory
    echo "$T/cache/blobs/sha256/${1:0:2}/$1"
}
A=$(sha256_hex "$T/a.bin") B=$(sha256_hex "$T/b.bin") C=$(sha256_hex "$T/c.bin")

# ---- fill a and b, stop
side || finish
for x in a b; do
    req "before the restart: $x" 200 "$URL/v1/files/m.zt/objects/$x/data"
    check_same "before the restart: $x bytes" "$LAST.body" "$T/$x.bin"
done
stop_daemon
check "a is in the cache directory" [ -f "$(blob_path "$A")" ]
check "b is in the cache directory" [ -f "$(blob_path "$B")" ]

# ---- while it is down: b's file replaced, c's planted
cp "$T/zeros" "$(blob_path "$B")"
mkdir -p "$(dirname "$(blob_path "$C")")"
cp "$T/zeros" "$(blob_path "$C")"

# not_planted NAME PREFIX: a response (PREFIX.body/.hdr) must not be the zeros
not_planted() {
    if cmp -s "$2.body" "$T/zeros"; then
        bad "$1: not the planted bytes" "the zeros were served, ETag $(hdr "$2.hdr" ETag)"
    else
        ok "$1: not the planted bytes"
    fi
}

side || finish
o0=$(origin_bytes)
# The blob route before any upstream file names c: only checked bytes are served.
req "blob c before its file is opened" 404 "$URL/v1/blobs/sha256:$C"
not_planted "blob c before its file is opened" "$LAST"

for x in b c; do
    http "$T/$x" "$URL/v1/files/m.zt/objects/$x/data"
    LAST=$T/$x
    not_planted "after the restart: $x" "$T/$x"
    check_code "after the restart: $x fetched again: 200" 200
    check_same "after the restart: $x bytes" "$T/$x.body" "$T/$x.bin"
    check_eq "after the restart: $x ETag" "$(hdr "$T/$x.hdr" ETag)" "\"sha256:$(sha256_hex "$T/$x.bin")\""
done
req "blob c now" 200 "$URL/v1/blobs/sha256:$C"
check_same "blob c now: bytes" "$LAST.body" "$T/c.bin"
check_eq "b's cache file holds b now" "$(sha256_hex "$(blob_path "$B")")" "$B"
check_eq "c's cache file holds c now" "$(sha256_hex "$(blob_path "$C")")" "$C"

req "after the restart: a" 200 "$URL/v1/files/m.zt/objects/a/data"
check_same "after the restart: a bytes" "$LAST.body" "$T/a.bin"
check_eq "after the restart: a ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$A\""
check_eq "two fills: b and c, not a" "$(metric "$URL" '^ztensord_upstream_fills_total')" 2
check_eq "three items checked" "$(metric "$URL" '^ztensord_cache_checks_total')" 3
check_eq "two checks failed" "$(metric "$URL" '^ztensord_cache_check_failures_total')" 2
sent=$(($(origin_bytes) - o0))
note "origin bytes after the restart: $sent (b and c: $((2 * MIB)))"
check "the origin sent b and c" [ "$sent" -ge $((2 * MIB)) ]
check "the origin did not send a again" [ "$sent" -lt $((3 * MIB)) ]
grep -q 'do not hash' "$D_ERR" && ok "the wrong items are logged" ||
    bad "the wrong items are logged" "$(tail -3 "$D_ERR")"
req "again: b from the cache" 200 "$URL/v1/files/m.zt/objects/b/data"
check_same "again: b bytes" "$LAST.body" "$T/b.bin"
check_eq "again: no new fill" "$(metric "$URL" '^ztensord_upstream_fills_total')" 2
finish
