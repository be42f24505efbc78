#!/bin/bash
# Concurrent commits to one name. Eight upload sessions, each holding a different 2 MiB
# version of race.zt, commit at the same moment:
#  - with If-None-Match: * on a new name: exactly one 201, seven 412, and race.zt is the
#    winner's version byte for byte;
#  - with If-Match: <the current ETag>: exactly one 200, seven 412;
#  - with no precondition: all succeed, and race.zt is one of the eight, whole;
#  - sessions and whole-file PUTs mixed, with If-None-Match: *: exactly one wins.
# While they race, a reader polls race.zt over HTTP and on disk: it only ever sees one whole
# version (never a mix, never a partial file, never a temporary name in the root).
# (tests/uploads/t_faults.sh races two whole-file PUTs; this races the commits of sessions,
# eight at a time.) Finally, a write precondition split over two header lines.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
N=8
SZ=$((2 << 20))
for i in $(seq 1 $N); do
    rand "$T/v$i.raw" $SZ
    pack "$T/v$i.zt" w=u8:$SZ:"$T/v$i.raw"
    echo "$(sha256_hex "$T/v$i.raw") $i" >>"$T/comp.sums"
done
COMMIT="{\"objects\":{\"w\":{\"shape\":[$SZ],\"components\":{\"data\":{\"key\":\"w\",\"dtype\":\"u8\"}}}}}"
start_daemon "$R" "${OPEN[@]}" || finish

# open_all NAME: N sessions for NAME, session i holding v$i; ids in SIDS[1..N].
SIDS=()
open_all() {
    local i
    for i in $(seq 1 $N); do
        session_open "$1"
        SIDS[i]=$SID
        comp_put "$SID" w "$T/v$i.raw"
        [ "$CODE" = 201 ] || bad "session $i for $1: component" "HTTP $CODE"
    done
}
# commit_all [HEADER]: the N commits at once; their statuses in $T/c.$i.
commit_all() {
    local i pids=()
    for i in $(seq 1 $N); do
        curl -s --max-time 60 -o "$T/c.$i.body" -w '%{http_code}\n' -X POST ${1:+-H "$1"} \
            --data-binary "$COMMIT" "$URL/v1/uploads/${SIDS[i]}/commit" >"$T/c.$i" &
        pids+=($!)
    done
    wait "${pids[@]}"
}
tally() { cat "$T"/c.[0-9] | sort | uniq -c | awk '{printf "%sx%s ", $1, $2}'; }
winner() { grep -l "^$1\$" "$T"/c.[0-9] | sed 's/.*c\.//'; }
# close_all: delete what is left of the sessions (a loser refused before the manifest keeps
# its session; one refused at publication has lost it).
close_all() {
    local i
    for i in $(seq 1 $N); do http "$T/d" -X DELETE "$URL/v1/uploads/${SIDS[i]}"; done
}
# The reader: GETs race.zt's component, reads race.zt on disk, and lists the root, until
# $T/stop appears (at most 20000 rounds); one line per observation that is not a whole
# version (or "absent" before the first commit).
reader() {
    local i c h
    for i in $(seq 1 20000); do
        [ -e "$T/stop" ] && break
        c=$(curl -s --max-time 10 -o "$T/rd" -w '%{http_code}' "$URL/v1/files/race.zt/objects/w/data")
        if [ "$c" = 200 ]; then
            h=$(sha256_hex "$T/rd")
            grep -q "^$h " "$T/comp.sums" || echo "HTTP: a body that is no version ($(stat -c %s "$T/rd") bytes)"
        elif [ "$c" != 404 ]; then
            echo "HTTP $c"
        fi
        if [ -e "$R/race.zt" ]; then
            h=$(cat "$R/race.zt" 2>/dev/null | sha256sum | cut -d' ' -f1)
            grep -q "$h" "$T/file.sums" || echo "disk: race.zt is no version"
        fi
        ls -A "$R" | grep -Ev "^(race\.zt|mixed\.zt|$STAGING)\$" | sed 's/^/root: a stray name: /'
        echo tick >>"$T/ticks"
    done >>"$T/reader.log"
}
for i in $(seq 1 $N); do sha256_hex "$T/v$i.zt"; done >"$T/file.sums"
rm -f "$T/stop" "$T/ticks"
: >"$T/reader.log"
reader &
RP=$!

# ---- If-None-Match: * on a new name
open_all race.zt
commit_all 'If-None-Match: *'
check_eq "If-None-Match: * x$N: one 201, the rest 412" "$(tally)" "1x201 $((N - 1))x412 "
W=$(winner 201)
check_same "If-None-Match: *: race.zt is the winner's version" "$R/race.zt" "$T/v${W:-0}.zt"
for i in $(seq 1 $N); do
    [ "$i" = "$W" ] || [ "$(jerr_code "$T/c.$i.body")" = precondition_failed ] ||
        bad "If-None-Match: * loser $i: JSON error precondition_failed" "$(head -c 200 "$T/c.$i.body")"
done
close_all

# ---- If-Match: the current ETag
E=$(listing_field race.zt etag)
open_all race.zt
commit_all "If-Match: $E"
check_eq "If-Match x$N: one 200, the rest 412" "$(tally)" "1x200 $((N - 1))x412 "
W=$(winner 200)
check_same "If-Match: race.zt is the winner's version" "$R/race.zt" "$T/v${W:-0}.zt"
check_ne "If-Match: the ETag changed" "$(listing_field race.zt etag)" "$E"
close_all

# ---- no precondition: last writer wins, whole
open_all race.zt
commit_all
check_eq "no precondition x$N: all 200" "$(tally)" "${N}x200 "
check "no precondition: race.zt is one whole version" grep -q "$(sha256_hex "$R/race.zt")" "$T/file.sums"
check "no precondition: zt verify" zverify "$R/race.zt"

# ---- sessions and PUTs mixed, If-None-Match: * on a new name
for i in 1 2 3 4; do
    session_open mixed.zt
    SIDS[i]=$SID
    comp_put "$SID" w "$T/v$i.raw"
done
pids=()
for i in 1 2 3 4; do
    curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' -X POST -H 'If-None-Match: *' \
        --data-binary "$COMMIT" "$URL/v1/uploads/${SIDS[i]}/commit" >"$T/c.$i" &
    pids+=($!)
    curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' -H 'If-None-Match: *' \
        -T "$T/v$((i + 4)).zt" "$URL/v1/files/mixed.zt" >"$T/c.$((i + 4))" &
    pids+=($!)
done
wait "${pids[@]}"
check_eq "4 commits and 4 PUTs, If-None-Match: *: one 201, the rest 412" "$(tally)" "1x201 7x412 "
W=$(winner 201)
check_same "mixed: mixed.zt is the winner's version" "$R/mixed.zt" "$T/v${W:-0}.zt"
N=4 close_all

touch "$T/stop"
wait "$RP"
check "the reader made at least 20 rounds ($(wc -l <"$T/ticks" 2>/dev/null))" [ "$(wc -l <"$T/ticks" 2>/dev/null || echo 0)" -ge 20 ]
check_eq "the reader saw only whole versions, and no stray name in the root" "$(sort -u "$T/reader.log" | head -5)" ""

# ---- a precondition split over two header lines (RFC 9110 5.3: one list)
E=$(listing_field race.zt etag)
put race.zt "$T/v1.zt" -H 'If-None-Match: "x"' -H "If-None-Match: $E"
check_code "PUT, If-None-Match split over two lines, the current ETag in the second: 412" 412
check_eq "split If-None-Match: race.zt unchanged" "$(listing_field race.zt etag)" "$E"
put race.zt "$T/v1.zt" -H 'If-Match: "x"' -H "If-Match: $E"
check_code "PUT, If-Match split over two lines, the current ETag in the second: 200" 200

check_staging_empty "staging empty" "$R"
check_eq "published: race.zt and mixed.zt" "$(published_files "$R" | tr '\n' ' ')" "mixed.zt race.zt "
daemon_alive "daemon alive"
finish
