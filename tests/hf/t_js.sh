#!/bin/bash
# @huggingface/hub (npm, tests/clients) with hubUrl set to ztensord's /hf: modelInfo,
# listFiles (recursive), fileDownloadInfo, downloadFile of every file byte-exact (at main
# and at the commit), fileExists, downloadFileToCacheDir and snapshotDownload into the
# hub's cache layout; for a two-level and a one-level repository (hf_js.mjs). The
# safetensors views (sub/extra.safetensors) are files like any other to the client.
#   t_js.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

CLIENTS=$REPO/tests/clients
need_tool node nodejs
[ -f "$CLIENTS/node_modules/@huggingface/hub/package.json" ] || {
    bad "@huggingface/hub is installed" "run npm ci in tests/clients (.ci/deps)"
    finish
}
R=$T/root
make_repo "$R/org/model"
make_repo "$R/gpt2"
start_daemon "$R" || finish

for repo in org/model gpt2; do
    expect_dir "$R/$repo" "$T/expect/$repo" # views: zt convert's output
    # shellcheck disable=SC2046
    node "$HF_DIR/hf_js.mjs" "$CLIENTS" "$URL/hf" "$repo" "$T/expect/$repo" "$T/cache-${repo//\//-}" \
        $(repo_files "$R/$repo") >"$T/js.out" 2>"$T/js.err"
    rc=$?
    while read -r st rest; do
        case $st in ok) ok "$repo: $rest" ;; FAIL) bad "$repo: ${rest%%:*}" "${rest#*: }" ;; esac
    done <"$T/js.out"
    check_eq "$repo: hf_js.mjs exit status" "$rc" 0
    [ "$rc" = 0 ] || sed 's/^/    /' "$T/js.err" | head -20
done
finish
