"""Differential test of the S3 front against moto_server, the reference S3
(t_moto.sh): the same requests, good and bad, to both; the statuses, the S3
error codes, and the listings' keys, common prefixes and pagination must be
the same. Prints "ok NAME" / "FAIL NAME: why" per request.

  moto_diff.py ZTENSORD_URL MOTO_URL ROOT

The files under ROOT are first uploaded to moto's bucket "models" (ztensord
serves ROOT as that bucket). Requests are unsigned (neither server checks
signatures here). Deliberate differences are listed in docs/S3.md; a
request whose answer differs on purpose is not sent.
"""
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import boto3
from botocore import UNSIGNED
from botocore.config import Config

NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def send(base, method, path, headers=None, body=None):
    headers = dict(headers or {})
    # moto checks no signature, but decides ACLs by the key an Authorization names: with
    # none, anonymous writes make private objects it then refuses to serve or delete.
    # ztensord reads anonymously and, with --allow-anonymous-writes, writes so too.
    headers.setdefault("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/"
                       "aws4_request, SignedHeaders=host, Signature=" + "0" * 64)
    if body is not None:  # urllib's default form type makes moto (werkzeug) read it as a form and hang
        headers.setdefault("Content-Type", "application/octet-stream")
    req = urllib.request.Request(base + path, method=method, headers=headers, data=body)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def texts(root, tag):
    return [e.text or "" for e in root.iter(NS + tag)] + [e.text or "" for e in root.iter(tag)]


def summary(status, body):
    """What must agree: the status, the error code, the listing's shape."""
    out = {"status": status}
    if not body or not body.lstrip().startswith(b"<"):
        return out
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        out["doc"] = "unparsable"
        return out
    tag = root.tag.replace(NS, "")
    out["doc"] = tag
    if tag == "Error":
        out["code"] = texts(root, "Code")
    elif tag == "ListBucketResult":
        out["keys"] = [k.text for c in root.iter(NS + "Contents") for k in c.iter(NS + "Key")]
        out["prefixes"] = [k.text for c in root.iter(NS + "CommonPrefixes") for k in c.iter(NS + "Prefix")]
        for f in ("IsTruncated", "KeyCount", "MaxKeys", "Prefix", "Delimiter", "EncodingType"):
            e = root.find(NS + f)
            out[f] = e.text or "" if e is not None else None
        if out["Prefix"] is None:
            out["Prefix"] = ""  # moto leaves out an empty Prefix in v1
        out["has_token"] = root.find(NS + "NextContinuationToken") is not None
    elif tag == "ListAllMyBucketsResult":
        out["buckets"] = texts(root, "Name")
    return out


def next_path(path, body):
    root = ET.fromstring(body)
    tok = texts(root, "NextContinuationToken")
    if tok:
        return path + "&continuation-token=" + urllib.parse.quote(tok[0], safe="")
    mk = texts(root, "NextMarker") or [k.text for c in root.iter(NS + "Contents") for k in c.iter(NS + "Key")][-1:]
    return path + "&marker=" + urllib.parse.quote(mk[0], safe="")


def walk(base, path):
    """Every page of a listing, following its own tokens (at most 50)."""
    pages = []
    p = path
    for _ in range(50):
        st, _, body = send(base, "GET", p)
        s = summary(st, body)
        pages.append(s)
        if st != 200 or s.get("IsTruncated") != "true":
            break
        p = next_path(path, body)
    return pages


def main(zurl, murl, root):
    moto = boto3.client("s3", endpoint_url=murl, region_name="us-east-1",
                        aws_access_key_id="x", aws_secret_access_key="x")
    moto.create_bucket(Bucket="models")
    for dp, _, fns in os.walk(root):
        for f in fns:
            full = os.path.join(dp, f)
            # public-read: moto refuses anonymous reads of private objects
            moto.upload_file(full, "models", os.path.relpath(full, root), ExtraArgs={"ACL": "public-read"})
    etags = {}
    for base in (zurl, murl):
        st, h, _ = send(base, "HEAD", "/models/a.safetensors")
        etags[base] = h.get("ETag") or h.get("etag")

    single = [
        ("ListBuckets", "GET", "/", None),
        ("HeadBucket", "HEAD", "/models", None),
        ("HeadBucket of a missing bucket", "HEAD", "/nope", None),
        ("GetBucketLocation", "GET", "/models?location", None),
        ("ListObjectsV2", "GET", "/models?list-type=2", None),
        ("ListObjectsV2 prefix+delimiter", "GET", "/models?list-type=2&prefix=llm/&delimiter=/", None),
        ("ListObjectsV2 delimiter at the top", "GET", "/models?list-type=2&delimiter=/", None),
        ("ListObjectsV2 start-after", "GET", "/models?list-type=2&start-after=llm/model.safetensors", None),
        ("ListObjectsV2 encoding-type=url", "GET", "/models?list-type=2&prefix=odd/&encoding-type=url", None),
        ("ListObjectsV2 prefix matching nothing", "GET", "/models?list-type=2&prefix=nothing/", None),
        ("ListObjectsV2 max-keys=0", "GET", "/models?list-type=2&max-keys=0", None),
        ("ListObjects v1", "GET", "/models?prefix=llm/", None),
        ("ListObjectsV2 of a missing bucket", "GET", "/nope?list-type=2", None),
        ("GetObject of a missing key", "GET", "/models/nope.safetensors", None),
        ("HeadObject of a missing key", "HEAD", "/models/nope.safetensors", None),
        ("GetObject of a missing bucket", "GET", "/nope/a.safetensors", None),
        ("GetObject", "GET", "/models/a.safetensors", None),
        ("GetObject range", "GET", "/models/a.safetensors", {"Range": "bytes=10-19"}),
        ("GetObject suffix range", "GET", "/models/a.safetensors", {"Range": "bytes=-7"}),
        ("GetObject range past the end", "GET", "/models/a.safetensors", {"Range": "bytes=99999-"}),
        ("GetObject If-Match false", "GET", "/models/a.safetensors", {"If-Match": '"0000"'}),
        ("HeadObject If-Match false", "HEAD", "/models/a.safetensors", {"If-Match": '"0000"'}),
        ("GetObject If-Unmodified-Since long ago", "GET", "/models/a.safetensors",
         {"If-Unmodified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"}),
    ]
    for name, method, path, hdrs in single:
            a = summary(*send(zurl, method, path, hdrs)[::2])
            b = summary(*send(murl, method, path, hdrs)[::2])
            print(("ok %s" % name) if a == b else "FAIL %s: ztensord %s, moto %s" % (name, a, b))
    # Deliberate differences (docs/S3.md): moto answers 500 to a bad
    # max-keys and ignores a bad token or encoding-type; S3 answers 400
    # InvalidArgument, and so does ztensord. moto echoes max-keys above 1000;
    # ztensord caps it, as S3 does.
    bad_arg = {"status": 400, "doc": "Error", "code": ["InvalidArgument"]}
    for name, path, want in (
            ("max-keys=abc", "/models?list-type=2&max-keys=abc", bad_arg),
            ("max-keys=-1", "/models?list-type=2&max-keys=-1", bad_arg),
            ("a continuation-token that is not one", "/models?list-type=2&continuation-token=garbage", bad_arg),
            ("encoding-type=xx", "/models?list-type=2&encoding-type=xx", bad_arg)):
        a = summary(*send(zurl, "GET", path)[::2])
        print(("ok %s: S3's answer" % name) if a == want else "FAIL %s: %s, want %s" % (name, a, want))
    # RFC 9110 13.1.3: an If-Modified-Since later than the server's clock is
    # ignored (the shared send path's rule); moto answers 304.
    a = send(zurl, "GET", "/models/a.safetensors", {"If-Modified-Since": "Sun, 06 Nov 2094 08:49:37 GMT"})[0]
    print("ok If-Modified-Since in the future is ignored" if a == 200 else "FAIL future If-Modified-Since: %s" % a)
    a = summary(*send(zurl, "GET", "/models?list-type=2&max-keys=5000")[::2])
    print("ok max-keys=5000 is capped at 1000" if a.get("MaxKeys") == "1000" else "FAIL max-keys=5000: %s" % a)
    # conditions with each server's own ETag
    for name, hdr in (("If-None-Match own ETag", "If-None-Match"), ("If-Match own ETag", "If-Match")):
        a = send(zurl, "GET", "/models/a.safetensors", {hdr: etags[zurl]})[0]
        b = send(murl, "GET", "/models/a.safetensors", {hdr: etags[murl]})[0]
        print(("ok %s" % name) if a == b else "FAIL %s: ztensord %s, moto %s" % (name, a, b))
    # the bytes
    a = send(zurl, "GET", "/models/llm/model.safetensors", {"Range": "bytes=1000-300000"})
    b = send(murl, "GET", "/models/llm/model.safetensors", {"Range": "bytes=1000-300000"})
    print("ok ranged bytes" if (a[0], a[2]) == (b[0], b[2]) else "FAIL ranged bytes: %s %s" % (a[0], b[0]))
    # writes, good and bad (a valid safetensors body: ztensord checks files)
    body = open(os.path.join(root, "a.safetensors"), "rb").read()
    writes = [
        ("PutObject", "PUT", "/models/w/new.safetensors", body),
        ("GetObject of the new object", "GET", "/models/w/new.safetensors", None),
        ("PutObject to a missing bucket", "PUT", "/nope/w/x.safetensors", body),
        ("DeleteObject", "DELETE", "/models/w/new.safetensors", None),
        ("GetObject after DeleteObject", "GET", "/models/w/new.safetensors", None),
        ("DeleteObject of a missing key", "DELETE", "/models/w/never.safetensors", None),
        ("AbortMultipartUpload of an unknown upload", "DELETE",
         "/models/w/m.safetensors?uploadId=" + "0" * 32, None),
        ("ListParts of an unknown upload", "GET", "/models/w/m.safetensors?uploadId=" + "0" * 32, None),
    ]
    for name, method, path, data in writes:
        a = summary(*send(zurl, method, path, None, data)[::2])
        b = summary(*send(murl, method, path, None, data)[::2])
        print(("ok %s" % name) if a == b else "FAIL %s: ztensord %s, moto %s" % (name, a, b))
    # moto answers 500 (a crash) to UploadPart of an unknown upload; S3 says NoSuchUpload
    a = summary(*send(zurl, "PUT", "/models/w/m.safetensors?partNumber=1&uploadId=" + "0" * 32, None, b"x")[::2])
    print("ok UploadPart to an unknown upload: NoSuchUpload" if a.get("code") == ["NoSuchUpload"]
          else "FAIL UploadPart to an unknown upload: %s" % a)
    part = b"\0" * (5 << 20)
    for base in (zurl, murl):  # a multipart upload, completed with a part out of order
        st, _, doc = send(base, "POST", "/models/w/mp.safetensors?uploads")
        uid = texts(ET.fromstring(doc), "UploadId")[0]
        etags = []
        for n in (1, 2):
            _, h, _ = send(base, "PUT", "/models/w/mp.safetensors?partNumber=%d&uploadId=%s" % (n, uid),
                           None, part)
            etags.append(h.get("ETag") or h.get("etag"))
        parts = "".join("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>" % (n, e)
                        for n, e in ((2, etags[1]), (1, etags[0])))
        doc = ("<CompleteMultipartUpload>%s</CompleteMultipartUpload>" % parts).encode()
        r = summary(*send(base, "POST", "/models/w/mp.safetensors?uploadId=" + uid, None, doc)[::2])
        # moto completes it; S3 answers InvalidPartOrder, as ztensord does
        if base == zurl:
            print("ok Complete with parts out of order: InvalidPartOrder"
                  if r.get("code") == ["InvalidPartOrder"] else "FAIL Complete out of order: %s" % r)
        send(base, "DELETE", "/models/w/mp.safetensors?uploadId=" + uid)
        send(base, "DELETE", "/models/w/mp.safetensors")
    # pagination, following each server's own tokens and markers
    for name, path in (("v2 pages of 2", "/models?list-type=2&max-keys=2"),
                       ("v2 pages of 1 with a delimiter", "/models?list-type=2&max-keys=1&delimiter=/"),
                       ("v2 pages of 2 under a prefix", "/models?list-type=2&max-keys=2&prefix=llm/"),
                       ("v1 pages of 2", "/models?max-keys=2")):
        a, b = walk(zurl, path), walk(murl, path)
        print(("ok pagination: %s (%d pages)" % (name, len(a))) if a == b else
              "FAIL pagination: %s: ztensord %s, moto %s" % (name, a, b))
    # v1 with a delimiter: moto puts every common prefix on the first page
    # whatever max-keys says; S3 counts them against max-keys, as ztensord
    # does. The same keys and prefixes, in the same order, over all pages.
    path = "/models?max-keys=1&delimiter=/"
    a, b = walk(zurl, path), walk(murl, path)
    flat = lambda pages: [(p.get("keys"), p.get("prefixes")) for p in pages]
    fa = [x for p in a for x in p["keys"] + p["prefixes"]]
    fb = [x for p in b for x in p["keys"] + p["prefixes"]]
    print(("ok pagination: v1 pages of 1 with a delimiter (%d pages, moto %d)" % (len(a), len(b)))
          if sorted(fa) == sorted(fb) and len(a) == len(fa) else
          "FAIL pagination: v1 with a delimiter: ztensord %s, moto %s" % (flat(a), flat(b)))


if __name__ == "__main__":
    main(*sys.argv[1:])
