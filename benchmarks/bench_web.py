"""The web page's server side under load (issue 6). Prints a table.

Serves the real referee service (`referee.service.create_demo_service`, the simulated table
playing a match in real time) with waitress exactly as `referee demo` does, then measures over
loopback HTTP:

- state: `GET /api/state` latency (the payload every page fetches and every push carries)
- frame: `GET /api/frame.jpg` latency (the camera picture with the overlay, refreshed ~3/s)
- push: with N pages connected to `/api/events`, the time from a control's POST being sent to
  every page having received the new state (Server-Sent Events fan-out)

Targets: a verdict reaches every phone at the table in well under a second (players look up
right after their move); the state stays cheap enough to serve a dozen phones on a Pi.
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.service import create_demo_service
from web.server import make_server

CLIENTS = 8
ROUNDS = 20


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


def main() -> int:
    db = Path(tempfile.mkdtemp()) / "bench_web.sqlite"
    service = create_demo_service(db, game="dition", seed=1, realtime=True)
    service.start()
    server = make_server(service, host="127.0.0.1", port=0)
    port = server.effective_port
    threading.Thread(target=server.run, daemon=True).start()
    time.sleep(2.0)  # let the simulated match get going

    rows = []
    for name, path in (("state", "/api/state"), ("frame", "/api/frame.jpg")):
        times, sizes = [], []
        for _ in range(ROUNDS * 2):
            dt, size = _get(port, path)
            times.append(dt * 1000)
            sizes.append(size)
        rows.append((name, statistics.median(times), _pct(times, 0.95),
                     f"{statistics.median(sizes) / 1024:.1f} KiB"))

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
    server.close()
    service.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
