#!/usr/bin/env bash
# Benchmark: uploads on loopback, next to nginx's WebDAV PUT of the same bytes.
#   tests/bench/upload.sh     (ROUNDS=3, BENCH_4G=1 for the 4 GiB RSS figure, BENCH_BUILD,
#                              BENCH_WORK to override; data on disk, not tmpfs)
# First the machine's limits (one core's SHA-256, dd of 1 GiB with fsync), then ROUNDS
# rounds, each of them, back to back so that a load change on the shared machine hits all:
#   a. nginx WebDAV PUT of the 1 GiB file                         (the reference)
#   b. ztensord whole-file PUT, one 1 GiB component               (every sha256 checked, fsync)
#   c. ztensord whole-file PUT, 64 components of 16 MiB
#   d. ztensord session, 8 components of 128 MiB + commit (one curl for the components)
#   e. nginx WebDAV PUT + `sync -d` of the file (what nginx costs made as durable as ztensord)
# The order flips every round (e..a), so neither server always runs first.
# The fair reference: both servers run as the same user, write into directories of one file
# system (nginx's client_body_temp_path beside its root, as ztensord's staging directory is
# inside its root, so both publish with rename), read the body through a 1 MiB buffer
# (client_body_buffer_size 1m, ztensord's write buffer), and start from the same page cache.
# nginx does not fsync a PUT; ztensord does, so e. is printed next to a. Each PUT is checked:
# HTTP 201, and the published file has the uploaded size.
source "$(dirname "$0")/common.sh"
bench_build
cd "$work"
mkdir -p up-root dav-root src
gen() { [ -f "$2" ] && [ "$(stat -c %s "$2")" = "$1" ] || head -c "$1" /dev/urandom >"$2"; }
gen $((1 << 30)) src/1g.bin
gen $((128 << 20)) src/128m.bin
[ -f src/1g.zt ] || "$zt" pack -o src/1g.zt "w=u8:$((1 << 30)):src/1g.bin" >/dev/null
if [ ! -f src/64x16m.zt ]; then
  split -b $((16 << 20)) -d -a 2 src/1g.bin src/part.
  args=(); for i in $(seq -w 0 63); do args+=("layer.$i=u8:$((16 << 20)):src/part.$i"); done
  "$zt" pack -o src/64x16m.zt "${args[@]}" >/dev/null
  rm -f src/part.*
fi
cat src/1g.zt src/64x16m.zt src/128m.bin >/dev/null # page cache, for both servers alike
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
gbps() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.2f", n / t / 1e9 }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
die() { echo "FAILED: $*"; exit 1; }
# check_put WHAT CODE FILE SIZE: the PUT answered 201 and FILE holds SIZE bytes
check_put() {
  [ "$2" = 201 ] || die "$1: HTTP $2"
  [ "$(stat -c %s "$3" 2>/dev/null)" = "$4" ] || die "$1: $3 is not $4 bytes"
}
# timed_put FILE URL: sets put_code and put_secs
timed_put() {
  local t0 t1
  sync -f "$work" # the last round's write-back is not charged to this one
  t0=$(date +%s.%N)
  put_code=$(curl -s -o /dev/null -w '%{http_code}' -T "$1" "$2")
  t1=$(date +%s.%N)
  put_secs=$(secs "$t0" "$t1")
}

echo "machine: $(nproc) cores, load $(load), $(df -T "$work" | awk 'NR == 2 { print $2 }') at $work"
sha=$(openssl speed -evp sha256 -bytes 16384 -seconds 2 2>/dev/null | awk '/^sha256/ { print $NF }')
echo "limit: SHA-256 on one core (openssl speed -evp sha256, 16 KiB): ${sha%k} kB/s = $(awk -v k="${sha%k}" 'BEGIN { printf "%.2f", k * 1000 / 1e9 }') GB/s"
t0=$(date +%s.%N)
dd if=/dev/zero of=dd.out bs=1M count=1024 conv=fsync status=none
t1=$(date +%s.%N)
echo "limit: dd if=/dev/zero bs=1M count=1024 conv=fsync: $(secs "$t0" "$t1") s, $(gbps $((1 << 30)) "$(secs "$t0" "$t1")") GB/s"
rm -f dd.out
# What a write into the page cache costs on this machine right now: 1 GiB written just after
# 1 GiB was freed, and again after 5 s idle. On a VM that hands free pages back to its host
# (virtio-balloon free page reporting), the second write touches pages the host must give
# back first: measured here 0.18 s against 0.55 s. Either server's PUT can land in either
# case; that is most of the spread between rounds.
dd if=/dev/zero of=dd.out bs=1M count=1024 status=none; rm -f dd.out
t0=$(date +%s.%N); dd if=/dev/zero of=dd.out bs=1M count=1024 status=none; t1=$(date +%s.%N)
rm -f dd.out; sleep 5
t2=$(date +%s.%N); dd if=/dev/zero of=dd.out bs=1M count=1024 status=none; t3=$(date +%s.%N)
rm -f dd.out
echo "limit: dd of 1 GiB into the page cache: $(secs "$t0" "$t1") s just after 1 GiB was freed, $(secs "$t2" "$t3") s after 5 s idle"

rm -rf up-root/* up-root/.ztensord-staging dav-root/* dav-root/.tmp
mkdir -p dav-root/.tmp
start_ztd "$work/up-root" --allow-anonymous-writes --disk-reserve 0 --log-level debug
Z="http://127.0.0.1:$zport"
# The workers as the user ztensord runs as (nginx would otherwise switch to nobody when
# started as root); body temp files on the root's file system, read through 1 MiB.
user=; [ "$(id -u)" -eq 0 ] && user="user root;"
start_nginx "$work/dav-root" "dav_methods PUT DELETE; create_full_put_path on; client_max_body_size 0;
  client_body_temp_path $work/dav-root/.tmp; client_body_buffer_size 1m;" "$user"
N="http://127.0.0.1:$nport"
size=$(stat -c %s src/1g.zt) size64=$(stat -c %s src/64x16m.zt)

nginx_put() { # sets t_a
  rm -f dav-root/1g.zt
  timed_put src/1g.zt "$N/1g.zt"
  check_put "nginx PUT" "$put_code" dav-root/1g.zt "$size"
  t_a=$put_secs
}
nginx_put_sync() { # sets t_e
  local t0 t1
  rm -f dav-root/1g.zt
  sync -f "$work"
  t0=$(date +%s.%N)
  put_code=$(curl -s -o /dev/null -w '%{http_code}' -T src/1g.zt "$N/1g.zt")
  sync -d dav-root/1g.zt
  t1=$(date +%s.%N)
  check_put "nginx PUT+sync" "$put_code" dav-root/1g.zt "$size"
  t_e=$(secs "$t0" "$t1")
}
ztd_put() { # ztd_put FILE SIZE: sets put_secs, and phases from the server's debug line
  local n0 i; n0=$(grep -ac "PUT $1: " ztd.log || true)
  curl -s -o /dev/null -X DELETE "$Z/v1/files/$1"
  timed_put "src/$1" "$Z/v1/files/$1"
  check_put "ztensord PUT $1" "$put_code" "up-root/$1" "$2"
  for i in $(seq 20); do # the log line is written on the logger's thread
    [ "$(grep -ac "PUT $1: " ztd.log || true)" -gt "$n0" ] && break; sleep 0.05
  done
  phases=$(grep -a "PUT $1: " ztd.log | tail -1 | sed 's/.*bytes, //; s/"$//')
}
ztd_session() { # sets t_d
  # One client process for the whole session, as an uploader would run it: the
  # 8 components go over one keep-alive connection (one curl, -T per URL), and the
  # session id is read with sed. (python3's start-up alone was 0.11 s, and 8 curl
  # starts 0.05 s: client cost that nginx's single PUT does not pay.)
  local id k objs="" t0 t1 code codes args=()
  curl -s -o /dev/null -X DELETE "$Z/v1/files/s.zt"
  sync -f "$work"
  t0=$(date +%s.%N)
  id=$(curl -s -X POST -d '{"file":"s.zt"}' "$Z/v1/uploads" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || die "session: no id in the POST /v1/uploads answer"
  for k in 0 1 2 3 4 5 6 7; do
    args+=(-o /dev/null -T src/128m.bin "$Z/v1/uploads/$id/components/c$k")
    objs="$objs${objs:+,}\"o$k\":{\"shape\":[$((128 << 20))],\"components\":{\"data\":{\"key\":\"c$k\",\"dtype\":\"u8\"}}}"
  done
  codes=$(curl -s -w "%{http_code} " "${args[@]}")
  [ "$codes" = "201 201 201 201 201 201 201 201 " ] || die "session components: HTTP $codes"
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d "{\"objects\":{$objs}}" "$Z/v1/uploads/$id/commit")
  t1=$(date +%s.%N)
  [ "$code" = 201 ] || die "commit: HTTP $code"
  [ "$(stat -c %s up-root/s.zt)" -gt $((1 << 30)) ] || die "session: s.zt is too short"
  t_d=$(secs "$t0" "$t1")
}
ztd_all() {
  ztd_put 1g.zt "$size"; t_b=$put_secs ph_b=$phases
  ztd_put 64x16m.zt "$size64"; t_c=$put_secs ph_c=$phases
  ztd_session
}

R_b=() R_c=() R_d=() R_be=() R_ce=() R_de=() G_a=() G_b=() G_c=() G_d=() G_e=()
for round in $(seq "${ROUNDS:-3}"); do
  l0=$(load)
  if [ $((round % 2)) = 1 ]; then nginx_put; ztd_all; nginx_put_sync
  else nginx_put_sync; ztd_all; nginx_put; fi
  G_a+=("$(gbps "$size" "$t_a")") G_e+=("$(gbps "$size" "$t_e")")
  G_b+=("$(gbps "$size" "$t_b")") G_c+=("$(gbps "$size64" "$t_c")") G_d+=("$(gbps $((1 << 30)) "$t_d")")
  R_b+=("$(ratio "$t_a" "$t_b")") R_c+=("$(ratio "$t_a" "$t_c")") R_d+=("$(ratio "$t_a" "$t_d")")
  R_be+=("$(ratio "$t_e" "$t_b")") R_ce+=("$(ratio "$t_e" "$t_c")") R_de+=("$(ratio "$t_e" "$t_d")")
  printf 'round %d (load %s -> %s):\n' "$round" "$l0" "$(load)"
  printf '  a. nginx PUT 1 GiB:               %s s  %s GB/s\n' "$t_a" "${G_a[-1]}"
  printf '  b. ztensord PUT, 1 component:     %s s  %s GB/s  ratio %s  (%s)\n' "$t_b" "${G_b[-1]}" "${R_b[-1]}" "$ph_b"
  printf '  c. ztensord PUT, 64 components:   %s s  %s GB/s  ratio %s  (%s)\n' "$t_c" "${G_c[-1]}" "${R_c[-1]}" "$ph_c"
  printf '  d. ztensord session 8 x 128 MiB:  %s s  %s GB/s  ratio %s\n' "$t_d" "${G_d[-1]}" "${R_d[-1]}"
  printf '  e. nginx PUT + sync -d:           %s s  %s GB/s  (against e: b %s, c %s, d %s)\n' "$t_e" \
    "${G_e[-1]}" "${R_be[-1]}" "${R_ce[-1]}" "${R_de[-1]}"
done
med() { echo "$*" | median; }
printf 'medians of %d rounds (GB/s; ratio = ztensord / nginx PUT, each round paired):\n' "${ROUNDS:-3}"
printf '  nginx PUT %s, nginx PUT+sync %s\n' "$(med "${G_a[*]}")" "$(med "${G_e[*]}")"
printf '  whole-file 1 component %s (ratio %s, vs nginx+sync %s)\n' "$(med "${G_b[*]}")" "$(med "${R_b[*]}")" "$(med "${R_be[*]}")"
printf '  whole-file 64 components %s (ratio %s, vs nginx+sync %s)\n' "$(med "${G_c[*]}")" "$(med "${R_c[*]}")" "$(med "${R_ce[*]}")"
printf '  session 8 x 128 MiB %s (ratio %s, vs nginx+sync %s)\n' "$(med "${G_d[*]}")" "$(med "${R_d[*]}")" "$(med "${R_de[*]}")"
printf '  ztensord peak RSS %s MiB; load now %s\n' "$(peak_rss_mib "$zpid")" "$(load)"
stop_nginx
stop_ztd
rm -rf up-root/* up-root/.ztensord-staging dav-root/*

if [ "${BENCH_4G:-0}" = 1 ]; then
  if [ ! -f src/4g.zt ]; then
    cat src/1g.bin src/1g.bin src/1g.bin src/1g.bin >src/4g.bin
    "$zt" pack -o src/4g.zt "w=u8:$((4 << 30)):src/4g.bin" >/dev/null
    rm -f src/4g.bin
  fi
  start_ztd "$work/up-root" --allow-anonymous-writes --disk-reserve 0
  size4=$(stat -c %s src/4g.zt)
  timed_put src/4g.zt "http://127.0.0.1:$zport/v1/files/4g.zt"
  check_put "4 GiB PUT" "$put_code" up-root/4g.zt "$size4"
  printf '4 GiB whole-file PUT: %s s, %s GB/s, ztensord peak RSS %s MiB\n' \
    "$put_secs" "$(gbps "$size4" "$put_secs")" "$(peak_rss_mib "$zpid")"
  stop_ztd
  rm -rf up-root/* up-root/.ztensord-staging
fi
