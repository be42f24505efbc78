#!/usr/bin/env bash
# t_hostile_listing: the listing of a hostile "ztensord" upstream (evil_upstream.py),
# seen through a rootless ztensord with upstream_kind auto:
# - names a router refuses ("..", a leading "/", empty or hidden segments): not listed
#   again to clients, and a prefetch of every prefix ("") asks the upstream for no path
#   outside /v1/files/ (libcurl removes dot segments: "/v1/files/../x" is "/v1/x");
#   fixed in the same branch (ztd_route_file_path_problem);
# - a listing of 2 million entries (96 MB): the daemon's peak memory stays bounded (fails:
#   1.4 GiB); with kind auto, a probe answer over 1 MiB is taken for an unreachable
#   upstream, and the listing is a 200 of no files (fails);
# - an upstream that cannot be reached, kind auto: not a 200 listing of no files (fails);
# - a listing nested 100000 deep: a clear 502, the daemon stays up;
# - a listing whose ETag changes on each request: every answer is a whole listing.
. "$(dirname "$0")/lib.sh" "$@"
. "$(dirname "$0")/evil_lib.sh"
mkdir -p "$T/up"

# ---- hostile names
start_evil "$T/up" listing-names || finish
start_rootless "$E_URL" "$T/cache1" --allow-anonymous-writes --upstream-retries 0 \
    --upstream-timeout 2s || finish
http "$T/l" "$URL/v1/files"
check_code "hostile names: the listing answers" 200
names=$($PY -c 'import json,sys; print("\n".join(f["name"] for f in json.load(open(sys.argv[1]))["files"]))' "$T/l.body")
note "listed: $(tr '\n' ' ' <<<"$names")"
check_match "hostile names: the fine one is listed" "$names" '^ok\.zt$'
check_nomatch "hostile names: no name a client could not ask for is listed" "$names" \
    '(^|/)\.|^/|//'
http "$T/p" "$URL/v1/prefetch" -X POST -d '{"prefix": ""}'
check_code "prefetch of every prefix: 202" 202
for i in $(seq 1 40); do
    curl -s --max-time 5 "$URL/v1/prefetch" | grep -q '"state":"\(done\|failed\)"' && break
    sleep 0.25
done
note "upstream saw: $(cut -d' ' -f2,3 "$ELOG" | sort -u | tr '\n' ';')"
check_eq "prefetch: no request outside /v1/files/" \
    "$(cut -d' ' -f3 "$ELOG" | grep -v '^/v1/files\(/\|$\|?\)' | sort -u | tr '\n' ' ')" ""
check_eq "prefetch: no dot segment or empty segment requested" \
    "$(cut -d' ' -f3 "$ELOG" | grep -c '/\.\|//')" 0
check_eq "prefetch: no file written outside the cache directory" \
    "$(find "$T" -name 'escape*' -o -name 'abs.zt' | wc -l)" 0
check "hostile names: daemon alive" daemon_alive "$D_PID"
stop_daemon

# ---- 2 million entries (about 90 MB of JSON)
start_evil "$T/up" listing-huge 2000000 || finish
# with upstream_kind auto, the probe (GET /v1/files?limit=1, whose limit this upstream
# ignores) reads at most 1 MiB: what does the listing answer then?
start_rootless "$E_URL" "$T/cache2a" --upstream-retries 0 --upstream-timeout 30s || finish
code=$(curl -s --max-time 120 -o "$T/huge" -w '%{http_code}' "$URL/v1/files?limit=10")
note "huge listing, kind auto: HTTP $code: $(head -c 200 "$T/huge")"
check_nomatch "huge listing, kind auto: not a 200 saying there are no files" \
    "$code $(cat "$T/huge")" '^200 .*"count":0'
stop_daemon
start_rootless "$E_URL" "$T/cache2" --upstream-kind ztensord --upstream-retries 0 \
    --upstream-timeout 30s || finish
hwm0=$(vm VmHWM)
code=$(curl -s --max-time 120 -o "$T/huge" -w '%{http_code}' "$URL/v1/files?limit=10")
hwm1=$(vm VmHWM)
note "huge listing: HTTP $code; VmHWM $hwm0 kB before, $hwm1 kB after; body of upstream: $(curl -s --max-time 60 "$E_URL/v1/files" | wc -c) bytes"
check "huge listing: daemon alive" daemon_alive "$D_PID"
check_eq "huge listing: a clear 502" "$code" 502
check_match "huge listing: the error names the upstream and the limit" "$(cat "$T/huge")" \
    "upstream_failed.*127\.0\.0\.1:$E_PORT.*larger than 16 MiB"
check "huge listing: peak memory grew by less than 256 MiB ($(((hwm1 - hwm0) / 1024)) MiB)" \
    [ $((hwm1 - hwm0)) -lt $((256 * 1024)) ]
stop_daemon

# ---- an upstream that cannot be reached, kind auto: the listing must not say "no files"
dead=$(free_port)
start_rootless "http://127.0.0.1:$dead" "$T/cache2d" --upstream-retries 0 || finish
http "$T/dl" "$URL/v1/files"
note "unreachable upstream, kind auto: listing: $(head -c 200 "$T/dl.body")"
check_nomatch "unreachable upstream, kind auto: not a 200 saying there are no files" \
    "$(curl -s -w ' %{http_code}' "$URL/v1/files")" '"count":0\} 200$'
http "$T/df" "$URL/v1/files/x.zt"
check_code "unreachable upstream, kind auto: a file is 502" 502
stop_daemon

# ---- nested 100000 deep
start_evil "$T/up" listing-deep 100000 || finish
start_rootless "$E_URL" "$T/cache3" --upstream-kind ztensord --upstream-retries 0 \
    --upstream-timeout 5s || finish
http "$T/d" "$URL/v1/files"
check_code "deep listing: 502" 502
check_match "deep listing: the error names the upstream" "$(cat "$T/d.body")" \
    "upstream_failed.*127\.0\.0\.1:$E_PORT"
check "deep listing: daemon alive" daemon_alive "$D_PID"
stop_daemon

# ---- an ETag that changes on every request (TTL 100 ms)
start_evil "$T/up" listing-etag || finish
start_rootless "$E_URL" "$T/cache4" --upstream-retries 0 --upstream-ttl 100ms || finish
okn=0
for i in $(seq 1 20); do
    c=$(curl -s --max-time 5 -o "$T/e" -w '%{http_code}' "$URL/v1/files")
    [ "$c" = 200 ] && grep -q '"ok.zt"' "$T/e" && okn=$((okn + 1))
    sleep 0.05
done
check_eq "changing ETag: 20 whole listings" "$okn" 20
check "changing ETag: daemon alive" daemon_alive "$D_PID"
stop_daemon
finish
