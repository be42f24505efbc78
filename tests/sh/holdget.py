"""Hold decoded responses open, for t_decode.sh.

usage: holdget.py PORT TARGET N SECONDS READY_FILE
Opens N connections to 127.0.0.1:PORT with small receive buffers and sends on
each `GET TARGET` without Accept-Encoding, so the server decodes. Once every
status line has arrived it writes them, space-separated, to READY_FILE, then
holds the connections SECONDS without reading (the server's decoders stay
busy on full socket buffers) and closes them."""
import os
import socket
import sys
import time


def main():
    port, target, n, hold, ready = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    req = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % target).encode()
    socks, statuses = [], []
    for _ in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        s.sendall(req)
        socks.append(s)
    for s in socks:
        buf = b""
        while b"\r\n" not in buf:
            c = s.recv(256)
            if not c:
                break
            buf += c
        statuses.append(buf.split(b" ")[1].decode() if buf.startswith(b"HTTP/") else "none")
    with open(ready + ".tmp", "w") as f:
        f.write(" ".join(statuses) + "\n")
    os.rename(ready + ".tmp", ready)
    time.sleep(hold)
    for s in socks:
        s.close()


main()
