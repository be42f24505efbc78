"""Open many connections that each start a request and walk away in the middle of it.

usage: abort.py HOST PORT SECONDS THREADS PLAN

PLAN has one kind of request a line, fields separated by tabs:
    COUNT  MODE  METHOD  TARGET  SIZE  [HEADER...]
MODE "response": send the request, read between 1 and 64 KiB of the answer (headers and
the start of the body), then reset the connection (SO_LINGER 0). MODE "body": send the
request head with Content-Length SIZE, then between 1 and 64 KiB of the body, then reset
the connection; "body-fin": between 1 and 256 KiB, then close with a FIN (politely). The
client's receive buffer is kept small so that the server cannot push much before the end.

THREADS threads share the work; the whole run must end within SECONDS. Prints the number
of connections made, the first status line seen per plan line, and errors; exit 0 when all
COUNT x lines were made in time."""
import random
import socket
import struct
import sys
import threading
import time


def one(host, port, job, rnd):
    mode, method, target, size, headers = job
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.settimeout(5)
    s.connect((host, port))
    head = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, target, host)
    for h in headers:
        head += h + "\r\n"
    if mode.startswith("body"):
        head += "Content-Length: %d\r\n" % size
    s.sendall(head.encode("latin-1") + b"\r\n")
    got = b""
    want = rnd.randint(1024, 262144) if mode == "body-fin" else rnd.randint(1, 65536)
    if mode.startswith("body"):
        try:
            s.sendall(bytes(want))
        except OSError:
            pass  # the server answered early and closed
    else:
        while len(got) < want:
            d = s.recv(want - len(got))
            if not d:
                break
            got += d
    if mode != "body-fin":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    return got.split(b"\r\n", 1)[0].decode("latin-1") if got.startswith(b"HTTP/") else ""


def main():
    host, port, limit, nthreads = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    jobs, firsts = [], {}
    for i, line in enumerate(open(sys.argv[5], encoding="utf-8").read().splitlines()):
        f = line.split("\t")
        if len(f) >= 5:
            jobs += [(i, (f[1], f[2], f[3], int(f[4]), f[5:]))] * int(f[0])
    random.Random(7).shuffle(jobs)
    it, lock = iter(jobs), threading.Lock()
    deadline = time.monotonic() + limit
    done, errors = [0], []

    def work(seed):
        rnd = random.Random(seed)
        while time.monotonic() < deadline:
            with lock:
                nxt = next(it, None)
            if nxt is None:
                return
            i, job = nxt
            try:
                st = one(host, port, job, rnd)
                with lock:
                    done[0] += 1
                    firsts.setdefault(i, st)
            except OSError as e:
                with lock:
                    errors.append("%s %s: %s" % (job[1], job[2][:50], e))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in sorted(firsts):
        print("line %d: %s" % (i + 1, firsts[i] or "(no status line)"))
    for e in errors[:5]:
        print("error: " + e)
    print("%d of %d connections made, %d errors, %.1f s" % (
        done[0], len(jobs), len(errors), limit - (deadline - time.monotonic())))
    sys.exit(0 if done[0] == len(jobs) else 1)


main()
