# lib.sh: shared code of the hostile-client scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
#
# The hostile suite tries the server as an attacker and as a careless operator
# would (issue 10). It reuses the upload suite's helpers (start_daemon, http,
# put, session_*, checks, finish); this file adds only what is particular to it.
# All traffic goes to 127.0.0.1 (or another loopback address); every loop is
# bounded in count and time.
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../uploads/lib.sh" "$@"
HOSTILE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# raw_http HOST PORT FILE [SECONDS]: send FILE's bytes as they are over one TCP
# connection, print everything the server answers until it closes or SECONDS
# (default 5) pass. Exit status 0 when the server closed the connection, 124 on
# the time limit.
raw_http() {
    "$PY" "$HOSTILE_DIR/rawhttp.py" "$1" "$2" "$3" "${4:-5}"
}
