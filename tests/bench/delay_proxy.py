#!/usr/bin/python3
"""delay_proxy.py PORT ORIGIN_URL DELAY_MS: a loopback HTTP proxy that waits DELAY_MS before
forwarding each request to ORIGIN_URL (an S3 store farther away than loopback), for
tests/bench/store_listing.sh. Python stdlib only; one thread per connection."""
import http.server
import socketserver
import sys
import time
import urllib.error
import urllib.request

UP = sys.argv[2]
DELAY = int(sys.argv[3]) / 1000.0
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def go(self, m):
        time.sleep(DELAY)
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        hdr = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        req = urllib.request.Request(UP + self.path, data=body, headers=hdr, method=m)
        try:
            r = urllib.request.urlopen(req)
        except urllib.error.HTTPError as e:
            r = e
        data = r.read()
        self.send_response(r.status if hasattr(r, "status") else r.code)
        for k, v in r.headers.items():
            if k.lower() not in ("transfer-encoding", "connection", "content-length", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if m != "HEAD":
            self.wfile.write(data)
    def do_GET(self): self.go("GET")
    def do_HEAD(self): self.go("HEAD")
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
