#!/bin/bash
# A full disk, on small tmpfs mounts (root only; a SKIP line when mount fails).
#
# tests/uploads/t_limits.sh covers disk_reserve (507 before and during a body) and the
# disk filling up during a whole-file PUT and during a session component. This script adds:
#  - another process filling the disk while a PUT's body arrives;
#  - a commit that finds the disk full (the components are in, the manifest does not fit):
#    507, the session kept as it was, and the same commit succeeding once space is back;
#  - four PUTs at once that cannot all fit: each 201 or 507, the 201s whole, no space
#    leaked once they are done;
#  - no inode left: for a staging file, for a session, for a new directory;
#  - no inode left at start-up: reads are served, uploads answer a 5xx JSON error.
# After each: JSON errors, nothing half-written in the root, staging empty, old.zt still
# served byte-exact, and uploads work again once space is freed.
. "$(dirname "$0")/lib.sh" "$@"

FS=$T/fs
mkdir -p "$FS"
if ! mount -t tmpfs -o size=16m tmpfs "$FS" 2>"$T/mount.err"; then
    skip "every disk-full check" "cannot mount a tmpfs: $(head -c 200 "$T/mount.err")"
    finish
fi
at_exit "umount -l '$FS' 2>/dev/null"
R=$FS/root
mkdir -p "$R"
rand "$T/old.raw" $((256 << 10))
pack "$R/old.zt" w=u8:$((256 << 10)):"$T/old.raw"
cp "$R/old.zt" "$T/old.zt"
rand "$T/small.raw" 3000
pack "$T/small.zt" w=u8:3000:"$T/small.raw"

avail_kb() { df --output=avail -k "$FS" | tail -1; }
# fill: take every free block with a file outside the root; unfill: give them back.
fill() { dd if=/dev/zero of="$FS/filler" bs=1M count=64 2>/dev/null; }
unfill() { rm -f "$FS/filler"; }
# intact LABEL [NAMES]: old.zt served byte-exact, the root holds exactly old.zt and NAMES,
# staging is empty.
intact() {
    req "$1: old.zt served" 200 "$URL/v1/files/old.zt/raw"
    check_same "$1: old.zt bytes" "$LAST.body" "$T/old.zt"
    check_eq "$1: published files" "$(published_files "$R" | tr '\n' ' ')" "$(printf '%s\n' old.zt ${2:-} | sort | tr '\n' ' ')"
    check_staging_empty "$1: staging empty" "$R"
}
works_again() {
    put again.zt "$T/small.zt"
    check_code "$1: a PUT works again" 201
    req "$1: DELETE it" 204 -X DELETE "$URL/v1/files/again.zt"
}

start_daemon "$R" "${OPEN[@]}" || finish

# ---- another process fills the disk while a PUT's body arrives
rand "$T/six.raw" $((6 << 20))
pack "$T/six.zt" w=u8:$((6 << 20)):"$T/six.raw"
curl -s --max-time 30 --limit-rate 3M -o "$T/f.body" -w '%{http_code}' -T "$T/six.zt" "$URL/v1/files/new.zt" >"$T/f.code" &
CP=$!
for i in $(seq 1 40); do [ "$(staging_count "$R")" -gt 0 ] && break; sleep 0.05; done
fill
wait "$CP"
check_eq "disk filled by another process during a PUT: 507" "$(cat "$T/f.code")" 507
check_eq "disk filled during a PUT: JSON error" "$(jerr_code "$T/f.body")" insufficient_storage
intact "disk filled during a PUT"
unfill
works_again "disk filled during a PUT, space freed"

# ---- a commit that finds the disk full
# 3 MiB - 64 bytes after the 64-byte header: the staging file ends on a page boundary, so
# the manifest needs a block of its own.
L=$(((3 << 20) - 64))
rand "$T/c.raw" $L
COMMIT="{\"objects\":{\"w\":{\"shape\":[$L],\"components\":{\"data\":{\"key\":\"k\",\"dtype\":\"u8\"}}}}}"
session_open full.zt
S=$SID
comp_put "$S" k "$T/c.raw"
check_code "commit on a full disk: the component fits" 201
req "commit on a full disk: session before" 200 "$URL/v1/uploads/$S"
cp "$LAST.body" "$T/before.json"
fill
commit "$S" "$COMMIT"
check_code "commit on a full disk: 507" 507
check_errbody "commit on a full disk" insufficient_storage
req "commit on a full disk: the session is kept" 200 "$URL/v1/uploads/$S"
check_eq "commit on a full disk: the session's bytes as before" "$(jget "$LAST.body" bytes)" "$(jget "$T/before.json" bytes)"
check_eq "commit on a full disk: its components as before" "$(jget "$LAST.body" components)" "$(jget "$T/before.json" components)"
check_eq "commit on a full disk: staging holds only the session's file" "$(staging_count "$R")" 1
check_eq "commit on a full disk: nothing published" "$(published_files "$R" | tr '\n' ' ')" "old.zt "
unfill
commit "$S" "$COMMIT"
check_code "the same commit once space is back: 201" 201
check "the committed file verifies" zverify "$R/full.zt"
check_same "the committed file holds the component" <(zget "$R/full.zt" w) "$T/c.raw"
req "DELETE full.zt" 204 -X DELETE "$URL/v1/files/full.zt"
http "$T/d" -X DELETE "$URL/v1/uploads/$S" # in case the commit failed

# ---- four PUTs at once that cannot all fit
pids=()
for i in 1 2 3 4; do
    rand "$T/q$i.raw" $((5 << 20))
    pack "$T/q$i.zt" w=u8:$((5 << 20)):"$T/q$i.raw"
done
FREE0=$(avail_kb)
for i in 1 2 3 4; do
    curl -s --max-time 60 -o "$T/q$i.body" -w '%{http_code}' -T "$T/q$i.zt" "$URL/v1/files/q$i.zt" >"$T/q$i.code" &
    pids+=($!)
done
wait "${pids[@]}"
won=()
for i in 1 2 3 4; do
    c=$(cat "$T/q$i.code")
    case $c in
    201)
        won+=("q$i.zt")
        check_same "4 PUTs on a small disk: q$i.zt (201) is whole" "$R/q$i.zt" "$T/q$i.zt"
        ;;
    507) check_eq "4 PUTs on a small disk: q$i (507): JSON error" "$(jerr_code "$T/q$i.body")" insufficient_storage ;;
    *) bad "4 PUTs on a small disk: q$i" "HTTP $c" ;;
    esac
done
note "4 PUTs of 5 MiB on $((FREE0 / 1024)) MiB free: ${#won[@]} published"
check "4 PUTs on a small disk: at least one refused" [ "${#won[@]}" -lt 4 ]
intact "4 PUTs on a small disk" "${won[*]}"
for f in "${won[@]}"; do http "$T/d" -X DELETE "$URL/v1/files/$f"; done
for i in $(seq 1 60); do [ "$(avail_kb)" -ge $((FREE0 - 64)) ] && break; sleep 0.05; done
check "4 PUTs on a small disk: all the space is back afterwards ($(avail_kb) of $FREE0 KiB)" [ "$(avail_kb)" -ge $((FREE0 - 64)) ]
works_again "4 PUTs on a small disk"
stop_daemon
umount -l "$FS"

# ---- no inode left
mount -t tmpfs -o size=16m,nr_inodes=16 tmpfs "$FS"
mkdir -p "$R"
cp "$T/old.zt" "$R/old.zt"
start_daemon "$R" "${OPEN[@]}" || finish
# take every inode but one
for i in $(seq 1 32); do : >"$FS/i$i" 2>/dev/null || break; done
rm -f "$FS/i1"
put d1/d2/x.zt "$T/small.zt"
check_match "one inode left, a PUT into two new directories: 507" "$CODE" '^507$'
check_match "one inode left, new directories: JSON error" "$(jerr_code "$LAST.body")" '^(insufficient_storage|staging_failed)$'
rmdir "$R/d1" 2>/dev/null # an empty directory may be left; it holds no file
: >"$FS/i1"
put x.zt "$T/small.zt"
check_code "no inode left, PUT: 507" 507
check_errbody "no inode left, PUT" insufficient_storage
session_open s.zt
check_code "no inode left, a session: 507" 507
check_errbody "no inode left, a session" insufficient_storage
intact "no inode left"
rm -f "$FS"/i*
works_again "inodes freed"
stop_daemon

# ---- no inode left at start-up: the staging directory cannot be created
rm -rf "${R:?}/$STAGING"
for i in $(seq 1 32); do : >"$FS/i$i" 2>/dev/null || break; done
start_daemon "$R" "${OPEN[@]}" || finish
check_match "no inode at start-up: the log says uploads are disabled" "$(cat "$D_ERR")" 'uploads disabled'
req "no inode at start-up: reads served" 200 "$URL/v1/files/old.zt/raw"
check_same "no inode at start-up: old.zt bytes" "$LAST.body" "$T/old.zt"
put x.zt "$T/small.zt"
check_match "no inode at start-up: a PUT gets a 5xx" "$CODE" '^5[0-9][0-9]$'
check_match "no inode at start-up: a JSON error" "$(jerr_code "$LAST.body")" '^(uploads_disabled|staging_failed)$'
daemon_alive "daemon alive"
finish
