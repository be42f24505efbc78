#!/usr/bin/python3
"""relay.py: a loopback HTTP relay in front of an origin (ztensord or nginx)
that breaks answers on purpose, for libztensor-remote's tests. Python stdlib
only; listens on 127.0.0.1 only and talks to 127.0.0.1 only.

    relay.py ORIGIN_PORT PORTFILE LOGFILE MODE [ARGS...]

MODE (SKIP = requests passed through untouched first; the open of a small
file makes two):
    pass                      forward every request
    count                     forward every request, logging each answer's body
                              bytes after its status ("-> 206 8388608")
    flip SKIP                 flip one byte (the middle one) of every later body
    flipone SKIP              flip one byte (the middle one) of the next body only
    status SKIP K CODE RA     answer the K requests after SKIP with CODE and,
                              unless RA is "-", Retry-After: RA; then forward
    stall SKIP SECONDS        the request after SKIP gets half its body, then
                              nothing for SECONDS, then the connection closes
    cut SKIP                  the request after SKIP gets half its body, then
                              the connection closes
    nofinal SKIP SECONDS      the request after SKIP gets its whole body chunked,
                              without the last chunk, then nothing for SECONDS
    encoding SKIP             later answers say Content-Encoding: gzip
    flipgate SKIP FILE        every later body asked with a Range (a fill's, not a
                              listing's) has one byte flipped (a quarter in) and
                              is sent half, then waits (60 s at most) until FILE
                              exists, then the rest: a fill that is certainly in
                              progress, with a bad byte already landed, while a
                              test asks the sidecar for it
    gather N SECONDS          each request waits until N requests are in the relay at
                              once (or SECONDS have passed), then is forwarded; its
                              log line ends with "peak P", the most at once so far:
                              whether a client asks several things at a time
    gate SKIP FILE            the requests after SKIP wait (60 s at most) until FILE
                              exists, then are forwarded: a test changes the origin
                              while a client is certainly mid-transfer
    full                      forward without Range (the origin answers 200)
    no-if-match               forward without If-Match and If-Unmodified-Since
    no-conditionals           forward without If-Match, If-Unmodified-Since, If-Range
    no-etag                   forward, and drop ETag from the answers
    heads                     forward every request, HEAD too, counting and
                              logging the HEADs (the other modes forward a HEAD
                              uncounted, logged as "- HEAD PATH -> STATUS")
    nohead                    forward, but answer every HEAD 501 (a server
                              without HEAD, as http.server is)
    lie304 ETAG               forward every request, but answer a HEAD that
                              carries If-None-Match with 304 (a lie once the
                              file changed), with ETag ETAG: "echo" (the
                              If-None-Match value), "none" (no ETag) or ETAG
    hang SECONDS              read requests, answer nothing for SECONDS
    chaos SEED                after the first two requests (an open), each
                              206 answer to a "bytes=A-B" range is, at random:
                              cut at a random point (12%), stalled 1 s then
                              cut (4%), replaced by 503 Retry-After: 0 (8%),
                              or has one random byte flipped (10%, at most 3
                              flips in all: a digest names a component, not
                              the chunk that was hit, so a pull retries the
                              whole component a bounded number of times)

GET /healthz (ztensord's start-up check of its upstream) is passed through
untouched, not counted and not logged, except in mode hang.

Writes its port to PORTFILE once listening; one line per request to LOGFILE:
    N METHOD PATH | Range | If-Match | If-Range | If-Unmodified-Since |
    Authorization -> STATUS
and for a HEAD (modes heads and lie304): N HEAD PATH | If-None-Match -> STATUS
Every wait is bounded; the process ends when the test kills it.
"""
import http.client
import http.server
import os
import socketserver
import sys
import threading
import random
import time

ORIGIN = int(sys.argv[1])
PORTFILE, LOGFILE, MODE = sys.argv[2], sys.argv[3], sys.argv[4]
ARGS = sys.argv[5:]
RNG = random.Random(int(ARGS[0]) if MODE == "chaos" and ARGS else 1)
LOCK = threading.Lock()
COUNT = [0]
FLIPS = [0]
GATHER = threading.Condition()
INSIDE = [0, 0]  # requests in the relay now (mode gather), and the most at once
FORWARD = ["Range", "If-Match", "If-Range", "If-Unmodified-Since", "If-None-Match",
           "Authorization", "Accept-Encoding",
           # an S3 origin's (moto): signed requests, and the checksum asked for
           "x-amz-date", "x-amz-content-sha256", "x-amz-security-token",
           "x-amz-checksum-mode"]
KEEP = ["Content-Type", "Content-Range", "ETag", "Last-Modified", "Retry-After",
        "Accept-Ranges", "Content-Encoding", "WWW-Authenticate", "x-amz-checksum-sha256"]


def log(line):
    with LOCK:
        with open(LOGFILE, "a") as f:
            f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def fetch(self, drop_range, method="GET"):
        hdrs = {h: self.headers[h] for h in FORWARD if self.headers.get(h) is not None}
        drop = []
        if drop_range:
            drop = ["Range", "If-Range"]
        elif MODE == "no-if-match":
            drop = ["If-Match", "If-Unmodified-Since"]
        elif MODE == "no-conditionals":
            drop = ["If-Match", "If-Unmodified-Since", "If-Range"]
        for h in drop:
            hdrs.pop(h, None)
        c = http.client.HTTPConnection("127.0.0.1", ORIGIN, timeout=30)
        c.request(method, self.path, headers=hdrs)
        r = c.getresponse()
        body = r.read()
        self.origin_length = r.getheader("Content-Length", "0")
        out = [(h, r.getheader(h)) for h in KEEP if r.getheader(h) is not None
               and not (MODE == "no-etag" and h == "ETag")]
        c.close()
        return r.status, out, body

    def send(self, status, headers, body, send_len=None, close=False):
        self.send_response(status)
        for h, v in headers:
            self.send_header(h, v)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body if send_len is None else body[:send_len])
        self.wfile.flush()

    def do_HEAD(self):
        if MODE == "nohead":
            self.send_error(501, "Unsupported method ('HEAD')")
            return
        if MODE == "hang":
            log("- HEAD %s -> (no answer)" % self.path)
            time.sleep(min(float(ARGS[0]), 60))
            self.close_connection = True
            return
        if MODE not in ("heads", "lie304"):  # passed through, not counted (SKIP counts GETs)
            status, hdrs, _ = self.fetch(False, "HEAD")
            log("- HEAD %s -> %d" % (self.path, status))
            self.send_response(status)
            for h, v in hdrs:
                self.send_header(h, v)
            self.send_header("Content-Length", str(self.origin_length))
            self.end_headers()
            return
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        inm = self.headers.get("If-None-Match")
        desc = "%d HEAD %s | %s" % (n, self.path, inm or "-")
        if MODE == "lie304" and inm:
            self.send_response(304)
            tag = {"echo": inm, "none": None}.get(ARGS[0], ARGS[0])
            if tag:
                self.send_header("ETag", tag)
            self.end_headers()
            log(desc + " -> 304 (made up)")
            return
        hdrs = {h: self.headers[h] for h in FORWARD if self.headers.get(h) is not None}
        c = http.client.HTTPConnection("127.0.0.1", ORIGIN, timeout=30)
        c.request("HEAD", self.path, headers=hdrs)
        r = c.getresponse()
        r.read()
        self.send_response(r.status)
        for h in KEEP + ["Content-Length"]:
            if r.getheader(h) is not None:
                self.send_header(h, r.getheader(h))
        self.end_headers()
        c.close()
        log(desc + " -> %d" % r.status)

    def chaos(self, n, desc):
        """Breaks a data range at random; True when the answer is sent."""
        rng = self.headers.get("Range", "")
        if n <= 2 or not rng.startswith("bytes=") or rng.startswith("bytes=-") or \
                rng == "bytes=0-15":
            return False
        with LOCK:
            roll, point = RNG.random(), RNG.random()
        if roll >= 0.34 or (roll >= 0.24 and FLIPS[0] >= 3):
            return False
        if roll < 0.08:
            log(desc + " -> 503 (chaos)")
            self.send(503, [("Retry-After", "0"), ("Content-Type", "application/json")],
                      b'{"error":{"code":"relay","message":"chaos"}}')
            return True
        status, hdrs, body = self.fetch(False)
        if status != 206 or not body:
            log(desc + " -> %d" % status)
            self.send(status, hdrs, body)
            return True
        if roll < 0.20:
            log(desc + " -> %d (cut)" % status)
            self.send(status, hdrs, body, send_len=int(len(body) * point), close=True)
        elif roll < 0.24:
            log(desc + " -> %d (stalled, cut)" % status)
            self.send(status, hdrs, body, send_len=int(len(body) * point), close=True)
            time.sleep(1)
        else:
            with LOCK:
                FLIPS[0] += 1
            log(desc + " -> %d (flipped)" % status)
            b = bytearray(body)
            b[int((len(b) - 1) * point)] ^= 0x40
            self.send(status, hdrs, bytes(b))
            return True
        self.close_connection = True
        return True

    def gather(self, desc):
        deadline = time.monotonic() + min(float(ARGS[1]), 60)
        with GATHER:
            INSIDE[0] += 1
            INSIDE[1] = max(INSIDE[1], INSIDE[0])
            GATHER.notify_all()
            while INSIDE[0] < int(ARGS[0]) and time.monotonic() < deadline:
                GATHER.wait(max(0.0, deadline - time.monotonic()))
            peak = INSIDE[1]
        try:
            status, hdrs, body = self.fetch(False)
            log(desc + " -> %d peak %d" % (status, peak))
            self.send(status, hdrs, body)
        finally:
            with GATHER:
                INSIDE[0] -= 1

    def do_GET(self):
        if self.path == "/healthz" and MODE != "hang":
            # ztensord's start-up question to an upstream whose upstream_kind is set: passed
            # through, neither counted nor logged, so that SKIP counts the same requests
            status, hdrs, body = self.fetch(False)
            self.send(status, hdrs, body)
            return
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        h = self.headers
        desc = "%d GET %s | %s | %s | %s | %s | %s" % (
            n, self.path, h.get("Range", "-"), h.get("If-Match", "-"), h.get("If-Range", "-"),
            h.get("If-Unmodified-Since", "-"), h.get("Authorization", "-"))
        skip = int(ARGS[0]) if ARGS and MODE in ("flip", "flipone", "flipgate", "status", "stall",
                                                 "cut", "nofinal", "encoding") else 0
        if MODE == "chaos" and self.chaos(n, desc):
            return
        if MODE == "hang":
            log(desc + " -> (no answer)")
            time.sleep(min(float(ARGS[0]), 60))
            self.close_connection = True
            return
        if MODE == "status" and skip < n <= skip + int(ARGS[1]):
            code = int(ARGS[2])
            hdrs = [("Content-Type", "application/json")]
            if ARGS[3] != "-":
                hdrs.append(("Retry-After", ARGS[3]))
            body = b'{"error":{"code":"relay","message":"made up by relay.py"}}'
            log(desc + " -> %d (made up)" % code)
            self.send(code, hdrs, body)
            return
        if MODE == "gather":
            self.gather(desc)
            return
        if MODE == "gate" and n > int(ARGS[0]):
            deadline = time.monotonic() + 60
            while not os.path.exists(ARGS[1]) and time.monotonic() < deadline:
                time.sleep(0.02)
        status, hdrs, body = self.fetch(MODE == "full")
        log(desc + " -> %d" % status + (" %d" % len(body) if MODE == "count" else ""))
        if n <= skip or status >= 300 or MODE not in ("flip", "flipone", "flipgate", "stall", "cut",
                                                      "status", "nofinal", "encoding"):
            self.send(status, hdrs, body)
        elif MODE == "flipgate" and self.headers.get("Range") is None:
            self.send(status, hdrs, body)
        elif MODE == "flipgate":
            b = bytearray(body)
            if b:
                b[len(b) // 4] ^= 0x01
            half = len(b) // 2
            self.send(status, hdrs, bytes(b), send_len=half)
            deadline = time.monotonic() + 60
            while not os.path.exists(ARGS[1]) and time.monotonic() < deadline:
                time.sleep(0.02)
            self.wfile.write(bytes(b[half:]))
            self.wfile.flush()
        elif MODE == "flip" or (MODE == "flipone" and n == skip + 1):
            b = bytearray(body)
            if b:
                b[len(b) // 2] ^= 0x01
            self.send(status, hdrs, bytes(b))
        elif MODE in ("stall", "cut") and n == skip + 1:
            self.send(status, hdrs, body, send_len=len(body) // 2, close=True)
            if MODE == "stall":
                time.sleep(min(float(ARGS[1]), 60))
            self.close_connection = True
        elif MODE == "nofinal" and n == skip + 1:
            self.send_response(status)
            for h, v in hdrs:
                self.send_header(h, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
            self.wfile.flush()
            time.sleep(min(float(ARGS[1]), 60))
            self.close_connection = True
        elif MODE == "encoding":
            self.send(status, hdrs + [("Content-Encoding", "gzip")], body)
        else:
            self.send(status, hdrs, body)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    with open(PORTFILE + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(PORTFILE + ".tmp", PORTFILE)
    srv.serve_forever()


if __name__ == "__main__":
    main()
