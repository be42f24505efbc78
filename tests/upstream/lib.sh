# lib.sh: shared code of the pull-through cache scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT NGINX (NGINX may be "": the nginx checks then
# print SKIP lines). It takes tests/sh/ (common.sh, uploads.sh, and origins.sh:
# start_nginx, and start_relay for relay.py, which breaks answers on purpose)
# and adds a second daemon: the origin, started first with start_origin, while
# start_daemon starts the ztensord under test (the sidecar).
UPSTREAM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$UPSTREAM_DIR/../sh/common.sh" "$1" "$2"
. "$UPSTREAM_DIR/../sh/uploads.sh"
RC=none
NGINX=${3:-}
. "$UPSTREAM_DIR/../sh/origins.sh"

O_PID=
O_URL=
O_ERR=

# start_origin ROOT [FLAGS...]: an origin ztensord; sets O_PID, O_URL, O_ERR. It is
# stopped (and checked for sanitizer reports) by stop_origin, or at the end.
start_origin() {
    local keep_pid=$D_PID keep_err=$D_ERR keep_url=$URL keep_port=$PORT
    D_PID=
    start_daemon "$@" || return 1
    O_PID=$D_PID O_URL=$URL O_ERR=$D_ERR
    D_PID=$keep_pid D_ERR=$keep_err URL=$keep_url PORT=$keep_port
}
stop_origin() {
    [ -n "$O_PID" ] || return 0
    local keep_pid=$D_PID keep_err=$D_ERR
    D_PID=$O_PID D_ERR=$O_ERR
    O_PID=
    stop_daemon
    D_PID=$keep_pid D_ERR=$keep_err
}
kill_origin_at_exit() { [ -n "$O_PID" ] && kill -KILL "$O_PID" 2>/dev/null; }
at_exit kill_origin_at_exit

# start_sidecar ROOT UPSTREAM CACHE [FLAGS...]: the ztensord under test.
start_sidecar() {
    local root=$1 up=$2 cache=$3
    shift 3
    start_daemon "$root" --upstream "$up" --cache-dir "$cache" "$@"
}

# metric URL NAME-REGEX: the sum of the samples whose series matches (0 if none).
metric() {
    curl -s --max-time 5 "$1/metrics" | awk -v re="$2" '$0 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%.0f\n", s }'
}
# origin_bytes: body bytes the origin has sent (every route but /metrics).
origin_bytes() { metric "$O_URL" '^ztensord_response_bytes_total\{route="(raw|component|blob|manifest|object|list)"'; }

# same NAME PATH [CURL ARGS...]: the sidecar answers PATH like the origin: status,
# body bytes, and the headers that describe them. SAME_NO_ETAG=1: the ETag is not
# compared (a component without a sha256 is named by the tier's own validator).
same() {
    local name=$1 path=$2
    shift 2
    local a=$T/same.o b=$T/same.s
    local sa sb
    rm -f "$a" "$b" "$a.h" "$b.h"
    sa=$(curl -s -D "$a.h" -o "$a" -w '%{http_code}' "$@" "$O_URL$path")
    sb=$(curl -s -D "$b.h" -o "$b" -w '%{http_code}' "$@" "$URL$path")
    touch "$a" "$b"
    check_eq "$name: status" "$sb" "$sa"
    # multipart/byteranges: each response draws its own boundary; compare with it named
    local ba bb
    ba=$(hdr "$a.h" Content-Type | sed -n 's/.*boundary=//p')
    bb=$(hdr "$b.h" Content-Type | sed -n 's/.*boundary=//p')
    if [ -n "$ba" ] && [ -n "$bb" ]; then
        sed -i "s/$ba/BOUNDARY/g" "$a" "$a.h"
        sed -i "s/$bb/BOUNDARY/g" "$b" "$b.h"
    fi
    if [ "${SAME_HEAD:-0}" = 1 ]; then # the body is curl -I's copy of the headers
        grep -Evi '^(date|x-request-id):' "$a" >"$a.nodate"
        grep -Evi '^(date|x-request-id):' "$b" >"$b.nodate"
        check_same "$name: body" "$b.nodate" "$a.nodate"
    else
        check_same "$name: body" "$b" "$a"
    fi
    local h
    for h in ETag Content-Length Content-Range Repr-Digest X-Ztensor-Shape X-Ztensor-Dtype Content-Type Content-Encoding; do
        [ "$h" = ETag ] && [ "${SAME_NO_ETAG:-0}" = 1 ] && continue
        check_eq "$name: $h" "$(hdr "$b.h" "$h")" "$(hdr "$a.h" "$h")"
    done
}

# start_rootless UPSTREAM CACHE [FLAGS...]: the ztensord under test without --root (a
# pure cache: it serves an empty CACHE/root). Sets D_PID, D_ERR, PORT and URL as
# start_daemon does, and is stopped by stop_daemon. NO_READY=1: return once it listens,
# without waiting for /readyz 200.
start_rootless() {
    local up=$1 cache=$2
    shift 2
    launch_daemon --upstream "$up" --cache-dir "$cache" "$@"
}
