"""The boto3 side of the S3 front's tests (t_clients.sh): each subcommand
prints one line per check, "ok NAME" or "FAIL NAME: why", and exits 0.
Run with the python3 on PATH (boto3 1.43), not Debian's.

  s3check.py boto3 URL ROOT      paginated lists, head, get, ranges, errors,
                                 a presigned GET, download_file
  s3check.py writes URL ROOT     PutObject (checksums, validation, refusals),
                                 DeleteObject, DeleteObjects
  s3check.py no_writes URL ROOT  writes refused without write rights
  s3check.py multipart URL ROOT BIG
                                 multipart uploads: upload_file, ListParts,
                                 ListMultipartUploads, Complete's refusals, Abort
  s3check.py streamer URL ROOT KEY
                                 the Run:ai streamer's pattern: list with a
                                 prefix, then 16 concurrent 8 MiB ranged GETs
                                 over KEY, compared byte for byte

Clients are anonymous (signature_version=UNSIGNED) except the presigned GET,
made with dummy keys: the server has no keys file, so reads are anonymous
and the signature is not checked (SigV4 is not in this front yet).
"""
import concurrent.futures
import os
import sys
import urllib.parse
import urllib.request

import boto3
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError


def ok(name):
    print("ok", name)


def fail(name, why):
    print("FAIL %s: %s" % (name, why))


def check(name, cond, why=""):
    (ok if cond else lambda n: fail(n, why))(name)


def client(url, unsigned=True):
    cfg = Config(signature_version=UNSIGNED) if unsigned else Config(s3={"addressing_style": "path"})
    return boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                        aws_access_key_id="dummy", aws_secret_access_key="dummy", config=cfg)


def local_keys(root, sub=""):
    out = []
    base = os.path.join(root, sub)
    for dp, dns, fns in os.walk(base):
        dns[:] = [d for d in dns if not d.startswith(".")]
        for f in fns:
            if not f.startswith("."):
                out.append(os.path.relpath(os.path.join(dp, f), root))
    return sorted(k.replace(os.sep, "/") for k in out)


def error_code(fn):
    try:
        fn()
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200


def boto3_checks(url, root):
    s3 = client(url)
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    check("ListBuckets names models and llm", names == ["models", "llm"], names)
    want = local_keys(root)
    got, pages = [], 0
    for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket="models", PaginationConfig={"PageSize": 2}):
        pages += 1
        got += [o["Key"] for o in page.get("Contents", [])]
    check("paginator (2 a page) lists every file once, in order", got == want, (got, want))
    check("paginator took several pages", pages >= len(want) // 2, pages)
    got = []
    for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket="models", Prefix="llm/", Delimiter="/", PaginationConfig={"PageSize": 1}):
        got += [o["Key"] for o in page.get("Contents", [])]
        got += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    want_d = sorted({k if "/" not in k[4:] else k[:4 + k[4:].index("/") + 1]
                     for k in want if k.startswith("llm/")})
    check("prefix + delimiter: keys and common prefixes", sorted(got) == want_d, (got, want_d))
    got = [o["Key"] for p in s3.get_paginator("list_objects").paginate(
        Bucket="models", Prefix="llm/", PaginationConfig={"PageSize": 1}) for o in p.get("Contents", [])]
    check("ListObjects v1 with marker pages", got == [k for k in want if k.startswith("llm/")], got)
    sub = [o["Key"] for o in s3.list_objects_v2(Bucket="llm").get("Contents", [])]
    check("bucket llm=llm lists the subdirectory without its name",
          sub == [k[4:] for k in want if k.startswith("llm/")], sub)
    r = s3.list_objects_v2(Bucket="models", Prefix="odd/", EncodingType="url")
    # boto3 decodes only when it asked for the encoding itself (its default)
    keys = [o["Key"] for o in r.get("Contents", [])]
    check("encoding-type=url: keys percent-encoded", [urllib.parse.unquote(k) for k in keys] ==
          [k for k in want if k.startswith("odd/")] and all(" " not in k and "+" not in k for k in keys), keys)
    r = s3.list_objects_v2(Bucket="models", FetchOwner=True, MaxKeys=1)
    check("fetch-owner names an owner", "Owner" in r["Contents"][0], r["Contents"][0])

    key = "llm/model.safetensors"
    data = open(os.path.join(root, key), "rb").read()
    h = s3.head_object(Bucket="models", Key=key)
    check("head: ContentLength", h["ContentLength"] == len(data), h["ContentLength"])
    etag = h["ETag"]
    check("head: ETag in the multipart form (not an MD5)", etag.endswith('-1"') and len(etag) == 36, etag)
    check("head: x-amz-request-id", h["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id"), h)
    g = s3.get_object(Bucket="models", Key=key)
    check("get: bytes", g["Body"].read() == data)
    g = s3.get_object(Bucket="models", Key=key, Range="bytes=100-4195")
    check("ranged get: 206 and bytes", g["ResponseMetadata"]["HTTPStatusCode"] == 206 and
          g["Body"].read() == data[100:4196])
    g = s3.get_object(Bucket="models", Key=key, IfMatch=etag, Range="bytes=-10")
    check("If-Match with the S3 ETag holds", g["Body"].read() == data[-10:])
    g = s3.get_object(Bucket="models", Key=key, ResponseContentType="text/plain",
                      ResponseContentDisposition='attachment; filename="m.bin"',
                      ResponseCacheControl="no-store", ResponseContentLanguage="fr",
                      ResponseExpires="Thu, 01 Dec 2094 16:00:00 GMT")
    hh = g["ResponseMetadata"]["HTTPHeaders"]
    check("response-* overrides", (hh.get("content-type"), hh.get("content-disposition"),
                                    hh.get("cache-control"), hh.get("content-language")) ==
          ("text/plain", 'attachment; filename="m.bin"', "no-store", "fr"), hh)
    check("NoSuchKey 404", error_code(lambda: s3.get_object(Bucket="models", Key="nope")) == ("NoSuchKey", 404))
    check("NoSuchBucket 404", error_code(lambda: s3.list_objects_v2(Bucket="nope")) == ("NoSuchBucket", 404))
    check("InvalidRange 416", error_code(lambda: s3.get_object(
        Bucket="models", Key=key, Range="bytes=%d-" % (len(data) + 5))) == ("InvalidRange", 416))
    check("PreconditionFailed 412", error_code(lambda: s3.get_object(
        Bucket="models", Key=key, IfMatch='"0123"')) == ("PreconditionFailed", 412))
    check("If-None-Match 304", error_code(lambda: s3.get_object(
        Bucket="models", Key=key, IfNoneMatch=etag))[1] == 304)
    check("partNumber NotImplemented", error_code(lambda: s3.get_object(
        Bucket="models", Key=key, PartNumber=1)) == ("NotImplemented", 501))
    check("CopyObject NotImplemented", error_code(lambda: s3.copy_object(
        Bucket="models", Key="x", CopySource="models/" + key))[0] == "NotImplemented")

    signed = client(url, unsigned=False)
    u = signed.generate_presigned_url("get_object", Params={"Bucket": "models", "Key": key}, ExpiresIn=600)
    check("presigned GET (dummy keys, anonymous reads)", urllib.request.urlopen(u).read() == data)
    dst = os.path.join(os.environ.get("T", "/tmp"), "dl.bin")
    s3.download_file("models", key, dst)
    check("download_file", open(dst, "rb").read() == data)


def streamer(url, root, key):
    s3 = client(url)
    prefix = key.rsplit("/", 1)[0] + "/"
    listed = {o["Key"]: o["Size"] for o in s3.list_objects_v2(Bucket="models", Prefix=prefix)["Contents"]}
    size = listed.get(key)
    check("streamer: the list names the object", size == os.path.getsize(os.path.join(root, key)), listed)
    chunk = 8 << 20
    spans = [(o, min(o + chunk, size) - 1) for o in range(0, size, chunk)]

    def fetch(span):
        r = s3.get_object(Bucket="models", Key=key, Range="bytes=%d-%d" % span)
        return span, r["Body"].read()

    bad = 0
    with open(os.path.join(root, key), "rb") as f, \
            concurrent.futures.ThreadPoolExecutor(16) as ex:
        for (lo, hi), body in ex.map(fetch, spans):
            f.seek(lo)
            if body != f.read(hi - lo + 1):
                bad += 1
    check("streamer: %d ranged GETs of 8 MiB, 16 at once, byte-exact" % len(spans), bad == 0, bad)


def writes(url, root):
    """PutObject, checksums, validation, DeleteObject(s); nothing half-written."""
    s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="dummy",
                      aws_secret_access_key="dummy",
                      config=Config(request_checksum_calculation="when_required"))
    import base64
    import hashlib
    data = open(os.path.join(root, "a.safetensors"), "rb").read()
    r = s3.put_object(Bucket="models", Key="up/new.safetensors", Body=data)
    h = s3.head_object(Bucket="models", Key="up/new.safetensors")
    check("PutObject: 200, the ETag HeadObject gives", r["ETag"] == h["ETag"] and r["ETag"].endswith('-1"'), (r["ETag"], h["ETag"]))
    check("PutObject: the file on disk", open(os.path.join(root, "up/new.safetensors"), "rb").read() == data)
    check("PutObject: GetObject gives the bytes", s3.get_object(Bucket="models", Key="up/new.safetensors")["Body"].read() == data)
    s3.put_object(Bucket="llm", Key="put.safetensors", Body=data)
    check("PutObject into bucket llm=llm lands under llm/", os.path.exists(os.path.join(root, "llm/put.safetensors")))
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    sha = base64.b64encode(hashlib.sha256(data).digest()).decode()
    s3.put_object(Bucket="models", Key="up/md5.safetensors", Body=data, ContentMD5=md5)
    check("Content-MD5 right: published", os.path.exists(os.path.join(root, "up/md5.safetensors")))
    s3.put_object(Bucket="models", Key="up/sha.safetensors", Body=data, ChecksumSHA256=sha)
    check("x-amz-checksum-sha256 right: published", os.path.exists(os.path.join(root, "up/sha.safetensors")))
    wrong_md5 = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    wrong_sha = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    bad = [
        ("Content-MD5 wrong", dict(Key="up/bad1.safetensors", Body=data, ContentMD5=wrong_md5), ("BadDigest", 400)),
        ("x-amz-checksum-sha256 wrong", dict(Key="up/bad2.safetensors", Body=data, ChecksumSHA256=wrong_sha), ("BadDigest", 400)),
        ("x-amz-checksum-crc32 wrong", dict(Key="up/bad3.safetensors", Body=data, ChecksumCRC32="AAAAAA=="), ("BadDigest", 400)),
        ("Content-MD5 malformed", dict(Key="up/bad4.safetensors", Body=data, ContentMD5="abc"), ("InvalidDigest", 400)),
        ("not a valid safetensors file", dict(Key="up/bad5.safetensors", Body=b"\x10" + data[1:]), ("InvalidObject", 400)),
        ("a .zt key with other bytes", dict(Key="up/bad6.zt", Body=data[:100]), ("InvalidObject", 400)),
        ("a key the server cannot serve", dict(Key="up/bad7.txt", Body=b"x"), ("InvalidArgument", 400)),
        ("If-None-Match: * on an existing key", dict(Key="up/new.safetensors", Body=data, IfNoneMatch="*"), ("PreconditionFailed", 412)),
    ]
    for name, kw, want in bad:
        got = error_code(lambda: s3.put_object(Bucket="models", **kw))
        check("PutObject, %s: %s %d" % (name, want[0], want[1]), got == want, got)
    left = sorted(os.listdir(os.path.join(root, "up")))
    check("nothing published by the refused writes", left == ["md5.safetensors", "new.safetensors", "sha.safetensors"], left)
    staging = [f for f in os.listdir(os.path.join(root, ".ztensord-staging")) if "s3put" in f]
    check("no staging file left", staging == [], staging)
    etag = s3.head_object(Bucket="models", Key="up/new.safetensors")["ETag"]
    s3.put_object(Bucket="models", Key="up/new.safetensors", Body=data, IfMatch=etag)
    check("PutObject with If-Match of the ETag HeadObject gave: replaced",
          s3.head_object(Bucket="models", Key="up/new.safetensors")["ETag"] != etag)
    check("PutObject with If-Match of the old ETag: PreconditionFailed", error_code(lambda: s3.put_object(
        Bucket="models", Key="up/new.safetensors", Body=data, IfMatch=etag)) == ("PreconditionFailed", 412))
    r = s3.delete_object(Bucket="models", Key="up/md5.safetensors")
    check("DeleteObject: 204, the file gone", r["ResponseMetadata"]["HTTPStatusCode"] == 204 and
          not os.path.exists(os.path.join(root, "up/md5.safetensors")))
    r = s3.delete_object(Bucket="models", Key="up/never.safetensors")
    check("DeleteObject of a missing key: 204", r["ResponseMetadata"]["HTTPStatusCode"] == 204)
    check("GetObject after DeleteObject: NoSuchKey", error_code(lambda: s3.get_object(
        Bucket="models", Key="up/md5.safetensors")) == ("NoSuchKey", 404))
    r = s3.delete_objects(Bucket="models", Delete={"Objects": [
        {"Key": "up/new.safetensors"}, {"Key": "up/sha.safetensors"}, {"Key": "up/missing.safetensors"}]})
    check("DeleteObjects: every key Deleted", sorted(d["Key"] for d in r.get("Deleted", [])) ==
          ["up/missing.safetensors", "up/new.safetensors", "up/sha.safetensors"] and not r.get("Errors"), r)
    check("DeleteObjects: the files gone", not os.path.exists(os.path.join(root, "up/new.safetensors")) and
          not os.path.exists(os.path.join(root, "up/sha.safetensors")))
    check("DeleteObjects of a missing bucket", error_code(lambda: s3.delete_objects(
        Bucket="nope", Delete={"Objects": [{"Key": "x"}]})) == ("NoSuchBucket", 404))


def no_writes(url, root):
    s3 = client(url)
    check("PutObject without write rights: AccessDenied 403", error_code(lambda: s3.put_object(
        Bucket="models", Key="up/x.safetensors", Body=b"x")) == ("AccessDenied", 403))
    check("DeleteObject without write rights: AccessDenied 403", error_code(lambda: s3.delete_object(
        Bucket="models", Key="a.safetensors")) == ("AccessDenied", 403))
    check("the file is still there", os.path.exists(os.path.join(root, "a.safetensors")))


def multipart(url, root, big):
    """Multipart uploads: boto3's upload_file, the list checks, abort."""
    from boto3.s3.transfer import TransferConfig
    s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="dummy",
                      aws_secret_access_key="dummy",
                      config=Config(request_checksum_calculation="when_required"))
    data = open(big, "rb").read()
    s3.upload_file(big, "models", "mp/big.safetensors",
                   Config=TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20))
    check("upload_file, multipart (5 MiB parts): the file on disk",
          open(os.path.join(root, "mp/big.safetensors"), "rb").read() == data)
    h = s3.head_object(Bucket="models", Key="mp/big.safetensors")
    check("multipart: HeadObject's size and ETag form", h["ContentLength"] == len(data) and
          h["ETag"].endswith('-1"'), h["ETag"])
    # boto3's defaults (1.43: checksums "when_supported") over http:// send plain bodies
    # with x-amz-checksum-crc32, which the server verifies
    dflt = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="dummy",
                        aws_secret_access_key="dummy")
    dflt.upload_file(big, "models", "mp/default.safetensors")
    check("upload_file with boto3's default settings (multipart, 8 MiB parts)",
          open(os.path.join(root, "mp/default.safetensors"), "rb").read() == data)
    key = "mp/parts.safetensors"
    u = s3.create_multipart_upload(Bucket="models", Key=key)["UploadId"]
    five = 5 << 20
    p1 = s3.upload_part(Bucket="models", Key=key, UploadId=u, PartNumber=1, Body=data[:five])
    p2 = s3.upload_part(Bucket="models", Key=key, UploadId=u, PartNumber=2, Body=data[five:2 * five])
    p3 = s3.upload_part(Bucket="models", Key=key, UploadId=u, PartNumber=3, Body=data[2 * five:])
    listed = s3.list_parts(Bucket="models", Key=key, UploadId=u)["Parts"]
    check("ListParts", [(p["PartNumber"], p["ETag"], p["Size"]) for p in listed] ==
          [(1, p1["ETag"], five), (2, p2["ETag"], five), (3, p3["ETag"], len(data) - 2 * five)], listed)
    ups = s3.list_multipart_uploads(Bucket="models").get("Uploads", [])
    check("ListMultipartUploads names the upload", [x["UploadId"] for x in ups] == [u], ups)
    P = lambda n, e: {"PartNumber": n, "ETag": e["ETag"]}
    for name, parts, want in (
            ("parts out of order", [P(2, p2), P(1, p1), P(3, p3)], "InvalidPartOrder"),
            ("a missing part", [P(1, p1), P(4, p3)], "InvalidPart"),
            ("a wrong ETag", [P(1, p2), P(2, p2), P(3, p3)], "InvalidPart")):
        got = error_code(lambda: s3.complete_multipart_upload(
            Bucket="models", Key=key, UploadId=u, MultipartUpload={"Parts": parts}))
        check("Complete with %s: %s" % (name, want), got == (want, 400), got)
    p2s = s3.upload_part(Bucket="models", Key=key, UploadId=u, PartNumber=2, Body=b"tiny")
    got = error_code(lambda: s3.complete_multipart_upload(
        Bucket="models", Key=key, UploadId=u, MultipartUpload={"Parts": [P(1, p1), P(2, p2s), P(3, p3)]}))
    check("Complete with a part under 5 MiB not last: EntityTooSmall", got == ("EntityTooSmall", 400), got)
    check("nothing published by the refused Completes", not os.path.exists(os.path.join(root, key)))
    p2 = s3.upload_part(Bucket="models", Key=key, UploadId=u, PartNumber=2, Body=data[five:2 * five])
    r = s3.complete_multipart_upload(Bucket="models", Key=key, UploadId=u,
                                     MultipartUpload={"Parts": [P(1, p1), P(2, p2), P(3, p3)]})
    check("Complete after a part was uploaded again: published, byte-exact",
          open(os.path.join(root, key), "rb").read() == data and
          r["ETag"] == s3.head_object(Bucket="models", Key=key)["ETag"], r.get("ETag"))
    check("the upload is gone after Complete", error_code(lambda: s3.list_parts(
        Bucket="models", Key=key, UploadId=u)) == ("NoSuchUpload", 404))
    u = s3.create_multipart_upload(Bucket="models", Key="mp/bad.safetensors")["UploadId"]
    q1 = s3.upload_part(Bucket="models", Key="mp/bad.safetensors", UploadId=u, PartNumber=1, Body=b"not a file" * 10)
    got = error_code(lambda: s3.complete_multipart_upload(
        Bucket="models", Key="mp/bad.safetensors", UploadId=u, MultipartUpload={"Parts": [P(1, q1)]}))
    check("Complete of an invalid file: InvalidObject, nothing published",
          got == ("InvalidObject", 400) and not os.path.exists(os.path.join(root, "mp/bad.safetensors")), got)
    s3.abort_multipart_upload(Bucket="models", Key="mp/bad.safetensors", UploadId=u)
    check("Abort twice: NoSuchUpload", error_code(lambda: s3.abort_multipart_upload(
        Bucket="models", Key="mp/bad.safetensors", UploadId=u)) == ("NoSuchUpload", 404))
    check("UploadPart to an unknown upload: NoSuchUpload", error_code(lambda: s3.upload_part(
        Bucket="models", Key=key, UploadId="0" * 32, PartNumber=1, Body=b"x")) == ("NoSuchUpload", 404))
    staging = [f for d in os.listdir(os.path.join(root, ".ztensord-staging"))
               if os.path.isdir(os.path.join(root, ".ztensord-staging", d))
               for f in os.listdir(os.path.join(root, ".ztensord-staging", d))]
    check("no staging file left after Complete and Abort", staging == [], staging)


def in_place(url, root, big):
    """Parts of one size are written at their place in one file, which Complete publishes
    (the daemon logs "written in place"); the cases that must fall back to copying."""
    s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="dummy",
                      aws_secret_access_key="dummy")
    data = open(big, "rb").read()
    five = 5 << 20
    chunks = [data[i:i + five] for i in range(0, len(data), five)]
    P = lambda n, e: {"PartNumber": n, "ETag": e["ETag"]}

    def up(key, order, body=lambda n: chunks[n - 1]):
        u = s3.create_multipart_upload(Bucket="models", Key=key)["UploadId"]
        got = {}
        for n in order:
            got[n] = s3.upload_part(Bucket="models", Key=key, UploadId=u, PartNumber=n, Body=body(n))
        return u, got

    def complete(key, u, got, numbers):
        return s3.complete_multipart_upload(Bucket="models", Key=key, UploadId=u, MultipartUpload={
            "Parts": [P(n, got[n]) for n in numbers]})

    def on_disk(key):
        path = os.path.join(root, key)
        return open(path, "rb").read() if os.path.exists(path) else None

    # 1. out of order (the first part of the part size to arrive sets it): in place, byte-exact
    n = len(chunks)
    order = list(range(2, n + 1)) + [1]
    u, got = up("ip/backwards.safetensors", order)
    complete("ip/backwards.safetensors", u, got, range(1, n + 1))
    check("in place: parts sent out of order, byte-exact", on_disk("ip/backwards.safetensors") == data)
    # 2. an in-place Complete refused (a wrong first part: no safetensors header): nothing
    # published, the upload and its other parts intact; the part sent again goes to a file of
    # its own (its place is spent), Complete then copies: byte-exact
    k = "ip/refused.safetensors"
    u, got = up(k, range(1, n + 1), lambda i: chunks[i - 1] if i > 1 else b"z" * five)
    e = error_code(lambda: complete(k, u, got, range(1, n + 1)))
    check("in place: a file not valid: InvalidObject, nothing published",
          e == ("InvalidObject", 400) and on_disk(k) is None, e)
    got[1] = s3.upload_part(Bucket="models", Key=k, UploadId=u, PartNumber=1, Body=chunks[0])
    complete(k, u, got, range(1, n + 1))
    check("in place: completed again after a refusal, byte-exact", on_disk(k) == data)
    # 3. a Complete that lists fewer parts than were sent must not cut the others: refused
    # (the first parts alone are not a valid file), then completed with all of them
    k = "ip/subset.safetensors"
    u, got = up(k, range(1, n + 1))
    e = error_code(lambda: complete(k, u, got, range(1, n)))
    check("in place: Complete of the first parts only: InvalidObject", e == ("InvalidObject", 400), e)
    complete(k, u, got, range(1, n + 1))
    check("in place: then Complete of all parts, byte-exact", on_disk(k) == data)
    # 4. a part larger than the first one: not in place, still byte-exact
    k = "ip/sizes.safetensors"
    six = 6 << 20
    u = s3.create_multipart_upload(Bucket="models", Key=k)["UploadId"]
    got = {1: s3.upload_part(Bucket="models", Key=k, UploadId=u, PartNumber=1, Body=data[:five])}
    got[2] = s3.upload_part(Bucket="models", Key=k, UploadId=u, PartNumber=2, Body=data[five:five + six])
    got[3] = s3.upload_part(Bucket="models", Key=k, UploadId=u, PartNumber=3, Body=data[five + six:])
    complete(k, u, got, (1, 2, 3))
    check("parts of two sizes (copied), byte-exact", on_disk(k) == data)
    staging = [f for d in os.listdir(os.path.join(root, ".ztensord-staging"))
               if os.path.isdir(os.path.join(root, ".ztensord-staging", d))
               for f in os.listdir(os.path.join(root, ".ztensord-staging", d))]
    check("in place: no staging file left", staging == [], staging)


if __name__ == "__main__":
    {"boto3": boto3_checks, "streamer": streamer, "writes": writes,
     "no_writes": no_writes, "multipart": multipart, "in_place": in_place}[sys.argv[1]](*sys.argv[2:])
