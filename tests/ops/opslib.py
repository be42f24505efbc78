"""Shared code of the Python ops tests (systemd notify protocol, socket activation).

Standard library only; run with /usr/bin/python3. Same conventions as lib.sh: a work
directory under $ZT_IT_TMP, "ok"/"FAIL" lines, and "N passed, M failed" last.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SAN_RE = ("ERROR: AddressSanitizer", "runtime error:", "LeakSanitizer",
          "ERROR: UndefinedBehaviorSanitizer")


class Test:
    def __init__(self, argv):
        if len(argv) < 3:
            sys.exit("usage: %s ZTENSORD ZT" % argv[0])
        self.ztensord = os.path.abspath(argv[1])
        self.zt = os.path.abspath(argv[2])
        name = os.path.splitext(os.path.basename(argv[0]))[0]
        base = os.environ.get("ZT_IT_TMP") or os.getcwd()
        self.tmp = tempfile.mkdtemp(prefix=name + ".", dir=base)
        self.passed = 0
        self.failed = 0
        self.procs = []
        os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
        os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")

    # ---- results
    def ok(self, name):
        self.passed += 1
        print("ok   " + name, flush=True)

    def bad(self, name, why=""):
        self.failed += 1
        print("FAIL " + name + (": " + why if why else ""), flush=True)

    def check(self, name, cond, why=""):
        (self.ok if cond else self.bad)(name, *(() if cond else (why,)))
        return cond

    def eq(self, name, got, want):
        return self.check(name, got == want, "got %r, want %r" % (got, want))

    def note(self, msg):
        print("# " + msg, flush=True)

    def finish(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if self.failed == 0 and not os.environ.get("ZT_IT_KEEP"):
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            self.note("work directory kept: " + self.tmp)
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        sys.exit(1 if self.failed else 0)

    # ---- files
    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def make_root(self, name="root", files=("a",)):
        """A root with one small valid file per name; returns (root, {name: raw bytes})."""
        root = self.path(name)
        os.makedirs(root, exist_ok=True)
        raws = {}
        for f in files:
            raws[f] = self.pack(os.path.join(root, f + ".zt"), 4096)
        return root, raws

    def pack(self, out, size):
        raw = os.urandom(size)
        rawp = out + ".raw.tmp"
        with open(rawp, "wb") as fh:
            fh.write(raw)
        tmp_out = out + ".tmp"
        subprocess.run([self.zt, "pack", "-o", tmp_out, "w=u8:%d:%s" % (size, rawp)],
                       check=True, stdout=subprocess.DEVNULL)
        os.unlink(rawp)
        os.rename(tmp_out, out)  # appears at once, like a published file
        return raw

    # ---- the daemon
    def spawn(self, args, env=None, err_name="daemon.err", **kw):
        err = open(self.path(err_name), "wb")
        p = subprocess.Popen([self.ztensord] + args, env=env, stdout=subprocess.DEVNULL,
                             stderr=err, **kw)
        err.close()
        p.err_path = self.path(err_name)
        self.procs.append(p)
        return p

    def spawn_activated(self, args, sock_fds, env, err_name="daemon.err", listen_pid=True):
        """Starts ztensord the way systemd does with socket activation: the sockets
        in sock_fds become fds 3, 4, ... of the child, LISTEN_FDS counts them and
        LISTEN_PID is the child's own pid (or our pid when listen_pid is False)."""
        err_path = self.path(err_name)
        parent = os.getpid()
        open(err_path, "wb").close()  # exists before the child runs
        pid = os.fork()
        if pid == 0:  # the child: nothing but dup2s, the environment and exec
            try:
                fd = os.open(err_path, os.O_WRONLY | os.O_APPEND)
                os.dup2(fd, 2)
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, 0)
                os.dup2(null, 1)
                # Move the sources out of the way first, then place them at 3, 4, ...
                high = [os.dup2(f, 100 + i) for i, f in enumerate(sock_fds)]
                for i, h in enumerate(high):
                    os.dup2(h, 3 + i)
                    os.set_inheritable(3 + i, True)
                os.closerange(3 + len(sock_fds), 1024)
                e = dict(env)
                e["LISTEN_PID"] = str(os.getpid() if listen_pid else parent)
                e["LISTEN_FDS"] = str(len(sock_fds))
                e["LISTEN_FDNAMES"] = ":".join("http%d" % i for i in range(len(sock_fds)))
                os.execve(self.ztensord, [self.ztensord] + args, e)
            finally:
                os._exit(127)
        p = Proc(pid, err_path)
        self.procs.append(p)
        return p

    def stderr_of(self, p):
        with open(p.err_path, "r", errors="replace") as fh:
            return fh.read()

    def wait_log(self, p, needle, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = self.stderr_of(p)
            if needle in s:
                return s
            if p.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    def stop(self, p, name, sig=signal.SIGTERM, want_rc=0, timeout=20):
        if p.poll() is None:
            p.send_signal(sig)
        try:
            rc = p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            self.bad(name + ": exits", "still running after %ds" % timeout)
            return
        self.eq(name + ": exit status", rc, want_rc)
        s = self.stderr_of(p)
        self.check(name + ": no sanitizer report", not any(x in s for x in SAN_RE),
                   s[-2000:])


class Proc:
    """A forked child with the parts of subprocess.Popen the tests use."""

    def __init__(self, pid, err_path):
        self.pid = pid
        self.err_path = err_path
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout=None):
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, sig):
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self):
        self.send_signal(signal.SIGKILL)


def env_without(*names, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in names and not k.startswith("ZTENSORD_")}
    env.update(extra)
    return env


def get(url, timeout=10, headers=None):
    """(status, headers, body) of a GET; status 0 when the connection fails."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
    except (OSError, urllib.error.URLError):
        return 0, None, b""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
