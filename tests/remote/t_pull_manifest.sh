#!/usr/bin/env bash
# zt pull checks the header, manifest and footer it writes against the bytes
# the file was opened from, by a sha256 taken at the start of the pull (the
# pull no longer keeps those bytes: d.zt's manifest is 11 MB). A file whose
# manifest is most of its bytes and whose components carry no digest is
# pulled through relay.py, which flips the middle byte of every body after
# the open: the byte lands in the manifest's region on every try, so the pull
# must fail with ZT_E_DIGEST_MISMATCH naming the manifest and publish
# nothing (before, the pull compared with the bytes it kept from the open;
# the check must not have been lost with them). Through the relay without
# flips, the same pull is byte-exact.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
head -c 1 /dev/zero >"$T/one.raw"
long=$(printf 'n%.0s' $(seq 1 200))
specs=()
for i in $(seq 1 300); do specs+=("$long$i=u8:1:$T/one.raw"); done
pack "$root/m.zt" --digest none "${specs[@]}" || rfinish
size=$(stat -c %s "$root/m.zt")
# The flipped byte must land past every component (in the manifest).
last_end=$("$ZT" info --json "$root/m.zt" | $PY -c '
import json, sys
d = json.load(sys.stdin)["objects"]
print(max(c["offset"] + c["length"] for o in d.values() for c in o["components"].values()))')
check "the middle byte ($((size / 2)) of $size) lies past the last component ($last_end)" \
    test "$last_end" -lt $((size / 2))
start_daemon "$root" || rfinish

note "through the relay without flips: byte-exact"
start_relay "$PORT" pass
"$ZT" pull --quiet "http://127.0.0.1:$RPORT/v1/files/m.zt" -o "$T/o1" 2>"$T/pull.err"
check_eq "exit status 0 ($(head -c 300 "$T/pull.err"))" "$?" 0
check "byte-exact" cmp -s "$T/o1/m.zt" "$root/m.zt"
whole="bytes=0-$((size - 1))"
# The open's requests, then the whole file in each request (the bytes
# between components, not zeros here, are fetched a second time): the middle
# of a body is the middle of the file.
opens=$(grep -vc "$whole" "$RLOG")
check_match "after the open's $opens requests, the whole file in each" \
    "$(grep -c "$whole" "$RLOG") $(tail -n +$((opens + 1)) "$RLOG" | grep -vc "$whole")" '^[1-9] 0$'

note "the manifest's region flipped on every try: a clear failure, nothing published"
start_relay "$PORT" flip "$opens"
"$ZT" pull --quiet "http://127.0.0.1:$RPORT/v1/files/m.zt" -o "$T/o2" 2>"$T/pull.err"
check_eq "exit status 1" "$?" 1
check_match "the message says the manifest differs" "$(cat "$T/pull.err")" \
    'm\.zt: ZT_E_DIGEST_MISMATCH: .*header, manifest or footer written differ'
check "no final file" test ! -e "$T/o2/m.zt"
check_match "the file was fetched again ($(grep -c "$whole" "$RLOG") times in all)" \
    "$(grep -c "$whole" "$RLOG")" '^[2-9]'
rfinish
