#!/usr/bin/env bash
# t_cluster_evict: a sidecar whose --cache-size is smaller than the model (but larger
# than its largest component) under concurrent load: four clients fetch every component
# of the model, each in its own order, twice; two of them read slowly (curl
# --limit-rate), so that responses are still being sent while other requests need room.
# Pass: evictions happen (ztensord_cache_evictions_total > 0) and none cuts a response
# short: every curl exits 0 with status 200, the full length and the origin's exact
# bytes; the cache ends within its size; a zt pull through the sidecar still ends
# byte-exact. Two checks tell the failures apart: a response cut short or wrong (never
# acceptable), and a request refused with 507 cache_full because everything cached is
# being sent (a clean error, but a cache in front of an upstream that has the bytes
# should serve it, slower, rather than fail it: 46 of 560 were refused before the read
# path waited for room).
# Size: ZT_CLUSTER_MB (default 256: a 160 MiB component, 240 MiB in all, a 192 MiB
# cache).
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/cluster_lib.sh"

MB=${ZT_CLUSTER_MB:-256}
CACHE_MB=$((MB * 3 / 4))
make_model "$T/origin" "$MB" || finish
mkdir -p "$T/empty" "$T/want"

zd_start origin "$T/origin" || finish
zd_start side "$T/empty" --upstream "$(zd_url origin)" --cache-dir "$T/cache" \
    --cache-size "${CACHE_MB}M" || finish
note "model $MODEL_BYTES bytes, cache-size ${CACHE_MB} MiB"

# Every component, and its bytes from the origin.
: >"$T/comps"
for f in "${MODEL_FILES[@]}"; do
    for o in $(curl -s "$(zd_url origin)/v1/files/$f" | $PY -c 'import json,sys; print(" ".join(json.load(sys.stdin)["objects"]))'); do
        w=$T/want/${f//\//_}.$o
        curl -s --max-time 60 -o "$w" "$(zd_url origin)/v1/files/$f/objects/$o/data"
        echo "$f $o $w" >>"$T/comps"
    done
done
check_ge "components listed" "$(wc -l <"$T/comps")" 60

# client N RATE: every component twice, in an order of its own; one line per response.
client() {
    local id=$1 rate=$2 round f o w out res
    out=$T/got.$id
    for round in 1 2; do
        shuf --random-source=<(yes "$id$round") "$T/comps" | while read -r f o w; do
            res=$(curl -s --max-time 300 ${rate:+--limit-rate "$rate"} -o "$out" \
                -w '%{http_code} %{size_download}' "$(zd_url side)/v1/files/$f/objects/$o/data")
            rc=$?
            if [ $rc = 0 ] && [ "$res" = "200 $(stat -c %s "$w")" ] && cmp -s "$out" "$w"; then
                echo "ok"
            elif [ $rc = 0 ] && [ "${res%% *}" = 507 ] && grep -q '"code":"cache_full"' "$out"; then
                echo "REFUSED $f $o $res"
            else
                echo "BAD $f $o curl=$rc $res want $(stat -c %s "$w")"
            fi
        done
    done >"$T/client.$id"
    rm -f "$out"
}
pids=()
client 1 "" &
pids+=($!)
client 2 "" &
pids+=($!)
client 3 50M &
pids+=($!)
client 4 80M &
pids+=($!)
for p in "${pids[@]}"; do
    wait_exit "$p" 600 || { bad "client $p ends within 600 s"; }
done
n_ok=$(cat "$T"/client.* | grep -c '^ok$')
n_refused=$(cat "$T"/client.* | grep -c '^REFUSED')
n_all=$(cat "$T"/client.* | wc -l)
check_eq "responses" "$n_all" $((4 * 2 * $(wc -l <"$T/comps")))
note "$n_ok whole and exact, $n_refused refused with 507 cache_full, of $n_all"
check_eq "no response cut short or wrong (whole and exact, or a clean 507 refusal)" \
    $((n_ok + n_refused)) "$n_all"
grep -h '^BAD' "$T"/client.* | head -5 | while read -r l; do note "$l"; done
# The sidecar is a cache in front of an upstream that has the bytes: a full cache should
# slow a client down, not fail it (507 before any byte, `zt pull` gives up on it).
check_eq "every request served whole: none refused for a busy cache" "$n_refused" 0
grep -h '^REFUSED' "$T"/client.* | sort | uniq -c | sort -rn | head -3 | while read -r l; do note "$l"; done

ev=$(metric_of "$(zd_url side)" '^ztensord_cache_evictions_total$')
note "evictions: $ev; evicted bytes: $(metric_of "$(zd_url side)" '^ztensord_cache_evicted_bytes_total$'); fetched from the origin: $(metric_of "$(zd_url side)" '^ztensord_upstream_bytes_total$')"
check_ge "evictions happened under load" "$ev" 1
check_ge "the cache ends within --cache-size" $((CACHE_MB << 20)) "$(metric_of "$(zd_url side)" '^ztensord_cache_bytes$')"
du_b=$(du -sb "$T/cache" | cut -f1)
check_ge "the cache directory holds at most --cache-size (+1 MiB of index)" $(((CACHE_MB + 1) << 20)) "$du_b"

pull_all pull "$(zd_url side)" "$T/out"
pull_wait pull 300
check_eq "zt pull through the small cache" "$PULL_RC" 0
same_model "zt pull through the small cache" "$T/out" "$T/origin"
check_eq "no digest failure" "$(metric_of "$(zd_url side)" '^ztensord_upstream_digest_failures_total$')" 0

zd_stop_all
finish
