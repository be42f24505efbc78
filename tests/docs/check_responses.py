#!/usr/bin/python3
"""check_responses.py ZTENSORD ZT GEN_FOREIGN GEN_CORPUS_V2 WORKDIR

Real responses against docs/openapi.yaml. Generates a root (zt pack files, a
zstd file, a crc32c file, an invalid file, safetensors and ALT fixtures, v2
files with shards), starts ztensord on it on an ephemeral loopback port (and
other instances for the answers that need other options: tokens, limits, a
full disk, an upstream), sends requests on every route of openapi.yaml, and
checks every answer with openapi_check.Spec: the status is documented for the
operation, the Content-Type for the status, and a JSON body is valid against
the status's schema ($refs resolved). Each request also states the status it
expects, so a check can fail on behaviour as well as on the document.

At the end every (method, route, status) that openapi.yaml documents must
have been seen, or be listed in NOT_PROVOKED with the reason it cannot be
provoked here; the error codes the server defines (server/core/errors.h) must
all be in the Error schema's enum. Prints one line per check and "N passed,
M failed"; exits 1 on any failure.
"""
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openapi_check import Spec  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

OOM = "out of memory, or a response that cannot be built"
IO = "an I/O error of the disk, or out of memory"
NOT_READY = ("not_ready comes only before the first scan ends, a moment too short to hit without "
             "a timed test; file_unavailable needs a file the server may not open (tests run as root)")
BUSY = "needs connection_limit busy connections held open at once (overloaded)"
LOCK = "needs a second ztensord holding the publication lock for 5 s (publish_busy)"
SESSION_BUSY = "needs a second request on a session while a component is streaming (session_busy)"
BIG_JSON = "a JSON body over 64 MiB"
DISK = "the disk filling up during the body (the reserve is checked before whole-file PUTs only)"

# (METHOD, route, status) that openapi.yaml documents but this test does not provoke, and why.
NOT_PROVOKED = {
    ("GET", "/readyz", "503"): "draining: after SIGTERM the listener is closed; " + NOT_READY,
    ("HEAD", "/readyz", "503"): "draining: after SIGTERM the listener is closed; " + NOT_READY,
    ("GET", "/metrics", "500"): OOM,
    ("HEAD", "/metrics", "500"): OOM,
    ("GET", "/v1/files", "503"): NOT_READY,
    ("HEAD", "/v1/files", "503"): NOT_READY,
    ("GET", "/v1/files/{file}", "500"): OOM,
    ("HEAD", "/v1/files/{file}", "500"): OOM,
    ("GET", "/v1/files/{file}", "503"): NOT_READY,
    ("HEAD", "/v1/files/{file}", "503"): NOT_READY,
    ("GET", "/v1/files/{file}/objects/{object}", "500"): OOM,
    ("HEAD", "/v1/files/{file}/objects/{object}", "500"): OOM,
    ("GET", "/v1/files/{file}/objects/{object}", "503"): NOT_READY,
    ("HEAD", "/v1/files/{file}/objects/{object}", "503"): NOT_READY,
    ("GET", "/v1/files/{file}/raw", "500"): OOM,
    ("HEAD", "/v1/files/{file}/raw", "500"): OOM,
    ("GET", "/v1/blobs/sha256:{hex}", "501"): "the blob index holds sha256-digested parts; the corpus's "
                                              "part in an unknown encoding has no sha256 digest",
    ("HEAD", "/v1/blobs/sha256:{hex}", "501"): "as for GET",
    ("PUT", "/v1/files/{file}", "500"): IO,
    ("DELETE", "/v1/files/{file}", "413"): "a DELETE body over lingering_max (64 MiB)",
    ("DELETE", "/v1/files/{file}", "500"): IO,
    ("DELETE", "/v1/files/{file}", "503"): LOCK,
    ("POST", "/v1/uploads", "413"): BIG_JSON,
    ("POST", "/v1/uploads", "500"): IO,
    ("POST", "/v1/uploads", "507"): "the disk full when the staging file is made",
    ("GET", "/v1/uploads/{id}", "409"): SESSION_BUSY,
    ("HEAD", "/v1/uploads/{id}", "409"): SESSION_BUSY,
    ("DELETE", "/v1/uploads/{id}", "409"): SESSION_BUSY,
    ("GET", "/v1/uploads/{id}", "503"): BUSY,
    ("HEAD", "/v1/uploads/{id}", "503"): BUSY,
    ("DELETE", "/v1/uploads/{id}", "503"): BUSY,
    ("PUT", "/v1/uploads/{id}/components/{key}", "500"): IO,
    ("PUT", "/v1/uploads/{id}/components/{key}", "503"): BUSY,
    ("PUT", "/v1/uploads/{id}/components/{key}", "507"): DISK,
    ("POST", "/v1/uploads/{id}/commit", "413"): BIG_JSON,
    ("POST", "/v1/uploads/{id}/commit", "500"): IO,
    ("POST", "/v1/uploads/{id}/commit", "503"): LOCK,
    ("POST", "/v1/uploads/{id}/commit", "507"): DISK,
}


class Result:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self, name):
        self.passed += 1
        print(f"ok - {name}")

    def bad(self, name, why):
        self.failed += 1
        print(f"FAIL - {name}: {why}")


R = Result()


class Daemon:
    """A ztensord on 127.0.0.1:0; its port is read from its 'listening on' line."""

    def __init__(self, exe, work, name, args):
        self.err_path = os.path.join(work, name + ".err")
        self.errf = open(self.err_path, "wb")
        self.proc = subprocess.Popen([exe, "--listen", "127.0.0.1:0", "--access-log", "off"] + args,
                                     stdout=subprocess.DEVNULL, stderr=self.errf)
        self.port = None
        for _ in range(300):
            with open(self.err_path, "rb") as f:
                m = re.findall(rb"listening on http://127\.0\.0\.1:(\d+)", f.read())
            if m:
                self.port = int(m[-1])
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        if self.port is None:
            raise RuntimeError(f"{name}: no 'listening on' line: {open(self.err_path).read()[:600]}")
        for _ in range(300):
            if self.request("GET", "/readyz")[0] == 200:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{name}: /readyz never answered 200")

    def request(self, method, path, headers=None, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            c.putrequest(method, path, skip_accept_encoding=True)
            hs = dict(headers or {})
            if body is not None and "Content-Length" not in hs:
                hs["Content-Length"] = str(len(body))
            for k, v in hs.items():
                c.putheader(k, v)
            c.endheaders(body)
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def metric(self, line_prefix):
        _, _, body = self.request("GET", "/metrics")
        for line in body.decode().splitlines():
            if line.startswith(line_prefix):
                return line.split()[-1]
        return None

    def wait_verified(self):
        """Until the background verifier has hashed every sha256 component (60 s at most)."""
        for _ in range(600):
            if self.metric('ztensord_digest_components{state="pending"}') == "0":
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "timeout"
        self.errf.close()
        return rc


class Checker:
    def __init__(self, spec):
        self.spec = spec
        self.seen = set()  # (METHOD, route, status)
        self.n = 0

    def __call__(self, d, name, method, route, path, want, headers=None, body=None, code=None):
        status, hdrs, data = d.request(method, path, headers, body)
        self.n += 1
        self.seen.add((method, route, str(status)))
        if status == 405:  # 405 is what every method a route lacks gets
            self.seen.add(("*", route, "405"))
        label = f"{name}: {method} {path[:80]} -> {status}"
        problems = []
        if status != want:
            problems.append(f"status {status}, want {want} ({data[:200]!r})")
        problems += self.spec.check(method, route, status, hdrs.get("content-type"), data,
                                    hdrs.get("content-encoding"))
        if code and method != "HEAD" and not problems:
            try:
                got = json.loads(data)["error"]["code"]
            except (ValueError, KeyError, TypeError):
                got = None
            if got != code:
                problems.append(f"error code {got!r}, want {code!r}")
        if problems:
            R.bad(label, "; ".join(problems))
        else:
            R.ok(label)
        return status, hdrs, data


def pack(zt, out, *args):
    subprocess.run([zt, "pack", "-o", out] + list(args), check=True, stdout=subprocess.DEVNULL)


def make_root(zt, gen_foreign, gen_v2, work):
    root = os.path.join(work, "root")
    raw = os.path.join(work, "raw")
    os.makedirs(os.path.join(root, "sub"))
    os.makedirs(raw)
    w = bytes((i * 7 + 3) % 251 for i in range(1024))
    open(os.path.join(raw, "w.bin"), "wb").write(w)
    open(os.path.join(raw, "z.bin"), "wb").write(bytes(65536))
    pack(zt, os.path.join(root, "a.zt"), f"w=f32:16x16:{raw}/w.bin", f"z=f32:128x128:{raw}/z.bin")
    pack(zt, os.path.join(root, "sub", "c.zt"), "--compress", "--digest", "crc32c",
         f"z=f32:128x128:{raw}/z.bin")
    pack(zt, os.path.join(root, "zs.zt"), "--compress", f"z=f32:128x128:{raw}/z.bin")
    # a model of two files: their views and the directory's model.safetensors.index.json
    os.makedirs(os.path.join(root, "model"))
    pack(zt, os.path.join(root, "model", "model-00001-of-00002.zt"), f"w=f32:16x16:{raw}/w.bin")
    pack(zt, os.path.join(root, "model", "model-00002-of-00002.zt"), "--compress",
         f"z=f32:128x128:{raw}/z.bin")
    pack(zt, os.path.join(work, "up.zt"), f"w=f32:16x16:{raw}/w.bin")
    # a file whose component does not match its digest (found by the verifier)
    open(os.path.join(raw, "lie.bin"), "wb").write(bytes((i * 13 + 5) % 256 for i in range(1024)))
    pack(zt, os.path.join(root, "lie.zt"), f"q=u8:1024:{raw}/lie.bin")
    b = bytearray(open(os.path.join(root, "lie.zt"), "rb").read())
    b[64] ^= 0xFF
    open(os.path.join(root, "lie.zt"), "wb").write(b)
    # a zstd component whose frame is damaged (no digest: only decoding finds it)
    open(os.path.join(raw, "t.bin"), "wb").write(bytes((i * 31) % 7 for i in range(65536)))
    bad = os.path.join(root, "broken.zt")
    pack(zt, bad, "--compress", "--digest", "none", f"t=u8:65536:{raw}/t.bin")
    b = bytearray(open(bad, "rb").read())
    b[64 + 8] ^= 0xFF  # past the frame header: a corrupt block
    open(bad, "wb").write(b)
    open(os.path.join(root, "junk.zt"), "wb").write(b"not a zTensor file\n")
    os.mkdir(os.path.join(root, "dir.zt"))  # a name that is not a regular file
    # a plain file (no tensor extension): listed, its document and its bytes
    open(os.path.join(root, "config.json"), "w").write('{"architectures": ["Tiny"]}\n')
    # the file rewritten in place after the scan (file_changed)
    # (over 64 KiB: a smaller span is read into memory at once, its change seen only by a
    # larger read or the rescan: see docs/API.md, "Which files are served")
    open(os.path.join(raw, "big.bin"), "wb").write(bytes(i % 253 for i in range(262144)))
    pack(zt, os.path.join(root, "changing.zt"), f"w=f32:256x256:{raw}/big.bin")
    # foreign formats
    fx = os.path.join(work, "foreign")
    os.makedirs(fx)
    subprocess.run([gen_foreign, fx], check=True, stdout=subprocess.DEVNULL)
    shutil.copy(os.path.join(fx, "plain.safetensors"), root)
    shutil.copy(os.path.join(fx, "model.alt"), root)
    # zTensor v2: a sharded model, one with a shard missing, an unknown encoding
    cv = os.path.join(work, "v2")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    subprocess.run([gen_v2, cv], check=True, stdout=subprocess.DEVNULL, env=env)
    for n in os.listdir(os.path.join(cv, "accept")):
        if n.endswith(".zt") and (n.startswith("sharded") or n == "dtype_f32.zt"):
            shutil.copy(os.path.join(cv, "accept", n), root)
    for n in ("encoding_unknown", "shard_missing", "shard_missing-00002-of-00002"):
        shutil.copy(os.path.join(cv, "reject", n + ".zt"), root)
    pack(zt, os.path.join(work, "v2up.zt"), "--format", "v2", f"w=f32:16x16:{raw}/w.bin")
    return root, raw


def q(s):
    return urllib.parse.quote(s, safe="")


def reads(ck, d, root):
    """Every read route: successes, partials, conditionals and errors."""
    F = "/v1/files/{file}"
    O = "/v1/files/{file}/objects/{object}"
    C = "/v1/files/{file}/objects/{object}/{component}"
    RAW = "/v1/files/{file}/raw"
    B = "/v1/blobs/sha256:{hex}"
    for m in ("GET", "HEAD"):
        ck(d, "health", m, "/healthz", "/healthz", 200)
        ck(d, "ready", m, "/readyz", "/readyz", 200)
        ck(d, "metrics", m, "/metrics", "/metrics", 200)
        ck(d, "listing", m, "/v1/files", "/v1/files", 200)
    for m in ("POST", "PUT"):
        ck(d, "health: other method", m, "/healthz", "/healthz", 405, code="method_not_allowed", body=b"")
        ck(d, "ready: other method", m, "/readyz", "/readyz", 405, code="method_not_allowed", body=b"")
        ck(d, "metrics: other method", m, "/metrics", "/metrics", 405, code="method_not_allowed", body=b"")
        ck(d, "listing: other method", m, "/v1/files", "/v1/files", 405, code="method_not_allowed", body=b"")
    for m in ("HEAD",):
        pass
    _, h, body = ck(d, "listing", "GET", "/v1/files", "/v1/files", 200)
    listing = json.loads(body)
    formats = sorted({e.get("format", "-") for e in listing["files"]})
    if formats == ["-", "alt", "file", "safetensors", "safetensors-index", "safetensors-view",
                   "zt-1.2", "zt-2"]:
        R.ok(f"listing formats {formats}")
    else:
        R.bad("listing formats", f"{formats}")
    ck(d, "listing page", "GET", "/v1/files", "/v1/files?limit=2", 200)
    ck(d, "listing prefix", "GET", "/v1/files", "/v1/files?prefix=sub%2F&limit=5", 200)
    ck(d, "listing bad limit", "GET", "/v1/files", "/v1/files?limit=0", 400, code="bad_request")
    ck(d, "listing bad prefix", "GET", "/v1/files", "/v1/files?prefix=%zz", 400, code="bad_request")
    ck(d, "listing 304", "GET", "/v1/files", "/v1/files", 304, headers={"If-None-Match": h["etag"]})
    ck(d, "listing 304", "HEAD", "/v1/files", "/v1/files", 304, headers={"If-None-Match": h["etag"]})
    ck(d, "listing bad cursor", "HEAD", "/v1/files", "/v1/files?cursor=xyz", 400)
    for name in ("a.zt", "sub/c.zt", "plain.safetensors", "model.alt", "sharded.zt", "shard_missing.zt",
                 "dtype_f32.zt", "encoding_unknown.zt", "zs.zt"):
        for m in ("GET", "HEAD"):
            ck(d, f"manifest {name}", m, F, "/v1/files/" + name, 200)
    # a view and an index: their bytes (/raw) and their JSON documents
    for name in ("model/model-00001-of-00002.safetensors", "model/model.safetensors.index.json"):
        for m in ("GET", "HEAD"):
            ck(d, f"object {name}", m, F, "/v1/files/" + name, 200)
            ck(d, f"object {name}: bytes", m, RAW, f"/v1/files/{name}/raw", 200)
    for enc in ("zstd", "gzip"):  # the first request starts the compression: wait for it
        for _ in range(100):
            st, hh, _ = d.request("GET", "/v1/files/a.zt", {"Accept-Encoding": enc})
            if hh.get("content-encoding") == enc:
                break
            time.sleep(0.05)
        ck(d, f"manifest, {enc}", "GET", F, "/v1/files/a.zt", 200, headers={"Accept-Encoding": enc})
    _, h, _ = ck(d, "manifest", "GET", F, "/v1/files/a.zt", 200)
    met = h["etag"]
    for m in ("GET", "HEAD"):
        ck(d, "manifest range", m, F, "/v1/files/a.zt", 206, headers={"Range": "bytes=0-9"})
        ck(d, "manifest multipart", m, F, "/v1/files/a.zt", 206, headers={"Range": "bytes=0-1,5-9"})
        ck(d, "manifest 304", m, F, "/v1/files/a.zt", 304, headers={"If-None-Match": met})
        ck(d, "manifest 412", m, F, "/v1/files/a.zt", 412, headers={"If-Match": '"nope"'},
           code="precondition_failed")
        ck(d, "manifest 416", m, F, "/v1/files/a.zt", 416, headers={"Range": "bytes=999999-"},
           code="range_not_satisfiable")
        ck(d, "manifest bad path", m, F, "/v1/files/..%2Fx.zt", 400, code="bad_request")
        ck(d, "manifest unknown file", m, F, "/v1/files/nope.zt", 404, code="file_not_found")
        ck(d, "manifest invalid file", m, F, "/v1/files/junk.zt", 404, code="file_invalid")
        ck(d, "manifest 414", m, F, "/v1/files/" + "a" * 4100 + ".zt", 414, code="uri_too_long")
    ck(d, "file route: other method", "POST", F, "/v1/files/a.zt", 405, body=b"", code="method_not_allowed")
    # a plain file: its document, its bytes, and the tensor-only routes refused
    for m in ("GET", "HEAD"):
        ck(d, "plain file's document", m, F, "/v1/files/config.json", 200)
        ck(d, "plain file's bytes", m, "/v1/files/{file}/raw", "/v1/files/config.json/raw", 200)
        ck(d, "plain file's range", m, "/v1/files/{file}/raw", "/v1/files/config.json/raw", 206,
           headers={"Range": "bytes=0-3"})
        ck(d, "objects of a plain file", m, O, "/v1/files/config.json/objects/x", 404,
           code="not_a_tensor_file")
        ck(d, "component of a plain file", m, C, "/v1/files/config.json/objects/x/data", 404,
           code="not_a_tensor_file")
        ck(d, "view of a plain file", m, "/v1/files/{file}/safetensors",
           "/v1/files/config.json/safetensors", 404, code="not_a_tensor_file")
    ck(d, "file route: no such suffix", "GET", F, "/v1/files/a.zt/nope", 404, code="not_found")
    # objects
    for m in ("GET", "HEAD"):
        ck(d, "object", m, O, "/v1/files/a.zt/objects/w", 200)
        ck(d, "object range", m, O, "/v1/files/a.zt/objects/w", 206, headers={"Range": "bytes=0-3"})
        ck(d, "object 304", m, O, "/v1/files/a.zt/objects/w", 304,
           headers={"If-None-Match": d.request("HEAD", "/v1/files/a.zt/objects/w")[1]["etag"]})
        ck(d, "object 412", m, O, "/v1/files/a.zt/objects/w", 412, headers={"If-Match": '"x"'})
        ck(d, "object 416", m, O, "/v1/files/a.zt/objects/w", 416, headers={"Range": "bytes=99999-"})
        ck(d, "object not found", m, O, "/v1/files/a.zt/objects/nope", 404, code="object_not_found")
        ck(d, "object bad name", m, O, "/v1/files/a.zt/objects/%zz", 400, code="bad_request")
        ck(d, "object 414", m, O, "/v1/files/a.zt/objects/" + "o" * 4100, 414, code="uri_too_long")
    ck(d, "object: other method", "PUT", O, "/v1/files/a.zt/objects/w", 405, body=b"")
    ck(d, "safetensors object", "GET", O, "/v1/files/plain.safetensors/objects/" + q("model.embed.weight"), 200)
    ck(d, "alt objects", "GET", F, "/v1/files/model.alt", 200)
    # components
    for m in ("GET", "HEAD"):
        _, h, _ = ck(d, "component", m, C, "/v1/files/a.zt/objects/w/data", 200)
        ck(d, "component zstd decoded", m, C, "/v1/files/sub/c.zt/objects/z/data", 200)
        ck(d, "component zstd stored", m, C, "/v1/files/sub/c.zt/objects/z/data", 200,
           headers={"Accept-Encoding": "zstd"})
        ck(d, "component range", m, C, "/v1/files/a.zt/objects/w/data", 206, headers={"Range": "bytes=0-15"})
        ck(d, "component multipart", m, C, "/v1/files/a.zt/objects/w/data", 206,
           headers={"Range": "bytes=0-1,8-9"})
        ck(d, "component 304", m, C, "/v1/files/a.zt/objects/w/data", 304, headers={"If-None-Match": h["etag"]})
        ck(d, "component 412", m, C, "/v1/files/a.zt/objects/w/data", 412, headers={"If-Match": '"x"'})
        ck(d, "component 416", m, C, "/v1/files/a.zt/objects/w/data", 416, headers={"Range": "bytes=5000-"})
        ck(d, "component not found", m, C, "/v1/files/a.zt/objects/w/nope", 404, code="component_not_found")
        ck(d, "component bad name", m, C, "/v1/files/a.zt/objects/w/%00", 400, code="bad_request")
        ck(d, "component 414", m, C, "/v1/files/a.zt/objects/w/" + "c" * 4100, 414)
        ck(d, "v2 unknown encoding", m, C, "/v1/files/encoding_unknown.zt/objects/t/data", 501,
           code="encoding_unsupported")
        ck(d, "v2 part in a missing shard", m, C, "/v1/files/shard_missing.zt/objects/layer0/data", 503,
           code="shard_unavailable")
        ck(d, "safetensors component", m, C,
           "/v1/files/plain.safetensors/objects/" + q("model.embed.weight") + "/data", 200)
        ck(d, "v2 sharded part", m, C, "/v1/files/sharded.zt/objects/layer0/data", 200)
    ck(d, "component: other method", "DELETE", C, "/v1/files/a.zt/objects/w/data", 405)
    for m in ("GET", "HEAD"):
        ck(d, "damaged zstd frame", m, C, "/v1/files/broken.zt/objects/t/data", 500, code="component_corrupt")
    # raw
    for m in ("GET", "HEAD"):
        _, h, _ = ck(d, "raw", m, RAW, "/v1/files/a.zt/raw", 200)
        ck(d, "raw range", m, RAW, "/v1/files/a.zt/raw", 206, headers={"Range": "bytes=0-7"})
        ck(d, "raw multipart", m, RAW, "/v1/files/a.zt/raw", 206, headers={"Range": "bytes=0-7,16-23"})
        ck(d, "raw 304", m, RAW, "/v1/files/a.zt/raw", 304, headers={"If-None-Match": h["etag"]})
        ck(d, "raw 412", m, RAW, "/v1/files/a.zt/raw", 412, headers={"If-Match": '"x"'})
        ck(d, "raw 416", m, RAW, "/v1/files/a.zt/raw", 416, headers={"Range": "bytes=99999999-"})
        ck(d, "raw bad path", m, RAW, "/v1/files/a%2F%2Fb.zt/raw", 400)
        ck(d, "raw unknown", m, RAW, "/v1/files/nope.zt/raw", 404, code="file_not_found")
        ck(d, "raw 414", m, RAW, "/v1/files/" + "r" * 4100 + ".zt/raw", 414)
    ck(d, "raw: other method", "PUT", RAW, "/v1/files/a.zt/raw", 405, body=b"")
    # the safetensors view
    V = "/v1/files/{file}/safetensors"
    for m in ("GET", "HEAD"):
        _, h, _ = ck(d, "view", m, V, "/v1/files/a.zt/safetensors", 200)
        ck(d, "view of a zstd file", m, V, "/v1/files/zs.zt/safetensors", 200)
        ck(d, "view of a sharded v2 model", m, V, "/v1/files/sharded.zt/safetensors", 200)
        ck(d, "view of a safetensors file (itself)", m, V, "/v1/files/plain.safetensors/safetensors", 200)
        ck(d, "view of an ALT file", m, V, "/v1/files/model.alt/safetensors", 200)
        ck(d, "view range", m, V, "/v1/files/a.zt/safetensors", 206, headers={"Range": "bytes=0-99"})
        ck(d, "view several ranges (the whole)", m, V, "/v1/files/a.zt/safetensors", 200,
           headers={"Range": "bytes=0-7,16-23"})
        ck(d, "view 304", m, V, "/v1/files/a.zt/safetensors", 304, headers={"If-None-Match": h["etag"]})
        ck(d, "view 412", m, V, "/v1/files/a.zt/safetensors", 412, headers={"If-Match": '"x"'},
           code="precondition_failed")
        ck(d, "view 416", m, V, "/v1/files/a.zt/safetensors", 416, headers={"Range": "bytes=99999999-"})
        ck(d, "view bad path", m, V, "/v1/files/a%2F%2Fb.zt/safetensors", 400)
        ck(d, "view unknown", m, V, "/v1/files/nope.zt/safetensors", 404, code="file_not_found")
        ck(d, "view invalid file", m, V, "/v1/files/junk.zt/safetensors", 404, code="file_invalid")
        ck(d, "view 414", m, V, "/v1/files/" + "r" * 4100 + ".zt/safetensors", 414)
        ck(d, "view refused (unknown encoding)", m, V, "/v1/files/encoding_unknown.zt/safetensors", 422,
           code="view_unsupported")
        ck(d, "view of a part in a missing shard", m, V, "/v1/files/shard_missing.zt/safetensors", 503,
           code="shard_unavailable")
        ck(d, "view of a damaged zstd frame", m, V, "/v1/files/broken.zt/safetensors", 500,
           code="component_corrupt")
    ck(d, "view: other method", "PUT", V, "/v1/files/a.zt/safetensors", 405, body=b"")
    # blobs
    w = open(os.path.join(root, "..", "raw", "w.bin"), "rb").read()
    hexd = hashlib.sha256(w).hexdigest()
    for m in ("GET", "HEAD"):
        _, h, _ = ck(d, "blob", m, B, "/v1/blobs/sha256:" + hexd, 200)
        ck(d, "blob range", m, B, "/v1/blobs/sha256:" + hexd, 206, headers={"Range": "bytes=0-3"})
        ck(d, "blob 304", m, B, "/v1/blobs/sha256:" + hexd, 304, headers={"If-None-Match": h["etag"]})
        ck(d, "blob 412", m, B, "/v1/blobs/sha256:" + hexd, 412, headers={"If-Match": '"x"'})
        ck(d, "blob 416", m, B, "/v1/blobs/sha256:" + hexd, 416, headers={"Range": "bytes=99999-"})
        ck(d, "blob bad digest", m, B, "/v1/blobs/sha256:xyz", 400, code="bad_request")
        ck(d, "blob unknown", m, B, "/v1/blobs/sha256:" + "0" * 64, 404, code="blob_not_found")
        ck(d, "blob 414", m, B, "/v1/blobs/sha256:" + "0" * 4100, 414)
    ck(d, "blob: other method", "POST", B, "/v1/blobs/sha256:" + hexd, 405, body=b"")
    # a file changed in place after its scan (--no-watch: no rescan settles it)
    big = hashlib.sha256(open(os.path.join(root, "..", "raw", "big.bin"), "rb").read()).hexdigest()
    path = os.path.join(root, "changing.zt")
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(70)
        f.write(b"\x01")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    for m in ("GET", "HEAD"):
        ck(d, "component of a file changed in place", m, C, "/v1/files/changing.zt/objects/w/data", 503,
           code="file_changed")
        ck(d, "raw of a file changed in place", m, RAW, "/v1/files/changing.zt/raw", 503, code="file_changed")
        ck(d, "view of a file changed in place", m, "/v1/files/{file}/safetensors",
           "/v1/files/changing.zt/safetensors", 503, code="file_changed")
        ck(d, "blob of a file changed in place", m, B, "/v1/blobs/sha256:" + big, 503, code="file_changed")


def blob_mismatch(ck, d, root):
    """lie.zt's component does not hash to the digest its manifest claims, and no other
    component claims it: once verified, its blob is 500 digest_mismatch."""
    raw = open(os.path.join(root, "..", "raw", "lie.bin"), "rb").read()
    dig = hashlib.sha256(raw).hexdigest()
    for m in ("GET", "HEAD"):
        ck(d, "blob whose only claim lies", m, "/v1/blobs/sha256:{hex}", "/v1/blobs/sha256:" + dig, 500,
           code="digest_mismatch")


def writes(ck, d, work):
    F = "/v1/files/{file}"
    up = open(os.path.join(work, "up.zt"), "rb").read()
    v2 = open(os.path.join(work, "v2up.zt"), "rb").read()
    _, h, _ = ck(d, "PUT creates", "PUT", F, "/v1/files/new/u.zt", 201, body=up)
    ck(d, "PUT replaces", "PUT", F, "/v1/files/new/u.zt", 200, body=up, headers={"If-Match": h["etag"]})
    ck(d, "PUT v2", "PUT", F, "/v1/files/new/v2.zt", 201, body=v2)
    ck(d, "PUT If-None-Match *", "PUT", F, "/v1/files/new/u.zt", 412, body=up,
       headers={"If-None-Match": "*"}, code="precondition_failed")
    ck(d, "PUT not .zt", "PUT", F, "/v1/files/x.safetensors", 400, body=up, code="bad_name")
    ck(d, "PUT bad digest header", "PUT", F, "/v1/files/x.zt", 400, body=up,
       headers={"Content-Digest": "sha-256=:nope:"}, code="bad_digest_header")
    ck(d, "PUT digest mismatch", "PUT", F, "/v1/files/x.zt", 400, body=up,
       headers={"Content-Digest": "sha-256=:" + "A" * 43 + "=:"}, code="digest_mismatch")
    ck(d, "PUT invalid file", "PUT", F, "/v1/files/x.zt", 422, body=b"junk" * 20, code="invalid_file")
    ck(d, "PUT on a directory", "PUT", F, "/v1/files/dir.zt", 409, body=up, code="name_conflict")
    ck(d, "PUT no such route", "PUT", F, "/v1/files/x.zt/objects", 404, body=up, code="not_found")
    ck(d, "PUT 414", "PUT", F, "/v1/files/" + "p" * 4100 + ".zt", 414, body=up)
    ck(d, "PATCH", "PATCH", F, "/v1/files/x.zt", 405, body=b"", code="method_not_allowed")
    ck(d, "DELETE bad path", "DELETE", F, "/v1/files/..%2Fx.zt", 400, code="bad_request")
    ck(d, "DELETE If-Match", "DELETE", F, "/v1/files/new/u.zt", 412, headers={"If-Match": '"x"'})
    ck(d, "DELETE 414", "DELETE", F, "/v1/files/" + "d" * 4100 + ".zt", 414)
    ck(d, "DELETE", "DELETE", F, "/v1/files/new/u.zt", 204)
    ck(d, "DELETE again", "DELETE", F, "/v1/files/new/u.zt", 404, code="file_not_found")
    # sessions
    U = "/v1/uploads"
    ID = "/v1/uploads/{id}"
    K = "/v1/uploads/{id}/components/{key}"
    CM = "/v1/uploads/{id}/commit"
    _, _, body = ck(d, "session opens", "POST", U, U, 201,
                    body=json.dumps({"file": "s/s.zt", "attributes": {"p": "x"}}).encode())
    sid = json.loads(body)["id"]
    base = f"{U}/{sid}"
    ck(d, "session: not JSON", "POST", U, U, 400, body=b"{", code="bad_json")
    ck(d, "session: bad name", "POST", U, U, 400, body=b'{"file": "../x.zt"}', code="bad_request")
    ck(d, "session: other method", "GET", U, U, 405, code="method_not_allowed")
    wbin = open(os.path.join(work, "raw", "w.bin"), "rb").read()
    ck(d, "component stored", "PUT", K, base + "/components/w", 201, body=wbin)
    ck(d, "component zstd", "PUT", K, base + "/components/z?encoding=zstd", 201, body=bytes(65536))
    ck(d, "component exists", "PUT", K, base + "/components/w", 409, body=wbin, code="component_exists")
    ck(d, "component bad encoding", "PUT", K, base + "/components/e?encoding=lz4", 400, body=wbin,
       code="bad_request")
    ck(d, "component digest mismatch", "PUT", K, base + "/components/m", 400, body=wbin,
       headers={"Content-Digest": "sha-256=:" + "A" * 43 + "=:"}, code="digest_mismatch")
    ck(d, "component: unknown session", "PUT", K, U + "/" + "0" * 32 + "/components/w", 404, body=wbin,
       code="upload_not_found")
    ck(d, "component: other method", "GET", K, base + "/components/w", 405)
    for m in ("GET", "HEAD"):
        ck(d, "session state", m, ID, base, 200)
        ck(d, "session state: unknown", m, ID, U + "/" + "0" * 32, 404, code="upload_not_found")
        ck(d, "session state: bad id", m, ID, U + "/bad!id", 400, code="bad_request")
    ck(d, "session: other method", "PUT", ID, base, 405, body=b"")
    ck(d, "commit: not JSON", "POST", CM, base + "/commit", 400, body=b"[]", code="bad_json")
    bad_objects = {"objects": {"w": {"shape": [3], "components": {"data": {"key": "w", "dtype": "f32"}}}}}
    ck(d, "commit: objects do not fit", "POST", CM, base + "/commit", 422,
       body=json.dumps(bad_objects).encode(), code="invalid_objects")
    objects = {"objects": {"w": {"shape": [16, 16], "components": {"data": {"key": "w", "dtype": "f32"}}},
                           "z": {"shape": [16384], "components": {"data": {"key": "z", "dtype": "f32"}}}}}
    ck(d, "commit: If-Match on a new file", "POST", CM, base + "/commit", 412,
       body=json.dumps(objects).encode(), headers={"If-Match": '"x"'}, code="precondition_failed")
    ck(d, "commit: other method", "GET", CM, base + "/commit", 405)
    ck(d, "commit", "POST", CM, base + "/commit", 201, body=json.dumps(objects).encode())
    ck(d, "commit: unknown session", "POST", CM, base + "/commit", 404, body=json.dumps(objects).encode(),
       code="upload_not_found")
    # a second session replaces the file; one is committed onto a directory; one aborted
    _, _, body = ck(d, "session 2", "POST", U, U, 201, body=b'{"file": "s/s.zt"}')
    b2 = f"{U}/{json.loads(body)['id']}"
    ck(d, "component 2", "PUT", K, b2 + "/components/w", 201, body=wbin)
    one = {"objects": {"w": {"shape": [256], "components": {"data": {"key": "w", "dtype": "f32"}}}}}
    ck(d, "commit replaces", "POST", CM, b2 + "/commit", 200, body=json.dumps(one).encode())
    _, _, body = ck(d, "session 3", "POST", U, U, 201, body=b'{"file": "dir.zt"}')
    b3 = f"{U}/{json.loads(body)['id']}"
    ck(d, "commit onto a directory", "POST", CM, b3 + "/commit", 409, body=b'{"objects": {}}',
       code="name_conflict")
    _, _, body = ck(d, "session 4", "POST", U, U, 201, body=b'{"file": "t.zt"}')
    b4 = f"{U}/{json.loads(body)['id']}"
    ck(d, "abort", "DELETE", ID, b4, 204)
    ck(d, "abort again", "DELETE", ID, b4, 404, code="upload_not_found")
    ck(d, "abort: bad id", "DELETE", ID, U + "/" + "x" * 65, 400, code="bad_request")
    ck(d, "no prefetch without upstream", "GET", "/v1/prefetch", "/v1/prefetch", 404, code="no_upstream")
    ck(d, "no prefetch without upstream", "POST", "/v1/prefetch", "/v1/prefetch", 404,
       body=b'{"files": ["a.zt"]}', code="no_upstream")


def auth(ck, exe, root, work):
    tokens = os.path.join(work, "tokens")
    with open(tokens, "w") as f:
        f.write("read  r3ad-0nly-t0ken-5f2a9c\nwrite wr1te-t0ken-8d41e07b\n")
    os.chmod(tokens, 0o600)
    d = Daemon(exe, work, "auth", ["--root", root, "--tokens-file", tokens, "--require-read-token",
                                   "--no-watch", "--disk-reserve", "0"])
    rd = {"Authorization": "Bearer r3ad-0nly-t0ken-5f2a9c"}
    wr = {"Authorization": "Bearer wr1te-t0ken-8d41e07b"}
    sid = "0" * 32
    try:
        for m in ("GET", "HEAD"):
            for route, path in (("/v1/files", "/v1/files"), ("/v1/files/{file}", "/v1/files/a.zt"),
                                ("/v1/files/{file}/raw", "/v1/files/a.zt/raw"),
                                ("/v1/files/{file}/safetensors", "/v1/files/a.zt/safetensors"),
                                ("/v1/files/{file}/objects/{object}", "/v1/files/a.zt/objects/w"),
                                ("/v1/files/{file}/objects/{object}/{component}",
                                 "/v1/files/a.zt/objects/w/data"),
                                ("/v1/blobs/sha256:{hex}", "/v1/blobs/sha256:" + "0" * 64),
                                ("/v1/uploads/{id}", "/v1/uploads/" + sid)):
                ck(d, "no token", m, route, path, 401, code="unauthorized")
            ck(d, "read token on a session", m, "/v1/uploads/{id}", "/v1/uploads/" + sid, 403, headers=rd,
               code="forbidden")
        ck(d, "read token reads", "GET", "/v1/files", "/v1/files", 200, headers=rd)
        for m, route, path, body in (
                ("PUT", "/v1/files/{file}", "/v1/files/x.zt", b"x"),
                ("DELETE", "/v1/files/{file}", "/v1/files/x.zt", None),
                ("POST", "/v1/uploads", "/v1/uploads", b'{"file": "x.zt"}'),
                ("PUT", "/v1/uploads/{id}/components/{key}", f"/v1/uploads/{sid}/components/k", b"x"),
                ("POST", "/v1/uploads/{id}/commit", f"/v1/uploads/{sid}/commit", b"{}"),
                ("DELETE", "/v1/uploads/{id}", f"/v1/uploads/{sid}", None)):
            ck(d, "write without a token", m, route, path, 401, body=body, code="unauthorized")
            ck(d, "write with a read token", m, route, path, 403, body=body, headers=rd, code="forbidden")
        ck(d, "prefetch without a token", "POST", "/v1/prefetch", "/v1/prefetch", 401, body=b"{}",
           code="unauthorized")
        ck(d, "prefetch jobs without a token", "GET", "/v1/prefetch", "/v1/prefetch", 401, code="unauthorized")
        ck(d, "write token: unknown session", "GET", "/v1/uploads/{id}", "/v1/uploads/" + sid, 404,
           headers=wr, code="upload_not_found")
    finally:
        rc = d.stop()
    check_exit("auth daemon", rc)


def limits(ck, exe, root, work):
    up = open(os.path.join(work, "up.zt"), "rb").read()
    d = Daemon(exe, work, "limits", ["--root", root, "--allow-anonymous-writes", "--no-watch",
                                     "--max-upload-size", "1K", "--max-uploads", "1", "--disk-reserve", "0"])
    try:
        ck(d, "too large", "PUT", "/v1/files/{file}", "/v1/files/big.zt", 413, body=up, code="too_large")
        _, _, body = ck(d, "the one slot", "POST", "/v1/uploads", "/v1/uploads", 201, body=b'{"file": "t.zt"}')
        sid = json.loads(body)["id"]
        ck(d, "no slot for a session", "POST", "/v1/uploads", "/v1/uploads", 503, body=b'{"file": "t.zt"}',
           code="too_many_uploads")
        ck(d, "no slot for a PUT", "PUT", "/v1/files/{file}", "/v1/files/small.zt", 503, body=b"x" * 100,
           code="too_many_uploads")
        ck(d, "component too large", "PUT", "/v1/uploads/{id}/components/{key}",
           f"/v1/uploads/{sid}/components/k", 413, body=b"x" * 2048, code="too_large")
    finally:
        rc = d.stop()
    check_exit("limits daemon", rc)
    d = Daemon(exe, work, "full", ["--root", root, "--allow-anonymous-writes", "--no-watch",
                                   "--disk-reserve", "1000T"])
    try:
        ck(d, "disk reserve", "PUT", "/v1/files/{file}", "/v1/files/big.zt", 507, body=up,
           code="insufficient_storage")
    finally:
        rc = d.stop()
    check_exit("full-disk daemon", rc)
    d = Daemon(exe, work, "nowrite", ["--root", root, "--no-watch"])
    try:
        ck(d, "writes disabled", "PUT", "/v1/files/{file}", "/v1/files/x.zt", 403, body=up,
           code="writes_disabled")
        ck(d, "writes disabled", "DELETE", "/v1/files/{file}", "/v1/files/a.zt", 403, code="writes_disabled")
        ck(d, "writes disabled: prefetch (the scope is checked first)", "POST", "/v1/prefetch", "/v1/prefetch",
           403, body=b"{}", code="writes_disabled")
    finally:
        rc = d.stop()
    check_exit("read-only daemon", rc)


def upstream(ck, exe, root, work, origin):
    cache = os.path.join(work, "cache")
    d = Daemon(exe, work, "sidecar", ["--upstream", f"http://127.0.0.1:{origin.port}", "--cache-dir", cache,
                                      "--allow-anonymous-writes", "--disk-reserve", "0",
                                      "--upstream-ttl", "600s"])
    P = "/v1/prefetch"
    try:
        ck(d, "listing through the cache", "GET", "/v1/files", "/v1/files", 200)
        ck(d, "manifest through the cache", "GET", "/v1/files/{file}", "/v1/files/a.zt", 200)
        ck(d, "component through the cache", "GET", "/v1/files/{file}/objects/{object}/{component}",
           "/v1/files/a.zt/objects/w/data", 200)
        ck(d, "prefetch", "POST", P, P, 202, body=b'{"files": ["a.zt"], "prefix": "sub/"}')
        ck(d, "prefetch: not JSON", "POST", P, P, 400, body=b"nope", code="bad_json")
        ck(d, "prefetch: names nothing", "POST", P, P, 400, body=b"{}", code="bad_request")
        for _ in range(300):
            st, _, body = d.request("GET", P)
            if st == 200 and all(j["state"] in ("done", "failed") for j in json.loads(body)["jobs"]):
                break
            time.sleep(0.1)
        ck(d, "prefetch jobs", "GET", P, P, 200)
    finally:
        rc = d.stop()
    check_exit("sidecar", rc)


def check_exit(name, rc):
    if rc == 0:
        R.ok(f"{name} exits 0 after SIGTERM")
    else:
        R.bad(f"{name} exits 0 after SIGTERM", f"exit status {rc}")


def coverage(spec, ck):
    missing = []
    for method, route in spec.operations():
        for status in spec.statuses(method, route):
            if (method, route, status) in ck.seen or (status == "405" and ("*", route, "405") in ck.seen):
                continue
            why = NOT_PROVOKED.get((method, route, status))
            if why:
                print(f"not provoked: {method} {route} {status}: {why}")
            else:
                missing.append(f"{method} {route} {status}")
    if missing:
        R.bad("every documented status is provoked (or listed in NOT_PROVOKED)", ", ".join(missing))
    else:
        R.ok("every documented status is provoked (or listed in NOT_PROVOKED)")
    if ck.n >= 30:
        R.ok(f"{ck.n} responses checked against their schemas")
    else:
        R.bad("30 or more responses checked", f"{ck.n}")


def error_codes(spec):
    text = open(os.path.join(REPO, "server", "core", "errors.h"), encoding="utf-8").read()
    codes = set(re.findall(r'X\(\s*\w+\s*,\s*\d+\s*,\s*"([a-z_]+)"', text))
    if not codes:
        R.bad("error codes read from server/core/errors.h", "none found")
        return
    undocumented = sorted(codes - spec.error_codes())
    if undocumented:
        R.bad("every error code of errors.h is in the Error schema", ", ".join(undocumented))
    else:
        R.ok(f"every error code of errors.h ({len(codes)}) is in the Error schema")


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    exe, zt, gen_foreign, gen_v2, work = (os.path.abspath(a) for a in sys.argv[1:])
    work = os.path.join(work, f"responses.{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    spec = Spec(os.path.join(REPO, "docs", "openapi.yaml"))
    ck = Checker(spec)
    root, _ = make_root(zt, gen_foreign, gen_v2, work)
    d = Daemon(exe, work, "main", ["--root", root, "--allow-anonymous-writes", "--disk-reserve", "0",
                                   "--no-watch"])
    try:
        if d.wait_verified():
            R.ok("digests verified")
        else:
            R.bad("digests verified", "pending after 60 s")
        reads(ck, d, root)
        blob_mismatch(ck, d, root)
        writes(ck, d, work)
        upstream(ck, exe, root, work, d)
    finally:
        rc = d.stop()
    check_exit("main daemon", rc)
    auth(ck, exe, root, work)
    limits(ck, exe, root, work)
    coverage(spec, ck)
    error_codes(spec)
    print(f"{R.passed} passed, {R.failed} failed")
    if R.failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work directory kept: {work}")
    return 1 if R.failed else 0


if __name__ == "__main__":
    sys.exit(main())
