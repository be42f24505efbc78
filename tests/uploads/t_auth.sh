#!/bin/bash
# Bearer tokens: --tokens-file (write/read scopes), 401 with WWW-Authenticate, 403 for a
# read token on writes, --require-read-token, tokens kept out of both logs, and writes
# refused (403) when there is neither a tokens file nor --allow-anonymous-writes.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 3000
pack "$T/v1.zt" w=u8:3000:"$T/w.raw"
cp "$T/v1.zt" "$R/pre.zt"

tok() { head -c 48 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | head -c 32; }
WT=wr-$(tok)
RT=rd-$(tok)
XT=no-$(tok) # never in the file
cat >"$T/tokens" <<EOF
# ztensord tokens for the upload tests
write $WT

   # an indented comment
read $RT
EOF
AW=(-H "Authorization: Bearer $WT")
AR=(-H "Authorization: Bearer $RT")
AX=(-H "Authorization: Bearer $XT")

D_LOG=$T/error1.log
start_daemon "$R" --tokens-file "$T/tokens" --disk-reserve 0 --log-level debug \
    --access-log "$T/access1.log" --error-log "$T/error1.log" || finish
D_LOG=

# ---- whole-file PUT
put a.zt "$T/v1.zt"
check_code "PUT without a token: 401" 401
check_errbody "PUT without a token" unauthorized
check_match "PUT without a token: WWW-Authenticate: Bearer" "$(hdr "$LAST.hdr" WWW-Authenticate)" '^Bearer( |$)'
put a.zt "$T/v1.zt" "${AX[@]}"
check_code "PUT with an unknown token: 401" 401
check_match "PUT with an unknown token: WWW-Authenticate: Bearer" "$(hdr "$LAST.hdr" WWW-Authenticate)" '^Bearer( |$)'
put a.zt "$T/v1.zt" -H "Authorization: Basic $(printf 'u:%s' "$WT" | base64 -w0)"
check_code "PUT with Basic credentials: 401" 401
put a.zt "$T/v1.zt" -H "Authorization: Bearer ${WT}x"
check_code "PUT with the write token plus one character: 401" 401
put a.zt "$T/v1.zt" -H "Authorization: Bearer ${WT%?}"
check_code "PUT with the write token minus one character: 401" 401
put a.zt "$T/v1.zt" "${AR[@]}"
check_code "PUT with a read token: 403" 403
check_errbody "PUT with a read token" forbidden
check_eq "refused PUTs published nothing" "$(ls "$R/a.zt" 2>/dev/null)" ""
check_staging_empty "refused PUTs left no staging file" "$R"
put a.zt "$T/v1.zt" "${AW[@]}"
check_code "PUT with the write token: 201" 201
check_same "PUT with the write token: published" "$R/a.zt" "$T/v1.zt"
put a.zt "$T/v1.zt" -H "authorization: bearer $WT"
check_code "scheme and header name are case-insensitive: 200" 200

# ---- sessions
http "$T/s" -X POST --data-binary '{"file":"s.zt"}' "$URL/v1/uploads"
check_eq "POST /v1/uploads without a token: 401" "$CODE" 401
http "$T/s" -X POST --data-binary '{"file":"s.zt"}' "${AR[@]}" "$URL/v1/uploads"
check_eq "POST /v1/uploads with a read token: 403" "$CODE" 403
http "$T/s" -X POST --data-binary '{"file":"s.zt"}' "${AW[@]}" "$URL/v1/uploads"
check_eq "POST /v1/uploads with the write token: 201" "$CODE" 201
SID=$(jget "$T/s.body" id)
S=$URL/v1/uploads/$SID
req "GET session with a read token: 403" 403 "${AR[@]}" "$S"
req "GET session without a token: 401" 401 "$S"
req "GET session with the write token: 200" 200 "${AW[@]}" "$S"
req "PUT component without a token: 401" 401 -T "$T/w.raw" "$S/components/k"
req "PUT component with a read token: 403" 403 -T "$T/w.raw" "${AR[@]}" "$S/components/k"
req "PUT component with the write token: 201" 201 -T "$T/w.raw" "${AW[@]}" "$S/components/k"
C='{"objects":{"w":{"shape":[3000],"components":{"data":{"key":"k","dtype":"u8"}}}}}'
req "commit without a token: 401" 401 -X POST --data-binary "$C" "$S/commit"
req "commit with a read token: 403" 403 -X POST --data-binary "$C" "${AR[@]}" "$S/commit"
req "DELETE session with a read token: 403" 403 -X DELETE "${AR[@]}" "$S"
req "refused requests left the session alone" 200 "${AW[@]}" "$S"
check_eq "refused requests: component still there" "$(jget "$LAST.body" components k length)" 3000
req "commit with the write token: 201" 201 -X POST --data-binary "$C" "${AW[@]}" "$S/commit"
check "committed file verifies" zverify "$R/s.zt"

# ---- DELETE
req "DELETE without a token: 401" 401 -X DELETE "$URL/v1/files/a.zt"
req "DELETE with a read token: 403" 403 -X DELETE "${AR[@]}" "$URL/v1/files/a.zt"
check_same "refused DELETEs: file still there" "$R/a.zt" "$T/v1.zt"
req "DELETE with the write token: 204" 204 -X DELETE "${AW[@]}" "$URL/v1/files/a.zt"

# ---- reads are open unless --require-read-token
req "GET /v1/files without a token: 200" 200 "$URL/v1/files"
req "GET /raw without a token: 200" 200 "$URL/v1/files/pre.zt/raw"
check_same "GET /raw without a token: bytes" "$LAST.body" "$T/v1.zt"
stop_daemon

D_LOG=$T/error2.log
start_daemon "$R" --tokens-file "$T/tokens" --require-read-token --disk-reserve 0 --log-level debug \
    --access-log "$T/access2.log" --error-log "$T/error2.log" || finish
D_LOG=
req "require_read_token: GET /v1/files without a token: 401" 401 "$URL/v1/files"
check_errbody "require_read_token: GET /v1/files without a token" unauthorized
check_match "require_read_token: WWW-Authenticate: Bearer" "$(hdr "$LAST.hdr" WWW-Authenticate)" '^Bearer( |$)'
req "require_read_token: GET /raw without a token: 401" 401 "$URL/v1/files/pre.zt/raw"
check_eq "require_read_token: no bytes without a token" "$(cmp -s "$LAST.body" "$T/v1.zt" && echo leaked)" ""
req "require_read_token: GET component without a token: 401" 401 "$URL/v1/files/pre.zt/objects/w/data"
req "require_read_token: GET blob without a token: 401" 401 "$URL/v1/blobs/sha256:$(sha256_hex "$T/w.raw")"
req "require_read_token: HEAD manifest without a token: 401" 401 -I "$URL/v1/files/pre.zt"
req "require_read_token: unknown token: 401" 401 "${AX[@]}" "$URL/v1/files"
req "require_read_token: read token: 200" 200 "${AR[@]}" "$URL/v1/files/pre.zt/raw"
check_same "require_read_token: read token gets the bytes" "$LAST.body" "$T/v1.zt"
req "require_read_token: write token can read: 200" 200 "${AW[@]}" "$URL/v1/files"
req "require_read_token: /healthz without a token: 200" 200 "$URL/healthz"
req "require_read_token: /readyz without a token: 200" 200 "$URL/readyz"
put b.zt "$T/v1.zt" "${AR[@]}"
check_code "require_read_token: PUT with a read token: 403" 403
put b.zt "$T/v1.zt" "${AW[@]}"
check_code "require_read_token: PUT with the write token: 201" 201
stop_daemon

# ---- tokens never reach a log
check_match "the access log recorded the requests" "$(cat "$T/access1.log" 2>/dev/null)" 'PUT /v1/files/a\.zt'
check_match "the error log has lines" "$(cat "$T/error1.log" 2>/dev/null)" 'listening on'
for f in "$T"/access1.log "$T"/access2.log "$T"/error1.log "$T"/error2.log "$T"/daemon*.err; do
    for t in "$WT" "$RT" "$XT"; do
        if grep -qF -- "$t" "$f" 2>/dev/null; then
            bad "no token in $(basename "$f")" "found ${t%%-*}-... token"
        else
            ok "no ${t%%-*} token in $(basename "$f")"
        fi
    done
done

# ---- no tokens file, no --allow-anonymous-writes: writes refused
start_daemon "$R" --disk-reserve 0 || finish
put c.zt "$T/v1.zt"
check_code "no tokens file: PUT: 403" 403
check_errbody "no tokens file: PUT" writes_disabled
put c.zt "$T/v1.zt" "${AW[@]}"
check_code "no tokens file: PUT with a bearer token: 403" 403
http "$T/s" -X POST --data-binary '{"file":"s2.zt"}' "$URL/v1/uploads"
check_eq "no tokens file: POST /v1/uploads: 403" "$CODE" 403
req "no tokens file: DELETE: 403" 403 -X DELETE "$URL/v1/files/pre.zt"
check_eq "no tokens file: nothing written or deleted" "$(published_files "$R" | tr '\n' ' ')" "b.zt pre.zt s.zt "
req "no tokens file: reads still open" 200 "$URL/v1/files/pre.zt/raw"
stop_daemon

# ---- a token shorter than 16 characters stops start-up, without echoing it
SHORT=short$(tok | head -c 9)
printf 'write %s\n' "$SHORT" >"$T/tokens.short"
"$ZTENSORD" --root "$R" --listen 127.0.0.1:0 --access-log off --tokens-file "$T/tokens.short" 2>"$T/short.err" &
SP=$!
if wait_exit "$SP" 20; then
    check_ne "a 14-character token: start-up fails" "$EXIT_RC" 0
else
    bad "a 14-character token: start-up fails" "the daemon kept running"
fi
check_match "a short token: the error says why" "$(cat "$T/short.err")" '16'
if grep -qF -- "$SHORT" "$T/short.err"; then bad "a short token is not echoed" "it is in stderr"; else ok "a short token is not echoed"; fi
check_sanitizers "short-token daemon: no sanitizer report" "$T/short.err"
finish
