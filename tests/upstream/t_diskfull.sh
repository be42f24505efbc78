#!/usr/bin/env bash
# t_diskfull: the cache directory on a small tmpfs (8 MiB) and a component larger than
# the free space: the client gets a clear JSON error or a response cut short (never a
# complete-looking body), nothing partial is left in the cache (tmp/ empty, no item), the
# sidecar keeps serving what fits, and a restart on the same cache is clean. Needs root to
# mount the tmpfs (prints SKIP otherwise).
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin" "$T/side" "$T/fs"
rand "$T/big.bin" $((12 << 20))
rand "$T/s.bin" 4096
pack "$T/origin/big.zt" big=u8:$((12 << 20)):"$T/big.bin" || finish
pack "$T/origin/small.zt" s=u8:4096:"$T/s.bin" || finish
if ! mount -t tmpfs -o size=8m tmpfs "$T/fs" 2>"$T/mount.err"; then
    skip "cache disk full" "cannot mount a tmpfs: $(head -c 200 "$T/mount.err")"
    finish
fi
at_exit "umount -l '$T/fs' 2>/dev/null"
start_origin "$T/origin" || finish
start_sidecar "$T/side" "$O_URL" "$T/fs/cache" --cache-size 1G || finish

code=$(curl -s --max-time 60 -o "$T/big.body" -w '%{http_code}' "$URL/v1/files/big.zt/objects/big/data")
rc=$?
note "12 MiB component into an 8 MiB cache disk: HTTP $code, curl exit $rc, $(stat -c %s "$T/big.body") bytes"
if [ "$code" = 200 ]; then
    check "a 200 is cut short (curl fails), never complete" [ "$rc" != 0 ]
    check "a 200 is cut short: fewer bytes than the component" \
        [ "$(stat -c %s "$T/big.body")" -lt $((12 << 20)) ]
else
    check_eq "a clear 507" "$code" 507
    check_match "the error is JSON naming the cause" "$(cat "$T/big.body")" \
        '"code":"insufficient_storage".*'
fi
check "daemon alive" daemon_alive "$D_PID"
for i in $(seq 1 40); do
    [ "$(metric "$URL" '^ztensord_upstream_fills_in_flight')" = 0 ] && break
    sleep 0.25
done
check_eq "no fill left running" "$(metric "$URL" '^ztensord_upstream_fills_in_flight')" 0
check_eq "nothing partial in tmp/" "$(find "$T/fs/cache/tmp" -type f | wc -l)" 0
check_eq "no item for the component" \
    "$(find "$T/fs/cache/blobs" "$T/fs/cache/parts" -type f -size +8M 2>/dev/null | wc -l)" 0
http "$T/s" "$URL/v1/files/small.zt/objects/s/data"
check_code "what fits is still served: 200" 200
check_same "what fits is still served: the bytes" "$T/s.body" "$T/s.bin"
stop_daemon
start_sidecar "$T/side" "$O_URL" "$T/fs/cache" --cache-size 1G || finish
http "$T/s2" "$URL/v1/files/small.zt/objects/s/data"
check_code "after a restart on the same cache: 200" 200
check_same "after a restart: the bytes" "$T/s2.body" "$T/s.bin"
check_eq "after a restart: tmp/ empty" "$(find "$T/fs/cache/tmp" -type f | wc -l)" 0
stop_daemon
finish
