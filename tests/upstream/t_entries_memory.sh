#!/usr/bin/env bash
# t_entries_memory: the upstream files kept open are bounded by bytes (issue 27,
# finding 4). A plain upstream serves 60 names of one file of 10,000 objects (about
# 2 MB of manifest JSON, about 27 MB parsed); the sidecar runs with
# --upstream-entries-memory 96M (ENTRIES_BUDGET). After opening all 60, one after another:
#   - every open answered 200;
#   - the estimate the table keeps stays within the budget, and entries were dropped;
#   - the daemon's RSS (/proc) is under 128 MiB, its peak (VmHWM) under 256 MiB
#     (without the bound: about 27 MB an entry, over 1.5 GB).
# Then three requests hold their entries (their component fills stall at the
# upstream): a fourth file cannot fit and gets 503 overloaded with Retry-After, never
# more memory; once the stalls end, it is opened.
# ENTRIES_N and ENTRIES_BUDGET change the count and the budget (a measurement: issue 27's
# target is 1,000 files at the default 128M, see docs/PERFORMANCE.md).
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/evil_lib.sh"

if [ ! -x "${ZT_GEN_MANY:-}" ]; then
    skip "large manifests" "ZT_GEN_MANY not set (run ctest)"
    finish
fi
N=${ENTRIES_N:-60}
BUDGET=${ENTRIES_BUDGET:-96M}
mkdir -p "$T/up" "$T/side"
"$ZT_GEN_MANY" "$T/big.zt" 10000 1 || bad "gen_many"
for i in $(seq 0 $((N - 1))); do ln "$T/big.zt" "$T/up/f$i.zt"; done

# Component fills of f0, f1, f2 (ranges from byte 64) stall until $T/up/.unstall exists;
# the opens (the head and the tail of the file) are served.
start_evil "$T/up" stall '^/f[0-2]\.zt bytes=64-' 300 || finish
start_sidecar "$T/side" "$E_URL" "$T/cache" --upstream-kind plain --upstream-retries 0 \
    --upstream-timeout 120s --upstream-entries-memory "$BUDGET" || finish

codes=
for i in $(seq 3 $((N - 1))) 0 1 2; do
    c=$(curl -s --max-time 60 -o "$T/m.json" -w '%{http_code}' "$URL/v1/files/f$i.zt")
    [ "$c" = 200 ] || codes="$codes f$i:$c"
    [ $((i % (N / 3))) = $((N / 3 - 1)) ] && note "after f$i: VmRSS $(vm VmRSS) kB, VmHWM $(vm VmHWM) kB"
done
check_eq "$N opens: all 200" "$codes" ""
note "manifest JSON $(stat -c %s "$T/m.json") bytes an entry"
used=$(metric "$URL" '^ztensord_upstream_files_bytes$')
note "entries: $(metric "$URL" '^ztensord_upstream_files$'), estimated $used bytes," \
    "$(metric "$URL" '^ztensord_upstream_file_evictions_total') dropped"
budget_bytes=$(numfmt --from=iec "$BUDGET")
check "the table's estimate is within upstream_entries_memory" [ "$used" -le "$budget_bytes" ]
check "entries were dropped" [ "$(metric "$URL" '^ztensord_upstream_file_evictions_total')" -ge $((N - 4)) ]
hwm=$(vm VmHWM) rss=$(vm VmRSS)
note "after $N opens: VmRSS $rss kB, peak (VmHWM) $hwm kB"
if [ "${ZT_SANITIZED:-0}" = 1 ]; then
    skip "RSS bounds" "sanitizer build: ASan's shadow memory and quarantine count in RSS"
else
    check "RSS under 128 MiB" [ "$rss" -lt $((128 << 10)) ]
    check "peak RSS under 256 MiB" [ "$hwm" -lt $((256 << 10)) ]
fi

if [ -n "${ENTRIES_BUDGET:-}" ]; then # a measurement: three held files fit a larger budget
    finish
fi
# ---- three entries held by requests whose fills stall: no room for a fourth
PIDS=()
for i in 0 1 2; do
    curl -s --max-time 200 -o /dev/null -w '%{http_code}' \
        "$URL/v1/files/f$i.zt/objects/o000000/data" >"$T/held$i.code" &
    PIDS+=($!)
done
# The three files share their bytes (one digest): one fill, which the three wait on.
holding() { echo $(($(metric "$URL" '^ztensord_cache_misses_total') + $(metric "$URL" '^ztensord_cache_waits_total'))); }
for _ in $(seq 1 300); do # bounded: up to about 60 s
    [ "$(holding)" -ge 3 ] && grep -q ' -> stall$' "$ELOG" && break
    sleep 0.2
done
check "the fill stalls at the upstream" grep -q ' -> stall$' "$ELOG"
check_eq "three requests wait on it" "$(holding)" 3
req "a fourth file while the three are held: 503" 503 "$URL/v1/files/f30.zt"
check_errbody "a fourth file while the three are held" overloaded
check_match "the message names the budget" "$ERRMSG" "upstream_entries_memory"
check "Retry-After" has_hdr "$LAST.hdr" Retry-After
check "no more than the budget meanwhile" \
    [ "$(metric "$URL" '^ztensord_upstream_files_bytes$')" -le "$budget_bytes" ]
touch "$T/up/.unstall"
for p in "${PIDS[@]}"; do wait "$p"; done
req "once they are released: 200" 200 "$URL/v1/files/f30.zt"
check_match "the three held requests ended with 502/504" "$(cat "$T"/held*.code | tr -d '\n')" \
    '^(502|504){3}$'
daemon_alive "daemon alive"
finish
