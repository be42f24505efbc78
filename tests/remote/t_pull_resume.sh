#!/usr/bin/env bash
# zt pull's resume below a component, its Ctrl-C, and its skipping of files
# already complete (issue 12, "Resumable"), against ztensord on 127.0.0.1
# through relay.py, which logs every range asked for:
#   - kill -9 in the middle of a 96 MiB component, once the state file
#     records a prefix of it on disk ("p" records): the resume asks for none
#     of the recorded prefix again (it hashes it from the disk), asks for less
#     than the whole component, and ends byte-exact;
#   - SIGINT stops the pull within seconds with exit status 130, leaves the
#     partial file and its state (no final file), and the same command then
#     finishes it byte-exact without asking again for what was recorded;
#   - a second pull of files already complete fetches no byte of any
#     component (--json "skipped"); after a local write to one of them (its
#     mtime changes) that one is pulled again;
#   - --tensors: kill -9 once some chosen components are kept in
#     NAME.ztsel/, then the same command: the kept components are not asked
#     for again, and the result holds exactly the chosen objects.
. "$(dirname "$0")/lib.sh" "$@"
PC="$PY $(dirname "$0")/pullcheck.py"

root=$T/root
mkdir -p "$root"
MiB=$((1 << 20))
rand "$T/w.raw" $((96 * MiB))
rand "$T/s.raw" 4096
pack "$root/big.zt" w=u8:$((96 * MiB)):"$T/w.raw" s=u8:4096:"$T/s.raw" || rfinish
head -c $((8 * MiB)) "$T/w.raw" >"$T/e.raw"
specs=()
for i in $(seq 1 12); do specs+=("a$i=u8:$((8 * MiB)):$T/e.raw" "b$i=u8:4096:$T/s.raw"); done
pack "$root/sel.zt" "${specs[@]}" || rfinish # 12 chosen objects of 8 MiB, 12 others
"$ZT" info --json "$root/sel.zt" >"$T/sel.json"
rm -f "$T/w.raw" "$T/e.raw"
"$ZT" info --json "$root/big.zt" >"$T/big.json"
start_daemon "$root" || rfinish
start_relay "$PORT" pass || rfinish
src=http://127.0.0.1:$RPORT/v1/files/big.zt
# Small chunks over 2 connections: the component lands over many requests.
opts=(--connections 2 --chunk-size 256K)

# wait_record FILE PATTERN PID: up to 60 s for a line matching PATTERN in the
# state file FILE while PID runs; 0 when one appeared.
wait_record() {
    local i
    for i in $(seq 1 6000); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.01
    done
    return 1
}

note "kill -9 inside a large component, then resume"
rm -rf "$T/o1"
"$ZT" pull --quiet "${opts[@]}" "$src" -o "$T/o1" >/dev/null 2>&1 &
pid=$!
wait_record "$T/o1/big.zt.ztpull" '^p ' $pid
check_eq "the state file records a prefix of the component before the end" "$?" 0
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
check "no final file after kill -9" test ! -e "$T/o1/big.zt"
cp "$T/o1/big.zt.ztpull" "$T/state1"
prefix=$(awk '$1 == "p" && $3 > m + 0 {m = $3} END {print m + 0}' "$T/state1") # one large component
note "recorded prefix: $prefix bytes of $((96 * MiB))"
from=$(wc -l <"$RLOG")
if "$ZT" pull --quiet --json "${opts[@]}" "$src" -o "$T/o1" >"$T/resume1.json" 2>"$T/resume1.err"; then
    ok "resume after kill -9"
else
    bad "resume after kill -9" "$(cat "$T/resume1.err")"
fi
check "byte-exact" cmp -s "$root/big.zt" "$T/o1/big.zt"
check "the recorded prefix is not asked for again" $PC refetch "$T/state1" "$T/big.json" "$RLOG" "$from"
got=$($PC fetched "$T/big.json" "$RLOG" "$from")
note "component bytes asked for by the resume: $got"
check "the resume asks for the component less the prefix ($got <= $((96 * MiB + 4096 - prefix)))" \
    test "$got" -le $((96 * MiB + 4096 - prefix))
check_eq "--json counts the prefix as resumed" "$($PC json "$T/resume1.json" resumed)" "$prefix"

note "SIGINT: exit 130, state kept, the same command finishes"
rm -rf "$T/o2"
"$ZT" pull --quiet "${opts[@]}" "$src" -o "$T/o2" >/dev/null 2>"$T/int.err" &
pid=$!
wait_record "$T/o2/big.zt.ztpull" '^p ' $pid
check_eq "a prefix recorded before SIGINT" "$?" 0
kill -INT $pid 2>/dev/null
rc=
for _ in $(seq 1 1000); do # up to 10 s
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
done
if kill -0 $pid 2>/dev/null; then
    bad "zt pull stops within 10 s of SIGINT"
    kill -9 $pid
fi
wait $pid
rc=$?
check_eq "exit status 130 after SIGINT" "$rc" 130
check_match "it says how to continue" "$(cat "$T/int.err")" 'interrupted.*same command'
check "no final file" test ! -e "$T/o2/big.zt"
check "the partial file and its state are kept" test -f "$T/o2/big.zt.ztpart" -a -f "$T/o2/big.zt.ztpull"
cp "$T/o2/big.zt.ztpull" "$T/state2"
from=$(wc -l <"$RLOG")
pull_ok=0
"$ZT" pull --quiet "${opts[@]}" "$src" -o "$T/o2" 2>"$T/resume2.err" && pull_ok=1
check_eq "the same command finishes" "$pull_ok" 1
check "byte-exact" cmp -s "$root/big.zt" "$T/o2/big.zt"
check "what the state recorded is not asked for again" $PC refetch "$T/state2" "$T/big.json" "$RLOG" "$from"

note "files already complete are not fetched again"
from=$(wc -l <"$RLOG")
"$ZT" pull --quiet --json "${opts[@]}" "$src" -o "$T/o2" >"$T/again.json" 2>&1
check_eq "a second pull of a complete file: skipped" "$($PC json "$T/again.json" skipped)" 1
check_eq "no byte of a component asked for" "$($PC fetched "$T/big.json" "$RLOG" "$from")" 0
check "still byte-exact" cmp -s "$root/big.zt" "$T/o2/big.zt"
touch -d '2001-01-01' "$T/o2/big.zt" # a local write changes the mtime
from=$(wc -l <"$RLOG")
"$ZT" pull --quiet --json "${opts[@]}" "$src" -o "$T/o2" >"$T/again2.json" 2>&1
check_eq "after a local change it is pulled again" "$($PC json "$T/again2.json" skipped)" 0
check_ge "its components asked for again" "$($PC fetched "$T/big.json" "$RLOG" "$from")" $((96 * MiB))
check "byte-exact" cmp -s "$root/big.zt" "$T/o2/big.zt"

note "--tensors: kill -9, then the same command"
sel=http://127.0.0.1:$RPORT/v1/files/sel.zt
rm -rf "$T/o3"
"$ZT" pull --quiet --tensors 'a*' "$sel" -o "$T/o3" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 6000); do # up to 60 s for two kept components
    [ "$(ls "$T/o3/sel.zt.ztsel" 2>/dev/null | grep -c '^[0-9]*$')" -ge 2 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
check "no final file after kill -9" test ! -e "$T/o3/sel.zt"
# The kept components, as "c" records of a state file for pullcheck.py.
{
    printf 'ztpull 1\nsize 0\netag -\nlm -\ncomponents 0\n'
    ls "$T/o3/sel.zt.ztsel" | grep '^[0-9]*$' | sed 's/^/c /'
    echo
} >"$T/state3"
nkept=$(grep -c '^c ' "$T/state3")
check_ge "components kept by the killed run" "$nkept" 2
from=$(wc -l <"$RLOG")
if "$ZT" pull --quiet --json --tensors 'a*' "$sel" -o "$T/o3" >"$T/sel.out" 2>"$T/sel.err"; then
    ok "--tensors pull resumed"
else
    bad "--tensors pull resumed" "$(cat "$T/sel.err")"
fi
check "the kept components are not asked for again" $PC refetch "$T/state3" "$T/sel.json" "$RLOG" "$from"
check_eq "--json counts them as resumed" "$($PC json "$T/sel.out" resumed)" $((nkept * 8 * MiB))
check "a valid file" zverify "$T/o3/sel.zt"
check_eq "exactly the chosen objects" "$("$ZT" info --json "$T/o3/sel.zt" | $PY -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["objects"])))')" \
    "$(printf 'a%s\n' $(seq 1 12) | sort | tr '\n' ' ' | sed 's/ $//')"
check "the kept components are gone once published" test ! -e "$T/o3/sel.zt.ztsel"
for i in 1 5 12; do
    "$ZT" get "$root/sel.zt" "a$i" -o "$T/want.bin" && "$ZT" get "$T/o3/sel.zt" "a$i" -o "$T/got.bin"
    check_eq "a$i: 8 MiB" "$(stat -c %s "$T/got.bin" 2>/dev/null)" $((8 * MiB))
    check "a$i byte-exact" cmp -s "$T/want.bin" "$T/got.bin"
    rm -f "$T/want.bin" "$T/got.bin"
done
rfinish
