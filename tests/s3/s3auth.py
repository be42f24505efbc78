"""The boto3 side of the S3 front's authentication and payload tests
(t_auth.sh): each subcommand prints one line per check, "ok NAME" or
"FAIL NAME: why", and exits 0. Run with the python3 on PATH (boto3 1.43).

  s3auth.py keys URL ROOT       with --s3-keys: the write and read keys
                                (get, put, AccessDenied), a wrong secret, an
                                unknown key, presigned GET and PUT (good,
                                expired, tampered), clock skew, anonymous
                                reads, bearer-less anonymous writes refused
  s3auth.py chunked URL ROOT    aws-chunked bodies: boto3's default
                                (over TLS when URL is https), multipart
                                too; hand-made bodies with a flipped byte,
                                a wrong trailer checksum, a short body and
                                a wrong decoded length publish nothing;
                                signed streaming bodies (chunk signatures,
                                and a signed trailer) good and tampered

The keys are the ones t_auth.sh writes: write AKWRITE / secret-write-1,
read AKREAD / secret-read-1.
"""
import base64
import datetime
import hashlib
import hmac
import http.client
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
import zlib
from unittest import mock

import boto3
import botocore.auth
from botocore.config import Config
from botocore.exceptions import ClientError

WRITE = ("AKWRITE", "secret-write-1")
READ = ("AKREAD", "secret-read-1")
NOCHECK = ssl.create_default_context()
NOCHECK.check_hostname = False
NOCHECK.verify_mode = ssl.CERT_NONE


def ok(name):
    print("ok", name)


def fail(name, why):
    print("FAIL %s: %s" % (name, why))


def check(name, cond, why=""):
    (ok if cond else lambda n: fail(n, why))(name)


def client(url, key, **cfg):
    """boto3 with key; SigV4 everywhere (boto3 presigns with SigV2 by default)."""
    cfg.setdefault("signature_version", "s3v4")
    return boto3.client("s3", endpoint_url=url, region_name="us-east-1", verify=False,
                        aws_access_key_id=key[0], aws_secret_access_key=key[1],
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}, **cfg))


def code_of(fn):
    try:
        fn()
        return "no error"
    except ClientError as e:
        return e.response["Error"]["Code"]


def fetch(url, method="GET", data=None):
    """(status, body) of a plain request, errors included."""
    req = urllib.request.Request(url, data=data, method=method)
    try:
        with urllib.request.urlopen(req, context=NOCHECK) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def st_bytes(n, seed):
    """A valid safetensors file with one U8 tensor of n pseudo-random bytes."""
    import json
    import struct
    h = json.dumps({"w": {"dtype": "U8", "shape": [n], "data_offsets": [0, n]}}).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + hashlib.shake_256(seed.encode()).digest(n)


def keys(url, root):
    w, r = client(url, WRITE), client(url, READ)
    want = read(os.path.join(root, "a.safetensors"))
    got = w.get_object(Bucket="models", Key="a.safetensors")["Body"].read()
    check("write key: GetObject", got == want)
    got = r.get_object(Bucket="models", Key="a.safetensors")["Body"].read()
    check("read key: GetObject", got == want)
    keys_listed = [o["Key"] for o in r.list_objects_v2(Bucket="models").get("Contents", [])]
    check("read key: ListObjectsV2", "a.safetensors" in keys_listed, str(keys_listed[:5]))
    body = st_bytes(3000, "write-key")
    w.put_object(Bucket="models", Key="up/w.safetensors", Body=body)
    check("write key: PutObject publishes", read(os.path.join(root, "up/w.safetensors")) == body)
    c = code_of(lambda: r.put_object(Bucket="models", Key="up/r.safetensors", Body=body))
    check("read key: PutObject is AccessDenied", c == "AccessDenied", c)
    check("read key: nothing published", not os.path.exists(os.path.join(root, "up/r.safetensors")))
    c = code_of(lambda: r.delete_object(Bucket="models", Key="up/w.safetensors"))
    check("read key: DeleteObject is AccessDenied", c == "AccessDenied", c)
    check("read key: nothing deleted", os.path.exists(os.path.join(root, "up/w.safetensors")))
    bad_secret = client(url, (WRITE[0], "not-the-secret"))
    c = code_of(lambda: bad_secret.list_objects_v2(Bucket="models"))
    check("wrong secret: SignatureDoesNotMatch", c == "SignatureDoesNotMatch", c)
    c = code_of(lambda: bad_secret.put_object(Bucket="models", Key="up/x.safetensors", Body=body))
    check("wrong secret, PutObject: SignatureDoesNotMatch", c == "SignatureDoesNotMatch", c)
    check("wrong secret: nothing published", not os.path.exists(os.path.join(root, "up/x.safetensors")))
    unknown = client(url, ("AKNOBODY", "whatever-secret"))
    c = code_of(lambda: unknown.get_object(Bucket="models", Key="a.safetensors"))
    check("unknown key: InvalidAccessKeyId", c == "InvalidAccessKeyId", c)

    # presigned URLs
    u = r.generate_presigned_url("get_object", Params={"Bucket": "models", "Key": "a.safetensors"},
                                 ExpiresIn=600)
    st, b = fetch(u)
    check("presigned GET (read key)", st == 200 and b == want, "%s %s" % (st, b[:200]))
    v2 = client(url, READ, signature_version="s3").generate_presigned_url(
        "get_object", Params={"Bucket": "models", "Key": "a.safetensors"}, ExpiresIn=600)
    st, b = fetch(v2)
    check("presigned GET with SigV2: InvalidRequest",
          st == 400 and b"<Code>InvalidRequest</Code>" in b, "%s %s" % (st, b[:300]))
    tampered = u.replace("a.safetensors", "llm/model.safetensors")
    st, b = fetch(tampered)
    check("presigned GET for another key: SignatureDoesNotMatch",
          st == 403 and b"<Code>SignatureDoesNotMatch</Code>" in b, "%s %s" % (st, b[:300]))
    q = urllib.parse.urlsplit(u)
    args = urllib.parse.parse_qsl(q.query)
    args = [(k, ("1200" if k == "X-Amz-Expires" else v)) for k, v in args]
    st, b = fetch(q._replace(query=urllib.parse.urlencode(args)).geturl())
    check("presigned GET with a longer X-Amz-Expires: SignatureDoesNotMatch",
          st == 403 and b"<Code>SignatureDoesNotMatch</Code>" in b, "%s %s" % (st, b[:300]))
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)
    with mock.patch.object(botocore.auth, "get_current_datetime", lambda *a, **k: past):
        old = r.generate_presigned_url("get_object",
                                       Params={"Bucket": "models", "Key": "a.safetensors"},
                                       ExpiresIn=3600)
    st, b = fetch(old)
    check("presigned GET past its expiry: 403 AccessDenied",
          st == 403 and b"<Code>AccessDenied</Code>" in b, "%s %s" % (st, b[:300]))
    body2 = st_bytes(2000, "presigned-put")
    pu = w.generate_presigned_url("put_object",
                                  Params={"Bucket": "models", "Key": "up/presigned.safetensors"},
                                  ExpiresIn=600)
    st, b = fetch(pu, "PUT", body2)
    check("presigned PUT (write key)", st == 200, "%s %s" % (st, b[:300]))
    check("presigned PUT publishes", read(os.path.join(root, "up/presigned.safetensors")) == body2)
    pr = r.generate_presigned_url("put_object",
                                  Params={"Bucket": "models", "Key": "up/presigned-r.safetensors"},
                                  ExpiresIn=600)
    st, b = fetch(pr, "PUT", body2)
    check("presigned PUT with the read key: AccessDenied",
          st == 403 and b"<Code>AccessDenied</Code>" in b, "%s %s" % (st, b[:300]))
    st, b = fetch(pu.replace("presigned.safetensors", "presigned2.safetensors"), "PUT", body2)
    check("tampered presigned PUT: SignatureDoesNotMatch",
          st == 403 and b"<Code>SignatureDoesNotMatch</Code>" in b, "%s %s" % (st, b[:300]))
    check("tampered presigned PUT: nothing published",
          not os.path.exists(os.path.join(root, "up/presigned2.safetensors")))

    # a client clock 20 minutes off
    for minutes in (-20, 20):
        skewed = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes)
        with mock.patch.object(botocore.auth, "get_current_datetime", lambda *a, **k: skewed):
            c = code_of(lambda: r.list_objects_v2(Bucket="models"))
        check("clock %+d min: RequestTimeTooSkewed" % minutes, c == "RequestTimeTooSkewed", c)

    # without credentials: today's rules
    st, b = fetch(url + "/models/a.safetensors")
    check("anonymous GET still reads", st == 200 and b == want, str(st))
    st, b = fetch(url + "/models/up/anon.safetensors", "PUT", body2)
    check("anonymous PUT: AccessDenied", st == 403 and b"<Code>AccessDenied</Code>" in b,
          "%s %s" % (st, b[:300]))


def chunk_body(data, sizes, trailer=None):
    out, o = b"", 0
    for n in sizes:
        out += b"%x\r\n" % n + data[o:o + n] + b"\r\n"
        o += n
    out += b"0\r\n"
    if trailer:
        out += trailer + b"\r\n"
    return out + b"\r\n"


def signing_key(secret, day):
    def k(msg, key):
        return hmac.new(key, msg.encode(), hashlib.sha256).digest()
    return k("aws4_request", k("s3", k("us-east-1", k(day, ("AWS4" + secret).encode()))))


def sign_head(url, method, path, headers, key=WRITE, now=None):
    """SigV4 of a request head by hand (the payload hash is headers'
    x-amz-content-sha256): headers gains Host, X-Amz-Date, Authorization.
    Returns (amz_date, scope, signature, signing key)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    scope = "%s/us-east-1/s3/aws4_request" % day
    headers["Host"] = urllib.parse.urlsplit(url).netloc
    headers["X-Amz-Date"] = amz_date
    low = {n.lower(): str(v).strip() for n, v in headers.items()}
    names = sorted(low)
    canon = "\n".join([method, path, "", "".join("%s:%s\n" % (n, low[n]) for n in names),
                       ";".join(names), low["x-amz-content-sha256"]])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canon.encode()).hexdigest()])
    skey = signing_key(key[1], day)
    sig = hmac.new(skey, sts.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                "Signature=%s" % (key[0], scope, ";".join(names), sig))
    return amz_date, scope, sig, skey


def raw_put(url, path, body, headers):
    u = urllib.parse.urlsplit(url)
    if u.scheme == "https":
        conn = http.client.HTTPSConnection(u.hostname, u.port, context=NOCHECK, timeout=60)
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    h = {"Content-Length": str(len(body))}
    h.update(headers)
    conn.request("PUT", path, body=body, headers=h)
    r = conn.getresponse()
    b = r.read()
    conn.close()
    return r.status, b


def crc32_b64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def unsigned_chunked(url, root):
    data = st_bytes(100_000, "hand-made")
    hdr = {"Content-Encoding": "aws-chunked", "x-amz-content-sha256":
           "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "x-amz-trailer": "x-amz-checksum-crc32",
           "x-amz-decoded-content-length": str(len(data))}
    trailer = b"x-amz-checksum-crc32:" + crc32_b64(data).encode()
    good = chunk_body(data, [65536, len(data) - 65536], trailer)
    h = dict(hdr, **{"Content-Length": str(len(good))})
    sign_head(url, "PUT", "/models/up/hand.safetensors", h)
    st, b = raw_put(url, "/models/up/hand.safetensors", good, h)
    check("hand-made aws-chunked PutObject", st == 200, "%s %s" % (st, b[:300]))
    p = os.path.join(root, "up/hand.safetensors")
    check("hand-made aws-chunked publishes the decoded bytes",
          os.path.exists(p) and read(p) == data)
    cases = []
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 0x01
    cases.append(("a flipped body byte", bytes(flipped), hdr, "BadDigest"))
    wrong = chunk_body(data, [len(data)], b"x-amz-checksum-crc32:" + crc32_b64(b"x").encode())
    cases.append(("a wrong trailer checksum", wrong, hdr, "BadDigest"))
    cases.append(("a body cut short", good[:-40], hdr, "IncompleteBody"))
    h2 = dict(hdr, **{"x-amz-decoded-content-length": str(len(data) + 10)})
    cases.append(("a wrong decoded length", good, h2, "IncompleteBody"))
    for name, body, h, code in cases:
        key = "up/bad-%d.safetensors" % len(name)
        h = dict(h, **{"Content-Length": str(len(body))})
        sign_head(url, "PUT", "/models/" + key, h)
        try:
            st, b = raw_put(url, "/models/" + key, body, h)
        except (ConnectionError, http.client.HTTPException) as e:
            st, b = 0, str(e).encode()
        check("aws-chunked with %s: %s" % (name, code),
              b"<Code>%s</Code>" % code.encode() in b, "%s %s" % (st, b[:300]))
        check("aws-chunked with %s: nothing published" % name,
              not os.path.exists(os.path.join(root, key)))


def signed_chunked(url, root):
    """STREAMING-AWS4-HMAC-SHA256-PAYLOAD[-TRAILER]: the head signed by hand,
    then the chunk-signature chain from its signature and, with a trailer,
    the trailer's signature (aws_chunked.h)."""
    data = st_bytes(70_000, "signed-chunks")
    sizes = [65536, len(data) - 65536]

    def encode(amz_date, scope, seed, skey, case):
        out, prev, o = b"", seed, 0
        for n in sizes + [0]:
            chunk = data[o:o + n]
            o += n
            sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, prev,
                             hashlib.sha256(b"").hexdigest(), hashlib.sha256(chunk).hexdigest()])
            prev = hmac.new(skey, sts.encode(), hashlib.sha256).hexdigest()
            if case == "flipped byte" and n == sizes[1]:
                chunk = bytes([chunk[0] ^ 1]) + chunk[1:]
            out += b"%x;chunk-signature=%s\r\n" % (n, prev.encode()) + chunk
            out += b"\r\n" if n or not case.startswith("trailer") else b""
        if case.startswith("trailer"):
            crc = crc32_b64(data if case != "trailer, wrong checksum" else b"x")
            line = "x-amz-checksum-crc32:" + crc
            sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, prev,
                             hashlib.sha256((line + "\n").encode()).hexdigest()])
            tsig = hmac.new(skey, sts.encode(), hashlib.sha256).hexdigest()
            if case == "trailer, tampered signature":
                tsig = ("0" if tsig[0] != "0" else "1") + tsig[1:]
            out += ("%s\r\nx-amz-trailer-signature:%s\r\n\r\n" % (line, tsig)).encode()
        return out
    cases = [("good", None), ("flipped byte", "SignatureDoesNotMatch"), ("trailer", None),
             ("trailer, wrong checksum", "BadDigest"),
             ("trailer, tampered signature", "SignatureDoesNotMatch")]
    for n, (case, code) in enumerate(cases):
        name = "up/signed-%d.safetensors" % n
        trailer = case.startswith("trailer")
        enc_len = len(encode("", "", "0" * 64, b"k", case))  # signatures are fixed-size
        h = {"Content-Encoding": "aws-chunked",
             "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" +
             ("-TRAILER" if trailer else ""),
             "x-amz-decoded-content-length": str(len(data)), "Content-Length": str(enc_len)}
        if trailer:
            h["x-amz-trailer"] = "x-amz-checksum-crc32"
        amz_date, scope, seed, skey = sign_head(url, "PUT", "/models/" + name, h)
        body = encode(amz_date, scope, seed, skey, case)
        try:
            st, b = raw_put(url, "/models/" + name, body, h)
        except (ConnectionError, http.client.HTTPException) as e:
            st, b = 0, str(e).encode()
        p = os.path.join(root, name)
        what = "signed streaming" + (" (%s)" % case if case != "good" else "")
        if not code:
            check(what + " PutObject", st == 200, "%s %s" % (st, b[:300]))
            check(what + " publishes the decoded bytes", os.path.exists(p) and read(p) == data)
        else:
            check("%s: %s" % (what, code), b"<Code>%s</Code>" % code.encode() in b,
                  "%s %s" % (st, b[:300]))
            check(what + ": nothing published", not os.path.exists(p))


def chunked(url, root):
    w = client(url, WRITE)
    data = st_bytes(300_000, "boto3-default")
    seen = {}

    def before_send(request, **kw):
        seen.setdefault("enc", request.headers.get("Content-Encoding"))
        seen.setdefault("sha", request.headers.get("x-amz-content-sha256"))
    w.meta.events.register("before-send.s3.PutObject", before_send)
    w.put_object(Bucket="models", Key="up/boto3.safetensors", Body=data)
    enc = seen.get("enc") or b""
    enc = enc.decode() if isinstance(enc, bytes) else enc
    check("boto3's default PutObject sends aws-chunked", "aws-chunked" in enc, str(seen))
    check("boto3's aws-chunked PutObject publishes byte-exact",
          read(os.path.join(root, "up/boto3.safetensors")) == data)
    big = st_bytes(12 << 20, "boto3-multipart")
    path = os.path.join(os.environ.get("T", "/tmp"), "mp.safetensors")
    with open(path, "wb") as f:
        f.write(big)
    w.upload_file(path, "models", "up/boto3-mp.safetensors")
    check("boto3's aws-chunked multipart upload publishes byte-exact",
          read(os.path.join(root, "up/boto3-mp.safetensors")) == big)
    unsigned_chunked(url, root)
    signed_chunked(url, root)


def main():
    cmd, url, root = sys.argv[1:4]
    {"keys": keys, "chunked": chunked}[cmd](url, root)


if __name__ == "__main__":
    main()
