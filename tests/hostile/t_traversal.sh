#!/bin/bash
# Traversal in every spelling, against every route that takes a name, with every method.
#
# tests/integration/t_names.sh already sends the common spellings ("..", %2e%2e, %2F, //,
# an absolute path, %5C, %252e, %c0%ae, %00) to GET .../raw and the manifest, and checks
# awkward object names. This script adds, for a larger set of spellings:
#  - every {file} route and method: GET and HEAD of the manifest, /raw, an object, a
#    component, and the writes PUT and DELETE;
#  - {object}, {component}, the blob digest, the upload id and the component key;
#  - the names given to POST /v1/uploads;
#  - spellings that decode to a harmless literal name (a double-encoded dot, a backslash,
#    Unicode look-alikes of '.' and '/'): a PUT creates exactly that name inside the root,
#    which proves the server decodes once and never normalises.
# Whatever happens, nothing outside the root is read, written or removed.
. "$(dirname "$0")/lib.sh" "$@"

J=$T/jail # everything the daemon could reach by escaping: checked unchanged at the end
R=$J/root
mkdir -p "$R/sub/dir" "$J/outdir"
rand "$T/w.raw" 3000
pack "$R/a.zt" w=u8:3000:"$T/w.raw"
pack "$R/sub/dir/f.zt" w=u8:3000:"$T/w.raw"
rand "$T/secret.raw" 4444
pack "$J/outside.zt" secret=u8:4444:"$T/secret.raw"
cp "$J/outside.zt" "$J/outdir/o.zt"
pack "$T/body.zt" w=u8:3000:"$T/w.raw" # what the PUTs send
SECRETS="$(sha256_hex "$J/outside.zt") $(sha256_hex "$T/secret.raw") $(sha256_hex /etc/passwd)"
BEFORE=$(tree_state "$J" "$R")
ROOT_BEFORE=$(published_files "$R")
HEX=$(sha256_hex "$T/w.raw")
ABS=$(printf '%s' "$J/outside.zt" | sed 's|/|%2F|g')

start_daemon "$R" "${OPEN[@]}" || finish

# refused LABEL WANT_ERE CURL-ARGS...: one request whose answer must match WANT_ERE, carry a
# JSON error (a LABEL starting with HEAD: no body at all), and contain no byte of anything
# outside the root.
refused() {
    local label=$1 want=$2
    shift 2
    http "$T/t" "$@"
    local h
    h=$(sha256_hex "$T/t.body")
    if ! grep -Eq "^($want)\$" <<<"$CODE"; then
        bad "$label" "HTTP $CODE, want $want: $(head -c 200 "$T/t.body")"
    elif case " $SECRETS " in *" $h "*) true ;; *) false ;; esac || grep -aq '^root:' "$T/t.body"; then
        bad "$label" "HTTP $CODE served bytes from outside the root"
    elif [[ $label == HEAD* ]] && ! cmp -s "$T/t.body" "$T/t.hdr"; then
        bad "$label" "HTTP $CODE with a body" # curl -I writes the headers to -o too
    elif [[ $label != HEAD* ]] && [ -z "$(jerr_code "$T/t.body")" ]; then
        bad "$label" "HTTP $CODE without a JSON error: $(head -c 200 "$T/t.body")"
    else
        ok "$label: $CODE"
    fi
}

# ---- {file}: spellings that try to leave the root (or reach a hidden name)
ESCAPES=(
    '../outside.zt' '..%2Foutside.zt' '..%2foutside.zt' '%2e%2e/outside.zt' '%2E%2e%2foutside.zt'
    '%2e%2e%2F%2e%2e%2Fetc%2Fpasswd.zt' '.%2e/outside.zt' '%2e./outside.zt' '...%2Foutside.zt'
    'sub/../../outside.zt' 'sub/dir/%2e%2e/%2e%2e/%2e%2e/outside.zt' 'sub%2F..%2F..%2Foutside.zt'
    '..%5Coutside.zt' '..\outside.zt' '.%5C..%5Coutside.zt'
    '%c0%ae%c0%ae/outside.zt' '%C0%AE%C0%AE%C0%AFoutside.zt' '%e0%80%ae%e0%80%ae%2Foutside.zt'
    '%f0%80%80%ae%f0%80%80%ae%2Foutside.zt' 'sub%c0%af..%c0%af..%c0%afoutside.zt'
    '..%00/outside.zt' 'outside.zt%00' '..%2Foutside.zt%00.zt' '%00..%2Foutside.zt'
    "$ABS" '%2Fetc%2Fpasswd.zt' '%2F%2E%2E%2Foutside.zt'
    '/outside.zt' '//outside.zt' 'sub//..//..//outside.zt' 'sub%2F%2F..%2Foutside.zt'
    '..%2Foutside.zt.'
    '.ztensord-staging%2F..%2F..%2Foutside.zt' '%2Eztensord-staging/x.zt'
)
FILE_SUFFIXES=("" /raw /objects/secret /objects/secret/data /objects/w/data)
for p in "${ESCAPES[@]}"; do
    for s in "${FILE_SUFFIXES[@]}"; do
        refused "GET /v1/files/$p$s" '400|404' "$URL/v1/files/$p$s"
    done
    refused "HEAD /v1/files/$p" '400|404' -I "$URL/v1/files/$p"
    refused "PUT /v1/files/$p" '400|404' -T "$T/body.zt" "$URL/v1/files/$p"
    refused "DELETE /v1/files/$p" '400|404' -X DELETE "$URL/v1/files/$p"
    refused "PUT /v1/files/$p/raw" '400|404|405' -T "$T/body.zt" "$URL/v1/files/$p/raw"
done

# ---- {file}: spellings that decode to a literal name inside the root
# name in the URL | the name it must decode to (no second decoding, no normalisation)
LITERALS=(
    '%252e%252e%252foutside.zt|%2e%2e%2foutside.zt'
    '%252E%252E/x.zt|%2E%2E/x.zt'
    'sub%5C..%5C..%5Coutside.zt|sub\..\..\outside.zt'
    'sub\..\..\x.zt|sub\..\..\x.zt'
    '%e2%80%a4%e2%80%a4%2Foutside.zt|․․/outside.zt'
    '%ef%bc%8e%ef%bc%8e%ef%bc%8foutside.zt|．．／outside.zt'
    'sub/dir/f.zt%20|sub/dir/f.zt '
    'outside.zt.|outside.zt.'
    'a.zt%2E|a.zt.'
    'sub/dir/f.zt%2e%2e|sub/dir/f.zt..'
)
# A name without a tensor extension is a plain file's (issue 23): created as it is,
# inside the root, like a .zt name.
for spec in "${LITERALS[@]}"; do
    IFS='|' read -r p name <<<"$spec"
    refused "literal '$p': GET before" 404 "$URL/v1/files/$p/raw"
    put "$p" "$T/body.zt"
    check_code "literal '$p': PUT creates it" 201
    check_same "literal '$p': the file is '$name' inside the root" "$R/$name" "$T/body.zt"
    check_eq "literal '$p': Location" "$(hdr "$LAST.hdr" Location)" "/v1/files/$($PY -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe="/"))' "$name")"
    req "literal '$p': GET /raw after the PUT" 200 "$URL/v1/files/$p/raw"
    check_same "literal '$p': the bytes PUT" "$LAST.body" "$T/body.zt"
    req "literal '$p': DELETE" 204 -X DELETE "$URL/v1/files/$p"
    check "literal '$p': gone" [ ! -e "$R/$name" ]
    find "$R" -mindepth 1 -path "$R/$STAGING" -prune -o -type d -empty -delete
done

# ---- {object} and {component}: names, never paths; invalid UTF-8 and NUL refused
for o in '..%2F..%2F..%2Foutside.zt' '..%2F..%2F..%2Fetc%2Fpasswd' '%2e%2e' '%2F' '..%5C..%5Csecret'; do
    refused "object '$o'" 404 "$URL/v1/files/a.zt/objects/$o"
    refused "object '$o' component" 404 "$URL/v1/files/a.zt/objects/$o/data"
    refused "component '$o'" 404 "$URL/v1/files/a.zt/objects/w/$o"
done
BAD_NAMES=('%c0%ae%c0%ae' '%c0%af' '%e0%80%ae' '%f0%80%80%ae' '%ed%a0%80' '%f4%90%80%80' '%ff'
    '%fe%ff' 'w%00' '%00' '%c2' 'w%e2%82')
for o in "${BAD_NAMES[@]}"; do
    refused "object '$o'" 400 "$URL/v1/files/a.zt/objects/$o"
    refused "component '$o'" 400 "$URL/v1/files/a.zt/objects/w/$o"
done
refused "more segments after the component" 404 "$URL/v1/files/a.zt/objects/w/data/../../../../outside.zt"

# ---- blobs
for b in "sha256:..%2F..%2Fetc%2Fpasswd" "sha256:%2e%2e" "..%2F..%2Foutside.zt" "sha256:$HEX%00" \
    "sha256:$HEX%2F.." "sha256%3A..%2F$HEX" "sha256:$HEX/../../files/a.zt/raw" "../files/a.zt/raw" \
    "%2e%2e/%2e%2e/v1/files/a.zt/raw" "sha256:%c0%ae${HEX:2}" "sha256:${HEX:0:63}%00"; do
    refused "blob '$b'" '400|404' "$URL/v1/blobs/$b"
done
req "the blob of a.zt's component is served" 200 "$URL/v1/blobs/sha256:$HEX"
check_same "blob bytes" "$LAST.body" "$T/w.raw"

# ---- upload ids and component keys
session_open k.zt
check_code "a session to try keys on: 201" 201
KS=$SID
for id in '..' '%2e%2e' '..%2F..%2Fetc' '%2F' '%00' "$KS%00" "$KS%2F.." '%c0%ae' '.' "$KS%5C.."; do
    refused "GET /v1/uploads/$id" '400|404' "$URL/v1/uploads/$id"
    refused "DELETE /v1/uploads/$id" '400|404' -X DELETE "$URL/v1/uploads/$id"
    refused "PUT /v1/uploads/$id/components/k" '400|404' -T "$T/w.raw" "$URL/v1/uploads/$id/components/k"
    refused "POST /v1/uploads/$id/commit" '400|404' -X POST --data-binary '{"objects":{}}' "$URL/v1/uploads/$id/commit"
done
refused "a component key followed by a path" 404 -T "$T/w.raw" "$URL/v1/uploads/$KS/components/k/../../../../outside.zt"
for k in "${BAD_NAMES[@]}"; do
    refused "component key '$k'" 400 -T "$T/w.raw" "$URL/v1/uploads/$KS/components/$k"
done
# A key is a name inside the session's file, not a path: a traversal-looking key is stored
# and committed like any other.
comp_put "$KS" '..%2F..%2F..%2Foutside.zt' "$T/w.raw"
check_code "key '../../../outside.zt': stored as a name" 201
check_eq "key '../../../outside.zt': the key as decoded" "$(jget "$LAST.body" key)" ../../../outside.zt
commit "$KS" '{"objects":{"w":{"shape":[3000],"components":{"data":{"key":"../../../outside.zt","dtype":"u8"}}}}}'
check_code "commit of the traversal-looking key: 201" 201
check_same "committed file: k.zt holds the component" <(zget "$R/k.zt" w) "$T/w.raw"

# ---- names given to POST /v1/uploads (JSON strings: the server sees them decoded)
for name in '../x.zt' '..' '../../x.zt' 'sub/../../x.zt' 'sub/./x.zt' './x.zt' '/x.zt' '//x.zt' \
    "$J/x.zt" 'sub//x.zt' 'x.zt/' 'x.zt.' '..\\x.zt' '.x.zt' 'sub/.hidden/x.zt' \
    '.ztensord-staging/x.zt' 'x\u0000.zt' '..\u0000/x.zt' '\ud800x.zt' 'a.zt/x.zt' ''; do
    LAST=$T/r
    http "$LAST" -X POST --data-binary "{\"file\":\"$name\"}" "$URL/v1/uploads"
    code=$(jerr_code "$LAST.body")
    if [ "$CODE" = 400 ] && [[ $code =~ ^(bad_request|bad_json)$ ]]; then
        ok "session name '$name': 400 $code"
    else
        bad "session name '$name'" "HTTP $CODE $(head -c 200 "$LAST.body")"
        id=$(jget "$LAST.body" id) && http "$T/d" -X DELETE "$URL/v1/uploads/$id"
    fi
done
for spec in '%2e%2e/x.zt|%2e%2e/x.zt' 'a\\..\\..\\x.zt|a\..\..\x.zt' '․․/x.zt|․․/x.zt'; do
    IFS='|' read -r json name <<<"$spec"
    session_open "$json"
    check_code "session name '$name' (literal): 201" 201
    comp_put "$SID" w "$T/w.raw"
    commit "$SID" '{"objects":{"w":{"shape":[3000],"components":{"data":{"key":"w","dtype":"u8"}}}}}'
    check_code "session name '$name': commit 201" 201
    check "session name '$name': committed inside the root under that name" zverify "$R/$name"
done

# ---- nothing outside the root changed; inside, only the names committed above appeared
check_eq "nothing outside the root was created, changed or removed" "$(tree_state "$J" "$R")" "$BEFORE"
check_eq "the root holds what it held plus the committed names" "$(published_files "$R" | tr '\n' '|')" \
    "$(printf '%s\n' $ROOT_BEFORE k.zt '%2e%2e/x.zt' 'a\..\..\x.zt' '․․/x.zt' | sort | tr '\n' '|')"
check_staging_empty "staging empty" "$R"
req "still serving" 200 "$URL/v1/files/a.zt/objects/w/data"
check_same "still serving: bytes" "$LAST.body" "$T/w.raw"
daemon_alive "daemon alive"
finish
