#!/bin/bash
# Through the cache: an --upstream sidecar with an empty root answers HF clients from
# its origin ztensord. Its info, tree and paths-info equal the origin's (same commit,
# same digests); every file resolves byte-exact with the origin's headers; a second
# round of downloads costs the origin no file bytes (served from the cache); the
# real @huggingface/hub works through it; and after a file is replaced at the origin
# the old commit answers RevisionNotFound on the sidecar too, main gives the new
# commit, and no answer mixes: a file is new bytes under the new commit, or a 503
# until the sidecar's pinned version has been revalidated.
#   t_upstream.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

O=$T/origin
make_repo "$O/org/model"
rand "$T/big.raw" $((6 << 20))
pack "$O/org/model/big.zt" --format v2 big=u8:$((6 << 20)):"$T/big.raw"
# model.safetensors (w, b) and big.zt's view (big) form one model: the directory has a
# model.safetensors.index.json too (docs/API.md), whose expected bytes are the origin's
# (its content is checked against the tensors in t_zt_only.sh)
FILES=$( (repo_files "$O/org/model"; echo model.safetensors.index.json) | LC_ALL=C sort)
E=$T/expect # what each listed name downloads as (views: zt convert's output)
expect_dir "$O/org/model" "$E"
mkdir -p "$T/side" "$T/cache"
start_daemon "$O" || finish
# the sidecar keeps the origin's info for upstream_ttl, compared byte for byte below with the
# origin's: a plain file's rawEtag there changes when the verifier has hashed it
wait_hashed
O_PID=$D_PID O_URL=$URL O_PORT=$PORT
req "origin: the model's index" 200 "$O_URL/v1/files/org/model/model.safetensors.index.json/raw"
cp "$LAST.body" "$E/model.safetensors.index.json"
D_PID=
start_daemon "$T/side" --upstream "$O_URL" --cache-dir "$T/cache" --upstream-ttl 1s || finish
kill_origin() { kill -KILL "$O_PID" 2>/dev/null; }
at_exit kill_origin
H=$URL/hf

for p in api/models/org/model "api/models/org/model/tree/main?recursive=true" \
    "api/models/org/model/tree/main/sub"; do
    req "sidecar: $p" 200 "$H/$p"
    cp "$LAST.body" "$T/side.json"
    req "origin: $p" 200 "$O_URL/hf/$p"
    check_eq "sidecar: $p: the origin's document" "$(cat "$T/side.json")" "$(cat "$LAST.body")"
done
SHA=$($HFC field "$LAST.body" 0 oid >/dev/null; http "$T/i" "$O_URL/hf/api/models/org/model"; $HFC field "$T/i.body" sha)
req "sidecar: paths-info" 200 -X POST --data 'paths=big.zt&paths=sub' "$H/api/models/org/model/paths-info/$SHA"
check_eq "sidecar: paths-info" "$($HFC paths "$LAST.body" | tr '\n' ,)" "file big.zt,directory sub,"
hf_err "sidecar: a repository the origin lacks" 404 RepoNotFound "$H/api/models/org/nope"
hf_err "sidecar: a file the origin lacks" 404 EntryNotFound "$H/org/model/resolve/main/nope.zt"
hf_err "sidecar: another commit" 404 RevisionNotFound "$H/org/model/resolve/0123456789abcdef0123456789abcdef01234567/big.zt"

round() { # round NAME: every file through the sidecar, HEAD and GET, checked
    for f in $FILES; do
        req "$1: GET $f" 200 "$H/org/model/resolve/$SHA/$f"
        check_eq "$1: $f byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$E/$f")"
        check_eq "$1: $f X-Repo-Commit" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
        local side_etag
        side_etag=$(hdr "$LAST.hdr" X-Linked-Etag)
        http "$T/o" -I "$O_URL/hf/org/model/resolve/main/$f"
        check_eq "$1: $f X-Linked-Etag as the origin's" "$side_etag" "$(hdr "$T/o.hdr" X-Linked-Etag)"
        head_req "$1: HEAD $f" 200 "/hf/org/model/resolve/main/$f"
    done
}
round "first round"
before=$(sent_bytes "$O_URL")
round "second round"
after=$(sent_bytes "$O_URL")
total=$(cat $(for f in $FILES; do echo "$E/$f"; done) | wc -c)
echo "# origin sent $((after - before)) bytes in the second round (files: $total bytes)"
check_match "second round: the origin sent metadata only, no file bytes" \
    "$([ $((after - before)) -lt $((total / 4)) ] && echo yes || echo "no: $((after - before)) of $total")" '^yes$'

CLIENTS=$REPO/tests/clients
if command -v node >/dev/null && [ -f "$CLIENTS/node_modules/@huggingface/hub/package.json" ]; then
    # shellcheck disable=SC2086
    node "$HF_DIR/hf_js.mjs" "$CLIENTS" "$H" org/model "$E" "$T/jscache" $FILES >"$T/js.out" 2>"$T/js.err"
    check_eq "@huggingface/hub through the sidecar" "$? $(grep -c '^FAIL' "$T/js.out")" "0 0"
    grep '^FAIL' "$T/js.out" | head -5
else
    bad "@huggingface/hub is installed" "node or tests/clients/node_modules missing (.ci/deps)"
fi

# A file replaced at the origin.
pack "$T/big2.zt" --format v2 big=u8:$((6 << 20)):"$T/big.raw" b=u8:256:"$T/src/b.raw"
cp "$T/big2.zt" "$O/org/model/.big.tmp" && mv "$O/org/model/.big.tmp" "$O/org/model/big.zt"
kill -HUP "$O_PID"
SHA2=$(new_commit "$H/api/models/org/model" "$SHA" 100)
[ "$SHA2" != "$SHA" ] && ok "sidecar: main moved to a new commit" || bad "sidecar: main moved" "still $SHA"
hf_err "sidecar: the old commit" 404 RevisionNotFound "$H/org/model/resolve/$SHA/big.zt"
# main: the new bytes under the new commit, or 503 while the sidecar's pinned
# version is older than the listing (bounded retries; never old bytes).
got=
for _ in $(seq 1 100); do
    http "$T/n" "$H/org/model/resolve/main/big.zt"
    if [ "$CODE" = 200 ]; then
        got="$(hdr "$T/n.hdr" X-Repo-Commit) $(sha256_hex "$T/n.body")"
        break
    fi
    [ "$CODE" = 503 ] || break
    sleep 0.2
done
check_eq "sidecar: big.zt at main: the new commit with the new bytes" "$got" "$SHA2 $(sha256_hex "$T/big2.zt")"
stop_daemon
D_PID=$O_PID
finish
