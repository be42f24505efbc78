# origins.sh: helpers for suites that read from an origin (remote, upstream):
# nginx serving a directory as a plain origin, relay.py (a loopback relay that
# breaks answers on purpose), remote_check's checks ($RC), and rfinish. Source
# it after common.sh, with NGINX set (the nginx binary, or "": the nginx
# checks then print SKIP lines) and RC (remote_check, for rcheck/rexpect).
# All traffic goes to 127.0.0.1; every wait is bounded.
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
        "$SH_DIR/nginx-static.conf" >"$pre/nginx.conf"
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
at_exit_first stop_nginx # before finish SIGKILLs the jobs left

# start_relay ORIGIN_PORT MODE [ARGS...]: relay.py in front of an origin;
# sets RPORT and RLOG (its request log).
start_relay() {
    stop_relay
    start_py_helper relay "$SH_DIR/relay.py" "$@"
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
