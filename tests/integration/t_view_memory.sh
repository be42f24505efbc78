#!/bin/bash
# The memory a safetensors view's downloads hold (issue 23: 64 downloads of a
# 1 GiB view must not grow the server's VmRSS): four GETs of the view of a
# 40 MiB raw tensor each read 24 MiB of the body, then stop reading, so the
# server is certainly in the middle of sending all four; its VmRSS (anonymous
# and file pages mapped) may then have grown by less than 16 MiB. A response
# that maps the source file counts every page it has sent in VmRSS (at least
# 4 x 24 MiB here). Released, each download is the whole view, cmp-equal to
# `zt convert`'s output.
#   t_view_memory.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$1" "$2"

R=$T/root
mkdir -p "$R"
rand "$T/w.bin" $((40 << 20))
pack "$R/big.zt" w=u8:$((40 << 20)):"$T/w.bin" || finish
"$ZT" convert "$R/big.zt" -o "$T/big.safetensors" >/dev/null || { bad "zt convert" "failed"; finish; }
rm -f "$T/w.bin"

start_daemon "$R" || finish
V=/v1/files/big.zt/safetensors
http "$T/warm" "$URL$V" # the view built, a reader's buffer allocated once
check_code "a first download" 200
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$D_PID/status"; }
before=$(rss_kib)
hpids=()
for i in 1 2 3 4; do
    held_get "h$i" "$PORT" "$V" $((24 << 20))
    hpids+=("$HELD_PID")
    check_eq "download $i: 200 once 24 MiB of the body arrived" "$HELD_STATUS" 200
done
during=$(rss_kib)
note "VmRSS before: $before KiB; with the four downloads held at 24 MiB: $during KiB"
check "VmRSS grew by less than 16 MiB ($before -> $during KiB)" test $((during - before)) -lt $((16 << 10))
for i in 1 2 3 4; do
    held_release "h$i" "${hpids[$((i - 1))]}"
    check_eq "download $i: released, 200 with every byte" "$HELD_RESULT" "200 $(stat -c %s "$T/big.safetensors")"
    check_same "download $i: zt convert's output" "$T/h$i" "$T/big.safetensors"
done
finish
