# cluster_lib.sh: what the t_cluster*.sh scripts add to lib.sh: many daemons at once (an
# origin, a tier, node sidecars), each named, on a loopback port it keeps across a
# restart (a restarted origin or sidecar must be found where its clients look), a model
# of a few files from small to large components, concurrent `zt pull`s, and egress read
# from /metrics once a daemon is quiet. Source it after lib.sh:
#     . "$(dirname "$0")/lib.sh" "$@"
#     . "$(dirname "$0")/cluster_lib.sh"
# ZT_CLUSTER_MB sets the model's size (each script states its default and why).

declare -A ZD_PID ZD_PORT ZD_ERR ZD_ROOT ZD_ARGS
ZD_RUN=0

# zd_start NAME ROOT [FLAGS...]: a ztensord named NAME; its port is chosen at its first
# start and kept at later ones. Sets ZD_PID/PORT/ERR[NAME]; zd_url NAME is its URL.
zd_start() {
    local name=$1 root=$2
    shift 2
    ZD_ROOT[$name]=$root
    ZD_ARGS[$name]="$*"
    zd_launch "$name" "$@"
}
# zd_restart NAME: the same command again (same port, same cache directory).
zd_restart() {
    local name=$1
    # shellcheck disable=SC2086 # the flags were words, without spaces, when saved
    zd_launch "$name" ${ZD_ARGS[$name]}
}
zd_launch() {
    local name=$1 i
    shift
    ZD_RUN=$((ZD_RUN + 1))
    ZD_ERR[$name]=$T/$name.$ZD_RUN.err
    local listen=127.0.0.1:${ZD_PORT[$name]:-0}
    ttl_flags "$@" # a long upstream_ttl unless the flags name one (lib.sh)
    "$ZTENSORD" --root "${ZD_ROOT[$name]}" --listen "$listen" --access-log off "${TTL_FLAGS[@]}" \
        2>"${ZD_ERR[$name]}" &
    ZD_PID[$name]=$!
    if ! wait_listening "${ZD_ERR[$name]}" "${ZD_PID[$name]}"; then
        bad "$name starts" "$(head -c 600 "${ZD_ERR[$name]}")"
        return 1
    fi
    ZD_PORT[$name]=$LISTEN_PORT
    for i in $(seq 1 100); do
        [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$(zd_url "$name")/healthz")" = 200 ] && return 0
        sleep 0.1
    done
    bad "$name answers /healthz" "$(head -c 600 "${ZD_ERR[$name]}")"
    return 1
}
zd_url() { echo "http://127.0.0.1:${ZD_PORT[$1]}"; }
# zd_stop NAME: SIGTERM; exit status 0 and no sanitizer report are checks.
zd_stop() {
    local name=$1 pid=${ZD_PID[$1]:-}
    [ -n "$pid" ] || return 0
    ZD_PID[$name]=
    kill -TERM "$pid" 2>/dev/null
    if wait_exit "$pid" 30; then
        check_eq "$name exits 0 after SIGTERM" "$EXIT_RC" 0
    else
        bad "$name exits after SIGTERM" "still running after 30 s"
    fi
    check_sanitizers "$name: no sanitizer report" "${ZD_ERR[$name]}"
}
# zd_kill NAME: SIGKILL (a crash); a sanitizer report before it is still a failure.
zd_kill() {
    local name=$1 pid=${ZD_PID[$1]:-}
    [ -n "$pid" ] || return 0
    ZD_PID[$name]=
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if grep -Eq "$SAN_RE" "${ZD_ERR[$name]}" 2>/dev/null; then
        bad "$name: no sanitizer report before SIGKILL" "see ${ZD_ERR[$name]}"
    fi
}
zd_kill_all() {
    local n
    for n in "${!ZD_PID[@]}"; do [ -n "${ZD_PID[$n]}" ] && kill -KILL "${ZD_PID[$n]}" 2>/dev/null; done
}
at_exit zd_kill_all
zd_stop_all() {
    local n
    for n in "${!ZD_PID[@]}"; do zd_stop "$n"; done
}

# metric_of URL REGEX: the sum of the samples whose series matches.
metric_of() {
    curl -s --max-time 10 "$1/metrics" | awk -v re="$2" '$0 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%.0f\n", s }'
}
# ratio A B: A/B with 3 decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# make_model DIR MB: a model of about MB MiB in DIR/m/ (the names MODEL_FILES lists):
# one file with a large component (5/8 of it) and two small ones, one with two medium
# components, one with 64 small components and a 1 MiB one; sha256 digests (zt pack's
# default). Sets MODEL_BYTES (the files' total size).
make_model() {
    local dir=$1 mb=$2 big mid i args=()
    big=$((mb * 5 / 8 << 20))
    mid=$((mb / 8 << 20))
    mkdir -p "$dir/m" "$T/gen"
    rand "$T/gen/big" $big
    rand "$T/gen/s1" 4096
    rand "$T/gen/s2" 1000
    pack "$dir/m/a.zt" big=u8:$big:"$T/gen/big" s1=f32:1024:"$T/gen/s1" s2=u8:1000:"$T/gen/s2" || return 1
    rm -f "$T/gen/big"
    rand "$T/gen/m1" $mid
    rand "$T/gen/m2" $mid
    pack "$dir/m/b.zt" m1=u8:$mid:"$T/gen/m1" m2=u8:$mid:"$T/gen/m2" || return 1
    rm -f "$T/gen/m1" "$T/gen/m2"
    rand "$T/gen/one" $((1 << 20))
    for i in $(seq 1 64); do
        rand "$T/gen/t$i" 65536
        args+=("t$i=u8:65536:$T/gen/t$i")
    done
    pack "$dir/m/c.zt" one=u8:$((1 << 20)):"$T/gen/one" "${args[@]}" || return 1
    rm -rf "$T/gen"
    MODEL_FILES=(m/a.zt m/b.zt m/c.zt)
    MODEL_BYTES=$(cat "$dir/m/a.zt" "$dir/m/b.zt" "$dir/m/c.zt" | wc -c)
}

# pull_all NAME URL OUT [ZT PULL FLAGS...]: `zt pull` of every model file from URL into
# OUT, in the background (PULL_PID[NAME]); its output in $T/NAME.pull.
declare -A PULL_PID
pull_all() {
    local name=$1 url=$2 out=$3 f urls=()
    shift 3
    mkdir -p "$out"
    for f in "${MODEL_FILES[@]}"; do urls+=("$url/v1/files/$f"); done
    "$ZT" pull --quiet -o "$out" "$@" "${urls[@]}" >"$T/$name.pull" 2>&1 &
    PULL_PID[$name]=$!
}
# pull_wait NAME SECONDS: waits for that pull; PULL_RC is its exit status ("timeout"
# after SECONDS, when it is killed).
pull_wait() {
    wait_exit "${PULL_PID[$1]}" "$2"
    PULL_RC=$EXIT_RC
}
# same_model NAME OUT ORIGIN_ROOT: every model file in OUT is byte-exact.
same_model() {
    local name=$1 out=$2 root=$3 f bad_files=
    for f in "${MODEL_FILES[@]}"; do
        cmp -s "$out/$(basename "$f")" "$root/$f" || bad_files+=" $f"
    done
    if [ -z "$bad_files" ]; then ok "$name: every file byte-exact"; else
        bad "$name: every file byte-exact" "differ or missing:$bad_files"
    fi
}
