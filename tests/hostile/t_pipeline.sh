#!/bin/bash
# 1,000 requests pipelined on one connection: every one answered, in order (each answer
# echoes its request's X-Request-Id), with the right status and the right bytes, and the
# connection kept open. The mix covers every kind of response the server builds: sendfile
# spans, ranges (single and multipart), HEAD, 304, JSON documents, errors, a decoded zstd
# stream, a blob. Once written in one piece, once in pieces of 1 to 700 bytes; then writes
# (PUT, replace, DELETE) pipelined with the reads that must see them. (A write refused
# before its body, e.g. 412, closes the connection by design: that is t_early_answer's.)
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 3000
text "$T/t.raw" 50000
pack "$R/a.zt" w=u8:3000:"$T/w.raw"
pack "$R/z.zt" --compress t=u8:50000:"$T/t.raw"
HEX=$(sha256_hex "$T/w.raw")
head -c 200 "$T/w.raw" | tail -c 100 >"$T/w100.raw"
: >"$T/empty"
start_daemon "$R" "${OPEN[@]}" || finish

# Reference answers fetched one by one, on their own connections.
curl -s -o "$T/manifest.json" "$URL/v1/files/a.zt"
curl -s -o "$T/nope.json" "$URL/v1/files/nope.zt/raw"
curl -s -o "$T/healthz.json" "$URL/healthz"
ET=$(curl -s -o /dev/null -D - "$URL/v1/files/a.zt/objects/w/data" | hdr /dev/stdin ETag)
check_match "reference ETag" "$ET" '^".+"$'
C=/v1/files/a.zt/objects/w/data
KINDS=(
    "GET	$C	200	$T/w.raw	-"
    "GET	$C	206	$T/w100.raw	-	Range: bytes=100-199"
    "HEAD	$C	200	-	-"
    "GET	/v1/files/a.zt	200	$T/manifest.json	-"
    "GET	/v1/files/nope.zt/raw	404	$T/nope.json	-"
    "GET	$C	304	-	-	If-None-Match: $ET"
    "GET	$C	206	*	-	Range: bytes=0-9,20-29"
    "GET	/healthz	200	$T/healthz.json	-"
    "GET	/v1/blobs/sha256:$HEX	200	$T/w.raw	-"
    "GET	/v1/files/z.zt/objects/t/data	200	$T/t.raw	-"
    "GET	/v1/files/a.zt/raw	200	$R/a.zt	-"
    "POST	/v1/files	405	*	-"
)
for i in $(seq 0 999); do printf '%s\n' "${KINDS[i % ${#KINDS[@]}]}"; done >"$T/reads.plan"

# pipeline LABEL PLAN CHUNK: run the plan on one connection (60 s at most).
pipeline() {
    if "$PY" "$HOSTILE_DIR/pipeline.py" 127.0.0.1 "$PORT" "$2" "$3" 60 >"$T/pipe.out" 2>&1; then
        ok "$1: $(tail -1 "$T/pipe.out")"
    else
        bad "$1" "$(tr '\n' ';' <"$T/pipe.out")"
    fi
}
pipeline "1000 pipelined reads, written at once" "$T/reads.plan" 0
pipeline "1000 pipelined reads, written in pieces of 1-700 bytes" "$T/reads.plan" 700

# Writes in the pipeline: each read must see the write before it, and only that.
for k in 0 1 2 3 4; do
    rand "$T/v$k.raw" $((1000 + k))
    pack "$T/v$k.zt" w=u8:$((1000 + k)):"$T/v$k.raw"
done
for i in $(seq 0 29); do
    k=$((i % 5))
    n=$(((i + 1) % 5))
    printf 'PUT\t/v1/files/p%d.zt\t201\t*\t%s\n' "$i" "$T/v$k.zt"
    printf 'GET\t/v1/files/p%d.zt/raw\t200\t%s\t-\n' "$i" "$T/v$k.zt"
    printf 'PUT\t/v1/files/p%d.zt\t200\t*\t%s\n' "$i" "$T/v$n.zt"
    printf 'GET\t/v1/files/p%d.zt/objects/w/data\t200\t%s\t-\n' "$i" "$T/v$n.raw"
    printf 'DELETE\t/v1/files/p%d.zt\t204\t-\t-\n' "$i"
    printf 'GET\t/v1/files/p%d.zt/raw\t404\t*\t-\n' "$i"
done >"$T/writes.plan"
pipeline "180 pipelined writes and reads" "$T/writes.plan" 300
check_eq "the pipelined writes left nothing" "$(published_files "$R" | tr '\n' ' ')" "a.zt z.zt "
check_staging_empty "staging empty" "$R"
daemon_alive "daemon alive"
finish
