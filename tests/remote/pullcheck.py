#!/usr/bin/python3
"""pullcheck.py: helpers of t_pull.sh (Python stdlib only).

    pullcheck.py refetch STATE INFO_JSON LOG FROM
        STATE is a .ztpull file as a kill left it; INFO_JSON is `zt info
        --json` of the file; LOG is relay.py's request log, whose lines after
        line FROM are the next pull's requests. Prints each component recorded
        verified in STATE whose bytes a later request asked for again (none
        expected), and exits 1 if there is one.
    pullcheck.py json FILE KEY      prints a top-level key of a JSON file
"""
import json
import re
import sys


def comps(info):
    """[(offset, length)] in manifest order, as pull.c numbers them."""
    out = []
    for o in info["objects"].values():
        for c in o["components"].values():
            out.append((c["offset"], c["length"]))
    return out


def refetch(state, info_path, log, start):
    cs = comps(json.load(open(info_path)))
    done = set()
    lines = open(state, "rb").read().split(b"\n")
    for ln in lines[5:-1]:  # the last one may be cut by the kill
        if ln.startswith(b"c "):
            i = int(ln[2:])
            if i < len(cs):
                done.add(i)
    bad = 0
    for n, ln in enumerate(open(log)):
        if n < start:
            continue
        m = re.search(r"\| bytes=(\d+)-(\d+) \|", ln)
        if not m:
            continue
        a, b = int(m.group(1)), int(m.group(2)) + 1
        for i in done:
            off, length = cs[i]
            if length and a < off + length and off < b:
                print("component %d [%d, %d) fetched again by %s" % (i, off, off + length,
                                                                     ln.strip()))
                bad = 1
    return bad


if __name__ == "__main__":
    if sys.argv[1] == "refetch":
        sys.exit(refetch(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
    if sys.argv[1] == "json":
        v = json.load(open(sys.argv[2]))[sys.argv[3]]
        print(json.dumps(v) if isinstance(v, (list, dict)) else v)
