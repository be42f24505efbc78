#!/usr/bin/env bash
# zt pull of a prefix from a server whose listing lies (issue 27, finding 3,
# and "zt pull accepts listing names outside the prefix"), served by
# liar.py on 127.0.0.1. Each must end with an error that says what the
# server did, before any file is pulled and within a bounded number of pages
# (liar.py logs the pages it served, and the peak resident memory of the
# pull from /proc while it waits for each page):
#   - every page the same 100-byte cursor and 1000 new names (the old code
#     compared the cursor truncated to 64 bytes: it grew by 85 MB/s);
#   - cursors alternating A, B, A (the old code compared the last one only);
#   - a name listed twice; a name outside the prefix;
#   - new names and cursors forever: stopped by --max-files, by
#     ZT_PULL_MAX_FILES, by --max-listing-bytes, and by the default cap.
# liar.py stops any listing after 300 pages (410), so old code ends too.
. "$(dirname "$0")/lib.sh" "$@"

# listing MODE NAME WANT_STATUS WANT_RE MAX_PAGES [ZT-ARGS...]: zt pull of
# liar.py's prefix p/ in MODE exits WANT_STATUS with stderr matching WANT_RE,
# having asked for at most MAX_PAGES pages and created nothing in its DIR.
listing() {
    local mode=$1 name=$2 want=$3 re=$4 max=$5 rc=0
    shift 5
    start_py_helper liar "$REMOTE_DIR/liar.py" "$mode" "$T/pull.pid" || return
    local pid=$HELPER_PID log=$HELPER_LOG port=$HELPER_PORTS
    rm -rf "$T/out" "$T/pull.pid"
    # The pid first, so that liar.py reads the pull's memory from the first page on.
    bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$T/pull.pid" \
        "$ZT" pull --quiet "$@" "http://127.0.0.1:$port/v1/files/p/" -o "$T/out" \
        >/dev/null 2>"$T/err" || rc=$?
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    local pages hwm
    pages=$(grep -c ' /v1/files?' "$log")
    hwm=$(awk '{sub("hwm=", "", $3); if ($3 > m) m = $3} END {print m + 0}' "$log")
    note "$name: $pages pages, peak RSS $hwm kB; $(head -c 300 "$T/err")"
    check_eq "$name: exit status $want" "$rc" "$want"
    check_match "$name: the message says why" "$(cat "$T/err")" "$re"
    check "$name: at most $max pages asked for" test "$pages" -le "$max"
    check_eq "$name: nothing pulled" "$(find "$T/out" -type f 2>/dev/null | wc -l)" 0
    HWM=$hwm
}

listing samecursor "the same cursor on every page" 3 'ZT_E_HTTP: .*page 2 gives a cursor an earlier page gave' 2
check "the same cursor: peak RSS under 64 MiB ($HWM kB)" test "$HWM" -lt 65536
listing alternate "cursors A, B, A" 3 'ZT_E_HTTP: .*page 3 gives a cursor an earlier page gave' 3
listing twice "a name listed twice" 3 'listed "p/0001.zt" twice' 2
listing outside "a name outside the prefix" 3 '"elsewhere/x.zt", which is outside the prefix "p/"' 1
listing fresh "new names forever, --max-files 5000" 1 'over its cap of 5000 files' 6 --max-files 5000
ZT_PULL_MAX_FILES=3000 listing fresh "new names forever, ZT_PULL_MAX_FILES=3000" 1 'over its cap of 3000 files' 4
# Names are "p/f000000001.zt": 15 bytes, 15,000 a page.
listing fresh "new names forever, --max-listing-bytes 100K" 1 'over its cap of 102400 bytes of names' 7 \
    --max-listing-bytes 100K
listing fresh "new names forever, the default cap (100,000 files)" 1 'over its cap of 100000 files' 101
# About 350 bytes a listed file: 35 MiB (measured 39 MiB in all; 98 MiB under ASan).
bound=131072
[ "${ZT_SANITIZED:-0}" = 1 ] && bound=262144
check "the default cap: peak RSS under $((bound / 1024)) MiB ($HWM kB)" test "$HWM" -lt $bound

rfinish
