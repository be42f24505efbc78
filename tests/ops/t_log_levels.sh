#!/bin/bash
# The error log's levels for refusals the server makes by design: a 503 from /readyz
# while not ready, and 503 overloaded (load shedding), answered to a probe loop, write
# nothing at the default level (info) and nothing at level error at any level; at
# --log-level debug each is still there, at debug; /metrics counts every one by its
# error code (ztensord_errors_total). (That a fault is still an error: test_errors.)
. "$(dirname "$0")/lib.sh" "$@"

need_tool curl
PROBES=30

R=$T/root
O=$T/origin
mkdir -p "$R" "$O"
# 16 MiB: more than the socket buffers hold, so a slow reader keeps its connection busy
rand "$T/w.raw" $((16 << 20))
pack "$R/big.zt" w=u8:$((16 << 20)):"$T/w.raw" || finish
pack "$O/up.zt" w=u8:4096:<(head -c 4096 "$T/w.raw") || finish

# errors_of CODE: ztensord_errors_total for this error code (0 when absent)
errors_of() {
    curl -s --max-time 10 "$URL/metrics" |
        awk -v c="$1" '$1 ~ "^ztensord_errors_total[{]error=\"" c "\"" { s += $2 } END { print s + 0 }'
}
# probe N PATH: GET PATH N times; prints how many answers were 503
probe() {
    local n=0 i
    for i in $(seq 1 "$1"); do
        [ "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL$2")" = 503 ] && n=$((n + 1))
    done
    echo "$n"
}

# ---- /readyz 503 not_ready: a sidecar whose start-up prefetch cannot finish (the origin
# has no such file) stays not ready
start_daemon "$O" || finish
ORIGIN=$URL O_PID=$D_PID O_ERR=$D_ERR
D_PID=
at_exit '[ -n "$O_PID" ] && kill -KILL "$O_PID" 2>/dev/null'
for level in info debug; do
    NO_READY=1 start_daemon "$R" --upstream "$ORIGIN" --cache-dir "$T/cache-$level" \
        --prefetch missing.zt --upstream-retries 0 --log-level "$level" || finish
    check_eq "log-level $level: /readyz answers 503 to $PROBES probes" "$(probe $PROBES /readyz)" $PROBES
    lines=$(grep -c 'not_ready' "$D_ERR")
    check_eq "log-level $level: no not_ready line at level error" "$(grep -c 'level=error .*not_ready' "$D_ERR")" 0
    if [ "$level" = info ]; then
        check_eq "log-level info: the probe loop writes nothing" "$lines" 0
    else
        check_ge "log-level debug: each refusal is there, at debug" "$(grep -c 'level=debug .*503 not_ready' "$D_ERR")" $PROBES
    fi
    check_ge "metrics: ztensord_errors_total{error=\"not_ready\"} counts them" "$(errors_of not_ready)" $PROBES
    stop_daemon
done

# ---- 503 overloaded (load shedding): connection_limit 2 keeps a reserve of 1 for the
# health routes; one slow download fills the rest
start_daemon "$R" --connection-limit 2 || finish
$HELP slowget "$PORT" /v1/files/big.zt/objects/w/data "$T/slow.body" $((32 << 10)) >"$T/slow.code" &
slow=$!
at_exit 'kill -KILL "$slow" 2>/dev/null'
busy=0
for i in $(seq 1 100); do
    [ "$(curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$URL/v1/files")" = 503 ] && busy=1 && break
    sleep 0.05
done
check_eq "a slow download fills the connections: /v1/files answers 503" "$busy" 1
check_eq "overloaded: $PROBES requests answered 503" "$(probe $PROBES /v1/files)" $PROBES
if kill -0 "$slow" 2>/dev/null; then ok "the slow download was still running"; else
    bad "the slow download was still running" "it ended: the 503s were not load shedding"
fi
check_eq "overloaded: nothing written at the default level" "$(grep -c 'overloaded' "$D_ERR")" 0
check_ge "metrics: ztensord_errors_total{error=\"overloaded\"} counts them" "$(errors_of overloaded)" $PROBES
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
stop_daemon

finish
