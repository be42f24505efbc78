# lib.sh: shared code of the ops test scripts (systemd, metrics, logs, TLS, container
# files). Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
#
# Conventions follow tests/integration/lib.sh: every script makes its own work directory
# under $ZT_IT_TMP (or the current directory), builds its files with `zt pack`, starts
# its own daemon(s) on an ephemeral loopback port, and ends with `finish`, which prints
# "N passed, M failed" and exits non-zero when M > 0. A tool the test needs that is
# missing is a failure, never a skip. All waits are bounded; all traffic goes to 127.0.0.1.

set -u
set -o pipefail

ZTENSORD=${1:?usage: $0 ZTENSORD ZT}
ZT=${2:?usage: $0 ZTENSORD ZT}
case $ZTENSORD in /*) ;; *) ZTENSORD=$PWD/$ZTENSORD ;; esac
case $ZT in /*) ;; *) ZT=$PWD/$ZT ;; esac
PY=/usr/bin/python3
OPS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$OPS_DIR/../.." && pwd)
TNAME=$(basename "$0" .sh)
T=$(mktemp -d "${ZT_IT_TMP:-$PWD}/$TNAME.XXXXXX") || exit 1
export LC_ALL=C.UTF-8
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

PASS=0
FAIL=0
D_PID=
D_ERR=
D_N=0
PORT=
URL=
SCHEME=http
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
check() {
    local name=$1
    shift
    if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name" "command failed: $*"; fi
}
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi; }
check_ne() { if [ "$2" != "$3" ]; then ok "$1"; else bad "$1" "got '$2', want something else"; fi; }
# (A here-string, not `printf | grep -q`: under pipefail grep -q's early exit gives printf
# a SIGPIPE and the pipeline fails on long input even when it matched.)
check_match() { if grep -Eq -- "$3" <<<"$2"; then ok "$1"; else bad "$1" "'${2:0:400}' !~ /$3/"; fi; }
check_nomatch() { if grep -Eq -- "$3" <<<"$2"; then bad "$1" "'${2:0:400}' =~ /$3/"; else ok "$1"; fi; }
# check_ge NAME GOT MIN (integers)
check_ge() { if [ "$2" -ge "$3" ] 2>/dev/null; then ok "$1"; else bad "$1" "got '$2', want >= $3"; fi; }
check_same() {
    if cmp -s -- "$2" "$3"; then ok "$1"; else bad "$1" "$(cmp -- "$2" "$3" 2>&1 | head -1) (sizes $(stat -c %s "$2" 2>/dev/null || echo -) vs $(stat -c %s "$3" 2>/dev/null || echo -))"; fi
}
# need_tool NAME [DEBIAN-PACKAGE]: a missing tool is a failure, and the script stops.
need_tool() {
    if command -v "$1" >/dev/null 2>&1; then return 0; fi
    bad "tool $1 is installed" "missing: apt-get install ${2:-$1} (listed in .ci/deps)"
    finish
}

# ---- HTTP

# http PREFIX CURL-ARGS...: one request; PREFIX.body, PREFIX.hdr; sets CODE and CURL_RC.
http() {
    local p=$1
    shift
    rm -f -- "$p.body" "$p.hdr"
    CODE=$(curl -sS --max-time 30 -o "$p.body" -D "$p.hdr" -w '%{http_code}' "$@" 2>"$p.curlerr")
    CURL_RC=$?
    [ -n "$CODE" ] || CODE=000
    touch -- "$p.body" "$p.hdr"
}
hdr() {
    tr -d '\r' <"$1" | awk -v n="$(printf '%s' "$2" | tr 'A-Z' 'a-z')" '
        { i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) {
              v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); out = v; found = 1 } }
        END { if (found) print out }'
}
LAST=$T/r
req() {
    local name=$1 want=$2
    shift 2
    LAST=$T/r
    http "$LAST" "$@"
    if [ "$CODE" = "$want" ]; then ok "$name"; else bad "$name" "HTTP $CODE, want $want (curl rc $CURL_RC: $(head -c 200 "$LAST.curlerr"))"; fi
}

rand() { head -c "$2" /dev/urandom >"$1"; }
slice() { tail -c +"$(($2 + 1))" "$1" | head -c "$3"; }
pack() {
    local out=$1
    shift
    if ! "$ZT" pack -o "$out" "$@" >"$T/pack.out" 2>&1; then
        bad "zt pack $(basename "$out")" "$(cat "$T/pack.out")"
        return 1
    fi
}
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ---- the daemon

# start_daemon ROOT [FLAGS...]: starts ztensord on an ephemeral loopback port (unless the
# flags say otherwise), waits for its "listening on" line and /readyz. Sets D_PID, D_ERR,
# PORT, URL (http or https after the log line). CURL_TLS (array) is passed to curl for
# the readiness probe (e.g. --cacert FILE).
CURL_TLS=()
start_daemon() {
    local root=$1
    shift
    if [ -n "$D_PID" ]; then stop_daemon; fi
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    "$ZTENSORD" --root "$root" --listen 127.0.0.1:0 --access-log off "$@" 2>"$D_ERR" &
    D_PID=$!
    PORT=
    local i line
    for i in $(seq 1 300); do
        line=$(grep -m1 -o 'listening on https\?://127\.0\.0\.1:[0-9]*' "$D_ERR")
        [ -n "$line" ] && break
        kill -0 "$D_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -z "$line" ]; then
        bad "daemon $D_N starts" "no 'listening on' line; stderr: $(head -c 600 "$D_ERR")"
        kill -KILL "$D_PID" 2>/dev/null
        wait "$D_PID" 2>/dev/null
        D_PID=
        return 1
    fi
    PORT=${line##*:}
    SCHEME=${line#listening on }
    SCHEME=${SCHEME%%://*}
    URL=$SCHEME://127.0.0.1:$PORT
    for i in $(seq 1 100); do
        [ "$(curl -s --max-time 2 "${CURL_TLS[@]}" -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] && return 0
        sleep 0.1
    done
    bad "daemon $D_N ready" "/readyz never answered 200"
    return 1
}

check_sanitizers() {
    if grep -Eq "$SAN_RE" "$2" 2>/dev/null; then
        bad "$1" "sanitizer report in $2:"
        grep -E -A12 "$SAN_RE" "$2" | head -40 | sed 's/^/#   /'
    else
        ok "$1"
    fi
}

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
        note "work directory kept: $T"
    fi
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
    exit
}
