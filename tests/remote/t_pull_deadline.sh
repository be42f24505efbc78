#!/usr/bin/env bash
# zt pull against a server that drips (issue 27, finding 7): liar.py answers
# every GET with 200 and a Content-Length, then one byte every half second.
# The old pull waited forever (curl's low-speed limit was 1 byte/s for the
# listing, and the range requests had no rate at all). Checked with a short
# window and deadline so the test is quick; what is asserted is the exit
# status and the message, never how long it took:
#   - a listing that drips, --min-rate 1K --stall-timeout 1: exit 3, "too slow";
#   - a file whose open drips, the same: exit 3, "fewer than 1024 bytes";
#   - the default rate is on: --stall-timeout 1 alone ends a file's drip;
#   - --timeout 2 (the rate off, so only the deadline can end it), for a
#     listing and for a file, and ZT_TIMEOUT=2: exit 3, the deadline passed,
#     and the pull says --timeout passed.
. "$(dirname "$0")/lib.sh" "$@"

start_py_helper liar "$REMOTE_DIR/liar.py" drip 0.5 || rfinish
D=http://127.0.0.1:$HELPER_PORTS/v1/files

# drip NAME WANT_RE URL [ZT-ARGS...]: zt pull exits 3 with stderr matching
# WANT_RE. A pull that never ends is killed after 120 s (a failure, not a
# measure: nothing here depends on how long the pull took).
drip() {
    local name=$1 re=$2 url=$3
    shift 3
    rm -rf "$T/out"
    "$ZT" pull --quiet "$@" "$url" -o "$T/out" 2>"$T/err" >/dev/null &
    wait_exit $! 120
    note "$name: $(head -c 400 "$T/err" | tr '\n' ' ')"
    check_eq "$name: exit status 3" "$EXIT_RC" 3
    check_match "$name: the message says why" "$(cat "$T/err")" "$re"
    check_eq "$name: nothing published" "$(find "$T/out" -name '*.zt' -type f 2>/dev/null | wc -l)" 0
}

drip "a listing that drips, --min-rate 1K" 'too slow|Less than 1024 bytes' "$D/p/" \
    --min-rate 1K --stall-timeout 1
drip "a file that drips, --min-rate 1K" 'fewer than 1024 bytes in 1 s' "$D/m.zt" \
    --min-rate 1K --stall-timeout 1
drip "a file that drips, the default rate" 'fewer than 1024 bytes in 1 s' "$D/m.zt" \
    --stall-timeout 1
# deadline NAME URL [ZT-ARGS...]: the rate off, only a deadline of 2 s can end it.
deadline() {
    local name=$1 url=$2
    shift 2
    drip "$name" "the session's deadline .*(passed|ends before the next attempt)" "$url" \
        --min-rate 0 "$@"
    check_match "$name: the pull says --timeout passed" "$(cat "$T/err")" \
        '^zt pull: --timeout \(2 s\) passed: the pull stopped'
}
deadline "a listing that drips, --timeout 2" "$D/p/" --timeout 2
deadline "a file that drips, --timeout 2" "$D/m.zt" --timeout 2
ZT_TIMEOUT=2 deadline "a file that drips, ZT_TIMEOUT=2" "$D/m.zt"

rfinish
