#!/bin/bash
# Concurrency: 64 simultaneous downloads of a 64 MiB component, all byte-identical;
# a parallel ranged download (8 x 8 MiB) reassembled; many small requests at once; what a
# stalled reader leaves in the server's socket (send_lowat).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
SZ=$((64 << 20))
rand "$T/big.raw" $SZ
pack "$R/big.zt" w=u8:$SZ:"$T/big.raw"
rand "$T/s.raw" 4096
pack "$R/small.zt" s=u8:4096:"$T/s.raw"
WANT=$(sha256_hex "$T/big.raw")
P=/v1/files/big.zt/objects/w/data

start_daemon "$R" || finish

# ---- 64 x 64 MiB at once; each body hashed as it arrives (nothing written to disk)
N=64
mkdir -p "$T/c"
t0=$(date +%s)
pids=()
for i in $(seq 1 $N); do
    (curl -sS --max-time 100 "$URL$P" -D "$T/c/$i.hdr" | openssl dgst -sha256 -r | cut -d' ' -f1 >"$T/c/$i.sha") 2>"$T/c/$i.err" &
    pids+=($!)
done
wait "${pids[@]}"
t1=$(date +%s)
note "$N x 64 MiB in $((t1 - t0)) s"
same=0
for i in $(seq 1 $N); do
    [ "$(cat "$T/c/$i.sha" 2>/dev/null)" = "$WANT" ] && same=$((same + 1))
done
check_eq "$N concurrent 64 MiB downloads are byte-identical" "$same" $N
codes=$(for i in $(seq 1 $N); do head -1 "$T/c/$i.hdr" | tr -d '\r' | cut -d' ' -f2; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
check_eq "$N concurrent downloads all 200" "$codes" " $N 200;"
daemon_alive "daemon alive after $N concurrent downloads"

# ---- the same through /v1/blobs and /raw, 16 each, mixed
pids=()
for i in $(seq 1 16); do
    (curl -sS --max-time 100 "$URL/v1/blobs/sha256:$WANT" | openssl dgst -sha256 -r | cut -d' ' -f1 >"$T/c/b$i.sha") 2>/dev/null &
    pids+=($!)
    (curl -sS --max-time 100 "$URL/v1/files/big.zt/raw" | openssl dgst -sha256 -r | cut -d' ' -f1 >"$T/c/r$i.sha") 2>/dev/null &
    pids+=($!)
done
wait "${pids[@]}"
FILE=$(sha256_hex "$R/big.zt")
sb=0
sr=0
for i in $(seq 1 16); do
    [ "$(cat "$T/c/b$i.sha")" = "$WANT" ] && sb=$((sb + 1))
    [ "$(cat "$T/c/r$i.sha")" = "$FILE" ] && sr=$((sr + 1))
done
check_eq "16 concurrent blob downloads identical" "$sb" 16
check_eq "16 concurrent raw downloads identical" "$sr" 16

# ---- a segmented download: 8 ranges fetched in parallel, reassembled
SEG=$((SZ / 8))
pids=()
for i in $(seq 0 7); do
    curl -sS --max-time 60 -r $((i * SEG))-$(((i + 1) * SEG - 1)) -o "$T/c/seg$i" -w '%{http_code}' "$URL$P" >"$T/c/seg$i.code" 2>/dev/null &
    pids+=($!)
done
wait "${pids[@]}"
codes=$(cat "$T"/c/seg?.code | tr -d '\n')
check_eq "8 parallel ranges all 206" "$codes" 206206206206206206206206
cat "$T"/c/seg0 "$T"/c/seg1 "$T"/c/seg2 "$T"/c/seg3 "$T"/c/seg4 "$T"/c/seg5 "$T"/c/seg6 "$T"/c/seg7 >"$T/c/joined"
check_same "reassembled ranges equal the component" "$T/c/joined" "$T/big.raw"
rm -f "$T"/c/seg? "$T/c/joined"

# ---- many small requests on many connections, and keep-alive reuse
pids=()
for i in $(seq 1 32); do
    (
        urls=()
        for j in $(seq 1 20); do urls+=(-o /dev/null "$URL/v1/files/small.zt/objects/s/data"); done
        curl -s --max-time 60 -w '%{http_code} %{num_connects}\n' "${urls[@]}" >"$T/c/k$i.out"
    ) &
    pids+=($!)
done
wait "${pids[@]}"
n200=$(cat "$T"/c/k*.out | grep -c '^200 ')
check_eq "32 clients x 20 keep-alive requests all 200" "$n200" 640
nconn=$(cat "$T"/c/k*.out | awk '{s += $2} END {print s}')
check_eq "keep-alive: one connection per client" "$nconn" 32

req "healthz after the load" 200 "$URL/healthz"
daemon_alive "daemon still running"

# ---- a client that stops reading: the server's socket holds at most send_lowat (128 KiB)
# not yet acknowledged, plus a segment; without it (--send-lowat 0) the kernel lets the
# rest of each 128 KiB sendfile pile up to its send buffer (3.8 MB here)
q=$(python3 "$IT_DIR/stalled_reader.py" "$PORT" "$P")
check_eq "stalled reader: a number settled" "$(grep -cx '[0-9]*' <<<"$q")" 1
check_eq "stalled reader: at most 192 KiB unacknowledged (got $q)" "$((q <= 196608))" 1
start_daemon "$R" --send-lowat 0 || finish
q0=$(python3 "$IT_DIR/stalled_reader.py" "$PORT" "$P" 262144)
check_eq "stalled reader, --send-lowat 0: more piles up (got $q0)" "$((q0 > 262144))" 1
daemon_alive "daemon still running"
finish
