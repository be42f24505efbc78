#!/bin/bash
# GET /metrics: Prometheus text format that `promtool check metrics` accepts, idle and
# while the daemon is under load; every family the documentation lists (requests by route
# and code, response bytes, the duration histogram, in-flight requests, upload bytes and
# outcomes, catalog files valid/invalid, catalog reloads, build info); counters that move
# by exactly what the test sent, also under concurrency; a consistent histogram.
. "$(dirname "$0")/lib.sh" "$@"

need_tool promtool prometheus
need_tool curl

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 65536
rand "$T/c.raw" 3000
pack "$R/a.zt" w=u8:65536:"$T/w.raw"
pack "$T/c.zt" c=u8:3000:"$T/c.raw"
rand "$T/up-big.zt" 4194304
printf 'not a zTensor file\n' >"$R/bad.zt"
printf 'also not a zTensor file\n' >"$T/bad-upload.zt"

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
    "ztensord_build_info gauge"; do
    check "family ${fam% *} is a ${fam#* } with HELP" grep -qx "# TYPE $fam" "$S0"
    check "family ${fam% *} has HELP" grep -q "^# HELP ${fam% *} ." "$S0"
done
for o in published rejected failed aborted; do
    check_ne "ztensord_uploads_total{outcome=\"$o\"} present" "$(val "$S0" "ztensord_uploads_total{outcome=\"$o\"}")" absent
done
check_eq "catalog files valid" "$(val "$S0" 'ztensord_catalog_files{state="valid"}')" 1
check_eq "catalog files invalid" "$(val "$S0" 'ztensord_catalog_files{state="invalid"}')" 1
check_ge "catalog reloads >= 1 after the first scan" "$(val "$S0" ztensord_catalog_reloads_total)" 1
VER=$("$ZTENSORD" --version | awk '{print $2}')
check_match "build_info carries the version of --version ($VER)" "$(grep '^ztensord_build_info{' "$S0")" "version=\"$VER\".*\} 1$"
check_eq "in flight while idle: the scrape itself" "$(val "$S0" ztensord_requests_in_flight)" 1

# ---- counters move by exactly what was sent
urls() { # COUNT URL: COUNT copies of URL, for one curl process (keep-alive)
    local i
    for i in $(seq 1 "$1"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$2"; done
}
scrape
A=$M
urls 25 "$URL/v1/files/a.zt/objects/w/data" >"$T/cfg1"
urls 7 "$URL/nope" >>"$T/cfg1"
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
curl -s -o /dev/null --limit-rate 256k --max-time 1.5 -T "$T/up-big.zt" "$URL/v1/files/e.zt" &
slow=$!
seen=0
for i in $(seq 1 20); do
    scrape
    [ "$(val "$M" ztensord_requests_in_flight)" -ge 2 ] && seen=1 && break
    sleep 0.05
done
check_eq "in flight counts an upload while its body arrives" "$seen" 1
wait "$slow"
for i in $(seq 1 50); do
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
for i in $(seq 1 50); do
    scrape
    [ "$(val "$M" 'ztensord_catalog_files{state="valid"}')" = 2 ] && break
    sleep 0.1
done
check_eq "catalog files valid after the upload" "$(val "$M" 'ztensord_catalog_files{state="valid"}')" 2

# ---- catalog reloads: SIGHUP rescans
R0=$(val "$M" ztensord_catalog_reloads_total)
kill -HUP "$D_PID"
for i in $(seq 1 50); do
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
for i in $(seq 1 $NR); do printf 'url = "%s"\noutput = "/dev/null"\nheader = "Range: bytes=%d-%d"\n' "$URL/v1/files/a.zt/objects/w/data" "$i" $((i + 999)); done >"$T/load2"
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

finish
