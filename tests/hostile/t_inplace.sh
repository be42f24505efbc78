#!/bin/bash
# In-place changes to a served file (issue 10, point 9). A download of a 256 MiB
# component, held in flight by a reader that stops reading (held_get), while the file is overwritten with
# `cp` (same inode: truncate, then write) must end as a transfer error, never as a
# complete body that mixes two versions under the old ETag; one truncated in place must
# be aborted for the change (the file_changed cut count moves; not closed at
# connection_timeout, 60 s); one replaced by rename must complete
# untouched. Without inotify (--no-watch) the connection sweep finds the change within
# about a second.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
N=$((256 << 20))
rand "$T/a.raw" $N
rand "$T/b.raw" $N
pack "$T/a.zt" w=u8:$N:"$T/a.raw" || finish
pack "$T/b.zt" w=u8:$N:"$T/b.raw" || finish
check_eq "the two versions have the same size" "$(stat -c %s "$T/a.zt")" "$(stat -c %s "$T/b.zt")"
DATA=/v1/files/m.zt/objects/w/data

# put_a: m.zt is version A again, replaced by rename, and the server serves it (with its
# digest ETag once the new inode is verified again: wait_verified).
put_a() {
    cp "$T/a.zt" "$R/.m.tmp" && mv "$R/.m.tmp" "$R/m.zt"
    local i
    for i in $(seq 1 50); do
        http "$T/pa" -r 0-0 "$URL$DATA"
        if [ "$CODE" = 206 ] && wait_verified; then
            http "$T/pa" -r 0-0 "$URL$DATA"
            [ "$CODE" = 206 ] && [ "$(hdr "$T/pa.hdr" ETag)" = "$ETAG_A" ] && return 0
        fi
        sleep 0.1
    done
    bad "m.zt served as version A again" "HTTP $CODE, ETag $(hdr "$T/pa.hdr" ETag), want $ETAG_A"
}
# download TAG: GET the component with a held reader (held_get): it stops after the
# header block and the first byte of the body, so the response is certainly in flight
# (256 MiB, far more than the socket buffers) however long the steps between take.
# Sets DL; download_end TAG lets it read the rest (into $T/TAG, headers $T/TAG.hdr).
download() {
    held_get "$1" "$PORT" "$DATA" 1
    DL=$HELD_PID
    check_eq "$1: the download is under way (HTTP 200 and a first byte)" "$HELD_STATUS" 200
}
download_end() { held_release "$1" "$DL"; }
# cuts: the file_changed cuts counted so far.
cuts() {
    curl -s --max-time 10 "$URL/metrics" |
        awk '$1 == "ztensord_connections_closed_total{reason=\"file_changed\"}" { print $2 }'
}
# wait_cut LABEL BEFORE: the daemon aborts the held response because its file changed:
# the file_changed cut count passes BEFORE (polled, up to 30 s: well below
# connection_timeout, 60 s, and a close for any other reason is not counted there).
wait_cut() {
    local i n=
    for i in $(seq 1 300); do
        n=$(cuts)
        [ "${n:-0}" -gt "$2" ] 2>/dev/null && break
        sleep 0.1
    done
    if [ "${n:-0}" -gt "$2" ] 2>/dev/null; then
        ok "$1: the daemon aborted the response (file_changed cuts $2 -> $n)"
    else
        bad "$1: the daemon aborted the response" "file_changed cuts still ${n:-absent} (before: $2)"
    fi
}
# is_prefix FILE ORIG: FILE's bytes are the first bytes of ORIG
is_prefix() { cmp -s -n "$(stat -c %s "$1")" "$1" "$2"; }
# cut_check LABEL TAG: the download, released after the abort, got a 200 with the full
# Content-Length and a short body (what curl reports as a transfer error).
cut_check() {
    local label=$1 tag=$2 size
    size=$(stat -c %s "$T/$tag")
    if [ "$size" -lt "$N" ]; then ok "$label: the body is short ($size of $N bytes)"; else bad "$label: the body is short" "$size bytes"; fi
    check_eq "$label: the response was a 200 with the full Content-Length" \
        "$(hdr "$T/$tag.hdr" Content-Length)" "$N"
}

cp "$T/a.zt" "$R/m.zt"
start_daemon "$R" || finish
wait_verified # ETAG_A below is then version A's digest ETag, the same for every copy of it
req "version A served" 206 -r 0-99 "$URL$DATA"
ETAG_A=$(hdr "$LAST.hdr" ETag)

# ---- cp over the file during a download
download over
c0=$(cuts)
cp "$T/b.zt" "$R/m.zt"
wait_cut "cp over the file mid-download" "${c0:-0}"
download_end over
cut_check "cp over the file mid-download" over
if [ "$(stat -c %s "$T/over")" = "$N" ] && ! cmp -s "$T/over" "$T/a.raw"; then
    bad "cp over the file mid-download: never a complete body mixing the versions" "got one"
else
    ok "cp over the file mid-download: never a complete body mixing the versions"
fi
# Bytes already queued when the change lands may be new ones (sendfile reads the page
# cache as it goes); the transfer fails all the same. Say which it was.
if is_prefix "$T/over" "$T/a.raw"; then
    note "every byte received is version A's ($(stat -c %s "$T/over") bytes)"
else
    note "some bytes received are version B's: the change raced the abort"
fi
check_match "the abort is counted" \
    "$(curl -s "$URL/metrics" | awk '$1 == "ztensord_connections_closed_total{reason=\"file_changed\"}" { print $2 }')" '^[1-9]'
check_match "the abort is logged" "$(grep 'changed on disk while being sent' "$D_ERR" | head -1)" 'm\.zt'
# New requests: 503 file_changed until the rescan (or 404 file_invalid if a rescan saw
# the file half-written), then version B under a new ETag.
code=
for i in $(seq 1 50); do
    http "$T/after" "$URL$DATA"
    code=$CODE
    [ "$code" = 200 ] && break
    sleep 0.1
done
check_eq "after the rescan the new version is served" "$code" 200
check_same "after the rescan: the bytes are version B's" "$T/after.body" "$T/b.raw"
check_ne "after the rescan: the ETag changed" "$(hdr "$T/after.hdr" ETag)" "$(hdr "$T/over.hdr" ETag)"

# ---- truncation during a download
put_a
download trunc
c0=$(cuts)
truncate -s 1000000 "$R/m.zt"
wait_cut "truncation mid-download" "${c0:-0}"
download_end trunc
cut_check "truncation mid-download" trunc
# The bytes the file still holds are version A's. Those queued beyond the cut may read
# as zeros: sendfile's queued pages are the page cache's, which the truncation cleared
# (a reader held while the cut lands has megabytes queued).
n=$(stat -c %s "$T/trunc")
[ "$n" -gt 900000 ] && n=900000
check "truncation: the bytes still in the file are version A's ($n)" cmp -s -n "$n" "$T/trunc" "$T/a.raw"

# ---- replaced by rename during a download: not disturbed
put_a
download renamed
cp "$T/b.zt" "$R/.m.tmp" && mv "$R/.m.tmp" "$R/m.zt"
# The held response is still in flight once the daemon serves the new version.
for i in $(seq 1 100); do
    http "$T/nb" -r 0-0 "$URL$DATA"
    [ "$CODE" = 206 ] && [ "$(hdr "$T/nb.hdr" ETag)" != "$ETAG_A" ] && break
    sleep 0.1
done
check_ne "replaced by rename mid-download: new requests get the new version meanwhile" "$(hdr "$T/nb.hdr" ETag)" "$ETAG_A"
download_end renamed
check_eq "replaced by rename mid-download: the download completes" "$HELD_RESULT" "200 $N"
check_same "replaced by rename mid-download: every byte is version A's" "$T/renamed" "$T/a.raw"
daemon_alive "daemon alive after the in-place changes"
stop_daemon

# ================= without inotify: the sweep fstat()s pinned files every second
cp "$T/a.zt" "$R/m.zt"
start_daemon "$R" --no-watch || finish
download nowatch
c0=$(cuts)
truncate -s 1000000 "$R/m.zt"
wait_cut "--no-watch: truncation mid-download" "${c0:-0}"
download_end nowatch
cut_check "--no-watch: truncation mid-download" nowatch
check_err "--no-watch: later requests are refused until a rescan" 503 file_changed "$URL$DATA"
check_eq "--no-watch: 503 file_changed has Retry-After" "$(hdr "$LAST.hdr" Retry-After)" 1

finish
