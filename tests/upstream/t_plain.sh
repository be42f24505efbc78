#!/usr/bin/env bash
# t_plain: nginx as a plain upstream (static .zt and .safetensors files, Range on):
# /v1/files/NAME is BASE/NAME. The sidecar serves them as a ztensord on the same files
# would (manifest, object JSON, components, ranges, /raw), zt pull through it ends
# byte-exact, a second request is served from the cache, and /v1/files lists only the
# sidecar's own root (a plain server has no listing to give).
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/files/sub" "$T/side" "$T/cache"
rand "$T/w.bin" 3000000
rand "$T/t.bin" 4096
pack "$T/files/m.zt" w=u8:3000000:"$T/w.bin" t=f32:1024:"$T/t.bin" || finish
pack "$T/files/sub/nd.zt" --digest none w=u8:3000000:"$T/w.bin" || finish
# a safetensors file: 8-byte little-endian header length, JSON header, the data
"$PY" - "$T/files/st.safetensors" "$T/w.bin" "$T/t.bin" <<'EOF'
import json, struct, sys
w = open(sys.argv[2], "rb").read()
t = open(sys.argv[3], "rb").read()
h = {"w": {"dtype": "U8", "shape": [len(w)], "data_offsets": [0, len(w)]},
     "t": {"dtype": "F32", "shape": [len(t) // 4], "data_offsets": [len(w), len(w) + len(t)]}}
hb = json.dumps(h).encode()
hb += b" " * (-len(hb) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hb)) + hb + w + t)
EOF
start_nginx "$T/files" || finish
# a ztensord on the same files, to compare the JSON with
start_origin "$T/files" || finish
start_sidecar "$T/side" "http://127.0.0.1:$NPORT" "$T/cache" || finish

for f in m.zt sub/nd.zt st.safetensors; do
    SAME_NO_ETAG=1 same "$f: manifest" "/v1/files/$f"
    http "$T/r" "$URL/v1/files/$f/raw"
    check_code "$f: raw" 200
    check_same "$f: raw is the file" "$T/r.body" "$T/files/$f"
done
SAME_NO_ETAG=1 same "object" /v1/files/m.zt/objects/w
same "component (sha256: the same ETag)" /v1/files/m.zt/objects/w/data
SAME_NO_ETAG=1 same "component, no digest" /v1/files/sub/nd.zt/objects/w/data
SAME_NO_ETAG=1 same "safetensors tensor" /v1/files/st.safetensors/objects/t/data
same "range" /v1/files/m.zt/objects/w/data -H 'Range: bytes=100-100000'
http "$T/r" "$URL/v1/files/m.zt/raw" -H 'Range: bytes=10-2000000'
check_code "raw range" 206
check_same "raw range: bytes" "$T/r.body" <(slice "$T/files/m.zt" 10 1999991)

# validators: the tier's own for the file (nginx's ETag is not a ztensord one), stable
e1=$(curl -sI "$URL/v1/files/m.zt/raw" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')
e2=$(curl -sI "$URL/v1/files/m.zt/raw" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }')
check_match "raw ETag: strong, 32 hex" "$e1" '^"[0-9a-f]{32}"$'
check_eq "raw ETag: stable" "$e2" "$e1"
http "$T/r" "$URL/v1/files/m.zt/raw" -H "If-None-Match: $e1"
check_code "raw If-None-Match: 304" 304

# zt pull through the sidecar
mkdir -p "$T/pulled"
if "$ZT" pull --quiet -o "$T/pulled" "$URL/v1/files/m.zt" "$URL/v1/files/st.safetensors" >"$T/pull.out" 2>&1; then
    ok "zt pull through the sidecar"
else
    bad "zt pull through the sidecar" "$(tail -3 "$T/pull.out")"
fi
check_same "pulled m.zt" "$T/pulled/m.zt" "$T/files/m.zt"
check_same "pulled st.safetensors" "$T/pulled/st.safetensors" "$T/files/st.safetensors"

# warm: from the cache, nginx not asked for the component again
n0=$(wc -l <"$T/nginx/access.log")
http "$T/r" "$URL/v1/files/m.zt/objects/w/data"
check_same "warm: bytes" "$T/r.body" "$T/w.bin"
check_eq "warm: no request to nginx" "$(($(wc -l <"$T/nginx/access.log") - n0))" 0

# the listing: the sidecar's own root only
http "$T/r" "$URL/v1/files"
check_code "listing" 200
check_eq "listing: nothing from a plain upstream" "$($HELP listcount "$T/r.body")" 0
http "$T/r" "$URL/v1/files/absent.zt"
check_code "absent: 404" 404
stop_origin
finish
