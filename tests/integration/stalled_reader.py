#!/usr/bin/python3
"""stalled_reader.py PORT PATH [ABOVE]: asks for PATH on 127.0.0.1:PORT with a small receive
buffer, reads the first bytes of the answer, then reads nothing more; prints the most bytes
the server's socket held not yet acknowledged (tx_queue of /proc/net/tcp: unsent plus in
flight) once that number has stayed the same for 10 reads in a row (a read every 50 ms, at
most 600 reads), or, with ABOVE, as soon as it is above ABOVE (a slow server cannot make a
pause look settled then; after 600 reads the most seen); "unstable N" when it never settled."""
import socket
import sys
import time

port, path = int(sys.argv[1]), sys.argv[2]
above = int(sys.argv[3]) if len(sys.argv) > 3 else None
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
s.connect(("127.0.0.1", port))
s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
first = s.recv(4096)
if not first.startswith(b"HTTP/1.1 200"):
    sys.exit(f"answer: {first[:100]!r}")
me = s.getsockname()[1]
# the server's end: local port PORT, remote port ours (hex, in /proc/net/tcp)
want = (f"0100007F:{port:04X}", f"0100007F:{me:04X}")


def tx_queue():
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fld = line.split()
            if (fld[1], fld[2]) == want:
                return int(fld[4].split(":")[0], 16)
    return None


last, same, most = None, 0, 0
for _ in range(600):
    q = tx_queue()
    most = max(most, q or 0)
    if above is not None and most > above:
        print(most)
        break
    same = same + 1 if q == last and q and above is None else 0
    if same >= 10:
        print(most)
        break
    last = q
    time.sleep(0.05)
else:
    print(most if above is not None else f"unstable {last}")
s.close()
