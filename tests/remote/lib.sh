# lib.sh: shared code of the remote-file test scripts. Source it as
#     . "$(dirname "$0")/lib.sh" "$@"
# with the arguments ZTENSORD ZT REMOTE_CHECK NGINX (NGINX may be "" when it
# is not installed: the nginx checks then print SKIP lines).
#
# It takes tests/sh/: common.sh (start_daemon, checks, finish), uploads.sh
# (uploads and sessions) and origins.sh (nginx as a plain origin, relay.py,
# rcheck/rexpect).
REMOTE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$REMOTE_DIR/../sh/common.sh" "$1" "$2"
. "$REMOTE_DIR/../sh/uploads.sh"
RC=${3:?usage: $0 ZTENSORD ZT REMOTE_CHECK NGINX}
NGINX=${4:-}
case $RC in /*) ;; *) RC=$PWD/$RC ;; esac
. "$REMOTE_DIR/../sh/origins.sh"
