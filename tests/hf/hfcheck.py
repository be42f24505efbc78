#!/usr/bin/python3
"""Checks of the /hf JSON documents for the test scripts (stdlib only).

  hfcheck.py info DOC REPO DIR FILES...   the model info document against the files of DIR
                                          (lib.sh's expect_dir: DIR/.views names the views,
                                          which must have no lfs block)
  hfcheck.py tree DOC DIR FILES...        a recursive tree listing: exactly FILES, plus the
                                          directories above them, with sizes and oids
  hfcheck.py field DOC KEY...             print a value (JSON for non-strings)
  hfcheck.py paths DOC PATH...            print each item's type and path, one a line
  hfcheck.py errjson DOC                  the body is {"error": "<non-empty string>"}
  hfcheck.py sha256 FILE                  sha256 of a file, hex
  hfcheck.py st FILE RAW:NAME...          an independent safetensors read: each named
                                          tensor's bytes equal RAW
Exit status 1 with a reason on stderr when a check fails.
"""
import hashlib
import json
import os
import struct
import sys


def fail(msg):
    sys.stderr.write(msg + "\n")
    sys.exit(1)


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def load(p):
    with open(p) as f:
        return json.load(f)


def views(d):
    """The names d/.views lists (lib.sh's expect_dir): safetensors views; and those
    d/.nolfs lists (t_s3_store.sh): other files whose digest is not their sha256."""
    names = set()
    for list_ in (".views", ".nolfs"):
        try:
            with open(os.path.join(d, list_)) as f:
                names |= {line.rstrip("\n") for line in f if line.strip()}
        except FileNotFoundError:
            pass
    return names


def check_file_item(it, d, name, key):
    """A sibling (key rfilename) or a tree item (key path) of file name in dir d
    (expect_dir's: the real files' copies and the views' expected bytes)."""
    p = os.path.join(d, name)
    size = os.path.getsize(p)
    if it.get("size") != size:
        fail("%s: size %r, want %d" % (name, it.get("size"), size))
    oid = it.get("blobId" if key == "rfilename" else "oid")
    if not isinstance(oid, str) or len(oid) != 64:
        fail("%s: oid %r is not 64 hex digits" % (name, oid))
    lfs = it.get("lfs")
    if name in views(d):  # its digest is made from its file's (or ETag), not its bytes' sha256
        if lfs is not None:
            fail("%s: a view (or a store's file) claims an lfs sha256 %r" % (name, lfs))
        if oid == sha(p):
            fail("%s: its oid is the sha256 of its bytes, which are never hashed" % name)
    elif lfs is not None:  # only when the digest is the bytes' sha256
        want = sha(p)
        got = lfs.get("sha256" if key == "rfilename" else "oid")
        if got != want or oid != want or lfs.get("size") != size:
            fail("%s: lfs %r, want sha256 %s size %d" % (name, lfs, want, size))
        if not isinstance(lfs.get("pointerSize"), int):
            fail("%s: lfs without pointerSize" % name)
    elif not name.endswith(".zt"):
        fail("%s: no lfs block, but only zTensor files have a digest that is not sha256" % name)
    if "xetHash" in it:
        fail("%s: xetHash given" % name)


def cmd_info(doc, repo, d, *files):
    j = load(doc)
    if j.get("id") != repo or j.get("modelId") != repo:
        fail("id %r, want %r" % (j.get("id"), repo))
    sha_ = j.get("sha")
    if not (isinstance(sha_, str) and len(sha_) == 40 and all(c in "0123456789abcdef" for c in sha_)):
        fail("sha %r is not a 40-hex commit" % sha_)
    if j.get("private") is not False:
        fail("private is not false")
    if not isinstance(j.get("lastModified"), str):
        fail("no lastModified")
    sib = j.get("siblings")
    names = [s.get("rfilename") for s in sib]
    if names != list(files):
        fail("siblings %r, want %r" % (names, list(files)))
    for s in sib:
        check_file_item(s, d, s["rfilename"], "rfilename")


def cmd_tree(doc, d, *files):
    j = load(doc)
    got_files = [it["path"] for it in j if it.get("type") == "file"]
    if sorted(got_files) != sorted(files):
        fail("tree files %r, want %r" % (got_files, list(files)))
    dirs = sorted({f.rsplit("/", 1)[0] for f in files if "/" in f})
    got_dirs = sorted(it["path"] for it in j if it.get("type") == "directory")
    if got_dirs != dirs:
        fail("tree directories %r, want %r" % (got_dirs, dirs))
    for it in j:
        if it["type"] == "file":
            check_file_item(it, d, it["path"], "path")
        elif not isinstance(it.get("oid"), str):
            fail("directory %s without oid" % it["path"])


def cmd_field(doc, *keys):
    v = load(doc)
    for k in keys:
        v = v[int(k)] if isinstance(v, list) else v.get(k, "MISSING")
    print(v if isinstance(v, str) else json.dumps(v))


def cmd_sibling_sha(doc, name):
    for it in load(doc).get("siblings", []):
        if it.get("rfilename") == name:
            print((it.get("lfs") or {}).get("sha256", "NO-LFS"))
            return
    fail("no sibling %s" % name)


def cmd_paths(doc):
    for it in load(doc):
        print("%s %s" % (it["type"], it["path"]))


def cmd_errjson(doc):
    j = load(doc)
    if not (isinstance(j, dict) and isinstance(j.get("error"), str) and j["error"]):
        fail("not {\"error\": \"...\"}: %r" % j)


def cmd_st(path, *pairs):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    for pair in pairs:
        raw, name = pair.split(":", 1)
        t = header.get(name)
        if t is None:
            fail("%s: no tensor %s" % (path, name))
        a, b = t["data_offsets"]
        with open(raw, "rb") as f:
            want = f.read()
        if data[base + a:base + b] != want:
            fail("%s: tensor %s differs from %s" % (path, name, raw))


def main():
    cmds = {"info": cmd_info, "tree": cmd_tree, "field": cmd_field, "paths": cmd_paths,
            "errjson": cmd_errjson, "sibling_sha": cmd_sibling_sha, "st": cmd_st, "sha256": lambda p: print(sha(p))}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        fail(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
