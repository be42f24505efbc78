# lib.sh: what the ops scripts (systemd, metrics, logs, TLS, container files) add to
# tests/sh/common.sh. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries). A tool the test needs
# that is missing is a failure, never a skip (need_tool).
OPS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$OPS_DIR/../sh/common.sh" "$@"
