#!/bin/bash
# In-place changes to a served file (issue 10, point 9). A download of a 256 MiB
# component, rate-limited so that it is in flight, while the file is overwritten with
# `cp` (same inode: truncate, then write) must end as a transfer error, never as a
# complete body that mixes two versions under the old ETag; one truncated in place must
# close at once (not at connection_timeout, 60 s); one replaced by rename must complete
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
# download TAG RATE: GET the component in the background (curl --limit-rate RATE);
# writes $T/TAG.{body,hdr,rc,end}; sets DL.
download() {
    local tag=$1 rate=$2
    (
        curl -sS --max-time 60 --limit-rate "$rate" -D "$T/$tag.hdr" -o "$T/$tag.body" \
            "$URL$DATA" 2>"$T/$tag.err"
        echo $? >"$T/$tag.rc"
        date +%s%N >"$T/$tag.end"
    ) &
    DL=$!
}
# is_prefix FILE ORIG: FILE's bytes are the first bytes of ORIG
is_prefix() { cmp -s -n "$(stat -c %s "$1")" "$1" "$2"; }
# cut_check LABEL TAG T_CHANGE_NS: the download ended with a transfer error, short,
# within 2.5 s of the change.
cut_check() {
    local label=$1 tag=$2 t=$3 rc size ms
    rc=$(cat "$T/$tag.rc")
    size=$(stat -c %s "$T/$tag.body")
    ms=$((($(cat "$T/$tag.end") - t) / 1000000))
    check_match "$label: curl reports a transfer error (rc $rc, $size of $N bytes)" "$rc" '^(18|56)$'
    if [ "$size" -lt "$N" ]; then ok "$label: the body is short"; else bad "$label: the body is short" "$size bytes"; fi
    if [ "$ms" -le 2500 ]; then
        ok "$label: the connection closed ${ms} ms after the change"
    else
        bad "$label: the connection closed within 2.5 s of the change" "after $ms ms (rc $rc)"
    fi
    check_eq "$label: the response was a 200 with the full Content-Length" \
        "$(hdr "$T/$tag.hdr" Content-Length)" "$N"
}

cp "$T/a.zt" "$R/m.zt"
start_daemon "$R" || finish
wait_verified # ETAG_A below is then version A's digest ETag, the same for every copy of it
req "version A served" 206 -r 0-99 "$URL$DATA"
ETAG_A=$(hdr "$LAST.hdr" ETag)

# ---- cp over the file during a download
download over 50M
sleep 1
tc=$(date +%s%N)
cp "$T/b.zt" "$R/m.zt"
wait "$DL"
cut_check "cp over the file mid-download" over "$tc"
if [ "$(stat -c %s "$T/over.body")" = "$N" ] && ! cmp -s "$T/over.body" "$T/a.raw"; then
    bad "cp over the file mid-download: never a complete body mixing the versions" "got one"
else
    ok "cp over the file mid-download: never a complete body mixing the versions"
fi
# Bytes already queued when the change lands may be new ones (sendfile reads the page
# cache as it goes); the transfer fails all the same. Say which it was.
if is_prefix "$T/over.body" "$T/a.raw"; then
    note "every byte received is version A's ($(stat -c %s "$T/over.body") bytes)"
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
download trunc 50M
sleep 1
tc=$(date +%s%N)
truncate -s 1000000 "$R/m.zt"
wait "$DL"
cut_check "truncation mid-download" trunc "$tc"
check "truncation: only bytes of version A" is_prefix "$T/trunc.body" "$T/a.raw"

# ---- replaced by rename during a download: not disturbed
put_a
download renamed 100M
sleep 0.5
cp "$T/b.zt" "$R/.m.tmp" && mv "$R/.m.tmp" "$R/m.zt"
wait "$DL"
check_eq "replaced by rename mid-download: the download completes" "$(cat "$T/renamed.rc")" 0
check_same "replaced by rename mid-download: every byte is version A's" "$T/renamed.body" "$T/a.raw"
daemon_alive "daemon alive after the in-place changes"
stop_daemon

# ================= without inotify: the sweep fstat()s pinned files every second
cp "$T/a.zt" "$R/m.zt"
start_daemon "$R" --no-watch || finish
download nowatch 50M
sleep 1
tc=$(date +%s%N)
truncate -s 1000000 "$R/m.zt"
wait "$DL"
cut_check "--no-watch: truncation mid-download" nowatch "$tc"
check_err "--no-watch: later requests are refused until a rescan" 503 file_changed "$URL$DATA"
check_eq "--no-watch: 503 file_changed has Retry-After" "$(hdr "$LAST.hdr" Retry-After)" 1

finish
