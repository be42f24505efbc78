#!/usr/bin/python3
"""liar.py: a loopback server that answers zt pull as a lying or dripping
ztensord would (issue 27, findings 3 and 7, and names outside the prefix).
Python stdlib only; listens on 127.0.0.1 only.

    liar.py MODE PORTFILE LOGFILE [ARGS...]

MODE (GET /v1/files?prefix=P&limit=N&cursor=C is a listing page; ztensord's
JSON: {"files":[{"name","size","etag","status"}],"count","next_cursor"}):
    samecursor      every page: 1000 new names under P, and the same
                    100-byte next_cursor
    alternate       every page: 1000 new names, next_cursor A, B, A, B...
    fresh           every page: 1000 new names and a new cursor, forever
    twice           page 1: P0000.zt, P0001.zt, cursor; page 2: P0001.zt again
    outside         one page: P0000.zt, then "elsewhere/x.zt" (not under P)
    drip SECONDS    any GET: 200 (206 to a Range, of a 1000000-byte file),
                    then one byte every SECONDS (for at most 300 s; then the
                    connection closes)
A listing ends after $ZT_LIAR_PAGES pages (default 110) whatever the mode
(then 410 to every page), so that a client that never stops still ends (an
old zt pull: its memory grew without bound).

ARGS after MODE's own: PIDFILE. When given, each listing page logs the
VmHWM (peak resident memory, kB) of the process whose pid PIDFILE holds, as
/proc shows it while that process waits for the page.

Writes its port to PORTFILE once listening; one line per request to LOGFILE:
    N PATH hwm=KB
Every wait is bounded; the process ends when the test kills it.
"""
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse

MODE, PORTFILE, LOGFILE = sys.argv[1], sys.argv[2], sys.argv[3]
ARGS = sys.argv[4:]
DRIP = float(ARGS.pop(0)) if MODE == "drip" else 0
PIDFILE = ARGS[0] if ARGS else None
LIMIT = int(os.environ.get("ZT_LIAR_PAGES", "110"))
LOCK = threading.Lock()
COUNT = [0]


def hwm_kb():
    try:
        pid = open(PIDFILE).read().strip()
        for line in open("/proc/%s/status" % pid):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, TypeError):
        pass
    return -1


def names(prefix, page):
    return [{"name": "%sf%09d.zt" % (prefix, page * 1000 + i), "size": 1000,
             "etag": '"e%d"' % i, "status": "ok"} for i in range(1000)]


def page_of(prefix, n):
    """The n-th page (0-based) of MODE's listing, as a dict."""
    if MODE == "samecursor":
        return {"files": names(prefix, n), "next_cursor": "C" * 100}
    if MODE == "alternate":
        return {"files": names(prefix, n), "next_cursor": "AB"[n % 2] * 64}
    if MODE == "fresh":
        return {"files": names(prefix, n), "next_cursor": "c%d" % n}
    if MODE == "twice":
        f = [{"name": prefix + "0000.zt", "size": 1, "etag": '"a"', "status": "ok"},
             {"name": prefix + "0001.zt", "size": 1, "etag": '"b"', "status": "ok"}]
        return {"files": f, "next_cursor": "p2"} if n == 0 else {"files": f[1:]}
    if MODE == "outside":
        return {"files": [{"name": prefix + "0000.zt", "size": 1, "etag": '"a"', "status": "ok"},
                          {"name": "elsewhere/x.zt", "size": 1, "etag": '"b"', "status": "ok"}]}
    return {"files": []}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        with open(LOGFILE, "a") as f:
            f.write("%d %s hwm=%d\n" % (n, self.path, hwm_kb() if PIDFILE else -1))
        if MODE == "drip":
            size, rng = 1000000, self.headers.get("Range", "")
            first, last = 0, size - 1
            if rng.startswith("bytes=-"):
                first = size - int(rng[7:])
            elif rng.startswith("bytes="):
                a, _, b = rng[6:].partition("-")
                first, last = int(a), min(int(b or last), last)
            self.send_response(206 if rng else 200)
            if rng:
                self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
            self.send_header("Content-Length", str(last - first + 1))
            self.send_header("ETag", '"drip"')
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.flush()
            t0 = time.monotonic()
            try:
                for _ in range(last - first + 1):  # never past the length announced
                    if time.monotonic() - t0 > 300:
                        break
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(DRIP)
            except OSError:
                pass
            self.close_connection = True
            return
        if url.path != "/v1/files":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with LOCK:
            COUNT.append(n)
            page = len(COUNT) - 2  # listing pages served before this one
        if page >= LIMIT:
            data = b'{"error":{"code":"gone","message":"liar.py: its last page was served"}}'
            self.send_response(410)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        prefix = q.get("prefix", [""])[0]
        body = page_of(prefix, page)
        body["count"] = len(body["files"])
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
