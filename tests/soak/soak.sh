#!/bin/bash
# soak.sh: ztensord under a long, mixed load, as an operator would run it before a
# release (not part of the test command: it takes 10 minutes and the whole machine).
#
#   tests/soak/soak.sh [--seconds N] [--connections N] [--big-mib N] [--print-every N]
#                      [--mix KIND=WEIGHT,...] [--sidecar] [--keep] [ZTENSORD ZT]
#
# Defaults: 600 s, 256 connections, a 1024 MiB component, a status line every 60 s,
# build/server/ztensord and build/cli/zt. --mix replaces the traffic mix (to find
# which kind of request a growth comes from), e.g. --mix manifest=1,small=1; the
# kinds and their default weights: manifest=20 small=20 zstd_decoded=10
# zstd_stored=5 big_range=20 big_whole=1 cut=2 put=4 session=2 metrics=1 (and
# dropped=10 with --sidecar). Run it on
# a build without sanitizers (RelWithDebInfo or Release): ASan's quarantine alone
# grows RSS by design.
#
# It builds a root (small raw files, zstd files, one file with a 1 GiB component),
# starts ztensord on 127.0.0.1 (ephemeral port, anonymous writes, JSON access log),
# and runs tests/soak/soak.py: N keep-alive client connections mixing manifests,
# small components, zstd components (decoded by the server and as stored), ranges of
# and whole 1 GiB components, downloads cut short, whole-file PUTs, upload sessions and
# /metrics scrapes, while finished files are renamed into the root every second and
# SIGHUP arrives every 3 s. It prints RSS and descriptors each interval.
#
# --sidecar (or SOAK_SIDECAR=1): a second ztensord, --upstream pointing at the first
# (--upstream-ttl 5s, its own --cache-dir sized for the big component and the rest),
# serves every read: components, ranges and the 1 GiB whole reads fill and then hit its
# cache, and readers also fetch the renamed files (kind dropped), which change at the
# origin every second, so the sidecar revalidates them and fetches new versions;
# uploads go to the origin. The sidecar is judged like the origin (flat RSS and
# descriptors, no error-level line, a clean stop, no sanitizer report), and once its
# TTL has passed after the load it must serve the origin's last version of every
# renamed and uploaded file.
#
# Pass: 0 unexpected answers (status or bytes; the refusals expected are 503
# too_many_uploads, as the daemon keeps the default max_uploads of 16, and 503
# too_many_decoders, past the default max_decode_streams of 32); RSS and
# descriptors flat (the last quarter of the run against the second: RSS within
# +10 % + 32 MiB, descriptors not held by catalog files within +64, and back to
# their idle count once the clients are gone); nothing lost (every PUT and commit
# answered 2xx reads back with the bytes last sent, every renamed file is listed
# with the bytes last renamed in, staging is empty, `zt verify` passes on every file
# in the root); no error-level line in the error log but those of the expected
# 503s; exit status 0 after SIGTERM and no sanitizer report. Exits 0 on a pass, 1 on
# a failure, 2 on a usage error. The work directory (under $ZT_SOAK_TMP, default
# /tmp; about 2.1 GiB with the default component) is removed after a pass unless
# --keep.
set -u
set -o pipefail

SECONDS_=600 CONNS=256 BIG_MIB=1024 PRINT_EVERY=60 KEEP=0 SIDECAR=${SOAK_SIDECAR:-0} MIX=
SIDE_TTL=5
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) SECONDS_=$2; shift 2 ;;
    --connections) CONNS=$2; shift 2 ;;
    --big-mib) BIG_MIB=$2; shift 2 ;;
    --print-every) PRINT_EVERY=$2; shift 2 ;;
    --mix) MIX=$2; shift 2 ;;
    --sidecar) SIDECAR=1; shift ;;
    --keep) KEEP=1; shift ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "soak.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
for v in "$SECONDS_" "$CONNS" "$BIG_MIB" "$PRINT_EVERY"; do
    case $v in '' | *[!0-9]*) echo "soak.sh: not a number: '$v'" >&2; exit 2 ;; esac
done
[ "$SIDECAR" = 1 ] || SIDECAR=0
if [ -z "$MIX" ]; then
    MIX=manifest=20,small=20,zstd_decoded=10,zstd_stored=5,big_range=20,big_whole=1,cut=2,put=4,session=2,metrics=1
    [ "$SIDECAR" = 1 ] && MIX=$MIX,dropped=10
fi
MIXJSON=
for kw in ${MIX//,/ }; do
    case $kw in
    manifest=* | small=* | zstd_decoded=* | zstd_stored=* | big_range=* | big_whole=* | cut=* | put=* | session=* | metrics=* | dropped=*)
        [ "${kw%%=*}" = dropped ] && [ "$SIDECAR" = 0 ] && { echo "soak.sh: --mix: dropped needs --sidecar" >&2; exit 2; }
        w=${kw#*=}
        case $w in '' | *[!0-9]*) echo "soak.sh: --mix: not a weight: '$kw'" >&2; exit 2 ;; esac
        MIXJSON="$MIXJSON${MIXJSON:+, }\"${kw%%=*}\": $w" ;;
    *) echo "soak.sh: --mix: unknown kind in '$kw'" >&2; exit 2 ;;
    esac
done
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ZTENSORD=${1:-$REPO/build/server/ztensord}
ZT=${2:-$REPO/build/cli/zt}
PY=/usr/bin/python3
for b in "$ZTENSORD" "$ZT" "$PY"; do
    [ -x "$b" ] || { echo "soak.sh: $b is not an executable (build first)" >&2; exit 2; }
done

T=$(mktemp -d "${ZT_SOAK_TMP:-/tmp}/ztensord-soak.XXXXXX") || exit 2
R=$T/root
D_PID=
S_PID=
cleanup() {
    [ -n "$D_PID" ] && kill -KILL "$D_PID" 2>/dev/null
    [ -n "$D_PID" ] && wait "$D_PID" 2>/dev/null
    [ -n "$S_PID" ] && kill -KILL "$S_PID" 2>/dev/null
    [ -n "$S_PID" ] && wait "$S_PID" 2>/dev/null
}
trap cleanup EXIT
trap 'echo "soak.sh: interrupted"; exit 1' INT TERM
say() { printf 'soak: %s\n' "$*"; }
die() {
    printf 'FAIL %s\n' "$*"
    KEEP=1
    say "work directory kept: $T"
    exit 1
}

# ---- the root and the files to upload and rename in
say "building the files in $T (a ${BIG_MIB} MiB component)"
mkdir -p "$R/small" "$R/z" "$R/dropped" "$T/src" "$T/up" "$T/drop" "$T/incoming"
objs=()
add() { objs+=("{\"file\":\"$1\",\"object\":\"$2\",\"raw\":\"$3\",\"zstd\":$4}"); }
text() { head -c $((($2 * 3 + 3) / 4)) /dev/urandom | base64 -w0 | head -c "$2" >"$1"; }
for i in 0 1 2 3; do
    head -c 4096 /dev/urandom >"$T/src/s$i-a.raw"
    head -c 65536 /dev/urandom >"$T/src/s$i-b.raw"
    "$ZT" pack -o "$R/small/s$i.zt" a=u8:4096:"$T/src/s$i-a.raw" b=f32:16384:"$T/src/s$i-b.raw" >/dev/null ||
        die "zt pack small/s$i.zt"
    add "small/s$i.zt" a "$T/src/s$i-a.raw" false
    add "small/s$i.zt" b "$T/src/s$i-b.raw" false
done
for i in 0 1; do
    text "$T/src/z$i-c.raw" 65536
    text "$T/src/z$i-d.raw" 1048576
    "$ZT" pack -o "$R/z/z$i.zt" --compress c=u8:65536:"$T/src/z$i-c.raw" d=u8:1048576:"$T/src/z$i-d.raw" >/dev/null ||
        die "zt pack z/z$i.zt"
    add "z/z$i.zt" c "$T/src/z$i-c.raw" true
    add "z/z$i.zt" d "$T/src/z$i-d.raw" true
done
head -c $((BIG_MIB << 20)) /dev/urandom >"$T/src/big.raw"
"$ZT" pack -o "$R/big.zt" big=u8:$((BIG_MIB << 20)):"$T/src/big.raw" >/dev/null || die "zt pack big.zt"
add big.zt big "$T/src/big.raw" false
ups=()
for i in 0 1 2 3 4 5 6 7; do
    head -c $(((i + 1) * 8192)) /dev/urandom >"$T/src/u$i.raw"
    "$ZT" pack -o "$T/up/u$i.zt" w=u8:$(((i + 1) * 8192)):"$T/src/u$i.raw" >/dev/null || die "zt pack up/u$i.zt"
    ups+=("\"$T/up/u$i.zt\"")
done
drops=()
draws=()
for i in 0 1 2 3; do
    text "$T/src/d$i.raw" 32768
    "$ZT" pack -o "$T/drop/d$i.zt" t=u8:32768:"$T/src/d$i.raw" >/dev/null || die "zt pack drop/d$i.zt"
    drops+=("\"$T/drop/d$i.zt\"")
    draws+=("\"$T/src/d$i.raw\"")
done
join() { local IFS=,; printf '%s' "$*"; }
printf '{"root":"%s","objects":[%s],"big":{"file":"big.zt","object":"big","raw":"%s"},"uploads":[%s],"drop_raws":[%s]}\n' \
    "$R" "$(join "${objs[@]}")" "$T/src/big.raw" "$(join "${ups[@]}")" "$(join "${draws[@]}")" >"$T/sources.json"
"$PY" "$REPO/tests/soak/soak.py" prep "$T" "$ZT" || die "soak.py prep"

# ---- the daemon
# The default max_uploads (16): with N clients, uploads beyond it get 503
# too_many_uploads, a valid answer the clients check and wait on. (Raising it to N
# lets N sessions compress zstd components at once, about 2.5 MiB each here.)
"$ZTENSORD" --root "$R" --listen 127.0.0.1:0 --allow-anonymous-writes --disk-reserve 0 \
    --connection-limit $((CONNS * 2 + 64)) \
    --error-log "$T/error.log" --access-log "$T/access.log" --access-log-format json \
    2>"$T/daemon.err" &
D_PID=$!
. "$REPO/tests/sh/wait.sh"
wait_listening "$T/error.log" "$D_PID" || die "the daemon did not start: $(head -c 600 "$T/daemon.err" "$T/error.log" 2>/dev/null)"
PORT=$LISTEN_PORT
for i in $(seq 1 100); do
    [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ] && break
    sleep 0.1
done
say "ztensord pid $D_PID on 127.0.0.1:$PORT: $(curl -s --max-time 5 "http://127.0.0.1:$PORT/v1/files" | grep -o '"count":[0-9]*')"

# ---- the sidecar (--sidecar): every read goes through it
SIDEJSON=
if [ "$SIDECAR" = 1 ]; then
    mkdir -p "$T/sideroot" "$T/cache"
    "$ZTENSORD" --root "$T/sideroot" --listen 127.0.0.1:0 \
        --upstream "http://127.0.0.1:$PORT" --upstream-kind ztensord --upstream-ttl ${SIDE_TTL}s \
        --cache-dir "$T/cache" --cache-size $((BIG_MIB * 2 + 256))M \
        --connection-limit $((CONNS * 2 + 64)) \
        --error-log "$T/side-error.log" --access-log "$T/side-access.log" --access-log-format json \
        2>"$T/side.err" &
    S_PID=$!
    wait_listening "$T/side-error.log" "$S_PID" || die "the sidecar did not start: $(head -c 600 "$T/side.err" "$T/side-error.log" 2>/dev/null)"
    SPORT=$LISTEN_PORT
    for i in $(seq 1 100); do
        [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SPORT/readyz")" = 200 ] && break
        sleep 0.1
    done
    say "sidecar pid $S_PID on 127.0.0.1:$SPORT (--upstream http://127.0.0.1:$PORT, --upstream-ttl ${SIDE_TTL}s)"
    SIDEJSON="\"sidecar\": true, \"read_port\": $SPORT, \"read_pid\": $S_PID, \"sidecar_ttl\": $SIDE_TTL,"
fi

cat >"$T/config.json" <<EOF
{"port": $PORT, "pid": $D_PID, $SIDEJSON "seconds": $SECONDS_, "connections": $CONNS, "seed": $$,
 "root": "$R", "incoming": "$T/incoming", "access_log": "$T/access.log",
 "drop_sources": [$(join "${drops[@]}")], "rename_every": 1, "hup_every": 3,
 "print_every": $PRINT_EVERY,
 "mix": {$MIXJSON}}
EOF

# ---- the soak
"$PY" "$REPO/tests/soak/soak.py" run "$T"
rc=$?

# ---- after: files on disk, logs, a clean stop
bad=0
# stop PID NAME: SIGTERM, then its exit status (30 s at most)
stop() {
    kill -TERM "$1"
    for i in $(seq 1 600); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$1" 2>/dev/null; then
        printf 'FAIL the %s is still running 30 s after SIGTERM\n' "$2"
        bad=1
    else
        wait "$1"
        st=$?
        [ "$st" = 0 ] || { printf 'FAIL the %s exited with status %s\n' "$2" "$st"; bad=1; }
    fi
}
if [ -n "$S_PID" ]; then
    nerr=$(grep -c 'level=error' "$T/side-error.log")
    nwarn=$(grep -c 'level=warn' "$T/side-error.log")
    say "sidecar error log: $nerr error lines, $nwarn warn lines"
    if [ "$nerr" -gt 0 ]; then
        grep 'level=error' "$T/side-error.log" | head -5 | sed 's/^/  /'
        printf 'FAIL error-level lines in the sidecar error log\n'
        bad=1
    fi
    grep 'level=warn' "$T/side-error.log" | head -5 | sed 's/^/  /'
    curl -s --max-time 5 "http://127.0.0.1:$SPORT/metrics" | grep -E '^ztensord_(upstream|cache)_[a-z_]*_total ' | sed 's/^/  sidecar /'
    stop "$S_PID" sidecar
    S_PID=
    if grep -Eq 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$T/side.err"; then
        printf 'FAIL sanitizer report in %s\n' "$T/side.err"
        bad=1
    fi
fi
nfiles=0
while IFS= read -r -d '' f; do
    nfiles=$((nfiles + 1))
    "$ZT" verify "$f" >/dev/null 2>&1 || { printf 'FAIL zt verify %s\n' "${f#"$R"/}"; bad=1; }
done < <(find "$R" -name .ztensord-staging -prune -o -name '*.zt' -type f -print0)
say "zt verify: $nfiles files in the root"
# 503 too_many_uploads and too_many_decoders are expected answers here: ztensord logs
# such refusals at debug (and counts them in ztensord_errors_total), so every
# error-level line is a fault.
nerr=$(grep -c 'level=error' "$T/error.log")
nwarn=$(grep -c 'level=warn' "$T/error.log")
say "error log: $nerr error lines, $nwarn warn lines"
if [ "$nerr" -gt 0 ]; then
    grep 'level=error' "$T/error.log" | head -5 | sed 's/^/  /'
    printf 'FAIL error-level lines in the error log\n'
    bad=1
fi
grep 'level=warn' "$T/error.log" | head -5 | sed 's/^/  /'
kill -TERM "$D_PID"
for i in $(seq 1 600); do
    kill -0 "$D_PID" 2>/dev/null || break
    sleep 0.05
done
if kill -0 "$D_PID" 2>/dev/null; then
    printf 'FAIL the daemon is still running 30 s after SIGTERM\n'
    bad=1
else
    wait "$D_PID"
    st=$?
    [ "$st" = 0 ] || { printf 'FAIL the daemon exited with status %s\n' "$st"; bad=1; }
fi
D_PID=
if grep -Eq 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$T/daemon.err"; then
    printf 'FAIL sanitizer report in %s\n' "$T/daemon.err"
    bad=1
fi
if [ "$rc" = 0 ] && [ "$bad" = 0 ]; then
    say "PASS"
    [ "$KEEP" = 1 ] && say "work directory kept: $T" || rm -rf -- "$T"
    exit 0
fi
say "FAIL; work directory kept: $T"
exit 1
