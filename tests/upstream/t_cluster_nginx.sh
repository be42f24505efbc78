#!/usr/bin/env bash
# t_cluster_nginx: the cluster shape with nginx as the origin, a plain upstream (static
# files that answer Range): nginx -> a tier ztensord (--upstream the nginx base URL) ->
# four node sidecars; the four nodes pull the model at once with `zt pull`. Pass: every
# node byte-exact; nginx sent at most 1.05x the model (the body bytes of its access log)
# and the tier at most 4.05x (its /metrics); a file replaced on nginx is served in its
# new version once upstream_ttl has run out, byte-exact, never mixed with the old one.
# Size: ZT_CLUSTER_MB (default 128: the shape, smaller, as the task asks).
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/cluster_lib.sh"

MB=${ZT_CLUSTER_MB:-128}
NODES=4
make_model "$T/origin" "$MB" || finish
mkdir -p "$T/empty"
start_nginx "$T/origin" || rfinish
NG=http://127.0.0.1:$NPORT
# nginx_sent: body bytes in nginx's access log (combined format: the 10th field).
nginx_sent() { awk '{ s += $10 } END { printf "%.0f", s }' "$T/nginx/access.log"; }

# (the byte counts below must not take in revalidations: these daemons get lib.sh's
# long upstream_ttl, and the replacement at the end has daemons of its own with 1 s)
zd_start tier "$T/empty" --upstream "$NG" --upstream-kind plain --cache-dir "$T/cache.tier" || rfinish
for n in $(seq 1 $NODES); do
    zd_start "node$n" "$T/empty" --upstream "$(zd_url tier)" --cache-dir "$T/cache.node$n" || rfinish
done

for n in $(seq 1 $NODES); do pull_all "node$n" "$(zd_url "node$n")" "$T/out$n"; done
for n in $(seq 1 $NODES); do
    pull_wait "node$n" 600
    check_eq "node$n: zt pull exit status" "$PULL_RC" 0
    [ "$PULL_RC" = 0 ] || note "node$n: $(tail -3 "$T/node$n.pull" | tr '\n' ' ')"
    same_model "node$n" "$T/out$n" "$T/origin"
    rm -rf "$T/out$n"
done
t=$(sent_bytes "$(zd_url tier)")
o=$(nginx_sent)
note "nginx sent $o bytes ($(ratio "$o" "$MODEL_BYTES") copies); tier sent $t ($(ratio "$t" "$MODEL_BYTES") copies)"
check_ge "nginx sent at most 1.05x the model" $((MODEL_BYTES * 105 / 100)) "$o"
check_ge "tier sent at most 4.05x the model" $((MODEL_BYTES * 405 / 100)) "$t"

# A file replaced on nginx (renamed into place, as a publisher would): after the TTL
# the nodes serve the new version, whole. A tier and two nodes with upstream_ttl 1 s,
# each having served the old version.
zd_stop_all
zd_start ttier "$T/empty" --upstream "$NG" --upstream-kind plain --upstream-ttl 1s \
    --cache-dir "$T/cache.ttier" || rfinish
for n in 1 2; do
    zd_start "tnode$n" "$T/empty" --upstream "$(zd_url ttier)" --upstream-ttl 1s \
        --cache-dir "$T/cache.tnode$n" || rfinish
done
for n in 1 2; do
    check_match "tnode$n: the old b.zt (objects m1, m2)" \
        "$(curl -s --max-time 60 "$(zd_url "tnode$n")/v1/files/m/b.zt")" '"m1":.*"m2":'
done
rand "$T/new.raw" 3000000
pack "$T/new.zt" w=u8:3000000:"$T/new.raw" || rfinish
mv "$T/new.zt" "$T/origin/m/b.zt"
sleep 2.5 # past both TTLs, the tier's and the node's (a lower bound: any longer is the same)
curl -s --max-time 60 -o "$T/b.got" "$(zd_url tnode1)/v1/files/m/b.zt/objects/w/data"
check_same "after the TTL: the node serves the replaced file's component" "$T/b.got" "$T/new.raw"
curl -s --max-time 60 -o "$T/b.raw" "$(zd_url tnode2)/v1/files/m/b.zt/raw"
check_same "after the TTL: /raw of the replaced file, byte-exact" "$T/b.raw" "$T/origin/m/b.zt"

zd_stop_all
rfinish
