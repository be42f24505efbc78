#!/usr/bin/env bash
# zt pull's memory (issue 12, "Peak RSS < 64 MiB"): bytes landed ahead of
# the hashing are bounded by a window (32 MiB in all) instead of the
# component's size. A 384 MiB file of one component is pulled from ztensord
# on 127.0.0.1 with 8 connections; while it runs, the resident part of the
# output file's mapping (/proc/PID/smaps, sampled every 10 ms) must stay
# under 48 MiB (the window plus the pages being copied), and the peak RSS of
# the whole process (VmHWM) under 64 MiB when the build has no sanitizer
# (ASan's shadow memory is not the pull's). Without flow control the mapping
# held 250+ MiB here.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root" "$T/out"
MiB=$((1 << 20))
rand "$T/w.raw" $((384 * MiB))
pack "$root/big.zt" w=u8:$((384 * MiB)):"$T/w.raw" || rfinish
rm -f "$T/w.raw"
start_daemon "$root" || rfinish
cat "$root/big.zt" >/dev/null # the origin's bytes in the page cache: the network outruns sha256

"$ZT" pull --quiet --connections 8 "$URL/v1/files/big.zt" -o "$T/out" 2>"$T/pull.err" &
pid=$!
max_map=0 hwm=0
for _ in $(seq 1 6000); do # up to 60 s
    kill -0 "$pid" 2>/dev/null || break
    m=$(awk '/^[0-9a-f]+-[0-9a-f]+ / {inpart = /\.ztpart$/} inpart && /^Rss:/ {s += $2} END {print s + 0}' \
        "/proc/$pid/smaps" 2>/dev/null)
    [ -n "$m" ] && [ "$m" -gt "$max_map" ] && max_map=$m
    h=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
    [ -n "$h" ] && hwm=$h
    sleep 0.01
done
wait "$pid"
check_eq "pull of a 384 MiB component succeeds" "$?" 0
check "byte-exact" cmp -s "$root/big.zt" "$T/out/big.zt"
note "largest resident part of the output mapping: $((max_map / 1024)) MiB; VmHWM $((hwm / 1024)) MiB"
check "the output mapping stays under 48 MiB resident ($((max_map / 1024)) MiB)" \
    test "$max_map" -lt $((48 * 1024))
if [ "${ZT_SANITIZED:-0}" = 1 ]; then
    skip "peak RSS < 64 MiB" "sanitizer build: ASan's shadow memory counts in RSS"
else
    check "peak RSS under 64 MiB ($((hwm / 1024)) MiB)" test "$hwm" -lt $((64 * 1024))
fi
rfinish
