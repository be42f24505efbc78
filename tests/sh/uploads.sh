# uploads.sh: helpers for suites that write through the API (uploads, hostile,
# remote, upstream): the staging directory, PUTs and upload sessions. Source it
# after common.sh.
STAGING=.ztensord-staging
# Flags that make a daemon writable without tokens and independent of the host's free disk.
OPEN=(--allow-anonymous-writes --disk-reserve 0)

# ---- root and staging

# staging_files ROOT: the staging files under ROOT's staging directory, relative to it
# (each instance stages in its own directory run-PID-RANDOM; those directories are not
# listed, nor counted below).
staging_files() {
    if [ -d "$1/$STAGING" ]; then (cd "$1/$STAGING" && find . -mindepth 1 ! -type d | sed 's|^\./||'); fi
}
# staging_count ROOT: how many staging files ROOT holds (0 if there is no staging directory).
staging_count() { staging_files "$1" | wc -l; }
# wait_staging_empty ROOT [SECONDS]: poll (default 2 s) until staging is empty.
wait_staging_empty() {
    local i lim=${2:-2}
    for i in $(seq 1 $((lim * 20))); do
        [ "$(staging_count "$1")" = 0 ] && return 0
        sleep 0.05
    done
    [ "$(staging_count "$1")" = 0 ]
}
check_staging_empty() {
    if wait_staging_empty "$2" "${3:-2}"; then
        ok "$1"
    else
        bad "$1" "staging still holds: $(staging_files "$2" | head -5 | tr '\n' ' ')"
    fi
}
# published_files ROOT: every regular file or symlink under ROOT outside staging, sorted.
published_files() {
    (cd "$1" && find . -path "./$STAGING" -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | sort)
}

# ---- uploads

# put NAME FILE [CURL-ARGS...]: PUT FILE as /v1/files/NAME into $T/r.
put() {
    local name=$1 file=$2
    shift 2
    LAST=$T/r
    http "$LAST" -T "$file" "$@" "$URL/v1/files/$name"
}
# session_open FILE [ATTRS-JSON]: POST /v1/uploads; sets SID (empty on failure).
session_open() {
    LAST=$T/r
    local body
    body=$(printf '{"file":"%s"%s}' "$1" "${2:+,\"attributes\":$2}")
    http "$LAST" -X POST -H 'Content-Type: application/json' --data-binary "$body" "$URL/v1/uploads"
    SID=
    [ "$CODE" = 201 ] && SID=$(jget "$LAST.body" id)
    [ "$SID" = MISSING ] && SID=
    return 0
}
# comp_put SID KEY FILE [CURL-ARGS...]: PUT a component (add ?encoding=zstd via KEY).
comp_put() {
    local sid=$1 key=$2 file=$3
    shift 3
    LAST=$T/r
    http "$LAST" -T "$file" "$@" "$URL/v1/uploads/$sid/components/$key"
}
# commit SID JSON: POST the commit body.
commit() {
    LAST=$T/r
    http "$LAST" -X POST -H 'Content-Type: application/json' --data-binary "$2" "$URL/v1/uploads/$1/commit"
}
# listing_field NAME FIELD: a field of NAME's entry in a fresh /v1/files (MISSING if absent).
listing_field() {
    curl -s --max-time 10 -o "$T/list.json" "$URL/v1/files"
    $HELP listing "$T/list.json" "$1" "$2" 2>/dev/null
}
