#!/usr/bin/python3
"""evil_upstream.py: a hostile upstream for ztensord's pull-through cache
(the t_hostile_*.sh scripts). Python stdlib only; listens on 127.0.0.1 only,
on two ephemeral ports (the second one is where redirects point).

    evil_upstream.py ROOT PORTFILE LOGFILE MODE [ARGS...]

Files: GET/HEAD /NAME (a plain upstream) serves ROOT/NAME, with Range
(one "bytes=A-B", "bytes=A-" or "bytes=-N"), ETag and Last-Modified.
The listing: GET /v1/files answers the listing of MODE (below), so that
upstream_kind auto sees a ztensord when MODE is a listing mode.

MODE (SKIP = requests served honestly first; the open of a small .zt file
takes one or two):
    pass                    serve honestly
    drip SKIP GAP           later file answers: right headers, then the body
                            one byte every GAP seconds
    dripone SKIP GAP        like drip, for the one request after SKIP only;
                            the others are served honestly
    ok200 SKIP              later file answers: 200 and the whole file,
                            whatever the Range
    liecr SKIP              later file answers: a Content-Range naming the
                            asked range, but the bytes from one further on
    long SKIP               later file answers: Content-Length 1000 more than
                            the range (and those 1000 bytes sent)
    short SKIP              later file answers: half the body, then close
    noval                   serve honestly, but with no ETag and no
                            Last-Modified (nothing to pin a version on)
    redirect SKIP           later file answers: 302 to the same path on the
                            second port (which serves honestly)
    listing-names           a listing whose names are hostile: "..", "/",
                            empty segments, a hidden segment; and one fine
    listing-huge N          a listing of N entries
    listing-deep N          {"files": [[[...]]]} nested N deep
    listing-etag            a fine listing whose ETag changes on every
                            request, and which ignores If-None-Match
    stall REGEX [LIMIT]     a request whose "PATH RANGE" (RANGE "-" when none)
                            matches REGEX (re.search) is read, logged
                            ("-> stall"), and never answered: the connection
                            is closed when the client closes it, when the
                            file ROOT/.unstall exists, or after LIMIT seconds
                            (default 300); every other request is served
                            honestly

One line per request to LOGFILE: PORT METHOD PATH | Range | Authorization
-> STATUS. Every wait is bounded; the process ends when the test kills it.
"""
import http.server
import json
import os
import re
import select
import socketserver
import sys
import threading
import time

ROOT, PORTFILE, LOGFILE, MODE = sys.argv[1:5]
ROOT = os.path.abspath(ROOT)
ARGS = sys.argv[5:]
SKIP = int(ARGS[0]) if ARGS and MODE not in ("listing-huge", "listing-deep", "stall") else 0
STALL = re.compile(ARGS[0]) if MODE == "stall" else None
STALL_LIMIT = float(ARGS[1]) if MODE == "stall" and len(ARGS) > 1 else 300.0
LOCK = threading.Lock()
COUNT = [0]
ETAGS = [0]
PORTS = []
MAX_WAIT = 600  # seconds: no answer lasts longer


def log(line):
    with LOCK, open(LOGFILE, "a") as f:
        f.write(line + "\n")


def listing_body():
    if MODE == "listing-names":
        names = ["../escape.zt", "a/../../escape.zt", "/abs.zt", "a//b.zt", ".hidden/x.zt",
                 "a/./b.zt", "ok.zt"]
        return json.dumps({"files": [{"name": n, "size": 100, "status": "ok"} for n in names]})
    if MODE == "listing-huge":
        n = int(ARGS[0])
        parts = ['{"files":[']
        parts.append(",".join('{"name":"f%09d.zt","size":1,"status":"ok"}' % i for i in range(n)))
        parts.append("]}")
        return "".join(parts)
    if MODE == "listing-deep":
        n = int(ARGS[0])
        return '{"files":' + "[" * n + "]" * n + "}"
    return json.dumps({"files": [{"name": "ok.zt", "size": 100, "status": "ok"}]})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def note(self, status):
        log("%d %s %s | %s | %s -> %s" % (
            self.server.server_address[1], self.command, self.path,
            self.headers.get("Range", "-"), self.headers.get("Authorization", "-"), status))

    def do_HEAD(self):
        self.do_GET()

    def send_body(self, status, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.note(status)

    def stall(self):
        """Never answer: wait (bounded) for the client to go, then close."""
        self.note("stall")
        t0 = time.time()
        while time.time() - t0 < STALL_LIMIT:
            if os.path.exists(os.path.join(ROOT, ".unstall")):
                break
            r, _, _ = select.select([self.connection], [], [], 0.2)
            if r:
                try:
                    if not self.connection.recv(4096):
                        break
                except OSError:
                    break
        self.close_connection = True

    def do_GET(self):
        if STALL and STALL.search("%s %s" % (self.path, self.headers.get("Range", "-"))):
            return self.stall()
        if self.path.split("?")[0] == "/v1/files":
            if not MODE.startswith("listing"):
                return self.send_body(404, b'{"error":{"code":"not_found","message":"no"}}')
            ETAGS[0] += 1
            tag = '"l%d"' % (ETAGS[0] if MODE == "listing-etag" else 1)
            if MODE != "listing-etag" and self.headers.get("If-None-Match") == tag:
                return self.send_body(304, b"", [("ETag", tag)])
            return self.send_body(200, listing_body().encode(),
                                  [("ETag", tag), ("Content-Type", "application/json")])
        if self.path.startswith("/v1/"):
            return self.send_body(404, b'{"error":{"code":"not_found","message":"no"}}')
        path = os.path.normpath(os.path.join(ROOT, self.path.lstrip("/").split("?")[0]))
        if not path.startswith(ROOT + "/") or not os.path.isfile(path):
            return self.send_body(404, b"no such file")
        with open(path, "rb") as f:
            data = f.read()
        st = os.stat(path)
        etag = '"%x-%x"' % (st.st_size, int(st.st_mtime * 1000))
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        evil = self.server.server_address[1] == PORTS[0] and n > SKIP and MODE in (
            "drip", "ok200", "liecr", "long", "short", "redirect") or (
            MODE == "dripone" and n == SKIP + 1)
        if evil and MODE == "redirect":
            loc = "http://127.0.0.1:%d%s" % (PORTS[1], self.path)
            return self.send_body(302, b"", [("Location", loc)])
        a, b = 0, len(data) - 1
        rng = self.headers.get("Range")
        status = 200
        if rng and rng.startswith("bytes=") and not (evil and MODE == "ok200"):
            lo, _, hi = rng[6:].partition("-")
            if lo == "":
                a = max(0, len(data) - int(hi))
            else:
                a = int(lo)
                b = min(int(hi), b) if hi else b
            if a > b:
                return self.send_body(416, b"", [("Content-Range", "bytes */%d" % len(data))])
            status = 206
        body = data[a:b + 1]
        hdrs = [("ETag", etag), ("Accept-Ranges", "bytes"),
                ("Last-Modified", self.date_time_string(st.st_mtime))]
        if MODE == "noval":
            hdrs = hdrs[1:2]
        if status == 206:
            hdrs.append(("Content-Range", "bytes %d-%d/%d" % (a, b, len(data))))
        if not evil or MODE in ("ok200",):
            return self.send_body(status, body, hdrs)
        if MODE == "liecr":
            body = data[a + 1:b + 2].ljust(len(body), b"\0")
            return self.send_body(status, body, hdrs)
        if MODE == "long":
            body = body + b"\x55" * 1000
            return self.send_body(status, body, hdrs)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in hdrs:
            self.send_header(k, v)
        self.end_headers()
        self.note("%d %s" % (status, MODE))
        if MODE == "short":
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        gap = float(ARGS[1]) if len(ARGS) > 1 else 1.0
        t0 = time.time()
        for i in range(len(body)):  # drip: bounded by the body and MAX_WAIT
            if time.time() - t0 > MAX_WAIT:
                break
            try:
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
            except OSError:
                break
            time.sleep(gap)
        self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


servers = [Server(("127.0.0.1", 0), Handler) for _ in range(2)]
PORTS.extend(s.server_address[1] for s in servers)
threading.Thread(target=servers[1].serve_forever, daemon=True).start()
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d %d\n" % tuple(PORTS))
os.rename(PORTFILE + ".tmp", PORTFILE)
servers[0].serve_forever()
