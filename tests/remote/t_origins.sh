#!/usr/bin/env bash
# libztensor-remote against two real origins serving the same files: ztensord
# (file URLs, read at …/raw) and nginx (plain static files). Every component
# of the demo files and of the corpus's valid files is read byte for byte
# (decoded and stored, whole and in ranges, and all at once with
# zt_remote_read_many), with the manifest fetched in one round trip or, with
# a small open window, in two. Then a safetensors file over nginx, `zt info`
# and `zt get` on URLs, and the conditional headers every request carries.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root/demo" "$root/corpus"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root/demo" >/dev/null ||
    bad "make-demo.sh"
corpus=${ZT_CORPUS_DIR:-}/accept
if [ -d "$corpus" ]; then
    cp "$corpus"/*.zt "$root/corpus/"
else
    skip "corpus files" "ZT_CORPUS_DIR not set (run ctest: the corpus_generate fixture makes it)"
fi
"$ZT" convert "$root/demo/tiny.zt" -o "$root/demo/tiny.safetensors" >/dev/null 2>&1 ||
    bad "zt convert to safetensors"
# Two components over 4 MiB (hashed on threads beside the transfers, in chunks).
rand "$T/a.raw" $((6 * 1024 * 1024 + 123))
rand "$T/b.raw" $((5 * 1024 * 1024))
head -c 123 "$T/a.raw" >"$T/c.raw"
pack "$root/demo/big.zt" a=u8:$((6 * 1024 * 1024 + 123)):"$T/a.raw" \
    b=u8:$((5 * 1024 * 1024)):"$T/b.raw" c=u8:123:"$T/c.raw"

start_daemon "$root" || rfinish
have_nginx=0
start_nginx "$root" && have_nginx=1

# check_file REL [remote_check flags...]: through ztensord and through nginx.
check_file() {
    local rel=$1
    shift
    local flags=(--chunk 65536 "$@")
    local n
    n=$("$ZT" info "$root/$rel" | grep -c '^    ')
    [ "$n" -gt 300 ] && flags+=(--many-only)
    case $rel in
    *.zt) rcheck "ztensord: $rel ${*:-}" "${flags[@]}" "$URL/v1/files/$rel" "$root/$rel" ;;
    esac
    if [ $have_nginx = 1 ]; then
        rcheck "nginx: $rel ${*:-}" "${flags[@]}" "http://127.0.0.1:$NPORT/$rel" "$root/$rel"
    fi
}

note "demo files"
for rel in demo/tiny.zt demo/llama/model-00001.zt demo/tiny.safetensors; do
    check_file "$rel"
done
# The manifest in a second request (open window smaller than the manifest),
# one connection, many connections.
check_file demo/tiny.zt --window 64
check_file demo/llama/model-00001.zt --window 64 --connections 1
check_file demo/llama/model-00001.zt --connections 8
check_file demo/tiny.safetensors --window 64
check_file demo/big.zt --chunk 1048576 --connections 4

note "corpus files"
for f in "$root"/corpus/*.zt; do
    [ -e "$f" ] || break
    check_file "corpus/$(basename "$f")"
done

note "zt info and zt get on URLs"
bases=("$URL/v1/files")
[ $have_nginx = 1 ] && bases+=("http://127.0.0.1:$NPORT")
for rel in demo/tiny.zt demo/llama/model-00001.zt; do
    for base in "${bases[@]}"; do
        "$ZT" info "$base/$rel" | tail -n +2 >"$T/info.remote"
        "$ZT" info "$root/$rel" | tail -n +2 >"$T/info.local"
        check_same "zt info $base/$rel" "$T/info.remote" "$T/info.local"
        "$ZT" info --json "$base/$rel" >"$T/json.remote"
        "$ZT" info --json "$root/$rel" >"$T/json.local"
        check_same "zt info --json $base/$rel" "$T/json.remote" "$T/json.local"
        while IFS= read -r obj; do
            "$ZT" get "$base/$rel" "$obj" -o "$T/get.remote" &&
                "$ZT" get "$root/$rel" "$obj" -o "$T/get.local"
            check_same "zt get $base/$rel \"$obj\"" "$T/get.remote" "$T/get.local"
        done < <($PY -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["objects"]))' "$T/json.local")
    done
done
"$ZT" get "$URL/v1/files/demo/tiny.zt" no-such-object >/dev/null 2>"$T/get.err"
check_eq "zt get URL unknown object: exit 1" "$?" 1
"$ZT" info "$URL/v1/files/demo/missing.zt" >/dev/null 2>"$T/info.err"
check_eq "zt info URL of a missing file: exit 3" "$?" 3
check_match "zt info URL of a missing file: the message says 404" "$(cat "$T/info.err")" \
    'ZT_E_NOT_FOUND: HTTP 404.*file_not_found.*/v1/files/demo/missing.zt/raw'

note "conditional headers on every request after the open"
start_relay "$PORT" pass
rcheck "through the relay" "http://127.0.0.1:$RPORT/v1/files/demo/tiny.zt" "$root/demo/tiny.zt"
etag=$(curl -s -D - -o /dev/null "$URL/v1/files/demo/tiny.zt/raw" | tr -d '\r' |
    sed -n 's/^ETag: //Ip')
total=$(wc -l <"$RLOG")
pinned=$(tail -n +3 "$RLOG" | grep -cF "| $etag | $etag |")
check_eq "every request after the open's two carries If-Match and If-Range $etag" \
    "$pinned" "$((total - 2))"
check_eq "the open asks for the first 16 bytes and the last 64 KiB" \
    "$(head -2 "$RLOG" | grep -c -e '| bytes=0-15 |' -e '| bytes=-65536 |')" 2
if [ $have_nginx = 1 ]; then
    start_relay "$NPORT" pass
    rcheck "nginx through the relay" "http://127.0.0.1:$RPORT/demo/tiny.zt" "$root/demo/tiny.zt"
    netag=$(curl -s -D - -o /dev/null "http://127.0.0.1:$NPORT/demo/tiny.zt" | tr -d '\r' |
        sed -n 's/^ETag: //Ip')
    total=$(wc -l <"$RLOG")
    pinned=$(tail -n +3 "$RLOG" | grep -cF "| $netag | $netag |")
    check_eq "nginx: every later request carries If-Match and If-Range $netag" \
        "$pinned" "$((total - 2))"
fi
rfinish
