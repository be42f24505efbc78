#!/bin/bash
# `--listen unix:PATH` (issue 13): a sidecar's local clients reach ztensord through a Unix
# socket (`curl --unix-socket`). Components, ranges and /healthz come back byte-exact; the
# socket gets mode 0660 by default and --listen-mode otherwise; the access log names the
# peer "unix:"; the per-address connection limit does not lump local clients together;
# a second server on the same path is refused while the first answers; a socket left by
# a server killed with SIGKILL is replaced at the next start; a path that is a regular
# file or a directory is refused and left as it was; relative and over-long paths are
# configuration errors; a clean exit removes the socket.
. "$(dirname "$0")/lib.sh" "$@"

need_tool curl
need_tool stat

# sun_path holds 107 bytes: keep the socket directory short whatever $T is.
S=$(mktemp -d "${TMPDIR:-/tmp}/ztsock.XXXXXX") || exit 1
at_exit "rm -rf -- '$S'"
SOCK=$S/zt.sock

R=$T/root
mkdir -p "$R"
SIZE=$((4 * 1024 * 1024 + 4321))
rand "$T/w.raw" $SIZE
rand "$T/s.raw" 1000
pack "$R/m.zt" w=u8:$SIZE:"$T/w.raw" s=u8:1000:"$T/s.raw" || finish

U_PID=
U_ERR=
U_N=0
# start_unix PATH [FLAGS...]: ztensord on unix:PATH; waits for its "listening on" line.
# Sets U_PID and U_ERR; returns non-zero when it did not start (U_PID is then the
# exited process, for wait_exit).
start_unix() {
    local path=$1 i
    shift
    U_N=$((U_N + 1))
    U_ERR=$T/unix$U_N.err
    "$ZTENSORD" --root "$R" --listen "unix:$path" "$@" 2>"$U_ERR" &
    U_PID=$!
    for i in $(seq 1 300); do # up to 30 s (ASan start-up is slow)
        grep -q 'listening on http+unix:' "$U_ERR" 2>/dev/null && return 0
        kill -0 "$U_PID" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# stop_unix NAME: SIGTERM, exit status 0, no sanitizer report.
stop_unix() {
    kill -TERM "$U_PID" 2>/dev/null
    wait_exit "$U_PID" 20
    check_eq "$1: exit status after SIGTERM" "$EXIT_RC" 0
    check_sanitizers "$1: no sanitizer report" "$U_ERR"
    U_PID=
}
at_exit '[ -n "$U_PID" ] && kill -KILL "$U_PID" 2>/dev/null'
ucurl() { curl -sS --max-time 20 --unix-socket "$SOCK" "$@"; }

# ---- serving
if start_unix "$SOCK" --access-log -; then ok "starts on unix:$SOCK"; else
    bad "starts on unix:$SOCK" "$(head -c 600 "$U_ERR")"
    finish
fi
check "the path is a socket" test -S "$SOCK"
check_eq "default mode 0660" "$(stat -c %a "$SOCK")" 660
check_eq "GET /healthz over the socket" "$(ucurl -o /dev/null -w '%{http_code}' http://localhost/healthz)" 200
check_eq "GET /readyz over the socket" "$(ucurl -o /dev/null -w '%{http_code}' http://localhost/readyz)" 200
C=http://localhost/v1/files/m.zt/objects/w/data
ucurl -o "$T/got.w" "$C"
check_same "component bytes over the socket (4 MiB + 4321)" "$T/got.w" "$T/w.raw"
ucurl -r 1000000-1999999 -o "$T/got.range" "$C"
slice "$T/w.raw" 1000000 1000000 >"$T/want.range"
check_same "range bytes over the socket" "$T/got.range" "$T/want.range"
ucurl -o "$T/got.s1" -o "$T/got.s2" -v http://localhost/v1/files/m.zt/objects/s/data \
    http://localhost/v1/files/m.zt/objects/s/data 2>"$T/ka.err"
check_same "keep-alive: second response bytes" "$T/got.s2" "$T/s.raw"
check_match "keep-alive over the socket (connection reused)" "$(cat "$T/ka.err")" 'Re-using existing connection|Reusing existing connection'
sleep 0.2 # the access log line is written when the request completes
check_match "access log names the peer unix:" "$(grep 'GET /healthz' "$U_ERR")" '^unix: '
ucurl http://localhost/metrics >"$T/metrics"
check_ge "metrics count the bytes sent over the socket" \
    "$(awk '/^ztensord_response_bytes_total/ {s += $2} END {printf "%d", s}' "$T/metrics")" $((SIZE + 1000000))

# ---- a second server on the same path is refused; the first keeps serving
FIRST=$U_PID
FIRST_ERR=$U_ERR
if start_unix "$SOCK"; then
    bad "a second server on a live socket is refused" "it started"
    kill -KILL "$U_PID"
    wait "$U_PID" 2>/dev/null
else
    wait_exit "$U_PID" 20
    check_eq "a second server on a live socket exits 1" "$EXIT_RC" 1
    check_match "... and says why" "$(cat "$U_ERR")" 'another server answers on this socket'
fi
U_PID=$FIRST
U_ERR=$FIRST_ERR
check_eq "the first still serves" "$(ucurl -o /dev/null -w '%{http_code}' http://localhost/healthz)" 200

# ---- clean exit removes the socket
stop_unix "first server"
check "clean exit removed the socket" test ! -e "$SOCK"

# ---- --listen-mode; a stale socket left by SIGKILL is replaced
if start_unix "$SOCK" --listen-mode 0600; then ok "starts with --listen-mode 0600"; else
    bad "starts with --listen-mode 0600" "$(head -c 600 "$U_ERR")"
    finish
fi
check_eq "--listen-mode 0600" "$(stat -c %a "$SOCK")" 600
kill -KILL "$U_PID"
wait "$U_PID" 2>/dev/null
U_PID=
check "SIGKILL leaves the socket file behind" test -S "$SOCK"
if start_unix "$SOCK" --max-connections-per-address 1; then ok "starts over a stale socket"; else
    bad "starts over a stale socket" "$(head -c 600 "$U_ERR")"
fi
check_match "... and says it replaced it" "$(cat "$U_ERR")" 'removed a stale socket'
ucurl -o "$T/got.w2" "$C"
check_same "component bytes after the restart" "$T/got.w2" "$T/w.raw"
# Local peers have no address: the per-address limit (1 here) must not count them as one.
# The three are held after their header block (zthelp heldget: the 4 MiB answers stay in
# flight however long the steps take; slowget's 2 s could end before a slow machine had
# started the third), and /metrics, a fourth local client, must see them in flight at once.
hpids=()
for i in 1 2 3; do
    held_get "par$i" "unix:$SOCK" "${C#http://localhost}"
    check_eq "local client $i: its answer started" "$HELD_STATUS" 200
    hpids+=("$HELD_PID")
done
inflight=$(ucurl http://localhost/metrics | awk '$1 == "ztensord_requests_in_flight" { print $2 }')
check_ge "the three local clients in flight at once (and the /metrics request)" "$inflight" 4
n=0
for i in 1 2 3; do
    held_release "par$i" "${hpids[$((i - 1))]}"
    [ "${HELD_RESULT% *}" = 200 ] && cmp -s "$T/par$i" "$T/w.raw" && n=$((n + 1))
done
check_eq "three parallel local clients with --max-connections-per-address 1" $n 3
stop_unix "server over the stale socket"

# ---- refused paths, left untouched
echo "precious" >"$S/file"
if start_unix "$S/file"; then
    bad "a regular file at the path is refused" "it started"
    stop_unix "regular file"
else
    wait_exit "$U_PID" 20
    check_eq "a regular file at the path: exit 1" "$EXIT_RC" 1
    check_match "... says it is not a socket" "$(cat "$U_ERR")" 'exists and is not a socket'
    check_eq "... and leaves the file as it was" "$(cat "$S/file")" precious
fi
mkdir "$S/dir"
if start_unix "$S/dir"; then
    bad "a directory at the path is refused" "it started"
    stop_unix "directory"
else
    wait_exit "$U_PID" 20
    check_eq "a directory at the path: exit 1" "$EXIT_RC" 1
    check "... and it is still there" test -d "$S/dir"
fi
if start_unix "$S/missing/zt.sock"; then
    bad "a missing directory is refused" "it started"
    stop_unix "missing directory"
else
    wait_exit "$U_PID" 20
    check_eq "a socket in a missing directory: exit 1" "$EXIT_RC" 1
    check_match "... says why" "$(cat "$U_ERR")" 'bind: No such file or directory'
fi

# ---- configuration errors (exit 2)
cfg_err() { # NAME PATTERN FLAGS...
    local name=$1 pat=$2
    shift 2
    "$ZTENSORD" --root "$R" "$@" >/dev/null 2>"$T/cfg.err"
    local rc=$?
    check_eq "$name: exit 2" $rc 2
    check_match "$name: message" "$(cat "$T/cfg.err")" "$pat"
}
cfg_err "relative socket path" 'absolute path' --listen unix:zt.sock
cfg_err "socket path over 107 bytes" 'longer than 107 bytes' --listen "unix:/$(printf 'a%.0s' $(seq 1 110))"
cfg_err "listen-mode not octal" 'octal mode' --listen-mode 0688
cfg_err "listen-mode over 0777" 'octal mode' --listen-mode 4777
ZTENSORD_LISTEN_MODE=x "$ZTENSORD" --root "$R" --listen "unix:$SOCK" >/dev/null 2>"$T/env.err"
check_eq "ZTENSORD_LISTEN_MODE=x: exit 2" $? 2
check_match "ZTENSORD_LISTEN_MODE=x: message names the variable" "$(cat "$T/env.err")" 'ZTENSORD_LISTEN_MODE'

finish
