#!/usr/bin/env bash
# Builds docker/Dockerfile unchanged with buildah and runs the image, without a Docker
# engine (docs/OPERATIONS.md, "Testing the image"):
#   1. makes a Debian bookworm base with debootstrap, unless one is cached, and imports
#      it as the images the Dockerfile names (debian:bookworm, debian:bookworm-slim);
#   2. buildah bud --isolation chroot --format docker -f docker/Dockerfile (the repo root
#      as context);
#   3. buildah run --isolation chroot: ztensord inside the image, /models a host directory;
#   4. curl from the host fetches a tensor component and compares its bytes;
#   5. zt inside the image reads the tensor over HTTP (libcurl), and a second ztensord in
#      the image, a pull-through cache (--upstream, as docker/compose.yaml runs it), serves
#      the same bytes from the first;
#   6. the daemon runs as a non-root user; plus the image's config (user, env, volume,
#      port, HEALTHCHECK), its shared libraries (ldd inside the image: every one found),
#      the HEALTHCHECK script over TCP and over a unix socket, a clean SIGTERM.
# Prints "N passed, M failed" and the time taken last; exits non-zero on any failure.
#
# Slow (about 2 minutes, 3 the first time on a machine, for debootstrap) and needs root,
# so it is not a ctest: .ci/run runs it after .ci/test, every time. Missing tools
# (debootstrap, buildah, podman, curl) are installed by .ci/deps-image.
#
# Environment:
#   ZT_IMAGE_NAME   name of the built image (default localhost/ztensord:test; kept)
#   ZT_IMAGE_CACHE  where the debootstrap tarball is cached (default /var/cache/ztensord-image)
#   ZT_IMAGE_REBASE=1  rebuild and re-import the base even if the images exist
#   ZT_IT_KEEP=1    keep the work directory
set -u
set -o pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
IMAGE=${ZT_IMAGE_NAME:-localhost/ztensord:test}
CACHE=${ZT_IMAGE_CACHE:-/var/cache/ztensord-image}
BASES=(docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim)
MIRROR=${ZT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CTR=ztensord-test-$$
T=$(mktemp -d "${TMPDIR:-/tmp}/zt-image.XXXXXX") || exit 1
export LC_ALL=C.UTF-8

RUN_PID=
CACHE_PID=
. "$REPO/tests/sh/checks.sh"

cleanup() {
    if [ -n "$RUN_PID" ]; then
        for p in $(descendants "$RUN_PID") "$RUN_PID"; do kill -KILL "$p" 2>/dev/null; done
        wait "$RUN_PID" 2>/dev/null
    fi
    if [ -n "$CACHE_PID" ]; then
        for p in $(descendants "$CACHE_PID") "$CACHE_PID"; do kill -KILL "$p" 2>/dev/null; done
        wait "$CACHE_PID" 2>/dev/null
    fi
    buildah rm "$CTR" "$CTR-cache" >/dev/null 2>&1
    if [ "$FAIL" -eq 0 ] && [ -z "${ZT_IT_KEEP:-}" ]; then rm -rf -- "$T"; else note "work directory kept: $T"; fi
}
finish() {
    cleanup
    trap - EXIT
    echo "$PASS passed, $FAIL failed ($(($(date +%s) - T_START)) s)"
    [ "$FAIL" -eq 0 ]
    exit
}
T_START=$(date +%s)
trap cleanup EXIT
trap 'bad interrupted; finish' INT TERM

# descendants PID: every process below PID (through /proc, no pgrep needed).
descendants() {
    local kids k
    kids=$(cat /proc/"$1"/task/*/children 2>/dev/null)
    for k in $kids; do
        echo "$k"
        descendants "$k"
    done
}

# ---- 0. tools
if [ "$(id -u)" -ne 0 ]; then
    bad "running as root" "buildah --isolation chroot and debootstrap need root"
    finish
fi
"$REPO/.ci/deps-image" >"$T/deps.log" 2>&1 || note "deps-image: $(tail -3 "$T/deps.log")"
for tool in debootstrap buildah podman curl; do
    command -v "$tool" >/dev/null || {
        bad "tool $tool available"
        finish
    }
done
ok "tools: debootstrap, buildah, podman, curl"

# ---- 1. the base images
have_bases=1
for b in "${BASES[@]}"; do podman image exists "$b" || have_bases=0; done
if [ "$have_bases" = 1 ] && [ -z "${ZT_IMAGE_REBASE:-}" ]; then
    ok "base images cached: ${BASES[*]}"
else
    tarball=$CACHE/bookworm-minbase.tar
    if [ ! -s "$tarball" ] || [ -n "${ZT_IMAGE_REBASE:-}" ]; then
        note "debootstrap --variant=minbase bookworm (about 2 minutes)"
        mkdir -p "$CACHE"
        rootfs=$T/rootfs
        if ! debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$T/debootstrap.log" 2>&1; then
            bad "debootstrap" "$(tail -5 "$T/debootstrap.log")"
            finish
        fi
        # Make it like the official debian:bookworm-slim: the host's apt sources and
        # network settings (so apt-get in the build works here as on the host), no docs,
        # man pages or apt lists, and dpkg told to keep it that way.
        if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
            cp /etc/apt/sources.list.d/*.sources "$rootfs/etc/apt/sources.list.d/"
            : >"$rootfs/etc/apt/sources.list"
        fi
        for f in /etc/apt/apt.conf.d/*; do
            grep -q '^Acquire::' "$f" 2>/dev/null && ! grep -q Invoke "$f" && cp "$f" "$rootfs/etc/apt/apt.conf.d/"
        done
        cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
        printf 'APT::Install-Recommends "false";\n' >"$rootfs/etc/apt/apt.conf.d/docker-no-recommends"
        find "$rootfs/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null
        rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* \
            "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
            "$rootfs"/var/log/* "$rootfs"/tmp/*
        tar --numeric-owner -C "$rootfs" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
        rm -rf "$rootfs"
    fi
    for b in "${BASES[@]}"; do
        if podman import "$tarball" "$b" >"$T/import.log" 2>&1; then
            ok "imported $b"
        else
            bad "podman import $b" "$(tail -3 "$T/import.log")"
            finish
        fi
    done
fi

# ---- 2. build the Dockerfile unchanged
note "buildah bud --isolation chroot --format docker -f docker/Dockerfile -t $IMAGE $REPO"
t0=$(date +%s)
if (cd "$REPO" && buildah bud --isolation chroot --format docker --layers \
    -f docker/Dockerfile -t "$IMAGE" .) >"$T/bud.log" 2>&1; then
    ok "buildah bud docker/Dockerfile ($(($(date +%s) - t0)) s)"
else
    bad "buildah bud docker/Dockerfile" "see below"
    tail -30 "$T/bud.log" | sed 's/^/#   /'
    finish
fi
if grep -qi "HEALTHCHECK is not supported" "$T/bud.log"; then bad "HEALTHCHECK kept"; else ok "HEALTHCHECK kept (docker format)"; fi

size=$(podman image inspect --format '{{.Size}}' "$IMAGE" 2>/dev/null)
base_size=$(podman image inspect --format '{{.Size}}' docker.io/library/debian:bookworm-slim 2>/dev/null)
note "image $IMAGE: $size bytes ($((size / 1000000)) MB); base debian:bookworm-slim here: $base_size bytes ($((base_size / 1000000)) MB); added: $(((size - base_size) / 1000000)) MB"
if [ -n "$size" ] && [ "$size" -lt 200000000 ]; then ok "image smaller than 200 MB"; else bad "image smaller than 200 MB" "$size bytes"; fi

# ---- image configuration
cfg() { podman image inspect --format "$1" "$IMAGE" 2>/dev/null; }
check_eq "image user is 10001:10001" "$(cfg '{{.Config.User}}')" 10001:10001
check_match "image env ZTENSORD_ROOT=/models" "$(cfg '{{range .Config.Env}}{{println .}}{{end}}')" '^ZTENSORD_ROOT=/models$'
check_match "image env ZTENSORD_LISTEN=0.0.0.0:7070" "$(cfg '{{range .Config.Env}}{{println .}}{{end}}')" '^ZTENSORD_LISTEN=0\.0\.0\.0:7070$'
check_match "image volume /models" "$(cfg '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}')" '(^| )/models( |$)'
check_match "image exposes 7070/tcp" "$(cfg '{{range $k, $v := .Config.ExposedPorts}}{{$k}} {{end}}')" '7070/tcp'
check_match "image HEALTHCHECK" "$(buildah inspect --type image --format '{{.Docker.Config.Healthcheck.Test}}' "$IMAGE" 2>/dev/null)" 'ztensord-healthcheck'
check_match "image entrypoint" "$(cfg '{{.Config.Entrypoint}}')" '/usr/local/bin/ztensord'

# ---- 3. run it
if ! buildah from --name "$CTR" "$IMAGE" >"$T/from.log" 2>&1; then
    bad "buildah from" "$(tail -3 "$T/from.log")"
    finish
fi
# buildah run (chroot isolation) mounts a fresh volume for the image's VOLUME /models on
# top of a --volume bind to the same path; drop the declaration from this working
# container only (not the image) so the host directory is what /models shows, as with
# `docker run -v DIR:/models`.
buildah config --volume /models- "$CTR" >/dev/null 2>&1
brun() { buildah run --isolation chroot "$@"; }

check_eq "id -u in the image" "$(brun "$CTR" -- id -u 2>&1)" 10001
brun "$CTR" -- sh -c 'ldd /usr/local/bin/ztensord /usr/local/bin/zt' >"$T/ldd.txt" 2>&1
ldd_rc=$?
if [ "$ldd_rc" != 0 ] || grep -q 'not found' "$T/ldd.txt"; then
    bad "shared libraries resolve (ldd in the image)" "exit $ldd_rc: $(grep -v '=> /' "$T/ldd.txt" | head -5 | tr '\n' ' ')"
else
    ok "shared libraries resolve (ldd in the image)"
fi
check_match "ztensord and zt load libcurl in the image" "$(grep -c 'libcurl\.so\.4 => /' "$T/ldd.txt")" '^2$'
check_match "ztensord --version in the image" "$(brun "$CTR" -- ztensord --version 2>&1)" '^ztensord [0-9]'

M=$T/models
mkdir -p "$M"
chmod 1777 "$M" # the image's user (uid 10001) writes the test file and the staging dir
head -c 1048576 /dev/urandom >"$M/w.raw"
head -c 4096 /dev/urandom >"$M/b.raw"
if brun --volume "$M:/models" "$CTR" -- zt pack -o /models/model.zt \
    w=f32:512x512:/models/w.raw b=u8:4096:/models/b.raw >"$T/pack.log" 2>&1; then
    ok "zt pack inside the image"
else
    bad "zt pack inside the image" "$(tail -3 "$T/pack.log")"
    finish
fi
mv "$M/w.raw" "$M/b.raw" "$T/"

PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((20000 + $$ % 20000)))
# The image listens on 0.0.0.0:7070; buildah run shares the host's network, so the test
# moves it to a free loopback port (the variable the image sets is what it overrides).
brun --volume "$M:/models:ro" --env ZTENSORD_LISTEN=127.0.0.1:"$PORT" \
    --env ZTENSORD_ACCESS_LOG_FORMAT=json "$CTR" -- /usr/local/bin/ztensord >"$T/daemon.out" 2>"$T/daemon.err" &
RUN_PID=$!
URL=http://127.0.0.1:$PORT
up=0
for _ in $(seq 1 300); do
    if [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ]; then
        up=1
        break
    fi
    kill -0 "$RUN_PID" 2>/dev/null || break
    sleep 0.1
done
if [ "$up" = 1 ]; then
    ok "ztensord in the image answers /readyz"
else
    bad "ztensord in the image answers /readyz" "$(tail -5 "$T/daemon.err")"
    finish
fi

# ---- 4. a tensor, from the host, byte for byte
code=$(curl -sS --max-time 30 -o "$T/w.got" -w '%{http_code}' "$URL/v1/files/model.zt/objects/w/data")
check_eq "GET component w: 200" "$code" 200
if cmp -s "$T/w.got" "$T/w.raw"; then ok "component w bytes match (1 MiB)"; else bad "component w bytes match" "$(cmp "$T/w.got" "$T/w.raw" 2>&1)"; fi
curl -sS --max-time 30 -o "$T/b.got" -r 100-1099 "$URL/v1/files/model.zt/objects/b/data"
if cmp -s "$T/b.got" <(tail -c +101 "$T/b.raw" | head -c 1000); then ok "range of component b matches"; else bad "range of component b matches"; fi
check_match "uploads disabled on a read-only /models" "$(cat "$T/daemon.err")" 'uploads disabled'
check_match "access log is JSON with a request id" "$(grep '"request_id"' "$T/daemon.err" | head -1)" '^\{.*"status":200'

# ---- zt in the image reads over HTTP (libztensor-remote, libcurl)
zsum=$(brun "$CTR" -- sh -c "zt get $URL/v1/files/model.zt w -o /tmp/w.got && sha256sum </tmp/w.got" 2>"$T/zget.err")
check_eq "zt get over HTTP inside the image" "${zsum%% *}" "$(sha256sum <"$T/w.raw" | cut -d' ' -f1)"

# ---- a pull-through cache in the image (docker/compose.yaml's sidecar): its upstream is
# the ztensord above; /cache is the image's directory for it
CPORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo $((PORT + 1)))
CACHE_CTR=$CTR-cache
buildah from --name "$CACHE_CTR" "$IMAGE" >/dev/null 2>&1
brun --env ZTENSORD_LISTEN=127.0.0.1:"$CPORT" --env ZTENSORD_UPSTREAM="$URL" \
    --env ZTENSORD_CACHE_DIR=/cache --env ZTENSORD_ACCESS_LOG=off "$CACHE_CTR" -- \
    /usr/local/bin/ztensord >"$T/cache.out" 2>"$T/cache.err" &
CACHE_PID=$!
for _ in $(seq 1 300); do
    [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$CPORT/readyz")" = 200 ] && break
    kill -0 "$CACHE_PID" 2>/dev/null || break
    sleep 0.1
done
curl -sS --max-time 30 -o "$T/wc.got" "http://127.0.0.1:$CPORT/v1/files/model.zt/objects/w/data"
if cmp -s "$T/wc.got" "$T/w.raw"; then ok "the cache in the image serves the upstream's bytes"; else bad "the cache in the image serves the upstream's bytes" "$(tail -3 "$T/cache.err")"; fi
check_match "the cache logs what its upstream is" "$(cat "$T/cache.err")" "upstream .* (is|answered).* ztensord"
for p in $(descendants "$CACHE_PID") "$CACHE_PID"; do kill -TERM "$p" 2>/dev/null; done
wait "$CACHE_PID" 2>/dev/null
CACHE_PID=
buildah rm "$CACHE_CTR" >/dev/null 2>&1

# ---- the HEALTHCHECK script, run inside the image as the runtime would
check_match "HEALTHCHECK script: healthy" \
    "$(brun --env ZTENSORD_LISTEN=0.0.0.0:"$PORT" "$CTR" -- /bin/bash /usr/local/bin/ztensord-healthcheck 2>&1)" '^healthy$'
if brun --env ZTENSORD_LISTEN=127.0.0.1:1 "$CTR" -- /bin/bash /usr/local/bin/ztensord-healthcheck >/dev/null 2>&1; then
    bad "HEALTHCHECK script: unhealthy when nothing listens"
else
    ok "HEALTHCHECK script: unhealthy when nothing listens"
fi
# over a unix socket (perl from the image's perl-base: bash has no /dev/unix)
check_match "HEALTHCHECK script over unix:PATH inside the image: healthy" \
    "$(brun --env ZTENSORD_LISTEN=unix:/tmp/z.sock "$CTR" -- /bin/bash -c '
        ztensord --access-log off 2>/tmp/z.err &
        for _ in $(seq 1 300); do [ -S /tmp/z.sock ] && break; sleep 0.1; done
        /bin/bash /usr/local/bin/ztensord-healthcheck; rc=$?
        kill -TERM %1; wait; exit $rc' 2>&1)" '^healthy$'

# ---- 5. not root
ZPID=
for p in $(descendants "$RUN_PID"); do
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = ztensord ] && ZPID=$p
done
if [ -n "$ZPID" ]; then
    uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' /proc/"$ZPID"/status)
    gids=$(awk '/^Gid:/ {print $2, $3, $4, $5}' /proc/"$ZPID"/status)
    check_eq "ztensord runs as uid 10001 (real, effective, saved, fs)" "$uids" "10001 10001 10001 10001"
    check_eq "ztensord runs as gid 10001" "$gids" "10001 10001 10001 10001"
    check_eq "ztensord has no capabilities" "$(awk '/^CapEff:/ {print $2}' /proc/"$ZPID"/status)" 0000000000000000
    # ---- a clean stop
    kill -TERM "$ZPID"
    for _ in $(seq 1 200); do
        kill -0 "$RUN_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$RUN_PID" 2>/dev/null; then
        bad "SIGTERM stops ztensord" "still running after 20 s"
    else
        wait "$RUN_PID"
        check_eq "ztensord exit status after SIGTERM" "$?" 0
        RUN_PID=
    fi
else
    bad "found the ztensord process under buildah run"
fi
finish
