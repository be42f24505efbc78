#!/bin/bash
# GET /metrics: Prometheus text format that `promtool check metrics` accepts, idle and
# while the daemon is under load; every family the documentation lists (requests by route
# and code, response bytes, the duration histogram, in-flight requests, upload bytes and
# outcomes, catalog files valid/invalid, catalog reloads, build info); counters that move
# by exactly what the test sent, also under concurrency; a consistent histogram with
# buckets up to 600 s that a request of over 10 s lands in; the standard process_*
# families with sane values; and the body bytes of responses cut short by the client
# counted as what reached the client, not 0.
. "$(dirname "$0")/lib.sh" "$@"

need_tool promtool prometheus
need_tool curl

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 65536
rand "$T/c.raw" 3000
BIG=$((32 << 20)) # larger than every socket buffer between the daemon and a client
rand "$T/big.raw" $BIG
pack "$R/a.zt" w=u8:65536:"$T/w.raw"
pack "$R/big.zt" big=u8:$BIG:"$T/big.raw"
pack "$T/c.zt" c=u8:3000:"$T/c.raw"
rand "$T/up-big.zt" 4194304
printf 'not a zTensor file\n' >"$R/bad.zt"
printf 'also not a zTensor file\n' >"$T/bad-upload.zt"

T_START=$(date +%s)
start_daemon "$R" --allow-anonymous-writes --disk-reserve 0 || finish

N=0
# scrape: the metrics into $T/m.N (N counts up); sets M to the file.
scrape() {
    N=$((N + 1))
    M=$T/m.$N
    curl -sS --max-time 10 -D "$M.hdr" -o "$M" "$URL/metrics"
}
# val FILE SERIES: the value of one series (exact name and labels), or "absent".
val() { awk -v s="$2" '$1 == s { print $2; f = 1 } END { if (!f) print "absent" }' "$1"; }
# delta NAME SERIES BEFORE AFTER WANT
check_delta() {
    local a b
    a=$(val "$3" "$2")
    b=$(val "$4" "$2")
    [ "$a" = absent ] && a=0
    if [ "$b" = absent ]; then
        bad "$1" "$2 absent"
        return
    fi
    check_eq "$1" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.0f", b - a }')" "$5"
}
promcheck() { # NAME FILE
    if promtool check metrics <"$2" >"$2.promtool" 2>&1; then ok "$1"; else bad "$1" "$(head -c 600 "$2.promtool")"; fi
}

# ---- format and families
scrape
S0=$M
promcheck "promtool check metrics (idle)" "$S0"
check_match "Content-Type is the 0.0.4 text format" "$(hdr "$S0.hdr" Content-Type)" '^text/plain; version=0\.0\.4'
for fam in "ztensord_requests_total counter" "ztensord_response_bytes_total counter" \
    "ztensord_request_duration_seconds histogram" "ztensord_requests_in_flight gauge" \
    "ztensord_upload_bytes_total counter" "ztensord_uploads_total counter" \
    "ztensord_catalog_files gauge" "ztensord_catalog_reloads_total counter" \
    "ztensord_open_files gauge" "ztensord_file_reopens_total counter" \
    "ztensord_file_closes_total counter" \
    "ztensord_build_info gauge" "process_cpu_seconds_total counter" \
    "process_resident_memory_bytes gauge" "process_virtual_memory_bytes gauge" \
    "process_open_fds gauge" "process_max_fds gauge" "process_start_time_seconds gauge"; do
    check "family ${fam% *} is a ${fam#* } with HELP" grep -qx "# TYPE $fam" "$S0"
    check "family ${fam% *} has HELP" grep -q "^# HELP ${fam% *} ." "$S0"
done
for o in published rejected failed aborted; do
    check_ne "ztensord_uploads_total{outcome=\"$o\"} present" "$(val "$S0" "ztensord_uploads_total{outcome=\"$o\"}")" absent
done
check_eq "catalog files valid" "$(val "$S0" 'ztensord_catalog_files{state="valid"}')" 2
check_eq "catalog files invalid" "$(val "$S0" 'ztensord_catalog_files{state="invalid"}')" 1
check_eq "open files: the 2 valid ones" "$(val "$S0" 'ztensord_open_files{state="open"}')" 2
check_ge "open files limit" "$(val "$S0" 'ztensord_open_files{state="limit"}')" 1
check_ge "catalog reloads >= 1 after the first scan" "$(val "$S0" ztensord_catalog_reloads_total)" 1
VER=$("$ZTENSORD" --version | awk '{print $2}')
check_match "build_info carries the version of --version ($VER)" "$(grep '^ztensord_build_info{' "$S0")" "version=\"$VER\".*\} 1$"
check_eq "in flight while idle: the scrape itself" "$(val "$S0" ztensord_requests_in_flight)" 1
for le in 10 30 60 120 300 600; do
    check_ne "duration bucket le=\"$le\" present" "$(val "$S0" "ztensord_request_duration_seconds_bucket{route=\"component\",le=\"$le\"}")" absent
done

# ---- process_*: compared with what /proc says about the daemon, read right after
rss=$(val "$S0" process_resident_memory_bytes)
vss=$(val "$S0" process_virtual_memory_bytes)
fds=$(val "$S0" process_open_fds)
maxfds=$(val "$S0" process_max_fds)
start=$(val "$S0" process_start_time_seconds)
cpu0=$(val "$S0" process_cpu_seconds_total)
proc_rss=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$D_PID/status")
proc_fds=$(find "/proc/$D_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
check_ge "process_resident_memory_bytes > 1 MiB" "${rss%.*}" 1048576
# RSS moves while the daemon works after start-up (the verifier hashes, views are laid
# out), so the figure is compared with VmRSS read just before and just after a scrape of
# its own, not with a reading taken later than $S0 (which failed on busy machines).
rss_before=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$D_PID/status")
curl -s --max-time 30 "$URL/metrics" >"$T/rss.prom"
rss_after=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$D_PID/status")
rss_now=$(val "$T/rss.prom" process_resident_memory_bytes)
awk -v a="$rss_now" -v b="$rss_before" -v c="$rss_after" \
    'BEGIN { lo = b < c ? b : c; hi = b < c ? c : b; exit !(a >= lo * 0.8 && a <= hi * 1.25) }' &&
    ok "process_resident_memory_bytes within 25% of VmRSS ($rss_now vs $rss_before..$rss_after)" ||
    bad "process_resident_memory_bytes within 25% of VmRSS" "$rss_now vs $rss_before..$rss_after"
check_ge "process_virtual_memory_bytes >= resident" "${vss%.*}" "${rss%.*}"
check_ge "process_open_fds > 3" "$fds" 4
# Like RSS, the fd count moves while the daemon works (the verifier opens files,
# connections come and go): compare a scrape with /proc read just before and after it,
# once the files are verified (not with $proc_fds, read at another moment).
wait_verified
fds_before=$(find "/proc/$D_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
curl -s --max-time 30 "$URL/metrics" >"$T/fds.prom"
fds_after=$(find "/proc/$D_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
fds_now=$(val "$T/fds.prom" process_open_fds)
awk -v a="$fds_now" -v b="$fds_before" -v c="$fds_after" \
    'BEGIN { lo = b < c ? b : c; hi = b < c ? c : b; exit !(a >= lo - 3 && a <= hi + 3) }' &&
    ok "process_open_fds within 3 of /proc/PID/fd ($fds_now vs $fds_before..$fds_after)" ||
    bad "process_open_fds within 3 of /proc/PID/fd" "$fds_now vs $fds_before..$fds_after"
check_eq "process_max_fds is the soft RLIMIT_NOFILE" "$maxfds" "$(awk '/^Max open files/ { print $4 }' "/proc/$D_PID/limits")"
now=$(date +%s)
awk -v s="$start" -v a="$T_START" -v b="$now" 'BEGIN { exit !(s >= a - 2 && s <= b + 1) }' &&
    ok "process_start_time_seconds between the launch and now ($T_START <= $start <= $now)" ||
    bad "process_start_time_seconds between the launch and now" "$T_START <= $start <= $now"
awk -v c="$cpu0" 'BEGIN { exit !(c >= 0 && c < 600) }' && ok "process_cpu_seconds_total sane ($cpu0)" ||
    bad "process_cpu_seconds_total sane" "$cpu0"

# ---- counters move by exactly what was sent
urls() { # COUNT URL: COUNT copies of URL, for one curl process (keep-alive)
    local i
    for i in $(seq 1 "$1"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$2"; done
}
scrape
A=$M
urls 25 "$URL/v1/files/a.zt/objects/w/data" >"$T/cfg1"
urls 7 "$URL/v1/nope" >>"$T/cfg1"
urls 5 "$URL/v1/files/missing.zt" >>"$T/cfg1"
curl -s -K "$T/cfg1"
scrape
B=$M
check_delta "requests_total{component,200} +25" 'ztensord_requests_total{route="component",code="200"}' "$A" "$B" 25
check_delta "response_bytes_total{component} +25 x 65536" 'ztensord_response_bytes_total{route="component"}' "$A" "$B" $((25 * 65536))
check_delta "duration histogram count{component} +25" 'ztensord_request_duration_seconds_count{route="component"}' "$A" "$B" 25
check_delta "duration +Inf bucket{component} +25" 'ztensord_request_duration_seconds_bucket{route="component",le="+Inf"}' "$A" "$B" 25
check_delta "requests_total{none,404} +7 (unknown route)" 'ztensord_requests_total{route="none",code="404"}' "$A" "$B" 7
check_delta "requests_total{manifest,404} +5 (missing file)" 'ztensord_requests_total{route="manifest",code="404"}' "$A" "$B" 5
check_delta "requests_total{metrics,200} +1 (the scrape before)" 'ztensord_requests_total{route="metrics",code="200"}' "$A" "$B" 1

# ---- uploads: bytes and outcomes
http "$T/put1" -T "$T/c.zt" "$URL/v1/files/c.zt"
check_eq "PUT c.zt: 201" "$CODE" 201
http "$T/put2" -T "$T/bad-upload.zt" "$URL/v1/files/d.zt"
check_match "PUT an invalid file: 4xx" "$CODE" '^4'
# A client that goes away in the middle of its body; while it sends, it is in flight.
# It sends at 256 KiB/s (16 s for its 4 MiB) and is killed once the daemon shows it in
# flight and has counted some of its body bytes (polled, up to 30 s), not after a
# fixed time: a busy machine cannot make it finish or vanish too soon.
ub0=$(val "$B" ztensord_upload_bytes_total)
min0=$(($(stat -c %s "$T/c.zt") + $(stat -c %s "$T/bad-upload.zt")))
curl -s -o /dev/null --limit-rate 256k --max-time 60 -T "$T/up-big.zt" "$URL/v1/files/e.zt" &
slow=$!
seen=0
for i in $(seq 1 300); do
    scrape
    [ "$(val "$M" ztensord_requests_in_flight)" -ge 2 ] &&
        awk -v a="$ub0" -v b="$(val "$M" ztensord_upload_bytes_total)" -v m="$min0" 'BEGIN { exit !(b - a > m) }' &&
        seen=1 && break
    kill -0 "$slow" 2>/dev/null || break
    sleep 0.1
done
check_eq "in flight counts an upload while its body arrives" "$seen" 1
kill "$slow" 2>/dev/null
wait "$slow"
for i in $(seq 1 300); do
    scrape
    [ "$(val "$M" ztensord_requests_in_flight)" = 1 ] && break
    sleep 0.1
done
check_eq "in flight back to 1 (the scrape) once the client is gone" "$(val "$M" ztensord_requests_in_flight)" 1
C=$M
check_delta "uploads_total{published} +1" 'ztensord_uploads_total{outcome="published"}' "$B" "$C" 1
check_delta "uploads_total{rejected} +1" 'ztensord_uploads_total{outcome="rejected"}' "$B" "$C" 1
check_delta "uploads_total{aborted} +1 (client went away)" 'ztensord_uploads_total{outcome="aborted"}' "$B" "$C" 1
check_delta "uploads_total{failed} +0" 'ztensord_uploads_total{outcome="failed"}' "$B" "$C" 0
ub=$(awk -v a="$(val "$B" ztensord_upload_bytes_total)" -v b="$(val "$C" ztensord_upload_bytes_total)" 'BEGIN { printf "%.0f", b - a }')
min=$(($(stat -c %s "$T/c.zt") + $(stat -c %s "$T/bad-upload.zt")))
check_ge "upload_bytes_total grew by at least the two complete bodies ($min)" "$ub" "$min"
[ "$ub" -gt "$min" ] && [ "$ub" -lt $((min + 4194304)) ] && ok "upload_bytes_total: the aborted body counted in part" || bad "upload_bytes_total: the aborted body counted in part" "$ub"
for i in $(seq 1 300); do
    scrape
    [ "$(val "$M" 'ztensord_catalog_files{state="valid"}')" = 3 ] && break
    sleep 0.1
done
check_eq "catalog files valid after the upload" "$(val "$M" 'ztensord_catalog_files{state="valid"}')" 3

# ---- catalog reloads: SIGHUP rescans
R0=$(val "$M" ztensord_catalog_reloads_total)
kill -HUP "$D_PID"
for i in $(seq 1 300); do
    scrape
    [ "$(val "$M" ztensord_catalog_reloads_total)" -gt "$R0" ] && break
    sleep 0.1
done
check_ge "catalog_reloads_total moves on SIGHUP" "$(val "$M" ztensord_catalog_reloads_total)" $((R0 + 1))

# ---- under load: bounded parallel clients, scrapes checked by promtool meanwhile
scrape
L0=$M
NC=400 NR=200 NH=100 NL=100
urls $NC "$URL/v1/files/a.zt/objects/w/data" >"$T/load1"
# One operation per range ("next" between them): without it curl sends every header
# line of the file with every request (and a Range sent twice is invalid: 200).
for i in $(seq 1 $NR); do
    [ "$i" -gt 1 ] && echo next
    printf 'url = "%s"\noutput = "/dev/null"\nheader = "Range: bytes=%d-%d"\n' "$URL/v1/files/a.zt/objects/w/data" "$i" $((i + 999))
done >"$T/load2"
urls $NH "$URL/healthz" >"$T/load3"
urls $NL "$URL/v1/files" >>"$T/load3"
pids=()
curl -s --no-progress-meter -Z --parallel-max 8 -K "$T/load1" & pids+=($!)
curl -s --no-progress-meter -Z --parallel-max 8 -K "$T/load2" & pids+=($!)
curl -s --no-progress-meter -Z --parallel-max 4 -K "$T/load3" & pids+=($!)
if command -v wrk >/dev/null; then
    wrk -t1 -c16 -d2s "$URL/v1/files/a.zt" >"$T/wrk.out" 2>&1 & pids+=($!)
fi
scrapes=0 prom_ok=0 mono=1 last=0
for i in $(seq 1 15); do
    scrape
    scrapes=$((scrapes + 1))
    promtool check metrics <"$M" >/dev/null 2>&1 && prom_ok=$((prom_ok + 1))
    tot=$(awk '/^ztensord_requests_total\{/ { s += $2 } END { printf "%.0f", s }' "$M")
    [ "$tot" -ge "$last" ] || mono=0
    last=$tot
    sleep 0.1
done
for p in "${pids[@]}"; do wait "$p"; done 2>/dev/null
check_eq "promtool accepts every scrape taken under load ($scrapes)" "$prom_ok" "$scrapes"
check_eq "requests_total never goes down between scrapes" "$mono" 1
scrape
L1=$M
promcheck "promtool check metrics (after load)" "$L1"
check_delta "under load: requests_total{component,200} +$NC" 'ztensord_requests_total{route="component",code="200"}' "$L0" "$L1" $NC
check_delta "under load: requests_total{component,206} +$NR" 'ztensord_requests_total{route="component",code="206"}' "$L0" "$L1" $NR
check_delta "under load: response_bytes{component} exact" 'ztensord_response_bytes_total{route="component"}' "$L0" "$L1" $((NC * 65536 + NR * 1000))
check_delta "under load: requests_total{healthz,200} +$NH" 'ztensord_requests_total{route="healthz",code="200"}' "$L0" "$L1" $NH
check_delta "under load: requests_total{list,200} +$NL" 'ztensord_requests_total{route="list",code="200"}' "$L0" "$L1" $NL

# ---- the histogram is consistent in the last scrape
hist=$(awk '
    /^ztensord_request_duration_seconds_bucket\{/ {
        match($1, /route="[^"]*"/); r = substr($1, RSTART, RLENGTH)
        if (r != prev) { last = -1; prev = r }
        if ($2 + 0 < last) print "non-monotonic buckets for " r
        last = $2 + 0
        if ($1 ~ /le="\+Inf"/) inf[r] = $2 + 0
    }
    /^ztensord_request_duration_seconds_count\{/ { match($1, /route="[^"]*"/); cnt[substr($1, RSTART, RLENGTH)] = $2 + 0 }
    /^ztensord_requests_total\{/ { match($1, /route="[^"]*"/); req[substr($1, RSTART, RLENGTH)] += $2 }
    END {
        for (r in cnt) {
            if (inf[r] != cnt[r]) print "+Inf != count for " r
            if (req[r] + 0 != cnt[r]) print "count " cnt[r] " != requests " req[r] + 0 " for " r
        }
    }' "$L1")
check_eq "histogram: buckets non-decreasing, +Inf = count = requests by route" "$hist" ""

# ---- responses cut short: the body bytes that reached the client, not 0
# A client with a small receive buffer reads WANT body bytes of the 32 MiB component,
# then closes (a reset). What the daemon counts is what the client's TCP acknowledged:
# what the client read, plus what sat unread in its receive buffer (<= 128 KiB here),
# plus the response headers; minus at most a delayed ACK's worth. Tolerance: -64 KiB
# .. +256 KiB.
BIGURL=/v1/files/big.zt/objects/big/data
client() { # WANT SLEEP: after SLEEP seconds, read WANT body bytes; prints how many it read
    "$PY" - "$PORT" "$BIGURL" "$@" <<'EOF'
import socket, sys, time
port, path, want, pause = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.settimeout(30)
s.connect(("127.0.0.1", port))
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
time.sleep(pause)  # meanwhile the daemon cannot finish: the body is larger than the buffers
buf = b""
while b"\r\n\r\n" not in buf and len(buf) < 65536:
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
body = len(buf.split(b"\r\n\r\n", 1)[1]) if b"\r\n\r\n" in buf else 0
while body < want:
    chunk = s.recv(min(65536, want - body))
    if not chunk:
        break
    body += len(chunk)
s.close()
print(body)
EOF
}
# wait_count SERIES MIN: scrape until SERIES >= MIN (30 s at most); the scrape is in M.
wait_count() {
    local i
    for i in $(seq 1 300); do
        scrape
        [ "$(val "$M" "$1")" != absent ] && [ "$(val "$M" "$1")" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
REQ200='ztensord_requests_total{route="component",code="200"}'
BYTES='ztensord_response_bytes_total{route="component"}'
for want in $((1 << 20)) $((4 << 20)) $((12 << 20)); do
    scrape
    P=$M
    got=$(client "$want" 0)
    wait_count "$REQ200" $(($(val "$P" "$REQ200") + 1)) || bad "the cut response ($want) is counted" "never"
    d=$(awk -v a="$(val "$P" "$BYTES")" -v b="$(val "$M" "$BYTES")" 'BEGIN { printf "%.0f", b - a }')
    [ "$got" -eq "$want" ] && [ "$d" -ge $((got - 65536)) ] && [ "$d" -le $((got + 262144)) ] &&
        ok "cut after $got of $BIG body bytes: response_bytes_total grew by $d (diff $((d - got)))" ||
        bad "cut after $want of $BIG body bytes: response_bytes_total grows by about that" "read $got, counted $d"
done

# ---- a request of over 10 s lands in the le="30" bucket, not le="10"
scrape
P=$M
got=$(client "$BIG" 11)
check_eq "the slow client read the whole body" "$got" "$BIG"
wait_count "$REQ200" $(($(val "$P" "$REQ200") + 1)) || bad "the slow response is counted" "never"
check_delta "slow request: not in le=10" 'ztensord_request_duration_seconds_bucket{route="component",le="10"}' "$P" "$M" 0
check_delta "slow request: in le=30" 'ztensord_request_duration_seconds_bucket{route="component",le="30"}' "$P" "$M" 1
check_delta "slow request: in le=600" 'ztensord_request_duration_seconds_bucket{route="component",le="600"}' "$P" "$M" 1
check_delta "slow request: complete, all of its bytes counted" "$BYTES" "$P" "$M" "$BIG"
promcheck "promtool check metrics (at the end)" "$M"
cpu1=$(val "$M" process_cpu_seconds_total)
awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { exit !(b > a) }' &&
    ok "process_cpu_seconds_total grew with the test's traffic ($cpu0 -> $cpu1)" ||
    bad "process_cpu_seconds_total grew with the test's traffic" "$cpu0 -> $cpu1"

finish
