#!/usr/bin/env bash
# t_cluster_gate: the readiness gate of the sidecar examples (docker/compose.yaml,
# docker/k8s-sidecar.yaml: --prefetch and a probe on /readyz) when the sidecar starts
# before its upstream, as in a roll-out where the tier and the nodes start together.
# A sidecar with --prefetch of a prefix, and one with --prefetch of a file, start while
# nothing listens on their upstream's port. Pass: /readyz answers 503 while the
# upstream is down (the model is not on the node: a Ready pod would start inference
# without it); once the upstream starts on that port, /readyz turns 200 within 60 s, and
# then the model is in the cache: reading it whole fetches nothing more from upstream.
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/cluster_lib.sh"

mkdir -p "$T/origin/llama" "$T/empty1" "$T/empty2"
rand "$T/w.raw" 3000000
rand "$T/s.raw" 1000
pack "$T/origin/llama/a.zt" w=u8:3000000:"$T/w.raw" s=u8:1000:"$T/s.raw" || finish
pack "$T/origin/llama/b.zt" s=u8:1000:"$T/s.raw" || finish
up=$(free_port)
ZD_PORT[origin]=$up

zd_start prefix "$T/empty1" --upstream "http://127.0.0.1:$up" --cache-dir "$T/c1" \
    --prefetch llama/ || finish
zd_start file "$T/empty2" --upstream "http://127.0.0.1:$up" --cache-dir "$T/c2" \
    --prefetch llama/a.zt || finish
sleep 2
for s in prefix file; do
    code=$(curl -s -o "$T/r" -w '%{http_code}' "$(zd_url $s)/readyz")
    check_eq "--prefetch $s, upstream down: /readyz 503 (the model is not here)" "$code" 503
    [ "$code" = 503 ] || note "$s: /readyz said $(cat "$T/r"); log: $(grep -o 'prefetch[^"]*' "${ZD_ERR[$s]}" | head -3 | tr '\n' ' ')"
done

zd_start origin "$T/origin" || finish
for s in prefix file; do
    ready=
    for i in $(seq 1 600); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$(zd_url $s)/readyz")" = 200 ] && ready=1 && break
        sleep 0.1
    done
    check "--prefetch $s: /readyz 200 within 60 s of the upstream starting" [ -n "$ready" ]
    before=$(metric_of "$(zd_url $s)" '^ztensord_upstream_bytes_total$')
    curl -s --max-time 30 -o "$T/got" "$(zd_url $s)/v1/files/llama/a.zt/objects/w/data"
    check_same "--prefetch $s: the component, byte-exact" "$T/got" "$T/w.raw"
    after=$(metric_of "$(zd_url $s)" '^ztensord_upstream_bytes_total$')
    check_ge "--prefetch $s: once ready, the model was already cached (upstream bytes +$((after - before)))" \
        65536 $((after - before))
done
zd_stop_all
finish
