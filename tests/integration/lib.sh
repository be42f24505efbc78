# lib.sh: what the integration scripts add to tests/sh/common.sh. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$IT_DIR/../sh/common.sh" "$@"

# headers_no_date HDRFILE: the header block without Date, Connection and X-Request-Id.
headers_no_date() {
    tr -d '\r' <"$1" | grep -Evi '^(date|connection|x-request-id):' | sed '/^$/d'
}
# head_req NAME WANT_CODE PATH [HEADER...]: a HEAD request on a raw socket into $T/r; checks
# the status and that no byte follows the header block.
head_req() {
    local name=$1 want=$2 path=$3
    shift 3
    LAST=$T/r
    CODE=$($HELP rawreq "$PORT" HEAD "$path" "$LAST" "$@" 2>"$LAST.curlerr")
    CURL_RC=$?
    check_code "$name" "$want"
    check_eq "$name: no body" "$(stat -c %s "$LAST.body")" 0
}
urlq() { $HELP quote "$1"; }
# info_json FILE OUT
info_json() { "$ZT" info --json "$1" >"$2"; }
# cfield MANIFEST_JSON OBJECT COMPONENT KEY
cfield() { $HELP manifest "$1" "$2" "$3" "$4"; }
# The tests expect the digest-based validators of a verified tree: start_daemon waits for
# the background verifier (wait_verified) after /readyz.
WAIT_VERIFIED=1
