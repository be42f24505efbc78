"""Slow and idle TCP clients for the hostile suite (loopback only, every wait bounded).

usage:
  slowpeer.py flood HOST PORT SRC N HOLD STATUS [--send STR] [--rcvbuf BYTES] [--gate FILE]
      Open N connections from address SRC (e.g. 127.0.0.2) and keep them for HOLD
      seconds (less once the server has closed them all, or once FILE exists),
      sending nothing, or STR once; never reading. After the connects (at most 10 s)
      writes "connected C closed X" to STATUS, and again every 0.2 s (X: the
      connections the server closed so far); at the end prints "opened N connected C closed X open Y": X connections
      the server closed.
  slowpeer.py trickle HOST PORT [--src SRC] [--first STR] [--rest STR | --rest-len N]
                      [--chunk N] [--every SEC] [--limit SEC]
      Send FIRST at once, then REST in CHUNK-byte pieces every EVERY seconds, until
      the server closes the connection or LIMIT seconds pass. Prints "closed T" or
      "open T" (seconds since FIRST was sent), then "response N" and the first line
      the server answered, if any.
STR may hold Python escapes (\\r\\n)."""
import argparse
import codecs
import errno
import os
import select
import socket
import sys
import time


TCP_ESTABLISHED = 1


def tcp_state(s):
    """The socket's TCP state (tcpi_state, the first byte of struct tcp_info)."""
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0]


def unescape(s):
    return codecs.decode(s, "unicode_escape").encode("latin-1")


def flood(a):
    socks = []
    end = time.monotonic() + 10
    for _ in range(a.n):
        if time.monotonic() > end:
            break
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if a.rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
        s.bind((a.src, 0))
        s.setblocking(False)
        try:
            s.connect((a.host, a.port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        socks.append(s)
    # Connections complete in the background (the kernel's accept queue); wait for them.
    pending = {s.fileno(): s for s in socks}
    connected = set()
    p = select.poll()
    for fd in pending:
        p.register(fd, select.POLLOUT)
    while pending and time.monotonic() < end:
        for fd, ev in p.poll(200):
            s = pending.pop(fd, None)
            if s is None:
                continue
            p.unregister(fd)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                connected.add(fd)
    data = unescape(a.send) if a.send else b""
    for s in socks:
        if data and s.fileno() in connected:
            try:
                s.send(data)
            except OSError:
                pass
    # Never read: a connection that asked for a file stays busy on the server. The
    # kernel's TCP state tells whether the server closed it (FIN or RST received).
    live = [s for s in socks if s.fileno() in connected]
    hold_end = time.monotonic() + a.hold
    while True:
        closed = sum(1 for s in live if tcp_state(s) != TCP_ESTABLISHED)
        with open(a.status + ".tmp", "w") as f:
            f.write("connected %d closed %d\n" % (len(connected), closed))
        os.rename(a.status + ".tmp", a.status)
        if closed == len(live) or time.monotonic() >= hold_end:
            break
        if a.gate and os.path.exists(a.gate):
            break
        time.sleep(0.2)
    print("opened %d connected %d closed %d open %d"
          % (len(socks), len(connected), closed, len(live) - closed))
    for s in socks:
        s.close()


def trickle(a):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if a.src:
        s.bind((a.src, 0))
    s.settimeout(5)
    s.connect((a.host, a.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    rest = b"x" * a.rest_len if a.rest_len else unescape(a.rest)
    answer = b""
    closed = False
    try:
        s.sendall(unescape(a.first))
    except OSError:
        closed = True
    t0 = time.monotonic()
    next_send = t0 + a.every
    while not closed and time.monotonic() - t0 < a.limit:
        now = time.monotonic()
        if rest and now >= next_send:
            try:
                s.send(rest[: a.chunk])
            except OSError:
                closed = True
                break
            rest = rest[a.chunk:]
            next_send = now + a.every
        wait = min(next_send - now if rest else 0.1, t0 + a.limit - now, 0.1)
        r, _, _ = select.select([s], [], [], max(wait, 0.001))
        if r:
            try:
                chunk = s.recv(65536)
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    continue
                chunk = b""
            if not chunk:
                closed = True
            answer += chunk
    t = time.monotonic() - t0
    print("%s %.2f" % ("closed" if closed else "open", t))
    print("response %d" % len(answer))
    if answer:
        print(answer.split(b"\r\n", 1)[0].decode("latin-1"))
    s.close()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("flood")
    f.add_argument("host")
    f.add_argument("port", type=int)
    f.add_argument("src")
    f.add_argument("n", type=int)
    f.add_argument("hold", type=float)
    f.add_argument("status")
    f.add_argument("--send", default="")
    f.add_argument("--rcvbuf", type=int, default=0)
    f.add_argument("--gate", default="")
    t = sub.add_parser("trickle")
    t.add_argument("host")
    t.add_argument("port", type=int)
    t.add_argument("--src", default="")
    t.add_argument("--first", default="")
    t.add_argument("--rest", default="")
    t.add_argument("--rest-len", type=int, default=0)
    t.add_argument("--chunk", type=int, default=1)
    t.add_argument("--every", type=float, default=2.0)
    t.add_argument("--limit", type=float, default=10.0)
    a = ap.parse_args()
    if a.cmd == "flood":
        flood(a)
    else:
        trickle(a)
    sys.stdout.flush()


main()
