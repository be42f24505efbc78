#!/bin/bash
# run_corpus.sh ZT CORPUS_DIR
#
# Runs the `zt` CLI over the corpus written by gen_corpus:
#  accept/NAME.zt  `zt verify` exits 0; `zt info` and `zt info --json` exit 0,
#                  the JSON parses and names every expected object/component;
#                  `zt get` of every component listed in NAME.expect returns
#                  exactly the bytes in the listed file.
#  reject/NAME.zt  `zt verify` exits 1 within 1 second (a timeout or a crash
#                  is a failure) and its output contains the code in NAME.why
#                  (any of "A|B"); with NAME.opens, `zt info` exits 0 and
#                  verify prints exactly one problem line, and `zt get` exits
#                  as listed; without it `zt info` exits 1.
#  NAME.info       (optional) lines that `zt info NAME.zt` must print.
#  NAME.companion  NAME.zt is not a case but a file another case needs (a
#                  v2 shard beside its root): skipped.
# Then, for the 1.x corpus, a few CLI behaviours, and timings on the
# 100,000-object file. The v2 corpus (gen_corpus_v2) runs through here too.
# Last line: "N passed, M failed"; exit status 1 when M > 0.
set -u

if [ $# -ne 2 ]; then
    echo "usage: run_corpus.sh ZT CORPUS_DIR" >&2
    exit 2
fi
ZT=$1
DIR=$2
ACC=$DIR/accept
REJ=$DIR/reject

pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
# check DESCRIPTION COMMAND...: passes when the command succeeds
check() {
    local what=$1
    shift
    if "$@"; then ok; else bad "$what"; fi
}

# Under ASan/UBSan a report would exit 1, the same as "invalid file": give
# sanitizer reports their own exit codes so no reject case can hide one.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87:print_stacktrace=1"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/zt_corpus.XXXXXX") || exit 3
trap 'rm -rf "$TMP"' EXIT

PY=
if [ -x /usr/bin/python3 ]; then
    PY=/usr/bin/python3
elif command -v python3 >/dev/null 2>&1; then
    PY=$(command -v python3)
fi
HAVE_JQ=0
command -v jq >/dev/null 2>&1 && HAVE_JQ=1

# json_ok JSONFILE EXPECTFILE [COUNT]: the JSON parses; every object and
# component named in EXPECTFILE is there; the object count is COUNT if given.
json_ok() {
    if [ -n "$PY" ]; then
        "$PY" - "$@" <<'PYEOF'
import json, sys
with open(sys.argv[1], 'rb') as f:
    doc = json.loads(f.read().decode('utf-8'))
objs = doc.get('objects')
if not isinstance(objs, dict):
    sys.exit('no "objects" map in the JSON')
with open(sys.argv[2], 'rb') as f:
    for line in f.read().decode('utf-8').split('\n'):
        if not line:
            continue
        name, role, _ = line.split('\t')
        if name not in objs:
            sys.exit('object %r missing from the JSON' % name[:80])
        if role not in objs[name].get('components', {}):
            sys.exit('component %r of %r missing from the JSON' % (role, name[:80]))
if len(sys.argv) > 3 and len(objs) != int(sys.argv[3]):
    sys.exit('JSON has %d objects, expected %s' % (len(objs), sys.argv[3]))
PYEOF
    elif [ $HAVE_JQ = 1 ]; then
        jq -e '.objects | type == "object"' "$1" >/dev/null
    else
        echo "note: neither python3 nor jq: JSON only checked to be non-empty" >&2
        [ -s "$1" ]
    fi
}

# json_values JSONFILE CHECKFILE: each line JSON-POINTER<TAB>VALUE of
# CHECKFILE holds in JSONFILE ("!absent": the key does not exist).
json_values() {
    "$PY" - "$@" <<'PYEOF'
import json, sys
with open(sys.argv[1], 'rb') as f:
    doc = json.loads(f.read().decode('utf-8'))
bad = 0
with open(sys.argv[2], 'rb') as f:
    for line in f.read().decode('utf-8').split('\n'):
        if not line:
            continue
        ptr, want = line.split('\t', 1)
        node, found = doc, True
        for tok in ptr.split('/')[1:]:
            tok = tok.replace('~1', '/').replace('~0', '~')
            if isinstance(node, dict) and tok in node:
                node = node[tok]
            else:
                found = False
                break
        if want == '!absent':
            if found:
                print('%s: present (%r), must be absent' % (ptr, node))
                bad += 1
        elif not found:
            print('%s: missing, want %s' % (ptr, want))
            bad += 1
        else:
            w = json.loads(want)
            if node != w or type(node) is not type(w) and not (
                    isinstance(node, (int, float)) and isinstance(w, (int, float))
                    and not isinstance(node, bool) and not isinstance(w, bool)):
                print('%s: got %s, want %s' % (ptr, json.dumps(node), want))
                bad += 1
sys.exit(1 if bad else 0)
PYEOF
}

now_ms() { date +%s%3N; }

shopt -s nullglob
acc_files=("$ACC"/*.zt)
rej_files=("$REJ"/*.zt)
if [ ${#acc_files[@]} -eq 0 ] || [ ${#rej_files[@]} -eq 0 ]; then
    bad "no corpus in $DIR (run gen_corpus first)"
    echo "$pass passed, $fail failed"
    exit 1
fi

# ------------------------------------------------------------------ accept
for f in "${acc_files[@]}"; do
    base=${f%.zt}
    name=${base##*/}
    [ -f "$base.companion" ] && continue
    out=$(timeout 120 "$ZT" verify "$f" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && [[ $out == *": ok"* ]]; then ok; else
        bad "accept/$name: zt verify exit $rc: $(printf '%s' "$out" | head -c 400)"
    fi
    timeout 120 "$ZT" info "$f" >"$TMP/info.txt" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 0 ]; then ok; else bad "accept/$name: zt info exit $rc: $(head -c 300 "$TMP/err")"; fi
    if [ -f "$base.info" ]; then
        while IFS= read -r line; do
            if grep -qF -- "$line" "$TMP/info.txt"; then ok; else
                bad "accept/$name: zt info does not print \"$line\": $(head -c 300 "$TMP/info.txt")"
            fi
        done <"$base.info"
    fi
    timeout 120 "$ZT" info --json "$f" >"$TMP/info.json" 2>"$TMP/err"
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "accept/$name: zt info --json exit $rc: $(head -c 300 "$TMP/err")"
    elif json_ok "$TMP/info.json" "$base.expect" >"$TMP/jerr" 2>&1; then ok; else
        bad "accept/$name: zt info --json: $(tail -c 300 "$TMP/jerr")"
    fi
    if [ -f "$base.json" ] && [ -n "$PY" ]; then
        if json_values "$TMP/info.json" "$base.json" >"$TMP/jerr" 2>&1; then ok; else
            bad "accept/$name: zt info --json values: $(tail -c 600 "$TMP/jerr")"
        fi
    fi
    k=0
    while IFS= read -r line; do
        obj=${line%%$'\t'*}
        rest=${line#*$'\t'}
        comp=${rest%%$'\t'*}
        rel=${rest#*$'\t'}
        rm -f "$TMP/out"
        # alternate between -o OUT and standard output
        if [ $((k % 2)) -eq 0 ]; then
            timeout 60 "$ZT" get "$f" "$obj" "$comp" -o "$TMP/out" 2>"$TMP/err"
        else
            timeout 60 "$ZT" get "$f" "$obj" "$comp" >"$TMP/out" 2>"$TMP/err"
        fi
        rc=$?
        k=$((k + 1))
        if [ $rc -ne 0 ]; then
            bad "accept/$name: zt get '${obj:0:80}' $comp exit $rc: $(head -c 300 "$TMP/err")"
        elif cmp -s "$TMP/out" "$ACC/$rel"; then ok; else
            bad "accept/$name: zt get '${obj:0:80}' $comp: bytes differ from $rel"
        fi
    done <"$base.expect"
done

# ------------------------------------------------------------------ reject
for f in "${rej_files[@]}"; do
    base=${f%.zt}
    name=${base##*/}
    [ -f "$base.companion" ] && continue
    why=$(cat "$base.why")
    out=$(timeout 1 "$ZT" verify "$f" 2>&1)
    rc=$?
    if [ $rc -ne 1 ]; then
        case $rc in
        124) what="timed out (1 s)" ;;
        0) what="was accepted" ;;
        86 | 87) what="sanitizer report (exit $rc)" ;;
        *) if [ $rc -ge 128 ]; then what="crashed (exit $rc)"; else what="exit $rc"; fi ;;
        esac
        bad "reject/$name: zt verify $what, want exit 1 with $why: $(printf '%s' "$out" | head -c 300)"
        continue
    fi
    found=0
    IFS='|' read -r -a alts <<<"$why"
    for code in "${alts[@]}"; do
        [[ $out == *"$code"* ]] && found=1
    done
    if [ $found = 1 ]; then ok; else
        bad "reject/$name: want $why, got: $(printf '%s' "$out" | head -c 300)"
    fi
    if [ -f "$base.opens" ]; then
        timeout 5 "$ZT" info "$f" >/dev/null 2>"$TMP/err"
        rc=$?
        if [ $rc -eq 0 ]; then ok; else bad "reject/$name: must open, zt info exit $rc: $(head -c 300 "$TMP/err")"; fi
        nl=$(printf '%s\n' "$out" | grep -c .)
        if [ "$nl" -eq 1 ]; then ok; else bad "reject/$name: verify printed $nl lines for one problem"; fi
        while IFS= read -r line; do
            obj=${line%%$'\t'*}
            rest=${line#*$'\t'}
            comp=${rest%%$'\t'*}
            want=${rest#*$'\t'}
            timeout 5 "$ZT" get "$f" "$obj" "$comp" >/dev/null 2>"$TMP/err"
            rc=$?
            if [ $rc -eq "$want" ]; then ok; else
                bad "reject/$name: zt get $obj $comp exit $rc, want $want: $(head -c 300 "$TMP/err")"
            fi
        done <"$base.opens"
    else
        timeout 1 "$ZT" info "$f" >/dev/null 2>"$TMP/err"
        rc=$?
        if [ $rc -eq 1 ]; then ok; else bad "reject/$name: zt info exit $rc, want 1"; fi
    fi
done

# ------------------------------------------------------------ CLI behaviour
G1=$ACC/dtype_f32.zt
G2=$ACC/sparse.zt
if [ ! -f "$G2" ]; then # the v2 corpus: its cases above are all there is
    echo "$pass passed, $fail failed"
    [ $fail -eq 0 ]
    exit
fi
B1=$REJ/digest_mismatch_sha256.zt
B2=$REJ/cbor_depth_65.zt

out=$("$ZT" verify "$G1" "$G2" 2>&1)
rc=$?
check "zt verify GOOD GOOD: exit $rc, want 0" test $rc -eq 0
check "zt verify GOOD GOOD: want 2 ok lines: $out" test "$(printf '%s\n' "$out" | grep -c ': ok')" -eq 2

out=$("$ZT" verify "$G1" "$B1" "$G2" "$B2" 2>&1)
rc=$?
check "zt verify GOOD BAD GOOD BAD: exit $rc, want 1" test $rc -eq 1
check "zt verify GOOD BAD GOOD BAD: names both bad files: $out" \
    bash -c '[[ $1 == *"$2"*ZT_E_DIGEST_MISMATCH* && $1 == *"$3"*ZT_E_DEPTH* ]]' _ "$out" "$B1" "$B2"

"$ZT" verify "$TMP/does-not-exist.zt" >/dev/null 2>&1
rc=$?
check "zt verify MISSING: exit $rc, want 3" test $rc -eq 3
"$ZT" verify >/dev/null 2>&1
rc=$?
check "zt verify (no file): exit $rc, want 2" test $rc -eq 2
"$ZT" info "$TMP/does-not-exist.zt" >/dev/null 2>&1
rc=$?
check "zt info MISSING: exit $rc, want 3" test $rc -eq 3
"$ZT" get "$G1" >/dev/null 2>&1
rc=$?
check "zt get FILE (no object): exit $rc, want 2" test $rc -eq 2

"$ZT" get "$G1" no-such-object >/dev/null 2>&1
rc=$?
check "zt get unknown object: exit $rc, want 1" test $rc -eq 1
"$ZT" get "$G1" t no-such-component >/dev/null 2>&1
rc=$?
check "zt get unknown component: exit $rc, want 1" test $rc -eq 1
"$ZT" get "$G1" t >"$TMP/default" 2>/dev/null
rc=$?
"$ZT" get "$G1" t data >"$TMP/explicit" 2>/dev/null
check "zt get default component is data" bash -c "[ $rc -eq 0 ] && cmp -s '$TMP/default' '$TMP/explicit' && [ -s '$TMP/default' ]"
"$ZT" get "$B2" x >/dev/null 2>"$TMP/err"
rc=$?
check "zt get on an invalid file: exit $rc, want 1" test $rc -eq 1

for v in version_minor_newer version_minor_2digit; do
    "$ZT" info "$ACC/$v.zt" >/dev/null 2>"$TMP/err"
    rc=$?
    check "zt info $v: exit $rc, want 0" test $rc -eq 0
    check "zt info $v: warns about the newer minor version on stderr" grep -qi warn "$TMP/err"
done
"$ZT" info "$ACC/dtype_f32.zt" >/dev/null 2>"$TMP/err"
check "zt info of a 1.2.0 file prints no warning" test ! -s "$TMP/err"

# -o writes through a rename: no temporary files are left behind
mkdir -p "$TMP/outdir"
"$ZT" get "$G1" t -o "$TMP/outdir/t.bin" 2>/dev/null
check "zt get -o: only the finished output is left: $(ls "$TMP/outdir" | tr '\n' ' ')" \
    test "$(ls "$TMP/outdir")" = "t.bin"
"$ZT" get "$REJ/zstd_lie_more.zt" bad -o "$TMP/outdir/lie.bin" >/dev/null 2>&1
rc=$?
check "zt get -o on a length lie: exit $rc want 1, no output file" \
    bash -c "[ $rc -eq 1 ] && [ ! -e '$TMP/outdir/lie.bin' ] && [ \"\$(ls '$TMP/outdir')\" = t.bin ]"

# ------------------------------------------------------------- performance
PERF=$ACC/perf_100k.zt
if [ -f "$PERF" ]; then
    t0=$(now_ms)
    "$ZT" verify "$PERF" >/dev/null 2>&1
    rc=$?
    t1=$(now_ms)
    check "perf: zt verify perf_100k exit $rc" test $rc -eq 0
    "$ZT" info "$PERF" >/dev/null 2>&1
    t2=$(now_ms)
    "$ZT" info --json "$PERF" >"$TMP/perf.json" 2>/dev/null
    rc=$?
    t3=$(now_ms)
    check "perf: zt info --json perf_100k exit $rc" test $rc -eq 0
    "$ZT" get "$PERF" last >/dev/null 2>&1
    t4=$(now_ms)
    check "perf: perf_100k JSON parses and has 100001 objects" \
        json_ok "$TMP/perf.json" "$ACC/perf_100k.expect" 100001
    echo "timing: perf_100k.zt ($(stat -c %s "$PERF") bytes, 100001 objects):" \
        "verify $((t1 - t0)) ms, info $((t2 - t1)) ms, info --json $((t3 - t2)) ms," \
        "get of one object $((t4 - t3)) ms (whole process each)"
fi
SPARSE=$REJ/footer_size_100MiB_sparse_file.zt
if [ -f "$SPARSE" ]; then
    t0=$(now_ms)
    "$ZT" verify "$SPARSE" >/dev/null 2>&1
    t1=$(now_ms)
    echo "timing: 101 MiB sparse file declaring a 100 MiB manifest: verify $((t1 - t0)) ms"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
