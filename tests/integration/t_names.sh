#!/bin/bash
# Awkward names and path safety: percent-encoded object names, files in subdirectories,
# traversal attempts, hidden files, symlinks leading out of the root.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R/sub/dir" "$T/outdir"
NAMES=("with space" "a/b" "q?x" "h#x" "p%41" "%" "é" "🙂" "日本語" ".." "." "x+y" "semi;colon"
    'back\slash' "tab	x" "quote\"d" "ab&c" "$(printf 'L%.0s' $(seq 1 300))")
args=()
i=0
for n in "${NAMES[@]}"; do
    i=$((i + 1))
    rand "$T/o$i.raw" $((100 + i))
    args+=("$n=u8:$((100 + i)):$T/o$i.raw")
done
pack "$R/a.zt" "${args[@]}"
rand "$T/s.raw" 333
pack "$R/sub/dir/f.zt" s=u8:333:"$T/s.raw"
pack "$R/my file é.zt" s=u8:333:"$T/s.raw"
pack "$R/100%.zt" s=u8:333:"$T/s.raw"
pack "$R/.x.zt" s=u8:333:"$T/s.raw"
pack "$R/sub/.h.zt" s=u8:333:"$T/s.raw"
rand "$T/secret.raw" 444
pack "$T/outside.zt" secret=u8:444:"$T/secret.raw"
pack "$T/outdir/o.zt" secret=u8:444:"$T/secret.raw"
ln -s ../outside.zt "$R/link.zt"
ln -s "$T/outside.zt" "$R/abslink.zt"
ln -s ../outdir "$R/ldir"
ln -s a.zt "$R/inlink.zt" # inside the root: served

start_daemon "$R" || finish

# ---- every object name is reachable percent-encoded
info_json "$R/a.zt" "$T/a.info.json"
i=0
for n in "${NAMES[@]}"; do
    i=$((i + 1))
    q=$(urlq "$n")
    label="object '${n:0:20}'"
    req "$label: component" 200 "$URL/v1/files/a.zt/objects/$q/data"
    check_same "$label: bytes" "$LAST.body" "$T/o$i.raw"
    req "$label: object JSON" 200 "$URL/v1/files/a.zt/objects/$q"
    check "$label: object JSON equals the manifest's" $PY -c '
import json, sys
m = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
sys.exit(0 if m["objects"][sys.argv[3]] == o else 1)' "$T/a.info.json" "$LAST.body" "$n"
done
# the manifest lists the names verbatim
req "manifest with awkward names" 200 "$URL/v1/files/a.zt"
check "manifest equals zt info --json" $HELP jsoneq "$LAST.body" "$T/a.info.json"
# ".." and "." as object names are names, sent raw too
req "object '..' sent raw" 200 "$URL/v1/files/a.zt/objects/../data"
check_same "object '..' raw: bytes" "$LAST.body" "$T/o10.raw"
req "object '.' sent raw" 200 "$URL/v1/files/a.zt/objects/./data"
check_same "object '.' raw: bytes" "$LAST.body" "$T/o11.raw"
req "object '..' as %2E%2E" 200 "$URL/v1/files/a.zt/objects/%2E%2E/data"
check_same "object '%2E%2E': bytes" "$LAST.body" "$T/o10.raw"
# unencoded '/' splits the name: a/b is object "a" + component "b"
check_err "object 'a/b' unencoded" 404 not_found "$URL/v1/files/a.zt/objects/a/b/data"
check_err "bad percent-encoding" 400 bad_request "$URL/v1/files/a.zt/objects/%zz/data"
check_err "truncated percent-encoding" 400 bad_request "$URL/v1/files/a.zt/objects/x%4/data"
check_err "NUL in an object name" 400 bad_request "$URL/v1/files/a.zt/objects/x%00y/data"
check_err "invalid UTF-8 in an object name" 400 bad_request "$URL/v1/files/a.zt/objects/%C3%28/data"
http "$T/e" "$URL/v1/files/a.zt/objects//data"
check_match "empty object name: 400 or 404" "$CODE" '^40[04]$'
# raw space and '#' in a request target are refused
CODE=$($HELP rawreq "$PORT" GET "/v1/files/a.zt/objects/with space/data" "$T/raw")
check_match "raw space in the target: 400" "$CODE" '^400$'
CODE=$($HELP rawreq "$PORT" GET "/v1/files/a.zt/objects/h#x/data" "$T/raw")
check_match "raw '#' in the target: 400 or 404" "$CODE" '^40[04]$'

# ---- files in subdirectories and with awkward names
for spelling in "sub/dir/f.zt" "sub%2Fdir%2Ff.zt" "sub%2Fdir/f.zt" "sub/dir%2ff.zt"; do
    req "file '$spelling'" 200 "$URL/v1/files/$spelling/objects/s/data"
    check_same "file '$spelling': bytes" "$LAST.body" "$T/s.raw"
    req "file '$spelling' raw" 200 "$URL/v1/files/$spelling/raw"
    check_same "file '$spelling' raw bytes" "$LAST.body" "$R/sub/dir/f.zt"
done
req "file 'my file é.zt'" 200 "$URL/v1/files/$(urlq "my file é.zt")/objects/s/data"
check_same "file 'my file é.zt': bytes" "$LAST.body" "$T/s.raw"
req "file '100%.zt'" 200 "$URL/v1/files/100%25.zt/raw"
check_same "file '100%.zt': bytes" "$LAST.body" "$R/100%.zt"
req "symlink inside the root is served" 200 "$URL/v1/files/inlink.zt/raw"
check_same "symlink inside the root: bytes" "$LAST.body" "$R/a.zt"

req "listing" 200 "$URL/v1/files"
names=$($PY -c 'import json,sys; print("|".join(sorted(f["name"] for f in json.load(open(sys.argv[1]))["files"])))' "$LAST.body")
check_eq "listed names: no hidden file, no symlink leading out (each with its view)" "$names" \
    "100%.safetensors|100%.zt|a.safetensors|a.zt|inlink.safetensors|inlink.zt|my file é.safetensors|my file é.zt|sub/dir/f.safetensors|sub/dir/f.zt"

# ---- traversal: never the bytes of a file outside the root
SECRET=$(sha256_hex "$T/outside.zt")
SECRET_C=$(sha256_hex "$T/secret.raw")
ABS=$(urlq "$T/outside.zt")
for p in \
    "/v1/files/../outside.zt" \
    "/v1/files/../outside.zt/raw" \
    "/v1/files/../../etc/passwd" \
    "/v1/files/../../../../../../etc/passwd" \
    "/v1/files/%2e%2e/outside.zt/raw" \
    "/v1/files/%2E%2E%2Foutside.zt/raw" \
    "/v1/files/..%2Foutside.zt/raw" \
    "/v1/files/..%2foutside.zt/objects/secret/data" \
    "/v1/files/sub/../../outside.zt/raw" \
    "/v1/files/sub%2F..%2F..%2Foutside.zt/raw" \
    "/v1/files/sub/dir/%2e%2e/%2e%2e/%2e%2e/outside.zt/raw" \
    "/v1/files/%2Fetc%2Fpasswd.zt" \
    "/v1/files/$ABS/raw" \
    "/v1/files//outside.zt/raw" \
    "/v1/files/./a.zt/raw" \
    "/v1/files/.x.zt/raw" \
    "/v1/files/%2ex.zt/raw" \
    "/v1/files/sub/.h.zt/raw" \
    "/v1/files/sub%2F.h.zt/raw" \
    "/v1/files/link.zt/raw" \
    "/v1/files/link.zt/objects/secret/data" \
    "/v1/files/abslink.zt/raw" \
    "/v1/files/ldir/o.zt/raw" \
    "/v1/files/ldir%2Fo.zt/objects/secret/data" \
    "/v1/files/..%5Coutside.zt/raw" \
    "/v1/files/%252e%252e%252foutside.zt/raw" \
    "/v1/files/..%00.zt/raw" \
    "/v1/files/a.zt%00/raw" \
    "/v1/files/%C0%AE%C0%AE/outside.zt/raw" \
    "/v1/blobs/../files/../outside.zt/raw" \
    "/v1/files/sub/dir/../../../outside.zt" \
    "/v1/files/a.zt/objects/../../../../outside.zt/raw"; do
    http "$T/t" "$URL$p"
    label="traversal ${p:0:60}"
    case $CODE in
    400 | 404) ok "$label: $CODE" ;;
    *) bad "$label" "HTTP $CODE" ;;
    esac
    h=$(sha256_hex "$T/t.body")
    if [ "$h" = "$SECRET" ] || [ "$h" = "$SECRET_C" ] || grep -aq 'root:' "$T/t.body"; then
        bad "$label: no outside bytes" "served the outside file"
    else
        ok "$label: no outside bytes"
    fi
    $HELP errbody "$T/t.body" bad_request 2>/dev/null || $HELP errbody "$T/t.body" file_not_found 2>/dev/null ||
        $HELP errbody "$T/t.body" not_found 2>/dev/null || $HELP errbody "$T/t.body" object_not_found 2>/dev/null
    check_eq "$label: JSON error body" "$?" 0
done
# A path whose first segment is not ztensord's own is the S3 front's (docs/S3.md): a
# bucket "." does not exist; its error is S3's XML, never a file's bytes.
http "$T/t" "$URL/./v1/files/a.zt/../../outside.zt/raw"
check_code "traversal /./v1/files/...: the S3 front's 404" 404
check_match "traversal /./v1/files/...: NoSuchBucket" "$(cat "$T/t.body")" "<Code>NoSuchBucket</Code>"
check "traversal /./v1/files/...: no outside bytes" \
    eval '[ "$(sha256_hex "$T/t.body")" != "$SECRET" ]' 

# a hidden file with valid contents is still not listed after a rescan (SIGHUP)
kill -HUP "$D_PID"
sleep 0.5
req "listing after SIGHUP" 200 "$URL/v1/files"
check_nomatch "hidden files never listed" "$(cat "$LAST.body")" '\.x\.zt|\.h\.zt|"(link|abslink|ldir/o)\.zt"|outside'

daemon_alive "daemon still running"
finish
