#!/bin/bash
# Symlinks planted by a careless operator or an attacker with write access to the tree.
#
# tests/integration/t_names.sh checks links present at start-up (a file link and a
# directory link leading out, a link inside the root). This script adds what changes
# under a running server, and writes:
#  - a served file replaced by a symlink to a file outside, after start: never the outside
#    bytes, before or after the rescan; a link retargeted from inside to outside; chains
#    that end outside; loops;
#  - a served directory replaced by a symlink to a directory outside;
#  - PUT, session commits and DELETE through a symlinked directory or onto a symlink: 409
#    name_conflict (500 delete_failed for a DELETE), never a byte written or removed
#    outside; and a directory swapped for a symlink while a PUT's body is arriving.
. "$(dirname "$0")/lib.sh" "$@"

J=$T/jail
R=$J/root
O=$J/outdir
mkdir -p "$R/sub" "$R/keep" "$O"
rand "$T/in.raw" 3000
pack "$R/a.zt" w=u8:3000:"$T/in.raw"
pack "$R/sub/f.zt" w=u8:3000:"$T/in.raw"
pack "$R/keep/k.zt" w=u8:3000:"$T/in.raw"
cp "$R/a.zt" "$T/a.zt"
rand "$T/secret.raw" 4444
pack "$J/outside.zt" secret=u8:4444:"$T/secret.raw"
cp "$J/outside.zt" "$O/f.zt"
cp "$J/outside.zt" "$O/k.zt"
SECRET_HEX=$(sha256_hex "$T/secret.raw")
OUTSIDE=$(tree_state "$J" "$R")

start_daemon "$R" "${OPEN[@]}" --no-watch || finish

# never_outside LABEL PATH...: none of the URL paths answers with the outside bytes.
never_outside() {
    local label=$1 p h
    shift
    for p in "$@"; do
        http "$T/n" "$URL$p"
        h=$(sha256_hex "$T/n.body")
        if [ "$h" = "$(sha256_hex "$J/outside.zt")" ] || [ "$h" = "$SECRET_HEX" ]; then
            bad "$label: $p" "HTTP $CODE with the outside bytes"
        else
            ok "$label: $p not the outside bytes ($CODE)"
        fi
    done
}
listed() { curl -s --max-time 5 -o "$T/l.json" "$URL/v1/files" && $HELP filenames "$T/l.json" | tr '\n' ' '; }

# ---- a served file replaced by a symlink leading out
req "a.zt served" 200 "$URL/v1/files/a.zt/raw"
ln -s ../outside.zt "$R/.tmp-link"
mv -T "$R/.tmp-link" "$R/a.zt"
never_outside "a.zt now a link out, before the rescan" /v1/files/a.zt/raw /v1/files/a.zt/objects/secret/data \
    "/v1/blobs/sha256:$SECRET_HEX"
rescan
never_outside "a.zt now a link out, after the rescan" /v1/files/a.zt/raw /v1/files/a.zt/objects/secret/data \
    "/v1/blobs/sha256:$SECRET_HEX" /v1/files/a.zt
check_err "a.zt link out after the rescan" 404 file_not_found "$URL/v1/files/a.zt/raw"
check_nomatch "a.zt link out: not listed" "$(listed)" '(^| )a\.zt '

# ---- a link inside the root, retargeted to the outside
ln -s keep/k.zt "$R/in.zt"
rescan
req "in.zt -> keep/k.zt is served" 200 "$URL/v1/files/in.zt/raw"
check_same "in.zt bytes" "$LAST.body" "$R/keep/k.zt"
ln -sfn ../outdir/k.zt "$R/in.zt"
never_outside "in.zt retargeted out, before the rescan" /v1/files/in.zt/raw
rescan
never_outside "in.zt retargeted out, after the rescan" /v1/files/in.zt/raw /v1/files/in.zt/objects/secret/data
check_err "in.zt retargeted out" 404 file_not_found "$URL/v1/files/in.zt/raw"

# ---- chains and loops
ln -s c2.zt "$R/c1.zt"
ln -s sub/../c3.zt "$R/c2.zt"
ln -s ../outside.zt "$R/c3.zt"
ln -s loop2.zt "$R/loop1.zt"
ln -s loop1.zt "$R/loop2.zt"
ln -s self.zt "$R/self.zt"
ln -s .. "$R/sub/up"
ln -s "$R" "$R/sub/rootlink"
ln -s / "$R/sub/slash"
rescan
never_outside "a chain of links ending outside" /v1/files/c1.zt/raw /v1/files/c2.zt/raw /v1/files/c3.zt/raw
for n in loop1 loop2 self; do check_err "link loop $n.zt" 404 file_not_found "$URL/v1/files/$n.zt/raw"; done
never_outside "directory links are never entered" /v1/files/sub/up/outside.zt/raw \
    /v1/files/sub/rootlink/a.zt/raw /v1/files/sub/slash/etc/passwd.zt
check_eq "listing after chains and loops" "$(listed)" "keep/k.zt sub/f.zt "
daemon_alive "loops did not hang or crash the scan"

# ---- a served directory replaced by a symlink to a directory outside
req "sub/f.zt served" 200 "$URL/v1/files/sub/f.zt/raw"
mv "$R/sub" "$J/sub.old"
ln -s ../outdir "$R/sub"
never_outside "sub now a link out, before the rescan" /v1/files/sub/f.zt/raw /v1/files/sub/f.zt/objects/secret/data
rescan
never_outside "sub now a link out, after the rescan" /v1/files/sub/f.zt/raw /v1/files/sub/k.zt/raw
check_err "sub/f.zt through the link" 404 file_not_found "$URL/v1/files/sub/f.zt/raw"

# ---- writes through planted links
pack "$T/new.zt" w=u8:3000:"$T/in.raw"
for p in sub/new.zt sub%2Fnew.zt sub/f.zt sub/deeper/new.zt c3.zt in.zt; do
    put "$p" "$T/new.zt"
    check_code "PUT $p through a link: 409" 409
    check_errbody "PUT $p through a link" name_conflict
done
check_err "DELETE sub/f.zt through a directory link" 500 delete_failed -X DELETE "$URL/v1/files/sub/f.zt"
check_err "DELETE in.zt, a link to a file outside" 404 file_not_found -X DELETE "$URL/v1/files/in.zt"
session_open sub/s.zt
check_code "a session naming a path through the link opens (the link may be gone by the commit)" 201
comp_put "$SID" w "$T/in.raw"
commit "$SID" '{"objects":{"w":{"shape":[3000],"components":{"data":{"key":"w","dtype":"u8"}}}}}'
check_code "commit through a directory link: 409" 409
check_errbody "commit through a directory link" name_conflict
check_eq "nothing outside the root changed after the writes" "$(tree_state "$J" "$R" | grep -v "$J/sub.old")" "$OUTSIDE"

# ---- a directory swapped for a link while a PUT's body arrives
mkdir -p "$R/race"
rand "$T/big.raw" $((6 << 20))
pack "$T/big.zt" w=u8:$((6 << 20)):"$T/big.raw"
curl -s --max-time 30 --limit-rate 4M -o "$T/race.body" -w '%{http_code}' -T "$T/big.zt" \
    "$URL/v1/files/race/n.zt" >"$T/race.code" 2>/dev/null &
CP=$!
for i in $(seq 1 40); do [ "$(staging_count "$R")" -gt 0 ] && break; sleep 0.05; done
check "the PUT is under way" [ "$(staging_count "$R")" -gt 0 ]
mv "$R/race" "$J/race.old"
ln -s ../outdir "$R/race"
wait "$CP"
check_eq "PUT whose directory became a link out mid-body: 409" "$(cat "$T/race.code")" 409
check_eq "PUT whose directory became a link: name_conflict" "$(jerr_code "$T/race.body")" name_conflict
check_eq "nothing written outside by the raced PUT" "$(tree_state "$J" "$R" | grep -Ev "$J/(sub|race)\.old")" "$OUTSIDE"
check_staging_empty "staging empty" "$R"

rm -f "$R/race" "$R/sub" "$R/a.zt"
cp "$T/a.zt" "$R/a.zt"
rescan
req "a real file in place again: served" 200 "$URL/v1/files/a.zt/raw"
check_same "a real file in place again: bytes" "$LAST.body" "$T/a.zt"
daemon_alive "daemon alive"
finish
