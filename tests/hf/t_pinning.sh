#!/bin/bash
# Revisions pin a version: a download at commit C1 still being sent when a file is
# replaced completes with C1's bytes; afterwards C1 answers RevisionNotFound for every
# file (changed or not), for info, tree and paths-info, and a tree cursor of C1 is
# refused; main gives the new commit C2 with the new bytes; and putting the old
# bytes back gives C1 again (the id is made of names and contents only).
#   t_pinning.sh ZTENSORD ZT
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
D=$R/org/model
make_repo "$D"
rand "$T/big1.raw" $((24 << 20))
rand "$T/big2.raw" $((24 << 20))
pack "$T/big1.zt" w=u8:$((24 << 20)):"$T/big1.raw" # 1.2: its digest is the bytes' sha256
pack "$T/big2.zt" w=u8:$((24 << 20)):"$T/big2.raw"
cp "$T/big1.zt" "$D/big.zt"
start_daemon "$R" || finish
H=$URL/hf

req "info" 200 "$H/api/models/org/model"
C1=$($HFC field "$LAST.body" sha)
head_req "HEAD big.zt at main" 200 "/hf/org/model/resolve/main/big.zt"
check_eq "HEAD big.zt: the commit" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$C1"
E1=$(hdr "$LAST.hdr" X-Linked-Etag)
check_eq "HEAD big.zt: X-Linked-Etag is the sha256 of the bytes" "$E1" "\"$(sha256_hex "$T/big1.zt")\""

# A download at C1, held after its header block while the file is replaced.
held_get old "$PORT" "/hf/org/model/resolve/$C1/big.zt"
check_eq "held download at C1: 200" "$HELD_STATUS" 200
cp "$T/big2.zt" "$D/.big.tmp" && mv "$D/.big.tmp" "$D/big.zt"
kill -HUP "$D_PID"
C2=$(new_commit "$H/api/models/org/model" "$C1" 100) # until the rescan has the new file
check_match "main moved to a new commit" "$C2" '^[0-9a-f]{40}$'
[ "$C2" != "$C1" ] && ok "the new commit differs from C1" || bad "the new commit differs from C1" "still $C1"
held_release old "$HELD_PID"
check_eq "held download at C1: completed, whole" "$HELD_RESULT" "200 $(stat -c %s "$T/big1.zt")"
check_eq "held download at C1: C1's bytes, no mix" "$(sha256_hex "$T/old")" "$(sha256_hex "$T/big1.zt")"

for f in big.zt model.zt sub/extra.zt; do
    hf_err "C1's $f after the change" 404 RevisionNotFound "$H/org/model/resolve/$C1/$f"
done
hf_err "info at C1" 404 RevisionNotFound "$H/api/models/org/model/revision/$C1"
hf_err "tree at C1" 404 RevisionNotFound "$H/api/models/org/model/tree/$C1?recursive=true"
hf_err "paths-info at C1" 404 RevisionNotFound -X POST --data 'paths=big.zt' "$H/api/models/org/model/paths-info/$C1"
hf_err "a tree cursor of C1" 404 RevisionNotFound "$H/api/models/org/model/tree/main?recursive=true&limit=1&cursor=$C1.1"

req "big.zt at main" 200 "$H/org/model/resolve/main/big.zt"
check_eq "big.zt at main: C2" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$C2"
check_eq "big.zt at main: the new bytes" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$T/big2.zt")"
check_eq "big.zt at main: the new X-Linked-Etag" "$(hdr "$LAST.hdr" X-Linked-Etag)" "\"$(sha256_hex "$T/big2.zt")\""
req "model.zt at C2" 200 "$H/org/model/resolve/$C2/model.zt"
check_eq "model.zt at C2: C2" "$(hdr "$LAST.hdr" X-Repo-Commit)" "$C2"

# The old bytes back: the old commit id again.
cp "$T/big1.zt" "$D/.big.tmp" && mv "$D/.big.tmp" "$D/big.zt"
kill -HUP "$D_PID"
C3=
for _ in $(seq 1 100); do
    http "$T/i" "$H/api/models/org/model"
    C3=$($HFC field "$T/i.body" sha 2>/dev/null)
    [ "$C3" = "$C1" ] && break
    sleep 0.1
done
check_eq "the old bytes back: C1 again" "$C3" "$C1"
req "big.zt at C1 again" 200 "$H/org/model/resolve/$C1/big.zt"
check_eq "big.zt at C1 again: C1's bytes" "$(sha256_hex "$LAST.body")" "$(sha256_hex "$T/big1.zt")"
hf_err "C2 after going back" 404 RevisionNotFound "$H/org/model/resolve/$C2/big.zt"
finish
