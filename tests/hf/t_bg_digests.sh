#!/bin/bash
# One hasher for a file's sha256: the background verifier hashes every local file without
# a v2 identity (1.x tensor files, safetensors, plain files) after start-up
# (ztensord_files_hashed in /metrics), and the Hub front names files by that digest
# instead of reading them again on the first /api/models. Shown by the bytes the daemon
# reads (/proc/PID/io rchar) while answering: far fewer than the repository holds.
#   t_bg_digests.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
D=$R/org/many
mkdir -p "$D"
for i in 1 2 3 4 5 6 7 8; do
    rand "$T/w$i.raw" $((2 << 20))
    pack "$D/part$i.zt" w=u8:$((2 << 20)):"$T/w$i.raw" # 1.2: digest = sha256 of its bytes
done
printf '{"model_type":"demo"}\n' >"$D/config.json"
start_daemon "$R" || finish

hashed=
for _ in $(seq 1 300); do # until the background verifier has hashed all 9 (bounded)
    curl -s "$URL/metrics" >"$T/m"
    hashed=$(sed -n 's/^ztensord_files_hashed{state="hashed"} //p' "$T/m")
    [ "$hashed" = 9 ] && grep -qx 'ztensord_files_hashed{state="pending"} 0' "$T/m" && break
    sleep 0.1
done
check_eq "the background verifier hashed the 9 files whole" "$hashed" 9

rchar() { sed -n 's/^rchar: //p' "/proc/$D_PID/io"; }
before=$(rchar)
req "first /api/models after the verifier's pass" 200 "$URL/hf/api/models/org/many"
after=$(rchar)
total=$(du -cb "$D"/part*.zt | tail -1 | cut -f1)
read_bytes=$((after - before))
if [ "$read_bytes" -lt $((total / 4)) ]; then
    ok "answering read $read_bytes bytes, not the repository's $total again"
else
    bad "answering read few bytes" "read $read_bytes bytes of $total: the front hashed the files itself"
fi
for i in 1 8; do
    got=$($HFC sibling_sha "$LAST.body" "part$i.zt" 2>/dev/null)
    check_eq "part$i.zt: lfs sha256 is its bytes' sha256" "$got" "$(sha256_hex "$D/part$i.zt")"
done
finish
