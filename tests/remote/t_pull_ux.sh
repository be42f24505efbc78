#!/usr/bin/env bash
# zt pull and zt get with the habits of hf download (issue 26 section 3), against
# a real ztensord on 127.0.0.1: --include/--exclude select file names (globs,
# as hf download), --tensors/--exclude-tensors select objects, and a
# selection that matches nothing is exit status 2 naming its pattern, never
# an empty file; every unknown option is named.
. "$(dirname "$0")/lib.sh" "$@"

root=$T/root
mkdir -p "$root"
bash "$(dirname "$0")/../demo/make-demo.sh" "$ZT" "$root" >/dev/null || bad "make-demo.sh"
"$ZT" convert "$root/tiny.zt" -o "$root/tiny.safetensors" >/dev/null 2>&1 || bad "zt convert"
start_daemon "$root" || rfinish

# tree DIR: the files below DIR, sorted, one line each, as "NAME SIZE" (not the
# record of complete pulls, .ztpull-record/).
tree() { (cd "$1" 2>/dev/null && find . -name .ztpull-record -prune -o -type f -printf '%P %s\n' | sort); }
# zpull OUT ARGS...: zt pull --quiet into OUT; exit status in $rc, stderr in $T/err.
zpull() {
    local out=$1
    shift
    "$ZT" pull --quiet "$@" -o "$out" >/dev/null 2>"$T/err"
    rc=$?
}

note "--include/--exclude select file names"
zpull "$T/s1" "$URL/v1/files/" --include '*.safetensors'
check_eq "--include '*.safetensors': exit 0" "$rc" 0
check_eq "--include '*.safetensors': only that file, whole" "$(tree "$T/s1")" \
    "tiny.safetensors $(stat -c %s "$root/tiny.safetensors")"
cmp -s "$T/s1/tiny.safetensors" "$root/tiny.safetensors" && ok "byte-exact" || bad "byte-exact"
zpull "$T/s2" "$URL/v1/files/" --include 'llama/*'
check_eq "--include 'llama/*': the file below llama/" "$(tree "$T/s2" | cut -d' ' -f1)" "llama/model-00001.zt"
zpull "$T/s3" "$URL/v1/files/" --exclude '*.safetensors' --exclude 'llama/*'
check_eq "--exclude twice: the one other file" "$(tree "$T/s3" | cut -d' ' -f1)" "tiny.zt"
zpull "$T/s4" "$URL/v1/files/" --include '*.gguf'
check_eq "--include matching no file: exit status 2" "$rc" 2
check_match "the message names the pattern" "$(cat "$T/err")" "--include '\*\.gguf'"
check_eq "nothing written" "$(tree "$T/s4")" ""
zpull "$T/s5" "$URL/v1/files/tiny.zt" --exclude 'tiny*'
check_eq "a file URL excluded: exit status 2" "$rc" 2
check_match "the message names the pattern" "$(cat "$T/err")" "--exclude 'tiny\*'"

note "--tensors/--exclude-tensors select objects"
zpull "$T/t1" "$URL/v1/files/tiny.zt" --tensors 'layers.*'
check_eq "--tensors 'layers.*': exit 0" "$rc" 0
check_eq "exactly the matching objects" \
    "$("$ZT" info --json "$T/t1/tiny.zt" | $PY -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["objects"])))')" \
    "layers.0.attn.q_proj.bias layers.0.attn.q_proj.weight"
zpull "$T/t2" "$URL/v1/files/" --include '*.zt' --tensors 'nothing.*'
check_eq "--tensors matching no object: exit status 2" "$rc" 2
check_match "the message names the pattern" "$(cat "$T/err")" "--tensors 'nothing\.\*'"
check_eq "no empty file written" "$(tree "$T/t2" | grep -v '\.ztsel' || true)" ""
zpull "$T/t3" "$URL/v1/files/tiny.zt" --exclude-tensors '*'
check_eq "--exclude-tensors '*': exit status 2" "$rc" 2
check_match "the message names the pattern" "$(cat "$T/err")" "--exclude-tensors '\*'"

note "output naming: zt get -o -, zt pull URL/file.zt -o name.zt"
"$ZT" get "$root/tiny.zt" embed.weight >"$T/want.bin" || bad "zt get of the local file"
(cd "$T" && "$ZT" get "$URL/v1/files/tiny.zt" embed.weight -o - >"$T/got.bin" 2>"$T/err")
check_eq "zt get -o -: exit 0" "$?" 0
cmp -s "$T/got.bin" "$T/want.bin" && ok "zt get -o -: the bytes on stdout" || bad "zt get -o -: the bytes on stdout"
check "zt get -o -: no file named -" test ! -e "$T/-"
mkdir -p "$T/n1"
zpull "$T/n1/name.zt" "$URL/v1/files/tiny.zt"
check_eq "zt pull URL/tiny.zt -o DIR/name.zt: exit 0" "$rc" 0
check "that file is written" test -f "$T/n1/name.zt"
cmp -s "$T/n1/name.zt" "$root/tiny.zt" && ok "name.zt: byte-exact" || bad "name.zt: byte-exact"
check_eq "nothing else there" "$(tree "$T/n1" | cut -d' ' -f1)" "name.zt"
zpull "$T/n1/name.zt" "$URL/v1/files/tiny.zt"
check_eq "a second pull to the file: exit 0 (complete)" "$rc" 0
zpull "$T/n2" "$URL/v1/files/tiny.zt"
check_eq "-o DIR without the suffix stays a directory" "$(tree "$T/n2" | cut -d' ' -f1)" "tiny.zt"
mkdir -p "$T/n3/d.zt"
zpull "$T/n3/d.zt" "$URL/v1/files/tiny.zt"
check_eq "an existing directory named d.zt stays a directory" "$(tree "$T/n3" | cut -d' ' -f1)" "d.zt/tiny.zt"

note "unknown options are named"
"$ZT" pull --bogus-flag "$URL/v1/files/tiny.zt" -o "$T/u1" 2>"$T/err"
check_eq "zt pull --bogus-flag: exit status 2" "$?" 2
check_match "zt pull names it" "$(cat "$T/err")" "--bogus-flag"
for cmd in "get $URL/v1/files/tiny.zt embed.weight" "info $URL/v1/files/tiny.zt"; do
    "$ZT" ${cmd%% *} --bogus-flag ${cmd#* } >/dev/null 2>"$T/err"
    check_eq "zt ${cmd%% *} --bogus-flag: exit status 2" "$?" 2
    check_match "zt ${cmd%% *} names it" "$(cat "$T/err")" "unknown option.*--bogus-flag"
done

note "one token variable for every subcommand: ZT_TOKEN (ZT_REMOTE_TOKEN its alias), --token"
tok=r3ad-t0ken-for-ux-tests
printf 'read  %s\n' "$tok" >"$T/tokens"
start_daemon "$root" --tokens-file "$T/tokens" --require-read-token || rfinish
F=$URL/v1/files/tiny.zt
"$ZT" get "$root/tiny.zt" embed.weight >"$T/want.bin" || bad "zt get of the local file"
"$ZT" get "$F" embed.weight >/dev/null 2>"$T/err"
check_eq "zt get, no token: exit status 3" "$?" 3
"$ZT" get --token "$tok" "$F" embed.weight >"$T/got.bin" 2>"$T/err"
check_eq "zt get --token T URL NAME: exit 0" "$?" 0
cmp -s "$T/got.bin" "$T/want.bin" && ok "zt get --token: the bytes" || bad "zt get --token: the bytes"
ZT_TOKEN=$tok "$ZT" get "$F" embed.weight >"$T/got2.bin" 2>"$T/err"
check_eq "ZT_TOKEN: zt get" "$?" 0
ZT_TOKEN=$tok "$ZT" info "$F" >/dev/null 2>"$T/err"
check_eq "ZT_TOKEN: zt info" "$?" 0
ZT_REMOTE_TOKEN=$tok "$ZT" pull --quiet "$F" -o "$T/tk1" 2>"$T/err"
check_eq "ZT_REMOTE_TOKEN (the alias): zt pull" "$?" 0
ZT_REMOTE_TOKEN=$tok "$ZT" get "$F" embed.weight >/dev/null 2>"$T/err"
check_eq "ZT_REMOTE_TOKEN (the alias): zt get" "$?" 0

rfinish
