# checks.sh: how every test script reports: "ok NAME", "FAIL NAME: why", "SKIP NAME"
# lines, counted in PASS, FAIL and SKIP for the closing "N passed, M failed" line.
# Sourced by common.sh, and on its own by scripts that start no daemon of their own
# kind (tests/docker/test-image.sh).
PASS=${PASS:-0}
FAIL=${FAIL:-0}
SKIP=${SKIP:-0}

note() { printf '# %s\n' "$*"; }
ok() {
    PASS=$((PASS + 1))
    printf 'ok   %s\n' "$1"
}
bad() {
    FAIL=$((FAIL + 1))
    printf 'FAIL %s%s\n' "$1" "${2:+: $2}"
}
skip() {
    SKIP=$((SKIP + 1))
    printf 'SKIP %s%s\n' "$1" "${2:+: $2}"
}
# check NAME CMD...: passes when CMD succeeds.
check() {
    local name=$1
    shift
    if "$@" >/dev/null; then ok "$name"; else bad "$name" "command failed: $*"; fi
}
check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "got '$2', want '$3'"; fi; }
check_ne() { if [ "$2" != "$3" ]; then ok "$1"; else bad "$1" "got '$2', want something else"; fi; }
# check_match NAME GOT ERE. (A here-string, not `printf | grep -q`: under pipefail grep
# -q's early exit gives printf a SIGPIPE and the pipeline fails on long input.)
check_match() { if grep -Eq -- "$3" <<<"$2"; then ok "$1"; else bad "$1" "'${2:0:400}' !~ /$3/"; fi; }
check_nomatch() { if grep -Eq -- "$3" <<<"$2"; then bad "$1" "'${2:0:400}' =~ /$3/"; else ok "$1"; fi; }
# check_ge NAME GOT MIN (integers)
check_ge() { if [ "$2" -ge "$3" ] 2>/dev/null; then ok "$1"; else bad "$1" "got '$2', want >= $3"; fi; }
# check_same NAME FILE1 FILE2: byte-identical
check_same() {
    if cmp -s -- "$2" "$3"; then
        ok "$1"
    else
        bad "$1" "$(cmp -- "$2" "$3" 2>&1 | head -1) (sizes $(stat -c %s "$2" 2>/dev/null || echo -) vs $(stat -c %s "$3" 2>/dev/null || echo -))"
    fi
}
