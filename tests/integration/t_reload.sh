#!/bin/bash
# Live reload: files added, replaced by rename (under load) and removed are seen within
# 2 s through inotify, or on SIGHUP with --no-watch; an inotify event naming one file updates
# its entry without a rescan (ztensord_catalog_reloads_total), a directory moved in rescans.
# Every response during replacements is
# one whole version with the ETag of its bytes (its sha256 once verified, before that an
# identity ETag: never the digest of the other version).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
S=$T/stage
mkdir -p "$R" "$S" "$T/loop"
rand "$T/k.raw" 1000
pack "$R/keep.zt" k=u8:1000:"$T/k.raw"
rand "$T/n.raw" 2000
pack "$S/new.zt" n=u8:2000:"$T/n.raw"
SZ=$((8 << 20))
rand "$T/A.raw" $SZ
rand "$T/B.raw" $SZ
pack "$S/A.zt" w=u8:$SZ:"$T/A.raw"
pack "$S/B.zt" w=u8:$SZ:"$T/B.raw"
HA=$(sha256_hex "$T/A.raw")
HB=$(sha256_hex "$T/B.raw")
FA=$(sha256_hex "$S/A.zt")
FB=$(sha256_hex "$S/B.zt")
cp "$S/A.zt" "$R/r.zt"

# listed NAME: is NAME in the listing? (prints its status or MISSING)
listed() {
    curl -s --max-time 5 "$URL/v1/files" -o "$T/l.json"
    $HELP listing "$T/l.json" "$1" status 2>/dev/null
}
# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds; prints the time taken.
# (30 s everywhere: what is asserted is that the change is seen, not how soon; a 2 s
# limit is what the debounce gives on a quiet machine, not on a busy one)
wait_for() {
    local lim=$1 i t0
    shift
    t0=$(date +%s%N)
    for i in $(seq 1 $((lim * 10))); do
        if "$@" >/dev/null 2>&1; then
            WAITED_MS=$((($(date +%s%N) - t0) / 1000000))
            return 0
        fi
        sleep 0.1
    done
    WAITED_MS=$((($(date +%s%N) - t0) / 1000000))
    return 1
}
is_listed() { [ "$(listed "$1")" = ok ]; }
not_listed() { [ "$(listed "$1")" = MISSING ]; }
is_code() { [ "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$URL$2")" = "$1" ]; }
comp_etag_is() { [ "$(curl -s --max-time 5 -o /dev/null -D - "$URL$1" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')" = "$2" ]; }
comp_sha_is() { [ "$(curl -s --max-time 5 "$URL$1" | openssl dgst -sha256 -r | cut -d' ' -f1)" = "$2" ]; }

start_daemon "$R" || finish

# ---- add (inotify)
check_eq "new.zt absent at first" "$(listed new.zt)" MISSING
mv "$S/new.zt" "$R/new.zt"
if wait_for 30 is_listed new.zt; then ok "added file listed (${WAITED_MS} ms)"; else bad "added file listed"; fi
req "added file served" 200 "$URL/v1/files/new.zt/objects/n/data"
check_same "added file bytes" "$LAST.body" "$T/n.raw"
# a new subdirectory, then a file moved into it right away
mkdir -p "$R/d1/d2"
cp "$R/new.zt" "$R/.tmp.zt"
mv "$R/.tmp.zt" "$R/d1/d2/deep.zt"
if wait_for 30 is_listed d1/d2/deep.zt; then ok "file in a new subdirectory listed"; else bad "file in a new subdirectory listed"; fi
sleep 0.5
cp "$R/new.zt" "$R/d1/d2/.tmp.zt"
mv "$R/d1/d2/.tmp.zt" "$R/d1/d2/later.zt"
if wait_for 30 is_listed d1/d2/later.zt; then ok "second file in the new subdirectory listed"; else bad "second file in the new subdirectory listed"; fi
# a hidden temporary file is not listed
cp "$R/new.zt" "$R/.hidden.zt"
sleep 0.6
check_eq "hidden temporary file not listed" "$(listed .hidden.zt)" MISSING
rm -f "$R/.hidden.zt"

# ---- replace by rename under load
wait_verified
req "r.zt version A" 200 "$URL/v1/files/r.zt/objects/w/data"
check_eq "r.zt A ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$HA\""
listing_etag_before=$($HELP listing "$T/l.json" r.zt etag)

reader() { # TAG COUNT EXTRA-CURL-ARGS...: sequential requests, each body and header saved
    local tag=$1 n=$2 i
    shift 2
    for i in $(seq 1 "$n"); do
        curl -s --max-time 30 "$@" -D "$T/loop/$tag.$i.hdr" -o "$T/loop/$tag.$i.body" \
            -w '%{http_code}\n' "$URL/v1/files/r.zt/objects/w/data" >"$T/loop/$tag.$i.code" 2>/dev/null
    done
}
rawreader() {
    local n=$1 i
    for i in $(seq 1 "$n"); do
        curl -s --max-time 30 -o "$T/loop/raw.$i.body" -w '%{http_code}\n' \
            "$URL/v1/files/r.zt/raw" >"$T/loop/raw.$i.code" 2>/dev/null
    done
}
reader fast 60 &
p1=$!
reader slow 12 --limit-rate 40M &
p2=$!
rawreader 30 &
p3=$!
for k in $(seq 1 16); do
    if [ $((k % 2)) = 1 ]; then v=B; else v=A; fi
    cp "$S/$v.zt" "$R/.r.tmp"
    mv -f "$R/.r.tmp" "$R/r.zt"
    sleep 0.2
done
# the last replacement put version A back; put B for the final state
cp "$S/B.zt" "$R/.r.tmp"
mv -f "$R/.r.tmp" "$R/r.zt"
wait "$p1" "$p2" "$p3"

total=0
good=0
nA=0
nB=0
nid=0
badlist=
for c in "$T"/loop/fast.*.code "$T"/loop/slow.*.code; do
    b=${c%.code}
    total=$((total + 1))
    code=$(cat "$c")
    h=$(sha256_hex "$b.body")
    e=$(hdr "$b.hdr" ETag)
    if [ "$code" = 200 ] && { [ "$h" = "$HA" ] || [ "$h" = "$HB" ]; } &&
        { [ "$e" = "\"sha256:$h\"" ] || [[ $e =~ ^\"[0-9a-f]{32}\"$ ]]; }; then
        good=$((good + 1))
        [[ $e =~ ^\"[0-9a-f]{32}\"$ ]] && nid=$((nid + 1))
        [ "$h" = "$HA" ] && nA=$((nA + 1)) || nB=$((nB + 1))
    else
        badlist="$badlist $(basename "$b"):$code:$(stat -c %s "$b.body"):${e:0:20}"
    fi
done
note "component responses: $total ($nA version A, $nB version B; $nid sent before verification)"
check_eq "every component response during replacements is one whole version with its ETag" "$good/$total$badlist" "$total/$total"
[ "$nB" -gt 0 ] && ok "replacements were observed by the readers" || bad "replacements were observed by the readers" "all $nA responses were version A"
rgood=0
rtotal=0
for c in "$T"/loop/raw.*.code; do
    b=${c%.code}
    rtotal=$((rtotal + 1))
    h=$(sha256_hex "$b.body")
    [ "$(cat "$c")" = 200 ] && { [ "$h" = "$FA" ] || [ "$h" = "$FB" ]; } && rgood=$((rgood + 1))
done
check_eq "every /raw response during replacements is one whole file" "$rgood" "$rtotal"

if wait_for 30 comp_sha_is /v1/files/r.zt/objects/w/data "$HB"; then
    ok "final version B served"
else
    bad "final version B served"
fi
wait_verified
req "r.zt version B" 200 "$URL/v1/files/r.zt/objects/w/data"
check_same "r.zt version B bytes" "$LAST.body" "$T/B.raw"
check_eq "new ETag after replacement" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$HB\""
curl -s "$URL/v1/files" -o "$T/l.json"
check_ne "listing etag changed after replacement" "$($HELP listing "$T/l.json" r.zt etag)" "$listing_etag_before"
req "blob of version B" 200 "$URL/v1/blobs/sha256:$HB"
check_err "blob of the replaced version A is gone" 404 blob_not_found "$URL/v1/blobs/sha256:$HA"
req "old ETag no longer matches" 200 -H "If-None-Match: \"sha256:$HA\"" "$URL/v1/files/r.zt/objects/w/data"

# ---- replace in place by writing a new file of another size over it (cp, not rename)
cp "$S/A.zt" "$R/r.zt"
if wait_for 30 comp_sha_is /v1/files/r.zt/objects/w/data "$HA"; then
    ok "in-place copy of version A seen"
else
    bad "in-place copy of version A seen"
fi
# Until the rescan, the old entry serves the rewritten bytes: never under its digest.
req "after in-place copy" 200 "$URL/v1/files/r.zt/objects/w/data"
check_same "after in-place copy: bytes" "$LAST.body" "$T/A.raw"
check_ne "after in-place copy: never version B's digest" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$HB\""
if wait_for 30 comp_etag_is /v1/files/r.zt/objects/w/data "\"sha256:$HA\""; then
    ok "after in-place copy: ETag sha256 of version A once verified"
else
    bad "after in-place copy: ETag sha256 of version A once verified"
fi

# ---- remove
rm -f "$R/new.zt"
if wait_for 30 is_code 404 /v1/files/new.zt/raw; then ok "removed file 404"; else bad "removed file 404"; fi
check_err "removed file" 404 file_not_found "$URL/v1/files/new.zt/objects/n/data"
check_eq "removed file not listed" "$(listed new.zt)" MISSING
rm -rf "$R/d1"
if wait_for 30 not_listed d1/d2/deep.zt; then ok "removed directory's files unlisted"; else bad "removed directory's files unlisted"; fi
check_eq "other files still listed" "$(listed keep.zt)" ok
daemon_alive "daemon alive after the reload tests"

# ---- an event naming one file updates its entry alone; a new directory rescans the root
# (a fresh daemon: none of the files above waits for a retry, which would rescan)
start_daemon "$R" || finish
reloads() { curl -s "$URL/metrics" | sed -n 's/^ztensord_catalog_reloads_total //p'; }
R0=$(reloads)
check_eq "a fresh daemon: one scan" "$R0" 1
cp "$R/keep.zt" "$R/.one.tmp"
mv "$R/.one.tmp" "$R/one.zt"
if wait_for 30 is_listed one.zt; then ok "a file renamed in: listed"; else bad "a file renamed in: listed"; fi
req "a file renamed in: served" 200 "$URL/v1/files/one.zt/objects/k/data"
check_same "a file renamed in: bytes" "$LAST.body" "$T/k.raw"
check_eq "a file renamed in: its entry updated, the root not rescanned" "$(reloads)" "$R0"
rm -f "$R/one.zt"
if wait_for 30 not_listed one.zt; then ok "the file removed: unlisted"; else bad "the file removed: unlisted"; fi
check_eq "the file removed: no rescan either" "$(reloads)" "$R0"
mkdir -p "$S/dir"
cp "$R/keep.zt" "$S/dir/in.zt"
mv "$S/dir" "$R/dir"
if wait_for 30 is_listed dir/in.zt; then ok "a directory moved in: its file listed"; else bad "a directory moved in: its file listed"; fi
check_ne "a directory moved in: the root rescanned" "$(reloads)" "$R0"
rm -rf "$R/dir"

# ---- SIGHUP with --no-watch
start_daemon "$R" --no-watch || finish
cp "$R/keep.zt" "$R/.h.tmp"
mv "$R/.h.tmp" "$R/hup.zt"
sleep 1
check_eq "--no-watch: new file not listed without SIGHUP" "$(listed hup.zt)" MISSING
kill -HUP "$D_PID"
if wait_for 30 is_listed hup.zt; then ok "listed after SIGHUP"; else bad "listed after SIGHUP"; fi
req "file added before SIGHUP served" 200 "$URL/v1/files/hup.zt/objects/k/data"
check_same "file added before SIGHUP: bytes" "$LAST.body" "$T/k.raw"
rm -f "$R/hup.zt"
sleep 0.5
req "--no-watch: removed file still answered from the open entry" 200 "$URL/v1/files/hup.zt/objects/k/data"
check_same "--no-watch: removed file still whole" "$LAST.body" "$T/k.raw"
kill -HUP "$D_PID"
if wait_for 30 is_code 404 /v1/files/hup.zt/raw; then ok "removed file 404 after SIGHUP"; else bad "removed file 404 after SIGHUP"; fi
for i in 1 2 3; do kill -HUP "$D_PID"; done
sleep 0.5
req "healthz after repeated SIGHUPs" 200 "$URL/healthz"
# (a burst of the same signal may be merged by the kernel: at least 3 rescans)
c=$(grep -c 'SIGHUP' "$D_ERR")
[ "$c" -ge 3 ] && ok "log mentions the SIGHUP rescans ($c)" || bad "log mentions the SIGHUP rescans" "$c"

daemon_alive "daemon still running"
finish
