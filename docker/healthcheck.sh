#!/bin/bash
# ztensord's container HEALTHCHECK, without curl: GET /healthz over bash's /dev/tcp,
# healthy when the status line says 200. The port comes from ZTENSORD_LISTEN (the
# image's default 0.0.0.0:7070); a wildcard or empty host is checked on loopback.
#
# With TLS (ZTENSORD_TLS_CERT set) bash cannot speak HTTPS: the check is then only that
# the port accepts a connection. If the listen address is set by a flag or a config
# file rather than ZTENSORD_LISTEN, set ZTD_HEALTHCHECK_ADDR=HOST:PORT as well, or
# override the HEALTHCHECK. (It is not named ZTENSORD_*: ztensord refuses to start on
# an unknown ZTENSORD_* variable.) ZTD_HEALTHCHECK_PATH=/readyz makes "healthy" mean
# ready: for a sidecar with --prefetch, only once the model is in its cache.
set -u
listen=${ZTD_HEALTHCHECK_ADDR:-${ZTENSORD_LISTEN:-127.0.0.1:7070}}
path=${ZTD_HEALTHCHECK_PATH:-/healthz}
case $path in
/*) ;;
*) path=/$path ;;
esac
port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case $host in
"" | 0.0.0.0) host=127.0.0.1 ;;
:: | ::0) host=::1 ;;
esac
{ exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null || {
    echo "unhealthy: cannot connect to $host:$port"
    exit 1
}
if [ -n "${ZTENSORD_TLS_CERT:-}" ]; then
    echo "port $port accepts connections (TLS: status not checked)"
    exit 0
fi
trap '' PIPE # a peer that closes early must not kill the check with SIGPIPE
printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "${path//[^A-Za-z0-9\/._-]/}" >&3 2>/dev/null
status=
IFS= read -r -t 4 status <&3
exec 3<&-
case $status in
"HTTP/1."?" 200"*)
    echo "healthy"
    exit 0
    ;;
esac
echo "unhealthy: ${status:-no answer}"
exit 1
