#!/usr/bin/env bash
# zt_remote_read_stream and zt_remote_read_spans (what ztensord --upstream fills its
# cache with): the whole file streamed in order and byte-exact, and spans at its start,
# middle and end, from ztensord and from nginx, in a session other than the file's; a
# stream cut halfway by relay.py resumes from its last byte and still ends byte-exact; a
# file replaced between the open and the stream is ZT_E_CHANGED, never a mix.
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$T/root"
rand "$T/w.bin" $((5 << 20))
rand "$T/s.bin" 1000
rand "$T/s2.bin" 1000
pack "$T/root/m.zt" w=u8:$((5 << 20)):"$T/w.bin" s=u8:1000:"$T/s.bin" || rfinish
cp "$T/root/m.zt" "$T/m.zt"
start_daemon "$T/root" || rfinish
rcheck "ztensord: stream and spans" --spans --many-only "$URL/v1/files/m.zt" "$T/m.zt"

# the stream's request is cut halfway: resumed with a Range from its last byte
# (requests: the open's two, zt_remote_read_many's one, then the stream)
start_relay "$PORT" cut 3 || rfinish
rcheck "a cut stream resumes" --spans --many-only --backoff 0.01 \
    "http://127.0.0.1:$RPORT/v1/files/m.zt" "$T/m.zt"
last=$(($(stat -c %s "$T/m.zt") - 1))
check_match "the relay cut the stream's request, which resumed from its last byte" \
    "$(sort -n "$RLOG" | sed -n '4,5p' | tr '\n' ' ')" "^4 GET [^|]*\| bytes=0-$last .*5 GET [^|]*\| bytes=[1-9][0-9]*-$last "
stop_relay

# replaced after the open: the pinned validator no longer holds
pack "$T/m2.zt" w=u8:$((5 << 20)):"$T/w.bin" s=u8:1000:"$T/s2.bin" || rfinish
rexpect "replaced after the open: ZT_E_CHANGED" ZT_E_CHANGED --spans --many-only \
    --after-open "mv $T/m2.zt $T/root/m.zt; sleep 0.5" "$URL/v1/files/m.zt" "$T/m.zt"

if start_nginx "$T/root"; then
    cp "$T/root/m.zt" "$T/m3.zt"
    rcheck "nginx: stream and spans" --spans --many-only --plain \
        "http://127.0.0.1:$NPORT/m.zt" "$T/m3.zt"
fi
rfinish
