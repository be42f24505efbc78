"""Signed S3 requests from botocore itself, as vectors for s3_vectors_check.

    botocore_vectors.py OUTDIR

Writes OUTDIR/keys (mode 0600, the --s3-keys format), OUTDIR/vectors.txt and body files:
  - requests signed with botocore.auth.S3SigV4Auth (header form) and S3SigV4QueryAuth
    (presigned) at a fixed time, over keys with spaces, unicode, ~ + = and query strings with
    empty values, list-type=2&prefix=..., as botocore prepares them to be sent (AWSRequest with
    params: the query goes out through urlencode, spaces as '+');
  - two PUTs that boto3 really sent, with default settings, to a small recording server here:
    over https (self-signed, made with openssl at test time) boto3 sends aws-chunked with an
    x-amz-checksum-crc32 trailer and STREAMING-UNSIGNED-PAYLOAD-TRAILER; over http, a signed
    payload with an x-amz-checksum-crc32 header.
Run it with the python3 on PATH (it has boto3), not Debian's /usr/bin/python3.

vectors.txt: blocks of lines "vector NAME", "now SECONDS", "method M", "path RAW",
"query RAW", "header NAME<TAB>VALUE"..., optionally "body FILE" and "data FILE" (what the body
decodes to), "scope read|write", "end".
"""
import datetime
import http.server
import os
import ssl
import subprocess
import sys
import threading
from unittest import mock
from urllib.parse import urlsplit

import boto3
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.utils import percent_encode

KEYS = [("write", "AKIDZTWRITE0001", "zt/Secret+Key=With/Slashes0123456789abcd"),
        ("read", "AKIDZTREAD00002", "readOnlySecret0123456789ABCDEFGHIJKLMNOP")]
WHEN = datetime.datetime(2026, 1, 2, 3, 4, 5)
NOW = int(WHEN.replace(tzinfo=datetime.timezone.utc).timestamp())
HOST = "127.0.0.1:7070"

OBJECT_KEYS = ["plain.txt", "dir/sub dir/with space.zt", "unicode/Grüße/模型.safetensors",
               "tilde~plus+equals=amp&percent%hash#q?.bin", "a/!$'()*,;:@[]", "trailing/"]
QUERIES = [{}, {"list-type": "2", "prefix": "dir/sub dir/", "delimiter": "/"},
           {"list-type": "2", "prefix": "tilde~plus+=", "continuation-token": "a b+c/=",
            "start-after": "", "encoding-type": "url"},
           {"uploads": ""}, {"partNumber": "3", "uploadId": "0123abcd~x"},
           {"acl": "", "versionId": "null"}, {"prefix": "Grüße/ä"}]


class Out:
    def __init__(self, d):
        self.d = d
        self.f = open(os.path.join(d, "vectors.txt"), "w", encoding="utf-8")

    def vector(self, name, method, url, headers, scope, now=NOW, body=None, data=None):
        parts = urlsplit(url)
        w = self.f.write
        w(f"vector {name}\nnow {now}\nmethod {method}\npath {parts.path}\n")
        w(f"query {parts.query}\n")
        for k, v in headers:
            assert "\t" not in k and "\n" not in v and "\r" not in v, (k, v)
            w(f"header {k}\t{v}\n")
        for tag, content in (("body", body), ("data", data)):
            if content is not None:
                fn = f"{name}.{tag}"
                with open(os.path.join(self.d, fn), "wb") as f:
                    f.write(content)
                w(f"{tag} {fn}\n")
        w(f"scope {scope}\nend\n")


def signed(method, key, params, body, scope, presign, https):
    scheme = "https" if https else "http"
    url = f"{scheme}://{HOST}/models/" + percent_encode(key, safe="/~")
    req = AWSRequest(method=method, url=url, params=params, data=body)
    _, ak, secret = next(k for k in KEYS if k[0] == scope)
    creds = Credentials(ak, secret)
    if presign:
        auth = botocore.auth.S3SigV4QueryAuth(creds, "s3", "eu-central-1", expires=900)
    else:
        auth = botocore.auth.S3SigV4Auth(creds, "s3", "us-east-1")
        if https:
            req.context["payload_signing_enabled"] = False  # UNSIGNED-PAYLOAD
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=WHEN):
        auth.add_auth(req)
    prepared = req.prepare()
    headers = [("Host", HOST)] + list(prepared.headers.items())
    return prepared.url, headers


def signed_vectors(out):
    n = 0
    for i, key in enumerate(OBJECT_KEYS):
        for j, params in enumerate(QUERIES):
            for presign in (False, True):
                method = "PUT" if (i + j) % 3 == 0 else "GET"
                # a presigned URL is signed before any body exists
                body = b"hello, zt\n" * (i + 1) if method == "PUT" and not presign else b""
                scope = "read" if (i + j) % 2 else "write"
                https = (i + j) % 4 == 1
                url, headers = signed(method, key, params, body, scope, presign, https)
                out.vector(f"v{n:03d}", method, url, headers, scope)
                n += 1


class Recorder(http.server.BaseHTTPRequestHandler):
    seen = []

    protocol_version = "HTTP/1.1"  # so that Expect: 100-continue is answered

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = b""  # HTTP/1.1 chunked (boto3 streams aws-chunked inside it)
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b""):
                    pass
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    def do_PUT(self):
        body = self.read_body()
        Recorder.seen.append(("PUT", self.path, list(self.headers.items()), body))
        self.send_response(200)
        self.send_header("ETag", '"0123456789abcdef0123456789abcdef"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


def capture(out, tmp, https):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    if https:
        key, crt = os.path.join(tmp, "tls.key"), os.path.join(tmp, "tls.crt")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1"],
                       check=True, capture_output=True)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    scheme = "https" if https else "http"
    s3 = boto3.client("s3", endpoint_url=f"{scheme}://127.0.0.1:{srv.server_address[1]}",
                      aws_access_key_id=KEYS[0][1], aws_secret_access_key=KEYS[0][2],
                      region_name="us-east-1", verify=False,
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    data = bytes((i * 7 + 3) % 251 for i in range(200_000))
    Recorder.seen.clear()
    s3.put_object(Bucket="models", Key="dir/boto3 default.bin", Body=data)
    srv.shutdown()
    method, path, headers, body = Recorder.seen[0]
    now = int(datetime.datetime.now(datetime.timezone.utc).timestamp())
    name = "boto3_https_put" if https else "boto3_http_put"
    out.vector(name, method, path, headers, "write", now=now, body=body, data=data)
    return dict((k.lower(), v) for k, v in headers)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    kp = os.path.join(d, "keys")
    fd = os.open(kp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("# written by botocore_vectors.py\n")
        for scope, ak, secret in KEYS:
            f.write(f"{scope} {ak} {secret}\n")
    out = Out(d)
    signed_vectors(out)
    import urllib3
    urllib3.disable_warnings()
    h = capture(out, d, https=True)
    # what the brief says boto3 sends by default over TLS; fail loudly if that changes
    assert h.get("x-amz-content-sha256") == "STREAMING-UNSIGNED-PAYLOAD-TRAILER", h
    assert h.get("content-encoding") == "aws-chunked" and h.get("x-amz-trailer"), h
    h = capture(out, d, https=False)
    assert h.get("x-amz-checksum-crc32"), h
    out.f.close()
    print(f"botocore {botocore.__version__}: vectors in {d}")


if __name__ == "__main__":
    main()
