#!/bin/bash
# ztensord's container HEALTHCHECK, without curl: GET /healthz, healthy when the status
# line says 200. The address comes from ZTENSORD_LISTEN (the image's default
# 0.0.0.0:7070):
#   - HOST:PORT: over bash's /dev/tcp; a wildcard or empty host is checked on loopback;
#   - unix:PATH (ztensord listening on a Unix socket): over that socket with perl, which
#     every Debian image has (perl-base is Essential); bash cannot open a Unix socket.
#
# With TLS (ZTENSORD_TLS_CERT set) neither can speak HTTPS: the check is then only that
# the address accepts a connection. If the listen address is set by a flag or a config
# file rather than ZTENSORD_LISTEN, set ZTD_HEALTHCHECK_ADDR=HOST:PORT (or unix:PATH) as
# well, or override the HEALTHCHECK. (It is not named ZTENSORD_*: ztensord refuses to
# start on an unknown ZTENSORD_* variable.) ZTD_HEALTHCHECK_PATH=/readyz makes "healthy"
# mean ready: for a sidecar with --prefetch, only once the model is in its cache.
set -u
listen=${ZTD_HEALTHCHECK_ADDR:-${ZTENSORD_LISTEN:-127.0.0.1:7070}}
path=${ZTD_HEALTHCHECK_PATH:-/healthz}
case $path in
/*) ;;
*) path=/$path ;;
esac
path=${path//[^A-Za-z0-9\/._-]/}
tls=${ZTENSORD_TLS_CERT:+1}

# unix_status SOCKET: prints the status line of GET $path over the Unix socket (nothing
# under TLS); exit 2 when it cannot connect, 3 when no answer came within 4 s.
unix_status() {
    perl -MIO::Socket::UNIX -e '
        my ($sock, $path, $tls) = @ARGV;
        $SIG{ALRM} = sub { exit 3 };
        $SIG{PIPE} = "IGNORE"; # a peer that closes early must not kill the check
        alarm 4;
        my $s = IO::Socket::UNIX->new(Type => IO::Socket::UNIX::SOCK_STREAM(), Peer => $sock)
            or exit 2;
        exit 0 if $tls;
        print $s "GET $path HTTP/1.0\r\nHost: localhost\r\n\r\n";
        my $line = <$s>;
        $line = "" unless defined $line;
        $line =~ s/\r?\n\z//;
        print $line;
        exit 0;' "$1" "$path" "$tls"
}

case $listen in
unix:*)
    where=${listen#unix:}
    status=$(unix_status "$where")
    case $? in
    0) ;;
    3) status= ;;
    *)
        echo "unhealthy: cannot connect to unix:$where"
        exit 1
        ;;
    esac
    if [ -n "$tls" ]; then
        echo "socket $where accepts connections (TLS: status not checked)"
        exit 0
    fi
    ;;
*)
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
    if [ -n "$tls" ]; then
        echo "port $port accepts connections (TLS: status not checked)"
        exit 0
    fi
    trap '' PIPE # a peer that closes early must not kill the check with SIGPIPE
    printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$path" >&3 2>/dev/null
    status=
    IFS= read -r -t 4 status <&3
    exec 3<&-
    status=${status%$'\r'}
    ;;
esac
case $status in
"HTTP/1."?" 200"*)
    echo "healthy"
    exit 0
    ;;
esac
echo "unhealthy: ${status:-no answer}"
exit 1
