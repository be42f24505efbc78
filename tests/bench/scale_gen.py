#!/usr/bin/python3
"""Fill DIR with N small valid .zt files, each with its own bytes and sha256.

   scale_gen.py TEMPLATE.zt DIR N [PREFIX]

TEMPLATE is a one-object zTensor 1.2 file written by `zt pack` from 64 raw
bytes with a sha256 digest. Each copy gets 64 other bytes (the sha256 of its
index, twice) and the manifest's hex digest of them, at the same offsets: the
file keeps its length and stays valid, and no two files share a component, as
in a real root (identical components would all claim one digest). Files are
real copies, not hard links: the catalog keys entries by inode. Names are
PREFIX-000000.zt ... (PREFIX "f" unless given). Debian's /usr/bin/python3 or
any python3: stdlib only.
"""
import hashlib
import os
import sys


def main():
    template, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    prefix = sys.argv[4] if len(sys.argv) > 4 else "f"
    t = open(template, "rb").read()
    data_at = 64  # the one component's stored bytes (zt pack aligns them to 64)
    old = t[data_at:data_at + 64]
    hex_at = t.find(hashlib.sha256(old).hexdigest().encode())
    if hex_at < 0:
        sys.exit("scale_gen: the template's digest is not where it was expected")
    os.makedirs(out, exist_ok=True)
    buf = bytearray(t)
    for i in range(n):
        d = hashlib.sha256(b"%d" % i).digest() * 2
        buf[data_at:data_at + 64] = d
        buf[hex_at:hex_at + 64] = hashlib.sha256(d).hexdigest().encode()
        with open(os.path.join(out, "%s-%06d.zt" % (prefix, i)), "wb") as f:
            f.write(buf)


if __name__ == "__main__":
    main()
