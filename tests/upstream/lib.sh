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

# A sidecar revalidates an upstream file (a HEAD, no body when unchanged; its manifest is
# read again when it changed) and the upstream listing once upstream_ttl has passed:
# requests to the origin that a test counting the origin's requests (or, on a change,
# bytes) would count. Its default of 10 s can pass during the checks of a
# slow run (a busy machine, ASan), so every sidecar the helpers start gets
# --upstream-ttl $UPSTREAM_TTL (1h) unless its flags name one: a test about
# revalidation names its own short TTL; every other test sees no revalidation at all.
UPSTREAM_TTL=${UPSTREAM_TTL:-1h}
# ttl_flags FLAGS...: sets TTL_FLAGS to FLAGS plus --upstream-ttl $UPSTREAM_TTL when they
# have --upstream and no --upstream-ttl.
ttl_flags() {
    local a up=0
    TTL_FLAGS=("$@")
    for a in "$@"; do
        case $a in
        --upstream-ttl | --upstream-ttl=*) return 0 ;;
        --upstream | --upstream=*) up=1 ;;
        esac
    done
    [ "$up" = 1 ] && TTL_FLAGS+=(--upstream-ttl "$UPSTREAM_TTL")
    return 0
}

# A test about revalidation uses a short TTL, and what it asserts "within the TTL" holds
# only if the steps took less than it: ttl_start just before the request that opens (or
# revalidates) the file; after the request checked, within_ttl SECONDS says whether less
# than SECONDS have passed since. If not, the check is a SKIP (the run was too slow to
# test it), not a failure.
ttl_start() { TTL_T0=$(date +%s%N); }
within_ttl() { [ $((($(date +%s%N) - TTL_T0) / 1000000)) -lt $(($1 * 1000)) ]; }

# start_sidecar ROOT UPSTREAM CACHE [FLAGS...]: the ztensord under test.
start_sidecar() {
    local root=$1 up=$2 cache=$3
    shift 3
    ttl_flags --upstream "$up" --cache-dir "$cache" "$@"
    start_daemon "$root" "${TTL_FLAGS[@]}"
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
    # the headers of both in two awk runs, not two per header (t_v2 calls this
    # thousands of times, and a busy machine is slow at starting processes)
    local h
    local -A ha hb
    same_hdrs ha "$a.h"
    same_hdrs hb "$b.h"
    for h in ETag Content-Length Content-Range Repr-Digest X-Ztensor-Shape X-Ztensor-Dtype Content-Type Content-Encoding; do
        [ "$h" = ETag ] && [ "${SAME_NO_ETAG:-0}" = 1 ] && continue
        check_eq "$name: $h" "${hb[$h]-}" "${ha[$h]-}"
    done
}
# same_hdrs ARRAY HDRFILE: ARRAY[Name] = the value of each header `same` compares, as
# hdr() gives it (the last one of the final response, CR and outer blanks stripped).
same_hdrs() {
    local -n arr=$1
    local k v
    while IFS=$'\t' read -r k v; do
        arr[$k]=$v
    done < <(tr -d '\r' <"$2" | awk '
        BEGIN { n = split("ETag Content-Length Content-Range Repr-Digest X-Ztensor-Shape X-Ztensor-Dtype Content-Type Content-Encoding", w, " ")
                for (i = 1; i <= n; i++) want[tolower(w[i])] = w[i] }
        /^HTTP\// { delete out }
        { i = index($0, ":"); if (i > 0 && (tolower(substr($0, 1, i - 1)) in want)) {
              v = substr($0, i + 1); sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v)
              out[want[tolower(substr($0, 1, i - 1))]] = v } }
        END { for (k in out) printf "%s\t%s\n", k, out[k] }')
}

# start_rootless UPSTREAM CACHE [FLAGS...]: the ztensord under test without --root (a
# pure cache: it serves an empty CACHE/root). Sets D_PID, D_ERR, PORT and URL as
# start_daemon does, and is stopped by stop_daemon. NO_READY=1: return once it listens,
# without waiting for /readyz 200.
start_rootless() {
    local up=$1 cache=$2
    shift 2
    ttl_flags --upstream "$up" --cache-dir "$cache" "$@"
    launch_daemon "${TTL_FLAGS[@]}"
}
