"""The soak's clients, its background events and its verdict (tests/soak/soak.sh
starts the daemon and builds the files; see docs/OPERATIONS.md, "Soak").

usage: soak.py prep STATE_DIR ZT   the expected bytes of the served files (files.json)
       soak.py run STATE_DIR         the soak (STATE_DIR/config.json says the rest)

With "sidecar" in config.json (soak.sh --sidecar), a second ztensord with
--upstream pointing at the first serves every read (read_port): the readers go
through its cache, and also read the renamed files (kind "dropped"), which change
at the origin every second, so that the sidecar revalidates and fetches again;
uploads still go to the origin. Both processes are sampled and judged.

N worker threads, each with one keep-alive connection to 127.0.0.1, pick requests
from a weighted mix until the deadline: manifests, small raw components, zstd
components decoded by the server and as stored, ranges of and whole 1 GiB
components, downloads cut short, whole-file PUTs and upload sessions, /metrics.
Every answer is checked: its status against the statuses that request may get,
its body against the bytes it must have. Meanwhile one thread renames finished
.zt files into the root, one sends SIGHUP every few seconds (rotating the access
log first when it grew), and one samples the daemon's RSS and descriptors.

At the end: every PUT and commit that was answered 2xx must be readable with the
bytes last sent, every renamed file listed and valid, staging empty, RSS and fds
flat. Prints a report and exits 0 on a pass, 1 on a failure. Every loop is
bounded by the deadline and by a count; all traffic goes to 127.0.0.1.
"""
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import sys
import threading
import time

MiB = 1 << 20


def sha256_hex(b):
    return hashlib.sha256(b).hexdigest()


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.count = {}  # kind -> requests
        self.status = {}  # (kind, status) -> n
        self.failures = []  # first ones, with details
        self.nfail = 0
        self.bytes = 0

    def ok(self, kind, status, nbytes=0):
        with self.lock:
            self.count[kind] = self.count.get(kind, 0) + 1
            self.status[(kind, status)] = self.status.get((kind, status), 0) + 1
            self.bytes += nbytes

    def fail(self, kind, what):
        with self.lock:
            self.count[kind] = self.count.get(kind, 0) + 1
            self.nfail += 1
            if len(self.failures) < 40:
                self.failures.append("%.1fs %s: %s" % (time.monotonic() - T0, kind, what))

    def total(self):
        with self.lock:
            return sum(self.count.values())


T0 = time.monotonic()


class Worker:
    """One client connection and its request loop."""

    def __init__(self, n, cfg, files, stats, deadline, big_sem):
        self.n, self.cfg, self.files, self.stats = n, cfg, files, stats
        self.deadline, self.big_sem = deadline, big_sem
        self.rng = random.Random(cfg["seed"] * 1000 + n)
        self.conn = None  # to read_port (the sidecar, when there is one)
        self.oconn = None  # to port (the origin): uploads, and the final checks
        self.uploaded = {}  # name -> sha256 of the file last PUT with a 2xx
        self.sessions = {}  # name -> {object: sha256 of its decoded bytes}

    # ---- HTTP on one keep-alive connection, reopened after errors and cuts
    def connect(self, origin):
        if origin:
            if self.oconn is None:
                self.oconn = http.client.HTTPConnection("127.0.0.1", self.cfg["port"], timeout=60)
            return self.oconn
        if self.conn is None:
            port = self.cfg.get("read_port", self.cfg["port"])
            self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        return self.conn

    def drop(self, origin=None):
        """Close the read connection, the origin's (origin True), or both (None)."""
        if origin is not True and self.conn is not None:
            self.conn.close()
            self.conn = None
        if origin is not False and self.oconn is not None:
            self.oconn.close()
            self.oconn = None

    def request(self, method, path, body=None, headers=None, read=True, origin=False):
        """(status, headers, body bytes or the open response). Reads go to read_port,
        writes (origin True) to the origin."""
        c = self.connect(origin)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            if not read:
                return r.status, r, r
            data = r.read()
            if r.getheader("Connection", "").lower() == "close":
                self.drop(origin)
            return r.status, r, data
        except Exception:
            self.drop(origin)
            raise

    def check(self, kind, want, status, cond=True, what=""):
        if status not in want:
            self.stats.fail(kind, "status %s, want %s %s" % (status, sorted(want), what))
            return False
        if not cond:
            self.stats.fail(kind, "status %s but %s" % (status, what))
            return False
        return True

    # ---- the mix
    def manifest(self):
        name = self.rng.choice(self.files["names"])
        st, _, body = self.request("GET", "/v1/files/" + name)
        ok = st == 200
        try:
            ok = ok and "objects" in json.loads(body)
        except ValueError:
            ok = False
        if self.check("manifest", {200}, st, ok, name):
            self.stats.ok("manifest", st, len(body))

    def small(self):
        name, obj, digest = self.rng.choice(self.files["small"])
        path = "/v1/files/%s/objects/%s/data" % (name, obj)
        st, _, body = self.request("GET", path)
        if self.check("small", {200}, st, sha256_hex(body) == digest, path + ": bytes differ"):
            self.stats.ok("small", st, len(body))

    def zstd(self, stored):
        name, obj, decoded, stored_digest = self.rng.choice(self.files["zstd"])
        path = "/v1/files/%s/objects/%s/data" % (name, obj)
        kind = "zstd_stored" if stored else "zstd_decoded"
        hdr = {"Accept-Encoding": "zstd" if stored else "identity"}
        st, r, body = self.request("GET", path, headers=hdr)
        if not stored and self.slots_full(kind, st, r, body, "too_many_decoders"):
            return
        enc = r.getheader("Content-Encoding") or ""
        if stored:
            good = enc == "zstd" and "sha256:" + sha256_hex(body) == stored_digest
        else:
            good = enc == "" and sha256_hex(body) == decoded
        if self.check(kind, {200}, st, good, path + ": bytes or encoding differ"):
            self.stats.ok(kind, st, len(body))

    def big_range(self):
        size = self.files["big_size"]
        n = self.rng.randint(1, MiB)
        off = self.rng.randrange(0, size - n + 1)
        st, r, body = self.request(
            "GET", self.files["big_path"], headers={"Range": "bytes=%d-%d" % (off, off + n - 1)}
        )
        with open(self.files["big_raw"], "rb") as f:
            f.seek(off)
            want = f.read(n)
        cr = r.getheader("Content-Range") or ""
        good = body == want and cr == "bytes %d-%d/%d" % (off, off + n - 1, size)
        if self.check("big_range", {206}, st, good, "range %d+%d differs (%s)" % (off, n, cr)):
            self.stats.ok("big_range", st, len(body))

    def big_whole(self):
        if not self.big_sem.acquire(blocking=False):
            return self.big_range()  # at most a few whole-GiB reads at once
        try:
            st, r, _ = self.request("GET", self.files["big_path"], read=False)
            h, n = hashlib.sha256(), 0
            for _ in range(self.files["big_size"] // MiB + 2):
                chunk = r.read(MiB)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
            good = n == self.files["big_size"] and h.hexdigest() == self.files["big_digest"]
            if self.check("big_whole", {200}, st, good, "%d bytes, digest differs" % n):
                self.stats.ok("big_whole", st, n)
        finally:
            self.big_sem.release()

    def cut(self):
        """A client that goes away in the middle of a 1 GiB body."""
        st, r, _ = self.request("GET", self.files["big_path"], read=False)
        want = self.rng.randint(0, 4 * MiB)
        got = 0
        while got < want:
            chunk = r.read(min(256 << 10, want - got))
            if not chunk:
                break
            got += len(chunk)
        self.drop(False)
        if self.check("cut", {200}, st, got == want, "read %d of %d" % (got, want)):
            self.stats.ok("cut", st, got)

    def slots_full(self, kind, st, r, body, code="too_many_uploads"):
        """503 CODE is a valid answer: too_many_uploads (the daemon runs with the
        default max_uploads, 16) or too_many_decoders (max_decode_streams, 32, against
        256 connections): check it is that one, wait as told (at most 1 s), move on."""
        if st != 503:
            return False
        try:
            good = json.loads(body)["error"]["code"] == code
        except (ValueError, KeyError, TypeError):
            good = False
        if self.check(kind, {503}, st, good and r.getheader("Retry-After") == "1",
                      "not %s with Retry-After: 1: %r" % (code, body[:200])):
            self.stats.ok(kind, st)
        time.sleep(self.rng.uniform(0.1, 1.0))
        return True

    def put(self):
        src = self.rng.choice(self.files["uploads"])
        name = "uploads/w%03d-%d.zt" % (self.n, self.rng.randrange(2))
        with open(src["path"], "rb") as f:
            data = f.read()
        st, r, body = self.request("PUT", "/v1/files/" + name, body=data, origin=True)
        if self.slots_full("put", st, r, body):
            return
        if self.check("put", {200, 201}, st, True, body[:200]):
            self.uploaded[name] = src["sha256"]
            self.stats.ok("put", st, len(data))

    def session(self):
        name = "sessions/w%03d.zt" % self.n
        st, r, body = self.request(
            "POST", "/v1/uploads", body=json.dumps({"file": name}),
            headers={"Content-Type": "application/json"}, origin=True,
        )
        if self.slots_full("session", st, r, body):
            return
        if not self.check("session", {201}, st, True, body[:200]):
            return
        sid = json.loads(body)["id"]
        w = os.urandom(self.rng.randint(1, 64) * 1024)
        z = (b"soak %d " % self.rng.randrange(1 << 30)) * self.rng.randint(100, 20000)
        for key, data, q in (("w", w, ""), ("z", z, "?encoding=zstd")):
            st, _, body = self.request("PUT", "/v1/uploads/%s/components/%s%s" % (sid, key, q),
                                       body=data, origin=True)
            if not self.check("session", {201}, st, True, body[:200]):
                return
        objs = {
            "w": {"shape": [len(w)], "components": {"data": {"key": "w", "dtype": "u8"}}},
            "z": {"shape": [len(z)], "components": {"data": {"key": "z", "dtype": "u8"}}},
        }
        st, _, body = self.request(
            "POST", "/v1/uploads/%s/commit" % sid, body=json.dumps({"objects": objs}),
            headers={"Content-Type": "application/json"}, origin=True,
        )
        if self.check("session", {200, 201}, st, True, body[:200]):
            self.sessions[name] = {"w": sha256_hex(w), "z": sha256_hex(z)}
            self.stats.ok("session", st, len(w) + len(z))

    def dropped(self):
        """A renamed file's component through the sidecar: one of the versions
        renamed in (the sidecar serves the one it opened for upstream_ttl, then
        revalidates), or 404 before its name was first renamed in (remembered for
        upstream_negative_ttl). A file replaced at the origin while the sidecar
        fetches it may also fail that request (502/503/504 with an error body)."""
        name = "dropped/d%02d.zt" % self.rng.randrange(16)
        st, _, body = self.request("GET", "/v1/files/%s/objects/t/data" % name)
        code = ""
        if st != 200:
            try:
                code = json.loads(body)["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = "(not an error body)"
        good = (sha256_hex(body) in self.files["drops"] if st == 200
                else code in ("file_not_found", "upstream_failed", "file_changed",
                              "upstream_timeout"))
        if self.check("dropped", {200, 404, 502, 503, 504}, st, good,
                      "%s: %s" % (name, code or "bytes of no version renamed in")):
            self.stats.ok("dropped:" + (code or "ok"), st, len(body))

    def metrics(self):
        st, _, body = self.request("GET", "/metrics")
        if self.check("metrics", {200}, st, b"ztensord_requests_total" in body):
            self.stats.ok("metrics", st, len(body))

    def run(self):
        mix = self.cfg["mix"]
        kinds = list(mix)
        weights = [mix[k] for k in kinds]
        act = {
            "manifest": self.manifest, "small": self.small,
            "zstd_decoded": lambda: self.zstd(False), "zstd_stored": lambda: self.zstd(True),
            "big_range": self.big_range, "big_whole": self.big_whole, "cut": self.cut,
            "put": self.put, "session": self.session, "metrics": self.metrics,
            "dropped": self.dropped,
        }
        for _ in range(10**9):  # bounded by the deadline, and by this count
            if time.monotonic() >= self.deadline:
                break
            kind = self.rng.choices(kinds, weights)[0]
            try:
                act[kind]()
            except Exception as e:  # a reset, a timeout, a short body
                self.stats.fail(kind, "%s: %s" % (type(e).__name__, e))
                time.sleep(0.05)
        self.drop()


# ---- background events
def renamer(cfg, deadline, dropped, stop):
    """Every RENAME_EVERY s: copy a finished file next to the root, fsync, rename it
    in, as a publisher would: over one of 16 names, so the root does not grow (each
    served file holds a descriptor) and files being read are replaced."""
    inc = cfg["incoming"]
    srcs = [(p, file_sha256(p)) for p in cfg["drop_sources"]]
    for n in range(100000):
        if stop.wait(cfg["rename_every"]) or time.monotonic() >= deadline:
            break
        src, digest = srcs[n % len(srcs)]
        tmp = os.path.join(inc, "d%05d.tmp" % n)
        shutil.copyfile(src, tmp)
        fd = os.open(tmp, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        name = "dropped/d%02d.zt" % (n % 16)
        os.rename(tmp, os.path.join(cfg["root"], name))
        dropped[name] = digest


def hupper(cfg, deadline, stop, counter):
    """SIGHUP every HUP_EVERY s, after moving the access log aside when it is large."""
    acc = cfg["access_log"]
    for _ in range(100000):
        if stop.wait(cfg["hup_every"]) or time.monotonic() >= deadline:
            break
        try:
            if os.path.getsize(acc) > 64 * MiB:
                os.replace(acc, acc + ".1")
        except OSError:
            pass
        os.kill(cfg["pid"], signal.SIGHUP)
        counter[0] += 1


def proc_sample(cfg, pid=None, port=None):
    """(RSS, descriptors, files in the catalog) of the origin, or of process pid
    listening on port: each file in the catalog holds a descriptor, so what must
    stay flat is descriptors minus files."""
    pid = pid or cfg["pid"]
    port = port or cfg["port"]
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("RssAnon:"):
                cfg["_anon"] = int(line.split()[1]) * 1024
    fds = len(os.listdir("/proc/%d/fd" % pid))
    files = -1
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("GET", "/metrics")
        for line in c.getresponse().read().decode().splitlines():
            if line.startswith("ztensord_catalog_files{"):
                files = max(files, 0) + int(line.split()[1])
    except (OSError, http.client.HTTPException, ValueError):
        pass
    finally:
        c.close()
    return rss, fds, files


def conns_to(port):
    """Established TCP connections to 127.0.0.1:port, counted at their client end
    (/proc/net/tcp): with a sidecar, the origin holds one socket for each of the
    sidecar's kept-alive upstream connections, which are not a leak."""
    n = 0
    try:
        with open("/proc/net/tcp") as f:
            for line in list(f)[1:]:
                cols = line.split()
                if cols[3] == "01" and int(cols[2].split(":")[1], 16) == port:
                    n += 1
    except (OSError, IndexError, ValueError):
        pass
    return n


def side_sample(cfg):
    """The sidecar's sample, when there is one (its root is empty: files 0)."""
    rss, fds, files = proc_sample(cfg, cfg["read_pid"], cfg["read_port"])
    return rss, fds, max(files, 0)


def monitor(cfg, stats, deadline, stop, samples, side):
    """A sample every 5 s; a printed line every PRINT_EVERY s."""
    last_print, last_total, last_t = time.monotonic(), 0, time.monotonic()
    for _ in range(1000000):
        if stop.wait(5):
            break
        now = time.monotonic()
        rss, fds, files = proc_sample(cfg)
        samples.append((now - T0, rss, fds - files, fds, files))
        if cfg.get("sidecar"):
            srss, sfds, sfiles = side_sample(cfg)
            side.append((now - T0, srss, sfds - sfiles, sfds, sfiles))
        if now - last_print >= cfg["print_every"] - 0.5 or now >= deadline:
            tot = stats.total()
            print("soak: t=%4.0fs  rss=%6.1f MiB (anon %6.1f)  fds=%4d (files %4d)  requests=%8d  "
                  "req/s=%6.0f  MB/s=%5.0f  failures=%d" % (now - T0, rss / MiB, cfg.get("_anon", 0) / MiB, fds, files, tot,
                                               (tot - last_total) / (now - last_t),
                                               stats.bytes / (now - T0) / 1e6, stats.nfail),
                  flush=True)
            if cfg.get("sidecar"):
                print("soak:         sidecar rss=%6.1f MiB  fds=%4d" % (srss / MiB, sfds), flush=True)
            last_print, last_total, last_t = now, tot, now
        if now >= deadline:
            break


# ---- the verdict
def flat(samples, col, slack_abs, slack_rel):
    """Compare the last quarter of the samples with the second (after warm-up)."""
    vals = [s[col] for s in samples]
    q = len(vals) // 4
    if q < 1:
        return True, "too few samples (%d) to judge" % len(vals)
    early, late = max(vals[q:2 * q]), max(vals[-q:])
    limit = early * (1 + slack_rel) + slack_abs
    return late <= limit, "second quarter max %d, last quarter max %d, limit %d" % (early, late, limit)


def verify_end(cfg, workers, dropped, problems):
    w = Worker(999, cfg, None, Stats(), 0, None)
    # every renamed file is listed and valid (one more SIGHUP: a rescan for the last ones)
    os.kill(cfg["pid"], signal.SIGHUP)
    listed = {}
    for _ in range(100):
        time.sleep(0.2)
        st, _, body = w.request("GET", "/v1/files", origin=True)
        listed = {f["name"]: f["status"] for f in json.loads(body)["files"]} if st == 200 else {}
        if all(listed.get(d) == "ok" for d in dropped):
            break
    missing = [d for d in dropped if listed.get(d) != "ok"]
    if missing:
        problems.append("renamed files not listed as ok: %s" % missing[:10])
    for name, digest in dropped.items():
        st, _, body = w.request("GET", "/v1/files/%s/raw" % name, origin=True)
        if st != 200 or sha256_hex(body) != digest:
            problems.append("renamed file %s: status %d, not the version renamed in last" % (name, st))
    for name in cfg["names"]:
        if listed.get(name) != "ok":
            problems.append("original file %s is %s" % (name, listed.get(name)))
    # every upload answered 2xx: its last version, byte for byte
    nup = nsess = 0
    for wk in workers:
        for name, digest in wk.uploaded.items():
            nup += 1
            st, _, body = w.request("GET", "/v1/files/%s/raw" % name, origin=True)
            if st != 200 or sha256_hex(body) != digest:
                problems.append("upload %s: status %d, bytes differ from the last PUT" % (name, st))
        for name, objs in wk.sessions.items():
            nsess += 1
            for obj, digest in objs.items():
                st, _, body = w.request("GET", "/v1/files/%s/objects/%s/data" % (name, obj),
                                        headers={"Accept-Encoding": "identity"}, origin=True)
                if st != 200 or sha256_hex(body) != digest:
                    problems.append("session file %s object %s: status %d, bytes differ" % (name, obj, st))
    if cfg.get("sidecar"):
        side_end(cfg, w, dropped, workers, problems)
    w.drop()
    # Staging files, not directories: the running instance holds its own directory
    # (run-PID-RANDOM) for its lifetime and removes it when it stops.
    staging = os.path.join(cfg["root"], ".ztensord-staging")
    left = [os.path.relpath(os.path.join(d, f), staging)
            for d, _, fs in os.walk(staging) for f in fs]
    if left:
        problems.append("staging not empty: %s" % left[:10])
    return nup, nsess


def side_end(cfg, w, dropped, workers, problems):
    """Once upstream_ttl has passed with nothing renamed, the sidecar serves the
    origin's last version of every renamed and uploaded file."""
    time.sleep(cfg["sidecar_ttl"] + 1)
    want = dict(dropped)
    for wk in workers:
        want.update(wk.uploaded)
    for name, digest in sorted(want.items()):
        st, _, body = w.request("GET", "/v1/files/%s/raw" % name)
        if st != 200 or sha256_hex(body) != digest:
            problems.append("through the sidecar, %s: status %d, not the origin's last version"
                            % (name, st))


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for _ in range(1 << 20):
            b = f.read(MiB)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def prep(state, zt):
    """files.json: for each served object, the digest of its bytes, from the raw
    sources soak.sh packed (and, for zstd, the stored digest from `zt info`, not
    from the server)."""
    import subprocess

    with open(os.path.join(state, "sources.json")) as f:
        src = json.load(f)  # [{"file", "object", "raw", "zstd"}], "big", "uploads"
    out = {"names": sorted({s["file"] for s in src["objects"]}), "small": [], "zstd": []}
    infos = {}
    for s in src["objects"]:
        if s["file"] not in infos:
            info = subprocess.run([zt, "info", "--json", os.path.join(src["root"], s["file"])],
                                  check=True, capture_output=True, timeout=120).stdout
            infos[s["file"]] = json.loads(info)
        comp = infos[s["file"]]["objects"][s["object"]]["components"]["data"]
        digest = file_sha256(s["raw"])
        if s["zstd"]:
            out["zstd"].append([s["file"], s["object"], digest, comp["digest"]])
        elif s["file"] != src["big"]["file"]:
            out["small"].append([s["file"], s["object"], digest])
    out["big_path"] = "/v1/files/%s/objects/%s/data" % (src["big"]["file"], src["big"]["object"])
    out["big_raw"] = src["big"]["raw"]
    out["big_size"] = os.path.getsize(src["big"]["raw"])
    out["big_digest"] = file_sha256(src["big"]["raw"])
    out["uploads"] = [{"path": u, "sha256": file_sha256(u)} for u in src["uploads"]]
    out["drops"] = [file_sha256(d) for d in src.get("drop_raws", [])]
    with open(os.path.join(state, "files.json"), "w") as f:
        json.dump(out, f)
    return 0


def run(state):
    with open(os.path.join(state, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(state, "files.json")) as f:
        files = json.load(f)
    cfg["names"] = files["names"]
    deadline = T0 + cfg["seconds"]
    stats, stop, samples, dropped, hups = Stats(), threading.Event(), [], {}, [0]
    side = []
    rss0, fds0, files0 = proc_sample(cfg)
    samples.append((0.0, rss0, fds0 - files0, fds0, files0))
    if cfg.get("sidecar"):
        srss0, sfds0, sfiles0 = side_sample(cfg)
        side.append((0.0, srss0, sfds0 - sfiles0, sfds0, sfiles0))
        print("soak: reads through the sidecar, pid %d on port %d; before: rss=%.1f MiB fds=%d"
              % (cfg["read_pid"], cfg["read_port"], srss0 / MiB, sfds0), flush=True)
    print("soak: %d connections for %d s against pid %d; before: rss=%.1f MiB fds=%d (files %d)"
          % (cfg["connections"], cfg["seconds"], cfg["pid"], rss0 / MiB, fds0, files0), flush=True)
    big_sem = threading.Semaphore(2)
    workers = [Worker(i, cfg, files, stats, deadline, big_sem) for i in range(cfg["connections"])]
    threads = [threading.Thread(target=wk.run) for wk in workers]
    bg = [
        threading.Thread(target=renamer, args=(cfg, deadline, dropped, stop)),
        threading.Thread(target=hupper, args=(cfg, deadline, stop, hups)),
        threading.Thread(target=monitor, args=(cfg, stats, deadline, stop, samples, side)),
    ]
    for t in threads + bg:
        t.start()
    for t in threads:
        t.join(cfg["seconds"] + 300)
    hung = sum(t.is_alive() for t in threads)
    stop.set()
    for t in bg:
        t.join(60)

    problems = []
    if hung:
        problems.append("%d client threads still running 300 s after the deadline" % hung)
    nup, nsess = verify_end(cfg, workers, dropped, problems)
    # descriptors back to where they were once the clients are gone (10 s at most),
    # but for the files the root gained
    fds_end = files_end = upconns = 0
    for _ in range(50):
        rss_end, fds_end, files_end = proc_sample(cfg)
        upconns = conns_to(cfg["port"]) if cfg.get("sidecar") else 0
        if fds_end - files_end - upconns <= fds0 - files0 + 4:
            break
        time.sleep(0.2)
    if fds_end - files_end - upconns > fds0 - files0 + 4:
        problems.append("descriptors after the clients left: %d for %d files and %d sidecar "
                        "connections, before: %d for %d" % (fds_end, files_end, upconns, fds0, files0))
    ok_rss, why_rss = flat(samples, 1, 32 * MiB, 0.10)
    ok_fds, why_fds = flat(samples, 2, 64, 0.0)
    if not ok_rss:
        problems.append("RSS grew: " + why_rss)
    if not ok_fds:
        problems.append("descriptors grew: " + why_fds)
    if cfg.get("sidecar"):
        srss_end = sfds_end = 0
        for _ in range(50):
            srss_end, sfds_end, _f = side_sample(cfg)
            if sfds_end <= sfds0 + 4:
                break
            time.sleep(0.2)
        ok_srss, why_srss = flat(side, 1, 32 * MiB, 0.10)
        ok_sfds, why_sfds = flat(side, 2, 64, 0.0)
        if not ok_srss:
            problems.append("sidecar RSS grew: " + why_srss)
        if not ok_sfds:
            problems.append("sidecar descriptors grew: " + why_sfds)
    if stats.nfail:
        problems.append("%d unexpected answers (first ones below)" % stats.nfail)

    elapsed = time.monotonic() - T0
    print("soak: requests by kind and status:")
    for (kind, st), n in sorted(stats.status.items()):
        print("  %-13s %3d %9d" % (kind, st, n))
    print("soak: %d requests in %.0f s (%.0f/s), %.1f GB read or sent, %d SIGHUPs, "
          "%d names renamed over, %d uploaded names and %d session files verified"
          % (stats.total(), cfg["seconds"], stats.total() / cfg["seconds"], stats.bytes / 1e9,
             hups[0], len(dropped), nup, nsess))
    print("soak: RSS: %s" % why_rss)
    print("soak: descriptors not held by catalog files%s: %s; before %d, after %d"
          % (" (after: nor by the sidecar's %d connections)" % upconns if cfg.get("sidecar") else "",
             why_fds, fds0 - files0, fds_end - files_end - upconns))
    if cfg.get("sidecar"):
        print("soak: sidecar RSS: %s; start %.1f MiB, end %.1f MiB"
              % (why_srss, srss0 / MiB, srss_end / MiB))
        print("soak: sidecar descriptors: %s; before %d, after %d"
              % (why_sfds, sfds0, sfds_end))
    for f in stats.failures:
        print("  failure: " + f)
    for p in problems:
        print("FAIL " + p)
    print("soak: %s after %.0f s" % ("PASS" if not problems else "FAIL", elapsed), flush=True)
    return 0 if not problems else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "prep":
        sys.exit(prep(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        sys.exit(run(sys.argv[2]))
    sys.exit(__doc__)
