#!/bin/bash
# libmicrohttpd's own messages go through ztensord's structured error log, prefixed
# "libmicrohttpd:", never as raw lines on stderr: a request MHD refuses by itself (a
# Content-Length that is not a number, headers larger than the connection's memory) is
# logged at info, and whatever HTML MHD puts in it stays on one escaped line. Both with
# --error-log FILE and with the default (stderr), every line the daemon writes is a
# well-formed error-log line. (The levels of the other messages: tests/server/test_mhd_log.c.)
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 4096
pack "$R/a.zt" w=u8:4096:"$T/w.raw" || finish

LINE_RE='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z level=(error|warn|info|debug) msg=".*"$'

# every_line_structured NAME FILE: each line of FILE is an error-log line.
every_line_structured() {
    local badl
    badl=$(grep -Evn "$LINE_RE" "$2" | head -3)
    if [ -z "$badl" ]; then ok "$1"; else bad "$1" "$badl"; fi
}
# wait_for FILE REGEX: poll up to 5 s until a line of FILE matches.
wait_for() {
    local i
    for i in $(seq 1 50); do
        grep -Eq -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
check_logged() { # NAME FILE REGEX
    if wait_for "$2" "$3"; then ok "$1"; else bad "$1" "no line /$3/ in $2: $(tail -c 600 "$2")"; fi
}

# ---- --error-log FILE: MHD's messages land in the file, nothing on stderr
LOG=$T/error.log
D_LOG=$LOG
start_daemon "$R" --error-log "$LOG" || finish

printf 'GET /v1/files HTTP/1.1\r\nHost: x\r\nContent-Length: twelve\r\n\r\n' >"$T/badlen.req"
raw_http 127.0.0.1 "$PORT" "$T/badlen.req" 5 >"$T/badlen.out"
check_match "bad Content-Length: MHD answers 400 itself" "$(head -1 "$T/badlen.out")" '^HTTP/1\.1 400 '
check_logged "its message is in the error log at info, prefixed libmicrohttpd:" "$LOG" \
    'level=info msg="libmicrohttpd: Failed to parse `Content-Length. header'
check_logged "MHD's 'Error processing request' (with its HTML body) is one escaped line" "$LOG" \
    'level=info msg="libmicrohttpd: Error processing request \(HTTP response code is 400 .*Closing connection\."$'

{
    printf 'GET /v1/files HTTP/1.1\r\nHost: x\r\nX-Big: '
    head -c 40000 /dev/zero | tr '\0' a
    printf '\r\n\r\n'
} >"$T/big.req"
raw_http 127.0.0.1 "$PORT" "$T/big.req" 5 >"$T/big.out"
check_match "headers over the connection's memory: 431" "$(head -1 "$T/big.out")" '^HTTP/1\.1 431 '
check_logged "the 431 is logged by MHD at info" "$LOG" 'level=info msg="libmicrohttpd: Error processing request \(HTTP response code is 431 '

req "the daemon still serves after all that" 200 "$URL/v1/files"
every_line_structured "every line of the error log file is structured" "$LOG"
check_eq "nothing on stderr (all of it went to the file)" "$(head -c 300 "$D_ERR")" ""
stop_daemon

# ---- the default error log (stderr): MHD's messages are structured lines there too
D_LOG=
start_daemon "$R" || finish
raw_http 127.0.0.1 "$PORT" "$T/badlen.req" 5 >/dev/null
check_logged "stderr: MHD's message as an error-log line" "$D_ERR" 'level=info msg="libmicrohttpd: Failed to parse'
stop_daemon
every_line_structured "every line on stderr is structured (no raw MHD lines)" "$D_ERR"

finish
