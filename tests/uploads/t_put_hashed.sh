#!/bin/bash
# Whole-file PUTs whose first component is hashed as the body arrives (store/body_hash.c):
# the component at byte 64 is verified from the running SHA-256's state (a checkpoint
# every MiB, or where it stopped) plus the rest re-read, so its digest is still checked
# exactly: a byte flipped anywhere in it (before, on or after a MiB boundary, in the last
# bytes) is 422 digest_mismatch, and the other components are verified as before. The
# daemon's debug line says how many components were verified that way. (How far the chain
# got before the body ended depends on the machine's load; both ways end here.)
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
M=$((1 << 20))
rand "$T/big.raw" $((2 * M + 123)) # two checkpoints, then a 123-byte tail
rand "$T/even.raw" $((2 * M))      # ends on a checkpoint: no tail at all
rand "$T/small.raw" 5000           # before the first checkpoint: all tail
pack "$T/big.zt" w=u8:$((2 * M + 123)):"$T/big.raw"
pack "$T/even.zt" w=u8:$((2 * M)):"$T/even.raw"
pack "$T/small.zt" w=u8:5000:"$T/small.raw"
head -c $((M + 123)) "$T/big.raw" >"$T/a.raw"
pack "$T/two.zt" a=u8:$((M + 123)):"$T/a.raw" b=u8:5000:"$T/small.raw"

start_daemon "$R" "${OPEN[@]}" --log-level debug || finish

# hashed_count NAME: the count in the last "PUT NAME: ..." debug line (waits up to 2 s)
hashed_count() {
    local i line=
    for i in $(seq 1 20); do
        line=$(grep -a "PUT $1: " "$D_ERR" | tail -1)
        [ -n "$line" ] && break
        sleep 0.1
    done
    sed -n 's/.*MiB hashed as the body arrived, \([0-9]*\) components hashed so.*/\1/p' <<<"$line"
}
# flip FILE OFFSET: a copy of FILE in $T/flip.zt with the byte at OFFSET changed
flip() {
    cp "$1" "$T/flip.zt"
    local b
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf '%03o' $(((b + 1) % 256)))" | dd of="$T/flip.zt" bs=1 seek="$2" conv=notrunc status=none
}

for f in big even small two; do
    put "$f.zt" "$T/$f.zt"
    check_code "PUT $f.zt: 201" 201
    check_same "PUT $f.zt: published bytes" "$R/$f.zt" "$T/$f.zt"
    check_eq "PUT $f.zt: first component hashed as the body arrived" "$(hashed_count "$f.zt")" 1
done
req "GET big.zt's component" 200 "$URL/v1/files/big.zt/objects/w/data"
check_same "GET big.zt's component: bytes" "$LAST.body" "$T/big.raw"

# The component starts at byte 64: offsets in its checkpointed part and in its tail.
for off in 64 $((64 + M + 7)) $((64 + 2 * M + 100)); do
    flip "$T/big.zt" "$off"
    put "bad$off.zt" "$T/flip.zt"
    check_code "byte $off flipped: 422" 422
    check_errbody "byte $off flipped" digest_mismatch
    check_eq "byte $off flipped: found through the running hash" "$(hashed_count "bad$off.zt")" 1
    check_eq "byte $off flipped: nothing published" "$(ls "$R" | grep -c "^bad")" 0
done
flip "$T/even.zt" $((64 + 2 * M - 1))
put "badeven.zt" "$T/flip.zt"
check_code "last byte of a 2 MiB component flipped: 422" 422
check_errbody "last byte of a 2 MiB component flipped" digest_mismatch

# The second component of two.zt is verified by re-reading, as before.
off=$(grep -ao '"offset": *[0-9]*' <("$ZT" info --json "$T/two.zt" 2>/dev/null) | sed -n '2s/[^0-9]//gp')
check_match "two.zt: the second component's offset" "$off" '^[0-9]+$'
flip "$T/two.zt" $((off + 100))
put "badtwo.zt" "$T/flip.zt"
check_code "second component flipped: 422" 422
check_errbody "second component flipped" digest_mismatch
check_staging_empty "staging empty" "$R"
finish
