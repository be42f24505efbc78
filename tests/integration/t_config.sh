#!/bin/bash
# Configuration at start-up: invalid flags, values, environment variables and config files
# exit 2 with a message naming the problem; start-up failures exit 1; precedence flag >
# environment > file is visible in behaviour.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 1000
pack "$R/a.zt" w=u8:1000:"$T/w.raw"

# run_cfg LABEL WANT_RC MSG_ERE [env NAME=VAL...] -- ARGS...: run ztensord (bounded by
# timeout 10; a run that starts serving is killed and counted as rc "timeout").
n=0
run_cfg() {
    local label=$1 want=$2 re=$3 rc
    shift 3
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    n=$((n + 1))
    env "${envs[@]}" timeout -s KILL 10 "$ZTENSORD" "$@" >"$T/cfg$n.out" 2>"$T/cfg$n.err"
    rc=$?
    [ $rc = 137 ] && rc=timeout
    check_eq "$label: exit status" "$rc" "$want"
    if [ -n "$re" ]; then
        check_match "$label: message" "$(cat "$T/cfg$n.err")" "$re"
    fi
    check_sanitizers "$label: no sanitizer report" "$T/cfg$n.err"
}
B=(--listen 127.0.0.1:0 --access-log off)

# ---- exit 2: invalid command line
run_cfg "unknown flag" 2 'unknown flag.*--bogus' -- --root "$R" "${B[@]}" --bogus
run_cfg "unknown flag before --root" 2 'bogus' -- --bogus 1 --root "$R"
run_cfg "unknown short flag" 2 '-x' -- -x --root "$R" "${B[@]}"
run_cfg "stray argument" 2 'unexpected argument|argument' -- --root "$R" "${B[@]}" extra
run_cfg "missing --root" 2 'root' -- "${B[@]}"
run_cfg "flag without its value" 2 'threads.*missing value|missing' -- --root "$R" "${B[@]}" --threads
run_cfg "--threads 1000 (max 256)" 2 'threads.*range' -- --root "$R" "${B[@]}" --threads 1000
run_cfg "--threads -1" 2 'threads' -- --root "$R" "${B[@]}" --threads -1
run_cfg "--threads 1x" 2 'threads' -- --root "$R" "${B[@]}" --threads 1x
run_cfg "--threads 99999999999999999999999" 2 'threads' -- --root "$R" "${B[@]}" --threads 99999999999999999999999
run_cfg "--max-ranges 0" 2 'max_ranges|max-ranges' -- --root "$R" "${B[@]}" --max-ranges 0
run_cfg "--max-ranges 65" 2 'max_ranges|max-ranges' -- --root "$R" "${B[@]}" --max-ranges 65
run_cfg "--shutdown-grace 2h (max 1h)" 2 'shutdown' -- --root "$R" "${B[@]}" --shutdown-grace 2h
run_cfg "--shutdown-grace 5 (no unit)" 2 'shutdown' -- --root "$R" "${B[@]}" --shutdown-grace 5
run_cfg "--connection-timeout 0 (min 1s)" 2 'connection' -- --root "$R" "${B[@]}" --connection-timeout 0
run_cfg "--connection-limit 0" 2 'connection' -- --root "$R" "${B[@]}" --connection-limit 0
run_cfg "--max-manifest-size 2G (max 1G)" 2 'manifest' -- --root "$R" "${B[@]}" --max-manifest-size 2G
run_cfg "--max-manifest-size 1Q" 2 'manifest' -- --root "$R" "${B[@]}" --max-manifest-size 1Q
run_cfg "--rescan-debounce 2m (max 1m)" 2 'rescan' -- --root "$R" "${B[@]}" --rescan-debounce 2m
run_cfg "--listen port 70000" 2 'listen' -- --root "$R" --access-log off --listen 127.0.0.1:70000
run_cfg "--listen without a port" 2 'listen' -- --root "$R" --access-log off --listen 127.0.0.1
run_cfg "--log-level loud" 2 'log_level|log-level' -- --root "$R" "${B[@]}" --log-level loud
run_cfg "--access-log-format xml" 2 'format' -- --root "$R" "${B[@]}" --access-log-format xml
run_cfg "--watch=maybe" 2 'watch' -- --root "$R" "${B[@]}" --watch=maybe
run_cfg "--cache-control with a control character" 2 'cache' -- --root "$R" "${B[@]}" --cache-control "$(printf 'a\001b')"

# ---- exit 2: environment
run_cfg "unknown ZTENSORD_ variable" 2 'ZTENSORD_BOGUS' ZTENSORD_BOGUS=1 -- --root "$R" "${B[@]}"
run_cfg "ZTENSORD_THREADS=999" 2 'threads|THREADS' ZTENSORD_THREADS=999 -- --root "$R" "${B[@]}"
run_cfg "ZTENSORD_WATCH=perhaps" 2 'watch|WATCH' ZTENSORD_WATCH=perhaps -- --root "$R" "${B[@]}"

# ---- exit 2: config file
printf '{"root": "%s", "bogus_key": 1}\n' "$R" >"$T/unknown.json"
run_cfg "config file: unknown key" 2 'bogus_key' -- --config "$T/unknown.json" "${B[@]}"
printf '{"root": "%s", "threads": 1000}\n' "$R" >"$T/range.json"
run_cfg "config file: out-of-range value" 2 'threads' -- --config "$T/range.json" "${B[@]}"
printf '{"root": "%s", "threads": "two"}\n' "$R" >"$T/type.json"
run_cfg "config file: wrong type" 2 'threads' -- --config "$T/type.json" "${B[@]}"
printf '{"root": ' >"$T/broken.json"
run_cfg "config file: broken JSON" 2 'broken.json|JSON|json' -- --config "$T/broken.json" "${B[@]}"
printf '[1, 2]\n' >"$T/array.json"
run_cfg "config file: not an object" 2 '.' -- --config "$T/array.json" "${B[@]}"
run_cfg "config file: missing" 2 'nope.json' -- --config "$T/nope.json" "${B[@]}"

# ---- exit 1: valid configuration, but the server cannot start
run_cfg "root does not exist" 1 'nonexistent' -- --root "$T/nonexistent" "${B[@]}"
run_cfg "root is a file" 1 'a.zt' -- --root "$R/a.zt" "${B[@]}"
start_daemon "$R" || finish
run_cfg "address in use" 1 'listen|in use' -- --root "$R" --access-log off --listen "127.0.0.1:$PORT"
stop_daemon

# ---- exit 0: help and version
run_cfg "--help" 0 '' -- --help
check_match "--help prints the options" "$(cat "$T/cfg$n.out")" 'shutdown-grace'
check_match "--help documents exit status 2" "$(cat "$T/cfg$n.out")" 'EXIT STATUS'
run_cfg "--version" 0 '' -- --version
check_match "--version prints a version" "$(cat "$T/cfg$n.out")" '^ztensord [0-9]'
run_cfg "-h with an unknown flag still prints help" 0 "" -- -h --bogus

# ---- precedence: flag > environment > file (seen through --max-ranges)
printf '{"root": "%s", "listen": "127.0.0.1:0", "access_log": "off", "max_ranges": 1}\n' "$R" >"$T/good.json"
THREE="bytes=0-0,2-2,4-4"
TWO="bytes=0-0,2-2"
three_code() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' -H "Range: $1" "$URL/v1/files/a.zt/raw"; }
start_cfg() { # start from a config file with extra env and flags; sets D_* like start_daemon
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    env "$@" 2>"$D_ERR" &
    D_PID=$!
    PORT=
    for i in $(seq 1 300); do
        PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$D_ERR" | head -1)
        [ -n "$PORT" ] && break
        kill -0 "$D_PID" 2>/dev/null || break
        sleep 0.1
    done
    URL=http://127.0.0.1:$PORT
    for i in $(seq 1 100); do
        [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] && return 0
        sleep 0.1
    done
    bad "daemon $D_N (config file) ready" "$(head -c 300 "$D_ERR")"
    return 1
}
start_cfg "$ZTENSORD" --config "$T/good.json" || finish
check_eq "file max_ranges=1: two ranges -> 200" "$(three_code "$TWO")" 200
stop_daemon
start_cfg ZTENSORD_MAX_RANGES=2 "$ZTENSORD" --config "$T/good.json" || finish
check_eq "env 2 beats file 1: two ranges -> 206" "$(three_code "$TWO")" 206
check_eq "env 2 beats file 1: three ranges -> 200" "$(three_code "$THREE")" 200
stop_daemon
start_cfg ZTENSORD_MAX_RANGES=2 "$ZTENSORD" --config "$T/good.json" --max-ranges 3 || finish
check_eq "flag 3 beats env 2: three ranges -> 206" "$(three_code "$THREE")" 206
stop_daemon
start_cfg ZTENSORD_CONFIG="$T/good.json" "$ZTENSORD" || finish
check_eq "ZTENSORD_CONFIG names the file" "$(three_code "$TWO")" 200
stop_daemon

# ---- cache_control is applied (and "" sends none)
start_daemon "$R" --cache-control "private, max-age=5" || finish
req "custom Cache-Control" 200 "$URL/v1/files/a.zt/objects/w/data"
check_eq "custom Cache-Control value" "$(hdr "$LAST.hdr" Cache-Control)" "private, max-age=5"
stop_daemon
start_daemon "$R" --cache-control "" || finish
req "empty Cache-Control" 200 "$URL/v1/files/a.zt/objects/w/data"
if has_hdr "$LAST.hdr" Cache-Control; then bad "empty --cache-control sends none" "$(hdr "$LAST.hdr" Cache-Control)"; else ok "empty --cache-control sends none"; fi
stop_daemon

# ---- --threads 1 and --connection-limit 2 still serve; a third connection waits or is refused
start_daemon "$R" --threads 1 --connection-limit 2 || finish
req "--threads 1 serves" 200 "$URL/v1/files/a.zt/objects/w/data"
check_same "--threads 1 bytes" "$LAST.body" "$T/w.raw"
stop_daemon

# ---- options that do nothing in this mode: a warning each, and the server starts
ZTENSORD_UPSTREAM_TTL=1m start_daemon "$R" --cache-size 5G --listen-mode 0600 --no-watch \
    --rescan-debounce 1s --max-upload-size 1G || finish
req "unused options: serves" 200 "$URL/v1/files/a.zt/objects/w/data"
warns=$(grep 'level=warn ' "$D_ERR")
check_match "cache_size without upstream: a warning" "$warns" 'option cache_size is set but does nothing without upstream'
check_match "upstream_ttl (env) without upstream: a warning" "$warns" 'option upstream_ttl is set but does nothing without upstream'
check_match "listen_mode on TCP: a warning" "$warns" 'option listen_mode is set but does nothing when listen is a TCP address'
check_match "rescan_debounce with watch off: a warning" "$warns" 'option rescan_debounce is set but does nothing with watch off'
check_match "max_upload_size with uploads off: a warning" "$warns" 'option max_upload_size is set but does nothing with uploads off'
check_eq "one warning per unused option" "$(grep -c 'is set but does nothing' "$D_ERR")" 5
stop_daemon
start_daemon "$R" || finish
check_eq "defaults: no unused-option warning" "$(grep -c 'is set but does nothing' "$D_ERR")" 0
stop_daemon
# an upstream that is the server's own address is refused (exit 2)
P=$(free_port)
timeout -s KILL 30 "$ZTENSORD" --root "$R" --listen 127.0.0.1:"$P" --upstream "http://localhost:$P" \
    --cache-dir "$T/c" 2>"$T/self.err" # (it would run, asking itself, without the check)
check_eq "upstream = own listen address: exit 2" "$?" 2
check_match "upstream = own listen address: says why" "$(cat "$T/self.err")" 'is this server.s own listen address'

finish
