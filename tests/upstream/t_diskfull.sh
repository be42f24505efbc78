#!/usr/bin/env bash
# t_diskfull: the sidecar's cache_dir on a small tmpfs (root only; a SKIP line when
# mount is refused) and a component larger than its free space. The client gets a JSON
# 507 (or, if the headers were already sent, a cut response curl sees as cut, never a
# complete-looking body); nothing partial is left under the cache dir (tmp/ empty, no
# item); the sidecar keeps serving what fits; a restart on the same cache_dir is clean.
. "$(dirname "$0")/lib.sh" "$@"

FS=$T/fs
mkdir -p "$FS"
if ! mount -t tmpfs -o size=8m tmpfs "$FS" 2>"$T/mount.err"; then
    skip "every disk-full check" "cannot mount a tmpfs: $(head -c 200 "$T/mount.err")"
    finish
fi
at_exit "umount -l '$FS' 2>/dev/null"
C=$FS/cache

mkdir -p "$T/origin" "$T/side"
rand "$T/big.bin" $((12 << 20))
rand "$T/small.bin" $((1 << 20))
pack "$T/origin/m.zt" big=u8:$((12 << 20)):"$T/big.bin" small=u8:$((1 << 20)):"$T/small.bin" || finish
start_origin "$T/origin" || finish
# cache_size above the disk's size: only the disk can say no
start_sidecar "$T/side" "$O_URL" "$C" --cache-size 64M || finish

# items: the cache's items and fills in progress, one path a line
items() { find "$C/blobs" "$C/parts" "$C/tmp" -type f 2>/dev/null | sort; }

# ---- a component larger than the free space
code=$(curl -s --max-time 60 -D "$T/big.h" -o "$T/big.body" -w '%{http_code}' \
    "$URL/v1/files/m.zt/objects/big/data")
rc=$?
if [ "$code" = 507 ]; then
    check_match "big: 507 is JSON insufficient_storage" "$(cat "$T/big.body")" \
        '"error".*"code": *"insufficient_storage"'
else
    # headers already sent: curl must see the body cut, never whole
    check "big: ${code} with a body curl sees as cut (curl rc $rc)" [ "$rc" -ne 0 ]
    whole=no
    cmp -s "$T/big.body" "$T/big.bin" && whole=yes
    check_eq "big: body is not the whole component" "$whole" no
fi
check_eq "big: tmp/ empty, no item left" "$(items)" ""
check "big: the disk is free again ($(df --output=used -k "$FS" | tail -1) KiB used)" \
    [ "$(df --output=used -k "$FS" | tail -1)" -lt 1024 ]

# ---- what fits is still served, and cached
http "$T/s" "$URL/v1/files/m.zt/objects/small/data"
check_code "small after the failed fill: 200" 200
check_same "small: bytes" "$T/s.body" "$T/small.bin"
check_eq "small: one item cached" "$(items | wc -l)" 1
http "$T/s2" "$URL/v1/files/m.zt/objects/small/data"
check_code "small again: 200" 200
check_same "small again: bytes" "$T/s2.body" "$T/small.bin"
# a range of big: the item is the whole component, which cannot fit either, so the
# range is cut the same way (the headers left before the fill failed), never passed
# off as complete
http "$T/r" -H 'Range: bytes=0-99999' "$URL/v1/files/m.zt/objects/big/data"
head -c 100000 "$T/big.bin" >"$T/r.want"
clean=no
{ [ "$CODE" = 507 ] || [ "$CURL_RC" -ne 0 ]; } && clean=yes
check_eq "big: a range fails cleanly too (code $CODE, curl rc $CURL_RC)" "$clean" yes
check_eq "big range: tmp/ empty, only small's item" "$(items | wc -l)" 1

# ---- the big one again: still a clean failure, the small item kept or evicted whole
code=$(curl -s --max-time 60 -o "$T/big2.body" -w '%{http_code}' "$URL/v1/files/m.zt/objects/big/data")
rc=$?
clean=no
{ [ "$code" = 507 ] || [ "$rc" -ne 0 ]; } && clean=yes
check_eq "big again: fails cleanly (code $code, curl rc $rc)" "$clean" yes
check_eq "big again: tmp/ empty" "$(find "$C/tmp" -type f | wc -l)" 0
stop_daemon

# ---- restart on the same cache_dir: clean, and serves
start_sidecar "$T/side" "$O_URL" "$C" --cache-size 64M || finish
check_eq "restart: tmp/ empty" "$(find "$C/tmp" -type f | wc -l)" 0
http "$T/s3" "$URL/v1/files/m.zt/objects/small/data"
check_code "restart: small 200" 200
check_same "restart: small bytes" "$T/s3.body" "$T/small.bin"
finish
