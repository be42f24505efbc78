# wait.sh: waiting for a process under test to listen; sourced by common.sh and by
# scripts that do not use common.sh (soak/soak.sh).

# wait_listening LOG PID: waits (up to 30 s: ASan start-up is slow) for the last
# "listening on SCHEME://127.0.0.1:PORT" line a daemon wrote to LOG and sets
# LISTEN_PORT and LISTEN_SCHEME. Returns 1 on the time limit or when PID exits first.
wait_listening() {
    local i line
    LISTEN_PORT= LISTEN_SCHEME=
    for i in $(seq 1 300); do
        line=$(grep -o 'listening on https\?://127\.0\.0\.1:[0-9]*' "$1" 2>/dev/null | tail -1)
        if [ -n "$line" ]; then
            LISTEN_PORT=${line##*:}
            LISTEN_SCHEME=${line#listening on }
            LISTEN_SCHEME=${LISTEN_SCHEME%%://*}
            return 0
        fi
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# start_py_helper NAME SCRIPT ARG [ARGS...]: runs "$PY SCRIPT ARG PORTFILE LOG ARGS..."
# in the background, the convention of the test helpers relay.py and
# evil_upstream.py (their port(s) go to PORTFILE, a line a request to LOG), and
# waits for the port file. Sets HELPER_PID, HELPER_LOG and HELPER_PORTS (the
# file's text); on failure reports "NAME starts" as failed and returns 1.
HELPER_N=0
start_py_helper() {
    local name=$1 script=$2 arg=$3
    shift 3
    HELPER_N=$((HELPER_N + 1))
    local base=$T/$name$HELPER_N
    HELPER_LOG=$base.log HELPER_PORTS=
    : >"$HELPER_LOG"
    "$PY" "$script" "$arg" "$base.port" "$HELPER_LOG" "$@" >/dev/null 2>"$base.err" &
    HELPER_PID=$!
    if wait_port_file "$base.port" "$HELPER_PID"; then
        HELPER_PORTS=$(cat "$base.port")
        return 0
    fi
    bad "$name starts" "$(head -c 300 "$base.err")"
    return 1
}

# wait_port_file FILE PID: waits (up to 5 s) for a test helper (relay.py,
# evil_upstream.py...) to write its port(s) to FILE. Returns 1 on the time limit or
# when PID exits first.
wait_port_file() {
    local i
    for i in $(seq 1 100); do
        [ -s "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
