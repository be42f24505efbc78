"""4 KiB GETs on other connections while a large PUT is verified and published.

    publish_stall.py PORT FILE.zt N_CONNECTIONS

Each of N_CONNECTIONS threads sends keep-alive GETs of /v1/files/small.zt/objects/small/data
on its own connection, from before the PUT of FILE.zt (as /v1/files/stall.zt) starts until it
has been answered, and records each request's latency. The PUT body is sent by this process
too, so the moment its last byte was written is known: what follows is the server's
verify, fsync and publish. Prints, for the GETs that were waiting during that phase, their
count and the longest and 99th-percentile latency."""
import http.client
import sys
import threading
import time

port, path, nconn = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
URL = "/v1/files/small.zt/objects/small/data"
stop = threading.Event()
samples = []  # (start, end)
lock = threading.Lock()


def getter():
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    mine = []
    deadline = time.monotonic() + 600
    while not stop.is_set() and time.monotonic() < deadline:
        t0 = time.monotonic()
        c.request("GET", URL)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            raise SystemExit("GET answered %d" % r.status)
        mine.append((t0, time.monotonic()))
    with lock:
        samples.extend(mine)


threads = [threading.Thread(target=getter) for _ in range(nconn)]
for t in threads:
    t.start()
time.sleep(0.5)
size = __import__("os").path.getsize(path)
put = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
put.putrequest("PUT", "/v1/files/stall.zt")
put.putheader("Content-Length", str(size))
put.endheaders()
t_body0 = time.monotonic()
with open(path, "rb") as f:
    while True:
        b = f.read(1 << 20)
        if not b:
            break
        put.send(b)
t_body = time.monotonic()
resp = put.getresponse()
resp.read()
t_done = time.monotonic()
time.sleep(0.2)
stop.set()
for t in threads:
    t.join()
if resp.status not in (200, 201):
    raise SystemExit("PUT answered %d" % resp.status)
during = sorted(e - s for s, e in samples if e > t_body and s < t_done)
if not during:
    raise SystemExit("no GET overlapped the publish")
p99 = during[min(len(during) - 1, int(len(during) * 0.99))]
print("body sent in %.2f s; verify+fsync+publish took %.2f s (until the answer)"
      % (t_body - t_body0, t_done - t_body))
print("GETs overlapping it: %d; longest %.1f ms, p99 %.1f ms, median %.1f ms"
      % (len(during), 1e3 * during[-1], 1e3 * p99, 1e3 * during[len(during) // 2]))
