#!/usr/bin/env bash
# zTensor v2 files over the network (issues 12/13 and the v2 format): a v2
# file opened from its footer and manifest through ztensord and nginx, every
# part read byte for byte against the local reader (decoded and stored, whole
# and in ranges, all at once), with digests over the decoded bytes (xxh3,
# sha256) checked on what arrives; `zt info URL`, `zt get URL OBJECT`; `zt
# pull` byte-exact, and a byte flipped in a compressed part on every try
# fails naming the part and publishes nothing.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root/v2" "$root/corpus"
rand "$T/a.raw" $((5 * 1024 * 1024 + 77)) # several zt.zstd-seekable/1 frames
rand "$T/b.raw" 4000
head -c $((3 * 1024 * 1024)) /dev/zero >"$T/z.raw" # compresses well
v2pack() { "$ZT" pack --format v2 "$@" >/dev/null 2>"$T/pack.err" || bad "zt pack --format v2 $*" "$(cat "$T/pack.err")"; }
v2pack -o "$root/v2/raw.zt" a=u8:$((5 * 1024 * 1024 + 77)):"$T/a.raw" b=f32:1000:"$T/b.raw"
v2pack -o "$root/v2/zstd.zt" --compress a=u8:$((5 * 1024 * 1024 + 77)):"$T/a.raw" \
    b=f32:1000:"$T/b.raw" z=u8:$((3 * 1024 * 1024)):"$T/z.raw"
v2pack -o "$root/v2/sha.zt" --compress --digest sha256 b=f32:1000:"$T/b.raw" \
    z=u8:$((3 * 1024 * 1024)):"$T/z.raw"
v2pack -o "$root/v2/none.zt" --digest none b=f32:1000:"$T/b.raw"
corpus=${ZT_CORPUS_V2_DIR:-}/accept
if [ -d "$corpus" ]; then
    for f in "$corpus"/*.zt; do
        case $(basename "$f") in sharded*) continue ;; esac # t_v2_shards.sh
        cp "$f" "$root/corpus/"
    done
else
    skip "v2 corpus files" "ZT_CORPUS_V2_DIR not set (run ctest: corpus_v2_generate makes it)"
fi
start_daemon "$root" || rfinish
have_nginx=0
start_nginx "$root" && have_nginx=1
bases=("$URL/v1/files")
[ $have_nginx = 1 ] && bases+=("http://127.0.0.1:$NPORT")

note "every part, byte for byte, through ztensord and nginx"
for f in "$root"/v2/*.zt "$root"/corpus/*.zt; do
    [ -e "$f" ] || continue
    rel=${f#"$root"/}
    for base in "${bases[@]}"; do
        rcheck "$base/$rel" --chunk 1048576 "$base/$rel" "$f"
    done
done
for base in "${bases[@]}"; do
    rcheck "$base/v2/zstd.zt: manifest in a second request, 4 connections, spans" \
        --window 64 --connections 4 --chunk 65536 --spans "$base/v2/zstd.zt" "$root/v2/zstd.zt"
done

note "zt info and zt get on URLs"
for rel in v2/raw.zt v2/zstd.zt v2/sha.zt corpus/layouts.zt; do
    [ -e "$root/$rel" ] || continue
    for base in "${bases[@]}"; do
        "$ZT" info "$base/$rel" | tail -n +2 | grep -v '^  generations:' >"$T/info.remote"
        "$ZT" info "$root/$rel" | tail -n +2 | grep -v '^  generations:' >"$T/info.local"
        check_same "zt info $base/$rel" "$T/info.remote" "$T/info.local"
        "$ZT" info --json "$base/$rel" >"$T/json.remote"
        "$ZT" info --json "$root/$rel" >"$T/json.local"
        check_same "zt info --json $base/$rel" "$T/json.remote" "$T/json.local"
        while IFS= read -r obj; do
            "$ZT" get "$root/$rel" "$obj" -o "$T/get.local" 2>/dev/null || continue # not dense
            "$ZT" get "$base/$rel" "$obj" -o "$T/get.remote"
            check_same "zt get $base/$rel \"$obj\"" "$T/get.remote" "$T/get.local"
        done < <($PY -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["objects"]))' "$T/json.local")
    done
done
check_match "zt info URL: the generations are not scanned remotely" \
    "$("$ZT" info "$URL/v1/files/v2/zstd.zt")" 'generations: not scanned'

note "zt pull: byte-exact and verified"
for base in "${bases[@]}"; do
    rm -rf "$T/p"
    for rel in v2/raw.zt v2/zstd.zt v2/sha.zt v2/none.zt; do
        if "$ZT" pull --quiet --json "$base/$rel" -o "$T/p" >"$T/pull.out" 2>"$T/pull.err"; then
            ok "zt pull $base/$rel"
        else
            bad "zt pull $base/$rel" "$(tail -c 600 "$T/pull.err")"
        fi
        check "$base/$rel pulled byte-exact" cmp -s "$T/p/$(basename "$rel")" "$root/$rel"
    done
    check "$base: pulled files verify" "$ZT" verify "$T/p/zstd.zt"
    check_eq "$base: no leftovers" "$(find "$T/p" -name '*.ztpart' -o -name '*.ztpull' | wc -l)" 0
done
"$ZT" pull --json "$URL/v1/files/v2/zstd.zt" -o "$T/p2" >"$T/pull.out" 2>/dev/null
check_eq "--json: 3 components verified" \
    "$($PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["components_verified"])' "$T/pull.out")" 3
"$ZT" pull --quiet "$URL/v1/files/" -o "$T/p3" >/dev/null 2>"$T/pull.err" &&
    ok "zt pull of the whole root (v2 files and the v2 corpus)" ||
    bad "zt pull of the whole root" "$(tail -c 600 "$T/pull.err")"
diff=0
for f in "$root"/v2/*.zt "$root"/corpus/*.zt; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$T/p3/${f#"$root"/}" || { diff=$((diff + 1)); echo "differs: $f" >&2; }
done
check_eq "the whole root: every file byte-exact" "$diff" 0

note "a byte flipped in a compressed part on every try: a clear failure, nothing published"
start_relay "$PORT" flip 2
rm -rf "$T/o7"
"$ZT" pull --quiet --chunk-size 256K "http://127.0.0.1:$RPORT/v1/files/v2/zstd.zt" -o "$T/o7" \
    2>"$T/pull.err"
check_eq "exit status 1" "$?" 1
check_match "the message names the object and the part, and the digest of the decoded bytes" \
    "$(cat "$T/pull.err")" \
    'zstd\.zt: ZT_E_DIGEST_MISMATCH: .*(decoded bytes received hash to xxh3:|do not decode).*object "a", component "data"'
check_eq "no final file" "$(ls "$T/o7" | grep -cv '\.ztpart$\|\.ztpull$')" 0
rcheck_flip() {
    "$RC" --expect ZT_E_DIGEST_MISMATCH "http://127.0.0.1:$RPORT/v1/files/v2/zstd.zt" \
        "$root/v2/zstd.zt" >"$T/rc.out" 2>"$T/rc.err"
}
start_relay "$PORT" flip 2
rcheck_flip && ok "remote_check: a flipped byte in a decoded read is ZT_E_DIGEST_MISMATCH" ||
    bad "remote_check: a flipped byte in a decoded read" "$(tail -c 400 "$T/rc.err")"
rfinish
