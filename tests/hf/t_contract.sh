#!/bin/bash
# The hub's contract on /hf, with curl: model info, tree (recursive, by directory,
# paged with cursor and Link), paths-info (form and JSON), HEAD and GET of resolve
# with the headers huggingface_hub and @huggingface/hub read (X-Repo-Commit, ETag,
# X-Linked-Etag, X-Linked-Size, Content-Length, Accept-Ranges; no Xet), ranges and
# conditionals, every error code with X-Error-Code / X-Error-Message and a JSON
# {"error"} body, hostile names (400), one-level repositories, a replica's commit id,
# and the hub's 401/403 for missing and wrong tokens.
#   t_contract.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
make_repo "$R/org/model"
make_repo "$R/gpt2"
cp "$R/org/model/sub/extra.zt" "$R/org/model/sub/we \"ird\" \\ é.zt" # JSON escapes, URL encoding
cp "$R/org/model/sub/extra.zt" "$R/gpt2/sub/we \"ird\" \\ é.zt"
FILES=$(repo_files "$R/org/model")
E=$T/expect # what each listed name downloads as (views: zt convert's output)
expect_dir "$R/org/model" "$E"
start_daemon "$R" || finish
H=$URL/hf

# ---- model info
req "info" 200 "$H/api/models/org/model"
cp "$LAST.body" "$T/info.json"
mapfile -t FL <<<"$FILES"
if ERR=$($HFC info "$T/info.json" org/model "$E" "${FL[@]}" 2>&1); then ok "info: id, sha, siblings with sizes and lfs"; else bad "info" "$ERR"; fi
SHA=$($HFC field "$T/info.json" sha)
check_eq "info: X-Repo-Commit is sha" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
check_eq "info: application/json" "$(hdr "$LAST.hdr" Content-Type)" application/json
req "info at main" 200 "$H/api/models/org/model/revision/main"
check_eq "info at main: same sha" "$($HFC field "$LAST.body" sha)" "$SHA"
req "info at the commit" 200 "$H/api/models/org/model/revision/$SHA"
check_eq "info at the commit: same sha" "$($HFC field "$LAST.body" sha)" "$SHA"
req "info at HEAD (@huggingface/hub's default)" 200 "$H/api/models/org/model/revision/HEAD?expand=sha&expand=siblings"
check_eq "info at HEAD: same sha" "$($HFC field "$LAST.body" sha)" "$SHA"
req "one-level repository gpt2" 200 "$H/api/models/gpt2"
check_eq "gpt2: same files give the same commit" "$($HFC field "$LAST.body" sha)" "$SHA"

# A replica: the same files copied (other inodes and mtimes) under another root.
R2=$T/replica
mkdir -p "$R2/org"
cp -r "$R/org/model" "$R2/org/model"
touch -d '2001-01-01' "$R2/org/model/model.zt" "$R2/org/model/sub/extra.zt"
P1=$PORT U1=$URL PID1=$D_PID
D_PID=
start_daemon "$R2" || finish
req "replica info" 200 "$URL/hf/api/models/org/model"
check_eq "replica: the same commit id" "$($HFC field "$LAST.body" sha)" "$SHA"
stop_daemon
D_PID=$PID1 PORT=$P1 URL=$U1

# ---- tree
req "tree recursive" 200 "$H/api/models/org/model/tree/main?recursive=true&expand=false"
if ERR=$($HFC tree "$LAST.body" "$E" "${FL[@]}" 2>&1); then ok "tree recursive: files and directories"; else bad "tree recursive" "$ERR"; fi
cp "$LAST.body" "$T/tree_all.json"
req "tree at the commit" 200 "$H/api/models/org/model/tree/$SHA?recursive=True"
check_eq "tree at the commit: the same listing" "$(cat "$LAST.body")" "$(cat "$T/tree_all.json")"
req "tree top level" 200 "$H/api/models/org/model/tree/main"
check_eq "tree top level: sub is a directory, its files are not listed" \
    "$($PY -c 'import json,sys; print(" ".join(sorted(i["type"][0]+":"+i["path"] for i in json.load(open(sys.argv[1])))))' "$LAST.body")" \
    "$(for f in "${FL[@]}"; do case $f in */*) echo "d:${f%%/*}" ;; *) echo "f:$f" ;; esac; done | sort -u | tr '\n' ' ' | sed 's/ $//')"
req "tree of a directory" 200 "$H/api/models/org/model/tree/main/sub"
check_eq "tree of sub: the files and their views" "$($HFC paths "$LAST.body" | tr '\n' ,)" \
    "file sub/extra.safetensors,file sub/extra.zt,file sub/we \"ird\" \\ é.safetensors,file sub/we \"ird\" \\ é.zt,"
hf_err "tree of a missing directory" 404 EntryNotFound "$H/api/models/org/model/tree/main/nope"
hf_err "tree of a file" 404 EntryNotFound "$H/api/models/org/model/tree/main/model.zt"
req "tree expand" 200 "$H/api/models/org/model/tree/main?recursive=true&expand=true"
check_eq "tree expand: lastCommit.id is the commit" "$($HFC field "$LAST.body" 0 lastCommit id)" "$SHA"

# paging: one item a page, following Link (bounded), joins to the whole listing
next="$H/api/models/org/model/tree/main?recursive=true&limit=1"
: >"$T/pages"
pages=0
while [ -n "$next" ] && [ $pages -lt 20 ]; do
    http "$T/pg" "$next"
    [ "$CODE" = 200 ] || break
    $PY -c 'import json,sys; [print(json.dumps(i, sort_keys=True)) for i in json.load(open(sys.argv[1]))]' "$T/pg.body" >>"$T/pages"
    next=$(hdr "$T/pg.hdr" Link | sed -n 's/^<\([^>]*\)>; rel="next"$/\1/p')
    pages=$((pages + 1))
done
check_eq "paging: last page answered 200" "$CODE" 200
check_eq "paging: one page per item" "$pages" "$($PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$T/tree_all.json")"
check_eq "paging: the pages join to the listing" "$(cat "$T/pages")" \
    "$($PY -c 'import json,sys; [print(json.dumps(i, sort_keys=True)) for i in json.load(open(sys.argv[1]))]' "$T/tree_all.json")"
req "a cursor of another commit" 404 "$H/api/models/org/model/tree/main?recursive=true&cursor=0000000000000000000000000000000000000000.1"
check_eq "a cursor of another commit: RevisionNotFound" "$(hdr "$LAST.hdr" X-Error-Code)" RevisionNotFound
req "a cursor this server never gave" 400 "$H/api/models/org/model/tree/main?cursor=xyz"

# ---- paths-info
req "paths-info (form, as huggingface_hub)" 200 -X POST --data 'paths=model.zt&paths=sub&paths=nope&expand=False' "$H/api/models/org/model/paths-info/main"
check_eq "paths-info form: found ones, in order" "$($HFC paths "$LAST.body" | tr '\n' ',')" "file model.zt,directory sub,"
req "paths-info (JSON, as @huggingface/hub)" 200 -X POST -H 'Content-Type: application/json' \
    --data '{"paths": ["sub/extra.zt"], "expand": true}' "$H/api/models/org/model/paths-info/$SHA"
check_eq "paths-info JSON: the file" "$($HFC paths "$LAST.body")" "file sub/extra.zt"
check_eq "paths-info JSON expand: lastCommit" "$($HFC field "$LAST.body" 0 lastCommit id)" "$SHA"
req "paths-info: a body that is not JSON" 400 -X POST -H 'Content-Type: application/json' --data '{"paths": [1]}' "$H/api/models/org/model/paths-info/main"
req "paths-info: GET" 405 "$H/api/models/org/model/paths-info/main"
check_eq "paths-info: GET: Allow" "$(hdr "$LAST.hdr" Allow)" POST

# ---- resolve: every file, HEAD and GET
for f in "${FL[@]}"; do
    src=$E/$f
    u=$($HELP quote "$f" | sed 's/%2F/\//g')
    size=$(stat -c %s "$src")
    oid=$($PY -c 'import json,sys; print([s["blobId"] for s in json.load(open(sys.argv[1]))["siblings"] if s["rfilename"]==sys.argv[2]][0])' "$T/info.json" "$f")
    head_req "HEAD $f" 200 "/hf/org/model/resolve/main/$u"
    check_eq "HEAD $f: X-Repo-Commit" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
    check_eq "HEAD $f: ETag is the oid" "$(hdr "$LAST.hdr" ETag)" "\"$oid\""
    check_eq "HEAD $f: X-Linked-Etag is the oid" "$(hdr "$LAST.hdr" X-Linked-Etag)" "\"$oid\""
    check_eq "HEAD $f: X-Linked-Size" "$(hdr "$LAST.hdr" X-Linked-Size)" "$size"
    check_eq "HEAD $f: Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$size"
    check_eq "HEAD $f: Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
    check_eq "HEAD $f: no Xet header" "$(tr -d '\r' <"$LAST.hdr" | grep -ci '^x-xet')" 0
    req "GET $f" 200 "$H/org/model/resolve/main/$u"
    check_eq "GET $f: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$src")"
    req "GET $f at the commit" 200 "$H/org/model/resolve/$SHA/$u"
    check_eq "GET $f at the commit: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$src")"
    req "GET $f bytes=0-0 (@huggingface/hub's probe)" 206 -H 'Range: bytes=0-0' -H 'Accept: application/vnd.xet-fileinfo+json, */*' "$H/org/model/resolve/main/$u"
    check_eq "GET $f bytes=0-0: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes 0-0/$size"
    check_eq "GET $f bytes=0-0: not Xet" "$(hdr "$LAST.hdr" Content-Type)" application/octet-stream
    check_eq "GET $f bytes=0-0: X-Repo-Commit (hf-hub, TGI's client, reads it here)" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
    check_eq "GET $f bytes=0-0: X-Linked-Etag" "$(hdr "$LAST.hdr" X-Linked-Etag)" "\"$oid\""
    req "GET $f If-Range with the ETag: the range" 206 -H 'Range: bytes=1-2' -H "If-Range: \"$oid\"" "$H/org/model/resolve/main/$u"
    req "GET $f If-None-Match" 304 -H "If-None-Match: \"$oid\"" "$H/org/model/resolve/main/$u"
    req "GET $f If-Range mismatched: whole" 200 -H 'Range: bytes=1-2' -H 'If-Range: "x"' "$H/org/model/resolve/main/$u"
done
req "resolve with an encoded slash" 200 "$H/org/model/resolve/main/sub%2Fextra.zt"
req "resolve from a one-level repository" 200 "$H/gpt2/resolve/main/model.zt"
check_eq "one-level: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$R/gpt2/model.zt")"
req "the safetensors file" 200 "$H/org/model/resolve/main/model.safetensors"
cp "$LAST.body" "$T/dl.safetensors"
if ERR=$($HFC st "$T/dl.safetensors" "$T/src/w.raw:w" "$T/src/b.raw:b" 2>&1); then ok "safetensors: every tensor equals the source"; else bad "safetensors read" "$ERR"; fi

# ---- errors
hf_err "missing repository" 404 RepoNotFound "$H/api/models/org/nope"
hf_err "missing repository, resolve" 404 RepoNotFound "$H/org/nope/resolve/main/model.zt"
hf_err "datasets are not served" 404 RepoNotFound "$H/api/datasets/org/model"
hf_err "unknown revision" 404 RevisionNotFound "$H/org/model/resolve/v1.0/model.zt"
hf_err "unknown commit" 404 RevisionNotFound "$H/org/model/resolve/0123456789abcdef0123456789abcdef01234567/model.zt"
hf_err "unknown commit, info" 404 RevisionNotFound "$H/api/models/org/model/revision/0123456789abcdef0123456789abcdef01234567"
hf_err "uppercase commit" 404 RevisionNotFound "$H/org/model/resolve/$(echo "$SHA" | tr a-f A-F)/model.zt"
hf_err "revision refs/pr/1 (encoded)" 404 RevisionNotFound "$H/org/model/resolve/refs%2Fpr%2F1/model.zt"
hf_err "missing file" 404 EntryNotFound "$H/org/model/resolve/main/nope.bin"
check_eq "missing file: X-Repo-Commit (huggingface_hub caches the absence)" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$SHA"
hf_err "a directory is not a file" 404 EntryNotFound "$H/org/model/resolve/main/sub"

long=$(printf 'a%.0s' $(seq 1 97))
for bad_url in \
    "/hf/org/model/resolve/main/../config.json" \
    "/hf/org/model/resolve/main/sub/../../gpt2/model.zt" \
    "/hf/org/model/resolve/main/%2e%2e/gpt2/model.zt" \
    "/hf/org/model/resolve/main/sub%2F..%2Fmodel.zt" \
    "/hf/org/model/resolve/main/.hidden" \
    "/hf/org/model/resolve/main/model.zt%00.txt" \
    "/hf/org/model/resolve/main/%ff" \
    "/hf/org/model/resolve/main//model.zt" \
    "/hf/org/model/resolve/main/sub/" \
    "/hf/org/model/resolve/main/%zz" \
    "/hf/org/model/resolve/../model.zt" \
    "/hf/org/model/resolve/%2e%2e/model.zt" \
    "/hf/org/model/resolve/ma%00in/model.zt" \
    "/hf/org/model/resolve/.main/model.zt" \
    "/hf/api/models/org/model/revision/..%2F.." \
    "/hf/api/models/org/model/tree/main/.." \
    "/hf/api/models/org/model/tree/main/%2e%2e%2f%2e%2e" \
    "/hf/../org/model/resolve/main/model.zt" \
    "/hf/..%2F../resolve/main/model.zt" \
    "/hf/org/..%2Fmodel/resolve/main/model.zt" \
    "/hf/org/.model/resolve/main/model.zt" \
    "/hf/org/mo..del/resolve/main/model.zt" \
    "/hf/org/mo--del/resolve/main/model.zt" \
    "/hf/org/-model/resolve/main/model.zt" \
    "/hf/org%2Fmodel/resolve/main/model.zt" \
    "/hf/a/b/c/resolve/main/model.zt" \
    "/hf/api/models/a/b/c" \
    "/hf/api/models/a/b/c/tree/main" \
    "/hf/$long/model/resolve/main/model.zt" \
    "/hf/api/models/org/$long" \
    "/hf/org/model/resolve/$(printf 'r%.0s' $(seq 1 300))/model.zt"; do
    case $bad_url in
    "/hf/api/models/a/b/c") want=404 ;; # no such API (and no three-level keyword to blame)
    "/hf/../"* | "/hf/..%2F"*) want=400 ;;
    *) want=400 ;;
    esac
    req "hostile: $bad_url" "$want" "$URL$bad_url"
    if ERR=$($HFC errjson "$LAST.body" 2>&1); then ok "hostile: $bad_url: JSON error"; else bad "hostile: $bad_url: JSON error" "$ERR"; fi
done
req "overlong path: 414" 414 "$H/org/model/resolve/main/$(printf 'p%.0s' $(seq 1 5000))"
req "PUT is not an HF method" 405 -X PUT --data x "$H/org/model/resolve/main/model.zt"
req "POST resolve" 405 -X POST --data x "$H/org/model/resolve/main/model.zt"
check_eq "POST resolve: Allow" "$(hdr "$LAST.hdr" Allow)" "GET, HEAD"
req "the daemon still answers" 200 "$URL/healthz"
stop_daemon

# ---- tokens: the hub's 401 (missing, invalid) and 403
tok() { head -c 48 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | head -c 32; }
RT=rd-$(tok)
printf 'read %s\n' "$RT" >"$T/tokens"
start_daemon "$R" --tokens-file "$T/tokens" --require-read-token || finish
H=$URL/hf
hf_err "no token" 401 - "$H/api/models/org/model"
check_match "no token: WWW-Authenticate" "$(hdr "$LAST.hdr" WWW-Authenticate)" '^Bearer'
hf_err "wrong token" 401 - "$H/org/model/resolve/main/model.zt" -H "Authorization: Bearer nope-$(tok)"
req "wrong token" 401 -H "Authorization: Bearer nope-$(tok)" "$H/org/model/resolve/main/model.zt"
check_eq "wrong token: the hub's message (huggingface_hub: not a missing repository)" \
    "$(hdr "$LAST.hdr" X-Error-Message)" "Invalid credentials in Authorization header"
req "wrong token on paths-info: refused before the body" 401 -X POST -H "Authorization: Bearer nope" --data 'paths=model.zt' "$H/api/models/org/model/paths-info/main"
req "read token: info" 200 -H "Authorization: Bearer $RT" "$H/api/models/org/model"
req "read token: resolve" 200 -H "Authorization: Bearer $RT" "$H/org/model/resolve/main/model.zt"
check_eq "read token: byte-exact" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$R/org/model/model.zt")"
finish
