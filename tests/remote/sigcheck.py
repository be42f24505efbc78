"""sigcheck.py: a loopback relay in front of an S3 origin (moto) that checks
the AWS Signature Version 4 of every request before forwarding it, with
botocore's own signer, for t_s3.sh. The canonical request is made as AWS
makes it: the path and every query parameter decoded, then encoded again
(RFC 3986 unreserved characters kept; '/' kept in the path only), the
parameters sorted; so a client that signs a URL written in another form
(a '/' left in a query value, a space as '+') fails here as it would at AWS.

    sigcheck.py ORIGIN_PORT PORTFILE LOGFILE ACCESS_KEY SECRET [SESSION_TOKEN]

With SESSION_TOKEN, every request must also carry it as x-amz-security-token,
signed.

Writes its port to PORTFILE; one line per request to LOGFILE:
    METHOD PATH -> ok | bad (why)
A request whose signature does not match is answered 403
SignatureDoesNotMatch, as S3 answers it. Loopback only; every wait bounded.
"""
import http.client
import http.server
import os
import socketserver
import sys
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

ORIGIN, PORTFILE, LOGFILE, KEY, SECRET = sys.argv[1:6]
TOKEN = sys.argv[6] if len(sys.argv) > 6 else None
ORIGIN = int(ORIGIN)


def log(line):
    with open(LOGFILE, "a") as f:
        f.write(line + "\n")


def canonical_url(host, raw):
    parts = urlsplit(raw)
    path = quote(unquote(parts.path), safe="/-_.~")
    pairs = sorted((quote(k, safe="-_.~"), quote(v, safe="-_.~"))
                   for k, v in parse_qsl(parts.query, keep_blank_values=True))
    q = "&".join("%s=%s" % kv for kv in pairs)
    return "http://%s%s%s" % (host, path, "?" + q if q else "")


def expected(handler):
    auth = handler.headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return None, "no SigV4 Authorization"
    fields = dict(p.strip().split("=", 1) for p in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    scope = fields["Credential"].split("/")
    if scope[0] != KEY:
        return None, "another access key"
    signed = fields["SignedHeaders"].split(";")
    if "x-amz-content-sha256" not in signed:
        return None, "x-amz-content-sha256 not signed (S3 requires it)"
    if TOKEN is not None and ("x-amz-security-token" not in signed or
                              handler.headers.get("x-amz-security-token") != TOKEN):
        return None, "the session token is not sent, or not signed"
    hdrs = {h: handler.headers[h] for h in signed if handler.headers.get(h) is not None}
    req = AWSRequest(method=handler.command,
                     url=canonical_url(handler.headers["Host"], handler.path), headers=hdrs)
    req.context["timestamp"] = handler.headers["X-Amz-Date"]
    signer = S3SigV4Auth(Credentials(KEY, SECRET), scope[3], scope[2])
    cr = signer.canonical_request(req)
    want = signer.signature(signer.string_to_sign(req, cr), req)
    return want == fields["Signature"], "signature differs"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def handle_any(self):
        good, why = expected(self)
        log("%s %s -> %s" % (self.command, self.path, "ok" if good else "bad (%s)" % why))
        if not good:
            body = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch'
                    b'</Code><Message>sigcheck.py: %s</Message></Error>' % why.encode())
            self.send_response(403)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        c = http.client.HTTPConnection("127.0.0.1", ORIGIN, timeout=30)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        c.request(self.command, self.path, headers=hdrs)
        r = c.getresponse()
        body = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "connection", "transfer-encoding", "server",
                                 "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", r.getheader("Content-Length", str(len(body))))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        c.close()

    do_GET = handle_any
    do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    with open(PORTFILE + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(PORTFILE + ".tmp", PORTFILE)
    srv.serve_forever()


if __name__ == "__main__":
    main()
