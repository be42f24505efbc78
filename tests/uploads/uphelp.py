#!/usr/bin/python3
"""Small helpers for the upload test scripts (stdlib only; run with /usr/bin/python3).

Subcommands (exit 0 = yes/ok, 1 = no, with a reason on stderr):
  get FILE KEY...            print the JSON value at KEY... (strings bare, others as JSON);
                             prints MISSING and exits 1 if a key is absent
  errbody FILE CODE          FILE is {"error":{"code":CODE,"message":<non-empty str>}};
                             prints the message
  listing FILE NAME FIELD    field FIELD of the entry NAME in a /v1/files body
                             (MISSING and exit 1 if there is no such entry)
  names FILE                 every file name in a /v1/files body, one a line
  u64 OUT V...               write the integers V... as little-endian u64 to OUT
  partial PORT METHOD TARGET FILE NBYTES HOLD [HEADER...]
                             open a socket, send the request head with Content-Length = size
                             of FILE, send only its first NBYTES bytes, wait HOLD seconds
                             (reading whatever the server answers), then reset the
                             connection. Prints the status the server sent, or 000.
"""
import json
import socket
import struct
import sys
import time


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
            v = f.get(field)
            print("-" if v is None else (v if isinstance(v, str) else json.dumps(v)))
            return
    print("MISSING")
    sys.exit(1)


def cmd_names(path):
    for f in load(path).get("files", []):
        print(f.get("name"))


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


def main(argv):
    if len(argv) < 2:
        fail(__doc__)
    c, a = argv[1], argv[2:]
    if c == "get":
        cmd_get(a[0], a[1:])
    elif c == "errbody":
        cmd_errbody(*a)
    elif c == "listing":
        cmd_listing(*a)
    elif c == "names":
        cmd_names(*a)
    elif c == "u64":
        cmd_u64(a[0], a[1:])
    elif c == "partial":
        cmd_partial(a[0], a[1], a[2], a[3], a[4], a[5], a[6:])
    else:
        fail("unknown subcommand %s\n%s" % (c, __doc__))


if __name__ == "__main__":
    main(sys.argv)
