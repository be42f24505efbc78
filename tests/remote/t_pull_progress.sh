#!/usr/bin/env bash
# zt pull's progress display (issue 26 section 3), against ztensord on
# 127.0.0.1 through relay.py, with --progress (the display forced on, one
# line each, as it is not a terminal):
#   - a single-file pull knows its total from the first answer: every line
#     shows the file's size as the total;
#   - every line has its fields: done / total, resumed and skipped apart, the
#     rate, the ETA and the files;
#   - a resume after kill -9 shows the bytes the killed run left on disk as
#     resumed on every line (the figure of the last line), and the last line
#     says how much was resumed, fetched and skipped;
#   - a second run shows the file as skipped.
# No assertion depends on how long a step takes: the relay's stall only
# makes sure that the first run is killed mid-file.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
MiB=$((1 << 20))
rand "$T/w.raw" $((16 * MiB))
pack "$root/big.zt" w=u8:$((16 * MiB)):"$T/w.raw" || rfinish
start_daemon "$root" || rfinish
# The 40th range of 256 KiB gets half its body, then nothing for 60 s.
start_relay "$PORT" stall 40 60 || rfinish
opts=(--connections 1 --chunk-size 256K --progress)

# lines FILE: the progress lines of a stderr (not the summary or messages).
lines() { tr '\r' '\n' <"$1" | grep -E ' MiB / ' || true; }
FMT='^[0-9]+\.[0-9] MiB / ([0-9]+\.[0-9]) MiB \(resumed [0-9]+\.[0-9] MiB, skipped [0-9]+\.[0-9] MiB\)  [0-9]+\.[0-9] MiB/s  ETA ([0-9]+ s|-)  files [0-9]+/1$'

note "a first pull, killed in the middle of the file"
"$ZT" pull "${opts[@]}" "http://127.0.0.1:$RPORT/v1/files/big.zt" -o "$T/o" 2>"$T/p1.err" &
pid=$!
for _ in $(seq 1 6000); do # up to 60 s for a prefix recorded on disk
    grep -q '^p ' "$T/o/big.zt.ztpull" 2>/dev/null && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
check "a prefix was recorded before the kill" grep -q '^p ' "$T/o/big.zt.ztpull"
check_ge "progress lines before the kill" "$(lines "$T/p1.err" | wc -l)" 1
bad_lines=$(lines "$T/p1.err" | grep -cvE "$FMT")
check_eq "every line has every field" "$bad_lines" 0
check_eq "every line knows the total (16.0 MiB) from the first answer" \
    "$(lines "$T/p1.err" | grep -oE ' / [0-9.]+ MiB' | sort -u)" " / 16.0 MiB"

note "the resume"
start_relay "$PORT" pass || rfinish
"$ZT" pull "${opts[@]}" "http://127.0.0.1:$RPORT/v1/files/big.zt" -o "$T/o" 2>"$T/p2.err"
check_eq "the resume: exit 0" "$?" 0
check "byte-exact" cmp -s "$root/big.zt" "$T/o/big.zt"
last=$(tail -n 1 "$T/p2.err")
check_match "the last line says resumed, fetched and skipped" "$last" \
    '^zt pull: 1 of 1 files .*16.0 MiB: [0-9.]+ MiB resumed, [0-9.]+ MiB fetched, 0.0 MiB skipped'
mib=$(grep -oE '[0-9.]+ MiB resumed' <<<"$last" | cut -d' ' -f1)
check_ne "some bytes resumed" "$mib" "0.0"
check_eq "every line has every field" "$(lines "$T/p2.err" | grep -cvE "$FMT")" 0
check_eq "every line shows the resumed bytes apart ($mib MiB)" \
    "$(lines "$T/p2.err" | grep -oE 'resumed [0-9.]+ MiB' | sort -u)" "resumed $mib MiB"

note "a second run: skipped"
"$ZT" pull "${opts[@]}" "http://127.0.0.1:$RPORT/v1/files/big.zt" -o "$T/o" 2>"$T/p3.err"
check_eq "exit 0" "$?" 0
check_match "the last progress line shows it skipped" "$(lines "$T/p3.err" | tail -n 1)" \
    '^16.0 MiB / 16.0 MiB \(resumed 0.0 MiB, skipped 16.0 MiB\).*files 1/1$'
check_match "the last line too" "$(tail -n 1 "$T/p3.err")" \
    '\(1 already complete\), 16.0 MiB: 0.0 MiB resumed, 0.0 MiB fetched, 16.0 MiB skipped'
rfinish
