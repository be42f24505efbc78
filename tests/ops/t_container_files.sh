#!/bin/bash
# The container files without a container engine (tests/docker/test-image.sh builds and
# runs the image itself):
#   - docker/Dockerfile: two stages from debian:bookworm / debian:bookworm-slim, numeric
#     non-root USER, VOLUME /models, ENV ZTENSORD_ROOT/LISTEN, EXPOSE 7070, HEALTHCHECK;
#   - every ZTENSORD_* name in docker/, systemd/ and docs/OPERATIONS.md is a real option
#     (ztensord refuses to start on an unknown one), and the compose file's environment
#     starts a daemon with no flags at all;
#   - docker/compose.yaml and docker/k8s-sidecar.yaml parse, share a volume between
#     ztensord and the inference container, and the pod probes /readyz and /healthz on
#     the port ztensord listens on;
#   - the sidecar is a pull-through cache (docs/CLUSTER.md): upstream, a cache volume
#     (compose) or emptyDir (k8s), a prefetch, and a health check on /readyz in compose;
#     compose's environment starts a sidecar that serves an origin's file (the gate
#     itself, /readyz while the prefetch cannot finish: tests/upstream/t_cluster_gate.sh);
#   - docker/healthcheck.sh (the image's HEALTHCHECK) against real and fake servers, on
#     TCP and on a unix socket (--listen unix:PATH);
#   - every build dependency is in the Dockerfile's build stage, .ci/deps and README.md,
#     and every library ztensord and zt link is installed by the runtime stage.
. "$(dirname "$0")/lib.sh" "$@"

D=$REPO/docker
if ! $PY -c 'import yaml' 2>/dev/null; then
    bad "python3-yaml is installed" "missing: apt-get install python3-yaml (listed in .ci/deps)"
    finish
fi

# ---- Dockerfile
F=$D/Dockerfile
df() { grep -Ev '^\s*#' "$F"; }
check_match "build stage FROM debian:bookworm" "$(df)" '^FROM debian:bookworm AS build'
check_match "runtime stage FROM debian:bookworm-slim" "$(df)" '^FROM debian:bookworm-slim$'
check_eq "two stages" "$(df | grep -c '^FROM ')" 2
check_match "USER is a numeric non-root uid" "$(df | grep '^USER ')" '^USER [1-9][0-9]*(:[0-9]+)?$'
check_match "VOLUME /models" "$(df)" '^VOLUME \["/models"\]'
check_match "ENV ZTENSORD_ROOT=/models" "$(df)" 'ZTENSORD_ROOT=/models'
check_match "ENV ZTENSORD_LISTEN=0.0.0.0:7070" "$(df)" 'ZTENSORD_LISTEN=0\.0\.0\.0:7070'
check_match "EXPOSE 7070" "$(df)" '^EXPOSE 7070'
check_match "HEALTHCHECK runs docker/healthcheck.sh" "$(df | tr '\n' ' ')" 'HEALTHCHECK .*CMD \["/bin/bash", "/usr/local/bin/ztensord-healthcheck"\]'
check_nomatch "no -dev package in the runtime stage" "$(df | sed -n '/^FROM debian:bookworm-slim/,$p')" '[a-z0-9]-dev( |$)'
check_nomatch "no compiler in the runtime stage" "$(df | sed -n '/^FROM debian:bookworm-slim/,$p')" '(^| )(gcc|cmake|ninja-build)( |$)'
# every COPY source of the build stage exists (the context is the repository root)
for src in $(df | awk '/^COPY / && !/--from/ { for (i = 2; i < NF; i++) print $i }'); do
    check "COPY source $src exists in the repository" test -e "$REPO/$src"
done

# ---- dependencies (tests/docker/test-image.sh builds and runs the image; this catches a
# missing package in seconds). apt_words: the packages of a stage's apt-get install lines.
apt_words() {
    tr '\n' ' ' | sed 's/\\ / /g' | grep -oE 'apt-get install [^&]*' | tr ' ' '\n' |
        grep -E '^[a-z0-9][a-z0-9.+-]+$' | grep -vx -e apt-get -e install
}
build_pkgs=$(df | sed -n '/^FROM debian:bookworm AS build/,/^FROM debian:bookworm-slim/p' | apt_words)
run_pkgs=$(df | sed -n '/^FROM debian:bookworm-slim/,$p' | apt_words)
check_ne "Dockerfile: packages of the build stage found" "$build_pkgs" ""
check_ne "Dockerfile: packages of the runtime stage found" "$run_pkgs" ""
# Every pkg-config module the build asks for (the tests' own excepted) comes from a -dev
# package that the build stage, .ci/deps and README.md's list all name.
mods=$(cat "$REPO/CMakeLists.txt" "$REPO/lib/CMakeLists.txt" "$REPO/server/CMakeLists.txt" \
    "$REPO/cli/CMakeLists.txt" | grep -oE 'pkg_check_modules\([A-Z_]+( REQUIRED)? IMPORTED_TARGET [a-z0-9_.+-]+' |
    awk '{print $NF}' | sort -u)
check_ne "pkg-config modules of the build found" "$mods" ""
for m in $mods; do
    pc=$(pkg-config --path "$m" 2>/dev/null)
    pkg=$(dpkg -S "$pc" 2>/dev/null | head -1 | cut -d: -f1)
    if [ -z "$pkg" ]; then
        bad "pkg-config module $m: its Debian package" "pkg-config --path $m gave '$pc'"
        continue
    fi
    check_match "module $m ($pkg) in the Dockerfile's build stage" "$build_pkgs" "^$pkg\$"
    check "module $m ($pkg) in .ci/deps" grep -qw -- "$pkg" "$REPO/.ci/deps"
    check "module $m ($pkg) in README.md's dependencies" grep -qw -- "$pkg" "$REPO/README.md"
done
# Every library ztensord and zt link directly comes from a package the runtime stage
# installs (glibc and libgcc-s1, which a sanitizer build links, are in every image).
for bin in "$ZTENSORD" "$ZT"; do
    for so in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        path=$(ldd "$bin" | awk -v so="$so" '$1 == so {print $3}')
        pkg=
        for p in "$path" "$(realpath "$path" 2>/dev/null)" "/usr$path" "${path#/usr}"; do
            [ -n "$p" ] && pkg=$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$pkg" ] && break
        done
        case $pkg in
        libc6 | libgcc-s1) continue ;; # glibc and the gcc runtime: in every Debian image
        "") bad "$(basename "$bin") needs $so: its Debian package" "ldd gave '$path'" ;;
        *) check_match "$(basename "$bin") needs $so: $pkg in the Dockerfile's runtime stage" "$run_pkgs" "^$pkg\$" ;;
        esac
    done
done

# ---- ZTENSORD_* names are real options
"$ZTENSORD" --dump-config-markdown >"$T/config.md"
names=$(grep -rhoE 'ZTENSORD_[A-Z0-9_]+' "$D" "$REPO/systemd" "$REPO/docs/OPERATIONS.md" 2>/dev/null | sort -u)
check_ne "ZTENSORD_* names found in the ops files" "$names" ""
for v in $names; do
    check "$v is an option" grep -qF "\`$v\`" "$T/config.md"
done

# ---- compose.yaml and k8s-sidecar.yaml
why=$($PY - "$D/compose.yaml" "$D/k8s-sidecar.yaml" <<'EOF'
import os, sys, yaml
errs = []
c = yaml.safe_load(open(sys.argv[1]))
s = c.get("services", {})
z, inf = s.get("ztensord"), s.get("inference")
if not z or not inf:
    errs.append("compose: services ztensord and inference")
else:
    b = z.get("build", {})
    ctx = os.path.join(os.path.dirname(sys.argv[1]), b.get("context", "."))
    if not os.path.isfile(os.path.join(ctx, b.get("dockerfile", "Dockerfile"))):
        errs.append("compose: build.dockerfile not found from build.context")
    vols = lambda svc: {v.split(":")[0]: v for v in svc.get("volumes", [])}
    shared = set(vols(z)) & set(vols(inf)) & set(c.get("volumes", {}) or {})
    if not shared:
        errs.append("compose: no named volume shared by ztensord and inference")
    for v in shared:
        if not vols(z)[v].startswith(v + ":/models"):
            errs.append("compose: ztensord mounts %s elsewhere than /models" % v)
    if inf.get("depends_on", {}).get("ztensord", {}).get("condition") != "service_healthy":
        errs.append("compose: inference does not wait for a healthy ztensord")
    # the pull-through sidecar (docs/CLUSTER.md): upstream, a cache volume, prefetch,
    # and a health check on /readyz (the readiness gate)
    env = z.get("environment", {})
    for k in ("ZTENSORD_UPSTREAM", "ZTENSORD_CACHE_DIR", "ZTENSORD_CACHE_SIZE", "ZTENSORD_PREFETCH"):
        if not env.get(k):
            errs.append("compose: ztensord has no %s" % k)
    cache = [v for v in z.get("volumes", []) if v.split(":")[1:2] == [env.get("ZTENSORD_CACHE_DIR")]]
    if not cache or cache[0].split(":")[0] not in (c.get("volumes", {}) or {}):
        errs.append("compose: no named volume at ZTENSORD_CACHE_DIR")
    if env.get("ZTD_HEALTHCHECK_PATH") != "/readyz":
        errs.append("compose: the health check does not ask /readyz")
docs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
pods = [d for d in docs if d.get("kind") == "Pod"]
if len(pods) != 1:
    errs.append("k8s: one Pod")
else:
    spec = pods[0]["spec"]
    cs = {x["name"]: x for x in spec["containers"]}
    zc = cs.get("ztensord")
    if not zc or len(cs) < 2:
        errs.append("k8s: containers ztensord and an inference container")
    else:
        ports = {p.get("name"): p["containerPort"] for p in zc.get("ports", [])}
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
            g = zc.get(probe, {}).get("httpGet", {})
            if g.get("path") != path:
                errs.append("k8s: %s path %r, want %s" % (probe, g.get("path"), path))
            port = ports.get(g.get("port"), g.get("port"))
            if port != 7070:
                errs.append("k8s: %s port %r is not 7070" % (probe, g.get("port")))
        env = {e["name"]: e.get("value") for e in zc.get("env", [])}
        for k in ("ZTENSORD_UPSTREAM", "ZTENSORD_CACHE_DIR", "ZTENSORD_CACHE_SIZE", "ZTENSORD_PREFETCH"):
            if not env.get(k):
                errs.append("k8s: ztensord has no %s" % k)
        cm = [m["name"] for m in zc.get("volumeMounts", []) if m["mountPath"] == env.get("ZTENSORD_CACHE_DIR")]
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        if not cm or "emptyDir" not in vols.get(cm[0], {}):
            errs.append("k8s: no emptyDir mounted at ZTENSORD_CACHE_DIR")
        mounts = [{m["name"] for m in x.get("volumeMounts", [])} for x in cs.values()]
        if not set.intersection(*mounts):
            errs.append("k8s: no volume mounted by every container")
        sc = spec.get("securityContext", {})
        if not sc.get("runAsNonRoot") or not sc.get("runAsUser"):
            errs.append("k8s: pod not runAsNonRoot with a runAsUser")
        zs = zc.get("securityContext", {})
        if zs.get("allowPrivilegeEscalation") is not False or not zs.get("readOnlyRootFilesystem"):
            errs.append("k8s: ztensord securityContext")
print("; ".join(errs))
EOF
)
check_eq "compose.yaml and k8s-sidecar.yaml: structure" "$why" ""

# The compose file's environment for ztensord (${VAR:-default} as compose expands it with
# VAR unset), plus the image's ENV, and no flag at all. Its upstream is replaced by an
# origin on loopback and its cache directory by one under $T.
R=$T/root
mkdir -p "$R" "$T/origin/llama"
rand "$T/w.raw" 1000
pack "$R/m.zt" w=u8:1000:"$T/w.raw"
rand "$T/o.raw" 3000
pack "$T/origin/llama/7b.zt" w=u8:3000:"$T/o.raw" # under compose's MODEL_PREFIX
start_daemon "$T/origin" || finish
O_PID=$D_PID O_URL=$URL O_ERR=$D_ERR
D_PID=
at_exit '[ -n "$O_PID" ] && kill -KILL "$O_PID" 2>/dev/null'
envs=$($PY -c '
import re, sys, yaml
e = yaml.safe_load(open(sys.argv[1]))["services"]["ztensord"].get("environment", {})
for k, v in (e.items() if isinstance(e, dict) else (x.split("=", 1) for x in e)):
    print("%s=%s" % (k, re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(v))))' "$D/compose.yaml")
mapfile -t envarr <<<"$envs"
D_N=$((D_N + 1))
env "${envarr[@]}" ZTENSORD_ROOT="$R" ZTENSORD_LISTEN=127.0.0.1:0 ZTENSORD_ACCESS_LOG=off \
    ZTENSORD_UPSTREAM="$O_URL" ZTENSORD_CACHE_DIR="$T/cache" "$ZTENSORD" 2>"$T/envonly.err" &
D_PID=$!
D_ERR=$T/envonly.err
line=
for i in $(seq 1 100); do
    line=$(grep -m1 -o 'listening on http://127\.0\.0\.1:[0-9]*' "$D_ERR")
    [ -n "$line" ] && break
    kill -0 "$D_PID" 2>/dev/null || break
    sleep 0.1
done
if [ -n "$line" ]; then
    ok "configured by environment only (compose's variables + the image's)"
    PORT=${line##*:}
else
    bad "configured by environment only" "$(head -c 400 "$D_ERR")"
    D_PID=
    finish
fi
for i in $(seq 1 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ] && break
    sleep 0.1
done
check_eq "ready once its prefetch is done" "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" 200
curl -s -o "$T/o.got" "http://127.0.0.1:$PORT/v1/files/llama/7b.zt/objects/w/data"
check_same "serves the upstream's file" "$T/o.got" "$T/o.raw"

# ---- healthcheck.sh
HC=$D/healthcheck.sh
hc() { env -i PATH=/usr/bin:/bin "$@" /bin/bash "$HC"; }
out=$(hc ZTENSORD_LISTEN=0.0.0.0:"$PORT")
check_eq "healthcheck: 0.0.0.0:PORT checked on loopback: healthy" "$?:$out" "0:healthy"
out=$(hc ZTENSORD_LISTEN=127.0.0.1:"$PORT")
check_eq "healthcheck: 127.0.0.1:PORT: healthy" "$?:$out" "0:healthy"
out=$(hc ZTENSORD_LISTEN=0.0.0.0:1 ZTD_HEALTHCHECK_ADDR=127.0.0.1:"$PORT")
check_eq "healthcheck: ZTD_HEALTHCHECK_ADDR overrides" "$?:$out" "0:healthy"
out=$(hc ZTENSORD_LISTEN=127.0.0.1:"$PORT" ZTD_HEALTHCHECK_PATH=/readyz)
check_eq "healthcheck: ZTD_HEALTHCHECK_PATH=/readyz on a ready server" "$?:$out" "0:healthy"
stop_daemon
out=$(hc ZTENSORD_LISTEN=127.0.0.1:"$PORT")
check_match "healthcheck: nothing listening: unhealthy (exit 1)" "$?:$out" '^1:unhealthy: cannot connect'
# a server that answers 503 (it picks its own port and writes it to fake.port)
rm -f "$T/fake.port"
$PY -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(1); s.settimeout(10)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept()
req = b""
while b"\r\n\r\n" not in req:
    b = c.recv(4096)
    if not b:
        break
    req += b
c.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"); c.close()
' "$T/fake.port" 2>"$T/fake.err" &
fake=$!
for i in $(seq 1 100); do
    [ -s "$T/fake.port" ] && break
    sleep 0.05
done
FP=$(cat "$T/fake.port" 2>/dev/null)
out=$(hc ZTENSORD_LISTEN=127.0.0.1:"$FP")
check_match "healthcheck: a 503 answer is unhealthy (exit 1)" "$?:$out" '^1:unhealthy: HTTP/1\.1 503'
wait "$fake" 2>/dev/null
# TLS: only the TCP connection is checked
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -keyout "$T/k.pem" -out "$T/c.pem" >/dev/null 2>&1
CURL_TLS=(--cacert "$T/c.pem")
start_daemon "$R" --tls-cert "$T/c.pem" --tls-key "$T/k.pem" || finish
out=$(hc ZTENSORD_LISTEN=127.0.0.1:"$PORT" ZTENSORD_TLS_CERT="$T/c.pem")
check_match "healthcheck with TLS: the port accepts connections" "$?:$out" '^0:port [0-9]+ accepts connections'
stop_daemon

# Over a unix socket (--listen unix:PATH): bash has no /dev/unix, the script uses perl.
# sun_path holds 107 bytes: keep the socket directory short whatever $T is.
S=$(mktemp -d "${TMPDIR:-/tmp}/zthc.XXXXXX") || finish
at_exit "rm -rf -- '$S'"
# start_unix NAME FLAGS...: ztensord on unix:$S/z.sock, waits for its "listening" line.
start_unix() {
    local name=$1 i
    shift
    D_N=$((D_N + 1))
    D_ERR=$T/daemon$D_N.err
    "$ZTENSORD" --root "$R" --listen "unix:$S/z.sock" --access-log off "$@" 2>"$D_ERR" &
    D_PID=$!
    for i in $(seq 1 300); do
        grep -q 'listening on https\?+unix:' "$D_ERR" 2>/dev/null && { ok "$name"; return 0; }
        kill -0 "$D_PID" 2>/dev/null || break
        sleep 0.1
    done
    bad "$name" "$(head -c 400 "$D_ERR")"
    return 1
}
start_unix "ztensord on unix:$S/z.sock" || finish
out=$(hc ZTENSORD_LISTEN="unix:$S/z.sock")
check_eq "healthcheck: unix:PATH: healthy" "$?:$out" "0:healthy"
out=$(hc ZTENSORD_LISTEN=0.0.0.0:1 ZTD_HEALTHCHECK_ADDR="unix:$S/z.sock" ZTD_HEALTHCHECK_PATH=/readyz)
check_eq "healthcheck: ZTD_HEALTHCHECK_ADDR=unix:PATH, /readyz: healthy" "$?:$out" "0:healthy"
out=$(hc ZTENSORD_LISTEN="unix:$S/z.sock" ZTD_HEALTHCHECK_PATH=/nothing-here)
check_match "healthcheck: unix:PATH, a 404 path: unhealthy (exit 1)" "$?:$out" '^1:unhealthy: HTTP/1\.[01] 404'
stop_daemon
out=$(hc ZTENSORD_LISTEN="unix:$S/z.sock")
check_match "healthcheck: unix:PATH with nothing listening: unhealthy (exit 1)" "$?:$out" "^1:unhealthy: cannot connect to unix:$S/z.sock"
: >"$S/file"
out=$(hc ZTENSORD_LISTEN="unix:$S/file")
check_match "healthcheck: unix:PATH naming a regular file: unhealthy (exit 1)" "$?:$out" '^1:unhealthy: cannot connect'
# a unix socket that accepts and says nothing: unhealthy, and the check ends
$PY -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1] + ".tmp"); s.listen(4); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(20)
c, _ = s.accept()
time.sleep(8)' "$S/mute.sock" 2>"$T/mute.err" &
mute=$!
for i in $(seq 1 100); do
    [ -S "$S/mute.sock" ] && break
    sleep 0.05
done
out=$(hc ZTENSORD_LISTEN="unix:$S/mute.sock")
check_match "healthcheck: unix socket that never answers: unhealthy (exit 1)" "$?:$out" '^1:unhealthy: no answer'
kill "$mute" 2>/dev/null
wait "$mute" 2>/dev/null
start_unix "ztensord with TLS on unix:$S/z.sock" --tls-cert "$T/c.pem" --tls-key "$T/k.pem" || finish
out=$(hc ZTENSORD_LISTEN="unix:$S/z.sock" ZTENSORD_TLS_CERT="$T/c.pem")
check_match "healthcheck with TLS on unix:PATH: the socket accepts connections" "$?:$out" '^0:socket .* accepts connections'
finish
