#!/usr/bin/env bash
# t_cluster_origin_kill: origin -> tier -> four node sidecars; while the four nodes pull
# the model with `zt pull`, the origin is killed with SIGKILL once the tier has fetched
# a part of it, and restarted on the same port ORIGIN_DOWN seconds later. Pass: every
# pull finishes (exit 0, without being run again) and every node's files are byte-exact;
# nothing the tier or a sidecar served was wrong (the pulls check every digest); the
# tier and the sidecars stop cleanly.
# Size: ZT_CLUSTER_MB (default 256, as t_cluster.sh and for the same reasons).
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/cluster_lib.sh"

MB=${ZT_CLUSTER_MB:-256}
NODES=4
ORIGIN_DOWN=${ORIGIN_DOWN:-2}
make_model "$T/origin" "$MB" || finish
mkdir -p "$T/empty"

zd_start origin "$T/origin" || finish
zd_start tier "$T/empty" --upstream "$(zd_url origin)" --cache-dir "$T/cache.tier" || finish
for n in $(seq 1 $NODES); do
    zd_start "node$n" "$T/empty" --upstream "$(zd_url tier)" --cache-dir "$T/cache.node$n" || finish
done

for n in $(seq 1 $NODES); do pull_all "node$n" "$(zd_url "node$n")" "$T/out$n"; done
# Kill once the tier has at least 5% of the model from the origin (polled every
# 20 ms for up to 60 s).
got=0
for i in $(seq 1 3000); do
    got=$(metric_of "$(zd_url tier)" '^ztensord_upstream_bytes_total$')
    [ "$got" -ge $((MODEL_BYTES / 20)) ] && break
    sleep 0.02
done
zd_kill origin
note "origin killed after the tier had fetched $got of $MODEL_BYTES bytes"
check "origin killed mid-pull (tier had fetched 5% to 95% of the model)" \
    test "$got" -ge $((MODEL_BYTES / 20)) -a "$got" -lt $((MODEL_BYTES * 95 / 100))
running=0
for n in $(seq 1 $NODES); do kill -0 "${PULL_PID[node$n]}" 2>/dev/null && running=$((running + 1)); done
check_eq "every pull still running when the origin died" $running $NODES
sleep "$ORIGIN_DOWN"
zd_restart origin || finish
note "origin restarted on the same port after ${ORIGIN_DOWN} s"

for n in $(seq 1 $NODES); do
    pull_wait "node$n" 600
    check_eq "node$n: zt pull finishes (exit status)" "$PULL_RC" 0
    [ "$PULL_RC" = 0 ] || note "node$n: $(tail -3 "$T/node$n.pull" | tr '\n' ' ')"
    same_model "node$n" "$T/out$n" "$T/origin"
done
note "tier: upstream errors $(metric_of "$(zd_url tier)" '^ztensord_upstream_errors_total$'), fill failures $(metric_of "$(zd_url tier)" '^ztensord_upstream_fill_failures_total$')"
check_eq "tier: no digest failure" "$(metric_of "$(zd_url tier)" '^ztensord_upstream_digest_failures_total$')" 0

zd_stop_all
finish
