#!/usr/bin/env bash
# Generates the demo directory served by the README's run command:
#   make-demo.sh ZT_BINARY OUT_DIR
# Deterministic bytes (from a fixed seed), a few dtypes, a zstd file, a file in
# a subdirectory and a name that needs percent-encoding.
set -euo pipefail
zt=$1 out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out/llama"
gen() { # gen SEED BYTES FILE
  (set +o pipefail; openssl enc -aes-128-ctr -nosalt -pass "pass:$1" -pbkdf2 </dev/zero 2>/dev/null |
    head -c "$2" >"$3")
}
gen a $((4096 * 4)) "$work/embed.bin"
gen b $((64 * 64 * 2)) "$work/q.bin"
gen c 64 "$work/bias.bin"
head -c $((1024 * 1024)) /dev/zero >"$work/zeros.bin"
"$zt" pack -o "$out/tiny.zt" \
  "embed.weight=f32:64x64:$work/embed.bin" \
  "layers.0.attn.q_proj.weight=bf16:64x64:$work/q.bin" \
  "layers.0.attn.q_proj.bias=f32:16:$work/bias.bin" \
  "odd name/with?chars=u8:64:$work/bias.bin"
"$zt" pack --compress --digest crc32c -o "$out/llama/model-00001.zt" \
  "zeros=f32:512x512:$work/zeros.bin" "embed=f32:64x64:$work/embed.bin"
echo "demo directory: $out"
