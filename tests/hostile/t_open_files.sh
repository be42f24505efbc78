#!/bin/bash
# More files than may be open at once (issue 14). With --max-open-files 8, a root of 120
# files serves every one byte-exact, in turns, while the daemon's descriptors stay within
# 8 + 2 of what it holds serving an empty root (/proc/PID/fd, counted after each batch).
# A response in flight keeps its file open while every other file is opened after it: a
# zstd component decoded from the file's mapping, sent slowly (8 MiB at 1 MB/s) while 60
# others are read with --max-open-files 2, arrives byte-exact. Under `ulimit -n 96`, where the default
# budget (4096) is more than the limit, all 120 files are served and listed as valid, and
# the idle daemon uses (almost) no CPU: nothing retries in a loop.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
E=$T/empty
mkdir -p "$R" "$E"
N=120
for i in $(seq 0 $((N - 1))); do
    rand "$T/r$i.raw" 64
    pack "$R/f$i.zt" w=u8:64:"$T/r$i.raw" || finish
done
text "$T/z.raw" $((8 << 20))
pack "$R/z.zt" --compress t=u8:$((8 << 20)):"$T/z.raw" || finish

fds() { find "/proc/$D_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# all_served FROM TO: every file's component, compared with its raw bytes; prints the
# number that differ and the most descriptors seen (after each batch of 10).
all_served() {
    local i wrong=0 most=0 n
    for i in $(seq "$1" "$2"); do
        curl -s --max-time 10 -o "$T/got" "$URL/v1/files/f$i.zt/objects/w/data"
        cmp -s "$T/got" "$T/r$i.raw" || wrong=$((wrong + 1))
        if [ $((i % 10)) = 9 ]; then
            n=$(fds)
            [ "$n" -gt "$most" ] && most=$n
        fi
    done
    echo "$wrong $most"
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$D_PID/stat"; }

# ---- the baseline: the same daemon on an empty root
start_daemon "$E" --max-open-files 8 --verify-digests=false || finish
curl -s -o /dev/null "$URL/v1/files"
EMPTY=$(fds)
note "descriptors serving an empty root: $EMPTY"

# ---- 121 files, at most 8 open
start_daemon "$R" --max-open-files 8 --verify-digests=false || finish
check "after start-up: at most $EMPTY + 8 descriptors ($(fds))" [ "$(fds)" -le $((EMPTY + 8)) ]
read -r wrong most < <(all_served 0 $((N - 1)))
check_eq "all $N files served byte-exact, one after another" "$wrong" 0
check "descriptors stayed within $EMPTY + 8 + 2 (most seen: $most)" [ "$most" -le $((EMPTY + 10)) ]
read -r wrong most < <(all_served 0 $((N - 1)))
check_eq "and again, each file opened anew" "$wrong" 0
check_eq "listed: $((N + 1)) files, all valid" \
    "$(curl -s "$URL/v1/files" | grep -o '"objects":[0-9]*,"status":"ok"' | wc -l)" $((N + 1))
metric() { curl -s "$URL/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
check "/metrics: at most 8 open ($(metric 'ztensord_open_files{state="open"}'))" \
    [ "$(metric 'ztensord_open_files{state="open"}')" -le 8 ]
check_eq "/metrics: the limit" "$(metric 'ztensord_open_files{state="limit"}')" 8
check_ge "/metrics: files opened again" "$(metric ztensord_file_reopens_total)" $((2 * N - 8))
# The same root with the default budget holds every file open: the bound above is the
# option's doing.
start_daemon "$R" --verify-digests=false || finish
note "with the default --max-open-files: $(fds) descriptors"
check "the default budget keeps more open ($(fds) > $EMPTY + 100)" [ "$(fds)" -gt $((EMPTY + 100)) ]

# ---- a response in flight survives the eviction of its file
start_daemon "$R" --max-open-files 2 --verify-digests=false || finish
$HELP slowget "$PORT" /v1/files/z.zt/objects/t/data "$T/z.got" $((1 << 20)) >"$T/z.code" &
ZPID=$!
sleep 0.5
read -r wrong most < <(all_served 0 29)
check_eq "30 files served while the slow download runs" "$wrong" 0
check "the slow download was still running" kill -0 "$ZPID"
read -r wrong most < <(all_served 30 59)
check_eq "30 more" "$wrong" 0
wait "$ZPID"
check_eq "the slow download: 200" "$(cat "$T/z.code")" 200
check_same "the decoded component arrived byte-exact" "$T/z.got" "$T/z.raw"
read -r wrong most < <(all_served 60 $((N - 1)))
check_eq "the others afterwards" "$wrong" 0
daemon_alive "the daemon is still up"

# ---- RLIMIT_NOFILE below the budget: ulimit -n 96
cat >"$T/limited" <<SH
#!/bin/sh
ulimit -n 96
exec "$ZTENSORD" "\$@"
SH
chmod +x "$T/limited"
REAL=$ZTENSORD
ZTENSORD=$T/limited
start_daemon "$R" --verify-digests=false || finish
ZTENSORD=$REAL
check_match "the budget is lowered to half the limit" "$(cat "$D_ERR")" 'at most 48 files are kept open'
check_eq "listed: $((N + 1)) files, all valid" \
    "$(curl -s "$URL/v1/files" | grep -o '"objects":[0-9]*,"status":"ok"' | wc -l)" $((N + 1))
read -r wrong most < <(all_served 0 $((N - 1)))
check_eq "all $N files served byte-exact" "$wrong" 0
check "descriptors below the limit (most seen: $most)" [ "$most" -lt 96 ]
c0=$(cpu_ticks)
sleep 2
c1=$(cpu_ticks)
check "idle for 2 s: at most 0.2 s of CPU ($((c1 - c0)) ticks of $(getconf CLK_TCK)/s)" \
    [ $((c1 - c0)) -le $(($(getconf CLK_TCK) / 5)) ]
check_nomatch "no file failed to open" "$(cat "$D_ERR")" 'is not served|cannot open .* again'
stop_daemon
finish
