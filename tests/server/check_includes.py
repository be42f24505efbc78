"""The structure of server/: folder ranks, no circles, no libcurl.

    check_includes.py SERVER_DIR [--objects BUILD_SERVER_DIR] [--graph]
    check_includes.py --self-test     (the checks fail on small trees made to break them)

A module is a .c file and its .h (server/store/catalog.c and .h are "store/catalog"). An edge
A -> B means a file of A includes B's header, or (with --objects, read from the built objects
with nm) A's object uses a symbol that B's object defines. Checked:
  - ranks: a module may use its own folder and the folders ranked below it, never one above:
    core < store < upstream < http < fronts (handlers/) < main.c. Fronts are siblings: none
    uses another.
  - circles: no group of modules reaches each other, by includes or by calls;
  - no file under server/ includes libcurl (the origins live in lib/remote).
Exceptions are listed in ALLOW, as (from, to) module pairs with the reason; it is empty.
Prints each failure and exits 1 if there is one; with --graph, prints the edges first.
"""
import os
import re
import subprocess
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
CURL = re.compile(r'^\s*#\s*include\s+<curl/', re.M)

# Folder -> rank. A folder not listed here fails the check until it is given a rank.
RANKS = {"core": 1, "store": 2, "upstream": 3, "http": 4, "handlers": 5, "s3": 5}
TOP = 6  # main.c

# (from, to): an edge that breaks a rank, allowed for the reason given. Keep it empty.
ALLOW = {}


def modules(top):
    mods = {}
    for dp, _, fs in os.walk(top):
        for f in fs:
            if f.endswith((".c", ".h")):
                path = os.path.join(dp, f)
                name = os.path.relpath(path, top)[:-2]
                mods.setdefault(name, []).append(path)
    return mods


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def graph(top):
    mods = modules(top)
    g = {m: set() for m in mods}
    for m, paths in mods.items():
        for p in paths:
            for inc in INC.findall(read(p)):
                b = inc[:-2] if inc.endswith(".h") else inc
                if b in mods and b != m:
                    g[m].add(b)
    return g


def call_graph(top, objdir):
    """Edges from the objects under OBJDIR (CMake's BUILD/server) whose source is still in TOP."""
    defs, uses = {}, {}
    for dp, _, fs in os.walk(objdir):
        if ".dir" not in dp:
            continue
        for f in fs:
            if not f.endswith(".c.o"):
                continue
            path = os.path.join(dp, f)
            src = path.split(".dir/", 1)[1][:-2]
            if not os.path.exists(os.path.join(top, src)):
                continue  # a stale object of a file since moved or removed
            m = src[:-2]
            out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
            for ln in out.splitlines():
                p = ln.split()
                if len(p) == 3 and p[1] in "TDBR":
                    defs[p[2]] = m
                elif len(p) == 2 and p[0] == "U":
                    uses.setdefault(m, set()).add(p[1])
    g = {m: set() for m in uses}
    for m in defs.values():
        g.setdefault(m, set())
    for a, syms in uses.items():
        for s in syms:
            b = defs.get(s)
            if b and b != a:
                g[a].add(b)
    return g


def folder(m):
    return m.split("/", 1)[0] if "/" in m else None


def rank(m):
    f = folder(m)
    return TOP if f is None else RANKS.get(f)


def rank_failures(g, what):
    out = []
    for a in sorted(g):
        for b in sorted(g[a]):
            ra, rb = rank(a), rank(b)
            if ra is None or rb is None:
                continue  # reported once by unranked()
            sideways = ra == rb and folder(a) != folder(b)
            if (rb > ra or sideways) and (a, b) not in ALLOW:
                out.append("%s up a rank: %s -> %s (%s %d -> %s %d)" % (
                    what, a, b, folder(a) or "main", ra, folder(b) or "main", rb))
    return out


def unranked(g):
    return ["no rank for folder %s/ (add it to RANKS)" % f
            for f in sorted({folder(m) for m in g if rank(m) is None})]


def curl_users(mods):
    return ["%s includes libcurl (server/ reaches origins through lib/remote)" % p
            for paths in mods.values() for p in sorted(paths) if CURL.search(read(p))]


def circles(g):
    idx, low, on, st, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        idx[v] = low[v] = n[0]
        n[0] += 1
        st.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in idx:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in idx:
            visit(v)
    return out


def self_test():
    """Each rule fails on a tree made to break it, and a tree that keeps them passes."""
    import contextlib
    import io
    import tempfile

    cases = {
        "clean": ({"core/a.c": '#include "core/b.h"', "core/b.h": "", "store/c.c": '#include "core/b.h"',
                   "main.c": '#include "store/c.h"', "store/c.h": ""}, 0),
        "upward include": ({"store/a.c": '#include "http/b.h"', "http/b.h": ""}, 1),
        "sideways between fronts": ({"handlers/a.c": '#include "s3/b.h"', "s3/b.h": ""}, 1),
        "unranked folder": ({"misc/a.c": ""}, 1),
        "libcurl": ({"upstream/a.c": "#include <curl/curl.h>"}, 1),
        "circle": ({"core/a.c": '#include "core/b.h"', "core/a.h": "",
                    "core/b.c": '#include "core/a.h"', "core/b.h": ""}, 1),
    }
    RANKS.setdefault("s3", RANKS["handlers"])
    bad = 0
    for name, (files, want) in cases.items():
        with tempfile.TemporaryDirectory() as top:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(top, rel)), exist_ok=True)
                with open(os.path.join(top, rel), "w", encoding="utf-8") as f:
                    f.write(text + "\n")
            with contextlib.redirect_stdout(io.StringIO()):
                got = main(["check_includes.py", top])
        print("%s %s: exit %d, want %d" % ("ok  " if got == want else "FAIL", name, got, want))
        bad += got != want
    return 1 if bad else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    top = argv[1]
    objdir = argv[argv.index("--objects") + 1] if "--objects" in argv else None
    graphs = [("include", graph(top))]
    if objdir:
        if not os.path.isdir(objdir):
            print("no objects under %s: build first" % objdir)
            return 1
        graphs.append(("call", call_graph(top, objdir)))
    fails = []
    for what, g in graphs:
        if "--graph" in argv:
            for m in sorted(g):
                print("%s %s -> %s" % (what, m, " ".join(sorted(g[m])) or "-"))
        fails += ["%s circle: %s" % (what, " <-> ".join(c)) for c in circles(g)]
        fails += rank_failures(g, what)
    fails += unranked(graphs[0][1])
    fails += curl_users(modules(top))
    for f in fails:
        print(f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
