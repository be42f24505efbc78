"""Damage the zstd frame of a stored component in place, for t_decode.sh.

usage: zstdedit.py FILE OFFSET LENGTH ACTION ARG
  FILE OFFSET LENGTH   the component's bytes (from `zt info --json`)
  reserved K           give the K-th block (from 0) the reserved block type
  last K               set the last-block flag on the K-th block: the frame
                       ends early and the rest of the component is no frame
  window LOG           make the frame header ask for a 2^LOG-byte window
Only the first frame is read; it must have a window descriptor (the writer's
frames do). Prints the file offset it changed."""
import sys


def block_headers(d, off, length):
    """File offsets of the first frame's block headers."""
    assert d[off:off + 4] == b"\x28\xb5\x2f\xfd", "not a zstd frame"
    fhd = d[off + 4]
    single, dict_flag, fcs_flag = (fhd >> 5) & 1, fhd & 3, fhd >> 6
    q = off + 5 + (0 if single else 1) + [0, 1, 2, 4][dict_flag]
    q += [1 if single else 0, 2, 4, 8][fcs_flag]
    out = []
    while q + 3 <= off + length:
        h = d[q] | d[q + 1] << 8 | d[q + 2] << 16
        out.append(q)
        q += 3 + (1 if (h >> 1) & 3 == 1 else h >> 3)
        if h & 1:
            break
    return out


def main():
    path, off, length, action, arg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    d = bytearray(open(path, "rb").read())
    if action == "window":
        assert not (d[off + 4] >> 5) & 1, "single-segment frame: no window descriptor"
        at = off + 5
        d[at] = (arg - 10) << 3
    else:
        blocks = block_headers(d, off, length)
        assert arg + 1 < len(blocks), "only %d blocks" % len(blocks)
        at = blocks[arg]
        d[at] |= 0b110 if action == "reserved" else 1
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(d[at:at + 1])
    print(at)


main()
