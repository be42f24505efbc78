#!/usr/bin/env bash
# t_negative: upstream misses are remembered for upstream_negative_ttl (issue 27,
# finding 8). 200 requests (4 at a time) for 10 names the upstream does not have cost
# the upstream at most 2 requests a name (one open: the head and the tail of the file,
# asked at once), and each answers 404 with a JSON error naming the upstream. With
# upstream_negative_ttl 0 every request asks again. A file added upstream is served
# once the negative TTL has passed.
# Fails without the negative cache: the 200 requests cost the upstream 400.
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/evil_lib.sh"

mkdir -p "$T/up" "$T/side"
rand "$T/w.bin" 1000
pack "$T/up/here.zt" w=u8:1000:"$T/w.bin" || finish

start_evil "$T/up" pass || finish
# misses NAME-PREFIX: 200 GETs, 4 at a time, of NAME-PREFIX0.zt ... NAME-PREFIX9.zt; the
# statuses, counted, to $T/codes
misses() {
    for r in $(seq 1 20); do for i in $(seq 0 9); do echo "$URL/v1/files/$1$i.zt"; done; done |
        xargs -P 4 -n 1 curl -s --max-time 60 -o /dev/null -w '%{http_code}\n' | sort | uniq -c |
        awk '{ printf "%s:%s ", $2, $1 }' >"$T/codes"
}
asked() { grep -c " /$1[0-9]\\.zt " "$ELOG"; }

# ---- remembered: at most one open a name
start_sidecar "$T/side" "$E_URL" "$T/cache" --upstream-kind plain --upstream-retries 0 \
    --upstream-negative-ttl 1h || finish
misses gone
check_eq "200 misses: all 404" "$(cat "$T/codes")" "404:200 "
n=$(asked gone)
note "200 requests for 10 missing names cost the upstream $n requests"
check "200 misses: at most 20 upstream requests" [ "$n" -le 20 ]
check "200 misses: the upstream was asked" [ "$n" -ge 10 ]
req "a miss: 404" 404 "$URL/v1/files/gone3.zt/objects/w/data"
check_errbody "a miss" file_not_found
check_match "a miss: the message names the upstream" "$ERRMSG" "gone3\\.zt.*127\\.0\\.0\\.1:$E_PORT"
req "a file the upstream has: 200" 200 "$URL/v1/files/here.zt/objects/w/data"
check_same "a file the upstream has: bytes" "$LAST.body" "$T/w.bin"
stop_daemon

# ---- upstream_negative_ttl 0: every request asks
start_sidecar "$T/side" "$E_URL" "$T/cache" --upstream-kind plain --upstream-retries 0 \
    --upstream-negative-ttl 0 || finish
misses off
check_eq "negative TTL 0: all 404" "$(cat "$T/codes")" "404:200 "
check "negative TTL 0: every request asks the upstream" [ "$(asked off)" -ge 200 ]
stop_daemon

# ---- a file added upstream is seen once the negative TTL has passed
start_sidecar "$T/side" "$E_URL" "$T/cache" --upstream-kind plain --upstream-retries 0 \
    --upstream-negative-ttl 1s || finish
req "not there yet: 404" 404 "$URL/v1/files/late.zt/objects/w/data"
cp "$T/up/here.zt" "$T/up/late.zt"
sleep 1.5 # past the negative TTL: nothing asserted depends on how long steps take
req "added upstream, past the negative TTL: 200" 200 "$URL/v1/files/late.zt/objects/w/data"
check_same "added upstream: bytes" "$LAST.body" "$T/w.bin"
finish
