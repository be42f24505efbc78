#!/bin/bash
# nginx with the slice module in front of an origin ztensord (nginx-slice.conf, the
# alternative tier of docs/CLUSTER.md). On a cold cache:
#   - a 1 KiB range of a 256 MiB /raw costs the origin one 16 MiB slice, not the file;
#   - `zt pull` through nginx is byte-exact and costs the origin at most 1.05 copies;
#   - a second, warm pull costs the origin no component bytes;
#   - `aria2c -x8 -s8` of /raw (cache emptied first) is byte-exact and costs at most 1.05
#     copies.
# The origin's egress is read from its /metrics (ztensord_response_bytes_total, every
# route that serves files), once no other request is in flight there. ZT_SLICE_MB sets the model's size (default 256).
#   test_nginx_slice.sh ZTENSORD ZT NGINX CONF_TEMPLATE
. "$(dirname "$0")/../sh/common.sh" "$1" "$2"
NGINX=${3:?usage: $0 ZTENSORD ZT NGINX CONF_TEMPLATE}
TMPL=${4:?usage: $0 ZTENSORD ZT NGINX CONF_TEMPLATE}
need_tool curl
need_tool aria2c aria2

MB=${ZT_SLICE_MB:-256}
SLICE=$((16 << 20))
chmod 755 "$T" # nginx workers may run as nobody
R=$T/root
mkdir -p "$R" "$T/nginx"
rand "$T/big.raw" $((MB << 20))
rand "$T/small.raw" 5000
pack "$R/m.zt" big=u8:$((MB << 20)):"$T/big.raw" small=u8:5000:"$T/small.raw" || finish
FSIZE=$(stat -c %s "$R/m.zt")
rm -f "$T/big.raw"

WAIT_VERIFIED=1 start_daemon "$R" || finish # a stable ETag on every slice
ORIGIN=$URL
# egress: body bytes the origin has sent once it is quiet (sent_bytes): nginx keeps
# filling a slice (or a whole file) after its client has what it asked for.
egress() { sent_bytes "$ORIGIN"; }

N_PID=
NPORT=$(free_port)
start_nginx() {
    rm -rf "$T/cache"
    mkdir -p "$T/cache"
    sed -e "s|@PREFIX@|$T/nginx|g" -e "s|@CACHE@|$T/cache|g" -e "s|@NGINX_PORT@|$NPORT|g" \
        -e "s|@ZTD_PORT@|$PORT|g" "$TMPL" >"$T/nginx.conf"
    "$NGINX" -p "$T/nginx" -c "$T/nginx.conf" 2>"$T/nginx-stderr.log" &
    N_PID=$!
    local i
    for i in $(seq 1 100); do
        curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$NPORT/healthz" && return 0
        sleep 0.1
    done
    bad "nginx starts" "$(cat "$T/nginx-stderr.log")"
    finish
}
stop_nginx() {
    kill -QUIT "$N_PID" 2>/dev/null
    wait_exit "$N_PID" 20
    N_PID=
}
at_exit_first '[ -n "$N_PID" ] && stop_nginx'
start_nginx
NG=http://127.0.0.1:$NPORT
note "model: $FSIZE bytes; slices of $SLICE bytes"

# ---- a cold 1 KiB range: one slice from the origin
e0=$(egress)
curl -s --max-time 60 -r 100000000-100001023 -o "$T/range" "$NG/v1/files/m.zt/raw"
slice "$R/m.zt" 100000000 1024 >"$T/want.range"
check_same "cold 1 KiB range of /raw through the slice tier" "$T/range" "$T/want.range"
e1=$(egress)
note "origin egress for a cold 1 KiB range: $((e1 - e0)) bytes"
check_ge "origin sent at most one slice (+64 KiB) for it" $((SLICE + 65536)) $((e1 - e0))
check_ge "origin sent at least the 1 KiB" $((e1 - e0)) 1024

# ---- cold zt pull: byte-exact, about one copy
mkdir -p "$T/pull1" "$T/pull2"
if "$ZT" pull --quiet -o "$T/pull1" "$NG/v1/files/m.zt" >"$T/pull1.out" 2>&1; then
    ok "cold zt pull through the slice tier"
else
    bad "cold zt pull through the slice tier" "$(tail -5 "$T/pull1.out")"
fi
check_same "pulled file is byte-exact" "$T/pull1/m.zt" "$R/m.zt"
e2=$(egress)
note "origin egress for the 1 KiB range then a cold zt pull: $((e2 - e0)) bytes ($(awk -v a=$((e2 - e0)) -v b="$FSIZE" 'BEGIN {printf "%.3f", a / b}') copies)"
check_ge "origin sent at most 1.05 copies" $((FSIZE * 105 / 100)) $((e2 - e0))

# ---- warm zt pull: no component bytes from the origin
if "$ZT" pull --quiet -o "$T/pull2" "$NG/v1/files/m.zt" >"$T/pull2.out" 2>&1; then
    ok "warm zt pull through the slice tier"
else
    bad "warm zt pull through the slice tier" "$(tail -5 "$T/pull2.out")"
fi
check_same "warm pull is byte-exact" "$T/pull2/m.zt" "$R/m.zt"
e3=$(egress)
note "origin egress for a warm zt pull: $((e3 - e2)) bytes"
check_ge "warm pull cost the origin under 1 MiB" $((1 << 20)) $((e3 - e2))
rm -rf "$T/pull1" "$T/pull2"

# ---- cold aria2c -x8 -s8 of /raw (empty cache)
stop_nginx
start_nginx
e4=$(egress)
if aria2c -x8 -s8 -k1M --quiet --allow-overwrite=true --auto-file-renaming=false \
    --connect-timeout=10 --timeout=60 -d "$T" -o aria.zt "$NG/v1/files/m.zt/raw" >"$T/aria.out" 2>&1; then
    ok "cold aria2c -x8 -s8 through the slice tier"
else
    bad "cold aria2c -x8 -s8 through the slice tier" "$(tail -5 "$T/aria.out")"
fi
check_same "aria2c file is byte-exact" "$T/aria.zt" "$R/m.zt"
e5=$(egress)
note "origin egress for a cold aria2c -x8: $((e5 - e4)) bytes ($(awk -v a=$((e5 - e4)) -v b="$FSIZE" 'BEGIN {printf "%.3f", a / b}') copies)"
check_ge "origin sent at most 1.05 copies to aria2c's 8 connections" $((FSIZE * 105 / 100)) $((e5 - e4))
rm -f "$T/aria.zt"
check "nginx logged no slice error" bash -c "! grep -E 'etag mismatch|unexpected range|invalid range' '$T/nginx/error.log'"
stop_nginx
finish
