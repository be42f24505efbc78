#!/usr/bin/env python3
"""An independent reader of zTensor 1.2 files (its own CBOR decoder, no
libztensor), used by test_convert.sh to check that what `zt convert` writes
holds every tensor of the source byte for byte.

  zt_read.py check-st  SRC.safetensors... OUT.zt
  zt_read.py check-alt SRC.alt OUT.zt

zstd components are decoded with the zstd command-line tool.
"""
import hashlib
import json
import struct
import subprocess
import sys


def cbor(buf, i=0):
    """Decodes one CBOR item at buf[i:]; returns (value, next index)."""
    ib = buf[i]
    major, info = ib >> 5, ib & 31
    i += 1
    if info < 24:
        n = info
    elif info in (24, 25, 26, 27):
        w = 1 << (info - 24)
        n = int.from_bytes(buf[i:i + w], "big")
        i += w
    else:
        raise ValueError("indefinite or reserved CBOR head at %d" % (i - 1))
    if major == 0:
        return n, i
    if major == 1:
        return -1 - n, i
    if major in (2, 3):
        s = bytes(buf[i:i + n])
        return (s if major == 2 else s.decode("utf-8")), i + n
    if major == 4:
        out = []
        for _ in range(n):
            v, i = cbor(buf, i)
            out.append(v)
        return out, i
    if major == 5:
        out = {}
        for _ in range(n):
            k, i = cbor(buf, i)
            v, i = cbor(buf, i)
            assert k not in out, "duplicate key %r" % (k,)
            out[k] = v
        return out, i
    if major == 6:
        return cbor(buf, i)
    if major == 7:
        if info == 20:
            return False, i
        if info == 21:
            return True, i
        if info == 22:
            return None, i
        if info == 27:
            return struct.unpack(">d", struct.pack(">Q", n))[0], i
        if info == 26:
            return struct.unpack(">f", struct.pack(">I", n))[0], i
    raise ValueError("unsupported CBOR item %#x" % ib)


class ZtFile:
    def __init__(self, path):
        self.data = open(path, "rb").read()
        d = self.data
        assert d[:8] == b"ZTEN1000", "header magic"
        assert d[-8:] == b"ZTEN1000", "footer magic"
        size = struct.unpack("<Q", d[-16:-8])[0]
        mstart = len(d) - 16 - size
        self.manifest, end = cbor(d, mstart)
        assert end == len(d) - 16, "manifest size"
        assert self.manifest["version"] == "1.2.0"

    def component(self, obj, role):
        c = self.manifest["objects"][obj]["components"][role]
        off, length = c["offset"], c["length"]
        assert off % 64 == 0, "alignment of %s/%s" % (obj, role)
        stored = self.data[off:off + length]
        assert len(stored) == length
        dig = c.get("digest")
        if dig and dig.startswith("sha256:"):
            assert hashlib.sha256(stored).hexdigest() == dig[7:].lower(), "digest %s" % obj
        if c.get("encoding", "raw") == "zstd":
            stored = subprocess.run(["zstd", "-d", "-c", "-q"], input=stored,
                                    stdout=subprocess.PIPE, check=True).stdout
            assert len(stored) == c["uncompressed_length"]
        return stored


def find(zt, tensor):
    """(object, role) holding a source tensor, via source_tensors for groups."""
    objs = zt.manifest["objects"]
    if tensor in objs:
        o = objs[tensor]
        return tensor, "data" if "data" in o["components"] else "packed_weight"
    for name, o in objs.items():
        src = (o.get("attributes") or {}).get("source_tensors") or {}
        for role, t in src.items():
            if t == tensor:
                return name, role
    raise KeyError("tensor %r is not in the .zt file" % tensor)


def check_st(srcs, zt):
    count = 0
    for src in srcs:
        d = open(src, "rb").read()
        n = struct.unpack("<Q", d[:8])[0]
        hdr = json.loads(d[8:8 + n])
        meta = hdr.pop("__metadata__", {})
        for k, v in meta.items():
            assert zt.manifest.get("attributes", {}).get(k) == v, "attribute %s" % k
        for name, t in hdr.items():
            b, e = t["data_offsets"]
            want = d[8 + n + b:8 + n + e]
            obj, role = find(zt, name)
            assert zt.component(obj, role) == want, "bytes of %s" % name
            count += 1
    return count


def check_alt(src, zt):
    d = open(src, "rb").read()
    pos = 32
    pos += 16
    n = struct.unpack_from("<i", d, pos)[0]
    model_type = d[pos + 4:pos + 4 + n].decode()
    assert zt.manifest["attributes"]["model_type"] == model_type
    pos = (pos + 4 + n + 44 + 31) // 32 * 32  # 9 int32 + 2 float32 after the text
    pos += 16 + 8
    vocab = struct.unpack_from("<i", d, pos)[0]
    pos += 20
    start = pos
    for _ in range(vocab):
        pos += 4 + struct.unpack_from("<i", d, pos)[0]
    assert zt.component("tokenizer.vocab", "data") == d[start:pos], "token bytes"
    pos = (pos + 31) // 32 * 32 + 16
    count = struct.unpack_from("<q", d, pos)[0]
    pos += 16
    for _ in range(count):
        nd, nl, dt = struct.unpack_from("<iii", d, pos)
        dims = struct.unpack_from("<%di" % nd, d, pos + 12)
        pos += 12 + 4 * nd
        name = d[pos:pos + nl].decode()
        pos += nl
        size = [4, 2, 1][dt]
        for x in dims:
            size *= x
        assert zt.component(name, "data") == d[pos:pos + size], "bytes of %s" % name
        assert zt.manifest["objects"][name]["shape"] == list(dims)
        pos += size
    return count + 1


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "check-st":
        n = check_st(sys.argv[2:-1], ZtFile(sys.argv[-1]))
    elif len(sys.argv) == 4 and sys.argv[1] == "check-alt":
        n = check_alt(sys.argv[2], ZtFile(sys.argv[3]))
    else:
        sys.exit(__doc__)
    print("zt_read.py: %d tensors byte-exact" % n)


if __name__ == "__main__":
    main()
