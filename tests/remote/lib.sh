# lib.sh: shared code of the remote-file test scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT REMOTE_CHECK NGINX (NGINX may be "" when it
# is not installed: the nginx checks then print SKIP lines).
#
# It reuses the upload suite's helpers (start_daemon, checks, finish: see
# tests/uploads/lib.sh) and adds nginx as a plain origin and relay.py, a
# loopback relay that breaks answers on purpose. All traffic goes to
# 127.0.0.1; every wait is bounded.
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../uploads/lib.sh" "$1" "$2"
REMOTE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RC=${3:?usage: $0 ZTENSORD ZT REMOTE_CHECK NGINX}
NGINX=${4:-}
case $RC in /*) ;; *) RC=$PWD/$RC ;; esac
N_PID=
NPORT=
R_PID=
RPORT=

# rcheck NAME ARGS...: remote_check must succeed.
rcheck() {
    local name=$1
    shift
    if "$RC" "$@" >"$T/rc.out" 2>"$T/rc.err"; then
        ok "$name"
    else
        bad "$name" "$(tail -c 600 "$T/rc.err" | tr '\n' ' ')"
    fi
}
# rexpect NAME CODE ARGS...: remote_check must fail with status CODE; its
# message is left in RMSG.
rexpect() {
    local name=$1 code=$2
    shift 2
    if "$RC" --expect "$code" "$@" >"$T/rc.out" 2>"$T/rc.err"; then
        ok "$name"
    else
        bad "$name" "$(tail -c 600 "$T/rc.err" | tr '\n' ' ')"
    fi
    RMSG=$(grep '^remote_check: ZT_E_' "$T/rc.err" | head -1)
}

# stop_pid VAR: SIGTERM the background process whose pid is in $VAR (if
# any), reap it, and empty VAR.
stop_pid() {
    local pid=${!1}
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    printf -v "$1" '%s' ''
}

# start_nginx ROOT: nginx serving ROOT as static files on an ephemeral port
# (NPORT). Returns 1 (after a SKIP line) when nginx is not installed.
start_nginx() {
    if [ -z "$NGINX" ] || [ ! -x "$NGINX" ]; then
        skip "nginx origin" "nginx is not installed"
        return 1
    fi
    stop_nginx
    local pre=$T/nginx i
    mkdir -p "$pre"
    chmod 755 "$T" "$pre" # nginx workers may run as nobody
    NPORT=$(free_port)
    sed -e "s|@PREFIX@|$pre|g" -e "s|@ROOT@|$1|g" -e "s|@PORT@|$NPORT|g" \
        "$REMOTE_DIR/nginx-static.conf" >"$pre/nginx.conf"
    "$NGINX" -p "$pre" -c "$pre/nginx.conf" >/dev/null 2>"$pre/stderr.log" &
    N_PID=$!
    for i in $(seq 1 100); do
        curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$NPORT/" && return 0
        kill -0 "$N_PID" 2>/dev/null || break
        sleep 0.05
    done
    bad "nginx starts" "$(cat "$pre/stderr.log" "$pre/error.log" 2>/dev/null | head -c 400)"
    return 1
}
stop_nginx() { stop_pid N_PID; }
at_exit stop_nginx

# start_relay ORIGIN_PORT MODE [ARGS...]: relay.py in front of an origin;
# sets RPORT and RLOG (its request log).
start_relay() {
    stop_relay
    start_py_helper relay "$REMOTE_DIR/relay.py" "$@"
    local rc=$?
    R_PID=$HELPER_PID RLOG=$HELPER_LOG RPORT=$HELPER_PORTS
    return $rc
}
stop_relay() { stop_pid R_PID; }
at_exit stop_relay

# elapsed CMD...: runs CMD, sets SECS to its wall time (seconds, 2 decimals).
elapsed() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@"
    local rc=$?
    t1=$(date +%s.%N)
    SECS=$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")
    return $rc
}

# rfinish: stop nginx (gracefully: a SIGKILLed master leaves its workers
# holding ctest's pipes) and the relay, then finish.
rfinish() {
    stop_relay
    stop_nginx
    finish
}
