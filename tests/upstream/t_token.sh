#!/usr/bin/env bash
# t_token: an upstream that requires a read token. With upstream_token_file the sidecar
# sends it (kind probe, opens, revalidations, fills, listing) and serves the files; without it the
# upstream's 401 is a 502 naming the upstream. The token is never logged.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/origin" "$T/side"
rand "$T/w.bin" 300000
pack "$T/origin/m.zt" w=u8:300000:"$T/w.bin" || finish
tok=upstr3am-r3ad-t0ken-for-tests
printf 'read %s\n' "$tok" >"$T/tokens"
printf '%s\n' "$tok" >"$T/up.token"
start_origin "$T/origin" --tokens-file "$T/tokens" --require-read-token || finish

start_sidecar "$T/side" "$O_URL" "$T/cache" --upstream-token-file "$T/up.token" \
    --log-level debug || finish
http "$T/r" "$URL/v1/files/m.zt/objects/w/data"
check_code "with the token: a component" 200
check_same "with the token: its bytes" "$T/r.body" "$T/w.bin"
http "$T/r" "$URL/v1/files"
check_eq "with the token: the listing (a ztensord upstream, told so by the probe; its view too)" \
    "$($HELP names "$T/r.body" | tr '\n' ' ')" "m.safetensors m.zt "
stop_daemon
check_eq "the token is never logged" "$(grep -c "$tok" "$D_ERR")" 0

# a revalidation (upstream_ttl 0: every request) sends it too: 304, not a new open
start_sidecar "$T/side" "$O_URL" "$T/cache3" --upstream-token-file "$T/up.token" \
    --upstream-ttl 0 || finish
http "$T/r" "$URL/v1/files/m.zt"
http "$T/r" "$URL/v1/files/m.zt"
check_code "with the token: revalidated" 200
check_eq "with the token: the revalidation was answered unchanged" \
    "$(metric "$URL" '^ztensord_upstream_revalidations_unchanged_total$')" 1
check_eq "with the token: opened once" "$(metric "$URL" '^ztensord_upstream_opens_total$')" 1
stop_daemon

start_sidecar "$T/side" "$O_URL" "$T/cache2" --upstream-kind ztensord || finish
http "$T/r" "$URL/v1/files/m.zt"
check_code "without the token: 502" 502
check_match "without the token: the error names the upstream and its 401" "$(cat "$T/r.body")" \
    "\"upstream_failed\".*$O_URL.*401"
stop_origin
finish
