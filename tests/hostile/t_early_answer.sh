#!/bin/bash
# Early answers reach the client (issue 10, point 5). A write refused before its body is
# read (401 without a token, 412 for If-None-Match: * over an existing file) must reach a
# client that sends its body without Expect: 100-continue, as Python's http.client and
# requests do: the server reads and drops the body (up to lingering_max, for up to
# lingering_timeout), then answers. A declared body over the bound is answered at once and
# the connection closed; a body that goes on too long or too slowly is cut within the
# bounds; a client that sends Expect: 100-continue gets the refusal before any body.
. "$(dirname "$0")/lib.sh" "$@"

R=$T/root
mkdir -p "$R"
rand "$T/w.raw" 3000
pack "$T/v1.zt" w=u8:3000:"$T/w.raw" || finish
cp "$T/v1.zt" "$R/x.zt"
WT=wr-$(head -c 48 /dev/urandom | base64 -w0 | tr -dc 'A-Za-z0-9' | head -c 32)
echo "write $WT" >"$T/tokens"

start_daemon "$R" --tokens-file "$T/tokens" --disk-reserve 0 --lingering-max 32M \
    --lingering-timeout 2s || finish

# noexpect_put PATH SIZE [HEADER:VALUE...]: http.client PUT of SIZE bytes (it never sends
# Expect), then a GET /healthz on the same connection. Prints "STATUS BODY" of the PUT and
# "again STATUS" of the GET, or "EXC <exception>".
noexpect_put() {
    "$PY" - "$PORT" "$@" <<'EOF'
import http.client, sys
port, path, size = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
hdrs = dict(h.split(":", 1) for h in sys.argv[4:])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
try:
    c.request("PUT", path, body=b"\0" * size, headers=hdrs)
    r = c.getresponse()
    print(r.status, r.read().decode(), end="")  # a JSON body ends with its own newline
    c.request("GET", "/healthz")
    r = c.getresponse()
    r.read()
    print("again", r.status)
except Exception as e:  # what the client saw instead of the answer
    print("EXC", type(e).__name__, e)
EOF
}

# ---- 1 MiB without a token, without Expect
out=$(noexpect_put /v1/files/new.zt 1048576)
check_match "1 MiB PUT without a token, no Expect: the client reads 401" "$(head -1 <<<"$out")" \
    '^401 \{"error":\{"code":"unauthorized",'
check_eq "... and the connection goes on (GET on it: 200)" "$(sed -n 2p <<<"$out")" "again 200"

# ---- If-None-Match: * over an existing file; 16 MiB, more than the socket buffers on both
# sides hold, so that without the fix the client fails every time, not by chance
out=$(noexpect_put /v1/files/x.zt $((16 << 20)) "Authorization:Bearer $WT" "If-None-Match:*")
check_match "16 MiB PUT with If-None-Match: * over a file, no Expect: the client reads 412" \
    "$(head -1 <<<"$out")" '^412 \{"error":\{"code":"precondition_failed",'
check_same "the file is unchanged" "$R/x.zt" "$T/v1.zt"
check_staging_empty "staging is empty" "$R"

# ---- chunked, no Expect (the size is not known before the body)
"$PY" - "$PORT" >"$T/chunked.out" 2>&1 <<'EOF'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=20)
try:
    c.request("PUT", "/v1/files/new.zt", body=iter([b"\0" * 65536] * 16), encode_chunked=True,
              headers={"Transfer-Encoding": "chunked"})
    r = c.getresponse()
    print(r.status, r.read().decode())
except Exception as e:
    print("EXC", type(e).__name__, e)
EOF
check_match "1 MiB chunked PUT without a token, no Expect: the client reads 401" \
    "$(cat "$T/chunked.out")" '^401 \{"error":\{"code":"unauthorized",'

# ---- a declared body over lingering_max: answered at once, connection closed
printf 'PUT /v1/files/new.zt HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n' >"$T/req"
t0=$(date +%s%N)
raw_http 127.0.0.1 "$PORT" "$T/req" 5 >"$T/ans"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "Content-Length over lingering_max: the connection is closed" "$rc" 0
check_match "... answered 401 at once" "$(head -1 "$T/ans")" '^HTTP/1\.1 401 '
# (raw_http waits 5 s: an answer that waited for the body would not come before it gave up)
check "... without waiting for the body (took $ms ms)" [ "$ms" -lt 4500 ]

# ---- a chunked body over lingering_max, or trickling past lingering_timeout: cut
# bounded_body MODE: send a chunked PUT without a token, fast (MODE=fast: 128 MiB) or slowly
# (MODE=slow: 1 KiB every 100 ms, for at most 8 s); print how the connection ended and after
# how many ms.
bounded_body() {
    "$PY" - "$PORT" "$1" <<'EOF'
import socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"PUT /v1/files/new.zt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
t0 = time.monotonic()
chunk = b"%x\r\n%s\r\n" % (65536 if mode == "fast" else 1024, b"\0" * (65536 if mode == "fast" else 1024))
sent, how = 0, "not closed"
limit = 128 << 20
s.setblocking(False)
while time.monotonic() - t0 < 8 and sent < limit:
    try:
        if s.recv(65536) == b"":
            how = "closed"
            break
    except BlockingIOError:
        pass
    except ConnectionResetError:
        how = "closed"
        break
    try:
        sent += s.send(chunk)
    except BlockingIOError:
        time.sleep(0.01)
    except (BrokenPipeError, ConnectionResetError):
        how = "closed"
        break
    if mode == "slow":
        time.sleep(0.1)
print(how, int((time.monotonic() - t0) * 1000), sent)
EOF
}
read -r how ms sent <<<"$(bounded_body fast)"
check_eq "128 MiB chunked body over lingering_max (32M): the connection is cut" "$how" closed
check "... before the client sent 64 MiB (sent $sent bytes)" test "${sent:-0}" -lt $((64 << 20))
read -r how ms sent <<<"$(bounded_body slow)"
check_eq "a body trickling past lingering_timeout (2s): the connection is cut" "$how" closed
check_match "... after 2 to 4 s (took $ms ms)" "$ms" '^[23][0-9]{3}$'

# ---- with Expect: 100-continue the refusal comes before any body, and no 100
printf 'PUT /v1/files/new.zt HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\nExpect: 100-continue\r\n\r\n' >"$T/req"
raw_http 127.0.0.1 "$PORT" "$T/req" 5 >"$T/ans"
check_eq "Expect: 100-continue and no body sent: the connection is closed" "$?" 0
check_match "... answered 401" "$(head -1 "$T/ans")" '^HTTP/1\.1 401 '
check_nomatch "... without 100 Continue" "$(cat "$T/ans")" '100 Continue'
http "$T/e" -T "$T/v1.zt" -H 'Expect: 100-continue' "$URL/v1/files/new.zt"
check_eq "curl with Expect: 401" "$CODE" 401

daemon_alive "the daemon is alive"
check_eq "nothing was published" "$(published_files "$R")" "x.zt"
finish
