#!/bin/bash
# systemd/ztensord.service, ztensord.socket and the uploads.conf and cache.conf drop-ins:
#   - `systemd-analyze verify` is clean (exit 0 and no output at all);
#   - `systemd-analyze security --offline=yes` rates the service 2.0 or lower, with and
#     without each drop-in; cache.conf changes nothing but the cache directory and the
#     command line, so its score is the main unit's;
#   - every Documentation= path of the units is a file `cmake --install` installs;
#   - the unit has the settings docs/OPERATIONS.md promises (Type=notify, watchdog,
#     reload by SIGHUP, the hardening list);
#   - the ExecStart= command lines (default and drop-in) are valid ztensord command lines:
#     run with the built binary, a temporary root and port 0, they serve (cache.conf's
#     the files of an origin on loopback, too).
# verify checks that ExecStart's binary (/usr/local/bin/ztensord) exists. As root, the
# checks run in a private mount namespace (unshare -m) where a tmpfs on /usr/local/bin
# holds a copy of the built ztensord, so the unit files are verified unchanged and the
# host is not touched. Otherwise the units are copied with ExecStart= pointing at the
# built binary (a note says so).
. "$(dirname "$0")/lib.sh" "$@"

need_tool systemd-analyze systemd
UNITS=$REPO/systemd
MAX_EXPOSURE=${ZT_MAX_EXPOSURE:-2.0}
BIN=/usr/local/bin/ztensord

for f in ztensord.service ztensord.socket uploads.conf cache.conf; do
    check "systemd/$f exists" test -s "$UNITS/$f"
done

# ---- a unit search path with the units and the drop-in (SYSTEMD_UNIT_PATH)
U=$T/units
UD=$T/units-uploads
UC=$T/units-cache
mkdir -p "$U" "$UD/ztensord.service.d" "$UC/ztensord.service.d"
cp "$UNITS/ztensord.service" "$UNITS/ztensord.socket" "$U/"
cp "$UNITS/ztensord.service" "$UNITS/ztensord.socket" "$UD/"
cp "$UNITS/uploads.conf" "$UD/ztensord.service.d/"
cp "$UNITS/ztensord.service" "$UNITS/ztensord.socket" "$UC/"
cp "$UNITS/cache.conf" "$UC/ztensord.service.d/"

# in_ns CMD...: runs CMD where $BIN is the built ztensord.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && [ ! -e "$BIN" ]; then
    MODE=ns
    in_ns() {
        unshare --mount --propagation private /bin/sh -c '
            mount -t tmpfs -o mode=0755 tmpfs /usr/local/bin && cp "$0" /usr/local/bin/ztensord && exec "$@"
        ' "$ZTENSORD" "$@"
    }
    note "verifying the unit files unchanged, with $BIN from a private mount namespace"
elif [ -x "$BIN" ]; then
    MODE=host
    in_ns() { "$@"; }
    note "verifying the unit files unchanged, against the installed $BIN"
else
    MODE=copy
    in_ns() { "$@"; }
    for d in "$U" "$UD" "$UC"; do sed -i "s|$BIN|$ZTENSORD|g" "$d/ztensord.service"; done
    sed -i "s|$BIN|$ZTENSORD|g" "$UD/ztensord.service.d/uploads.conf" "$UC/ztensord.service.d/cache.conf"
    note "not root: ExecStart= rewritten to $ZTENSORD in copies of the units"
fi

# ---- systemd-analyze verify: exit 0 and not a word
in_ns systemd-analyze verify "$U/ztensord.service" "$U/ztensord.socket" >"$T/verify.out" 2>&1
rc=$?
check_eq "verify ztensord.service ztensord.socket: exit status" "$rc" 0
check_eq "verify ztensord.service ztensord.socket: no warnings" "$(cat "$T/verify.out")" ""
SYSTEMD_UNIT_PATH=$UD: in_ns systemd-analyze verify ztensord.service ztensord.socket >"$T/verify2.out" 2>&1
rc=$?
check_eq "verify with the uploads.conf drop-in: exit status" "$rc" 0
check_eq "verify with the uploads.conf drop-in: no warnings" "$(cat "$T/verify2.out")" ""
SYSTEMD_UNIT_PATH=$UC: in_ns systemd-analyze verify ztensord.service ztensord.socket >"$T/verify4.out" 2>&1
rc=$?
check_eq "verify with the cache.conf drop-in: exit status" "$rc" 0
check_eq "verify with the cache.conf drop-in: no warnings" "$(cat "$T/verify4.out")" ""
# The drop-in is really read: a bad key in it must be reported.
cp -r "$UD" "$T/units-bad"
echo "NoSuchSetting=1" >>"$T/units-bad/ztensord.service.d/uploads.conf"
SYSTEMD_UNIT_PATH=$T/units-bad: in_ns systemd-analyze verify ztensord.service >"$T/verify3.out" 2>&1
check_match "verify reads the drop-in (a bad key in it is reported)" "$(cat "$T/verify3.out")" 'NoSuchSetting'

# ---- systemd-analyze security --offline=yes
exposure() { # OUTFILE -> the overall exposure number
    sed -n 's/.*Overall exposure level for ztensord.service: \([0-9.]*\).*/\1/p' "$1" | head -1
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
in_ns systemd-analyze security --offline=yes "$U/ztensord.service" >"$T/security.out" 2>&1
SCORE=$(exposure "$T/security.out")
note "systemd-analyze security --offline=yes ztensord.service: exposure $SCORE"
if le "$SCORE" "$MAX_EXPOSURE"; then ok "exposure $SCORE <= $MAX_EXPOSURE"; else
    bad "exposure <= $MAX_EXPOSURE" "got '$SCORE'"
    grep '✗' "$T/security.out" | sed 's/^/#   /'
fi
SYSTEMD_UNIT_PATH=$UD: in_ns systemd-analyze security --offline=yes ztensord.service >"$T/security2.out" 2>&1
SCORE2=$(exposure "$T/security2.out")
note "with the uploads.conf drop-in: exposure $SCORE2"
if le "$SCORE2" "$MAX_EXPOSURE"; then ok "exposure with uploads.conf $SCORE2 <= $MAX_EXPOSURE"; else
    bad "exposure with uploads.conf <= $MAX_EXPOSURE" "got '$SCORE2'"
fi

SYSTEMD_UNIT_PATH=$UC: in_ns systemd-analyze security --offline=yes ztensord.service >"$T/security3.out" 2>&1
SCORE3=$(exposure "$T/security3.out")
note "with the cache.conf drop-in: exposure $SCORE3"
if le "$SCORE3" "$MAX_EXPOSURE"; then ok "exposure with cache.conf $SCORE3 <= $MAX_EXPOSURE"; else
    bad "exposure with cache.conf <= $MAX_EXPOSURE" "got '$SCORE3'"
fi
check_eq "cache.conf keeps the main unit's hardening: same exposure" "$SCORE3" "$SCORE"
C=$UNITS/cache.conf
check_match "cache.conf: CacheDirectory=ztensord" "$(cat "$C")" '^CacheDirectory=ztensord$'
check_match "cache.conf: --cache-dir in the cache directory" "$(grep '^ExecStart=.' "$C")" ' --cache-dir %C/ztensord( |$)'
check_match "cache.conf: --upstream" "$(grep '^ExecStart=.' "$C")" ' --upstream https?://'
check_eq "cache.conf sets nothing but these keys (no hardening undone)" \
    "$(grep -E '^[A-Za-z]+=' "$C" | cut -d= -f1 | sort -u | grep -vxE 'Documentation|CacheDirectory|CacheDirectoryMode|ExecStart')" ""

# ---- Documentation= names files that `cmake --install` installs
BUILD=$(cd "$(dirname "$ZTENSORD")/.." && pwd)
if [ -f "$BUILD/CMakeCache.txt" ] && DESTDIR=$T/inst cmake --install "$BUILD" --prefix /usr/local >"$T/install.log" 2>&1; then
    ok "cmake --install $BUILD (DESTDIR, prefix /usr/local)"
    docs=$(grep -h '^Documentation=' "$UNITS"/ztensord.service "$UNITS"/ztensord.socket "$UNITS"/*.conf |
        sed 's/^Documentation=//' | tr ' ' '\n' | sort -u)
    check_ne "the units have Documentation= lines" "$docs" ""
    for d in $docs; do
        case $d in
        file://*) check "Documentation=$d is installed by cmake --install" test -s "$T/inst${d#file://}" ;;
        *) check_match "Documentation=$d is a file:// or https:// URL" "$d" '^https://' ;;
        esac
    done
else
    bad "cmake --install $BUILD" "$(tail -5 "$T/install.log" 2>/dev/null)"
fi

# ---- the settings the documentation promises
S=$UNITS/ztensord.service
has() { grep -Eq "^$2\$" "$S" && ok "$1" || bad "$1" "no line /^$2\$/ in ztensord.service"; }
has "Type=notify" 'Type=notify'
has "WatchdogSec= set" 'WatchdogSec=[0-9]+s?'
has "ExecReload sends SIGHUP" 'ExecReload=/bin/kill -HUP \$MAINPID'
has "NotifyAccess=main" 'NotifyAccess=main'
has "DynamicUser=yes" 'DynamicUser=yes'
has "ProtectSystem=strict" 'ProtectSystem=strict'
has "NoNewPrivileges=yes" 'NoNewPrivileges=yes'
has "PrivateTmp=yes" 'PrivateTmp=yes'
has "RestrictAddressFamilies=" 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX'
has "SystemCallFilter=@system-service" 'SystemCallFilter=@system-service'
has "MemoryDenyWriteExecute=yes" 'MemoryDenyWriteExecute=yes'
has "UMask=0077" 'UMask=0077'
has "CapabilityBoundingSet= empty" 'CapabilityBoundingSet='
check_nomatch "no ReadWritePaths= by default (read-only)" "$(cat "$S")" '^ReadWritePaths='
check_match "socket: ListenStream=" "$(cat "$UNITS/ztensord.socket")" '^ListenStream=127\.0\.0\.1:7070'

# ---- the ExecStart= lines are valid command lines that serve
# execstart FILE: the arguments of the last ExecStart= line.
execstart() { grep '^ExecStart=.' "$1" | tail -1 | sed 's/^ExecStart=[^ ]*//'; }
ROOT=$T/srv-models
ORIGIN=
mkdir -p "$ROOT"
rand "$T/w.raw" 4096
pack "$ROOT/m.zt" w=u8:4096:"$T/w.raw"
run_execstart() { # NAME ARGS
    local name=$1 args=$2 argv
    args=${args//\/srv\/models/$ROOT}
    args=${args//127.0.0.1:7070/127.0.0.1:0}
    args=${args//%S\/ztensord/$ROOT}
    args=${args//%d\/tokens/$T/tokens}
    args=${args//%C\/ztensord/$T/cache}
    args=${args//http:\/\/origin.example:7070/$ORIGIN}
    read -r -a argv <<<"$args"
    note "$name: ztensord ${argv[*]}"
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    "$ZTENSORD" "${argv[@]}" 2>"$D_ERR" &
    D_PID=$!
    local i
    if ! wait_listening "$D_ERR" "$D_PID"; then
        bad "$name: starts" "$(head -c 400 "$D_ERR")"
        D_PID=
        return
    fi
    URL=http://127.0.0.1:$LISTEN_PORT
    for i in $(seq 1 100); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ] && break
        sleep 0.1
    done
    req "$name: serves the root" 200 "$URL/v1/files/m.zt/objects/w/data"
    check_same "$name: component bytes" "$LAST.body" "$T/w.raw"
    [ -n "${EXTRA:-}" ] && eval "$EXTRA"
    stop_daemon
}
run_execstart "ExecStart= of ztensord.service" "$(execstart "$S")"
printf 'write %s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$T/tokens"
chmod 600 "$T/tokens"
run_execstart "ExecStart= of uploads.conf" "$(execstart "$UNITS/uploads.conf")"
check_match "uploads.conf: uploads enabled (no 'uploads disabled')" \
    "$(grep -c 'uploads disabled' "$D_ERR")" '^0$'
check_match "uploads.conf: tokens loaded" "$(cat "$D_ERR")" 'auth: 1 tokens loaded'

# cache.conf's ExecStart=, with an origin on loopback as its upstream
O=$T/origin
mkdir -p "$O"
rand "$T/o.raw" 5000
pack "$O/up.zt" w=u8:5000:"$T/o.raw"
"$ZTENSORD" --root "$O" --listen 127.0.0.1:0 --access-log off 2>"$T/origin.err" &
O_PID=$!
at_exit 'kill -KILL "$O_PID" 2>/dev/null'
if wait_listening "$T/origin.err" "$O_PID"; then ORIGIN=http://127.0.0.1:$LISTEN_PORT; else
    bad "origin starts" "$(head -c 400 "$T/origin.err")"
fi
EXTRA='req "cache.conf: serves the upstream'"'"'s file" 200 "$URL/v1/files/up.zt/objects/w/data"
    check_same "cache.conf: upstream component bytes" "$LAST.body" "$T/o.raw"
    check "cache.conf: the cache directory holds its bytes" test -n "$(find "$T/cache" -type f -size +4k)"'
run_execstart "ExecStart= of cache.conf" "$(execstart "$UNITS/cache.conf")"
EXTRA=

finish
