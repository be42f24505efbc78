# lib.sh: shared code of the ztensord integration scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
#
# Every script makes its own work directory under $ZT_IT_TMP (or the current directory),
# generates its files there with `zt pack`, starts its own daemon(s) on an ephemeral
# loopback port, talks to it with curl, and ends with `finish`, which prints
# "N passed, M failed" and exits non-zero when M > 0. A daemon that exits non-zero, is
# killed by a signal, or writes a sanitizer report to its stderr is a failed check.
# All waits are bounded in count and time; all traffic goes to 127.0.0.1.

set -u
set -o pipefail

ZTENSORD=${1:?usage: $0 ZTENSORD ZT}
ZT=${2:?usage: $0 ZTENSORD ZT}
case $ZTENSORD in /*) ;; *) ZTENSORD=$PWD/$ZTENSORD ;; esac
case $ZT in /*) ;; *) ZT=$PWD/$ZT ;; esac
PY=/usr/bin/python3
IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HELP="$PY $IT_DIR/helpers.py"
TNAME=$(basename "$0" .sh)
T=$(mktemp -d "${ZT_IT_TMP:-$PWD}/$TNAME.XXXXXX") || exit 1
export LC_ALL=C.UTF-8
# Sanitizer reports must reach the daemon's stderr; leaks count as failures.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

PASS=0
FAIL=0
D_PID=
D_ERR=
D_N=0
PORT=
URL=
SAN_RE='ERROR: AddressSanitizer|runtime error:|LeakSanitizer|ERROR: UndefinedBehaviorSanitizer'

note() { printf '# %s\n' "$*"; }
ok() {
    PASS=$((PASS + 1))
    printf 'ok   %s\n' "$1"
}
bad() {
    FAIL=$((FAIL + 1))
    printf 'FAIL %s%s\n' "$1" "${2:+: $2}"
}

# check NAME CMD...: passes when CMD succeeds.
check() {
    local name=$1
    shift
    if "$@" >/dev/null; then ok "$name"; else bad "$name" "command failed: $*"; fi
}
# check_eq NAME GOT WANT
check_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi
}
check_ne() {
    if [ "$2" != "$3" ]; then ok "$1"; else bad "$1" "got '$2', want something else"; fi
}
# check_match NAME GOT ERE
check_match() {
    # a here-string, not a pipe: grep -q exiting early must not fail under pipefail
    if grep -Eq -- "$3" <<<"$2"; then ok "$1"; else bad "$1" "'$2' !~ /$3/"; fi
}
# check_same NAME FILE1 FILE2: byte-identical
check_same() {
    if cmp -s -- "$2" "$3"; then
        ok "$1"
    else
        bad "$1" "$(cmp -- "$2" "$3" 2>&1 | head -1) (sizes $(stat -c %s "$2" 2>/dev/null || echo -) vs $(stat -c %s "$3" 2>/dev/null || echo -))"
    fi
}

# ---- HTTP

# http PREFIX CURL-ARGS...: one request. Writes PREFIX.body and PREFIX.hdr and sets CODE
# (HTTP status, 000 if none) and CURL_RC. --path-as-is so '..' is sent as is.
http() {
    local p=$1
    shift
    rm -f -- "$p.body" "$p.hdr"
    CODE=$(curl -sS --path-as-is --max-time 30 -o "$p.body" -D "$p.hdr" -w '%{http_code}' "$@" 2>"$p.curlerr")
    CURL_RC=$?
    [ -n "$CODE" ] || CODE=000
    touch -- "$p.body" "$p.hdr" # curl creates no file for an empty body
}
# hdr HDRFILE NAME: value of the (last) header NAME, CR stripped; empty if absent.
hdr() {
    tr -d '\r' <"$1" | awk -v n="$(printf '%s' "$2" | tr 'A-Z' 'a-z')" '
        { i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) {
              v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); out = v; found = 1 } }
        END { if (found) print out }'
}
has_hdr() {
    tr -d '\r' <"$1" | grep -qi "^$2:"
}
# headers_no_date HDRFILE: the header block without Date, Connection and X-Request-Id.
headers_no_date() {
    tr -d '\r' <"$1" | grep -Evi '^(date|connection|x-request-id):' | sed '/^$/d'
}
# check_code NAME WANT: the last http() status.
check_code() {
    if [ "$CODE" = "$2" ]; then ok "$1"; else bad "$1" "HTTP $CODE, want $2 (curl rc $CURL_RC $(head -c 200 "$LAST.body" 2>/dev/null | tr -d "\n\0"))"; fi
}
# req NAME WANT_CODE CURL-ARGS...: request into $T/r and check the status.
LAST=$T/r
req() {
    local name=$1 want=$2
    shift 2
    LAST=$T/r
    http "$LAST" "$@"
    check_code "$name" "$want"
}
# check_err NAME WANT_CODE ERRCODE CURL-ARGS...: an error response with a JSON error body.
check_err() {
    local name=$1 want=$2 code=$3
    shift 3
    req "$name: status $want" "$want" "$@"
    local why
    if why=$($HELP errbody "$LAST.body" "$code" 2>&1); then
        ok "$name: JSON error $code"
    else
        bad "$name: JSON error $code" "$why"
    fi
    check_eq "$name: Content-Type" "$(hdr "$LAST.hdr" Content-Type)" application/json
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
# check_nomatch NAME GOT ERE
check_nomatch() {
    if printf '%s' "$2" | grep -Eq -- "$3"; then bad "$1" "'$2' =~ /$3/"; else ok "$1"; fi
}

sha256_hex() { openssl dgst -sha256 -r "$1" | cut -d' ' -f1; }
sha256_b64() { openssl dgst -sha256 -binary "$1" | base64 -w0; }
# slice FILE START LEN: bytes [START, START+LEN) to stdout
slice() { tail -c +"$(($2 + 1))" "$1" | head -c "$3"; }
# rand FILE SIZE / text FILE SIZE (compressible)
rand() { head -c "$2" /dev/urandom >"$1"; }
text() { head -c $((($2 * 3 + 3) / 4)) /dev/urandom | base64 -w0 | head -c "$2" >"$1"; }
urlq() { $HELP quote "$1"; }

# ---- the daemon

# start_daemon ROOT [EXTRA FLAGS...]: starts ztensord, waits for its port, /readyz and the
# verification of its files' digests (wait_verified). Sets D_PID, D_ERR, PORT, URL.
# Returns non-zero (and records a failure) if it does not come up.
start_daemon() {
    local root=$1
    shift
    if [ -n "$D_PID" ]; then stop_daemon; fi
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    "$ZTENSORD" --root "$root" --listen 127.0.0.1:0 --access-log off "$@" 2>"$D_ERR" &
    D_PID=$!
    PORT=
    local i
    for i in $(seq 1 300); do # up to 30 s (ASan start-up is slow)
        PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$D_ERR" | head -1)
        [ -n "$PORT" ] && break
        kill -0 "$D_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$PORT" ]; then
        bad "daemon $D_N starts" "no 'listening on' line; stderr: $(head -c 600 "$D_ERR")"
        kill -KILL "$D_PID" 2>/dev/null
        wait "$D_PID" 2>/dev/null
        D_PID=
        return 1
    fi
    URL=http://127.0.0.1:$PORT
    for i in $(seq 1 100); do
        if [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ]; then
            # The tests expect the digest-based validators of a verified tree.
            wait_verified
            return 0
        fi
        sleep 0.1
    done
    bad "daemon $D_N ready" "/readyz never answered 200"
    return 1
}

# wait_verified [SECONDS]: poll /metrics (default up to 30 s) until the background
# verifier has hashed every sha256 component: only then are ETag "sha256:...",
# Repr-Digest and immutable blob URLs sent. Returns non-zero on the time limit.
wait_verified() {
    local i lim=${1:-30}
    for i in $(seq 1 $((lim * 10))); do
        curl -s --max-time 5 "$URL/metrics" | grep -qx 'ztensord_digest_components{state="pending"} 0' && return 0
        sleep 0.1
    done
    bad "digests verified within ${lim} s" "$(curl -s --max-time 5 "$URL/metrics" | grep '^ztensord_digest_components')"
    return 1
}

# daemon_alive NAME: the daemon process still runs.
daemon_alive() {
    if [ -n "$D_PID" ] && kill -0 "$D_PID" 2>/dev/null; then ok "$1"; else bad "$1" "daemon is gone"; fi
}

# check_sanitizers NAME FILE: FILE has no sanitizer report.
check_sanitizers() {
    if grep -Eq "$SAN_RE" "$2" 2>/dev/null; then
        bad "$1" "sanitizer report in $2:"
        grep -E -A12 "$SAN_RE" "$2" | head -40 | sed 's/^/#   /'
    else
        ok "$1"
    fi
}

# wait_exit PID SECONDS: wait for a child to exit; sets EXIT_RC (or "timeout").
wait_exit() {
    local pid=$1 lim=$2 i
    for i in $(seq 1 $((lim * 20))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$pid" 2>/dev/null; then
        EXIT_RC=timeout
        return 1
    fi
    wait "$pid" 2>/dev/null
    EXIT_RC=$?
    return 0
}

# stop_daemon [SECONDS]: SIGTERM, wait, check exit status 0 and no sanitizer report.
stop_daemon() {
    local lim=${1:-20}
    [ -n "$D_PID" ] || return 0
    local pid=$D_PID
    D_PID=
    kill -TERM "$pid" 2>/dev/null
    if ! wait_exit "$pid" "$lim"; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        bad "daemon $D_N exits after SIGTERM" "still running after ${lim}s"
    else
        check_eq "daemon $D_N exit status" "$EXIT_RC" 0
    fi
    check_sanitizers "daemon $D_N: no sanitizer report" "$D_ERR"
}

cleanup() {
    if [ -n "$D_PID" ]; then
        kill -KILL "$D_PID" 2>/dev/null
        wait "$D_PID" 2>/dev/null
    fi
    local j
    for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null; done
}
trap cleanup EXIT
trap 'bad "interrupted"; exit 1' INT TERM

finish() {
    stop_daemon
    local j
    for j in $(jobs -p); do kill -KILL "$j" 2>/dev/null; done
    wait 2>/dev/null
    if [ "$FAIL" -eq 0 ] && [ -z "${ZT_IT_KEEP:-}" ]; then
        rm -rf -- "$T"
    else
        find "$T" -type f -size +4M -delete 2>/dev/null # keep logs and small files only
        note "work directory kept (files over 4 MiB removed): $T"
    fi
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
    exit
}

# ---- files

# pack OUT [zt pack options...] NAME=DTYPE:SHAPE:RAW...
pack() {
    local out=$1
    shift
    if ! "$ZT" pack -o "$out" "$@" >"$T/pack.out" 2>&1; then
        bad "zt pack $(basename "$out")" "$(cat "$T/pack.out")"
        return 1
    fi
}
# info_json FILE OUT
info_json() { "$ZT" info --json "$1" >"$2"; }
# zget FILE OBJECT [COMPONENT] > OUT
zget() { "$ZT" get "$@"; }
# cfield MANIFEST_JSON OBJECT COMPONENT KEY
cfield() { $HELP manifest "$1" "$2" "$3" "$4"; }
