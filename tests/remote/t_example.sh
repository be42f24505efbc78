#!/usr/bin/env bash
# docs/PULL.md's example (load_model.c, compiled by cmake from the page) run
# against ztensord: it loads every component of the demo files, and prints
# what zt info says they are. Then the same source is compiled against an
# installed tree with `pkg-config ztensor-remote`, which checks the .pc files.
. "$(dirname "$0")/lib.sh" "$@"
LM=$(dirname "$RC")/load_model

root=$T/root
mkdir -p "$root"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root" >/dev/null || bad "make-demo.sh"
start_daemon "$root" || rfinish

# expected FILE: what load_model prints, from the local file's JSON.
expected() {
    "$ZT" info --json "$1" | $PY -c '
import json, sys
m = json.load(sys.stdin)
n = t = 0
for name, o in m["objects"].items():
    for role, c in o["components"].items():
        size = c.get("uncompressed_length", c["length"])
        print("%s\t%s\t%s\t%d" % (name, role, c["dtype"], size))
        n += 1
        t += size
print("%d components, %d bytes" % (n, t))'
}

run_example() { # NAME BINARY
    local rel
    for rel in tiny.zt llama/model-00001.zt; do
        expected "$root/$rel" >"$T/want"
        if "$2" "$URL/v1/files/$rel" >"$T/got" 2>"$T/err"; then
            check_same "$1: $rel" "$T/got" "$T/want"
        else
            bad "$1: $rel" "$(head -c 300 "$T/err")"
        fi
    done
    "$2" "$URL/v1/files/missing.zt" >/dev/null 2>"$T/err"
    check_eq "$1: a missing file exits 1" "$?" 1
    check_match "$1: and says why" "$(cat "$T/err")" 'ZT_E_NOT_FOUND: HTTP 404'
}
run_example "load_model (built by cmake)" "$LM"

if [ -n "${ZT_BUILD_DIR:-}" ] && command -v pkg-config >/dev/null; then
    inst=$T/inst
    if cmake --install "$ZT_BUILD_DIR" --prefix "$inst" >"$T/install.log" 2>&1; then
        ok "cmake --install"
        pc=$(find "$inst" -name ztensor-remote.pc | head -1)
        export PKG_CONFIG_PATH=$(dirname "$pc")
        flags=$(pkg-config --cflags --libs ztensor-remote)
        check_match "pkg-config ztensor-remote" "$flags" '-lztensor-remote .*-lztensor'
        # shellcheck disable=SC2086
        if ${CC:-cc} ${ZT_EXAMPLE_CFLAGS:-} -Wall -Werror "$(dirname "$RC")/load_model.c" $flags \
            -Wl,-rpath,"$(pkg-config --variable=libdir ztensor)" -o "$T/load_model" 2>"$T/cc.log"; then
            ok "load_model.c compiles with pkg-config"
            run_example "load_model (installed)" "$T/load_model"
        else
            bad "load_model.c compiles with pkg-config" "$(head -c 600 "$T/cc.log")"
        fi
    else
        bad "cmake --install" "$(tail -5 "$T/install.log")"
    fi
else
    skip "installed tree" "ZT_BUILD_DIR or pkg-config missing"
fi
rfinish
