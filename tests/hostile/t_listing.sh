#!/usr/bin/env bash
# Paging of GET /v1/files (issue 12): prefix, limit and cursor. Walking the pages
# of a prefix with next_cursor yields exactly the files under it, once each, in
# name order, whatever the page size; no parameter keeps the whole listing;
# malformed parameters are a 400 JSON error; a page of 20,000 files is bounded
# by the limit, not by the catalog. Each file's safetensors view is an entry of
# its own (STEM.safetensors, docs/API.md), paged like the files; the copies of
# one file in a directory hold the same tensor name, so no directory has an index.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R/llama" "$R/llama2" "$R/odd dir"
rand "$T/w.raw" 64
pack "$T/one.zt" w=u8:64:"$T/w.raw" || exit 1
for f in a.zt llama/1.zt llama/2.zt llama/3.zt llama/4.zt llama/5.zt llama2/x.zt "odd dir/é.zt" z.zt; do
    cp "$T/one.zt" "$R/$f"
done
start_daemon "$R"

# names URL-QUERY: the names of one page, one a line; sets NEXT (or MISSING).
names() {
    LAST=$T/r
    http "$LAST" "$URL/v1/files?$1"
    $PY -c 'import json,sys; [print(f["name"]) for f in json.load(open(sys.argv[1]))["files"]]' "$LAST.body"
    NEXT=$(jget "$LAST.body" next_cursor)
}
# walk PREFIX-ENCODED LIMIT: every name over all pages, one a line.
walk() {
    local cur= i
    for i in $(seq 1 50); do
        names "prefix=$1&limit=$2${cur:+&cursor=$cur}"
        [ "$CODE" = 200 ] || { echo "HTTP $CODE"; return; }
        [ "$NEXT" = MISSING ] && return
        cur=$NEXT
    done
}

WANT=$(printf 'llama/%s.safetensors\nllama/%s.zt\n' 1 1 2 2 3 3 4 4 5 5)
for lim in 1 2 5 6 1000; do
    check_eq "prefix llama/, limit $lim: every file once, in order" "$(walk llama%2F $lim)" "$WANT"
done
check_eq "a prefix is bytes, not a directory" "$(walk llama 100 | wc -l)" 12
check_eq "percent-encoded UTF-8 prefix" "$(walk 'odd%20dir%2F%C3%A9' 10)" "$(printf 'odd dir/é.safetensors\nodd dir/é.zt')"
check_eq "no match: empty page" "$(walk nope 10)" ""
check_eq "empty page: count 0" "$(jget "$LAST.body" count)" 0
names "limit=2" >/dev/null
check_eq "limit alone: first page" "$(jget "$LAST.body" count)" 2
check_match "limit alone: a next_cursor" "$NEXT" '^[0-9a-f]+$'
names "prefix=llama%2F&limit=10" >/dev/null
check_eq "last page exactly full: no next_cursor" "$NEXT" MISSING

req "no parameter: the whole listing" 200 "$URL/v1/files"
check_eq "no parameter: count is every file and view" "$(jget "$LAST.body" count)" 18
check_eq "no parameter: no next_cursor" "$(jget "$LAST.body" next_cursor)" MISSING
req "unknown parameter ignored" 200 "$URL/v1/files?x=1"
check_eq "unknown parameter: whole listing" "$(jget "$LAST.body" count)" 18

for q in limit=0 limit=10001 limit=abc limit cursor=zz cursor=0 'prefix=%zz' 'prefix=a%00b'; do
    check_err "bad $q" 400 bad_request "$URL/v1/files?$q"
done

# 20,000 files: a page is bounded by its limit.
mkdir -p "$R/big"
for i in $(seq 1 200); do mkdir -p "$R/big/d$i"; done
$PY - "$R/big" "$T/one.zt" <<'PYEOF'
import os, sys
root, src = sys.argv[1], sys.argv[2]
for d in range(1, 201):
    for i in range(100):
        os.link(src, f"{root}/d{d}/f{i:03d}.zt")
PYEOF
# The rescan must be over before the pages are walked (waiting for the listing to show
# some of big/ let a rescan still running give 15,200 of 20,000). Scans run one at a
# time, and the inotify events of the links above may have started one that is still
# running: wait for two more completed scans (ztensord_catalog_reloads_total), each
# asked for with SIGHUP; the second began after the first ended, so after every link.
# Meanwhile a file present before the rescans, a.zt, must never vanish: from the
# listing or from a GET.
reloads() { curl -s --max-time 10 "$URL/metrics" | awk '$1 == "ztensord_catalog_reloads_total" { print $2 }'; }
SAMPLES=0 VANISHED=
sample_a() {
    SAMPLES=$((SAMPLES + 1))
    http "$T/sa" "$URL/v1/files?prefix=a.zt"
    [ "$CODE $(jget "$T/sa.body" count)" = "200 1" ] || VANISHED+=" listing:$CODE:$(head -c 100 "$T/sa.body")"
    http "$T/sg" "$URL/v1/files/a.zt/objects/w/data"
    [ "$CODE" = 200 ] && cmp -s "$T/sg.body" "$T/w.raw" || VANISHED+=" GET:$CODE:$(head -c 100 "$T/sg.body")"
}
n=$(reloads)
for round in 1 2; do
    kill -HUP "$D_PID"
    for i in $(seq 1 600); do
        sample_a
        m=$(reloads)
        [ -n "$m" ] && [ "$m" -gt "$n" ] && break
        sleep 0.05
    done
    check "rescan $round: ztensord_catalog_reloads_total went past $n ($m)" [ "$m" -gt "$n" ]
    n=$m
done
note "a.zt sampled $SAMPLES times while the rescans ran"
check_eq "a file present before the rescans never vanished from the listing or a GET" "$VANISHED" ""
check_eq "after the rescans: every file" "$(curl -s "$URL/metrics" | awk '$1 == "ztensord_catalog_files{state=\"valid\"}" { print $2 }')" 20009
names "prefix=big%2F" >/dev/null
check_eq "20,000 files: the default page holds 1000" "$(jget "$LAST.body" count)" 1000
check_match "20,000 files: and a next_cursor" "$NEXT" '^[0-9a-f]+$'
sz=$(stat -c %s "$LAST.body")
check_match "20,000 files: a page is under 256 KB ($sz bytes)" "$((sz < 262144))" '^1$'
TOTAL=$(walk big%2F 10000 | wc -l)
check_eq "20,000 files: pages of 10000 give all, with their views" "$TOTAL" 40000

finish
