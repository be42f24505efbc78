#!/usr/bin/env bash
# Never mix versions: a file replaced at the origin between zt_remote_open
# and the first read is ZT_E_CHANGED, whichever way the server learns it:
# If-Match (ztensord, nginx: 412), If-Range alone (a server or proxy that
# drops If-Match: 200 with another ETag), neither (206 with another ETag),
# Last-Modified and size only (no ETag: If-Unmodified-Since), or a file
# deleted (404). The same reads without a replacement succeed.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root" >/dev/null || bad "make-demo.sh"
cp "$root/tiny.zt" "$T/tiny.orig"
head -c 16384 "$T/tiny.orig" >"$T/other.raw"
pack "$T/other.zt" "embed.weight=f32:64x64:$T/other.raw"
start_daemon "$root" || rfinish
have_nginx=0
start_nginx "$root" && have_nginx=1

raw_etag() {
    curl -s -D - -o /dev/null "$URL/v1/files/tiny.zt/raw" | tr -d '\r' | sed -n 's/^ETag: //Ip'
}
# fresh: the original tiny.zt back in place, with an mtime a minute old (so
# that a replacement always has another Last-Modified), once ztensord serves
# it (its ETag changes with every new inode; 5 s at most).
fresh() {
    local before i
    before=$(raw_etag)
    cp "$T/tiny.orig" "$root/.tiny.tmp" && touch -d '-1 min' "$root/.tiny.tmp" &&
        mv "$root/.tiny.tmp" "$root/tiny.zt"
    for i in $(seq 1 100); do
        [ "$(raw_etag)" != "$before" ] && cmp -s <(curl -s "$URL/v1/files/tiny.zt/raw") "$T/tiny.orig" &&
            return 0
        sleep 0.05
    done
    bad "ztensord serves the restored tiny.zt"
}
# The command remote_check runs between its open and its reads: replace
# tiny.zt by another file (other size, new mtime) and wait until ztensord has
# rescanned it.
cat >"$T/replace.sh" <<EOF
#!/usr/bin/env bash
cp "$T/other.zt" "$root/.tiny.new" && mv "$root/.tiny.new" "$root/tiny.zt"
old=\$(cat "$T/etag.before")
for i in \$(seq 1 100); do
    now=\$(curl -s -D - -o /dev/null "$URL/v1/files/tiny.zt/raw" | tr -d '\r' | sed -n 's/^ETag: //Ip')
    [ -n "\$now" ] && [ "\$now" != "\$old" ] && exit 0
    sleep 0.05
done
exit 1
EOF
chmod +x "$T/replace.sh"
save_etag() {
    curl -s -D - -o /dev/null "$URL/v1/files/tiny.zt/raw" | tr -d '\r' | sed -n 's/^ETag: //Ip' >"$T/etag.before"
}

note "ztensord"
fresh
rcheck "no replacement: the reads succeed" --after-open true "$URL/v1/files/tiny.zt" "$T/tiny.orig"
fresh
save_etag
rexpect "replaced after the open: ZT_E_CHANGED" ZT_E_CHANGED --after-open "$T/replace.sh" \
    "$URL/v1/files/tiny.zt" "$T/tiny.orig"
check_match "412, the ETag opened and the URL in the message" "$RMSG" \
    "ZT_E_CHANGED: 412: the file is no longer the version opened \\($(cat "$T/etag.before")\\).*precondition_failed.*\\[$URL/v1/files/tiny.zt/raw\\]"
fresh
save_etag
rexpect "deleted after the open: ZT_E_CHANGED" ZT_E_CHANGED \
    --after-open "rm $root/tiny.zt && sleep 0.5" "$URL/v1/files/tiny.zt" "$T/tiny.orig"
check_match "404 in the message" "$RMSG" '404: the file opened is gone'

note "through a relay that drops the conditionals"
fresh
save_etag
start_relay "$PORT" no-if-match
rexpect "If-Match dropped: If-Range makes the server send 200, which is ZT_E_CHANGED" \
    ZT_E_CHANGED --after-open "$T/replace.sh" "http://127.0.0.1:$RPORT/v1/files/tiny.zt" \
    "$T/tiny.orig"
check_match "the message says the file was replaced" "$RMSG" 'replaced: 200 with ETag'
check_match "the server did answer 200" "$(tail -1 "$RLOG")" '-> 200$'
fresh
save_etag
start_relay "$PORT" no-conditionals
rexpect "every conditional dropped: the 206's size/ETag says ZT_E_CHANGED" ZT_E_CHANGED \
    --after-open "$T/replace.sh" "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$T/tiny.orig"
check_match "the message says what changed" "$RMSG" 'the file is now [0-9]+ bytes, it was 25553|replaced'
fresh
save_etag
start_relay "$PORT" no-etag
rcheck "no ETag at all (Last-Modified pinned): the reads succeed" \
    "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$T/tiny.orig"
check_match "and carry If-Unmodified-Since and If-Range with the date" "$(tail -1 "$RLOG")" \
    '\| - \| [A-Z][a-z][a-z], [0-9]{2} [A-Z][a-z][a-z] [0-9]{4} [0-9:]{8} GMT \| [A-Z][a-z][a-z], '
fresh
save_etag
start_relay "$PORT" no-etag
rexpect "no ETag, replaced after the open: ZT_E_CHANGED" ZT_E_CHANGED \
    --after-open "$T/replace.sh" "http://127.0.0.1:$RPORT/v1/files/tiny.zt" "$T/tiny.orig"
stop_relay

if [ $have_nginx = 1 ]; then
    note "nginx"
    nurl="http://127.0.0.1:$NPORT/tiny.zt"
    fresh
    rcheck "no replacement: the reads succeed" --window 64 "$nurl" "$T/tiny.orig"
    fresh
    rexpect "replaced (other size) after the open: ZT_E_CHANGED" ZT_E_CHANGED --window 64 \
        --after-open "cp $T/other.zt $root/.n && mv $root/.n $root/tiny.zt" "$nurl" "$T/tiny.orig"
    check_match "412 in the message" "$RMSG" '412: the file is no longer the version opened'
    fresh
    rexpect "replaced by a copy with the same size and another mtime: ZT_E_CHANGED" ZT_E_CHANGED \
        --window 64 --after-open "cp $T/tiny.orig $root/.n && mv $root/.n $root/tiny.zt" \
        "$nurl" "$T/tiny.orig"
fi
rfinish
