#!/bin/bash
# Faults that must lose nothing (SIGKILL of the daemon is in t_crash.sh):
#  1. a client that goes away in the middle of a body: nothing published, staging file
#     gone, the old version still served byte-exact;
#  3. two uploads to one name at once: readers only ever see one complete version, and
#     with If-None-Match: * exactly one of the two wins;
#  4. a slow reader of a file that is replaced gets the old bytes entirely, with the old
#     ETag.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/a.raw" $((4 << 20))
pack "$T/a.zt" w=u8:$((4 << 20)):"$T/a.raw"
rand "$T/n.raw" $((8 << 20))
pack "$T/n.zt" w=u8:$((8 << 20)):"$T/n.raw"
cp "$T/a.zt" "$R/a.zt"
start_daemon "$R" "${OPEN[@]}" || finish
AET=$(listing_field a.zt etag)

# old_intact LABEL: a.zt is still the old version everywhere.
old_intact() {
    check_staging_empty "$1: staging file gone" "$R"
    req "$1: a.zt still served" 200 "$URL/v1/files/a.zt/raw"
    check_same "$1: /raw is the old version" "$LAST.body" "$T/a.zt"
    check_eq "$1: ETag unchanged" "$(hdr "$LAST.hdr" ETag)" "$AET"
    req "$1: component still served" 200 "$URL/v1/files/a.zt/objects/w/data"
    check_same "$1: component is the old one" "$LAST.body" "$T/a.raw"
    check_same "$1: file on disk is the old version" "$R/a.zt" "$T/a.zt"
    check_eq "$1: nothing else published" "$(published_files "$R" | tr '\n' ' ')" "a.zt "
}

# ---- 1. clients that go away mid-body
curl -s --max-time 1 --limit-rate 2M -o /dev/null -T "$T/n.zt" "$URL/v1/files/a.zt" 2>/dev/null
check_eq "curl --limit-rate --max-time 1: curl gave up (28)" "$?" 28
old_intact "curl timed out"

bg_start curl -s --max-time 30 --limit-rate 2M -o /dev/null -T "$T/n.zt" "$URL/v1/files/a.zt"
sleep 0.7
check "killed curl: staging file exists while it uploads" [ "$(staging_count "$R")" -ge 1 ]
bg_kill
old_intact "killed curl"

mkfifo "$T/fifo"
exec 7<>"$T/fifo" # a writer that never closes: curl's body has no end
bg_start curl -s --max-time 30 -o /dev/null -H 'Transfer-Encoding: chunked' -T - "$URL/v1/files/a.zt" <"$T/fifo"
timeout 10 head -c $((3 << 20)) "$T/n.zt" >&7
sleep 0.5
check "killed chunked curl: staging file exists while it uploads" [ "$(staging_count "$R")" -ge 1 ]
bg_kill
exec 7>&-
old_intact "killed chunked curl fed from a pipe"

$HELP partial "$PORT" PUT /v1/files/a.zt "$T/n.zt" $((5 << 20)) 0.3 >/dev/null
old_intact "connection reset after 5 of 8 MiB"
$HELP partial "$PORT" PUT /v1/files/a.zt "$T/n.zt" $((8 << 20)) 0 >/dev/null
# All bytes sent, then a reset: the server may publish (the body was complete) or not,
# but never a partial file.
for i in $(seq 1 40); do [ "$(staging_count "$R")" = 0 ] && break; sleep 0.05; done
if cmp -s "$R/a.zt" "$T/n.zt" || cmp -s "$R/a.zt" "$T/a.zt"; then
    ok "complete body then reset: a.zt is the old or the new version, whole"
else
    bad "complete body then reset: a.zt is the old or the new version, whole" "it is neither"
fi
put a.zt "$T/a.zt"
AET=$(hdr "$LAST.hdr" ETag)
$HELP partial "$PORT" PUT /v1/files/new.zt "$T/n.zt" $((1 << 20)) 0.2 >/dev/null
old_intact "reset on a new name"
check_eq "reset on a new name: not listed" "$(listing_field new.zt etag)" MISSING

# ---- 3. two uploads to one name at once
rand "$T/va.raw" $((2 << 20))
rand "$T/vb.raw" $((2 << 20))
pack "$T/va.zt" w=u8:$((2 << 20)):"$T/va.raw"
pack "$T/vb.zt" w=u8:$((2 << 20)):"$T/vb.raw"
CA=$(sha256_hex "$T/va.raw")
CB=$(sha256_hex "$T/vb.raw")
FA=$(sha256_hex "$T/va.zt")
FB=$(sha256_hex "$T/vb.zt")
put c.zt "$T/va.zt"
check_code "concurrent: first version: 201" 201
# reader: GETs the component and /raw until $T/stop exists (at most 3000 rounds);
# one line per response: "comp|raw STATUS SHA".
reader() {
    local i c
    for i in $(seq 1 3000); do
        [ -e "$T/stop" ] && break
        rm -f "$T/rd.comp" "$T/rd.raw"
        c=$(curl -s --max-time 10 -o "$T/rd.comp" -w '%{http_code}' "$URL/v1/files/c.zt/objects/w/data")
        touch "$T/rd.comp"
        echo "comp $c $(sha256_hex "$T/rd.comp")"
        c=$(curl -s --max-time 10 -o "$T/rd.raw" -w '%{http_code}' "$URL/v1/files/c.zt/raw")
        touch "$T/rd.raw"
        echo "raw $c $(sha256_hex "$T/rd.raw")"
    done >>"$T/reads.log"
}
rm -f "$T/stop"
: >"$T/reads.log"
reader &
RP=$!
: >"$T/puts.log"
# At least 10 rounds, and on until the reader has made 60 requests (at most 100 rounds).
for round in $(seq 1 100); do
    [ "$round" -gt 10 ] && [ "$(wc -l <"$T/reads.log")" -ge 60 ] && break
    curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' -T "$T/va.zt" "$URL/v1/files/c.zt" >>"$T/puts.log" &
    P1=$!
    curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' -T "$T/vb.zt" "$URL/v1/files/c.zt" >>"$T/puts.log" &
    P2=$!
    wait "$P1" "$P2"
done
touch "$T/stop"
wait "$RP"
NP=$(wc -l <"$T/puts.log")
check_eq "concurrent: all $NP PUTs answered 200" "$(sort "$T/puts.log" | uniq -c | awk '{printf "%s:%s ", $2, $1}')" "200:$NP "
NR=$(wc -l <"$T/reads.log")
check "concurrent: the reader made at least 60 requests ($NR)" [ "$NR" -ge 60 ]
check_eq "concurrent: every read answered 200" "$(awk '$2 != 200' "$T/reads.log" | head -3)" ""
check_eq "concurrent: every component read is one whole version" \
    "$(awk -v a="$CA" -v b="$CB" '$1 == "comp" && $3 != a && $3 != b' "$T/reads.log" | head -3)" ""
check_eq "concurrent: every /raw read is one whole file" \
    "$(awk -v a="$FA" -v b="$FB" '$1 == "raw" && $3 != a && $3 != b' "$T/reads.log" | head -3)" ""
note "reads: $(awk -v a="$CA" -v fa="$FA" '{print $1, ($3 == a || $3 == fa) ? "A" : "B"}' "$T/reads.log" | sort | uniq -c | tr '\n' ' ')"
FIN=$(sha256_hex "$R/c.zt")
check_match "concurrent: the file left is one of the two" "$FIN" "^($FA|$FB)\$"
check "concurrent: zt verify" zverify "$R/c.zt"
check_staging_empty "concurrent: staging empty" "$R"

for round in 1 2 3 4 5; do
    curl -s --max-time 60 -o /dev/null -w 'A %{http_code}\n' -H 'If-None-Match: *' -T "$T/va.zt" "$URL/v1/files/inm$round.zt" >"$T/inm.a" &
    P1=$!
    curl -s --max-time 60 -o /dev/null -w 'B %{http_code}\n' -H 'If-None-Match: *' -T "$T/vb.zt" "$URL/v1/files/inm$round.zt" >"$T/inm.b" &
    P2=$!
    wait "$P1" "$P2"
    got=$(cat "$T/inm.a" "$T/inm.b" | awk '{print $2}' | sort | tr '\n' ' ')
    check_eq "If-None-Match: * race $round: one 201, one 412" "$got" "201 412 "
    winner=$(cat "$T/inm.a" "$T/inm.b" | awk '$2 == 201 {print $1}')
    case $winner in
    A) check_same "If-None-Match: * race $round: the winner's bytes" "$R/inm$round.zt" "$T/va.zt" ;;
    B) check_same "If-None-Match: * race $round: the winner's bytes" "$R/inm$round.zt" "$T/vb.zt" ;;
    *) bad "If-None-Match: * race $round: a winner" "statuses: $got" ;;
    esac
done
check_staging_empty "If-None-Match races: staging empty" "$R"

# ---- 4. a slow reader of a file being replaced
rand "$T/big.raw" $((24 << 20))
pack "$T/big.zt" w=u8:$((24 << 20)):"$T/big.raw"
text "$T/bigt.raw" $((24 << 20))
pack "$T/bigz.zt" --compress w=u8:$((24 << 20)):"$T/bigt.raw"
rand "$T/small.raw" 1000
pack "$T/small.zt" w=u8:1000:"$T/small.raw"
# slow_read LABEL FILE.zt RAW [CURL-ARGS]: upload FILE.zt as r.zt, read r.zt's component
# slowly while r.zt is replaced, and check what the reader got.
slow_read() {
    local label=$1 zt=$2 raw=$3
    shift 3
    put r.zt "$zt"
    case $CODE in 200 | 201) ;; *) bad "$label: upload" "HTTP $CODE" ;; esac
    curl -sS --max-time 60 --limit-rate 6M -o "$T/sr.body" -D "$T/sr.hdr" "$@" "$URL/v1/files/r.zt/objects/w/data" 2>"$T/sr.err" &
    local cp=$!
    sleep 0.6
    put r.zt "$T/small.zt"
    check_code "$label: the replacing PUT: 200" 200
    if kill -0 "$cp" 2>/dev/null; then ok "$label: the reader was still reading"; else bad "$label: the reader was still reading" "it had finished; nothing was tested"; fi
    wait "$cp"
    check_eq "$label: the reader's curl succeeded" "$?" 0
    SR_ETAG=$(hdr "$T/sr.hdr" ETag)
}
slow_read "raw sha256 component" "$T/big.zt" "$T/big.raw"
check_same "raw sha256 component: the old bytes entirely" "$T/sr.body" "$T/big.raw"
check_eq "raw sha256 component: ETag is the sha256 of what was received" "$SR_ETAG" "\"sha256:$(sha256_hex "$T/sr.body")\""
req "raw sha256 component: afterwards the new bytes" 200 "$URL/v1/files/r.zt/objects/w/data"
check_same "raw sha256 component: new bytes" "$LAST.body" "$T/small.raw"
check_eq "raw sha256 component: new ETag" "$(hdr "$LAST.hdr" ETag)" "\"sha256:$(sha256_hex "$T/small.raw")\""
slow_read "zstd component decoded on the fly" "$T/bigz.zt" "$T/bigt.raw"
check_same "zstd component decoded: the old bytes entirely" "$T/sr.body" "$T/bigt.raw"
check_match "zstd component decoded: an ETag of the old component" "$SR_ETAG" '^"sha256:[0-9a-f]{64}'
slow_read "zstd component sent compressed" "$T/bigz.zt" "$T/bigt.raw" -H 'Accept-Encoding: zstd'
check_eq "zstd component compressed: ETag is the sha256 of what was received" "$SR_ETAG" "\"sha256:$(sha256_hex "$T/sr.body")\""
zget "$T/bigz.zt" w >"$T/bigz.dec" 2>/dev/null
zstd -q -d -c "$T/sr.body" >"$T/sr.dec" 2>/dev/null
check_same "zstd component compressed: decodes to the old bytes" "$T/sr.dec" "$T/bigt.raw"

check_staging_empty "staging empty at the end" "$R"
daemon_alive "daemon alive at the end"
finish
