#!/usr/bin/env bash
# zt pull into an output directory where someone planted symbolic links
# (issue 27, finding 1): a pull often runs as root in an init container on a
# shared volume. Against ztensord on 127.0.0.1, each form must fail with exit
# status 3 and a message naming the link, and leave everything outside the
# output directory byte-for-byte as it was:
#   - DIR/m1.zt.ztpull -> a victim file (the state file written through it);
#   - DIR/ok.zt.ztpart -> ../victim (the model written through it, then the
#     link itself published);
#   - DIR/sub -> ../outside, with a listed name p/sub/x.zt (x.zt written
#     outside);
#   - DIR/m1.zt -> a file outside that carries the "complete" extended
#     attribute of an earlier pull but other bytes (the old getxattr followed
#     the link and said "already complete", exit 0, on the wrong bytes);
#   - --tensors: DIR/m1.zt.ztsel -> ../outside (the kept components written
#     there).
# And what stays allowed: DIR itself may be a link the user gave.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root/p/sub"
rand "$T/a.raw" 300000
rand "$T/b.raw" 5000
pack "$root/m1.zt" a=u8:300000:"$T/a.raw" b=u8:5000:"$T/b.raw" || rfinish
cp "$root/m1.zt" "$root/ok.zt"
cp "$root/m1.zt" "$root/p/sub/x.zt"
start_daemon "$root" || rfinish
F=$URL/v1/files

rand "$T/victim" 4096
cp "$T/victim" "$T/victim.orig"
mkdir -p "$T/outside"
rand "$T/outside/keep" 100
state_of() { (cd "$1" && find . -printf '%y %p %l %s\n' | sort && find . -type f -exec sha256sum {} + | sort); }
OUTSIDE=$(state_of "$T/outside")

# pull_fails NAME WANT_RE ZT-ARGS...: zt pull exits 3 and its stderr matches WANT_RE.
pull_fails() {
    local name=$1 want=$2 rc=0
    shift 2
    "$ZT" pull --quiet "$@" >"$T/out" 2>"$T/err" || rc=$?
    check_eq "$name: exit status 3" "$rc" 3
    check_match "$name: the message names the link" "$(cat "$T/err")" "$want"
}
victim_intact() {
    check_same "$1: the victim outside DIR is unchanged" "$T/victim" "$T/victim.orig"
    check_eq "$1: the directory outside DIR is unchanged" "$(state_of "$T/outside")" "$OUTSIDE"
}

note "DIR/m1.zt.ztpull -> victim"
mkdir -p "$T/o1"
ln -s "$T/victim" "$T/o1/m1.zt.ztpull"
pull_fails "state link" 'm1\.zt\.ztpull: it is a symbolic link \(not followed\)' "$F/m1.zt" -o "$T/o1"
victim_intact "state link"
check "state link: the link is left as it was" test -L "$T/o1/m1.zt.ztpull"
check "state link: nothing published" test ! -e "$T/o1/m1.zt"

note "DIR/ok.zt.ztpart -> ../victim"
mkdir -p "$T/o2"
ln -s ../victim "$T/o2/ok.zt.ztpart"
pull_fails "part link" 'ok\.zt\.ztpart: it is a symbolic link \(not followed\)' "$F/ok.zt" -o "$T/o2"
victim_intact "part link"
check "part link: nothing published" test ! -e "$T/o2/ok.zt"

note "DIR/sub -> ../outside, listed name p/sub/x.zt"
mkdir -p "$T/o3"
ln -s ../outside "$T/o3/sub"
pull_fails "directory link" "o3/sub: it is a symbolic link \\(not followed" "$F/p/" -o "$T/o3"
victim_intact "directory link"
check "directory link: no x.zt outside" test ! -e "$T/outside/x.zt"

note "DIR/m1.zt -> a file outside marked complete by an earlier pull"
mkdir -p "$T/elsewhere"
if "$ZT" pull --quiet "$F/m1.zt" -o "$T/elsewhere" 2>"$T/err" &&
    $PY -c 'import os,sys; os.getxattr(sys.argv[1], "user.ztensor.pull")' "$T/elsewhere/m1.zt" 2>/dev/null; then
    # Other bytes, same size and mtime: the mark still matches them.
    touch -r "$T/elsewhere/m1.zt" "$T/mtime.ref"
    flip_byte "$T/elsewhere/m1.zt" 1000
    touch -r "$T/mtime.ref" "$T/elsewhere/m1.zt"
    cp -p "$T/elsewhere/m1.zt" "$T/elsewhere.orig"
    mkdir -p "$T/o4"
    ln -s ../elsewhere/m1.zt "$T/o4/m1.zt"
    pull_fails "complete-mark link" 'm1\.zt: it is a symbolic link \(not followed\)' "$F/m1.zt" -o "$T/o4"
    check_same "complete-mark link: the file outside is unchanged" "$T/elsewhere/m1.zt" "$T/elsewhere.orig"
else
    skip "complete-mark link" "no user extended attributes here: $(cat "$T/err")"
fi

note "--tensors: DIR/m1.zt.ztsel -> ../outside"
mkdir -p "$T/o5"
ln -s ../outside "$T/o5/m1.zt.ztsel"
pull_fails "--tensors: kept-components link" 'm1\.zt\.ztsel: it is a symbolic link \(not followed\)' \
    --tensors 'a' "$F/m1.zt" -o "$T/o5"
victim_intact "--tensors: kept-components link"
check "--tensors: nothing published" test ! -e "$T/o5/m1.zt"

note "--tensors: DIR/sub -> ../outside"
mkdir -p "$T/o6"
ln -s ../outside "$T/o6/sub"
pull_fails "--tensors: directory link" "o6/sub: it is a symbolic link \\(not followed" \
    --tensors 'a' "$F/p/" -o "$T/o6"
victim_intact "--tensors: directory link"

note "DIR itself a link the user gave: allowed"
mkdir -p "$T/real"
ln -s real "$T/o7"
if "$ZT" pull --quiet "$F/p/" -o "$T/o7" 2>"$T/err"; then ok "pull into a linked DIR"; else bad "pull into a linked DIR" "$(cat "$T/err")"; fi
check_same "pull into a linked DIR: byte-exact" "$T/real/sub/x.zt" "$root/p/sub/x.zt"
if "$ZT" pull --quiet --tensors 'b' "$F/m1.zt" -o "$T/o7" 2>"$T/err"; then ok "--tensors into a linked DIR"; else bad "--tensors into a linked DIR" "$(cat "$T/err")"; fi
check "--tensors into a linked DIR: a valid file" zverify "$T/real/m1.zt"
check_eq "--tensors: no temporary file left" "$(ls -A "$T/real" | grep -c tmp)" 0
victim_intact "the allowed pulls"

rfinish
