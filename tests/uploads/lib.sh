# lib.sh: the upload scripts' shell library: tests/sh/common.sh and
# tests/sh/uploads.sh (the staging directory, uploads and sessions). Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT (paths of the two binaries).
UP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$UP_DIR/../sh/common.sh" "$@"
. "$UP_DIR/../sh/uploads.sh"
