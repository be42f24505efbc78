#!/usr/bin/python3
"""doctest.py ZTENSORD ZT WORKDIR DOC.md...: the docs' shell examples, run as written.

For each DOC.md (the list is given by tests/docs/CMakeLists.txt; a missing file is
skipped), in a fresh work directory:

- ```console blocks: every "$ " line (with its "\\" continuation lines, and the lines
  of a here-document it opens, up to its terminator) is a command; the lines after
  it, up to the next "$ " line or the end of the block, are its output. A command
  that begins with "export " or "unset " is also remembered: every later command of
  the document runs after it (as in one shell session). The command runs with bash in the work directory and its output (stdout and
  stderr, CR removed) must equal the documented output once what varies is masked:
  Date and Last-Modified values, X-Request-Id values, and 32-hex-digit tokens (file
  identity ETags, upload ids), which are learned: the first time a documented token
  meets a real one they are paired, and later commands and outputs use the real one.
- ```sh blocks: the block is one bash script (set -e); it must exit 0.
- Other blocks (```c, ```json, plain ```...) are not run.

Commands reach ztensord at the documented address: 127.0.0.1:7070 and localhost:7070
are replaced by the port of the test's daemon, an ephemeral loopback port; in an sh
block, each port a ztensord of the block listens on (--listen 127.0.0.1:P) gets a free
port of its own, and /tmp/ is the work directory's tmp/. `ztensord`, `zt`,
build/server/ztensord and build/cli/zt are the binaries under test.

Marks in the docs:
- A visible line `_Doc test: skipped (REASON)._` right before a block: not run, and
  reported as skipped with its file, line and reason.
- `<!-- doctest: daemon [fresh] FLAG... -->`: the examples that follow talk to the
  daemon started with these flags (after --root ROOT --listen 127.0.0.1:0
  --access-log off): the one already running with the same flags (its state kept),
  or a new one. ROOT is a copy of the demo directory (tests/demo/make-demo.sh); with
  `fresh`, every daemon is stopped and ROOT made again first. Each document starts
  with no daemon.
- `<!-- doctest: setup COMMAND -->`: a bash command run in the work directory (files
  an example needs and that the text describes). $ZT_SOURCE_DIR is the source tree
  (e.g. for the npm clients of tests/clients/node_modules).
- `<!-- doctest: mask REGEX -->`: in the next block, the matches of REGEX are masked
  in both outputs (what varies from run to run for a reason the text gives).
- `<!-- doctest: continue -->` before an sh block: it runs in the same bash process as
  the previous sh block (background jobs and variables carry over).

Prints one line per example and "N passed, M failed, K skipped"; exits 1 on a
failure. With --update, outputs that differ are rewritten in the docs (review the diff).
ZT_DOCTEST_KEEP=1 keeps the work directories (they are kept on a failure too).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SKIP_RE = re.compile(r"^_Doc test: skipped \((.+)\)\._\s*$")
DIRECTIVE_RE = re.compile(r"^<!-- doctest: (\w+)\s*(.*?)\s*-->\s*$")
HEX32 = re.compile(r"(?<![0-9a-fA-F])[0-9a-f]{32}(?![0-9a-fA-F])")
HEADER_MASKS = [
    (re.compile(r"^(Date|Last-Modified): .*$", re.M), r"\1: <DATE>"),
    (re.compile(r"^(X-Request-Id): .*$", re.M | re.I), r"\1: <ID>"),
]
CMD_TIMEOUT = 60
SCRIPT_TIMEOUT = 120


class Block:
    def __init__(self, path, line, lang, lines, marks):
        self.path, self.line, self.lang, self.lines = path, line, lang, lines
        self.skip = marks.get("skip")
        self.masks = marks.get("mask", [])
        self.directives = marks.get("directives", [])
        self.cont = marks.get("continue", False)


def parse(path):
    """The blocks of a Markdown file, each with the marks that precede it. Directives
    that follow the last block are returned as a trailing Block with lang None."""
    out = []
    marks = {"directives": []}
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^```(\S*)\s*$", ln)
        if m:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append(Block(path, i + 1, m.group(1), lines[i + 1:j], marks))
            marks = {"directives": []}
            i = j + 1
            continue
        s = SKIP_RE.match(ln)
        if s:
            marks["skip"] = s.group(1)
        d = DIRECTIVE_RE.match(ln)
        if d:
            kind, arg = d.group(1), d.group(2)
            if kind == "mask":
                marks.setdefault("mask", []).append(re.compile(arg, re.M))
            elif kind == "continue":
                marks["continue"] = True
            else:
                marks["directives"].append((kind, arg, i + 1))
        elif ln.strip() and not s and "skip" in marks and not ln.startswith("<!--"):
            # a skip mark applies to the block right after it (blank lines and
            # directives between are allowed), not to one further down
            del marks["skip"]
        i += 1
    if marks["directives"]:
        out.append(Block(path, len(lines), None, [], marks))
    return out


HEREDOC_RE = re.compile(r"<<(-?)\s*(['\"]?)(\w+)\2")


def command_end(L, i):
    """The index after the command that begins at L[i] (a "$ " line): its "\\"
    continuation lines, then the lines of a here-document it opens, up to and with its
    terminator line."""
    cmd = L[i]
    while cmd.endswith("\\") and i + 1 < len(L):
        i += 1
        cmd = L[i]
    i += 1
    hd = HEREDOC_RE.search(cmd)
    if hd:
        while i < len(L) and (L[i].lstrip("\t") if hd.group(1) else L[i]) != hd.group(3):
            i += 1
        i = min(i + 1, len(L))
    return i


def console_commands(block):
    """(line number, command, documented output lines) for each "$ " command."""
    cmds = []
    i = 0
    L = block.lines
    while i < len(L):
        if not L[i].startswith("$ "):
            i += 1
            continue
        start = i
        i = command_end(L, i)
        cmd = "\n".join(L[start:i])[2:]
        out = []
        while i < len(L) and not L[i].startswith("$ "):
            out.append(L[i])
            i += 1
        while out and not out[-1].strip():
            out.pop()
        cmds.append((block.line + 1 + start, cmd, out, (start, i)))
    return cmds


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Env:
    """The work directory of one document, its daemon, and what was learned."""

    def __init__(self, exe, zt, work):
        self.exe, self.zt, self.work = exe, zt, work
        self.root = os.path.join(work, "root")
        self.port = None
        self.proc = None
        self.daemons = {}  # flags -> (process, port)
        self.bad_exits = []
        self.learned = {}  # documented 32-hex token -> real one
        self.session = []  # the document's export/unset commands, run before each command
        os.makedirs(os.path.join(work, "bin"))
        os.makedirs(os.path.join(work, "build", "server"))
        os.makedirs(os.path.join(work, "build", "cli"))
        os.makedirs(os.path.join(work, "tmp"))
        for name, target in (("ztensord", exe), ("zt", zt)):
            os.symlink(target, os.path.join(work, "bin", name))
        os.symlink(exe, os.path.join(work, "build", "server", "ztensord"))
        os.symlink(zt, os.path.join(work, "build", "cli", "zt"))
        self.env = dict(os.environ, PATH=os.path.join(work, "bin") + ":" + os.environ.get("PATH", ""),
                        ROOT=self.root, LC_ALL="C.UTF-8", HOME=work, ZT_SOURCE_DIR=REPO)
        with open(os.path.join(work, ".curlrc"), "w") as f:  # the docs leave curl's meter out
            f.write("no-progress-meter\n")
        self.make_root()

    def make_root(self):
        shutil.rmtree(self.root, ignore_errors=True)
        subprocess.run([os.path.join(REPO, "tests", "demo", "make-demo.sh"), self.zt, self.root],
                       check=True, stdout=subprocess.DEVNULL)

    def start(self, flags, fresh):
        """Switch to the daemon started with FLAGS, starting it if there is none; with
        fresh, every daemon is stopped and the root made again first."""
        flags = " ".join(flags.split())
        if fresh:
            self.stop()
            self.make_root()
        if flags in self.daemons:
            self.proc, self.port = self.daemons[flags]
            return
        err = open(os.path.join(self.work, f"daemon{len(self.daemons)}.err"), "wb")
        args = [self.exe, "--root", self.root, "--listen", "127.0.0.1:0", "--access-log", "off"]
        args += subst_tmp(flags, self.work).split()
        proc = subprocess.Popen(args, cwd=self.work, stdout=subprocess.DEVNULL, stderr=err, env=self.env)
        port = None
        for _ in range(300):
            text = open(err.name, "rb").read()
            m = re.findall(rb"listening on http://127\.0\.0\.1:(\d+)", text)
            if m:
                port = int(m[-1])
                break
            if proc.poll() is not None:
                raise RuntimeError(f"ztensord {flags} exited: {text[-600:]!r}")
            time.sleep(0.1)
        else:
            proc.kill()
            raise RuntimeError(f"ztensord {flags}: no 'listening on' line")
        self.daemons[flags] = (proc, port)
        self.proc, self.port = proc, port
        for _ in range(300):  # ready, and every sha256 digest verified (the examples show it)
            r = subprocess.run(["curl", "-s", "--max-time", "5", f"http://127.0.0.1:{port}/metrics"],
                               stdout=subprocess.PIPE, text=True, check=False)
            if 'ztensord_digest_components{state="pending"} 0' in r.stdout and \
                    subprocess.run(["curl", "-sf", "-o", "/dev/null", f"http://127.0.0.1:{port}/readyz"],
                                   check=False).returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"ztensord {flags}: not ready with every digest verified in 30 s")

    def stop(self):
        """Stops every daemon; one that does not exit 0 after SIGTERM (a crash, a
        sanitizer report) is recorded in self.bad_exits."""
        for flags, (proc, _) in self.daemons.items():
            proc.send_signal(signal.SIGTERM)
            try:
                rc = proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                rc = "timeout"
            if rc != 0:
                self.bad_exits.append(f"ztensord {flags or '(no flags)'}: exit status {rc}")
        self.daemons = {}
        self.proc = None
        self.port = None

    def subst(self, text):
        if self.port:
            text = re.sub(r"(127\.0\.0\.1|localhost):7070\b", f"127.0.0.1:{self.port}", text)
        return HEX32.sub(lambda m: self.learned.get(m.group(0), m.group(0)), text)


def subst_tmp(text, work):
    return re.sub(r"(?<![\w.])/tmp/", os.path.join(work, "tmp") + "/", text)


def mask(text, extra):
    for rx, rep in HEADER_MASKS:
        text = rx.sub(rep, text)
    for rx in extra:
        text = rx.sub("<MASKED>", text)
    return text


def line_match(env, w, h, pairs):
    """Does documented line w match real line h, 32-hex tokens paired (into pairs)?"""
    if w == h:
        return True
    ws, hs = HEX32.split(w), HEX32.split(h)
    wt, ht = HEX32.findall(w), HEX32.findall(h)
    if ws != hs or len(wt) != len(ht):
        return False
    for a, b in zip(wt, ht):
        if pairs.setdefault(a, b) != b or env.learned.get(a, b) != b:
            return False
    return True


def seg_match(env, seg, have, at, pairs):
    trial = dict(pairs)
    if at + len(seg) > len(have):
        return None
    for k, w in enumerate(seg):
        if not line_match(env, w, have[at + k], trial):
            return None
    return trial


def compare(env, want_lines, got, extra_masks):
    """None when the output matches (learning 32-hex pairs), else a description. A
    documented line "..." stands for any number of lines (an elided part)."""
    want = mask(env.subst("\n".join(want_lines)), extra_masks).split("\n") if want_lines else []
    have = mask(got, extra_masks).rstrip("\n").split("\n") if got.strip() else []
    while have and not have[-1].strip():
        have.pop()
    segs = [[]]
    for w in want:
        if w.strip() == "...":
            segs.append([])
        else:
            segs[-1].append(w)
    pairs = {}
    if len(segs) == 1:
        if len(want) != len(have):
            return f"    {len(have)} lines, documented {len(want)}:\n" + diff(want, have)
        trial = seg_match(env, want, have, 0, pairs)
        if trial is None:
            return diff(want, have)
        env.learned.update(trial)
        return None
    pos = 0
    for i, seg in enumerate(segs):
        if i == 0:
            starts = [0]
        elif i == len(segs) - 1:
            starts = [len(have) - len(seg)] if len(have) - len(seg) >= pos else []
        else:
            starts = range(pos, len(have) - len(seg) + 1)
        for k in starts:
            trial = seg_match(env, seg, have, k, pairs)
            if trial is not None:
                pairs, pos = trial, k + len(seg)
                break
        else:
            return "    (documented with \"...\")\n" + diff(want, have)
    env.learned.update(pairs)
    return None


def diff(want, have):
    out = []
    for k in range(max(len(want), len(have))):
        w = want[k] if k < len(want) else "<none>"
        h = have[k] if k < len(have) else "<none>"
        if w != h:
            out.append(f"    line {k + 1}:\n      documented: {w[:300]}\n      got:        {h[:300]}")
        if len(out) >= 4:
            break
    return "\n".join(out)


def run_cmd(env, cmd):
    prelude = "".join(c + "\n" for c in env.session)
    if re.match(r"(export|unset)\s", cmd):
        env.session.append(cmd)
    cmd = prelude + cmd
    p = subprocess.run(["timeout", str(CMD_TIMEOUT), "bash", "-c", cmd], cwd=env.work, env=env.env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return p.stdout.decode("utf-8", "replace").replace("\r", "")


def sh_script(env, block, script_ports):
    """An sh block as a script: the ports its ztensords listen on become free ports, the
    others the daemon's; /tmp/ is the work directory's."""
    text = "\n".join(block.lines)
    for p in re.findall(r"--listen (?:127\.0\.0\.1|localhost):(\d+)", text):
        script_ports.setdefault(p, str(free_port()))

    def port(m):
        p = m.group(2)
        if p in script_ports:
            return f"127.0.0.1:{script_ports[p]}"
        return f"127.0.0.1:{env.port}" if env.port and p == "7070" else m.group(0)

    text = re.sub(r"(127\.0\.0\.1|localhost):(\d{4,5})\b", port, text)
    text = re.sub(r"(\$port)\b", r"\1", text)
    # "for port in 7070 7080": ports named bare in a list of a loop
    text = re.sub(r"\b(for port in )([\d ]+)",
                  lambda m: m.group(1) + " ".join(script_ports.get(p, p) for p in m.group(2).split()), text)
    return subst_tmp(text, env.work)


def run_script(env, script):
    """Runs an sh block; its output goes to a file, not a pipe, so that what it leaves
    in the background cannot hold the test up. Whatever is left is killed."""
    log = os.path.join(env.work, "script.out")
    with open(log, "wb") as out:
        p = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script], cwd=env.work, env=env.env,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(SCRIPT_TIMEOUT)
        except subprocess.TimeoutExpired:
            rc = f"timeout ({SCRIPT_TIMEOUT} s)"
    try:
        os.killpg(p.pid, signal.SIGKILL)  # the script's background jobs
    except ProcessLookupError:
        pass
    p.wait()
    return rc, open(log, "rb").read().decode("utf-8", "replace")


class Report:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def ok(self, name):
        self.passed += 1
        print(f"ok - {name}")

    def bad(self, name, why):
        self.failed += 1
        print(f"FAIL - {name}\n{why}")

    def skip(self, name, why):
        self.skipped += 1
        print(f"skip - {name}: {why}")


def run_doc(path, exe, zt, work, rep, update):
    rel = os.path.relpath(path, REPO)
    env = Env(exe, zt, work)
    edits = []  # (block, (start, end) in block.lines, new lines)
    pending_script = None
    script_ports = {}

    def flush():
        nonlocal pending_script
        if pending_script:
            blk, script = pending_script
            rc, out = run_script(env, script)
            name = f"{rel}:{blk.line} (sh)"
            if rc == 0:
                rep.ok(name)
            else:
                rep.bad(name, f"    exit status {rc}; output:\n" +
                        "\n".join("      " + x for x in out.rstrip().split("\n")[-15:]))
            pending_script = None

    try:
        for b in parse(path):
            for kind, arg, line in b.directives:
                flush()
                if kind == "daemon":
                    fresh = arg.startswith("fresh")
                    env.start(arg[5:] if fresh else arg, fresh)
                elif kind == "setup":
                    out = run_cmd(env, env.subst(subst_tmp(arg, env.work)))
                    if out.strip():
                        print(f"# {rel}:{line} setup: {out.strip()[:300]}")
                else:
                    rep.bad(f"{rel}:{line}", f"    unknown directive {kind!r}")
            if b.lang not in ("console", "sh"):
                continue
            if b.skip:
                flush()
                rep.skip(f"{rel}:{b.line} ({b.lang})", b.skip)
                continue
            if b.lang == "sh":
                script = sh_script(env, b, script_ports)
                if b.cont and pending_script:
                    pending_script = (pending_script[0], pending_script[1] + "\n" + script)
                else:
                    flush()
                    pending_script = (b, script)
                continue
            flush()
            if not env.port:
                rep.bad(f"{rel}:{b.line}", "    a console block before any daemon directive")
                continue
            for line, cmd, want, span in console_commands(b):
                got = run_cmd(env, env.subst(cmd))
                name = f"{rel}:{line} $ {cmd.splitlines()[0][:90]}"
                problem = compare(env, want, got, b.masks)
                if problem is None:
                    rep.ok(name)
                elif update:
                    edits.append((b, span, updated(env, want, got, b.masks), len(want)))
                    rep.bad(name, "    (rewritten)\n" + problem)
                else:
                    rep.bad(name, problem)
        flush()
    finally:
        env.stop()
    for e in env.bad_exits:
        rep.bad(f"{rel}: daemon exits 0 after SIGTERM", f"    {e}")
    if update and edits:
        rewrite(path, edits)


def updated(env, want, got, extra_masks):
    """The output to write back: the real one, with the documented names of learned
    tokens, and the documented line wherever the two are equal once masked."""
    back = {v: k for k, v in env.learned.items()}
    new = [HEX32.sub(lambda m: back.get(m.group(0), m.group(0)), ln)
           for ln in got.rstrip("\n").split("\n")]
    for k, ln in enumerate(new):
        if k < len(want) and mask(env.subst(want[k]), extra_masks) == mask(env.subst(ln), extra_masks):
            new[k] = want[k]
    return new


def rewrite(path, edits):
    lines = open(path, encoding="utf-8").read().split("\n")
    for b, (start, end), new, nwant in sorted(edits, key=lambda e: -(e[0].line + e[1][0])):
        first = b.line + start  # 0-based index of the "$ " line in the file
        # the command's own lines (continuations, a here-document) stay; its output
        # lines are replaced
        out_start = b.line + command_end(b.lines, start)
        lines[out_start:out_start + nwant] = new
    open(path, "w", encoding="utf-8").write("\n".join(lines))


def main():
    args = sys.argv[1:]
    update = "--update" in args
    args = [a for a in args if a != "--update"]
    if len(args) < 4:
        print(__doc__)
        return 2
    exe, zt, work = (os.path.abspath(a) for a in args[:3])
    rep = Report()
    for doc in args[3:]:
        path = doc if os.path.isabs(doc) else os.path.join(REPO, doc)
        if not os.path.exists(path):
            print(f"# {doc}: not there yet")
            continue
        w = os.path.join(work, f"doctest.{os.getpid()}.{os.path.basename(doc)}")
        shutil.rmtree(w, ignore_errors=True)
        os.makedirs(w)
        try:
            run_doc(path, exe, zt, w, rep, update)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            rep.bad(doc, f"    {e}")
        if rep.failed == 0 and not os.environ.get("ZT_DOCTEST_KEEP"):
            shutil.rmtree(w, ignore_errors=True)
        else:
            print(f"# work directory kept: {w}")
    for_skip = f", {rep.skipped} skipped" if rep.skipped else ", 0 skipped"
    print(f"{rep.passed} passed, {rep.failed} failed{for_skip}")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main())
