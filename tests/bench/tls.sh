#!/usr/bin/env bash
# Benchmark: what TLS costs. The same component served by one ztensord over HTTP
# (sendfile, zero copy) and by another over HTTPS (--tls-cert/--tls-key: libmicrohttpd
# reads the file into a buffer and GnuTLS encrypts it), on loopback.
#   tests/bench/tls.sh              (BENCH_BUILD, BENCH_WORK, TLS_MIB, TLS_RUNS to override;
#                                    ZTENSORD=... ZT=... to use binaries already built)
# Prints, for a TLS_MIB MiB component (default 1024):
#   1. one curl stream: GB/s over HTTP and HTTPS (best of TLS_RUNS), and the ratio;
#   2. CPU seconds the daemon spent per GiB sent, HTTP vs HTTPS;
#   3. four parallel streams: aggregate GB/s, HTTP vs HTTPS.
# curl decrypts on the same two cores, so the HTTPS figure is a floor for a remote client.
source "$(dirname "$0")/common.sh"
if [ -n "${ZTENSORD:-}" ] && [ -n "${ZT:-}" ]; then
  ztd=$ZTENSORD zt=$ZT
  mkdir -p "$work"
else
  bench_build
fi
mib=${TLS_MIB:-1024}
runs=${TLS_RUNS:-3}
cd "$work"
mkdir -p tlsroot
size=$((mib << 20))
[ -f tls.bin ] && [ "$(stat -c %s tls.bin)" = $size ] || head -c $size /dev/urandom >tls.bin
[ -f tlsroot/tls.zt ] && [ tlsroot/tls.zt -nt tls.bin ] || "$zt" pack -o tlsroot/tls.zt "w=u8:$size:tls.bin" >/dev/null
[ -f tls.key ] || openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 -keyout tls.key -out tls.crt 2>/dev/null

# start SCHEME [ARGS...]: sets pid and url
start() {
  local scheme=$1; shift
  "$ztd" --root "$work/tlsroot" --listen 127.0.0.1:0 --access-log off "$@" 2>"$work/tls-$scheme.log" &
  pid=$!
  for _ in $(seq 100); do
    port=$(grep -o "listening on $scheme://[^ ]*" "$work/tls-$scheme.log" 2>/dev/null | sed 's/.*://') || true
    [ -n "$port" ] && curl -sf --cacert tls.crt "$scheme://127.0.0.1:$port/readyz" >/dev/null && break
    sleep 0.1
  done
  url=$scheme://127.0.0.1:$port/v1/files/tls.zt/objects/w/data
}
cpu() { awk '{ print $14 + $15 }' /proc/"$1"/stat; }  # utime + stime, clock ticks
hz=$(getconf CLK_TCK)

declare -A best cpu_per_gib par
for scheme in http https; do
  if [ $scheme = https ]; then start https --tls-cert tls.crt --tls-key tls.key; else start http; fi
  curl -s --cacert tls.crt -o /dev/null "$url"  # warm the page cache
  [ $scheme = https ] && cipher=$(curl -sv --cacert tls.crt -o /dev/null "${url%%/v1/*}/healthz" 2>&1 |
    sed -n 's/.*SSL connection using //p' | head -1)
  b=0
  c0=$(cpu "$pid")
  for _ in $(seq "$runs"); do
    s=$(curl -s --cacert tls.crt -o /dev/null -w '%{speed_download}' "$url")
    b=$(awk -v a="$b" -v s="$s" 'BEGIN { print (s > a ? s : a) }')
  done
  c1=$(cpu "$pid")
  best[$scheme]=$b
  cpu_per_gib[$scheme]=$(awk -v c=$((c1 - c0)) -v hz="$hz" -v n="$runs" -v m="$mib" 'BEGIN { printf "%.2f", c / hz / (n * m / 1024) }')
  t0=$(date +%s.%N)
  for _ in 1 2 3 4; do curl -s --cacert tls.crt -o /dev/null "$url" & done
  wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
  t1=$(date +%s.%N)
  par[$scheme]=$(awk -v a="$t0" -v b="$t1" -v m="$mib" 'BEGIN { printf "%.2f", 4 * m * 1048576 / (b - a) / 1e9 }')
  kill "$pid"; wait "$pid" 2>/dev/null || true
done

gbs() { awk -v s="$1" 'BEGIN { printf "%.2f", s / 1e9 }'; }
echo "component: $mib MiB, best of $runs single streams, loopback, $(nproc) cores"
printf '%-34s %10s %10s %8s\n' "" HTTP HTTPS "HTTPS/HTTP"
printf '%-34s %10s %10s %8s\n' "one stream (GB/s)" "$(gbs "${best[http]}")" "$(gbs "${best[https]}")" \
  "$(awk -v a="${best[https]}" -v b="${best[http]}" 'BEGIN { printf "%.2f", a / b }')"
printf '%-34s %10s %10s %8s\n' "daemon CPU per GiB sent (s)" "${cpu_per_gib[http]}" "${cpu_per_gib[https]}" \
  "$(awk -v a="${cpu_per_gib[https]}" -v b="${cpu_per_gib[http]}" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
printf '%-34s %10s %10s %8s\n' "4 parallel streams (GB/s total)" "${par[http]}" "${par[https]}" \
  "$(awk -v a="${par[https]}" -v b="${par[http]}" 'BEGIN { printf "%.2f", a / b }')"
echo "negotiated: ${cipher:-?}"
