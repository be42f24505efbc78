#!/bin/bash
# How a safetensors view's body goes out (issue 23):
#  - memory: 64 downloads of a 1 GiB view must not grow the server's VmRSS.
#    Four GETs of the view of a 40 MiB raw tensor each read 24 MiB of the body,
#    then stop reading, so the server is certainly in the middle of sending all
#    four; its VmRSS (anonymous and file pages mapped) may then have grown by
#    less than 16 MiB. A response that maps the source file counts every page
#    it has sent in VmRSS (at least 4 x 24 MiB here). Released, each download
#    is the whole view, cmp-equal to `zt convert`'s output.
#  - many small tensors: the view of 3,000 tensors of 100 bytes (64-byte
#    aligned in the .zt: 3,000 file spans with gaps between them, read
#    together) is zt convert's output, whole and in 30 random ranges.
#   t_view_send.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$1" "$2"

R=$T/root
mkdir -p "$R"
rand "$T/w.bin" $((40 << 20))
pack "$R/big.zt" w=u8:$((40 << 20)):"$T/w.bin" || finish
"$ZT" convert "$R/big.zt" -o "$T/big.safetensors" >/dev/null || { bad "zt convert" "failed"; finish; }
rm -f "$T/w.bin"

# 3,000 tensors of 100 bytes, 64-byte aligned in the .zt, and one more of other bytes
rand "$T/s.bin" 100
args=()
for i in $(seq 0 2999); do args+=("t.$i=u8:100:$T/s.bin"); done
rand "$T/s.bin" 100
args+=("last=u8:100:$T/s.bin")
pack "$R/small.zt" "${args[@]}" || finish
"$ZT" convert "$R/small.zt" -o "$T/small.safetensors" >/dev/null || { bad "zt convert small.zt" "failed"; finish; }

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

# ---- many small tensors: file spans with gaps, read together
size=$(stat -c %s "$T/small.safetensors")
http "$T/sv" "$URL/v1/files/small.zt/safetensors"
check_code "3,000 small tensors: the view" 200
check_same "3,000 small tensors: the view is zt convert's output" "$T/sv.body" "$T/small.safetensors"
bad_ranges=0
for i in $(seq 30); do
    a=$(( (RANDOM * 32768 + RANDOM) % size ))
    b=$(( a + (RANDOM * 32768 + RANDOM) % (size - a) ))
    curl -s -r "$a-$b" -o "$T/sr" "$URL/v1/files/small.zt/safetensors"
    slice "$T/small.safetensors" "$a" $((b - a + 1)) >"$T/sw"
    cmp -s "$T/sw" "$T/sr" || {
        bad_ranges=$((bad_ranges + 1))
        note "range $a-$b differs"
    }
done
check_eq "3,000 small tensors: 30 random ranges equal zt convert's slices" "$bad_ranges" 0
finish
