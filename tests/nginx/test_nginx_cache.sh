#!/usr/bin/env bash
# nginx proxy_cache in front of ztensord: a component is stored on the first
# request, served from the cache while fresh, revalidated by ETag (304 from
# ztensord) once stale, and replaced when the file changes.
#   test_nginx_cache.sh ZTENSORD ZT NGINX CONF_TEMPLATE
set -u
ztd=$1 zt=$2 nginx=$3 tmpl=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/ztnginx.XXXXXX")
pass=0 fail=0
cleanup() {
  [ -n "${npid:-}" ] && kill "$npid" 2>/dev/null
  [ -n "${zpid:-}" ] && kill "$zpid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
check() { # check NAME CONDITION-RESULT
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1"; else fail=$((fail + 1)); echo "FAIL $1"; fi
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

chmod 755 "$work" # nginx workers run as nobody
mkdir -p "$work/root" "$work/nginx" "$work/cache"
head -c 1048576 /dev/urandom >"$work/a.bin"
head -c 1048576 /dev/urandom >"$work/b.bin"
"$zt" pack -o "$work/root/m.zt" "w=f32:512x512:$work/a.bin" >/dev/null || exit 1

# s-maxage=2 rather than the default 1: nginx counts whole seconds, and the
# HIT check must not straddle the expiry.
"$ztd" --root "$work/root" --listen 127.0.0.1:0 --access-log "$work/ztd-access.log" \
  --cache-control "public, max-age=0, s-maxage=2, proxy-revalidate" \
  2>"$work/ztd.log" &
zpid=$!
for _ in $(seq 50); do grep -q 'listening on' "$work/ztd.log" && break; sleep 0.1; done
zport=$(grep -o 'listening on http://[^ ]*' "$work/ztd.log" | sed 's/.*://')
[ -n "$zport" ] || { echo "ztensord did not start"; cat "$work/ztd.log"; exit 1; }
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$zport/readyz" >/dev/null && break; sleep 0.1; done
# The component's ETag changes once its digest is verified: revalidate against that one.
for _ in $(seq 300); do
  curl -s "http://127.0.0.1:$zport/metrics" | grep -qx 'ztensord_digest_components{state="pending"} 0' && break
  sleep 0.1
done

nport=$(free_port)
sed -e "s|@PREFIX@|$work/nginx|g" -e "s|@CACHE@|$work/cache|g" -e "s|@NGINX_PORT@|$nport|g" \
  -e "s|@ZTD_PORT@|$zport|g" "$tmpl" >"$work/nginx.conf"
"$nginx" -p "$work/nginx" -c "$work/nginx.conf" 2>"$work/nginx-stderr.log" &
npid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$nport/healthz" && break; sleep 0.1; done

url="http://127.0.0.1:$nport/v1/files/m.zt/objects/w/data"
get() { curl -s -D "$work/h" -o "$work/body" "$url" "$@"; tr -d '\r' <"$work/h" | sed -n 's/^X-Cache-Status: //Ip'; }

t1=$(date +%s%N)
s1=$(get); cmp -s "$work/body" "$work/a.bin"; check "first request is correct bytes" $?
[ "$s1" = MISS ]; check "first request is a cache MISS (got $s1)" $?
s2=$(get); cmp -s "$work/body" "$work/a.bin"; check "second request correct" $?
el=$((($(date +%s%N) - t1) / 1000000))
if [ "$el" -lt 1000 ]; then # within s-maxage (2 s, counted in whole seconds by nginx)
  [ "$s2" = HIT ]; check "second request is a cache HIT within s-maxage (got $s2)" $?
else
  echo "SKIP second request is a cache HIT within s-maxage: the two requests took $el ms"
fi
sleep 3.1
before=$(grep -c ' 304 ' "$work/ztd-access.log")
s3=$(get); cmp -s "$work/body" "$work/a.bin"; check "stale request correct" $?
[ "$s3" = REVALIDATED ]; check "stale entry REVALIDATED by ETag (got $s3)" $?
after=$(grep -c ' 304 ' "$work/ztd-access.log")
[ "$after" -gt "$before" ]; check "ztensord answered the revalidation with 304" $?

# A range is served from the cached object.
curl -s -r 100-199 -o "$work/part" "$url"
cmp -s "$work/part" <(tail -c +101 "$work/a.bin" | head -c 100); check "range through the cache" $?

# Replace the file: the next revalidation gets the new bytes.
"$zt" pack -o "$work/root/m.zt" "w=f32:512x512:$work/b.bin" >/dev/null
# ztensord sees the new file after its rescan (inotify, debounced): wait for it, bounded
for _ in $(seq 300); do
  curl -s -o "$work/direct" "http://127.0.0.1:$zport/v1/files/m.zt/objects/w/data"
  cmp -s "$work/direct" "$work/b.bin" && break
  sleep 0.1
done
cmp -s "$work/direct" "$work/b.bin"; check "ztensord serves the new file" $?
sleep 3.1 # past s-maxage (a lower bound: any longer is the same)
s4=$(get); cmp -s "$work/body" "$work/b.bin"; check "after replacement the cache serves the new bytes (status $s4)" $?
s5=$(get); cmp -s "$work/body" "$work/b.bin"; check "and caches them (status $s5)" $?

echo "nginx_cache: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
