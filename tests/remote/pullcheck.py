#!/usr/bin/python3
"""pullcheck.py: helpers of t_pull.sh (Python stdlib only).

    pullcheck.py refetch STATE INFO_JSON LOG FROM
        STATE is a .ztpull file as a kill left it; INFO_JSON is `zt info
        --json` of the file; LOG is relay.py's request log, whose lines after
        line FROM are the next pull's requests. Prints each component recorded
        verified in STATE ("c" records), and each prefix of a component
        recorded on disk ("p" records: its first N bytes), whose bytes a later
        request asked for again (none expected), and exits 1 if there is one.
    pullcheck.py fetched INFO_JSON LOG FROM
        prints the bytes of components that the requests after line FROM of
        LOG asked for (ranges clipped to the components).
    pullcheck.py json FILE KEY      prints a key of the last line of FILE (zt
                                    pull --json's summary)
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
    done = {}  # component -> bytes from its start known to be on disk
    lines = open(state, "rb").read().split(b"\n")
    for ln in lines[5:-1]:  # the last one may be cut by the kill
        if ln.startswith(b"c "):
            i = int(ln[2:])
            if i < len(cs):
                done[i] = cs[i][1]
        elif ln.startswith(b"p "):
            i, k = (int(x) for x in ln[2:].split())
            if i < len(cs):
                done[i] = max(done.get(i, 0), min(k, cs[i][1]))
    bad = 0
    for a, b, ln in ranges(log, start):
        for i, length in done.items():
            off = cs[i][0]
            if length and a < off + length and off < b:
                print("component %d [%d, %d) fetched again by %s" % (i, off, off + length, ln))
                bad = 1
    return bad


def ranges(log, start):
    """(first, end, line) of each range request after line START of LOG."""
    for n, ln in enumerate(open(log)):
        if n < start:
            continue
        m = re.search(r"\| bytes=(\d+)-(\d+) \|", ln)
        if m:
            yield int(m.group(1)), int(m.group(2)) + 1, ln.strip()


def fetched(info_path, log, start):
    cs = comps(json.load(open(info_path)))
    total = 0
    for a, b, _ in ranges(log, start):
        for off, length in cs:
            total += max(0, min(b, off + length) - max(a, off))
    return total


if __name__ == "__main__":
    if sys.argv[1] == "refetch":
        sys.exit(refetch(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])))
    if sys.argv[1] == "fetched":
        print(fetched(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        sys.exit(0)
    if sys.argv[1] == "json":  # zt pull --json: its last line is the summary
        lines = [ln for ln in open(sys.argv[2]).read().splitlines() if ln.strip()]
        v = json.loads(lines[-1])[sys.argv[3]]
        print(json.dumps(v) if isinstance(v, (list, dict)) else v)
