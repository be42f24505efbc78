#!/usr/bin/env bash
# t_startup: what a ztensord with --upstream says at start-up about its upstream, for
# each upstream_kind: a ztensord, a plain HTTP server (nginx), or nothing listening.
# It says what the upstream is at level info; a kind that contradicts upstream_kind is
# a warning; an upstream that cannot be reached is a warning, never an error and never
# a failure to start: the sidecar serves its root, and once the upstream is up its
# files are served too.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/files" "$T/side"
rand "$T/w.bin" 5000
pack "$T/files/up.zt" w=u8:5000:"$T/w.bin" || finish
rand "$T/l.bin" 3000
pack "$T/side/local.zt" w=u8:3000:"$T/l.bin" || finish
start_origin "$T/files" || finish

N=0
# sidecar NAME UPSTREAM [FLAGS...]: starts the sidecar with a cache of its own and
# checks it becomes ready; its error log is $D_ERR.
sidecar() {
    local name=$1 up=$2
    shift 2
    N=$((N + 1))
    if start_sidecar "$T/side" "$up" "$T/cache$N" --upstream-retries 0 "$@"; then
        ok "$name: starts and is ready"
    else
        return 1
    fi
}
# said NAME LEVEL ERE: the sidecar's log has a line of LEVEL matching ERE.
said() { check_match "$1" "$(grep "level=$2 " "$D_ERR")" "$3"; }
# no_error NAME: nothing at level error.
no_error() { check_eq "$1: nothing logged at level error" "$(grep -c 'level=error ' "$D_ERR")" 0; }

up=$(printf '%s' "$O_URL" | sed 's/[.]/\\./g')
# ---- a ztensord upstream
if sidecar "auto, a ztensord" "$O_URL"; then
    said "auto, a ztensord: says it is a ztensord" info "upstream $up is a ztensord"
    no_error "auto, a ztensord"
fi
if sidecar "kind ztensord, a ztensord" "$O_URL" --upstream-kind ztensord; then
    said "kind ztensord, a ztensord: says it answered and is a ztensord" info \
        "upstream $up is a ztensord \(GET /healthz answered 200\)"
    no_error "kind ztensord, a ztensord"
fi
if sidecar "kind plain, a ztensord" "$O_URL" --upstream-kind plain; then
    said "kind plain, a ztensord: warns that upstream_kind says otherwise" warn \
        "upstream $up is a ztensord .*but upstream_kind is plain"
fi

# ---- a plain HTTP server (nginx)
if start_nginx "$T/files"; then
    NG=http://127.0.0.1:$NPORT
    ng=$(printf '%s' "$NG" | sed 's/[.]/\\./g')
    if sidecar "auto, nginx" "$NG"; then
        said "auto, nginx: says it is a plain HTTP server" info "upstream $ng is a plain HTTP server"
        no_error "auto, nginx"
    fi
    if sidecar "kind plain, nginx" "$NG" --upstream-kind plain; then
        said "kind plain, nginx: says it answered and is a plain HTTP server" info \
            "upstream $ng is a plain HTTP server \(GET /healthz answered 404\)"
        no_error "kind plain, nginx"
    fi
    if sidecar "kind ztensord, nginx" "$NG" --upstream-kind ztensord; then
        said "kind ztensord, nginx: warns that upstream_kind says otherwise" warn \
            "upstream $ng is a plain HTTP server .*but upstream_kind is ztensord"
    fi
    stop_nginx
fi

# ---- nothing listening: a warning, and the sidecar serves its root
P=$(free_port)
for kind in auto ztensord plain; do
    if sidecar "kind $kind, unreachable" "http://127.0.0.1:$P" --upstream-kind "$kind"; then
        said "kind $kind, unreachable: a warning that it cannot be reached" warn \
            "upstream http://127\.0\.0\.1:$P cannot be reached at start-up"
        no_error "kind $kind, unreachable"
        req "kind $kind, unreachable: the root is served" 200 "$URL/v1/files/local.zt/objects/w/data"
        check_same "kind $kind, unreachable: root bytes" "$LAST.body" "$T/l.bin"
    fi
done
# ... and once the upstream is up on that port, its files are served (auto asks again)
stop_daemon
sidecar "auto, upstream not up yet" "http://127.0.0.1:$P" || finish
stop_origin
if start_origin "$T/files" --listen "127.0.0.1:$P"; then
    req "the upstream came up: its file is served" 200 "$URL/v1/files/up.zt/objects/w/data"
    check_same "the upstream came up: bytes" "$LAST.body" "$T/w.bin"
fi
finish
