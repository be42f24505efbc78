"""Clients whose requests are refused while they keep sending the body (loopback only, every
wait bounded).

usage: drainers.py HOST PORT N LENGTH STOPFILE LIMIT
Open N connections, each sending "PUT /v1/files/drainN.zt" with Content-Length: LENGTH and no
Authorization (so the server refuses it, but reads and drops the body first: it never sends
Expect: 100-continue), then 1 KiB of its body to each connection every 0.2 s, until STOPFILE
exists or LIMIT seconds pass. Prints "opened N closed X answered A": X connections the server
closed, A that got any answer bytes."""
import os
import select
import socket
import sys
import time


def main():
    host, port, n, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    stop, limit = sys.argv[5], float(sys.argv[6])
    socks = []
    for i in range(n):
        s = socket.create_connection((host, port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(("PUT /v1/files/drain%d.zt HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n"
                   % (i, length)).encode())
        s.setblocking(False)
        socks.append(s)
    closed, answered = set(), set()
    chunk = b"x" * 1024
    end = time.monotonic() + limit
    while time.monotonic() < end and not os.path.exists(stop):
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                s.send(chunk)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                closed.add(i)
        live = [s for i, s in enumerate(socks) if i not in closed]
        r, _, _ = select.select(live, [], [], 0.2)
        for s in r:
            i = socks.index(s)
            try:
                data = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if data:
                answered.add(i)
            else:
                closed.add(i)
    print("opened %d closed %d answered %d" % (n, len(closed), len(answered)))
    for s in socks:
        s.close()


main()
