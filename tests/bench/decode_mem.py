"""Many decoded range requests at once against ztensord, for decode_mem.sh.

usage: decode_mem.py PORT PATH N HOLD_SECONDS DAEMON_PID

Opens N connections to 127.0.0.1:PORT (small receive buffers), sends on each a
GET of PATH with a Range header and no Accept-Encoding (so the server decodes),
waits until every connection has its status line, holds them HOLD_SECONDS
without reading further (the server's decoders stay alive, blocked on full
socket buffers), then reads every response to its end. Prints the statuses and
the daemon's VmHWM / VmRSS (from /proc) at each step, in KiB. Bounded: every
socket operation has a timeout; the whole run gives up after 300 s."""
import socket
import sys
import time


def vm(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmHWM", "VmRSS")):
                k, v = line.split(":")
                out[k] = int(v.split()[0])
    return out


def main():
    port, path, n, hold, pid = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                float(sys.argv[4]), int(sys.argv[5]))
    deadline = time.monotonic() + 300
    req = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=1048576-\r\n"
           "Connection: close\r\n\r\n" % path).encode()
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
        s.settimeout(30)
        s.connect(("127.0.0.1", port))
        s.sendall(req)
        socks.append(s)
    print("sent %d requests: %s" % (n, vm(pid)), flush=True)
    statuses = {}
    heads = []
    for s in socks:
        buf = b""
        while b"\r\n" not in buf and time.monotonic() < deadline:
            c = s.recv(4096)
            if not c:
                break
            buf += c
        st = buf.split(b" ", 2)[1].decode() if buf.startswith(b"HTTP/") else "none"
        statuses[st] = statuses.get(st, 0) + 1
        heads.append(st)
    print("status lines %s: %s" % (dict(sorted(statuses.items())), vm(pid)), flush=True)
    time.sleep(hold)
    print("held %.0f s: %s" % (hold, vm(pid)), flush=True)
    total = 0
    for s in socks:
        while time.monotonic() < deadline:
            try:
                c = s.recv(1 << 20)
            except (ConnectionResetError, socket.timeout):
                break
            if not c:
                break
            total += len(c)
        s.close()
    print("read %d bytes, all closed: %s" % (total, vm(pid)), flush=True)


main()
