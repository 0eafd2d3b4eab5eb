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

from web.server import make_server

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


def main() -> int:
    db = Path(tempfile.mkdtemp()) / "bench_web.sqlite"
    service = _demo_service(db)
    service.start()
    server = make_server(service, host="127.0.0.1", port=0)
    port = server.effective_port
    threading.Thread(target=server.run, daemon=True).start()
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
    server.close()
    service.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
