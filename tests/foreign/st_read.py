#!/usr/bin/python3
"""An independent reader of safetensors files, written from the format's
description (shared/specs/safetensors.md), not from libztensor: it checks
that what `zt convert IN -o OUT.safetensors` writes is a well-formed
safetensors file whose every tensor equals IN's decoded tensor.

  st_read.py check ZT IN OUT.safetensors

The source tensors are IN's stored bytes, read here from IN (or from the v2
shard that holds them) at the offsets `ZT info --json IN` gives, and
decompressed with the zstd command-line tool when they are zstd; the expected
tensor names are IN's dense objects and the source tensors of its quantized
groups (Ollama triples). Checks, each failure a message and
exit status 1:
  - the 8-byte little-endian header size N, the header UTF-8 JSON object of
    N bytes, padded with spaces to a multiple of 8 (as Hugging Face writes);
  - __metadata__, when present, maps strings to strings;
  - each tensor has a known dtype, a shape of non-negative integers and
    data_offsets [begin, end] with end - begin = product(shape) x width;
  - the tensors tile the data region: sorted by begin they start at 0, follow
    each other without a gap or overlap, and the last ends at the end of the
    file;
  - the tensor names are those of IN (dense objects, and the source tensors of
    quantized groups);
  - each tensor, read with numpy in its dtype and shape, equals the source
    tensor read the same way (bit patterns for BF16 and F8, which numpy lacks).
Needs Debian's python3-numpy (run with /usr/bin/python3).
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

# dtype -> (bytes per element, numpy dtype to compare with)
DTYPES = {
    "F64": (8, "<f8"), "F32": (4, "<f4"), "F16": (2, "<f2"), "BF16": (2, "<u2"),
    "I64": (8, "<i8"), "I32": (4, "<i4"), "I16": (2, "<i2"), "I8": (1, "i1"),
    "U64": (8, "<u8"), "U32": (4, "<u4"), "U16": (2, "<u2"), "U8": (1, "u1"),
    "BOOL": (1, "u1"), "F8_E4M3": (1, "u1"), "F8_E5M2": (1, "u1"),
}


class Bad(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Bad(msg)


def read_safetensors(path):
    """(metadata or None, {name: (dtype, shape, bytes)}) of a file."""
    buf = open(path, "rb").read()
    need(len(buf) >= 8, "shorter than the 8-byte header size")
    (n,) = struct.unpack("<Q", buf[:8])
    need(8 + n <= len(buf), "header size %d past the end of the file" % n)
    need(n % 8 == 0, "header of %d bytes, not padded to a multiple of 8" % n)
    text = buf[8:8 + n].decode("utf-8")
    need(text.startswith("{"), "the header does not start with '{'")
    stripped = text.rstrip(" ")
    need(len(text) - len(stripped) < 8, "more than 7 bytes of padding")
    header = json.loads(stripped)
    need(isinstance(header, dict), "the header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is not None:
        need(isinstance(meta, dict), "__metadata__ is not an object")
        for k, v in meta.items():
            need(isinstance(v, str), "__metadata__[%r] is not a string" % k)
    data = buf[8 + n:]
    spans, tensors = [], {}
    for name, t in header.items():
        need(isinstance(t, dict), "%r is not an object" % name)
        dtype, shape, offs = t.get("dtype"), t.get("shape"), t.get("data_offsets")
        need(dtype in DTYPES, "%r: unknown dtype %r" % (name, dtype))
        need(isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape),
             "%r: bad shape %r" % (name, shape))
        need(isinstance(offs, list) and len(offs) == 2 and all(isinstance(o, int) for o in offs),
             "%r: bad data_offsets %r" % (name, offs))
        begin, end = offs
        need(0 <= begin <= end <= len(data), "%r: data_offsets %r outside the data" % (name, offs))
        count = 1
        for d in shape:
            count *= d
        need(end - begin == count * DTYPES[dtype][0],
             "%r: %d bytes for shape %r of %s" % (name, end - begin, shape, dtype))
        spans.append((begin, end, name))
        tensors[name] = (dtype, shape, data[begin:end])
    at = 0
    for begin, end, name in sorted(spans):
        need(begin == at, "%r starts at %d, not at %d (a gap or an overlap)" % (name, begin, at))
        at = end
    need(at == len(data), "the data region has %d bytes after the last tensor" % (len(data) - at))
    return meta, tensors


def source_tensors(zt, src):
    """{tensor name: (component JSON, file holding its stored bytes)} of the
    tensors IN holds: each dense object's "data", each quantized group's
    source tensors. Offsets and encodings come from `zt info --json`."""
    info = json.loads(subprocess.run([zt, "info", "--json", src], check=True,
                                     capture_output=True).stdout)
    where = os.path.dirname(src)
    shards = {k: os.path.join(where, v["file"]) for k, v in info.get("shards", {}).items()
              if v.get("file")}
    out = {}
    for name, o in info["objects"].items():
        comps = o["components"]
        if o["format"] == "quantized_group":
            pairs = [(t, r) for r, t in o["attributes"]["source_tensors"].items()]
        else:
            pairs = [(name, "data")]
        for tensor, role in pairs:
            c = comps[role]
            out[tensor] = (c, shards[c["shard"]] if "shard" in c else src)
    return out


_files = {}


def stored_bytes(path, c):
    if path not in _files:
        _files[path] = open(path, "rb").read()
    b = _files[path][c["offset"]:c["offset"] + c["length"]]
    need(len(b) == c["length"], "the source is shorter than its manifest says")
    if c["encoding"] == "raw":
        return b
    need(c["encoding"] in ("zstd", "zt.zstd-seekable/1"), "encoding %r" % c["encoding"])
    d = subprocess.run(["zstd", "-d", "-c", "-q"], input=b, stdout=subprocess.PIPE,
                       check=True).stdout
    need(len(d) == c.get("uncompressed_length", len(d)), "zstd gave %d bytes" % len(d))
    return d


def as_array(dtype, shape, raw):
    # numpy holds at most 32 dimensions: beyond, the tensor is compared flat
    # (its element count was checked against the shape already)
    return np.frombuffer(raw, dtype=DTYPES[dtype][1]).reshape(shape if len(shape) <= 32 else -1)


def check(zt, src, out):
    meta, tensors = read_safetensors(out)
    want = source_tensors(zt, src)
    need(sorted(want) == sorted(tensors),
         "tensors %r, the source has %r" % (sorted(tensors)[:8], sorted(want)[:8]))
    for name, (dtype, shape, raw) in tensors.items():
        ref = stored_bytes(want[name][1], want[name][0])
        need(len(ref) == len(raw), "%r: %d bytes, the source has %d" % (name, len(raw), len(ref)))
        a, b = as_array(dtype, shape, raw), as_array(dtype, shape, ref)
        need(np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)),
             "%r differs from the source" % name)
    return len(tensors), meta


def main():
    if len(sys.argv) != 5 or sys.argv[1] != "check":
        sys.exit(__doc__)
    try:
        n, meta = check(*sys.argv[2:])
    except Bad as e:
        print("st_read.py: %s: %s" % (sys.argv[4], e), file=sys.stderr)
        sys.exit(1)
    print("%s: %d tensors%s" % (sys.argv[4], n, ", __metadata__" if meta else ""))


if __name__ == "__main__":
    main()
