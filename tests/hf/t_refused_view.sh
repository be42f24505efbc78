#!/bin/bash
# A safetensors view that cannot be made (an object safetensors has no dtype for) is
# listed by /v1/files with status error, and by neither the Hub front nor the S3 front:
# a snapshot download or an `aws s3 sync` of the repository must not meet an object
# that answers 422. Asked for by name, each front answers its own not-found.
#   t_refused_view.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
D=$R/org/mixed
mkdir -p "$D"
rand "$T/a.raw" 4096
head -c 8 "$T/a.raw" >"$T/f4.raw"
pack "$D/good.zt" w=f32:1024:"$T/a.raw" || finish
pack "$D/bad.zt" --format v2 w.q=f4_e2m1:16:"$T/f4.raw" || finish
printf '{}\n' >"$D/config.json"
start_daemon "$R" || finish

req "/v1/files" 200 "$URL/v1/files"
check_match "/v1/files lists the refused view with status error" "$(tr -d '\n' <"$LAST.body")" \
    '"name":"org/mixed/bad.safetensors"[^}]*"status":"error"'

req "HF info" 200 "$URL/hf/api/models/org/mixed"
names=$($PY -c 'import json,sys; print(" ".join(sorted(s["rfilename"] for s in json.load(open(sys.argv[1]))["siblings"])))' "$LAST.body")
check_eq "HF siblings: the refused view is not one" "$names" "bad.zt config.json good.safetensors good.zt"
hf_err "HF resolve of the refused view" 404 EntryNotFound "$URL/hf/org/mixed/resolve/main/bad.safetensors"

out=$(curl -s "$URL/models?list-type=2&prefix=org/mixed/")
check_match "S3 list: the good view is listed" "$out" '<Key>org/mixed/good\.safetensors</Key>'
case $out in
*bad.safetensors*) bad "S3 list: the refused view is not listed" "$out" ;;
*) ok "S3 list: the refused view is not listed" ;;
esac
out=$(curl -s -w '\n%{http_code}' "$URL/models/org/mixed/bad.safetensors")
check_match "S3 GetObject of the refused view: NoSuchKey" "$out" '<Code>NoSuchKey</Code>.*'$'\n''404$'
finish
