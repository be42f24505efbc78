#!/usr/bin/env bash
# zt pull of a ztensord prefix whose directory has plain files (config.json,
# tokenizer.json, sub/generation_config.json) beside a .zt file: every file is
# written byte-exact, the plain ones from /raw checked against the sha256 the
# listing's ETag names; a second pull fetches none of them again (skipped);
# a plain file whose bytes are flipped on the way (relay.py) is never
# published, nor its .ztpart left; from a server that has not hashed its
# plain files (verify_digests off) they are written unchecked, and zt says so.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root/m/sub"
rand "$T/w.bin" 100000
pack "$root/m/model.zt" w=u8:100000:"$T/w.bin" || finish
printf '{"architectures": ["Tiny"], "hidden_size": 64}\n' >"$root/m/config.json"
text "$root/m/tokenizer.json" 300000
printf '{"max_new_tokens": 16}\n' >"$root/m/sub/generation_config.json"
printf '# outside the prefix\n' >"$root/README.md"
PLAIN="config.json tokenizer.json sub/generation_config.json"
PC=$REMOTE_DIR/pullcheck.py

start_daemon "$root" || finish
# the plain files hashed by the server: their listed ETag is "sha256:<hex>"
for i in $(seq 1 300); do
    n=$(curl -s --max-time 5 "$URL/v1/files?prefix=m/" | grep -o '"etag":"\\"sha256:' | wc -l)
    [ "$n" -ge 3 ] && break
    sleep 0.1
done
check_ge "the server hashed its plain files" "$n" 3

rc=0
"$ZT" pull --json "$URL/v1/files/m/" -o "$T/out" >"$T/p1.json" 2>"$T/p1.err" || rc=$?
check_eq "pull of m/: exit 0 ($(head -c 300 "$T/p1.err"))" "$rc" 0
check_eq "pull of m/: 4 files" "$($PY "$PC" json "$T/p1.json" files)" 4
check_same "pulled model.zt" "$T/out/model.zt" "$root/m/model.zt"
for f in $PLAIN; do
    check_same "pulled $f" "$T/out/$f" "$root/m/$f"
done
check_eq "nothing else written (no README.md, no .ztpart)" \
    "$(cd "$T/out" && find . -path ./.ztpull-record -prune -o -type f -print | sort | tr '\n' ' ')" \
    "./config.json ./model.zt ./sub/generation_config.json ./tokenizer.json "
check_nomatch "no 'unchecked' line" "$(cat "$T/p1.err")" 'unchecked'

# a second pull: every file already complete, none fetched again (the plain ones known by
# user.ztensor.pull, or, on a file system without user xattrs, by their sha256 hashed again)
start_relay "${URL##*:}" pass || finish
rc=0
"$ZT" pull --json "http://127.0.0.1:$RPORT/v1/files/m/" -o "$T/out" >"$T/p2.json" 2>"$T/p2.err" || rc=$?
check_eq "second pull: exit 0 ($(head -c 300 "$T/p2.err"))" "$rc" 0
if getfattr -n user.ztensor.pull "$T/out/model.zt" >/dev/null 2>&1 ||
    $PY -c 'import os,sys; os.getxattr(sys.argv[1], "user.ztensor.pull")' "$T/out/model.zt" 2>/dev/null; then
    check_eq "second pull: 4 files skipped" "$($PY "$PC" json "$T/p2.json" skipped)" 4
else
    check_eq "second pull: the 3 plain files skipped (no user xattrs here)" \
        "$($PY "$PC" json "$T/p2.json" skipped)" 3
fi
check_eq "second pull: no /raw of a plain file asked for" "$(grep -c 'GET /v1/files/m/.*json/raw' "$RLOG")" 0
for f in $PLAIN; do
    check_same "second pull: $f still the file" "$T/out/$f" "$root/m/$f"
done
stop_relay
# a plain file changed locally (same size; a NUL, which the base64 text has none of): fetched
# again, byte-exact
printf '\0' | dd of="$T/out/tokenizer.json" bs=1 seek=100 conv=notrunc status=none
touch -d '2001-01-01' "$T/out/tokenizer.json"
check "the local change is made" test "$(cmp -s "$T/out/tokenizer.json" "$root/m/tokenizer.json"; echo $?)" = 1
rc=0
"$ZT" pull --quiet "$URL/v1/files/m/" -o "$T/out" 2>"$T/p2b.err" || rc=$?
check_eq "after a local change: exit 0" "$rc" 0
check_same "after a local change: tokenizer.json pulled again" "$T/out/tokenizer.json" "$root/m/tokenizer.json"

# a byte flipped on the way: the ETag names the sha256, the bytes do not match
start_relay "${URL##*:}" flip 0 || finish
rc=0
"$ZT" pull "http://127.0.0.1:$RPORT/v1/files/m/tokenizer.json" -o "$T/flip" >"$T/f.out" 2>&1 || rc=$?
check "flipped: the pull fails" test "$rc" -ne 0
check_match "flipped: it says the digest does not match" "$(cat "$T/f.out")" 'sha256'
check_eq "flipped: nothing written" "$(find "$T/flip" -type f 2>/dev/null | wc -l)" 0
stop_relay

# a server that has not hashed them: written unchecked, and said
stop_daemon
start_daemon "$root" --no-verify-digests || finish
rc=0
"$ZT" pull "$URL/v1/files/m/" -o "$T/out2" >"$T/p3.out" 2>&1 || rc=$?
check_eq "not hashed: exit 0" "$rc" 0
for f in $PLAIN; do
    check_same "not hashed: pulled $f" "$T/out2/$f" "$root/m/$f"
done
check_match "not hashed: zt says config.json was written unchecked" "$(cat "$T/p3.out")" \
    'config.json: written unchecked'
rfinish
