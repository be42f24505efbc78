#!/usr/bin/env bash
# zt pull --offline and ZT_OFFLINE=1 (as HF_HUB_OFFLINE), and an origin that
# cannot be reached (issue 26 section 3), against ztensord on 127.0.0.1
# through relay.py, whose log has a line for every request:
#   - a complete pull records its files (DIR/.ztpull-record/KEY);
#   - --offline and ZT_OFFLINE=1 check them on disk (digests) and exit 0,
#     sending no request at all (the relay's log does not grow);
#   - with the relay stopped (connection refused): --offline exits 0, and
#     without it the pull exits 0 with a warning (the listing's refused
#     connection is not retried: no server answered in this session);
#   - a corrupt component (same size) and a missing file are named, exit
#     status 1 offline (3, the network's, with the origin down); a command never pulled
#     complete has nothing to fall back on.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
MiB=$((1 << 20))
rand "$T/w.raw" $((2 * MiB))
rand "$T/s.raw" 4096
pack "$root/m.zt" w=u8:$((2 * MiB)):"$T/w.raw" s=u8:4096:"$T/s.raw" || rfinish
"$ZT" convert "$root/m.zt" -o "$root/s.safetensors" >/dev/null 2>&1 || bad "zt convert"
echo '{"model_type": "test"}' >"$root/config.json"
WAIT_VERIFIED=1 start_daemon "$root" || rfinish
start_relay "$PORT" pass || rfinish
src=http://127.0.0.1:$RPORT/v1/files/

# zpull ARGS...: zt pull into $T/o; exit status in $rc, stderr in $T/err.
zpull() {
    "$ZT" pull "$@" -o "$T/o" >"$T/out" 2>"$T/err"
    rc=$?
}

zpull --quiet "$src"
check_eq "the first pull: exit 0" "$rc" 0
check "it records the pull" test -n "$(ls "$T/o/.ztpull-record" 2>/dev/null)"

note "--offline: checked on disk, no request"
n0=$(wc -l <"$RLOG")
zpull --offline "$src"
check_eq "--offline: exit 0" "$rc" 0
check_match "--offline says what it checked" "$(cat "$T/err")" '3 files complete and verified'
ZT_OFFLINE=1 zpull "$src" --json
check_eq "ZT_OFFLINE=1: exit 0" "$rc" 0
check_eq "--json: a summary" "$($PY -c 'import json,sys; e=json.load(open(sys.argv[1])); print(e["event"], e["offline"], e["files"], e["failed"])' "$T/out")" \
    "summary True 3 0"
check_eq "no request sent by either" "$(wc -l <"$RLOG")" "$n0"

note "the origin cannot be reached (connection refused)"
stop_relay
zpull --offline "$src"
check_eq "--offline: exit 0" "$rc" 0
zpull "$src"
check_eq "without --offline: exit 0" "$rc" 0
check_match "with a warning" "$(cat "$T/err")" 'warning: the origin cannot be reached.*verified'
check_match "the listing's refused connection is not retried" "$(cat "$T/err")" \
    'Couldn.t connect to server; not retried: no server has answered at this address yet'
zpull "$src" --include 'config*'
check_eq "another selection, origin down, never pulled complete: exit 3" "$rc" 3

note "a corrupt component, a missing file"
off=$("$ZT" info --json "$T/o/m.zt" | $PY -c 'import json,sys; print(json.load(sys.stdin)["objects"]["w"]["components"]["data"]["offset"])')
flip_byte "$T/o/m.zt" $((off + 1000))
zpull --offline "$src"
check_eq "--offline with a corrupt component: exit 1" "$rc" 1
check_match "it names the file and the object" "$(cat "$T/err")" 'm.zt: corrupt.*"w"'
zpull "$src"
check_eq "origin down, a corrupt file: exit status 3 (the network's)" "$rc" 3
check_match "named too" "$(cat "$T/err")" 'm.zt: corrupt'
rm "$T/o/config.json"
ZT_OFFLINE=1 zpull "$src" --json
check_eq "a missing file: exit 1" "$rc" 1
check_eq "--json: the summary counts it" "$($PY -c 'import json,sys; e=json.load(open(sys.argv[1])); print(e["files"], e["failed"])' "$T/out")" "1 2"
check_match "named" "$(cat "$T/err")" 'config.json: missing'
zpull --offline "${src}m.zt"
check_eq "a command never pulled complete: exit 1" "$rc" 1
check_match "it says so" "$(cat "$T/err")" 'no complete pull of these URLs'
rfinish
