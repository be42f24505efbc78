#!/usr/bin/python3
"""Small helpers for the end-to-end test scripts (stdlib only; run with
/usr/bin/python3). Shared by every suite through tests/sh/common.sh ($HELP).

Subcommands (exit 0 = yes/ok, 1 = no, with a reason on stderr):
  get FILE KEY...                print the JSON value at KEY... (strings bare, others as
                                 JSON); prints MISSING and exits 1 if a key is absent
  jsoneq A B                     the two files hold the same JSON value
  jsonsub A KEY... B             A's value at KEY path equals B's JSON value
  errbody FILE CODE              FILE is {"error":{"code":CODE,"message":<non-empty str>}};
                                 prints the message
  listing FILE NAME FIELD        print field FIELD (a dotted path) of the entry NAME in a
                                 /v1/files body ("-" if absent or null; "MISSING" and exit
                                 1 if there is no such entry)
  listcount FILE                 print "count" and check it equals len(files)
  names FILE                     every file name in a /v1/files body, one a line
  filenames FILE                 the same without the safetensors views and indexes
  manifest FILE OBJECT COMP KEY  print a component field from manifest JSON
  multipart BODY CTYPE FULL LEN RANGE...
                                 check a multipart/byteranges body: one part per RANGE
                                 ("a-b" inclusive, resolved), in order, each with the right
                                 Content-Range "bytes a-b/LEN" and the bytes FULL[a..b]
  quote TEXT                     percent-encode every byte outside [A-Za-z0-9_.~-]
  rawreq PORT METHOD TARGET PREFIX [HEADER...]
                                 send one request on a fresh socket (Connection: close), write
                                 the header block to PREFIX.hdr and every byte after it to
                                 PREFIX.body (so a HEAD body shows), print the status
  ranges N STEP                  print "bytes=0-0,STEP-STEP,..." with N single-byte ranges
  u64 OUT V...                   write the integers V... as little-endian u64 to OUT
  partial PORT METHOD TARGET FILE NBYTES HOLD [HEADER...]
                                 open a socket, send the request head with Content-Length =
                                 size of FILE, send only its first NBYTES bytes, wait HOLD
                                 seconds (reading whatever the server answers), then reset
                                 the connection. Prints the status the server sent, or 000.
  slowget PORT TARGET OUT RATE   GET TARGET with a 64 KiB receive buffer, reading at most
                                 RATE bytes a second (60 s at most), the body into OUT; print
                                 the status. Unlike curl --limit-rate (an average that lets a
                                 loopback transfer finish at once), the server stays
                                 blocked on the socket for the whole transfer, which lasts
                                 at least SIZE / RATE seconds (SIZE: the bytes it reads).
                                 PORT may be unix:PATH (a Unix socket; Host: localhost).
  heldget PORT TARGET OUT GATE [BYTES]
                                 GET TARGET with a 64 KiB receive buffer; once the header
                                 block (and BYTES bytes of the body, 0 by default) has
                                 arrived, write its status to GATE.started and
                                 read nothing more until the file GATE exists (120 s at
                                 most), then read the rest at full speed into OUT (the
                                 header block into OUT.hdr); print the status. While held, a body larger than the socket
                                 buffers is certainly still in flight, however long the
                                 steps between take (slowget's duration is a rate, which a
                                 busy machine can outlast). PORT as for slowget.
"""
import json
import os
import re
import socket
import struct
import sys
import time
import urllib.parse


def fail(msg):
    sys.stderr.write(msg + "\n")
    sys.exit(1)


def load(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"))


def cmd_get(path, keys):
    try:
        v = load(path)
    except Exception as e:  # noqa: BLE001
        print("MISSING")
        fail("not JSON: %s" % e)
    for k in keys:
        if isinstance(v, dict) and k in v:
            v = v[k]
        elif isinstance(v, list) and k.isdigit() and int(k) < len(v):
            v = v[int(k)]
        else:
            print("MISSING")
            sys.exit(1)
    print(v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":")))


def cmd_jsoneq(a, b):
    x, y = load(a), load(b)
    if x != y:
        fail("JSON differs:\n  %s\n  %s" % (json.dumps(x)[:400], json.dumps(y)[:400]))


def cmd_jsonsub(args):
    a, keys, b = args[0], args[1:-1], args[-1]
    x = load(a)
    for k in keys:
        x = x[k]
    y = load(b)
    if x != y:
        fail("JSON differs:\n  %s\n  %s" % (json.dumps(x)[:400], json.dumps(y)[:400]))


def cmd_errbody(path, code):
    try:
        j = load(path)
    except Exception as e:  # noqa: BLE001
        fail("not JSON: %s" % e)
    if not isinstance(j, dict) or set(j) != {"error"} or not isinstance(j["error"], dict):
        fail("not an error object: %r" % (j,))
    e = j["error"]
    if e.get("code") != code:
        fail("code %r, expected %r (message %r)" % (e.get("code"), code, e.get("message")))
    if not isinstance(e.get("message"), str) or not e["message"]:
        fail("message missing or empty: %r" % (e,))
    print(e["message"])


def cmd_listing(path, name, field):
    j = load(path)
    for f in j.get("files", []):
        if f.get("name") == name:
            v = f
            for k in field.split("."):
                if not isinstance(v, dict) or k not in v:
                    v = None
                    break
                v = v[k]
            print("-" if v is None else (v if isinstance(v, str) else json.dumps(v)))
            return
    print("MISSING")
    sys.exit(1)


def cmd_listcount(path):
    j = load(path)
    if not isinstance(j.get("files"), list) or j.get("count") != len(j["files"]):
        fail("count %r vs %d files" % (j.get("count"), len(j.get("files", []))))
    print(j["count"])


def cmd_names(path):
    for f in load(path).get("files", []):
        print(f.get("name"))


def cmd_filenames(path):
    """The names of the listed files: not the views and indexes made from them."""
    for f in load(path).get("files", []):
        if "view_of" not in f and f.get("format") != "safetensors-index":
            print(f.get("name"))


def cmd_manifest(path, obj, comp, key):
    j = load(path)
    v = j["objects"][obj]["components"][comp].get(key)
    print("-" if v is None else v)


def cmd_multipart(body_path, ctype, full_path, length, ranges):
    body = open(body_path, "rb").read()
    full = open(full_path, "rb").read()
    length = int(length)
    m = re.match(r'^multipart/byteranges;\s*boundary=("?)([^";]+)\1\s*$', ctype.strip())
    if not m:
        fail("bad Content-Type %r" % ctype)
    b = m.group(2).encode()
    delim = b"--" + b
    # Split on the delimiter lines; the closing one is delim + "--".
    end = body.rfind(b"\r\n" + delim + b"--")
    if end < 0:
        fail("no closing delimiter")
    if body[end:].rstrip(b"\r\n") != b"\r\n" + delim + b"--" and \
            body[end:] != b"\r\n" + delim + b"--\r\n":
        fail("junk after the closing delimiter: %r" % body[end:][:80])
    pieces = body[:end].split(b"\r\n" + delim + b"\r\n")
    if pieces[0] not in (b"",):
        # a preamble is allowed but this server sends none (just the CRLF)
        fail("unexpected preamble %r" % pieces[0][:80])
    parts = pieces[1:]
    if len(parts) != len(ranges):
        fail("%d parts, expected %d" % (len(parts), len(ranges)))
    for i, (p, r) in enumerate(zip(parts, ranges)):
        a, z = (int(x) for x in r.split("-"))
        hdr, sep, data = p.partition(b"\r\n\r\n")
        if not sep:
            fail("part %d: no header end" % i)
        hs = {}
        for line in hdr.split(b"\r\n"):
            k, _, v = line.decode("latin-1").partition(":")
            hs[k.strip().lower()] = v.strip()
        want = "bytes %d-%d/%d" % (a, z, length)
        if hs.get("content-range") != want:
            fail("part %d: Content-Range %r, expected %r" % (i, hs.get("content-range"), want))
        if data != full[a:z + 1]:
            fail("part %d (%s): %d bytes differ from the expected %d" % (i, r, len(data), z - a + 1))
    print(len(parts))


def cmd_rawreq(port, method, target, prefix, headers):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
    req = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n" % (method, target, port)
    for h in headers:
        req += h + "\r\n"
    s.sendall(req.encode("latin-1") + b"\r\n")
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
            if len(data) > 64 << 20:
                break
    except socket.timeout:
        pass
    s.close()
    head, sep, rest = data.partition(b"\r\n\r\n")
    with open(prefix + ".hdr", "wb") as f:
        f.write(head + sep)
    with open(prefix + ".body", "wb") as f:
        f.write(rest)
    status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "000"
    print(status)


def cmd_u64(out, vals):
    with open(out, "wb") as f:
        for v in vals:
            f.write(struct.pack("<Q", int(v)))


def cmd_partial(port, method, target, path, nbytes, hold, headers):
    data = open(path, "rb").read()
    nbytes = min(int(nbytes), len(data))
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: %d\r\n" % (
        method, target, port, len(data))
    for h in headers:
        head += h + "\r\n"
    s.sendall(head.encode("latin-1") + b"\r\n")
    got = b""
    try:
        s.sendall(data[:nbytes])
    except OSError:
        pass
    end = time.monotonic() + float(hold)
    s.settimeout(0.05)
    while time.monotonic() < end:
        try:
            d = s.recv(65536)
            if not d:
                break
            got += d
        except socket.timeout:
            continue
        except OSError:
            break
    # Reset rather than close politely: the server sees the client vanish.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    status = "000"
    if got.startswith(b"HTTP/"):
        parts = got.split(b" ", 2)
        if len(parts) > 1:
            status = parts[1].decode("latin-1")
    print(status)


def small_window_get(port, target):
    """A socket with a 64 KiB receive window that has sent GET TARGET."""
    if port.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr, host = port[len("unix:"):], "localhost"
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        addr, host = ("127.0.0.1", int(port)), "127.0.0.1:%s" % port
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)  # before connect: the window
    s.settimeout(10)
    s.connect(addr)
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
               % (target, host)).encode("latin-1"))
    return s


def write_response(got, out):
    """Write the body of the raw response got to out, its header block to out.hdr;
    print its status."""
    head, _, body = bytes(got).partition(b"\r\n\r\n")
    with open(out, "wb") as f:
        f.write(body)
    with open(out + ".hdr", "wb") as f:
        f.write(head + b"\r\n")
    parts = head.split(b" ", 2)
    print(parts[1].decode("latin-1") if head.startswith(b"HTTP/") and len(parts) > 1 else "000")


def cmd_heldget(port, target, out, gate, body_bytes="0"):
    s = small_window_get(port, target)
    got = bytearray()
    try:
        while b"\r\n\r\n" not in got or len(got) - got.index(b"\r\n\r\n") - 4 < int(body_bytes):
            d = s.recv(1 << 16)
            if not d:
                break
            got += d
    except OSError:
        pass
    parts = bytes(got).split(b" ", 2)
    status = parts[1].decode("latin-1") if got.startswith(b"HTTP/") and len(parts) > 1 else "000"
    with open(gate + ".started.tmp", "w") as f:
        f.write(status + "\n")
    os.rename(gate + ".started.tmp", gate + ".started")
    deadline = time.monotonic() + 120
    while not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            got += d
    except OSError:
        pass
    s.close()
    write_response(got, out)


def cmd_slowget(port, target, out, rate):
    s = small_window_get(port, target)
    step, pause = 16384, 16384 / float(rate)
    got = bytearray()  # appended in place: bytes += would copy it all at every step
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        d = s.recv(step)
        if not d:
            break
        got += d
        time.sleep(pause)
    s.close()
    write_response(got, out)


def main(argv):
    if len(argv) < 2:
        fail(__doc__)
    c, a = argv[1], argv[2:]
    cmds = {
        "get": lambda: cmd_get(a[0], a[1:]),
        "jsoneq": lambda: cmd_jsoneq(*a),
        "jsonsub": lambda: cmd_jsonsub(a),
        "errbody": lambda: cmd_errbody(*a),
        "listing": lambda: cmd_listing(*a),
        "listcount": lambda: cmd_listcount(*a),
        "names": lambda: cmd_names(*a),
        "filenames": lambda: cmd_filenames(*a),
        "manifest": lambda: cmd_manifest(*a),
        "multipart": lambda: cmd_multipart(a[0], a[1], a[2], a[3], a[4:]),
        "rawreq": lambda: cmd_rawreq(a[0], a[1], a[2], a[3], a[4:]),
        "quote": lambda: print(urllib.parse.quote(os.fsencode(a[0]), safe="")),
        "ranges": lambda: print("bytes=" + ",".join(
            "%d-%d" % (i * int(a[1]), i * int(a[1])) for i in range(int(a[0])))),
        "u64": lambda: cmd_u64(a[0], a[1:]),
        "partial": lambda: cmd_partial(a[0], a[1], a[2], a[3], a[4], a[5], a[6:]),
        "slowget": lambda: cmd_slowget(*a),
        "heldget": lambda: cmd_heldget(*a),
    }
    if c not in cmds:
        fail("unknown subcommand %s\n%s" % (c, __doc__))
    cmds[c]()


if __name__ == "__main__":
    main(sys.argv)
