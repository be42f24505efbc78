#!/usr/bin/env bash
# t_cluster_sidecar_kill: origin -> a node sidecar; two clients pull the model through
# the sidecar with `zt pull` and the sidecar is killed with SIGKILL while it fetches
# (at least 5% of the model fetched, not 95%), then restarted on the same port
# and the same --cache-dir. Pass: the restart removes the unfinished fills it finds; the
# pulls, run again (they resume), finish byte-exact; every component the restarted
# sidecar serves, and its /raw of every file, equal the origin's bytes (no partial entry
# is served as complete); the cache's accounting after the restart stays within the
# model's size; and what was complete before the kill is not fetched again (the upstream
# bytes after the restart are the model's less what the cache kept).
# Size: ZT_CLUSTER_MB (default 256, as t_cluster.sh).
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/cluster_lib.sh"

MB=${ZT_CLUSTER_MB:-256}
make_model "$T/origin" "$MB" || finish
mkdir -p "$T/empty"

zd_start origin "$T/origin" || finish
zd_start side "$T/empty" --upstream "$(zd_url origin)" --cache-dir "$T/cache" || finish
for c in 1 2; do pull_all "c$c" "$(zd_url side)" "$T/out$c"; done
got=0
for i in $(seq 1 3000); do
    got=$(metric_of "$(zd_url side)" '^ztensord_upstream_bytes_total$')
    [ "$got" -ge $((MODEL_BYTES / 20)) ] && break
    sleep 0.02
done
zd_kill side
note "sidecar killed after fetching $got of $MODEL_BYTES bytes"
check "sidecar killed mid-fetch (5% to 95% of the model fetched)" \
    test "$got" -ge $((MODEL_BYTES / 20)) -a "$got" -lt $((MODEL_BYTES * 95 / 100))
for c in 1 2; do
    pull_wait "c$c" 120
    note "client $c: zt pull ended with $PULL_RC when its sidecar died"
done
kept=$(find "$T/cache" -type f | wc -l)
note "files in the cache directory after SIGKILL: $kept"

zd_restart side || finish
check_match "restart: the cache's recovery line" "$(cat "${ZD_ERR[side]}")" 'cache: .*removed [0-9]+ unfinished fills'
note "$(grep -o 'cache: .*' "${ZD_ERR[side]}" | head -1)"
items_bytes=$(metric_of "$(zd_url side)" '^ztensord_cache_bytes$')
check_ge "restart: the cache holds at most the model" "$MODEL_BYTES" "$items_bytes"
before=$(metric_of "$(zd_url side)" '^ztensord_upstream_bytes_total$')

# Every component and every /raw, through the restarted sidecar, against the origin.
badn=0
total=0
for f in "${MODEL_FILES[@]}"; do
    curl -s --max-time 60 -o "$T/raw.got" "$(zd_url side)/v1/files/$f/raw"
    cmp -s "$T/raw.got" "$T/origin/$f" || { badn=$((badn + 1)); note "raw $f differs"; }
    total=$((total + 1))
    for o in $(curl -s "$(zd_url origin)/v1/files/$f" | $PY -c 'import json,sys; print(" ".join(json.load(sys.stdin)["objects"]))'); do
        curl -s --max-time 60 -o "$T/c.got" "$(zd_url side)/v1/files/$f/objects/$o/data"
        curl -s --max-time 60 -o "$T/c.want" "$(zd_url origin)/v1/files/$f/objects/$o/data"
        cmp -s "$T/c.got" "$T/c.want" || { badn=$((badn + 1)); note "$f $o differs"; }
        total=$((total + 1))
    done
done
rm -f "$T/raw.got" "$T/c.got" "$T/c.want"
check_eq "after the restart: every component and /raw of $total byte-exact" "$badn" 0
after=$(metric_of "$(zd_url side)" '^ztensord_upstream_bytes_total$')
note "after the restart the sidecar fetched $((after - before)) bytes; the cache kept $items_bytes"
check_ge "what the cache kept is not fetched again" $((MODEL_BYTES - items_bytes + (1 << 20))) $((after - before))

# The interrupted pulls, run again, resume and finish.
for c in 1 2; do
    for attempt in 1 2 3; do
        pull_all "c$c" "$(zd_url side)" "$T/out$c"
        pull_wait "c$c" 300
        [ "$PULL_RC" = 0 ] && break
    done
    check_eq "client $c: zt pull finishes after the restart" "$PULL_RC" 0
    same_model "client $c" "$T/out$c" "$T/origin"
done
check_eq "no digest failure" "$(metric_of "$(zd_url side)" '^ztensord_upstream_digest_failures_total$')" 0

zd_stop_all
finish
