#!/usr/bin/env bash
# zt pull skips by content, not identity (issue 26 section 3), against real
# ztensord origins on 127.0.0.1 through relay.py, whose log names every range
# asked for: files pulled complete, then
#   - a `touch` of every file at the origin (new Last-Modified and ETag):
#     a second pull fetches no byte of any component and skips every file;
#   - a copy of the root served by a second ztensord (other inodes, other
#     mtimes, other ETags): the same;
#   - a file changed at that origin IS fetched again, byte-exact;
#   - a finished --tensors selection is skipped on a re-run with the same
#     selection (even after a touch at the origin), and a different
#     selection is written.
. "$(dirname "$0")/lib.sh" "$@"
PC="$PY $(dirname "$0")/pullcheck.py"

root=$T/root
mkdir -p "$root"
MiB=$((1 << 20))
rand "$T/w.raw" $((4 * MiB))
rand "$T/s.raw" 4096
rand "$T/w2.raw" $((2 * MiB))
pack "$root/m.zt" w=u8:$((4 * MiB)):"$T/w.raw" s=u8:4096:"$T/s.raw" || rfinish
pack "$root/v2.zt" --format v2 w=u8:$((2 * MiB)):"$T/w2.raw" || rfinish
pack "$root/sel.zt" a=u8:$((2 * MiB)):"$T/w2.raw" b=u8:4096:"$T/s.raw" || rfinish
echo '{"model_type": "test"}' >"$root/config.json"
for f in m v2 sel; do "$ZT" info --json "$root/$f.zt" >"$T/$f.json"; done
WAIT_VERIFIED=1 start_daemon "$root" || rfinish
start_relay "$PORT" pass || rfinish
src=http://127.0.0.1:$RPORT/v1/files/

# comp_bytes FROM: bytes of components of the three files asked for after
# line FROM of the relay's log.
comp_bytes() {
    local f s=0
    for f in m v2 sel; do s=$((s + $($PC fetched "$T/$f.json" "$RLOG" "$1"))); done
    echo $s
}
# touch_origin ROOT: touch every file, then wait (up to 30 s) until the
# origin serves m.zt with another ETag and config.json with its new
# Last-Modified and a sha256 ETag (hashed again).
touch_origin() {
    local before lm i
    before=$(curl -sI "$URL/v1/files/m.zt/raw" | grep -i '^etag')
    lm=$(curl -sI "$URL/v1/files/config.json/raw" | grep -i '^last-modified')
    touch -d '+1 minute' "$1"/*
    for i in $(seq 1 300); do
        c=$(curl -sI "$URL/v1/files/config.json/raw")
        [ "$(curl -sI "$URL/v1/files/m.zt/raw" | grep -i '^etag')" != "$before" ] &&
            ! grep -qi "^$lm" <<<"$c" && grep -qi '^etag: "sha256:' <<<"$c" && break
        sleep 0.1
    done
    wait_verified
}

note "first pull"
if "$ZT" pull --quiet --json "$src" -o "$T/o" >"$T/p1.json" 2>"$T/p1.err"; then
    ok "first pull"
else
    bad "first pull" "$(cat "$T/p1.err")"
fi
for f in m.zt v2.zt sel.zt config.json; do check "$f byte-exact" cmp -s "$root/$f" "$T/o/$f"; done

note "touch at the origin, then pull again"
e1=$(curl -sI "$URL/v1/files/m.zt/raw" | grep -i '^etag')
touch_origin "$root"
e2=$(curl -sI "$URL/v1/files/m.zt/raw" | grep -i '^etag')
check "the origin's ETag changed with the touch ($e1 -> $e2)" test "$e1" != "$e2"
from=$(wc -l <"$RLOG")
"$ZT" pull --quiet --json "$src" -o "$T/o" >"$T/p2.json" 2>"$T/p2.err"
check_eq "after a touch at the origin: exit 0" "$?" 0
check_eq "every file skipped" "$($PC json "$T/p2.json" skipped)" 4
check_eq "no byte of a component asked for" "$(comp_bytes "$from")" 0
check_eq "--json: 0 bytes fetched" "$($PC json "$T/p2.json" fetched)" 0

note "a second replica (a copy of the root: other inodes, mtimes, ETags)"
cp -r "$root" "$T/root2"
touch -d '+2 minutes' "$T/root2"/*
stop_relay
WAIT_VERIFIED=1 start_daemon "$T/root2" || rfinish
start_relay "$PORT" pass || rfinish
src=http://127.0.0.1:$RPORT/v1/files/
from=$(wc -l <"$RLOG")
"$ZT" pull --quiet --json "$src" -o "$T/o" >"$T/p3.json" 2>"$T/p3.err"
check_eq "from the second replica: exit 0" "$?" 0
check_eq "every file skipped" "$($PC json "$T/p3.json" skipped)" 4
check_eq "no byte of a component asked for" "$(comp_bytes "$from")" 0

note "a file changed at the origin is fetched again"
rand "$T/w3.raw" $((4 * MiB))
pack "$T/m3.zt" w=u8:$((4 * MiB)):"$T/w3.raw" s=u8:4096:"$T/s.raw" || rfinish
mv "$T/m3.zt" "$T/root2/m.zt"
"$ZT" info --json "$T/root2/m.zt" >"$T/m.json"
for i in $(seq 1 300); do
    cmp -s <(curl -s "$URL/v1/files/m.zt/raw") "$T/root2/m.zt" && break
    sleep 0.1
done
wait_verified
from=$(wc -l <"$RLOG")
"$ZT" pull --quiet --json "$src" -o "$T/o" >"$T/p4.json" 2>"$T/p4.err"
check_eq "after a change: exit 0" "$?" 0
check_eq "the three others skipped" "$($PC json "$T/p4.json" skipped)" 3
check "the changed file is byte-exact" cmp -s "$T/root2/m.zt" "$T/o/m.zt"
check_ge "its components asked for" "$($PC fetched "$T/m.json" "$RLOG" "$from")" $((4 * MiB))

note "--tensors: a finished selection is skipped on a re-run"
sel=$src/sel.zt
sel=${sel/files\/\//files/}
"$ZT" pull --quiet --json --tensors a "$sel" -o "$T/s" >"$T/s1.json" 2>"$T/s1.err"
check_eq "selection: exit 0" "$?" 0
check_eq "selection: not skipped the first time" "$($PC json "$T/s1.json" skipped)" 0
touch_origin "$T/root2"
from=$(wc -l <"$RLOG")
"$ZT" pull --quiet --json --tensors a "$sel" -o "$T/s" >"$T/s2.json" 2>"$T/s2.err"
check_eq "the same selection again: exit 0" "$?" 0
check_eq "the same selection again (after a touch): skipped" "$($PC json "$T/s2.json" skipped)" 1
check_eq "no byte of a component asked for" "$($PC fetched "$T/sel.json" "$RLOG" "$from")" 0
"$ZT" pull --quiet --json --tensors b "$sel" -o "$T/s" >"$T/s3.json" 2>"$T/s3.err"
check_eq "another selection is written" "$($PC json "$T/s3.json" skipped)" 0
check_eq "it holds b only" "$("$ZT" info --json "$T/s/sel.zt" | $PY -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["objects"])))')" b
rfinish
