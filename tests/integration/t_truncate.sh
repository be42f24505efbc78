#!/bin/bash
# Files changed in place under the daemon: truncation during and before downloads (raw,
# ranges, multipart, zstd decoding), garbage written over header, data and footer. The
# daemon must not crash (SIGBUS), must not send bytes that were never in the file, must not
# leave a download hanging, and must list the damaged files as invalid after a rescan.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
BIG=$((32 << 20))
ZB=$((16 << 20))
rand "$T/big.raw" $BIG
text "$T/z.raw" $ZB
rand "$T/s.raw" 100000
pack "$T/big.zt" w=u8:$BIG:"$T/big.raw"
pack "$T/zbig.zt" --compress z=u8:$ZB:"$T/z.raw"
pack "$T/small.zt" s=u8:100000:"$T/s.raw"
info_json "$T/small.zt" "$T/small.json"
SOFF=$(cfield "$T/small.json" s data offset)
fresh() { # copy the pristine files into the root
    cp "$T/big.zt" "$T/zbig.zt" "$R/"
    for n in g1 g2 g3 g4; do cp "$T/small.zt" "$R/$n.zt"; done
}
fresh

listed_status() {
    curl -s --max-time 5 "$URL/v1/files" -o "$T/l.json"
    $HELP listing "$T/l.json" "$1" status 2>/dev/null
}
wait_status() { # NAME STATUS SECONDS
    local i
    for i in $(seq 1 $(($3 * 10))); do
        [ "$(listed_status "$1")" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
# is_prefix FILE ORIG: FILE's bytes are the first bytes of ORIG
is_prefix() { cmp -s -n "$(stat -c %s "$1")" "$1" "$2"; }
# of_either FILE A B: each byte of FILE is the byte at its offset in A or in B (the file
# as it was, or as rewritten in place: a download sent by sendfile while its reader is
# held may send either, byte by byte, but never a byte that was in neither)
of_either() {
    $PY - "$@" <<'PYEOF'
import sys
f, a, b = (open(p, "rb").read() for p in sys.argv[1:4])
sys.exit(0 if all(x in (a[i:i + 1], b[i:i + 1]) for i, x in enumerate(f[k:k + 1] for k in range(len(f)))) else 1)
PYEOF
}

# timed_get TAG MAXTIME CURL-ARGS...: background download; sets BG_PID, writes $T/TAG.*
timed_get() {
    local tag=$1 mt=$2
    shift 2
    (
        t0=$(date +%s%N)
        curl -s --max-time "$mt" -o "$T/$tag.body" -w '%{http_code}' "$@" >"$T/$tag.code" 2>/dev/null
        echo $? >"$T/$tag.rc"
        touch "$T/$tag.body"
        echo $((($(date +%s%N) - t0) / 1000000)) >"$T/$tag.ms"
    ) &
    BG_PID=$!
}
# expect_cut LABEL TAG ORIG LIMIT_MS T_CUT_NS: an interrupted download: not a complete,
# successful transfer; only bytes of the original; ended by the server, not by curl's
# --max-time (LIMIT_MS and T_CUT_NS are kept for the callers; how soon is not asserted:
# the machine may be busy, and the daemons' connection_timeout bounds a hang anyway).
expect_cut() {
    local label=$1 tag=$2 orig=$3 lim=$4 tcut=$5 rc ms
    rc=$(cat "$T/$tag.rc")
    if [ "$(cat "$T/$tag.code")" = 503 ]; then
        # the server saw the file is shorter than its manifest says and refused
        ok "$label: refused with 503 (file changed on disk)"
        check_match "$label: the refusal is a JSON error" "$(head -c 200 "$T/$tag.body")" 'file_changed'
        return
    fi
    if [ "$rc" != 0 ] || ! cmp -s "$T/$tag.body" "$orig"; then
        ok "$label: the client sees an incomplete transfer (curl rc $rc, $(stat -c %s "$T/$tag.body") bytes)"
    else
        ok "$label: completed before the change (no harm)"
    fi
    check "$label: only bytes of the original file" is_prefix "$T/$tag.body" "$orig"
    if [ "$rc" = 28 ]; then
        bad "$label: the server ends the response (no hang)" \
            "still open when curl gave up (rc 28 after $(cat "$T/$tag.ms") ms): the connection hangs"
    else
        ok "$label: the server ends the response (no hang)"
    fi
}

# ================= daemon with inotify
# libmicrohttpd 0.9.75 does not notice sendfile() reaching a file that shrank
# under it (the connection would idle until connection_timeout); the server
# cuts such responses itself (tests/hostile/t_inplace.sh checks how fast). The
# short timeout here only bounds a hang should that regress.
start_daemon "$R" --connection-timeout 3s || finish

# ---- truncate during a slow download (sendfile path)
timed_get big1 60 --limit-rate 4M "$URL/v1/files/big.zt/objects/w/data"
p=$BG_PID
sleep 1
truncate -s 1000000 "$R/big.zt"
tcut=$(date +%s%N)
wait "$p"
expect_cut "raw component truncated mid-download" big1 "$T/big.raw" 10000 "$tcut"
req "healthz after truncation" 200 "$URL/healthz"
daemon_alive "no crash after truncation mid-download"
if wait_status big.zt error 30; then ok "truncated file listed as invalid after the rescan"; else bad "truncated file listed as invalid after the rescan" "status $(listed_status big.zt)"; fi
check_err "truncated file not served" 404 file_invalid "$URL/v1/files/big.zt/objects/w/data"
check_err "truncated file not served raw" 404 file_invalid "$URL/v1/files/big.zt/raw"

# ---- truncate during a slow decoded (zstd) download
timed_get z1 60 --limit-rate 2M "$URL/v1/files/zbig.zt/objects/z/data"
p=$BG_PID
sleep 1
truncate -s 200000 "$R/zbig.zt"
tcut=$(date +%s%N)
wait "$p"
expect_cut "zstd component truncated mid-decode" z1 "$T/z.raw" 10000 "$tcut"
daemon_alive "no crash after truncation mid-decode"
if wait_status zbig.zt error 30; then ok "truncated zstd file listed as invalid"; else bad "truncated zstd file listed as invalid"; fi

# ---- garbage over the header, the data, the footer (dd conv=notrunc)
head -c 64 /dev/urandom | dd of="$R/g1.zt" bs=64 count=1 conv=notrunc status=none
if wait_status g1.zt error 30; then ok "garbage header: listed as invalid"; else bad "garbage header: listed as invalid"; fi
check_err "garbage header: not served" 404 file_invalid "$URL/v1/files/g1.zt/objects/s/data"
sz=$(stat -c %s "$R/g3.zt")
head -c 16 /dev/urandom | dd of="$R/g3.zt" bs=1 seek=$((sz - 16)) conv=notrunc status=none
if wait_status g3.zt error 30; then ok "garbage footer: listed as invalid"; else bad "garbage footer: listed as invalid"; fi
# garbage in the data region only: the manifest is intact, so the file stays valid; the
# server serves what is on disk, but never under the manifest's digest (the write makes the
# old entry's verification void, and the new entry's check finds the mismatch)
req "g2 before the change" 200 "$URL/v1/files/g2.zt/objects/s/data"
head -c 4096 /dev/urandom | dd of="$R/g2.zt" bs=1 seek=$((SOFF + 1000)) conv=notrunc status=none
sleep 0.6
http "$T/g2" "$URL/v1/files/g2.zt/objects/s/data"
case $CODE in
200)
    ok "garbage in the data region: answered ($CODE)"
    slice "$R/g2.zt" "$SOFF" 100000 >"$T/g2.want"
    check_same "garbage in the data region: the bytes on disk" "$T/g2.body" "$T/g2.want"
    check_nomatch "garbage in the data region: no sha256 ETag" "$(hdr "$T/g2.hdr" ETag)" 'sha256'
    check_eq "garbage in the data region: no Repr-Digest" "$(hdr "$T/g2.hdr" Repr-Digest)" ""
    ;;
404 | 500 | 503) ok "garbage in the data region: refused ($CODE)" ;;
*) bad "garbage in the data region: answered" "HTTP $CODE" ;;
esac
# garbage written during a download of another file, held after its header block (zthelp
# heldget; slowget's 1.5 s with a "sleep 0.3" before the write let a busy machine start
# the download after it: a 503)
held_get g4 "$PORT" /v1/files/g4.zt/objects/s/data
check_eq "the download started before the garbage was written" "$HELD_STATUS" 200
p=$HELD_PID
head -c 200 /dev/urandom | dd of="$R/g4.zt" bs=1 seek=0 conv=notrunc status=none
if kill -0 "$p" 2>/dev/null; then ok "the download was still running when the garbage was written"; else
    bad "the download was still running when the garbage was written" "it had already finished: nothing was tested"
fi
held_release g4 "$p"
slice "$R/g4.zt" "$SOFF" 100000 >"$T/g4.now"
check "download during an in-place rewrite: only bytes of the file, before or after (${HELD_RESULT#* } bytes)" \
    of_either "$T/g4" "$T/s.raw" "$T/g4.now"
daemon_alive "no crash after the in-place rewrites"
req "healthz after the in-place rewrites" 200 "$URL/healthz"
stop_daemon

# ================= without inotify: requests against a stale entry after truncation
fresh
start_daemon "$R" --no-watch || finish
req "big.zt served before truncation" 206 -r 0-99 "$URL/v1/files/big.zt/objects/w/data"
truncate -s $((8 << 20)) "$R/big.zt"
truncate -s 300000 "$R/zbig.zt"
t0=$(date +%s%N)
timed_get s1 30 "$URL/v1/files/big.zt/objects/w/data"
wait "$BG_PID"
expect_cut "stale entry: full GET of a truncated file" s1 "$T/big.raw" 5000 "$t0"
timed_get s2 30 -r 16000000-16000099 "$URL/v1/files/big.zt/objects/w/data"
wait "$BG_PID"
check_nomatch "stale entry: range past the new end: no successful 206 with bytes ($(cat "$T/s2.code"), rc $(cat "$T/s2.rc"))" \
    "$(cat "$T/s2.rc"):$(stat -c %s "$T/s2.body")" '^0:100$'
if [ "$(cat "$T/s2.rc")" = 28 ]; then bad "stale entry: range past the new end ends (no hang: before curl gives up after 30 s)" "hangs until the client gives up"; else ok "stale entry: range past the new end ends (no hang: before curl gives up after 30 s)"; fi
timed_get s3 30 -r 0-9,16000000-16000099 "$URL/v1/files/big.zt/objects/w/data"
wait "$BG_PID"
if [ "$(cat "$T/s3.rc")" = 28 ]; then bad "stale entry: multipart past the new end ends (no hang: before curl gives up after 30 s)" "hangs"; else ok "stale entry: multipart past the new end ends (no hang: before curl gives up after 30 s)"; fi
timed_get s4 30 "$URL/v1/files/big.zt/raw"
wait "$BG_PID"
expect_cut "stale entry: /raw of a truncated file" s4 "$T/big.zt" 5000 "$t0"
timed_get s5 30 "$URL/v1/files/zbig.zt/objects/z/data"
wait "$BG_PID"
expect_cut "stale entry: decoding a truncated zstd component" s5 "$T/z.raw" 5000 "$t0"
# The component no longer lies whole on disk: every request for it is refused
# (503 file_changed, Retry-After) until a rescan settles the entry.
check_err "stale entry: a range inside the remaining bytes is refused" 503 file_changed \
    -r 1000-1999 "$URL/v1/files/big.zt/objects/w/data"
req "healthz with stale entries" 200 "$URL/healthz"
daemon_alive "no crash with stale truncated entries"
kill -HUP "$D_PID"
if wait_status big.zt error 30; then ok "SIGHUP: truncated file listed as invalid"; else bad "SIGHUP: truncated file listed as invalid"; fi
check_eq "SIGHUP: truncated zstd file listed as invalid" "$(listed_status zbig.zt)" error
check_match "invalid entry has an error message" "$($HELP listing "$T/l.json" big.zt error.message)" '.'
# restore and rescan: served again
cp "$T/big.zt" "$R/.b.tmp" && mv "$R/.b.tmp" "$R/big.zt"
kill -HUP "$D_PID"
if wait_status big.zt ok 30; then ok "restored file served again after SIGHUP"; else bad "restored file served again after SIGHUP"; fi
req "restored file range" 206 -r 30000000-30000099 "$URL/v1/files/big.zt/objects/w/data"
slice "$T/big.raw" 30000000 100 >"$T/want.bin"
check_same "restored file bytes" "$LAST.body" "$T/want.bin"

daemon_alive "daemon still running"
finish
