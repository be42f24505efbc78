#!/usr/bin/python3
"""t_python.py ZTENSORD ZT GEN_CORPUS WORKDIR: docs/PYTHON.md's recipes, run as written.

Runs with Debian's /usr/bin/python3 and python3-numpy. Generates the 1.2 corpus
(gen_corpus, an encoder independent of libztensor), serves its dtype_*.zt files, the
demo files (tests/demo/make-demo.sh) and `zt convert` safetensors copies of the dtype
files with a real ztensord on 127.0.0.1 (ephemeral port), then:

- the first ```python block of PYTHON.md must import only the standard library and
  numpy, and define load_tensor; every python block not marked
  `_Doc test: skipped (...)._` is run in order in one namespace (localhost:7070
  replaced by the daemon's address), and a block followed by "prints" and a plain
  block must print exactly that;
- for every dtype of the corpus and its objects t (3x5x7, raw), vector (129, zstd)
  and scalar (0-dimensional): load_tensor returns the numpy dtype of an independent
  map, the shape, and exactly the bytes the generator wrote (its .expect files); the
  values equal the bytes read with struct (little-endian), bf16 both as uint16 bits
  and as float32 values;
- load_rows (the range recipe) returns exactly the rows' bytes, and the daemon
  answered 206 for it (its /metrics);
- parse_safetensors reads every tensor of the converted files byte-exact, and of
  the /v1/files/F/safetensors view when the daemon has that route (else SKIP).

Prints "ok"/"FAIL"/"SKIP" lines and "N passed, M failed"; exits 1 on a failure.
"""
import contextlib
import glob
import io
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(REPO, "docs", "PYTHON.md")
SKIP_RE = re.compile(r"^_Doc test: skipped \((.+)\)\._\s*$")

# The test's own map, independent of the doc's: numpy scalar type and struct code.
DTYPES = {
    "f64": (np.float64, "d"), "f32": (np.float32, "f"), "f16": (np.float16, "e"),
    "bf16": (np.uint16, "H"), "i64": (np.int64, "q"), "i32": (np.int32, "i"),
    "i16": (np.int16, "h"), "i8": (np.int8, "b"), "u64": (np.uint64, "Q"),
    "u32": (np.uint32, "I"), "u16": (np.uint16, "H"), "u8": (np.uint8, "B"),
    "bool": (np.bool_, "?"),
}
SHAPES = {"t": (3, 5, 7), "vector": (129,), "scalar": ()}

passed = failed = 0


def ok(name):
    global passed
    passed += 1
    print(f"ok - {name}")


def bad(name, why):
    global failed
    failed += 1
    print(f"FAIL - {name}: {why}")


def check(name, cond, why=""):
    if cond:
        ok(name)
    else:
        bad(name, why)
    return cond


def same_value(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def python_blocks(path):
    """[(line, code, skipped reason or None, documented output or None)]"""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, skip, i = [], None, 0
    pending = None  # the last python block, waiting for a "prints" block
    prints = False
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = "\n".join(lines[i + 1:j])
            if m.group(1) == "python":
                pending = [i + 1, body, skip, None]
                blocks.append(pending)
            elif m.group(1) == "" and prints and pending is not None:
                pending[3] = body
            if m.group(1) != "python":
                pending = None
            skip, prints, i = None, False, j + 1
            continue
        s = SKIP_RE.match(lines[i])
        if s:
            skip = s.group(1)
        elif lines[i].strip() == "prints":
            prints = True
        elif lines[i].strip():
            skip = None if not lines[i].startswith("<!--") else skip
        i += 1
    return blocks


def metric(port, route, code):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
    m = re.search(r'^ztensord_requests_total\{route="%s",code="%s"\} (\d+)' % (route, code), text, re.M)
    return int(m.group(1)) if m else 0


def start_daemon(exe, root, work):
    err = open(os.path.join(work, "daemon.err"), "wb")
    proc = subprocess.Popen([exe, "--root", root, "--listen", "127.0.0.1:0", "--access-log", "off"],
                            stdout=subprocess.DEVNULL, stderr=err)
    port = None
    for _ in range(600):
        m = re.findall(rb"listening on http://127\.0\.0\.1:(\d+)", open(err.name, "rb").read())
        if m:
            port = int(m[-1])
            break
        if proc.poll() is not None:
            raise RuntimeError("ztensord exited: " + open(err.name, "rb").read()[-600:].decode())
        time.sleep(0.1)
    if port is None:
        proc.kill()
        raise RuntimeError("ztensord printed no 'listening on' line")
    for _ in range(600):
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5).status == 200:
                return proc, port
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("ztensord not ready")


def prepare(zt, gen, work):
    corpus = os.path.join(work, "corpus")
    subprocess.run([gen, corpus], check=True, stdout=subprocess.DEVNULL)
    root = os.path.join(work, "root")
    subprocess.run([os.path.join(REPO, "tests", "demo", "make-demo.sh"), zt, root], check=True,
                   stdout=subprocess.DEVNULL)
    expect = {}  # (dtype, object) -> bytes the generator wrote
    for dt in DTYPES:
        name = f"dtype_{dt}"
        shutil.copy(os.path.join(corpus, "accept", name + ".zt"), root)
        for line in open(os.path.join(corpus, "accept", name + ".expect")):
            obj, comp, rel = line.rstrip("\n").split("\t")
            assert comp == "data"
            expect[(dt, obj)] = open(os.path.join(corpus, "accept", rel), "rb").read()
        subprocess.run([zt, "convert", os.path.join(root, name + ".zt"), "-o",
                        os.path.join(root, f"st_{dt}.safetensors")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return root, expect


def run_blocks(ns, port):
    blocks = python_blocks(DOC)
    if not check("PYTHON.md has python blocks", blocks, "none found"):
        return
    first = blocks[0][1]
    imports = [a or b for a, b in re.findall(r"^\s*(?:import\s+([\w.]+)|from\s+([\w.]+)\s+import\b)", first, re.M)]
    check("first python block imports the standard library and numpy only",
          imports and all(m.split(".")[0] in ("urllib", "json", "numpy", "struct", "math")
                          for m in imports), f"imports {imports}")
    check("first python block defines load_tensor", re.search(r"^def load_tensor\(component_url", first, re.M),
          "no def load_tensor(component_url")
    for line, code, skip, want in blocks:
        name = f"PYTHON.md:{line}"
        if skip:
            print(f"SKIP - {name}: {skip}")
            continue
        code = re.sub(r"(127\.0\.0\.1|localhost):7070\b", f"127.0.0.1:{port}", code)
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, name, "exec"), ns)
        except Exception as e:  # noqa: BLE001 (any failure of a recipe is reported)
            bad(name, f"{type(e).__name__}: {e}")
            continue
        if want is not None:
            check(f"{name} prints what is documented", out.getvalue().rstrip("\n") == want.rstrip("\n"),
                  f"got {out.getvalue()!r}, documented {want!r}")
        else:
            ok(name)


def check_tensor(name, a, dt, obj, raw):
    npt, code = DTYPES[dt]
    check(f"{name}: dtype", a.dtype == np.dtype(npt), f"{a.dtype}, want {np.dtype(npt)}")
    check(f"{name}: shape", a.shape == SHAPES[obj], f"{a.shape}, want {SHAPES[obj]}")
    got = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    check(f"{name}: bytes", got == raw, f"{len(got)} bytes differ from the {len(raw)} stored")
    vals = struct.unpack("<%d%s" % (len(raw) // struct.calcsize(code), code), raw)
    flat = a.ravel().tolist()
    check(f"{name}: values", len(flat) == len(vals) and all(map(same_value, flat, vals)),
          "values differ from struct's little-endian reading")


def check_dtypes(ns, port, expect):
    for (dt, obj), raw in sorted(expect.items()):
        url = f"http://127.0.0.1:{port}/v1/files/dtype_{dt}.zt/objects/{obj}/data"
        name = f"load_tensor {dt} {obj}"
        try:
            a = ns["load_tensor"](url, bf16="bits")
            check_tensor(name, a, dt, obj, raw)
            if dt == "bf16":
                f = ns["load_tensor"](url)
                bits = struct.unpack("<%dH" % (len(raw) // 2), raw)
                want = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
                check(f"{name}: float32 values", f.dtype == np.float32 and f.shape == SHAPES[obj] and
                      all(map(same_value, f.ravel().tolist(), want)) and
                      f.view(np.uint32).ravel().tolist() == [b << 16 for b in bits],
                      f"{f.dtype} {f.shape}: not the bf16 bits widened")
        except Exception as e:  # noqa: BLE001
            bad(name, f"{type(e).__name__}: {e}")


def check_rows(ns, port, expect):
    before = metric(port, "component", 206)
    n = 0
    for dt in DTYPES:
        for obj, start, stop in (("t", 1, 3), ("vector", 10, 100), ("t", 2, 99), ("t", -2, None), ("t", 2, 2)):
            url = f"http://127.0.0.1:{port}/v1/files/dtype_{dt}.zt/objects/{obj}/data"
            name = f"load_rows {dt} {obj}[{start}:{stop}]"
            npt, _ = DTYPES[dt]
            full = np.frombuffer(expect[(dt, obj)], dtype=np.dtype(npt).newbyteorder("<"))
            want = full.reshape(SHAPES[obj])[start:stop]
            try:
                a = ns["load_rows"](url, start, stop, bf16="bits")
                check(name, a.dtype == np.dtype(npt) and a.shape == want.shape and
                      a.tobytes() == want.tobytes(), f"{a.dtype} {a.shape}, want {want.shape}, or bytes differ")
                n += 1 if want.size else 0
            except Exception as e:  # noqa: BLE001
                bad(name, f"{type(e).__name__}: {e}")
    after = metric(port, "component", 206)
    check("load_rows: each non-empty slice was one 206 range answer", after - before == n,
          f"{after - before} answers 206, want {n}")


def check_safetensors(ns, port, expect):
    view = True
    for dt in DTYPES:
        urls = [(f"st_{dt}.safetensors/raw", f"http://127.0.0.1:{port}/v1/files/st_{dt}.safetensors/raw")]
        vurl = f"http://127.0.0.1:{port}/v1/files/dtype_{dt}.zt/safetensors"
        try:
            urllib.request.urlopen(urllib.request.Request(vurl, method="HEAD"), timeout=30)
            urls.append((f"dtype_{dt}.zt/safetensors", vurl))
        except urllib.error.HTTPError as e:
            if e.code != 404:
                bad(f"safetensors view of dtype_{dt}.zt", f"HTTP {e.code}")
            view = False
        for what, url in urls:
            try:
                tensors, meta = ns["load_safetensors"](url, bf16="bits")
                check(f"load_safetensors {what}: tensors", sorted(tensors) == sorted(SHAPES), sorted(tensors))
                for obj in SHAPES:
                    check_tensor(f"load_safetensors {what} {obj}", tensors[obj], dt, obj, expect[(dt, obj)])
            except Exception as e:  # noqa: BLE001
                bad(f"load_safetensors {what}", f"{type(e).__name__}: {e}")
    if not view:
        print("SKIP - the /v1/files/F/safetensors view: this ztensord answers 404 (route not built yet)")


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: t_python.py ZTENSORD ZT GEN_CORPUS WORKDIR")
    exe, zt, gen, work = sys.argv[1:]
    work = os.path.join(work, "python")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # The claim the doc warns about: numpy reads zTensor's names otherwise.
    check("numpy reads f16 as float128, i8 as int64, u8 as uint64",
          np.dtype("f16").itemsize == 16 and np.dtype("i8") == np.int64 and np.dtype("u8") == np.uint64)
    root, expect = prepare(zt, gen, work)
    proc, port = start_daemon(exe, root, work)
    try:
        ns = {"__name__": "pythondoc"}
        run_blocks(ns, port)
        if all(k in ns for k in ("load_tensor", "load_rows", "load_safetensors")):
            check_dtypes(ns, port, expect)
            check_rows(ns, port, expect)
            check_safetensors(ns, port, expect)
        else:
            bad("the doc defines load_tensor, load_rows, load_safetensors", sorted(ns))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "timeout"
        check("ztensord exits 0 on SIGTERM", rc == 0, f"exit status {rc}")
    print(f"{passed} passed, {failed} failed")
    if failed == 0:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
