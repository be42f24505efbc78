#!/usr/bin/env bash
# t_cluster: the cluster of issue 13 on one machine. One origin ztensord; one tier with
# --upstream the origin; eight node sidecars with --upstream the tier. Every node pulls
# the same model (three files, components from 1000 bytes to 5/8 of the model, sha256
# digests) from its own sidecar with `zt pull`, all eight at the same time.
# Pass: every node's files are byte-exact (cmp); the origin sent at most 1.05x the
# model's bytes and the tier at most 8.05x, read from their /metrics. Then a second round
# (warm: every sidecar has the model) costs the tier and the origin no component bytes.
#
# Size: ZT_CLUSTER_MB (default 256). The issue asks for ~1 GiB, and that runs here:
# ZT_CLUSTER_MB=1024 (a 945 MB model) passed in 57 s, the eight pulls taking 25.4 s, the
# origin sending 1.000 copies and the tier 8.003 (2 cores, load 5-10). Time is not what
# keeps the default smaller; disk is: at 1 GiB the run holds ~17 GiB at its peak (the
# origin, the tier's cache, eight caches and eight pulled copies), too much for a CI
# disk shared with other jobs. At 256 MiB (~4.5 GiB) the shape, the concurrency and
# the pass criteria are the same: 11.5 s for the eight pulls, 1.001 and 8.008 copies.
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/cluster_lib.sh"

MB=${ZT_CLUSTER_MB:-256}
NODES=8
make_model "$T/origin" "$MB" || finish
note "model: ${MODEL_FILES[*]}, $MODEL_BYTES bytes"
mkdir -p "$T/empty"

zd_start origin "$T/origin" || finish
zd_start tier "$T/empty" --upstream "$(zd_url origin)" --cache-dir "$T/cache.tier" || finish
for n in $(seq 1 $NODES); do
    zd_start "node$n" "$T/empty" --upstream "$(zd_url tier)" --cache-dir "$T/cache.node$n" || finish
done

t0=$(date +%s.%N)
for n in $(seq 1 $NODES); do pull_all "node$n" "$(zd_url "node$n")" "$T/out$n"; done
for n in $(seq 1 $NODES); do
    pull_wait "node$n" 600
    check_eq "node$n: zt pull exit status" "$PULL_RC" 0
done
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
note "eight cold pulls at once: ${secs} s until all eight have the model"
for n in $(seq 1 $NODES); do
    same_model "node$n" "$T/out$n" "$T/origin"
    rm -rf "$T/out$n"
done

o=$(sent_bytes "$(zd_url origin)")
t=$(sent_bytes "$(zd_url tier)")
note "origin sent $o bytes ($(ratio "$o" "$MODEL_BYTES") copies); tier sent $t ($(ratio "$t" "$MODEL_BYTES") copies)"
check_ge "origin sent at most 1.05x the model" $((MODEL_BYTES * 105 / 100)) "$o"
check_ge "tier sent at most 8.05x the model" $((MODEL_BYTES * 805 / 100)) "$t"
check_ge "tier sent at least 8x the model's component bytes (it served every node)" "$t" $((MODEL_BYTES * 8 * 99 / 100))
check_eq "tier: no digest failure" "$(metric_of "$(zd_url tier)" '^ztensord_upstream_digest_failures_total$')" 0

# ---- warm: every sidecar serves from its cache
for n in 1 2; do pull_all "warm$n" "$(zd_url "node$n")" "$T/warm$n"; done
for n in 1 2; do
    pull_wait "warm$n" 300
    check_eq "warm pull $n: exit status" "$PULL_RC" 0
    same_model "warm pull $n" "$T/warm$n" "$T/origin"
    rm -rf "$T/warm$n"
done
t2=$(sent_bytes "$(zd_url tier)")
o2=$(sent_bytes "$(zd_url origin)")
note "warm pulls: tier sent $((t2 - t)) bytes more, origin $((o2 - o))"
check_ge "warm pulls cost the tier under 1 MiB" $((1 << 20)) $((t2 - t))
check_ge "warm pulls cost the origin under 1 MiB" $((1 << 20)) $((o2 - o))

zd_stop_all
finish
