"""Send many requests pipelined on one connection and check every answer, in order.

usage: pipeline.py HOST PORT PLAN CHUNK SECONDS

PLAN has one request a line, fields separated by tabs:
    METHOD  TARGET  STATUS  WANT  BODY  [HEADER...]
STATUS is the status the answer must have. WANT is a file whose bytes the answer's body
must equal, "-" for no body, or "*" for a body not compared (its Content-Length is still
followed). BODY is a file sent as the request's body (with Content-Length), or "-".
Each request also carries "X-Request-Id: pipe-N" (N its line number from 0), and its
answer must echo it: that is how order is checked.

Requests are written by a second thread while this one reads: all at once when CHUNK is
0, else in pieces of 1 to CHUNK bytes (pseudo-random, seeded), each its own send. The
whole exchange must end within SECONDS. Prints one line per wrong answer (the first 10)
and a summary; exit 0 when every answer was right and the connection stayed open."""
import random
import socket
import sys
import threading
import time


def load_plan(path):
    plan = []
    for line in open(path, "rb").read().decode("utf-8").split("\n"):
        if not line:
            continue
        f = line.split("\t")
        plan.append({"method": f[0], "target": f[1], "status": int(f[2]), "want": f[3],
                     "body": f[4], "headers": f[5:]})
    return plan


def request_bytes(i, r, cache):
    body = b""
    if r["body"] != "-":
        body = cache.setdefault(r["body"], open(r["body"], "rb").read())
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: pipe-%d\r\n" % (
        r["method"], r["target"], i)
    for h in r["headers"]:
        head += h + "\r\n"
    if body or r["method"] in ("PUT", "POST"):
        head += "Content-Length: %d\r\n" % len(body)
    return head.encode("utf-8") + b"\r\n" + body


class Reader:
    def __init__(self, sock, deadline):
        self.sock, self.deadline, self.buf = sock, deadline, b""

    def fill(self):
        self.sock.settimeout(max(0.01, self.deadline - time.monotonic()))
        d = self.sock.recv(1 << 20)
        if not d:
            raise EOFError("connection closed by the server")
        self.buf += d

    def head(self):
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        h, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = h.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        hdrs = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        return status, hdrs

    def body(self, n):
        while len(self.buf) < n:
            self.fill()
        b, self.buf = self.buf[:n], self.buf[n:]
        return b


def main():
    host, port, plan_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    chunk, limit = int(sys.argv[4]), float(sys.argv[5])
    plan = load_plan(plan_path)
    cache = {}
    data = b"".join(request_bytes(i, r, cache) for i, r in enumerate(plan))
    deadline = time.monotonic() + limit
    s = socket.create_connection((host, port), timeout=limit)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def write():
        try:
            if chunk == 0:
                s.sendall(data)
                return
            rnd, o = random.Random(1), 0
            while o < len(data):
                n = rnd.randint(1, chunk)
                s.sendall(data[o:o + n])
                o += n
        except OSError:
            pass

    w = threading.Thread(target=write, daemon=True)
    w.start()
    rd, wrong, answered, closing = Reader(s, deadline), [], 0, False
    try:
        for i, r in enumerate(plan):
            status, hdrs = rd.head()
            n = 0 if r["method"] == "HEAD" or status in (204, 304) else int(hdrs.get("content-length", "0"))
            body = rd.body(n)
            answered += 1
            why = []
            if status != r["status"]:
                why.append("status %d, want %d" % (status, r["status"]))
            if hdrs.get("x-request-id") != "pipe-%d" % i:
                why.append("X-Request-Id %r: out of order" % hdrs.get("x-request-id"))
            if r["want"] == "-" and body:
                why.append("a body of %d bytes, want none" % len(body))
            elif r["want"] not in ("-", "*"):
                want = cache.setdefault(r["want"], open(r["want"], "rb").read())
                if body != want:
                    why.append("body of %d bytes differs from %s (%d bytes)" % (len(body), r["want"], len(want)))
            if hdrs.get("connection", "").lower() == "close":
                closing = True
                why.append("Connection: close")
            if why:
                wrong.append("request %d (%s %s): %s" % (i, r["method"], r["target"][:60], "; ".join(why)))
    except (OSError, EOFError, ValueError, IndexError) as e:
        wrong.append("after %d answers: %s" % (answered, e))
    s.close()
    for line in wrong[:10]:
        print(line)
    print("%d of %d requests answered, %d wrong, %.1f s%s" % (
        answered, len(plan), len(wrong), limit - (deadline - time.monotonic()),
        ", connection closing" if closing else ""))
    sys.exit(0 if not wrong and answered == len(plan) else 1)


main()
