#!/usr/bin/env bash
# zt pull of a zTensor v2 model with a shard table (v2 §7) as one version:
# the root and the shards it names (Appendix B: "<stem>-<name>.zt" beside
# it), through ztensord and nginx. Byte-exact, every file verified (the
# root's parts; each shard by the table's whole-file digest and the parts in
# it), all published together; a second pull skips them; a shard whose bytes
# or size are not the table's, or that is missing, is a clear failure that
# publishes nothing. A shard replaced during the pull: the pull fails
# clearly (the root pins the old one); the whole model replaced during the
# pull: the pull ends with the new version, whole. Never files of two
# versions together.
. "$(dirname "$0")/lib.sh" "$@"

acc=${ZT_CORPUS_V2_DIR:-}/accept
rej=${ZT_CORPUS_V2_DIR:-}/reject
if [ ! -e "$acc/sharded.zt" ] || [ ! -e "$acc/sharded_next.zt" ]; then
    skip "sharded v2 model" "ZT_CORPUS_V2_DIR not set (run ctest: corpus_v2_generate makes it)"
    rfinish
fi
S1=00001-of-00002
S2=00002-of-00002
root=$T/root
mkdir -p "$root/m" "$root/bad" "$T/v1" "$T/v2"
# The two versions under the names a model would have ("model" and shards).
for v in "" _next; do
    d=$T/v1
    [ -n "$v" ] && d=$T/v2
    cp "$acc/sharded$v.zt" "$d/model.zt"
    cp "$acc/sharded$v-$S1.zt" "$d/model-$S1.zt"
    cp "$acc/sharded$v-$S2.zt" "$d/model-$S2.zt"
done
for f in "$rej"/shard_*.zt; do cp "$f" "$root/bad/"; done
# A root whose first shard is a valid v2 file of another size (a data shard).
mkdir -p "$root/bad/other"
cp "$T/v1/model.zt" "$T/v1/model-$S2.zt" "$root/bad/other/"
cp "$acc/data_shard.zt" "$root/bad/other/model-$S1.zt"
# publish VERSION_DIR FILES...: put those files of a version in place (the
# mtime of v1 two minutes old, of v2 one: a replacement has another
# Last-Modified, and so another ETag at nginx, whose ETag is mtime and size).
publish() {
    local d=$1 f age='-2 min'
    shift
    [ "$d" = "$T/v2" ] && age='-1 min'
    for f in "$@"; do
        cp "$d/$f" "$root/m/.$f.tmp" && touch -d "$age" "$root/m/.$f.tmp" &&
            mv "$root/m/.$f.tmp" "$root/m/$f"
    done
}
publish "$T/v1" "model-$S1.zt" "model-$S2.zt" model.zt
start_daemon "$root" || rfinish
have_nginx=0
start_nginx "$root" && have_nginx=1
bases=("$URL/v1/files")
[ $have_nginx = 1 ] && bases+=("http://127.0.0.1:$NPORT")

# jkey FILE KEY: a key of the last line of FILE (zt pull --json's summary).
jkey() { $PY -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])[sys.argv[2]])' "$1" "$2"; }
# same_version DIR VERSION_DIR: the three files of DIR are those of VERSION_DIR.
same_version() {
    local f
    for f in model.zt "model-$S1.zt" "model-$S2.zt"; do
        cmp -s "$1/$f" "$2/$f" || return 1
    done
}
# nothing_published DIR: no model file in DIR (partial files only).
nothing_published() { [ -z "$(ls "$1" 2>/dev/null | grep '\.zt$')" ]; }
# zpull NAME OUT URL [ARGS...]: zt pull --json, output in $T/pull.out/err, status in PRC.
zpull() {
    local out=$1 url=$2
    shift 2
    "$ZT" pull --quiet --json "$url" -o "$out" "$@" >"$T/pull.out" 2>"$T/pull.err"
    PRC=$?
}

note "the root and its shards, byte-exact and verified"
for base in "${bases[@]}"; do
    rm -rf "$T/o"
    zpull "$T/o" "$base/m/model.zt"
    check_eq "$base: zt pull exits 0" "$PRC" 0
    same_version "$T/o" "$T/v1" && ok "$base: root and both shards byte-exact" ||
        bad "$base: root and both shards byte-exact" "$(ls -la "$T/o"; cat "$T/pull.err")"
    check_eq "$base: the 4 parts verified (1 in the root, 3 in the shards)" \
        "$(jkey "$T/pull.out" components_verified)" 4
    check "$base: zt verify of the pulled root (it reads its shards)" "$ZT" verify "$T/o/model.zt"
    check_eq "$base: no leftovers" "$(find "$T/o" -name '*.ztpart' -o -name '*.ztpull' | wc -l)" 0
    zpull "$T/o" "$base/m/model.zt"
    check_eq "$base: a second pull skips the model" "$PRC $(jkey "$T/pull.out" skipped)" "0 1"
done
rm -rf "$T/o"
zpull "$T/o" "$URL/v1/files/m/"
check_eq "a prefix listing the root and its shards: exit 0" "$PRC" 0
same_version "$T/o" "$T/v1" && ok "prefix: byte-exact" || bad "prefix: byte-exact" "$(cat "$T/pull.err")"
check_eq "prefix: 3 files, the shards found complete after the root's pull" \
    "$(jkey "$T/pull.out" files) $(jkey "$T/pull.out" skipped)" "3 2"

note "shards that are not the table's: clear failures, nothing published"
if [ $have_nginx = 1 ]; then
    n=http://127.0.0.1:$NPORT/bad
    rm -rf "$T/b1"
    zpull "$T/b1" "$n/shard_digest_wrong.zt"
    check_eq "a shard whose bytes differ (one padding byte): exit 1" "$PRC" 1
    check_match "  the message names the shard and both digests" "$(cat "$T/pull.err")" \
        "ZT_E_DIGEST_MISMATCH: shard \"$S2\": the file received hashes to xxh3:[0-9a-f]+, the root's shard table says xxh3:[0-9a-f]+ \[.*/shard_digest_wrong-$S2\.zt\]"
    nothing_published "$T/b1" && ok "  nothing published" || bad "  nothing published" "$(ls "$T/b1")"
    rm -rf "$T/b2"
    zpull "$T/b2" "$n/shard_size_wrong.zt"
    # (its extra byte is at the end: the file does not end in a footer)
    check_eq "a shard of another size: exit 1" "$PRC" 1
    check_match "  the message names the shard's URL" "$(cat "$T/pull.err")" \
        "ZT_E_(SHARD|MAGIC): .*\[.*/shard_size_wrong-$S2\.zt\]"
    nothing_published "$T/b2" && ok "  nothing published" || bad "  nothing published" "$(ls "$T/b2")"
    rm -rf "$T/b4"
    zpull "$T/b4" "$n/other/model.zt"
    check_eq "a valid v2 file of another size as a shard: exit 1" "$PRC" 1
    check_match "  the message says ZT_E_SHARD and both sizes" "$(cat "$T/pull.err")" \
        "ZT_E_SHARD: v2 §7.3: shard \"$S1\" is [0-9]+ bytes, the root's table says [0-9]+ \[.*/other/model-$S1\.zt\]"
    nothing_published "$T/b4" && ok "  nothing published" || bad "  nothing published" "$(ls "$T/b4")"
    rm -rf "$T/b3"
    zpull "$T/b3" "$n/shard_missing.zt"
    check_eq "a missing shard: exit 3" "$PRC" 3
    check_match "  the message says 404 and names the shard's URL" "$(cat "$T/pull.err")" \
        "ZT_E_NOT_FOUND.*404.*shard_missing-$S1\.zt"
    nothing_published "$T/b3" && ok "  nothing published" || bad "  nothing published" "$(ls "$T/b3")"
fi

# etag URL: the validator the origin gives now.
etag() { curl -s -D - -o /dev/null "$1" | tr -d '\r' | sed -n 's/^ETag: //Ip'; }
# replace_during ORIGIN_PORT PATH_PREFIX WHAT FILES...: a pull through a relay
# whose 7th request (the first after the 6 of the opens: 2 per file) stalls
# 3 s, while FILES of version WHAT replace the served ones (and the origin
# gives their new ETag).
replace_during() {
    local port=$1 pre=$2 what=$3 i old
    shift 3
    start_relay "$port" stall 6 3
    old=$(etag "http://127.0.0.1:$port$pre/model-$S2.zt")
    rm -rf "$T/r"
    "$ZT" pull --quiet --json "http://127.0.0.1:$RPORT$pre/model.zt" -o "$T/r" \
        >"$T/pull.out" 2>"$T/pull.err" &
    local pid=$!
    for i in $(seq 1 100); do
        [ "$(wc -l <"$RLOG")" -ge 7 ] && break
        sleep 0.05
    done
    publish "$what" "$@"
    for i in $(seq 1 100); do
        [ "$(etag "http://127.0.0.1:$port$pre/model-$S2.zt")" != "$old" ] && break
        sleep 0.05
    done
    wait "$pid"
    PRC=$?
    stop_relay
}

note "replaced during the pull"
origins=("$PORT /v1/files/m ztensord")
[ $have_nginx = 1 ] && origins+=("$NPORT /m nginx")
for o in "${origins[@]}"; do
    read -r port pre name <<<"$o"
    publish "$T/v1" "model-$S1.zt" "model-$S2.zt" model.zt
    replace_during "$port" "$pre" "$T/v2" "model-$S2.zt"
    check_eq "$name: a shard replaced (the root unchanged): exit 1" "$PRC" 1
    check_match "  its whole-file digest is not the pinned root's" "$(cat "$T/pull.err")" \
        "ZT_E_DIGEST_MISMATCH: shard \"$S2\": the file received hashes to"
    nothing_published "$T/r" && ok "  nothing published" || bad "  nothing published" "$(ls "$T/r")"
    publish "$T/v1" "model-$S1.zt" "model-$S2.zt" model.zt
    replace_during "$port" "$pre" "$T/v2" "model-$S1.zt" "model-$S2.zt" model.zt
    check_eq "$name: the whole model replaced: exit 0" "$PRC" 0
    same_version "$T/r" "$T/v2" && ok "  the new version, whole" ||
        bad "  the new version, whole" "$(cat "$T/pull.err")"
    check_match "  the pull started over" "$(jkey "$T/pull.out" restarts)" '^[1-9]'
done
rfinish
