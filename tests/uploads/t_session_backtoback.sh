#!/bin/bash
# Components sent back to back: a client that sends its next component the
# moment it has the 201 for the last one must never find the session busy
# (409 session_busy). The session used to be given back only when
# libmicrohttpd freed the request, after the answer was already out.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
start_daemon "$R" "${OPEN[@]}" || finish
session_open m/b2b.zt '{}'
check_code "POST /v1/uploads: 201" 201

# 1000 components of 64 bytes over one keep-alive connection and, for half of
# them, a fresh connection: every answer is printed as its status.
"$PY" - 127.0.0.1 "$PORT" "$SID" > "$T/codes" <<'PYEOF'
import http.client, sys
host, port, sid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
keep = http.client.HTTPConnection(host, port, timeout=10)
body = bytes(range(64))
for i in range(1000):
    conn = keep if i % 2 == 0 else http.client.HTTPConnection(host, port, timeout=10)
    conn.request("PUT", f"/v1/uploads/{sid}/components/k{i}", body=body,
                 headers={"Content-Type": "application/octet-stream"})
    r = conn.getresponse()
    r.read()
    print(r.status, flush=True)
    if conn is not keep:
        conn.close()
PYEOF
check_eq "1000 components sent back to back: every answer 201" \
    "$(sort "$T/codes" | uniq -c | awk '{print $2":"$1}' | tr '\n' ' ')" "201:1000 "
finish
