#!/usr/bin/env bash
# zt pull s3://BUCKET/PREFIX against moto (moto_server, the reference S3 of
# the python3 on PATH, filled with boto3 by s3fill.py): a model directory (a
# .zt, config.json with a SHA256 checksum, tokenizer.json with its MD5 ETag)
# pulled byte-exact; a second pull skips every file; pagination with
# --s3-max-keys 2 over 4 pages; a relay that flips a byte fails the pull and
# publishes nothing (one flip is fetched again and passes); keys that would
# leave DIR are refused; a missing bucket and bad credentials fail clearly.
# Signatures are checked independently twice: sigcheck.py recomputes each
# with botocore from the canonical form AWS uses (keys and a prefix with
# characters SigV4 escapes), and a second moto runs in auth mode
# (INITIAL_NO_AUTH_ACTION_COUNT), which checks them too (its own check gets a
# %2F in a query wrong, so the pull there lists a whole bucket).
. "$(dirname "$0")/lib.sh" "$@"

. "$REMOTE_DIR/../sh/s3.sh"

# The model: a .zt from zt pack, and two JSON files.
model=$T/model
mkdir -p "$model"
rand "$T/w.raw" $((3 * 1024 * 1024))
rand "$T/e.raw" 4096
pack "$model/model.zt" w=u8:$((3 * 1024 * 1024)):"$T/w.raw" e=f32:1024:"$T/e.raw"
printf '{"architectures":["Llama"],"hidden_size":64}\n' >"$model/config.json"
text "$model/tokenizer.json" 70000

start_moto MP || rfinish
EP=http://127.0.0.1:$MP
$FILL "$EP" put models llama/ "$model" --sha256 config.json --create || bad "s3fill put"
mkdir -p "$T/many"
for i in 1 2 3 4 5 6 7; do text "$T/many/f$i.txt" $((100 * i)); done
$FILL "$EP" put models many/ "$T/many" || bad "s3fill put many"

note "zt pull s3:// of a model directory"
out=$T/out
"$ZT" pull "s3://models/llama/" -o "$out" --s3-endpoint "$EP" --json >"$T/p1.json" 2>"$T/p1.err"
check_eq "exit status 0" $? 0
for f in model.zt config.json tokenizer.json; do
    cmp -s "$model/$f" "$out/$f" && ok "$f byte-exact" || bad "$f byte-exact" "$(cat "$T/p1.err")"
done
check_match "3 files; the .zt's components and both JSON files verified" "$(cat "$T/p1.json")" \
    '"files":3,"failed":0,"skipped":0.*"components_verified":4,"components_unverified":0'
"$ZT" verify "$out/model.zt" >/dev/null 2>&1 && ok "zt verify passes" || bad "zt verify passes"
[ -z "$(find "$out" -name '*.ztpart' -o -name '*.ztpull')" ] && ok "no partial or state file left" ||
    bad "no partial or state file left" "$(ls -la "$out")"

note "a second pull skips every file"
"$ZT" pull "s3://models/llama/" -o "$out" --s3-endpoint "$EP" --json >"$T/p2.json" 2>"$T/p2.err"
check_eq "exit status 0" $? 0
check_match "all 3 skipped, nothing fetched" "$(cat "$T/p2.json")" '"files":3,"failed":0,"skipped":3,"bytes":[0-9]+,"fetched":0,'
echo '{}' >"$out/config.json"
"$ZT" pull "s3://models/llama/" -o "$out" --s3-endpoint "$EP" --json >"$T/p3.json" 2>&1
check_match "a file written locally is pulled again" "$(cat "$T/p3.json")" '"skipped":2,'
cmp -s "$model/config.json" "$out/config.json" && ok "config.json restored" || bad "config.json restored"

note "kill -9 during a .zt's pull, then the same command resumes"
MiB=$((1 << 20))
big=$T/big
mkdir -p "$big"
specs=()
for i in 1 2 3 4 5 6 7 8; do
    rand "$T/c$i.raw" $((2 * MiB))
    specs+=("c$i=u8:$((2 * MiB)):$T/c$i.raw")
done
pack "$big/big.zt" "${specs[@]}" || bad "pack big.zt"
$FILL "$EP" put models big/ "$big" || bad "s3fill put big"
"$ZT" pull "s3://models/big/" -o "$T/bo" --s3-endpoint "$EP" --connections 1 --chunk-size 256K \
    --quiet >/dev/null 2>&1 &
pid=$!
for i in $(seq 1 3000); do # 30 s at most: until a verified component is recorded
    grep -q '^c ' "$T/bo/big.zt.ztpull" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ -e "$T/bo/big.zt" ]; then
    note "SKIP the kill came after the pull ended (a fast machine)"
else
    grep -q '^c ' "$T/bo/big.zt.ztpull" && ok "killed with components recorded verified" ||
        bad "killed with components recorded verified"
    "$ZT" pull "s3://models/big/" -o "$T/bo" --s3-endpoint "$EP" --json >"$T/bo.json" 2>"$T/bo.err"
    check_eq "the same command: exit status 0" $? 0
    check_match "it resumed: bytes recorded earlier not fetched again" "$(cat "$T/bo.json")" \
        '"resumed":[1-9][0-9]*,'
    cmp -s "$big/big.zt" "$T/bo/big.zt" && ok "byte-exact" || bad "byte-exact" "$(cat "$T/bo.err")"
fi

note "the environment: AWS_ENDPOINT_URL, one object, -o naming it"
AWS_ENDPOINT_URL=$EP "$ZT" pull "s3://models/llama/config.json" -o "$T/one/cfg.json" --quiet
check_eq "exit status 0" $? 0
cmp -s "$model/config.json" "$T/one/cfg.json" && ok "s3://BUCKET/KEY -o FILE byte-exact" ||
    bad "s3://BUCKET/KEY -o FILE byte-exact" "$(ls -la "$T/one" 2>&1)"

note "pagination: --s3-max-keys 2 over 7 keys"
before=$(grep 'list-type=2' "$T/moto-$MP.log" | grep -c 'continuation-token=')
"$ZT" pull "s3://models/many/" -o "$T/many-out" --s3-endpoint "$EP" --s3-max-keys 2 --quiet
check_eq "exit status 0" $? 0
n=0
for i in 1 2 3 4 5 6 7; do cmp -s "$T/many/f$i.txt" "$T/many-out/f$i.txt" && n=$((n + 1)); done
check_eq "7 files byte-exact" "$n" 7
after=$(grep 'list-type=2' "$T/moto-$MP.log" | grep -c 'continuation-token=')
check_eq "3 pages after the first, each with its continuation token" $((after - before)) 3
grep 'list-type=2' "$T/moto-$MP.log" | grep -q 'max-keys=2' && ok "max-keys=2 asked" ||
    bad "max-keys=2 asked"

note "a relay that flips bytes: the pull fails, nothing is published"
start_relay "$MP" flip 1
"$ZT" pull "s3://models/llama/" -o "$T/flip" --s3-endpoint "http://127.0.0.1:$RPORT" \
    --include config.json --quiet 2>"$T/flip.err"
check_eq "config.json (SHA256 checksum): exit status 1" $? 1
check_match "the message says which checksum failed" "$(cat "$T/flip.err")" \
    'ZT_E_DIGEST_MISMATCH: the 45 bytes received hash to [0-9a-f]{64} \(sha256\), the store says x-amz-checksum-sha256 '
start_relay "$MP" flip 1
"$ZT" pull "s3://models/llama/" -o "$T/flip" --s3-endpoint "http://127.0.0.1:$RPORT" \
    --include tokenizer.json --quiet 2>"$T/flip2.err"
check_eq "tokenizer.json (MD5 ETag): exit status 1" $? 1
check_match "the message names the ETag" "$(cat "$T/flip2.err")" \
    'hash to [0-9a-f]{32} \(MD5\), the store says the ETag "[0-9a-f]{32}" \(MD5\)'
start_relay "$MP" flip 1
"$ZT" pull "s3://models/llama/" -o "$T/flip" --s3-endpoint "http://127.0.0.1:$RPORT" \
    --include model.zt --quiet 2>"$T/flip3.err"
rc=$?
[ $rc -ne 0 ] && ok "model.zt: a nonzero exit ($rc)" || bad "model.zt: a nonzero exit"
[ -z "$(ls -A "$T/flip" 2>/dev/null | grep -v '\.ztpull$\|\.ztpart$')" ] && ok "nothing published" ||
    bad "nothing published" "$(ls -la "$T/flip")"
[ -z "$(ls -A "$T/flip" 2>/dev/null | grep '\.json')" ] && ok "no partial JSON file left" ||
    bad "no partial JSON file left" "$(ls -la "$T/flip")"
start_relay "$MP" flipone 1
"$ZT" pull "s3://models/llama/" -o "$T/flip1" --s3-endpoint "http://127.0.0.1:$RPORT" \
    --include tokenizer.json --json >"$T/flip1.json" 2>&1
check_eq "one flipped answer: fetched again, exit status 0" $? 0
check_match "one retry counted" "$(cat "$T/flip1.json")" '"retries":1,'
cmp -s "$model/tokenizer.json" "$T/flip1/tokenizer.json" && ok "then byte-exact" ||
    bad "then byte-exact"
stop_relay

note "hostile keys are refused before anything is written"
$FILL "$EP" key models 'evil/ok.json' '{}' &&
    $FILL "$EP" key models 'evil/../escape.json' '{}' || bad "s3fill key"
"$ZT" pull "s3://models/evil/" -o "$T/evil/in" --s3-endpoint "$EP" --quiet 2>"$T/evil.err"
rc=$?
[ $rc -ne 0 ] && ok "a key with '..': nonzero exit ($rc)" || bad "a key with '..': nonzero exit"
check_match "named" "$(cat "$T/evil.err")" 'refusing the listed key "evil/../escape.json"'
[ ! -e "$T/evil/escape.json" ] && [ -z "$(ls -A "$T/evil/in" 2>/dev/null)" ] &&
    ok "nothing written, inside or outside" || bad "nothing written" "$(find "$T/evil")"
$FILL "$EP" key models 'back/a\b.json' '{}' || bad "s3fill key"
"$ZT" pull "s3://models/back/" -o "$T/back" --s3-endpoint "$EP" --quiet 2>"$T/back.err"
[ $? -ne 0 ] && ok "a key with a backslash: nonzero exit" || bad "a key with a backslash refused"

note "clear errors: a missing bucket, a missing prefix"
"$ZT" pull "s3://no-such-bucket/x/" -o "$T/nb" --s3-endpoint "$EP" 2>"$T/nb.err"
check_eq "missing bucket: exit status 3" $? 3
check_match "S3's code named" "$(cat "$T/nb.err")" 'HTTP 404: NoSuchBucket: The specified bucket does not exist'
"$ZT" pull "s3://models/nothing/" -o "$T/np" --s3-endpoint "$EP" 2>"$T/np.err"
check_eq "an empty prefix: exit status 1" $? 1
check_match "said" "$(cat "$T/np.err")" 'no object under this prefix'

note "signatures recomputed by botocore from the canonical form AWS uses (sigcheck.py)"
# Keys and a prefix with characters SigV4 escapes: ' ', '+', '&', '%', '~', UTF-8.
weird=$T/weird
mkdir -p "$weird/sub dir"
cp "$model/model.zt" "$weird/sub dir/m+1 é.zt"
printf '{"a":"%%"}\n' >"$weird/sub dir/x&y~%.json"
$FILL "$EP" put models 'we ird/p+q/' "$weird" --sha256 'sub dir/x&y~%.json' || bad "s3fill put weird"
# start_sigcheck SECRET [TOKEN]: sigcheck.py (python3 on PATH: botocore) in front of
# moto; sets SPORT.
SC_PIDS=()
start_sigcheck() {
    local i
    rm -f "$T/sc.port"
    "$S3PY" "$REMOTE_DIR/sigcheck.py" "$MP" "$T/sc.port" "$T/sc.log" test "$@" &
    SC_PIDS+=($!)
    for i in $(seq 1 100); do [ -s "$T/sc.port" ] && break; sleep 0.1; done
    SPORT=$(cat "$T/sc.port" 2>/dev/null)
    [ -n "$SPORT" ] || bad "sigcheck.py starts"
}
stop_sigchecks() { local p; for p in "${SC_PIDS[@]}"; do kill "$p" 2>/dev/null; done; }
at_exit stop_sigchecks
start_sigcheck test
: >"$T/sc.log"
"$ZT" pull "s3://models/we ird/p+q/" -o "$T/weird-out" --s3-endpoint "http://127.0.0.1:$SPORT" \
    --quiet 2>"$T/sc.err"
check_eq "exit status 0" $? 0
cmp -s "$model/model.zt" "$T/weird-out/sub dir/m+1 é.zt" && cmp -s "$weird/sub dir/x&y~%.json" \
    "$T/weird-out/sub dir/x&y~%.json" && ok "both byte-exact" || bad "both byte-exact" "$(cat "$T/sc.err")"
n_ok=$(grep -c -- '-> ok$' "$T/sc.log")
[ "$n_ok" -ge 5 ] && ! grep -q -- '-> bad' "$T/sc.log" &&
    ok "every request's signature matches ($n_ok: the listing, HEAD, GET, the .zt's ranges)" ||
    bad "every request's signature matches" "$(cat "$T/sc.log")"
grep -q 'prefix=we%20ird%2Fp%2Bq%2F' "$T/sc.log" && ok "the prefix escaped as SigV4 wants it" ||
    bad "the prefix escaped as SigV4 wants it" "$(head -2 "$T/sc.log")"
stop_sigchecks
start_sigcheck another-secret
"$ZT" pull "s3://models/we ird/p+q/" -o "$T/weird-bad" --s3-endpoint "http://127.0.0.1:$SPORT" \
    2>"$T/sc2.err"
check_eq "sigcheck.py refuses a signature made with another secret: exit status 3" $? 3
check_match "named" "$(cat "$T/sc2.err")" 'HTTP 403: SignatureDoesNotMatch: sigcheck.py: signature differs'
stop_sigchecks
# AWS_SESSION_TOKEN goes out as x-amz-security-token, signed (moto cannot check
# one: its GetSessionToken gives a key it does not know).
start_sigcheck test 'FwoGZXIvYXdzEJr//////////wEaDH+tok/en=='
AWS_SESSION_TOKEN='FwoGZXIvYXdzEJr//////////wEaDH+tok/en==' "$ZT" pull "s3://models/llama/config.json" \
    -o "$T/tok/" --s3-endpoint "http://127.0.0.1:$SPORT" --quiet 2>"$T/tok.err"
check_eq "with AWS_SESSION_TOKEN: exit status 0" $? 0
cmp -s "$model/config.json" "$T/tok/config.json" && ok "byte-exact" || bad "byte-exact" "$(cat "$T/tok.err")"
"$ZT" pull "s3://models/llama/config.json" -o "$T/tok2/" --s3-endpoint "http://127.0.0.1:$SPORT" \
    2>"$T/tok2.err"
check_eq "without it: refused, exit status 3" $? 3
check_match "named" "$(cat "$T/tok2.err")" 'the session token is not sent, or not signed'
stop_sigchecks

note "signatures checked by moto in auth mode (botocore computes them again)"
# Every action after the first 4 (s3fill's IAM set-up) is checked.
start_moto AP INITIAL_NO_AUTH_ACTION_COUNT=4 || rfinish
AEP=http://127.0.0.1:$AP
$FILL "$AEP" iam "$T/keys" || bad "s3fill iam"
read -r KEY SECRET <"$T/keys"
AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET $FILL "$AEP" put private "" "$model" \
    --sha256 config.json --create || bad "s3fill put (auth)"
AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET \
    "$ZT" pull "s3://private" -o "$T/priv" --s3-endpoint "$AEP" --quiet 2>"$T/priv.err"
check_eq "signed with the right keys: exit status 0" $? 0
for f in model.zt config.json tokenizer.json; do
    cmp -s "$model/$f" "$T/priv/$f" && ok "$f byte-exact (signed)" || bad "$f byte-exact (signed)" "$(cat "$T/priv.err")"
done
AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=wrong-$SECRET \
    "$ZT" pull "s3://private" -o "$T/bad1" --s3-endpoint "$AEP" 2>"$T/bad1.err"
check_eq "a wrong secret: exit status 3" $? 3
check_match "SignatureDoesNotMatch named" "$(cat "$T/bad1.err")" 'HTTP 403: SignatureDoesNotMatch'
AWS_ACCESS_KEY_ID=AKIANOSUCHKEY0000000 AWS_SECRET_ACCESS_KEY=$SECRET \
    "$ZT" pull "s3://private" -o "$T/bad2" --s3-endpoint "$AEP" 2>"$T/bad2.err"
check_eq "an unknown key: exit status 3" $? 3
check_match "InvalidAccessKeyId named" "$(cat "$T/bad2.err")" 'HTTP 403: InvalidAccessKeyId'
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
    "$ZT" pull "s3://private" -o "$T/bad3" --s3-endpoint "$AEP" 2>"$T/bad3.err"
[ $? -ne 0 ] && ok "no credentials (unsigned) on a private store: nonzero exit" ||
    bad "unsigned refused"
[ ! -e "$T/bad1/model.zt" ] && [ ! -e "$T/bad2/model.zt" ] && ok "nothing written by the failures" ||
    bad "nothing written by the failures"

note "--s3-credentials FILE"
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$KEY" "$SECRET" >"$T/creds"
chmod 0644 "$T/creds"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
    "$ZT" pull "s3://private" -o "$T/cf" --s3-endpoint "$AEP" --s3-credentials "$T/creds" 2>"$T/cf.err"
check_eq "mode 0644: refused, exit status 2" $? 2
check_match "the mode named" "$(cat "$T/cf.err")" 'readable or writable by group or others \(mode 0644; it must be 0600 or 0400\)'
grep -q "$SECRET" "$T/cf.err" && bad "the secret stays out of messages" || ok "the secret stays out of messages"
chmod 0600 "$T/creds"
AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=y \
    "$ZT" pull "s3://private" -o "$T/cf" --s3-endpoint "$AEP" --s3-credentials "$T/creds" --quiet
check_eq "mode 0600: the file's keys (over the environment's), exit status 0" $? 0
cmp -s "$model/model.zt" "$T/cf/model.zt" && ok "byte-exact" || bad "byte-exact"
printf 'aws_access_key_id = %s\nregion = x\n' "$KEY" >"$T/creds2"
chmod 0600 "$T/creds2"
"$ZT" pull "s3://private" -o "$T/cf2" --s3-endpoint "$AEP" --s3-credentials "$T/creds2" 2>"$T/cf2.err"
check_eq "an unknown key in the file: exit status 2" $? 2
check_match "line named" "$(cat "$T/cf2.err")" 'line 2: unknown key'

rfinish
