#!/usr/bin/env bash
# t_pull_view: zt pull --format safetensors of a model directory (config.json,
# tokenizer.json, generation_config.json and two .zt shards, one of them zstd), from the
# origin and through a sidecar (--upstream): a directory that an independent loader
# (st_model.py, numpy, written from the safetensors spec) reads through
# model.safetensors.index.json, every tensor equal to the bytes it was packed from; the
# views cmp-equal to `zt convert`'s output and to the origin's /safetensors, the index to
# the origin's and to `zt convert DIR`'s; the listed views and index never fetched; through
# the sidecar the same bytes, the origin sending each stored byte once. A byte flipped on
# the way fails the pull (the component digest) and leaves no view; a file holding an
# object safetensors cannot express fails by name while the rest is pulled. (The record
# of complete pulls, .ztpull-record/, is left out of the trees compared.)
. "$(dirname "$0")/lib.sh" "$@"

M=$T/origin/m
mkdir -p "$M" "$T/origin/bad"
rand "$T/a.bin" 1200000
rand "$T/b.bin" 200000
text "$T/c.bin" 600000
rand "$T/d.bin" 300000
pack "$M/model-00001-of-00002.zt" w.a=f32:300x1000:"$T/a.bin" w.b=i16:100000:"$T/b.bin" || finish
pack "$M/model-00002-of-00002.zt" --compress w.c=u8:600000:"$T/c.bin" \
    w.d=bf16:150000:"$T/d.bin" || finish
printf '{"architectures": ["Tiny"], "hidden_size": 64}\n' >"$M/config.json"
text "$M/tokenizer.json" 300000
printf '{"max_new_tokens": 16}\n' >"$M/generation_config.json"
EXPECT=(w.a=F32:300x1000:"$T/a.bin" w.b=I16:100000:"$T/b.bin" w.c=U8:600000:"$T/c.bin"
    w.d=BF16:150000:"$T/d.bin")
VIEWS="model-00001-of-00002.safetensors model-00002-of-00002.safetensors"
PLAIN="config.json generation_config.json tokenizer.json"
ALL="$PLAIN $VIEWS model.safetensors.index.json"
LOAD=$UPSTREAM_DIR/st_model.py
# what zt convert makes of them: each file, and the directory
for f in $VIEWS; do "$ZT" convert "$M/${f%.safetensors}.zt" -o "$T/$f" >/dev/null 2>&1; done
rc=0
"$ZT" convert "$M" -o "$T/conv" >"$T/conv.out" 2>&1 || rc=$?
check_eq "zt convert DIR: exit 0 ($(head -c 300 "$T/conv.out"))" "$rc" 0
check_eq "zt convert DIR: the files" "$(ls "$T/conv" | tr '\n' ' ')" \
    "config.json generation_config.json model-00001-of-00002.safetensors model-00002-of-00002.safetensors model.safetensors.index.json tokenizer.json "
for f in $VIEWS; do check_same "zt convert DIR: $f is zt convert's of the file" "$T/conv/$f" "$T/$f"; done
check_eq "zt convert DIR: the loader reads it" "$($PY "$LOAD" "$T/conv" "${EXPECT[@]}")" "OK 4"
# a model of one file and one that cannot be expressed (f4_e2m1)
pack "$T/origin/bad/good.zt" w.a=f32:300x1000:"$T/a.bin" || finish
head -c 8 "$T/b.bin" >"$T/f4.bin"
pack "$T/origin/bad/bad.zt" --format v2 w.q=f4_e2m1:16:"$T/f4.bin" || finish
printf '{}\n' >"$T/origin/bad/config.json"

WAIT_VERIFIED=1 start_origin "$T/origin" || finish
for i in $(seq 1 300); do # the plain files hashed: listed with ETag "sha256:..."
    n=$(curl -s --max-time 5 "$O_URL/v1/files?prefix=m/" | grep -o '"etag":"\\"sha256:' | wc -l)
    [ "$n" -ge 3 ] && break
    sleep 0.1
done
check_ge "the origin hashed its plain files" "$n" 3
curl -s -o "$T/o.index" "$O_URL/v1/files/m/model.safetensors.index.json/raw"
check_same "zt convert DIR's index is the origin's" "$T/conv/model.safetensors.index.json" "$T/o.index"

# ---- from the origin (through a relay that logs the requests)
start_relay "${O_URL##*:}" pass || finish
rc=0
"$ZT" pull --format safetensors --json "http://127.0.0.1:$RPORT/v1/files/m/" -o "$T/direct" \
    >"$T/d.json" 2>"$T/d.err" || rc=$?
check_eq "pull --format safetensors m/: exit 0 ($(head -c 300 "$T/d.err"))" "$rc" 0
check_eq "the files written, nothing else (no .zt, no staging)" \
    "$(cd "$T/direct" && find . -mindepth 1 -not -path "./.ztpull-record*" | sort | tr '\n' ' ')" \
    "$(for f in $ALL; do echo "./$f"; done | sort | tr '\n' ' ')"
for f in $VIEWS; do
    check_same "$f is zt convert's output" "$T/direct/$f" "$T/$f"
    curl -s -o "$T/o.view" "$O_URL/v1/files/m/${f%.safetensors}.zt/safetensors"
    check_same "$f is the origin's view" "$T/direct/$f" "$T/o.view"
done
check_same "the index is the origin's" "$T/direct/model.safetensors.index.json" "$T/o.index"
for f in $PLAIN; do check_same "$f as it is" "$T/direct/$f" "$M/$f"; done
check_eq "an independent loader reads it through the index" \
    "$($PY "$LOAD" "$T/direct" "${EXPECT[@]}")" "OK 4"
cp -r "$T/direct" "$T/tamper"
flip_byte "$T/tamper/model-00002-of-00002.safetensors" 5000
check_eq "the tampered copy differs from the pulled file at one byte" \
    "$(cmp -l "$T/direct/model-00002-of-00002.safetensors" "$T/tamper/model-00002-of-00002.safetensors" | wc -l)" 1
check_match "the loader fails on a byte changed in a tensor" \
    "$($PY "$LOAD" "$T/tamper" "${EXPECT[@]}")" '^FAIL: w\.[cd]: values differ'
check_eq "no listed view or index fetched" \
    "$(grep -Ec 'safetensors|/raw.*index' "$RLOG")" 0
stop_relay
rc=0
"$ZT" pull --format safetensors --json "$O_URL/v1/files/m/" -o "$T/direct" >"$T/d2.json" \
    2>"$T/d2.err" || rc=$?
check_eq "a second pull: exit 0 ($(head -c 300 "$T/d2.err"))" "$rc" 0
if $PY -c 'import os,sys; os.getxattr(sys.argv[1], "user.ztensor.view")' \
    "$T/direct/model-00001-of-00002.safetensors" 2>/dev/null; then
    check_match "a second pull: every file skipped" "$(cat "$T/d2.json")" '"skipped":5,'
else
    skip "a second pull skips the views" "no user xattrs here"
fi
for f in $ALL; do check_same "a second pull: $f unchanged" "$T/direct/$f" "$T/conv/$f"; done

# ---- through a sidecar: the same bytes; the origin sends each stored byte once
start_rootless "$O_URL" "$T/cache" || finish
stored=0
for f in model-00001-of-00002.zt model-00002-of-00002.zt $PLAIN; do
    stored=$((stored + $(stat -c %s "$M/$f")))
done
before=$(sent_bytes "$O_URL")
rc=0
"$ZT" pull --format safetensors --quiet "$URL/v1/files/m/" -o "$T/side" 2>"$T/s.err" || rc=$?
check_eq "through the sidecar: exit 0 ($(head -c 300 "$T/s.err"))" "$rc" 0
for f in $ALL; do check_same "through the sidecar: $f" "$T/side/$f" "$T/direct/$f"; done
sent=$(($(sent_bytes "$O_URL") - before))
note "the origin sent $sent bytes for a model stored in $stored bytes"
check_ge "the origin sent every stored byte" "$sent" $((stored - 8192))
# the sidecar opens each .zt with its first 16 and last 64 KiB (the manifest), then fetches
# the components: those tails are sent twice, every tensor (each over 64 KiB) once
check_ge "the origin sent each stored byte once (at most stored + 2 opens + 16 KiB)" \
    $((stored + 2 * (16 + 65536) + 16384)) "$sent"
before=$(sent_bytes "$O_URL")
rc=0
"$ZT" pull --format safetensors --quiet "$URL/v1/files/m/" -o "$T/side2" 2>"$T/s2.err" || rc=$?
check_eq "again through the warm sidecar: exit 0" "$rc" 0
sent=$(($(sent_bytes "$O_URL") - before))
check_ge "again through the warm sidecar: no stored byte from the origin (< 64 KiB)" 65536 "$sent"
for f in $ALL; do check_same "again through the sidecar: $f" "$T/side2/$f" "$T/direct/$f"; done

# ---- a byte flipped on the way: the component digest fails the pull, no view is written
start_relay "${O_URL##*:}" flip 2 || finish
rc=0
"$ZT" pull --format safetensors --quiet \
    "http://127.0.0.1:$RPORT/v1/files/m/model-00001-of-00002.zt" -o "$T/flip" 2>"$T/f.err" || rc=$?
check_eq "flipped: exit 1" "$rc" 1
check_match "flipped: the digest names the object" "$(cat "$T/f.err")" \
    'model-00001-of-00002.safetensors: ZT_E_DIGEST_MISMATCH: .*object "w\.[ab]"'
check_eq "flipped: no view, no temporary file" \
    "$(find "$T/flip" -maxdepth 1 -type f | wc -l)" 0
stop_relay
rc=0
"$ZT" pull --format safetensors --quiet "$O_URL/v1/files/m/model-00001-of-00002.zt" \
    -o "$T/flip" 2>"$T/f2.err" || rc=$?
check_eq "after the flip, the same pull from the origin: exit 0 ($(head -c 300 "$T/f2.err"))" "$rc" 0
check_eq "after the flip: the view alone, the staging directory gone" \
    "$(cd "$T/flip" && find . -mindepth 1 -not -path "./.ztpull-record*")" "./model-00001-of-00002.safetensors"
check_same "after the flip: the view is zt convert's" "$T/flip/model-00001-of-00002.safetensors" \
    "$T/model-00001-of-00002.safetensors"

# ---- a sharded v2 model: one view (the shards inside it) and the index, as the origin's
if [ -n "${ZT_CORPUS_V2_DIR:-}" ] && [ -f "$ZT_CORPUS_V2_DIR/accept/sharded.zt" ]; then
    mkdir -p "$T/origin2/v2s"
    cp "$ZT_CORPUS_V2_DIR"/accept/sharded.zt "$ZT_CORPUS_V2_DIR"/accept/sharded-0000?-of-00002.zt \
        "$T/origin2/v2s/"
    "$ZT" convert "$T/origin2/v2s/sharded.zt" -o "$T/sharded.safetensors" >/dev/null 2>&1
    stop_origin
    WAIT_VERIFIED=1 start_origin "$T/origin2" || finish
    rc=0
    "$ZT" pull --format safetensors --quiet "$O_URL/v1/files/v2s/" -o "$T/v2s" 2>"$T/v.err" || rc=$?
    check_eq "sharded v2: exit 0 ($(head -c 300 "$T/v.err"))" "$rc" 0
    check_eq "sharded v2: its view and the index, no shard files" \
        "$(cd "$T/v2s" && find . -mindepth 1 -not -path "./.ztpull-record*" | sort | tr '\n' ' ')" \
        "./model.safetensors.index.json ./sharded.safetensors "
    check_same "sharded v2: the view is zt convert's" "$T/v2s/sharded.safetensors" \
        "$T/sharded.safetensors"
    curl -s -o "$T/o2.index" "$O_URL/v1/files/v2s/model.safetensors.index.json/raw"
    check_same "sharded v2: the index is the origin's" "$T/v2s/model.safetensors.index.json" \
        "$T/o2.index"
    stop_origin
    WAIT_VERIFIED=1 start_origin "$T/origin" || finish
else
    skip "a sharded v2 model" "ZT_CORPUS_V2_DIR not set"
fi

# ---- an object safetensors cannot express: that file fails by name, the rest comes
rc=0
"$ZT" pull --format safetensors --quiet "$O_URL/v1/files/bad/" -o "$T/bad" 2>"$T/b.err" || rc=$?
check_eq "bad/: exit 1" "$rc" 1
check_match "bad/: the message names the file and the object" "$(cat "$T/b.err")" \
    'bad\.safetensors: .*object "w\.q" cannot be written as safetensors'
check_eq "bad/: the other files written, no index, no staging left" \
    "$(cd "$T/bad" && find . -mindepth 1 -not -path "./.ztpull-record*" | sort | tr '\n' ' ')" "./config.json ./good.safetensors "
check_eq "bad/: the loader reads good.safetensors" \
    "$($PY "$LOAD" "$T/bad" w.a=F32:300x1000:"$T/a.bin")" "OK 1"

finish
