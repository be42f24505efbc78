"""No two modules of server/ include each other's headers in a circle.

    check_includes.py SERVER_DIR [--graph]

A module is a .c file and its .h (server/store/catalog.c and .h are "store/catalog"). An edge
A -> B means a file of A includes B's header. Prints each circle (a group of modules that reach
each other) and exits 1 if there is one; with --graph, prints the edges first, a line per module.
"""
import os
import re
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(top):
    mods = {}
    for dp, _, fs in os.walk(top):
        for f in fs:
            if f.endswith((".c", ".h")):
                path = os.path.join(dp, f)
                name = os.path.relpath(path, top)[:-2]
                mods.setdefault(name, []).append(path)
    return mods


def graph(top):
    mods = modules(top)
    g = {m: set() for m in mods}
    for m, paths in mods.items():
        for p in paths:
            for inc in INC.findall(open(p, encoding="utf-8").read()):
                b = inc[:-2] if inc.endswith(".h") else inc
                if b in mods and b != m:
                    g[m].add(b)
    return g


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


if __name__ == "__main__":
    g = graph(sys.argv[1])
    if "--graph" in sys.argv:
        for m in sorted(g):
            print("%s -> %s" % (m, " ".join(sorted(g[m])) or "-"))
    found = circles(g)
    for c in found:
        print("circle: " + " <-> ".join(c))
    sys.exit(1 if found else 0)
