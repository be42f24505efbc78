"""Send raw bytes over one TCP connection and print the whole answer.

usage: rawhttp.py HOST PORT FILE SECONDS
Exit 0 when the server closed the connection, 124 when SECONDS passed first.
The answer goes to stdout as bytes, unchanged."""
import socket
import sys
import time


def main():
    host, port, path, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    data = open(path, "rb").read()
    s = socket.create_connection((host, port), timeout=limit)
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    end = time.monotonic() + limit
    out = sys.stdout.buffer
    closed = False
    while time.monotonic() < end:
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        out.write(chunk)
    out.flush()
    s.close()
    sys.exit(0 if closed else 124)


main()
