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
hold, and the server's resident memory (RSS):

- cold: the server has started, served its first camera picture and one `/api/state`, and no
  stream client has ever connected. The demo's own memory settles first: its simulated camera
  keeps its last 12 rendered scenes (`hardware.sim.render`, about 100 MB at 1280x960) and fills
  that cache during the match's first minute. That is the camera's memory, not the server's
  (measured with no client at all: 196 MB after the first picture, 260 MB from 60 s on, flat to
  180 s; `tracemalloc` puts the growth in `hardware/sim/render.py`'s cache). Cold is taken
  once the floors (lowest samples) of three 10 s windows in a row agree within 2 %; the
  reading right after the first picture is printed too, and the streams' own memory is what
  warm and after add to cold.
- warm: after a 10 s round of the same clients, once the server closed their connections
  (every worker that will ever run a stream has run one).
- after: once the clients of the hold left and the server closed all their connections.
- peak: the largest sample during the hold.

Cold, warm and after are taken at rest: the match is paused (a control, as the page's pause
button) until the reading is steady, so the frame thread's per-frame arrays (a render and its
vision, tens of MB, coming and going several times a second) are not in them; running, any one
sample moves by +-50 MB. Memory the streams freed goes back to the system within seconds
(`malloc_trim` in the server's maintenance, `web.server`). The readings are split by kind of
mapping (C heap, thread stacks, other anonymous, files) to show where memory goes. Targets:
p99 < 1 s throughout, memory after within 20 % of cold.
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


def _rss_floor(pid: int, seconds: float = 10.0) -> float:
    """The lowest resident memory sampled 4 times a second over `seconds` (between frames)."""
    samples = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        samples.append(_rss_mb(pid))
        time.sleep(0.25)
    return min(samples)


def _settle(pid: int, *, spread: float = 0.02, max_s: float = 300.0) -> float:
    """Seconds until the demo's own memory levels off: the floors of three 10 s windows in a
    row within `spread` of each other (its render cache is full); at most `max_s`."""
    t0 = time.monotonic()
    floors = [_rss_floor(pid), _rss_floor(pid)]
    while time.monotonic() - t0 < max_s:
        floors.append(_rss_floor(pid))
        last = floors[-3:]
        if max(last) - min(last) <= spread * min(last):
            break
    return time.monotonic() - t0


def _smaps_mb(pid: int) -> dict[str, float]:
    """Resident MB by kind of mapping: the C heap, thread stacks (8 MiB mappings), other
    anonymous memory (large blocks, Python's object arenas, OpenCV), files (code, libraries)."""
    kinds: dict[str, float] = {"heap": 0.0, "stacks": 0.0, "anonymous": 0.0, "files": 0.0}
    kind = "files"
    with open(f"/proc/{pid}/smaps", encoding="ascii", errors="replace") as fh:
        for line in fh:
            fields = line.split()
            if "-" in fields[0] and not fields[0].endswith(":"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                name = fields[5] if len(fields) > 5 else ""
                if name == "[heap]":
                    kind = "heap"
                elif name.startswith("/"):
                    kind = "files"
                elif not name and (hi - lo) // 1024 in (8188, 8192):
                    kind = "stacks"
                else:
                    kind = "anonymous"
            elif fields[0] == "Rss:":
                kinds[kind] += int(fields[1]) / 1024
    return kinds


def _at_rest(port: int, pid: int, max_s: float = 30.0) -> tuple[float, dict[str, float]]:
    """(resident MB, by kind) with the match paused: the frame thread idles, so what is left is
    what the process keeps, not the arrays of the frame it happens to be on. Memory freed is
    given back to the system every few seconds (`malloc_trim` in the server's maintenance), so
    the reading is the median of 3 s once it is within 1 % of the 3 s before (at most
    `max_s`)."""
    assert _post(port, "/api/control/pause", {}) == 200
    time.sleep(1.0)  # the step in progress ends
    samples: list[float] = []
    end = time.monotonic() + max_s
    while time.monotonic() < end:
        samples.append(_rss_mb(pid))
        time.sleep(0.25)
        if len(samples) >= 24:
            now, before = statistics.median(samples[-12:]), statistics.median(samples[-24:-12])
            if abs(now - before) <= 0.01 * before:
                break
    kinds = _smaps_mb(pid)
    assert _post(port, "/api/control/resume", {}) == 200
    return statistics.median(samples[-12:]), kinds


def _server_connections(port: int) -> int:
    """Connections the server still holds on `port` (open or half-closed by the client)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            # 0A listening, 06 TIME_WAIT (closed on both sides: no server memory left)
            if int(local.rsplit(":", 1)[1], 16) == port and state not in ("0A", "06"):
                count += 1
    return count


def _wait_closed(port: int, timeout_s: float = 60.0) -> float:
    """Seconds until the server has closed every stream's connection (event streams notice a
    gone client at their next write: a state or a keep-alive, at most 15 s apart)."""
    t0 = time.monotonic()
    while _server_connections(port) and time.monotonic() - t0 < timeout_s:
        time.sleep(0.5)
    if _server_connections(port):
        raise SystemExit(f"the server still holds {_server_connections(port)} connections "
                         f"{timeout_s:g} s after the clients left")
    return time.monotonic() - t0


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
        _get(port, "/api/state")
        first, _ = _at_rest(port, server.pid)
        settle_s = _settle(server.pid)
        cold, cold_kinds = _at_rest(port, server.pid)
        # A first round: every worker that will ever run a stream runs one.
        warm_up = _Streams(port, ["/api/events"] * events + ["/api/stream.mjpg"] * pictures)
        warm_up.start()
        time.sleep(10.0)
        warm_up.close()
        _wait_closed(port)
        warm, _ = _at_rest(port, server.pid)
        streams = _Streams(port, ["/api/events"] * events + ["/api/stream.mjpg"] * pictures)
        streams.start()
        latencies: list[float] = []
        peak = warm
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
        closed_s = _wait_closed(port)
        after, after_kinds = _at_rest(port, server.pid)
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
    change = (after - cold) / cold * 100
    print(f"server memory at rest (RSS, match paused, steady): {first:.0f} MB right "
          f"after the first picture; cold {cold:.0f} MB once the demo's own memory settled "
          f"({settle_s:.0f} s); warm {warm:.0f} MB after a 10 s round of the same clients; "
          f"after {after:.0f} MB once the server had closed every connection ({closed_s:.0f} s "
          f"after the clients left): {change:+.1f} % of cold, {(after - warm) / warm * 100:+.1f} "
          f"% of warm; peak during the hold {peak:.0f} MB (running)")
    print("  by kind, cold -> after (MB): " + ", ".join(
        f"{kind} {cold_kinds[kind]:.0f} -> {after_kinds[kind]:.0f}" for kind in cold_kinds))
    ok = p99 < 1000 and abs(change) <= 20 and held_min == events + pictures
    print("targets (p99 < 1 s, memory after within 20 % of cold, every stream held): "
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
