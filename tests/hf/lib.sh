# lib.sh: what the /hf scripts add to tests/sh/common.sh. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT.
HF_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HF_DIR/../sh/common.sh" "$@"
HFC="$PY $HF_DIR/hfcheck.py"

# Which files of a repository directory the catalog serves, so the expected file
# sets follow it. Today: tensor files. When plain files (config.json,
# tokenizer.json, ...) become catalog entries, this is `true` and make_repo's
# plain files are expected everywhere (listing, resolve, clients).
served() { # every regular file is served (plain files too: docs/API.md)
    return 0
}

# make_repo DIR: a model repository: a zTensor v2 file of two tensors, its
# safetensors conversion, a 1.2 file in a subdirectory, and plain files.
# Source tensors stay in $T/src (w.raw: f32 64x64, b.raw: f32 64).
make_repo() {
    local d=$1
    mkdir -p "$d/sub" "$T/src"
    [ -f "$T/src/w.raw" ] || rand "$T/src/w.raw" 16384
    [ -f "$T/src/b.raw" ] || rand "$T/src/b.raw" 256
    pack "$d/model.zt" --format v2 w=f32:64x64:"$T/src/w.raw" b=f32:64:"$T/src/b.raw"
    "$ZT" convert "$d/model.zt" -o "$d/model.safetensors" >/dev/null
    pack "$d/sub/extra.zt" b=f32:64:"$T/src/b.raw"
    printf '{"model_type": "test", "hidden_size": 64}\n' >"$d/config.json"
    printf '{"version": "1.0", "model": {"type": "BPE"}}\n' >"$d/tokenizer.json"
}

# repo_files DIR: the files of DIR the server should list, sorted, relative: every
# regular file, and beside each STEM.zt or STEM.alt its safetensors view STEM.safetensors
# when no real file has that name (docs/API.md, views and model indexes as objects). The
# model.safetensors.index.json a directory gets when its files form one model is not
# predicted here: make_repo's directories form none (the files of sub/ share tensor
# names); t_upstream.sh, whose big.zt joins model.safetensors, adds it itself.
repo_files() {
    local f
    (cd "$1" && find . -type f ! -name '.*' | sed 's|^\./||' | while read -r f; do
        served "$f" && echo "$f"
        case $f in
        *.zt | *.alt) [ -e "${f%.*}.safetensors" ] || echo "${f%.*}.safetensors" ;;
        esac
    done | LC_ALL=C sort)
}

# expect_dir DIR OUT: what a client should download from DIR, file by file, for the
# checks that compare bytes and sizes: OUT/NAME for each NAME of repo_files DIR, a copy
# of the real file or, for a view, `zt convert`'s output of its file (the view is
# byte-identical to it: docs/API.md). OUT/.views lists the views' names, one a line:
# a view's digest is not the sha256 of its bytes, so no lfs block is claimed for it.
expect_dir() {
    local d=$1 out=$2 f src
    mkdir -p "$out"
    : >"$out/.views"
    while read -r f; do
        [ -n "$f" ] || continue
        mkdir -p "$out/$(dirname "$f")"
        if [ -f "$d/$f" ]; then
            cp "$d/$f" "$out/$f"
            continue
        fi
        src=${f%.safetensors}.zt
        [ -f "$d/$src" ] || src=${f%.safetensors}.alt
        "$ZT" convert "$d/$src" -o "$out/$f" >/dev/null || bad "expect_dir: zt convert $src" "failed"
        echo "$f" >>"$out/.views"
    done <<<"$(repo_files "$d")"
}

# head_req NAME WANT_CODE PATH [HEADER...]: a HEAD request on a raw socket into $T/r;
# checks the status and that no byte follows the header block.
head_req() {
    local name=$1 want=$2 path=$3
    shift 3
    LAST=$T/r
    CODE=$($HELP rawreq "$PORT" HEAD "$path" "$LAST" "$@" 2>"$LAST.curlerr")
    CURL_RC=$?
    check_code "$name" "$want"
    check_eq "$name: no body" "$(stat -c %s "$LAST.body")" 0
}

# hf_err NAME STATUS CODE URL [CURL-ARGS...]: an error in the hub's shape: the status,
# X-Error-Code (- for none), an X-Error-Message, and a JSON body {"error": "..."}.
hf_err() {
    local name=$1 want=$2 code=$3
    shift 3
    req "$name" "$want" "$@"
    local got
    got=$(hdr "$LAST.hdr" X-Error-Code)
    check_eq "$name: X-Error-Code" "${got:--}" "$code"
    check_match "$name: X-Error-Message" "$(hdr "$LAST.hdr" X-Error-Message)" '.'
    if ERR=$($HFC errjson "$LAST.body" 2>&1); then ok "$name: {\"error\": ...}"; else bad "$name: JSON body" "$ERR"; fi
}

# new_commit URL OLD TRIES [PAUSE]: the sha of the model info at URL once it differs from
# OLD, asked at most TRIES times PAUSE (default 0.1) seconds apart (a rescan or upstream_ttl
# to wait for); the last one read otherwise (OLD or empty: the caller's check fails).
new_commit() {
    local sha=$2 i
    for i in $(seq 1 "$3"); do
        http "$T/i" "$1"
        sha=$($HFC field "$T/i.body" sha 2>/dev/null)
        [ -n "$sha" ] && [ "$sha" != "$2" ] && break
        sleep "${4:-0.1}"
    done
    echo "$sha"
}

# wait_hashed [SECONDS]: until the background verifier of the daemon at $URL has hashed every
# file it hashes whole (ztensord_files_hashed{state="pending"} 0; default at most 60 s):
# until then a plain file's /raw ETag (an origin's rawEtag) is not its sha256 one yet.
wait_hashed() {
    local i
    for i in $(seq 1 $((${1:-60} * 10))); do
        curl -s --max-time 5 "$URL/metrics" | grep -qx 'ztensord_files_hashed{state="pending"} 0' && return 0
        sleep 0.1
    done
    bad "files hashed within ${1:-60} s" "$(curl -s --max-time 5 "$URL/metrics" | grep '^ztensord_files_hashed')"
}
