#!/usr/bin/env bash
# zt pull (issue 12 part 2) against real origins on 127.0.0.1: ztensord (file
# URLs and prefixes) and nginx (plain file URLs), directly and through
# relay.py. Byte-exact pulls of the demo files and the corpus's valid files;
# a faulty path (cut, stalled, 503, flipped bytes) that still ends byte-exact
# with no flipped byte landing; a byte flipped on every try fails naming the
# object and component, and publishes nothing; kill -9 at 12 random points,
# each followed by a resume, ends byte-exact without fetching a verified
# component again; a file replaced mid-pull (by rename, in place) ends as one
# whole version; a full disk is a clear error that leaves only the partial
# file and its state.
. "$(dirname "$0")/lib.sh" "$@"
PC="$PY $(dirname "$0")/pullcheck.py"

root=$T/root
mkdir -p "$root/demo" "$root/corpus"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root/demo" >/dev/null || bad "make-demo.sh"
corpus=${ZT_CORPUS_DIR:-}/accept
if [ -d "$corpus" ]; then
    cp "$corpus"/*.zt "$root/corpus/"
else
    skip "corpus files" "ZT_CORPUS_DIR not set (run ctest: the corpus_generate fixture makes it)"
fi
mkdir -p "$root/nd" # files without digests
"$ZT" convert "$root/demo/tiny.zt" -o "$root/nd/tiny.safetensors" >/dev/null 2>&1 ||
    bad "zt convert to safetensors"
# Components from 100 bytes to 6 MiB, with gaps of padding between them.
rand "$T/a.raw" $((6 * 1024 * 1024 + 123))
rand "$T/b.raw" $((3 * 1024 * 1024))
head -c 100 "$T/a.raw" >"$T/c.raw"
pack "$root/demo/big.zt" a=u8:$((6 * 1024 * 1024 + 123)):"$T/a.raw" \
    b=u8:$((3 * 1024 * 1024)):"$T/b.raw" c=u8:100:"$T/c.raw"
pack "$root/nd/nodigest.zt" --digest none b=u8:$((3 * 1024 * 1024)):"$T/b.raw" c=u8:100:"$T/c.raw"
start_daemon "$root" || rfinish
have_nginx=0
start_nginx "$root" && have_nginx=1

# same_tree SRC DST NAME: every file of SRC is in DST, byte for byte, and valid.
same_tree() {
    local src=$1 dst=$2 name=$3 f diff=0 n=0
    while IFS= read -r f; do
        n=$((n + 1))
        if ! cmp -s "$src/$f" "$dst/$f"; then
            diff=$((diff + 1))
            echo "differs: $f" >&2
        elif [ "${f%.zt}" != "$f" ] && ! zverify "$dst/$f"; then
            diff=$((diff + 1))
            echo "zt verify fails: $f" >&2
        fi
    done < <(cd "$src" && find . -type f \( -name '*.zt' -o -name '*.safetensors' \) | sed 's|^\./||' | sort)
    check_eq "$name: $n files byte-exact and valid" "$diff" 0
    check_eq "$name: no leftovers" "$(find "$dst" -name '*.ztpart' -o -name '*.ztpull' | wc -l)" 0
}
# pull NAME ARGS...: zt pull must succeed (exit 0); output in $T/pull.out/err.
pull() {
    local name=$1
    shift
    if "$ZT" pull --quiet "$@" >"$T/pull.out" 2>"$T/pull.err"; then
        ok "$name"
    else
        bad "$name" "exit $?: $(tail -c 600 "$T/pull.err" | tr '\n' ' ')"
    fi
}

note "byte-exact: a prefix from ztensord, files from nginx"
pull "ztensord: the whole root as one prefix" "$URL/v1/files/" -o "$T/o1" --json
same_tree "$root" "$T/o1" "ztensord prefix"
check_eq "--json: files" "$($PC json "$T/pull.out" failed)" 0
check_match "--json: components verified" "$($PC json "$T/pull.out" components_verified)" '^[1-9]'
pull "ztensord: a file without digests" "$URL/v1/files/nd/" -o "$T/o1b" --json
check_eq "--json: 2 + 4 components and 2 + 4 objects counted as not checked" \
    "$($PC json "$T/pull.out" components_unverified) $($PC json "$T/pull.out" objects_unverified)" "6 6"
pull "ztensord: the prefix demo/llama/" "$URL/v1/files/demo/llama/" -o "$T/o2"
check_eq "a prefix's files are named relative to it" "$(cd "$T/o2" && find . -path ./.ztpull-record -prune -o -type f -print)" "./model-00001.zt"
cmp -s "$T/o2/model-00001.zt" "$root/demo/llama/model-00001.zt" && ok "prefix file byte-exact" ||
    bad "prefix file byte-exact"
pull "ztensord: small chunks, one connection" "$URL/v1/files/demo/big.zt" -o "$T/o3" \
    --chunk-size 64K --connections 1
cmp -s "$T/o3/big.zt" "$root/demo/big.zt" && ok "one connection: byte-exact" || bad "one connection: byte-exact"
if [ $have_nginx = 1 ]; then
    urls=()
    while IFS= read -r f; do urls+=("http://127.0.0.1:$NPORT/$f"); done \
        < <(cd "$root" && find demo corpus nd -type f \( -name '*.zt' -o -name '*.safetensors' \) | sort)
    mkdir -p "$T/o4"
    (cd "$root" && find demo corpus nd -type d) | while read -r d; do mkdir -p "$T/o4/$d"; done
    bad_n=0
    for u in "${urls[@]}"; do
        rel=${u#http://127.0.0.1:$NPORT/}
        "$ZT" pull --quiet "$u" -o "$T/o4/$(dirname "$rel")" 2>>"$T/o4.err" || bad_n=$((bad_n + 1))
    done
    check_eq "nginx: ${#urls[@]} file URLs pulled" "$bad_n" 0
    same_tree "$root" "$T/o4" "nginx"
fi

# (Only files whose components carry digests: a flipped byte in a component
# without one, as in nd/, cannot be told apart: objects_unverified says so.)
note "a faulty path: cuts, stalls, 503 with Retry-After, flipped bytes"
for seed in 1 2 3; do
    start_relay "$PORT" chaos $seed
    rm -rf "$T/o5"
    pull "chaos seed $seed: the pull succeeds" "http://127.0.0.1:$RPORT/v1/files/demo/" -o "$T/o5" \
        --chunk-size 256K --json
    same_tree "$root/demo" "$T/o5" "chaos seed $seed"
    faults=$(grep -c '(cut)\|(stalled, cut)\|(chaos)\|(flipped)' "$RLOG")
    check_match "chaos seed $seed: the relay broke answers ($faults)" "$faults" '^[1-9]'
    if grep -q '(flipped)' "$RLOG"; then
        check_match "chaos seed $seed: flipped bytes were fetched again" \
            "$($PC json "$T/pull.out" retries)" '^[1-9]'
    fi
done
if [ $have_nginx = 1 ]; then
    start_relay "$NPORT" chaos 4
    rm -rf "$T/o6"
    pull "nginx through chaos" "http://127.0.0.1:$RPORT/demo/big.zt" -o "$T/o6" --chunk-size 256K
    cmp -s "$T/o6/big.zt" "$root/demo/big.zt" && ok "nginx chaos: byte-exact" || bad "nginx chaos: byte-exact"
fi

note "a byte flipped on every try: a clear failure, nothing published"
start_relay "$PORT" flip 2
rm -rf "$T/o7"
"$ZT" pull --quiet "http://127.0.0.1:$RPORT/v1/files/demo/big.zt" -o "$T/o7" 2>"$T/pull.err"
check_eq "exit status 1" "$?" 1
check_match "the message names the file, object and component" "$(cat "$T/pull.err")" \
    'big\.zt: ZT_E_DIGEST_MISMATCH: .*object "[abc]", component "data"'
check_eq "no final file" "$(ls "$T/o7")" "$(printf 'big.zt.ztpart\nbig.zt.ztpull')"

note "kill -9 at 12 random points, each followed by a resume"
rand "$T/k.raw" $((512 * 1024))
specs=()
for i in $(seq 1 64); do specs+=("t$i=u8:$((512 * 1024)):$T/k.raw"); done
pack "$root/kill.zt" "${specs[@]}" # 32 MiB in 64 components
"$ZT" info --json "$root/kill.zt" >"$T/kill.json"
kill -HUP "$D_PID"
for i in $(seq 1 100); do curl -sf -o /dev/null "$URL/v1/files/kill.zt" && break; sleep 0.1; done
start_relay "$PORT" pass
rm -rf "$T/o8"
# How long one whole pull takes here: the kills land at random points inside it.
full_ms=
for i in 1 2; do # the faster of two, so a slow first run does not put the kills after the end
    t0=$(date +%s%N)
    pull "one whole pull ($i)" "http://127.0.0.1:$RPORT/v1/files/kill.zt" -o "$T/o8" --connections 2 --chunk-size 64K
    ms=$((($(date +%s%N) - t0) / 1000000 + 1))
    [ -z "$full_ms" ] || [ $ms -lt $full_ms ] && full_ms=$ms
    rm -f "$T/o8/kill.zt"
done
refetched=0 resumed=0 finished=0 killed=0
for i in $(seq 1 12); do
    from=$(wc -l <"$RLOG")
    "$ZT" pull --quiet "http://127.0.0.1:$RPORT/v1/files/kill.zt" -o "$T/o8" --connections 2 \
        --chunk-size 64K >/dev/null 2>&1 &
    pid=$!
    ms=$(((RANDOM * 32768 + RANDOM) % full_ms))
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -f "$T/o8/kill.zt" ] && { finished=$((finished + 1)); rm -f "$T/o8/kill.zt"; continue; }
    killed=$((killed + 1))
    [ -f "$T/o8/kill.zt.ztpull" ] || continue
    cp "$T/o8/kill.zt.ztpull" "$T/state.$i"
    resumed=$((resumed + $(tail -n +6 "$T/state.$i" | grep -c '^c ')))
    from=$(wc -l <"$RLOG")
    pull "resume after kill $i" "http://127.0.0.1:$RPORT/v1/files/kill.zt" -o "$T/o8" --json
    cmp -s "$T/o8/kill.zt" "$root/kill.zt" || bad "resume after kill $i: byte-exact"
    if ! $PC refetch "$T/state.$i" "$T/kill.json" "$RLOG" "$from" >"$T/refetch.$i"; then
        refetched=$((refetched + 1))
        head -3 "$T/refetch.$i" >&2
    fi
    rm -f "$T/o8/kill.zt"
done
check_eq "no verified component fetched again after a kill" "$refetched" 0
check_match "kills left verified components to resume from ($resumed records; $killed kills during a pull of $full_ms ms, $finished runs ended first)" \
    "$resumed" '^[1-9]'
check_match "a quarter of the kills at least landed inside a pull" "$((killed >= 3))" '^1$'

note "a file replaced at the origin during the pull: one whole version"
rand "$T/v1.raw" $((8 * 1024 * 1024))
rand "$T/v2.raw" $((8 * 1024 * 1024))
pack "$T/v1.zt" w=u8:$((8 * 1024 * 1024)):"$T/v1.raw"
pack "$T/v2.zt" w=u8:$((8 * 1024 * 1024)):"$T/v2.raw"
for how in rename inplace; do
    pre=$(curl -s "$URL/v1/files" | $HELP listing /dev/stdin ch.zt etag 2>/dev/null)
    cp "$T/v1.zt" "$root/ch.zt"
    kill -HUP "$D_PID"
    for i in $(seq 1 300); do # until the origin serves version 1
        e=$(curl -s "$URL/v1/files" | $HELP listing /dev/stdin ch.zt etag 2>/dev/null)
        [ "$e" != "$pre" ] && [ "$e" != - ] && break
        sleep 0.1
    done
    # the relay holds the pull's requests after the sixth until the origin serves the new
    # version: the replacement lands mid-pull however fast or slow the pull is
    old_etag=$(curl -s "$URL/v1/files" | $HELP listing /dev/stdin ch.zt etag)
    rm -f "$T/gate"
    start_relay "$PORT" gate 6 "$T/gate"
    rm -rf "$T/o9"
    "$ZT" pull "http://127.0.0.1:$RPORT/v1/files/ch.zt" -o "$T/o9" --connections 1 \
        --chunk-size 64K --json >"$T/pull.out" 2>"$T/pull.err" &
    pid=$!
    for i in $(seq 1 300); do [ "$(wc -l <"$RLOG")" -ge 6 ] && break; sleep 0.1; done
    if [ $how = rename ]; then
        cp "$T/v2.zt" "$root/.ch.tmp" && mv "$root/.ch.tmp" "$root/ch.zt"
    else
        dd if="$T/v2.zt" of="$root/ch.zt" conv=notrunc status=none
    fi
    kill -HUP "$D_PID"
    for i in $(seq 1 300); do
        [ "$(curl -s "$URL/v1/files" | $HELP listing /dev/stdin ch.zt etag)" != "$old_etag" ] && break
        sleep 0.1
    done
    check "$how: the pull was mid-transfer when the origin changed" kill -0 "$pid"
    touch "$T/gate"
    wait $pid
    check_eq "$how: the pull succeeds" "$?" 0
    if cmp -s "$T/o9/ch.zt" "$T/v2.zt"; then
        ok "$how: the result is the new version, whole"
        check_match "$how: the pull says the file changed" "$(cat "$T/pull.err")" 'changed at the origin'
    else
        bad "$how: the result is the new version, whole" "$(cmp "$T/o9/ch.zt" "$T/v2.zt" 2>&1; tail -c 300 "$T/pull.err")"
    fi
done
rm -f "$root/ch.zt"

note "--tensors and --exclude-tensors: valid files holding exactly the chosen objects"
# objects NAME FILE: the object names of a .zt, one a line, sorted.
objects() { "$ZT" info --json "$1" | $PY -c 'import json,sys; [print(k) for k in sorted(json.load(sys.stdin)["objects"])]'; }
# same_objects NAME OUT ORIGIN: every object of OUT has the origin's decoded bytes.
same_objects() {
    local o diff=0
    while IFS= read -r o; do
        "$ZT" get "$2" "$o" >"$T/got.bin" 2>/dev/null && "$ZT" get "$3" "$o" >"$T/want.bin" 2>/dev/null &&
            cmp -s "$T/got.bin" "$T/want.bin" || diff=$((diff + 1))
    done < <(objects "$2")
    check_eq "$1: the objects hold the origin's bytes" "$diff" 0
}
rm -rf "$T/sel"
pull "--tensors 'layers.*'" "$URL/v1/files/demo/tiny.zt" -o "$T/sel/a" --tensors 'layers.*'
zverify "$T/sel/a/tiny.zt" && ok "include: zt verify passes" || bad "include: zt verify passes"
check_eq "include: exactly the matching objects" "$(objects "$T/sel/a/tiny.zt" | tr '\n' ' ')" \
    "layers.0.attn.q_proj.bias layers.0.attn.q_proj.weight "
same_objects "include" "$T/sel/a/tiny.zt" "$root/demo/tiny.zt"
pull "--exclude-tensors '*.bias' --exclude-tensors 'odd*'" "$URL/v1/files/demo/tiny.zt" -o "$T/sel/b" \
    --exclude-tensors '*.bias' --exclude-tensors 'odd*'
zverify "$T/sel/b/tiny.zt" && ok "exclude: zt verify passes" || bad "exclude: zt verify passes"
check_eq "exclude: exactly the others" "$(objects "$T/sel/b/tiny.zt" | tr '\n' ' ')" \
    "embed.weight layers.0.attn.q_proj.weight "
same_objects "exclude" "$T/sel/b/tiny.zt" "$root/demo/tiny.zt"
pull "include over a prefix, zstd and crc32c" "$URL/v1/files/demo/llama/" -o "$T/sel/c" --tensors embed
zverify "$T/sel/c/model-00001.zt" && ok "zstd: zt verify passes" || bad "zstd: zt verify passes"
check_eq "zstd: exactly embed" "$(objects "$T/sel/c/model-00001.zt")" "embed"
same_objects "zstd" "$T/sel/c/model-00001.zt" "$root/demo/llama/model-00001.zt"
check_match "zstd: still compressed, crc32c" "$("$ZT" info "$T/sel/c/model-00001.zt")" 'zstd.*crc32c'

note "100,000 objects in a bounded number of requests"
if [ -x "${ZT_GEN_MANY:-}" ]; then
    "$ZT_GEN_MANY" "$root/many.zt" 100000 256 || bad "gen_many"
    kill -HUP "$D_PID"
    for i in $(seq 1 100); do curl -sf -o /dev/null "$URL/v1/files/many.zt" && break; sleep 0.1; done
    start_relay "$PORT" pass
    rm -rf "$T/o10"
    pull "100,000 objects" "http://127.0.0.1:$RPORT/v1/files/many.zt" -o "$T/o10" --json
    cmp -s "$T/o10/many.zt" "$root/many.zt" && ok "100,000 objects: byte-exact" || bad "100,000 objects: byte-exact"
    S=$(stat -c %s "$root/many.zt") C=$(((32 << 20) / 8)) # the chunk: the window over 8 connections
    B=$((S / 8 > (1 << 20) ? S / 8 : (1 << 20)))
    [ $B -gt $((64 << 20)) ] && B=$((64 << 20))
    bound=$(((S + C - 1) / C + 2 * ((S + B - 1) / B) + 3))
    nreq=$(wc -l <"$RLOG")
    check_match "100,000 objects: $nreq requests <= ceil(S/C) + 2 ceil(S/B) + 3 = $bound" \
        "$((nreq <= bound))" '^1$'
    rm -f "$root/many.zt" "$T/o10/many.zt"
else
    skip "100,000 objects" "ZT_GEN_MANY not set (run ctest)"
fi

note "a full disk"
if mkdir -p "$T/small" && mount -t tmpfs -o size=2m tmpfs "$T/small" 2>/dev/null; then
    "$ZT" pull --quiet "$URL/v1/files/demo/big.zt" -o "$T/small/out" 2>"$T/pull.err"
    check_eq "exit status 4" "$?" 4
    check_match "a clear message" "$(cat "$T/pull.err")" 'ZT_E_NOSPACE: cannot allocate [0-9]+ bytes for .*big\.zt\.ztpart: No space left on device'
    check_eq "only the partial file and its state" "$(ls "$T/small/out")" "$(printf 'big.zt.ztpart\nbig.zt.ztpull')"
    umount "$T/small"
else
    skip "full disk" "cannot mount a tmpfs here"
fi

note "a server that needs a read token: --token or ZT_TOKEN"
printf 'read  r3ad-t0ken-for-pull-tests\n' >"$T/tokens"
start_daemon "$root" --tokens-file "$T/tokens" --require-read-token || rfinish
"$ZT" pull --quiet "$URL/v1/files/demo/llama/" -o "$T/tk0" 2>"$T/pull.err"
check_eq "no token: exit status 3" "$?" 3
check_match "no token: the server's 401 is quoted" "$(cat "$T/pull.err")" '401.*a bearer token is required'
pull "--token: the prefix pulls" "$URL/v1/files/demo/llama/" -o "$T/tk1" --token r3ad-t0ken-for-pull-tests
cmp -s "$T/tk1/model-00001.zt" "$root/demo/llama/model-00001.zt" && ok "--token: byte-exact" || bad "--token: byte-exact"
ZT_TOKEN=r3ad-t0ken-for-pull-tests pull "ZT_TOKEN: a file pulls" "$URL/v1/files/demo/tiny.zt" -o "$T/tk2"
cmp -s "$T/tk2/tiny.zt" "$root/demo/tiny.zt" && ok "ZT_TOKEN: byte-exact" || bad "ZT_TOKEN: byte-exact"

rfinish
