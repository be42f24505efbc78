#!/usr/bin/env bash
# zt pull's memory (issue 12, "Peak RSS < 64 MiB"): bytes landed ahead of
# the hashing are bounded by a window (32 MiB in all) instead of the
# component's size. A 384 MiB file of one component is pulled from ztensord
# on 127.0.0.1 with 8 connections; while it runs, the resident part of the
# output file's mapping (/proc/PID/smaps, sampled every 10 ms) must stay
# under 4 MiB (the bytes are written with pwrite and hashed from pread: the
# window's pages stay in the page cache, out of the process; written and
# hashed through the mapping they held up to 30 MiB), and the peak RSS of
# the whole process (VmHWM) under 64 MiB when the build has no sanitizer
# (ASan's shadow memory is not the pull's). Without flow control the mapping
# held 250+ MiB here. Then a model with a file of 65,536 objects (below).
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
check "the output mapping stays under 4 MiB resident ($((max_map / 1024)) MiB)" \
    test "$max_map" -lt $((4 * 1024))
if [ "${ZT_SANITIZED:-0}" = 1 ]; then
    skip "peak RSS < 64 MiB" "sanitizer build: ASan's shadow memory counts in RSS"
else
    check "peak RSS under 64 MiB ($((hwm / 1024)) MiB)" test "$hwm" -lt $((64 * 1024))
fi

# A model as tests/bench/pull.sh's in small: a file of 65,536 objects (an 11
# MB manifest, a model of ~25 MB) pulled beside a 256 MiB component, four
# files at once. The pull keeps a sha256 of the manifest's bytes, not the
# bytes; its plan is as long as its requests; its output is written with
# pwrite, so the window's pages are not mapped. Before: 101 MiB (Release).
if [ -x "${ZT_GEN_MANY:-}" ]; then
    mkdir -p "$root/model"
    "$ZT_GEN_MANY" "$root/model/m.zt" 65536 1024 || bad "gen_many"
    rand "$T/w.raw" $((256 * MiB))
    pack "$root/model/big.zt" w=u8:$((256 * MiB)):"$T/w.raw"
    rm -f "$T/w.raw"
    cat "$root/model/"*.zt >/dev/null
    kill -HUP "$D_PID" # files added after the start
    for _ in $(seq 1 100); do
        curl -sf -o /dev/null "$URL/v1/files/model/big.zt" &&
            curl -sf -o /dev/null "$URL/v1/files/model/m.zt" && break
        sleep 0.1
    done
    /usr/bin/time -f %M -o "$T/hwm" "$ZT" pull --quiet "$URL/v1/files/model/" -o "$T/out2" \
        2>"$T/pull.err"
    check_eq "pull of the model succeeds ($(head -c 300 "$T/pull.err"))" "$?" 0
    check "byte-exact" cmp -s "$root/model/m.zt" "$T/out2/m.zt"
    hwm=$(tail -1 "$T/hwm")
    note "model of 65,536 objects and 256 MiB: peak RSS $((hwm / 1024)) MiB"
    if [ "${ZT_SANITIZED:-0}" = 1 ]; then
        skip "model: peak RSS < 64 MiB" "sanitizer build: ASan's shadow memory counts in RSS"
    else
        check "model: peak RSS under 64 MiB ($((hwm / 1024)) MiB)" test "$hwm" -lt $((64 * 1024))
    fi
else
    skip "model of 65,536 objects" "ZT_GEN_MANY not set (run ctest)"
fi
rfinish
