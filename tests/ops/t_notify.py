#!/usr/bin/python3
"""The systemd notify protocol, against a unix datagram socket this test owns.

ztensord is started the way systemd starts a Type=notify service: NOTIFY_SOCKET names
our socket, WATCHDOG_USEC asks for keep-alive pings. Checked: READY=1 comes only after
the first scan (a file of the root is listed at that moment); every message comes from
the daemon's own pid (NotifyAccess=main); SIGHUP gives RELOADING=1 (with MONOTONIC_USEC)
and then READY=1 after the rescan; WATCHDOG=1 arrives at least every WATCHDOG_USEC/2-ish
and never more than WATCHDOG_USEC apart; none when WATCHDOG_USEC is absent or
WATCHDOG_PID names another process; SIGTERM gives STOPPING=1 and exit status 0.

usage: t_notify.py ZTENSORD ZT
"""
import os
import signal
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opslib import Test, env_without, get  # noqa: E402

t = Test(sys.argv)


class Notify:
    """Our end of NOTIFY_SOCKET: receives datagrams with the sender's credentials."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.log = []  # (monotonic time, pid, {key: value})

    def recv(self, timeout):
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
        except socket.timeout:
            return None
        pid = None
        for level, typ, cdata in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
                pid, _, _ = struct.unpack("iII", cdata[:12])
        fields = {}
        for line in data.decode("utf-8", "replace").split("\n"):
            if "=" in line:
                k, v = line.split("=", 1)
                fields[k] = v
        m = (time.monotonic(), pid, fields)
        self.log.append(m)
        return m

    def wait_for(self, key, timeout, skip=("WATCHDOG",)):
        """The next message with KEY=1, or None. Messages with a key in skip are kept
        in the log and passed over; any other message before it is returned as an
        unexpected one in the second element."""
        end = time.monotonic() + timeout
        others = []
        while True:
            m = self.recv(end - time.monotonic())
            if m is None:
                return None, others
            if key in m[2]:
                return m, others
            if not any(k in m[2] for k in skip):
                others.append(m[2])

    def drain(self, seconds):
        end = time.monotonic() + seconds
        got = []
        while True:
            m = self.recv(end - time.monotonic())
            if m is None:
                return got
            got.append(m)


def listed(port, name):
    st, _, body = get("http://127.0.0.1:%d/v1/files" % port)
    return st == 200 and name.encode() in body


# ---- run 1: READY, WATCHDOG, RELOADING/READY, STOPPING
root, _ = t.make_root(files=("first",))
n = Notify(t.path("notify.sock"))
env = env_without("WATCHDOG_PID", "LISTEN_PID", "LISTEN_FDS",
                  NOTIFY_SOCKET=n.path, WATCHDOG_USEC="1000000")
p = t.spawn(["--root", root, "--listen", "127.0.0.1:0", "--access-log", "off", "--no-watch"],
            env=env)
ready, others = n.wait_for("READY", 30)
if not t.check("READY=1 received", ready is not None, "stderr: " + t.stderr_of(p)[-600:]):
    t.finish()
t.eq("no other message before READY=1", others, [])
t.eq("READY=1 comes from the daemon's pid", ready[1], p.pid)
t.check("READY=1 carries a STATUS", "STATUS" in ready[2], repr(ready[2]))
log = t.wait_log(p, "listening on http://127.0.0.1:", 5) or ""
port = int(log.split("listening on http://127.0.0.1:")[1].split()[0])
# The scan happened before READY=1: the root's file is listed and /readyz is 200 now.
t.check("after READY=1 the first scan is done (file listed)", listed(port, "first.zt"))
t.eq("after READY=1 /readyz is 200", get("http://127.0.0.1:%d/readyz" % port)[0], 200)

# Watchdog: WATCHDOG_USEC=1 s, so pings every ~0.5 s; watch for 3 s.
msgs = n.drain(3.0)
pings = [m for m in msgs if m[2].get("WATCHDOG") == "1"]
t.check("WATCHDOG=1 pings: at least 4 in 3 s", len(pings) >= 4, "got %d" % len(pings))
times = [ready[0]] + [m[0] for m in pings]
gaps = [b - a for a, b in zip(times, times[1:])]
t.check("WATCHDOG=1 pings never more than WATCHDOG_USEC (1 s) apart",
        gaps and max(gaps) < 1.0, "gaps %s" % ["%.3f" % g for g in gaps])
t.check("WATCHDOG=1 pings not much faster than WATCHDOG_USEC/2",
        gaps and min(gaps[1:] or gaps) > 0.2, "gaps %s" % ["%.3f" % g for g in gaps])
t.check("all pings from the daemon's pid", all(m[1] == p.pid for m in pings))
t.eq("nothing but pings while idle", [m[2] for m in msgs if "WATCHDOG" not in m[2]], [])

# SIGHUP: a new file (no inotify: --no-watch) appears only through the rescan.
t.pack(os.path.join(root, "second.zt"), 2048)
t.check("with --no-watch a new file is not listed before SIGHUP", not listed(port, "second.zt"))
p.send_signal(signal.SIGHUP)
rel, others = n.wait_for("RELOADING", 10)
if t.check("RELOADING=1 after SIGHUP", rel is not None):
    t.eq("nothing else before RELOADING=1", others, [])
    t.eq("RELOADING=1 from the daemon's pid", rel[1], p.pid)
    mono = rel[2].get("MONOTONIC_USEC", "")
    now_us = time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6
    t.check("RELOADING=1 carries MONOTONIC_USEC (CLOCK_MONOTONIC, us)",
            mono.isdigit() and 0 <= now_us - int(mono) < 10e6, repr(rel[2]))
    ready2, others = n.wait_for("READY", 30)
    if t.check("READY=1 after RELOADING=1", ready2 is not None):
        t.eq("nothing else between RELOADING=1 and READY=1", others, [])
        t.check("after the second READY=1 the rescan is done (new file listed)",
                listed(port, "second.zt"))

# SIGHUP twice in a row: two RELOADING/READY pairs, in order.
p.send_signal(signal.SIGHUP)
time.sleep(0.05)
p.send_signal(signal.SIGHUP)
seq = []
end = time.monotonic() + 10
while time.monotonic() < end and len(seq) < 4:
    m = n.recv(end - time.monotonic())
    if m is None:
        break
    for k in ("RELOADING", "READY"):
        if k in m[2]:
            seq.append(k)
t.eq("two SIGHUPs: RELOADING, READY, RELOADING, READY", seq,
     ["RELOADING", "READY", "RELOADING", "READY"])

# SIGTERM: STOPPING=1, then a clean exit.
p.send_signal(signal.SIGTERM)
stop, others = n.wait_for("STOPPING", 20)
t.check("STOPPING=1 after SIGTERM", stop is not None)
t.eq("nothing else before STOPPING=1", others, [])
t.stop(p, "run 1")
after = [m[2] for m in n.drain(0.2)]
t.eq("no message after exit", after, [])

# ---- run 2: no WATCHDOG_USEC, no pings
n2 = Notify(t.path("notify2.sock"))
p = t.spawn(["--root", root, "--listen", "127.0.0.1:0", "--access-log", "off"],
            env=env_without("WATCHDOG_USEC", "WATCHDOG_PID", NOTIFY_SOCKET=n2.path),
            err_name="daemon2.err")
r, _ = n2.wait_for("READY", 30)
t.check("run 2: READY=1", r is not None)
msgs = n2.drain(1.5)
t.eq("run 2: no WATCHDOG=1 without WATCHDOG_USEC", [m for m in msgs if "WATCHDOG" in m[2]], [])
t.stop(p, "run 2")

# ---- run 3: WATCHDOG_PID names another process: pings are not for us
n3 = Notify(t.path("notify3.sock"))
p = t.spawn(["--root", root, "--listen", "127.0.0.1:0", "--access-log", "off"],
            env=env_without(NOTIFY_SOCKET=n3.path, WATCHDOG_USEC="200000",
                            WATCHDOG_PID=str(os.getpid())),
            err_name="daemon3.err")
r, _ = n3.wait_for("READY", 30)
t.check("run 3: READY=1", r is not None)
msgs = n3.drain(1.0)
t.eq("run 3: no WATCHDOG=1 when WATCHDOG_PID is another pid",
     [m for m in msgs if "WATCHDOG" in m[2]], [])
t.stop(p, "run 3")

# ---- run 4: a notify socket nobody listens on must not stop the daemon
gone = t.path("gone.sock")
p = t.spawn(["--root", root, "--listen", "127.0.0.1:0", "--access-log", "off"],
            env=env_without(NOTIFY_SOCKET=gone, WATCHDOG_USEC="200000"),
            err_name="daemon4.err")
log = t.wait_log(p, "listening on", 30)
t.check("run 4: starts with a dead NOTIFY_SOCKET", log is not None)
time.sleep(0.5)
t.check("run 4: still running", p.poll() is None)
warns = t.stderr_of(p).count("sd_notify(")
t.check("run 4: the failure is logged once, not at every ping", warns == 1,
        "%d sd_notify warnings" % warns)
t.stop(p, "run 4")

t.finish()
