#!/bin/bash
# huggingface_hub, the Python client, against /hf (hf_py.py): only where its source is at
# hand, since it cannot be installed from Debian: ZT_HF_HUB_SRC=DIR (DIR/huggingface_hub,
# e.g. the src/ of its tag v1.3.7) with Debian's python3-httpx, -filelock, -fsspec,
# -packaging, -tqdm and -yaml. Without it, one SKIP line.
#   t_python.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

if [ -z "${ZT_HF_HUB_SRC:-}" ] || [ ! -d "$ZT_HF_HUB_SRC/huggingface_hub" ]; then
    skip "huggingface_hub" "set ZT_HF_HUB_SRC to the src/ directory of huggingface_hub's source"
    finish
fi
R=$T/root
make_repo "$R/org/model"
expect_dir "$R/org/model" "$T/expect" # views: zt convert's output
start_daemon "$R" || finish
# shellcheck disable=SC2046
PYTHONPATH=$ZT_HF_HUB_SRC $PY "$HF_DIR/hf_py.py" "$URL/hf" org/model "$T/expect" "$T" \
    $(repo_files "$R/org/model") >"$T/py.out" 2>"$T/py.err"
rc=$?
while read -r st rest; do
    case $st in ok) ok "$rest" ;; FAIL) bad "${rest%%:*}" "${rest#*: }" ;; esac
done <"$T/py.out"
check_eq "hf_py.py exit status" "$rc" 0
[ "$rc" = 0 ] || sed 's/^/    /' "$T/py.err" | tail -20
finish
