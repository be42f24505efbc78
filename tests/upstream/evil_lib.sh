# evil_lib.sh: start and stop evil_upstream.py (a hostile upstream, see its
# docstring) for the t_hostile_*.sh scripts; sourced after lib.sh.

# start_evil ROOT MODE [ARGS...]: sets E_PORT, E_PORT2 (where redirects point),
# E_URL and ELOG (its request log).
start_evil() {
    stop_evil
    start_py_helper evil "$UPSTREAM_DIR/evil_upstream.py" "$@"
    local rc=$?
    E_PID=$HELPER_PID ELOG=$HELPER_LOG
    read -r E_PORT E_PORT2 <<<"$HELPER_PORTS"
    E_URL=http://127.0.0.1:$E_PORT
    return $rc
}
E_PID=
E_PORT= E_PORT2= E_URL= ELOG=
stop_evil() { stop_pid E_PID; }
at_exit stop_evil

# vm KEY: a /proc/PID/status figure of the daemon under test, in kB.
vm() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$D_PID/status"; }
# nfds: open file descriptors of the daemon under test.
nfds() { find "/proc/$D_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
