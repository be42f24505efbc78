# evil_lib.sh: start and stop evil_upstream.py (a hostile upstream, see its
# docstring) for the t_hostile_*.sh scripts; sourced after lib.sh.

# start_evil ROOT MODE [ARGS...]: sets E_PORT, E_PORT2 (where redirects point),
# E_URL and ELOG (its request log).
start_evil() {
    stop_evil
    E_N=$((E_N + 1))
    ELOG=$T/evil$E_N.log
    local pf=$T/evil$E_N.port i
    : >"$ELOG"
    "$PY" "$UPSTREAM_DIR/evil_upstream.py" "$1" "$pf" "$ELOG" "${@:2}" >/dev/null \
        2>"$T/evil$E_N.err" &
    E_PID=$!
    for i in $(seq 1 100); do
        if [ -s "$pf" ]; then
            read -r E_PORT E_PORT2 <"$pf"
            E_URL=http://127.0.0.1:$E_PORT
            return 0
        fi
        sleep 0.05
    done
    bad "evil upstream starts" "$(head -c 300 "$T/evil$E_N.err")"
    return 1
}
E_PID=
E_N=0
E_PORT= E_PORT2= E_URL= ELOG=
stop_evil() { stop_pid E_PID; }
at_exit stop_evil

# vm KEY: a /proc/PID/status figure of the daemon under test, in kB.
vm() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$D_PID/status"; }
# nfds: open file descriptors of the daemon under test.
nfds() { find "/proc/$D_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
