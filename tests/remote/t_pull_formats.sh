#!/usr/bin/env bash
# zt pull --tensors keeps the source's format (issue 26 section 3), against
# ztensord on 127.0.0.1: a selection of a .safetensors file is a valid
# safetensors file holding only the chosen tensors, byte for byte (never
# zTensor bytes under a .safetensors name), and a selection of a zTensor v2
# file is a valid v2 file.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
rand "$T/w.raw" 300000
rand "$T/s.raw" 4096
pack "$root/m.zt" w=f32:75000:"$T/w.raw" s=u8:4096:"$T/s.raw" || rfinish
pack "$root/v2.zt" --format v2 w=f32:75000:"$T/w.raw" s=u8:4096:"$T/s.raw" || rfinish
"$ZT" convert "$root/m.zt" -o "$root/s.safetensors" >/dev/null 2>&1 || bad "zt convert"
start_daemon "$root" || rfinish

# st_check FILE: a valid safetensors file (header length, JSON, offsets
# that tile the data exactly); prints its tensor names, sorted.
st_check() {
    $PY - "$1" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
data = b[8 + n:]
spans = sorted(tuple(v["data_offsets"]) for k, v in h.items() if k != "__metadata__")
at = 0
for a, e in spans:
    assert a == at, "a gap or an overlap at %d" % a
    at = e
assert at == len(data), "data is %d bytes, the tensors %d" % (len(data), at)
print(" ".join(sorted(k for k in h if k != "__metadata__")))
PY
}
# st_tensor FILE NAME OUT: a tensor's bytes of a safetensors file.
st_tensor() {
    $PY - "$1" "$2" "$3" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
a, e = json.loads(b[8:8 + n])[sys.argv[2]]["data_offsets"]
open(sys.argv[3], "wb").write(b[8 + n + a:8 + n + e])
PY
}

note "--tensors on a .safetensors source"
"$ZT" pull --quiet --tensors w "$URL/v1/files/s.safetensors" -o "$T/o1" 2>"$T/err"
check_eq "exit 0" "$?" 0
check_ne "not zTensor bytes (no ZTEN magic)" "$(head -c 4 "$T/o1/s.safetensors" | od -An -c | tr -d ' ')" ZTEN
check_eq "a valid safetensors file with only the chosen tensor" "$(st_check "$T/o1/s.safetensors")" w
check_match "zt info reads it as safetensors" "$("$ZT" info "$T/o1/s.safetensors" 2>&1)" 'safetensors'
st_tensor "$T/o1/s.safetensors" w "$T/got.bin"
check "its bytes are the tensor's" cmp -s "$T/got.bin" "$T/w.raw"
"$ZT" pull --quiet --exclude-tensors w "$URL/v1/files/s.safetensors" -o "$T/o2" 2>"$T/err"
check_eq "--exclude-tensors: exit 0" "$?" 0
check_eq "--exclude-tensors: the other tensor" "$(st_check "$T/o2/s.safetensors")" s
st_tensor "$T/o2/s.safetensors" s "$T/got.bin"
check "its bytes are the tensor's" cmp -s "$T/got.bin" "$T/s.raw"
"$ZT" pull --quiet --tensors w "$URL/v1/files/s.safetensors" -o "$T/o1" 2>"$T/err"
check_eq "again: exit 0" "$?" 0
check_eq "again: still valid" "$(st_check "$T/o1/s.safetensors")" w
check_eq "no temporary file left" "$(ls -A "$T/o1" | grep -v '^\.ztpull-record$')" s.safetensors

note "--tensors on a zTensor v2 source"
"$ZT" pull --quiet --tensors s "$URL/v1/files/v2.zt" -o "$T/o3" 2>"$T/err"
check_eq "exit 0" "$?" 0
check_match "a v2 file" "$("$ZT" info "$T/o3/v2.zt" 2>&1)" 'zt-2'
check "zt verify passes" zverify "$T/o3/v2.zt"
check_eq "only the chosen object" "$("$ZT" info --json "$T/o3/v2.zt" | $PY -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["objects"])))')" s
"$ZT" get "$T/o3/v2.zt" s -o "$T/got.bin" 2>/dev/null
check "its bytes" cmp -s "$T/got.bin" "$T/s.raw"
rfinish
