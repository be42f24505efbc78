# lib.sh: shared code of the hostile-client scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
#
# The hostile suite tries the server as an attacker and as a careless operator
# would (issue 10). It takes tests/sh/common.sh (start_daemon, http, checks,
# finish) and tests/sh/uploads.sh (put, session_*); this file adds only what is
# particular to it.
# All traffic goes to 127.0.0.1 (or another loopback address); every loop is
# bounded in count and time.
HOSTILE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HOSTILE_DIR/../sh/common.sh" "$@"
. "$HOSTILE_DIR/../sh/uploads.sh"

# raw_http HOST PORT FILE [SECONDS]: send FILE's bytes as they are over one TCP
# connection, print everything the server answers until it closes or SECONDS
# (default 5) pass. Exit status 0 when the server closed the connection, 124 on
# the time limit.
raw_http() {
    "$PY" "$HOSTILE_DIR/rawhttp.py" "$1" "$2" "$3" "${4:-5}"
}

# jerr_code FILE: the code of FILE when it is the server's JSON error body
# {"error":{"code":"...","message":"..."}} with a non-empty message, else nothing. A grep,
# not a JSON parser: cheap enough for the hundreds of answers a matrix checks.
jerr_code() {
    sed -n 's/^{"error":{"code":"\([a-z_]*\)","message":".\{1,\}"}}$/\1/p' "$1" 2>/dev/null
}

# tree_state DIR [PRUNE]: one sorted line per entry under DIR (PRUNE and its contents left
# out): type, path and, for a file, its sha256, for a symlink, its target. Two calls that
# print the same lines saw the same tree.
tree_state() {
    find "$1" ${2:+-path "$2" -prune -o} -printf '%y %p %l\n' | sort | while read -r y p l; do
        case $y in
        f) echo "f $p $(sha256_hex "$p")" ;;
        *) echo "$y $p $l" ;;
        esac
    done
}

# rescan: SIGHUP the daemon and wait (up to 10 s) for the next catalog generation in its log.
rescan() {
    local n i
    n=$(grep -c 'catalog: .* generation' "$D_ERR")
    kill -HUP "$D_PID"
    for i in $(seq 1 200); do
        [ "$(grep -c 'catalog: .* generation' "$D_ERR")" -gt "$n" ] && return 0
        sleep 0.05
    done
    bad "rescan" "no new catalog generation in the log within 10 s"
}

# raw_statuses FILE: the status codes of the responses in a raw answer (as raw_http prints
# it), in order, each followed by a space. Walks the answer response by response (header
# block, then Content-Length bytes of body), so a body never passes for a status line; bytes
# left over that do not start a response are printed as "junk".
raw_statuses() {
    "$PY" -c '
import re, sys
d = open(sys.argv[1], "rb").read()
out = []
while d.startswith(b"HTTP/"):
    end = d.find(b"\r\n\r\n")
    if end < 0:
        break
    head = d[:end].decode("latin-1")
    out.append(head.split(" ", 2)[1])
    m = re.search(r"(?im)^content-length:\s*(\d+)", head)
    d = d[end + 4 + (int(m.group(1)) if m else 0):]
if d:
    out.append("junk")
print("".join(c + " " for c in out), end="")' "$1"
}
