#!/bin/bash
# Byte ranges on components and /raw: single, open-ended, suffix, clamped, multipart,
# too many / too large (200), unsatisfiable (416), invalid syntax (200 full).
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 10000
rand "$T/t.raw" 1
pack "$R/a.zt" w=u8:10000:"$T/w.raw" tiny=u8:1:"$T/t.raw"
zget "$R/a.zt" w >"$T/comp.bin"

start_daemon "$R" || finish

# range_ok LABEL URLPATH FULLFILE RANGE START END: a single-span 206.
range_ok() {
    local label=$1 path=$2 full=$3 range=$4 a=$5 z=$6 len
    len=$(stat -c %s "$full")
    req "$label $range: 206" 206 -H "Range: $range" "$URL$path"
    check_eq "$label $range: Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes $a-$z/$len"
    check_eq "$label $range: Content-Length" "$(hdr "$LAST.hdr" Content-Length)" $((z - a + 1))
    check_eq "$label $range: Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
    slice "$full" "$a" $((z - a + 1)) >"$T/want.bin"
    check_same "$label $range: bytes" "$LAST.body" "$T/want.bin"
}
# range_full LABEL URLPATH FULLFILE RANGE: answered 200 with the whole representation.
range_full() {
    local label=$1 path=$2 full=$3 range=$4
    req "$label '$range': 200" 200 -H "Range: $range" "$URL$path"
    check_same "$label '$range': full body" "$LAST.body" "$full"
    check_eq "$label '$range': Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
    if has_hdr "$LAST.hdr" Content-Range; then
        bad "$label '$range': no Content-Range on 200"
    else
        ok "$label '$range': no Content-Range on 200"
    fi
}
# range_multi LABEL URLPATH FULLFILE RANGE RESOLVED...: a multipart/byteranges 206.
range_multi() {
    local label=$1 path=$2 full=$3 range=$4 len why ct
    shift 4
    len=$(stat -c %s "$full")
    req "$label multi ${range:0:40}: 206" 206 -H "Range: $range" "$URL$path"
    ct=$(hdr "$LAST.hdr" Content-Type)
    check_match "$label multi ${range:0:40}: multipart Content-Type" "$ct" '^multipart/byteranges; boundary=[0-9a-z-]+$'
    check_eq "$label multi ${range:0:40}: Content-Length" "$(hdr "$LAST.hdr" Content-Length)" "$(stat -c %s "$LAST.body")"
    check_eq "$label multi ${range:0:40}: Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
    if why=$($HELP multipart "$LAST.body" "$ct" "$full" "$len" "$@" 2>&1); then
        ok "$label multi ${range:0:40}: $# parts with Content-Range and bytes"
    else
        bad "$label multi ${range:0:40}: parts" "$why"
    fi
}
range_416() {
    local label=$1 path=$2 full=$3 range=$4 len
    len=$(stat -c %s "$full")
    check_err "$label '$range'" 416 range_not_satisfiable -H "Range: $range" "$URL$path"
    check_eq "$label '$range': Content-Range" "$(hdr "$LAST.hdr" Content-Range)" "bytes */$len"
}

for target in component raw; do
    if [ $target = component ]; then
        path=/v1/files/a.zt/objects/w/data
        full=$T/comp.bin
    else
        path=/v1/files/a.zt/raw
        full=$R/a.zt
    fi
    L=$(stat -c %s "$full")
    lab=$target

    req "$lab no Range: 200" 200 "$URL$path"
    check_eq "$lab no Range: Accept-Ranges" "$(hdr "$LAST.hdr" Accept-Ranges)" bytes
    check_same "$lab no Range: bytes" "$LAST.body" "$full"

    range_ok "$lab" $path "$full" bytes=0-99 0 99
    range_ok "$lab" $path "$full" bytes=0-0 0 0
    range_ok "$lab" $path "$full" bytes=100- 100 $((L - 1))
    range_ok "$lab" $path "$full" bytes=-100 $((L - 100)) $((L - 1))
    range_ok "$lab" $path "$full" "bytes=$((L - 10))-$((L + 1000))" $((L - 10)) $((L - 1))
    range_ok "$lab" $path "$full" "bytes=$((L - 1))-" $((L - 1)) $((L - 1))
    range_ok "$lab" $path "$full" "bytes=-$((L + 5))" 0 $((L - 1))
    range_ok "$lab" $path "$full" "bytes=0-$((L - 1))" 0 $((L - 1))
    range_ok "$lab" $path "$full" "BYTES= 5-9" 5 9
    range_ok "$lab" $path "$full" "bytes=0-9, $((L + 10))-" 0 9 # one of two satisfiable
    range_ok "$lab" $path "$full" "bytes=0-99999999999999999999999" 0 $((L - 1)) # LAST past 2^64: to the end
    range_ok "$lab" $path "$full" "bytes=-99999999999999999999999" 0 $((L - 1))  # suffix past 2^64: all

    range_multi "$lab" $path "$full" "bytes=0-9,100-199,-50" 0-9 100-199 $((L - 50))-$((L - 1))
    range_multi "$lab" $path "$full" "bytes=500-599,0-0" 500-599 0-0 # client order kept
    range_multi "$lab" $path "$full" "bytes=10-19, 5000-" 10-19 5000-$((L - 1))
    range_multi "$lab" $path "$full" "bytes=0-1,$((L - 2))-$((L + 100))" 0-1 $((L - 2))-$((L - 1))
    # 64 parts is the default cap: still 206
    parts=()
    for i in $(seq 0 63); do parts+=("$((i * 100))-$((i * 100))"); done
    range_multi "$lab" $path "$full" "$($HELP ranges 64 100)" "${parts[@]}"

    range_full "$lab" $path "$full" "$($HELP ranges 65 100)"             # more than 64 parts
    range_full "$lab" $path "$full" "bytes=0-,0-"                       # sum above the length
    range_full "$lab" $path "$full" "bytes=0-$((L - 1)),0-0"            # sum = length + 1
    range_full "$lab" $path "$full" "bytes=abc"                         # invalid syntax
    range_full "$lab" $path "$full" "items=0-9"                         # other unit
    range_full "$lab" $path "$full" "bytes=9-5"                         # last < first
    range_full "$lab" $path "$full" "bytes=1-2-3"
    range_full "$lab" $path "$full" "bytes=-"
    range_full "$lab" $path "$full" "bytes="
    range_full "$lab" $path "$full" "bytes=+1-2"

    range_416 "$lab" $path "$full" "bytes=$L-"
    range_416 "$lab" $path "$full" "bytes=$((L + 100))-$((L + 200))"
    range_416 "$lab" $path "$full" "bytes=-0"
    range_416 "$lab" $path "$full" "bytes=99999999999999999999999-" # FIRST past 2^64
    range_416 "$lab" $path "$full" "bytes=$L-,$((L + 5))-$((L + 9))"

    # HEAD with a Range: same status and headers, no body
    req "$lab GET range for HEAD" 206 -H "Range: bytes=0-99" "$URL$path"
    cp "$LAST.hdr" "$T/get.hdr"
    head_req "$lab HEAD with Range" 206 "$path" "Range: bytes=0-99"
    check_eq "$lab HEAD with Range: headers equal GET's" "$(headers_no_date "$LAST.hdr")" "$(headers_no_date "$T/get.hdr")"
done

# A one-byte component: ranges that the single byte satisfies, or not.
zget "$R/a.zt" tiny >"$T/tiny.bin"
range_ok tiny /v1/files/a.zt/objects/tiny/data "$T/tiny.bin" bytes=0-0 0 0
range_ok tiny /v1/files/a.zt/objects/tiny/data "$T/tiny.bin" bytes=-5 0 0
range_416 tiny /v1/files/a.zt/objects/tiny/data "$T/tiny.bin" bytes=1-

# curl's own range option agrees (uses the same header).
req "curl -r 1000-1999" 206 -r 1000-1999 "$URL/v1/files/a.zt/raw"
slice "$R/a.zt" 1000 1000 >"$T/want.bin"
check_same "curl -r bytes" "$LAST.body" "$T/want.bin"

# A cap below 64: --max-ranges 2 makes 3 ranges a 200.
start_daemon "$R" --max-ranges 2 || finish
range_multi "max2" /v1/files/a.zt/raw "$R/a.zt" "bytes=0-9,20-29" 0-9 20-29
range_full "max2" /v1/files/a.zt/raw "$R/a.zt" "bytes=0-9,20-29,40-49"

daemon_alive "daemon still running"
finish
