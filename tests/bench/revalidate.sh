#!/usr/bin/env bash
# What a revalidation after upstream_ttl costs the origin (issue 26 §2), not a test: an
# origin ztensord and a sidecar (--upstream the origin, --upstream-ttl 0, so that every
# request revalidates: counted by requests, not by the clock), both on loopback. For each
# file, one request opens it; then REVALS requests for its manifest, each one a
# revalidation with nothing changed. Prints, per revalidation, the origin's body bytes
# (its ztensord_response_bytes_total) and requests (ztensord_requests_total). Files: a
# 1.x file of one 300 kB tensor, a v2 file of the same, the v2 corpus's sharded root (a
# root and two shards) and a 1.x file of 100,000 one-byte objects (a 4.7 MB manifest).
#   tests/bench/revalidate.sh ZTENSORD BUILD [REVALS]
# BUILD: a build tree with tests/remote/gen_many and tests/corpus/gen_corpus_v2 (run it
# with an older ztensord to see the figures before).
set -euo pipefail
ztd=$(realpath "$1") build=$(realpath "$2") revals=${3:-10}
work=$(mktemp -d /tmp/bench-reval.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
o=$work/origin
mkdir -p "$o" "$work/side"
head -c 300000 /dev/urandom >"$work/w.bin"
"$build/cli/zt" pack -o "$o/one.zt" w=u8:300000:"$work/w.bin" >/dev/null
"$build/cli/zt" pack --format v2 -o "$o/two.zt" w=u8:300000:"$work/w.bin" >/dev/null
"$build/tests/corpus/gen_corpus_v2" "$work/corpus" >/dev/null 2>&1
cp "$work/corpus/accept/sharded.zt" "$work/corpus/accept"/sharded-0000?-of-00002.zt "$o/"
"$build/tests/remote/gen_many" "$o/many.zt" 100000 1 >/dev/null

# start ROOT FLAGS...: a ztensord on an ephemeral port; its URL in $started
start() {
    local err=$work/d$RANDOM.err i
    "$ztd" --listen 127.0.0.1:0 --access-log off --root "$@" 2>"$err" &
    for i in $(seq 1 200); do
        started=$(grep -o 'listening on [^ ]*' "$err" 2>/dev/null | head -1 | sed 's/listening on //' || true)
        [ -n "$started" ] && break
        sleep 0.05
    done
    case $started in http*) ;; *) started=http://$started ;; esac
    for i in $(seq 1 200); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$started/readyz")" = 200 ] && return 0
        sleep 0.1
    done
    echo "ztensord did not start: $(head -c 400 "$err")" >&2
    exit 1
}
metric() { curl -s "$1/metrics" | awk -v re="$2" '$0 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%.0f\n", s }'; }
bytes() { metric "$1" '^ztensord_response_bytes_total\{route="(raw|component|blob|manifest|object|list)"'; }
reqs() { metric "$1" '^ztensord_requests_total\{route="(raw|component|blob|manifest|object|list)"'; }

start "$o"
origin=$started
start "$work/side" --upstream "$origin" --upstream-ttl 0 --cache-dir "$work/cache"
side=$started
printf '# %s, %s, load %s\n' "$(date -u +%FT%TZ)" "$(basename "$ztd")" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %12s %14s %18s\n' file manifest 'origin bytes' 'origin requests'
printf '%-12s %12s %14s %18s\n' '' '(JSON bytes)' '/revalidation' '/revalidation'
for f in one.zt two.zt sharded.zt many.zt; do
    curl -s -o "$work/m.json" "$side/v1/files/$f"
    b0=$(bytes "$origin") r0=$(reqs "$origin")
    for i in $(seq 1 "$revals"); do curl -s -o /dev/null "$side/v1/files/$f"; done
    b1=$(bytes "$origin") r1=$(reqs "$origin")
    printf '%-12s %12s %14s %18s\n' "$f" "$(stat -c %s "$work/m.json")" \
        $(((b1 - b0) / revals)) "$(awk -v d=$((r1 - r0)) -v n="$revals" 'BEGIN { printf "%.1f", d / n }')"
done
