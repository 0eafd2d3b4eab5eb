"""The web page's server side under load (issue 6). Prints a table.

Serves the real referee service (`referee.service.create_demo_service`, the simulated table
playing a match in real time) with waitress exactly as `referee demo` does, then measures over
loopback HTTP:

- state: `GET /api/state` latency (the payload every page fetches and every push carries)
- frame: `GET /api/frame.jpg` latency with N pages each refreshing the camera picture 3 times
  a second (the page's own rate)
- push: with N pages connected to `/api/events`, the time from a control's POST being sent to
  every page having received the new state (Server-Sent Events fan-out)

Targets: a verdict reaches every phone at the table in well under a second (players look up
right after their move); the state stays cheap enough to serve a dozen phones on a Pi.

Then the load (issue 16): `referee demo` in its own process, 200 clients holding `/api/events`
and 50 holding `/api/stream.mjpg` for `--seconds` (default 60), spread over loopback addresses
127.0.1.x (5 streams each, under the per-address cap); meanwhile `/api/state` is polled 5 times a
second. Printed: how many streams were held, the state's latency (median, p99, max) during the
hold, and the server's resident memory before any client, after a 10 s warm-up round of the same
clients (what stays for good: the stacks of workers that ever ran a stream), at the peak and
10-20 s after the clients left.
Targets: p99 < 1 s throughout, memory back within 20 %.
"""

from __future__ import annotations

import argparse
import http.client
import json
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from web.server import make_server, stop_server

CLIENTS = 8
ROUNDS = 20
FRAME_SECONDS = 6.0


def _get(port: int, path: str) -> tuple[float, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    t0 = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    dt = time.perf_counter() - t0
    conn.close()
    return dt, len(body)


def _post(port: int, path: str, body: dict[str, object]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, body=json.dumps(body),
                 headers={"Content-Type": "application/json",
                          "Origin": f"http://127.0.0.1:{port}"})
    status = conn.getresponse().status
    conn.close()
    return status


class _Listener(threading.Thread):
    """One page: reads the event stream and notes when each status arrives."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.seen: list[tuple[float, str]] = []
        self.ready = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("GET", "/api/events")
        response = conn.getresponse()
        buffer = b""
        while True:
            chunk = response.fp.readline()
            if not chunk:
                return
            buffer += chunk
            if chunk == b"\n" and buffer.strip():
                for line in buffer.split(b"\n"):
                    if line.startswith(b"data: "):
                        status = json.loads(line[6:]).get("status", "")
                        with self.lock:
                            self.seen.append((time.perf_counter(), status))
                        self.ready.set()
                buffer = b""

    def first_after(self, t0: float, status: str) -> float | None:
        with self.lock:
            for t, s in self.seen:
                if t >= t0 and s == status:
                    return t
        return None


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _demo_service(db: Path) -> object:
    try:
        from referee.service import create_demo_service
    except ImportError:  # built the way `referee demo` builds it
        from referee.log import MatchLog
        from referee.service import RefereeService
        from referee.simtable import scripted_table

        return RefereeService(MatchLog(db), lambda restart: scripted_table("dition", 1 + restart),
                              game="dition", source_spec="sim:dition:1", resume=False, demo=True,
                              max_fps=5.0)
    return create_demo_service(db, game="dition", seed=1, realtime=True)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _rss_window(pid: int, seconds: float) -> float:
    """The median resident memory over `seconds` (sampled twice a second)."""
    samples = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        samples.append(_rss_mb(pid))
        time.sleep(0.5)
    return statistics.median(samples)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Streams(threading.Thread):
    """Many stream clients on one selector: each connects from its own loopback address
    (127.0.1.x, `per_address` streams each), sends its GET and reads everything that comes."""

    def __init__(self, port: int, paths: list[str], per_address: int = 5) -> None:
        super().__init__(daemon=True)
        self.selector = selectors.DefaultSelector()
        self.stop = threading.Event()
        self.status: dict[int, bytes] = {}
        self.bytes = 0
        self.closed_early = 0
        self.socks = []
        for i, path in enumerate(paths):
            sock = socket.socket()
            sock.bind((f"127.0.1.{1 + i // per_address}", 0))
            sock.connect(("127.0.0.1", port))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ, i)
            self.socks.append(sock)

    def run(self) -> None:
        while not self.stop.is_set():
            for key, _ in self.selector.select(0.2):
                try:
                    data = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    self.selector.unregister(key.fileobj)
                    self.closed_early += 1
                    continue
                if key.data not in self.status:
                    self.status[key.data] = data.split(b"\r\n", 1)[0]
                self.bytes += len(data)

    def held(self) -> int:
        return sum(1 for line in self.status.values() if b" 200 " in line) - self.closed_early

    def close(self) -> None:
        self.stop.set()
        self.join(5)
        for sock in self.socks:
            sock.close()


def load(seconds: float, events: int, pictures: int) -> int:
    """The load phase (module docstring); returns 0 when both targets are met."""
    db = Path(tempfile.mkdtemp()) / "bench_web_load.sqlite"
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "referee", "demo", "--port", str(port), "--db", str(db),
         "--quiet"], cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in server.stdout:  # type: ignore[union-attr]
            if line.startswith("serving on"):
                break
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if _get(port, "/api/frame.jpg")[1] > 1000:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        cold = _rss_mb(server.pid)
        # A first round touches what stays for good: the stacks of the workers that ever ran a
        # stream, the encoder's buffers. Memory given back is measured against after it.
        warm = _Streams(port, ["/api/events"] * events + ["/api/stream.mjpg"] * pictures)
        warm.start()
        time.sleep(10.0)
        warm.close()
        time.sleep(10.0)
        before = _rss_window(server.pid, 10.0)  # the demo's own memory moves by tens of MB
        streams = _Streams(port, ["/api/events"] * events + ["/api/stream.mjpg"] * pictures)
        streams.start()
        latencies: list[float] = []
        peak = before
        held_min = events + pictures
        t_end = time.monotonic() + seconds
        time.sleep(3.0)  # every stream has sent its first answer
        while time.monotonic() < t_end:
            dt, _ = _get(port, "/api/state")
            latencies.append(dt * 1000)
            peak = max(peak, _rss_mb(server.pid))
            held_min = min(held_min, streams.held())
            time.sleep(max(0.0, 0.2 - dt))
        held_end = streams.held()
        received_mb = streams.bytes / 1e6
        streams.close()
        time.sleep(10.0)
        after = _rss_window(server.pid, 10.0)
        after_state = [_get(port, "/api/state")[0] * 1000 for _ in range(10)]
    finally:
        server.terminate()
        server.wait(30)
    p99 = _pct(latencies, 0.99)
    print(f"\nload: {events} event streams + {pictures} MJPEG clients held {seconds:g} s "
          f"(referee demo, loopback)")
    print(f"streams held: {held_min} at the least, {held_end} at the end "
          f"(of {events + pictures}); {received_mb:.0f} MB received")
    print(f"/api/state during the hold: {len(latencies)} polls, median "
          f"{statistics.median(latencies):.0f} ms, p99 {p99:.0f} ms, max {max(latencies):.0f} ms"
          f"; after: median {statistics.median(after_state):.0f} ms")
    change = (after - before) / before * 100
    print(f"server memory (RSS): {cold:.0f} MB before any client, {before:.0f} MB after a 10 s "
          f"warm-up round, {peak:.0f} MB peak, {after:.0f} MB 10-20 s after they left "
          f"({change:+.0f} % of the warm figure; medians over 10 s)")
    ok = p99 < 1000 and abs(change) <= 20 and held_min == events + pictures
    print("targets (p99 < 1 s, memory within 20 %, every stream held): "
          + ("met" if ok else "NOT met"))
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load holds")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--mjpeg", type=int, default=50)
    parser.add_argument("--load-only", action="store_true", help="skip the first table")
    args = parser.parse_args(argv)
    if not args.load_only:
        basic()
    return load(args.seconds, args.events, args.mjpeg)


def basic() -> None:
    db = Path(tempfile.mkdtemp()) / "bench_web.sqlite"
    service = _demo_service(db)
    service.start()
    server = make_server(service, host="127.0.0.1", port=0)
    port = server.effective_port
    server_thread = threading.Thread(target=server.run, daemon=True)
    server_thread.start()
    deadline = time.monotonic() + 90  # let the simulated match get going
    while service.latest_jpeg(overlay=False) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2.0)

    rows = []
    times, sizes = [], []
    for _ in range(ROUNDS * 2):
        dt, size = _get(port, "/api/state")
        times.append(dt * 1000)
        sizes.append(size)
        time.sleep(0.05)
    rows.append(("state", statistics.median(times), _pct(times, 0.95),
                 f"{statistics.median(sizes) / 1024:.1f} KiB"))

    # every open page refreshes the camera picture about 3 times a second
    frame_times: list[float] = []
    frame_sizes: list[int] = []
    lock = threading.Lock()

    def phone() -> None:
        end = time.perf_counter() + FRAME_SECONDS
        while time.perf_counter() < end:
            dt, size = _get(port, "/api/frame.jpg")
            with lock:
                frame_times.append(dt * 1000)
                frame_sizes.append(size)
            time.sleep(max(0.0, 1 / 3 - dt))

    phones = [threading.Thread(target=phone) for _ in range(CLIENTS)]
    for t in phones:
        t.start()
    for t in phones:
        t.join()
    rows.append((f"frame, {CLIENTS} pages", statistics.median(frame_times),
                 _pct(frame_times, 0.95),
                 (f"{statistics.median(frame_sizes) / 1024:.0f} KiB, "
                 f"{len(frame_times) / FRAME_SECONDS:.1f} pictures/s served")))

    listeners = [_Listener(port) for _ in range(CLIENTS)]
    for listener in listeners:
        listener.start()
    for listener in listeners:
        listener.ready.wait(10)
    push = []
    for i in range(ROUNDS):
        command, status = ("pause", "paused") if i % 2 == 0 else ("resume", None)
        t0 = time.perf_counter()
        assert _post(port, f"/api/control/{command}", {}) == 200
        if status is None:
            time.sleep(0.05)
            continue
        deadline = time.perf_counter() + 5
        arrivals: list[float] = []
        while time.perf_counter() < deadline and len(arrivals) < CLIENTS:
            arrivals = [t for t in (lst.first_after(t0, status) for lst in listeners) if t]
            time.sleep(0.001)
        if len(arrivals) == CLIENTS:
            push.append((max(arrivals) - t0) * 1000)
    rows.append((f"push to {CLIENTS} pages", statistics.median(push), _pct(push, 0.95),
                 f"{len(push)}/{ROUNDS // 2} rounds"))

    print(f"web server (waitress, {CLIENTS} SSE clients, real demo service), loopback")
    print(f"{'what':<18} {'median ms':>10} {'p95 ms':>8}  note")
    for name, med, p95, note in rows:
        print(f"{name:<18} {med:>10.1f} {p95:>8.1f}  {note}")
    service.end_streams()  # the pages' streams end first, then the server stops
    stop_server(server, join=server_thread)
    service.stop()


if __name__ == "__main__":
    sys.exit(main())
