#!/usr/bin/python3
"""An independent loader of a sharded safetensors model, as transformers and
vLLM read one: DIR/model.safetensors.index.json names, for every tensor, the
file of DIR that holds it. Written from the index's published shape
({"metadata": {"total_size": N}, "weight_map": {tensor: file}}) and the
safetensors format (st_read.py's reader), not from libztensor.

  st_index_load.py DIR ZT SRC...

Checks, each failure a message and exit status 1:
  - the index is a JSON object ending with a newline, with metadata.total_size
    an integer and weight_map an object of strings;
  - every file weight_map names is a plain name (no directory) present in DIR
    and a well-formed safetensors file (st_read.read_safetensors);
  - every tensor of those files is in weight_map exactly once, mapped to the
    file that holds it, and weight_map names no other tensor;
  - total_size is the sum of the tensors' bytes;
  - the tensors are those of the SRC files (zTensor files, read as st_read.py
    reads them), each equal to its source tensor, byte for byte.
Prints the number of tensors and files loaded.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_read  # noqa: E402


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    d, zt, srcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    text = open(os.path.join(d, "model.safetensors.index.json"), "rb").read()
    st_read.need(text.endswith(b"\n"), "the index does not end with a newline")
    index = json.loads(text)
    total = index["metadata"]["total_size"]
    wmap = index["weight_map"]
    st_read.need(isinstance(total, int), "total_size is not an integer")
    st_read.need(isinstance(wmap, dict) and all(isinstance(v, str) for v in wmap.values()),
                 "weight_map is not an object of strings")
    loaded, size = {}, 0
    for f in sorted(set(wmap.values())):
        st_read.need("/" not in f and os.path.isfile(os.path.join(d, f)), "%r is not in DIR" % f)
        _, tensors = st_read.read_safetensors(os.path.join(d, f))
        for name, t in tensors.items():
            st_read.need(name not in loaded, "%r is in two files" % name)
            st_read.need(wmap.get(name) == f, "%r is in %r, the index says %r" %
                         (name, f, wmap.get(name)))
            loaded[name] = t
            size += len(t[2])
    st_read.need(sorted(loaded) == sorted(wmap), "weight_map names tensors no file holds: %r" %
                 sorted(set(wmap) - set(loaded))[:8])
    st_read.need(size == total, "total_size %d, the tensors have %d bytes" % (total, size))
    want = {}
    for src in srcs:
        want.update(st_read.source_tensors(zt, src))
    st_read.need(sorted(want) == sorted(loaded), "tensors %r, the sources have %r" %
                 (sorted(loaded)[:8], sorted(want)[:8]))
    for name, (dtype, shape, raw) in loaded.items():
        ref = st_read.stored_bytes(want[name][1], want[name][0])
        st_read.need(ref == raw, "%r differs from its source" % name)
        st_read.as_array(dtype, shape, raw)  # numpy reads it in its dtype and shape
    print("%d tensors in %d files" % (len(loaded), len(set(wmap.values()))))


if __name__ == "__main__":
    try:
        main()
    except st_read.Bad as e:
        sys.exit("st_index_load.py: %s" % e)
