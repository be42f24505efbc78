#!/bin/bash
# Refused requests whose bodies are being drained hold no busy slot (issue 27, finding 6).
# A PUT without a token is refused with 401, but the server reads and drops its body first
# (up to lingering_max, for up to lingering_timeout) so that a client without
# Expect: 100-continue sees the answer. Such connections used to count as busy: 62 slow
# ones under --connection-limit 64 made every read answer 503 overloaded for 30 s. Now they
# are counted apart (ztensord_connections{state="draining"}) and closed to make room, like
# idle ones, so reads are answered. Nothing here depends on how long a step takes: the
# drainers are in place when the server's own counters say so (bounded wait).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 4096
pack "$R/a.zt" w=u8:4096:"$T/w.raw" || finish
echo "write wr-$(head -c 24 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9')" >"$T/tokens"

# connection_limit 16 keeps a reserve of 1: more than 15 busy connections refuse reads.
# No min_body_rate and a long lingering_timeout: the drainers' pace decides nothing.
LIMIT=16 N=15
start_daemon "$R" --tokens-file "$T/tokens" --connection-limit $LIMIT --min-body-rate 0 \
    --lingering-max 64M --lingering-timeout 10m || finish
check_eq "draining gauge present" \
    "$(curl -s "$URL/metrics" | grep -c '^ztensord_connections{state="draining"} 0$')" 1

# metric_of TEXT KEY: the value of KEY in a metrics text (0 when absent).
metric_of() { awk -v k="$2" '$1 == k { v = $2 } END { print v + 0 }' <<<"$1"; }

"$PY" "$HOSTILE_DIR/drainers.py" 127.0.0.1 "$PORT" $N 60000000 "$T/stop" 120 >"$T/drain.out" &
DR=$!
# Wait (at most 20 s) until the server has taken every drainer's head: each one is draining
# (busy, before the fix) or was closed to make room. busy counts this /metrics request too.
seen=0
for i in $(seq 1 200); do
    m=$(curl -s --max-time 5 "$URL/metrics")
    b=$(metric_of "$m" 'ztensord_connections{state="busy"}')
    d=$(metric_of "$m" 'ztensord_connections{state="draining"}')
    e=$(metric_of "$m" 'ztensord_connections_closed_total{reason="evicted"}')
    seen=$((b - 1 + d + e))
    [ "$seen" -ge $N ] && break
    sleep 0.1
done
check_ge "all $N refused PUTs are draining or were closed (busy-1 $((b - 1)), draining $d, evicted $e)" "$seen" $N

# Reads while the drainers keep sending: each is answered, never 503 overloaded.
for i in 1 2 3 4 5 6; do
    req "read $i while $N refused bodies drain: 200" 200 "$URL/v1/files/a.zt/objects/w/data"
done
check_same "read: the bytes" "$LAST.body" "$T/w.raw"
req "listing while refused bodies drain: 200" 200 "$URL/v1/files"
req "/healthz while refused bodies drain: 200" 200 "$URL/healthz"

# busy: only the /metrics request itself (a read's connection may take a moment to leave
# busy after its answer: bounded retries)
for i in $(seq 1 50); do
    m=$(curl -s --max-time 5 "$URL/metrics")
    [ "$(metric_of "$m" 'ztensord_connections{state="busy"}')" = 1 ] && break
    sleep 0.1
done
check_ge "metrics: draining connections closed to make room" \
    "$(metric_of "$m" 'ztensord_connections_closed_total{reason="evicted"}')" 1
check_eq "metrics: no refused body counted as busy (only this request)" \
    "$(metric_of "$m" 'ztensord_connections{state="busy"}')" 1
check_ge "metrics: the other refused bodies still draining" \
    "$(metric_of "$m" 'ztensord_connections{state="draining"}')" $((N - 3))
touch "$T/stop"
wait $DR
out=$(cat "$T/drain.out")
note "drainers: $out"
check_match "the drainers saw their connections closed, not answered" "$out" '^opened 15 closed [1-9][0-9]* answered 0$'
check_eq "nothing published" "$(ls "$R")" a.zt
daemon_alive "daemon alive"
finish
