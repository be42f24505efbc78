#!/usr/bin/python3
"""An independent safetensors model loader (numpy), written from
../shared/specs/safetensors.md and the index file transformers reads, not from
ztensord's code: it loads a model directory through model.safetensors.index.json
and compares every tensor with the raw bytes it was made from.

    st_model.py DIR NAME=DTYPE:SHAPE:RAWFILE...

DTYPE is the safetensors name (F32, BF16, I16, U8, ...), SHAPE like 300x1000.
Checks, per the spec: an 8-byte little-endian header size N, a UTF-8 JSON
object of N bytes, data at 8 + N; every tensor's dtype, shape and data_offsets
[start, end) inside the data region, end - start = prod(shape) * itemsize,
tensors contiguous from 0 to the end of the file with no overlap;
__metadata__ values strings. The index: "weight_map" names a file for every
tensor, each file holds exactly the tensors mapped to it, and
"metadata.total_size" is the sum of the tensors' bytes. Prints OK N, or the
first problem, and exits 1.
"""
import json
import os
import struct
import sys

import numpy as np

ITEM = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
        "U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8}
NP = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4",
      "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "u1", "U16": "<u2", "U32": "<u4",
      "U64": "<u8"}


def die(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read_file(path):
    """{name: (dtype, shape, numpy array)} of one safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        die("%s: shorter than the 8-byte header size" % path)
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        die("%s: header size %d past the end" % (path, n))
    hdr = json.loads(blob[8:8 + n].decode("utf-8"))
    if not isinstance(hdr, dict):
        die("%s: the header is not a JSON object" % path)
    data = memoryview(blob)[8 + n:]
    meta = hdr.pop("__metadata__", {})
    if not all(isinstance(v, str) for v in meta.values()):
        die("%s: a __metadata__ value is not a string" % path)
    spans, out = [], {}
    for name, t in hdr.items():
        dt, shape, (a, b) = t["dtype"], t["shape"], t["data_offsets"]
        if dt not in ITEM:
            die("%s: %s: unknown dtype %s" % (path, name, dt))
        count = 1
        for d in shape:
            count *= d
        if not 0 <= a <= b <= len(data) or b - a != count * ITEM[dt]:
            die("%s: %s: data_offsets %r do not fit %s%r" % (path, name, [a, b], dt, shape))
        spans.append((a, b))
        arr = np.frombuffer(data[a:b], dtype=NP[dt]).reshape(shape)
        out[name] = (dt, list(shape), arr)
    pos = 0
    for a, b in sorted(spans):
        if a != pos:
            die("%s: a gap or an overlap at data byte %d" % (path, a))
        pos = b
    if pos != len(data):
        die("%s: %d bytes after the last tensor" % (path, len(data) - pos))
    return out


def load_model(d):
    """{name: (dtype, shape, array)} of the model in directory d."""
    ix = os.path.join(d, "model.safetensors.index.json")
    if not os.path.exists(ix):
        files = [f for f in os.listdir(d) if f.endswith(".safetensors")]
        if len(files) != 1:
            die("%s: no index and %d safetensors files" % (d, len(files)))
        return read_file(os.path.join(d, files[0]))
    with open(ix) as f:
        index = json.load(f)
    wm = index["weight_map"]
    tensors, total = {}, 0
    for fname in sorted(set(wm.values())):
        if "/" in fname or fname.startswith("."):
            die("index: file name %r" % fname)
        got = read_file(os.path.join(d, fname))
        want = sorted(k for k, v in wm.items() if v == fname)
        if sorted(got) != want:
            die("index: %s holds %s, the weight_map says %s" % (fname, sorted(got), want))
        for k, v in got.items():
            total += v[2].nbytes
            tensors[k] = v
    if index["metadata"]["total_size"] != total:
        die("index: total_size %r, the tensors hold %d bytes" % (index["metadata"]["total_size"],
                                                                total))
    return tensors


def main():
    d, specs = sys.argv[1], sys.argv[2:]
    model = load_model(d)
    if sorted(model) != sorted(s.split("=", 1)[0] for s in specs):
        die("tensors %s, expected %s" % (sorted(model), [s.split("=", 1)[0] for s in specs]))
    for s in specs:
        name, rest = s.split("=", 1)
        dt, shape, raw = rest.split(":", 2)
        shape = [int(x) for x in shape.split("x")]
        with open(raw, "rb") as f:
            want = np.frombuffer(f.read(), dtype=NP[dt]).reshape(shape)
        got_dt, got_shape, got = model[name]
        if got_dt != dt or got_shape != shape:
            die("%s: %s%r, expected %s%r" % (name, got_dt, got_shape, dt, shape))
        if not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
            die("%s: values differ from %s" % (name, raw))
    print("OK %d" % len(model))


main()
