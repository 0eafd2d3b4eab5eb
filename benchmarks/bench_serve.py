"""Where `referee serve`'s CPU goes on a Pi-like camera at 8 fps (issue 18). Prints a table.

Runs `referee serve --max-fps 8` in a child process, on a camera that costs what the Pi camera
costs: the fake picamera2 (picamera2's request queue and event loop thread, 30 fps, 2304x1296 as
Camera Module 3 streams, run at the frame rate `Picamera2Source` asks for, with libcamera's
buffers; each frame is judged in its buffer, as `referee serve` reads it (`read_borrowed`:
picamera2's `MappedArray`, no copy; `--copy-frames`: copied out by `make_array`, as before),
with its 640x360 YUV420 `lores` picture for the page) showing 60 frames of the simulated table
playing a match, rendered before the measurement starts, their lores copies too: no frame is
rendered or scaled while measuring (on a Pi the ISP delivers and scales them; rendering one here
takes ~300 ms of CPU and would swamp everything), and the fake's writing of each frame into its
buffer (the ISP's DMA on a Pi: no CPU there; `Picamera2.isp_cpu_s`) is left out of the figures.
The table changes
7.5 times a second, a move every ~1.2 s (a busy table: most matches are slower, so the match
log's share is high here); when the 60 frames run out the players start a new match (`new_match`,
as a page would) and the recording plays again. One page watches the way the live page does: the
event stream open and the camera picture fetched at the width it shows (`/api/frame.jpg?w=640`)
every 350 ms.

The window: from the child's first processed frame for `--seconds`. In it the child adds up
  - vision and rules: CPU time (`time.thread_time`) of the frame thread in `Referee.process`
    less its `emit` (OpenCV runs single-threaded here, so all of the vision is in that thread);
  - everything else: the process's CPU time (`time.process_time`) less that. It includes the
    match log (`emit`: the SQLite commit, the verdict's snapshot overlay and JPEG; printed on
    its own), the camera (the fake's event loop, standing in for picamera2's), reading frames,
    the web server, the page's picture (from the lores picture: drawn and encoded on the
    "frame-encoder" thread), the event stream's state JSON.
The CPU time of each kind of thread is read from /proc before and after the window (not in it:
a reading of the web server's 300 worker threads costs ~40 ms; each thread's scheduler time, in
ns); their sum falls short of the total by threads that ended inside the window.

Target: everything else <= 25 % of the process's CPU per processed frame.

    python benchmarks/bench_serve.py [--seconds 60] [--size 2304x1296] [--copy-frames]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_ELSE_SHARE = 0.25
STATS_PREFIX = "bench-serve-stats: "
TABLE_CHANGES_PER_S = 7.5


# --- the child: referee serve on a pre-rendered camera ---------------------------------------
def child(port: int, size: tuple[int, int], db: str, seconds: float,
          copy_frames: bool = False) -> None:
    import numpy as np

    import hardware
    from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
    from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source, preview_size
    from referee import loop
    from referee.cli import main
    from referee.simtable import Pace, scripted_match

    table, _ = scripted_match("dition", 3, pace=Pace(still=3, hand=3, verdict=4), size=size,
                              fps=8.0)
    frames: list[np.ndarray] = []
    with table:
        while len(frames) < 60:
            try:
                frames.append(table.read().image)
            except hardware.EndOfStream:
                break
            except hardware.CorruptFrameError:
                continue
    intrinsics = table.intrinsics

    from referee.service import RefereeService

    services: list[RefereeService] = []
    start = RefereeService.start

    def started(self: RefereeService) -> RefereeService:
        services.append(self)
        return start(self)

    RefereeService.start = started  # type: ignore[method-assign]
    rounds = [0]
    began: list[float] = []

    def show(index: int, wh: tuple[int, int]) -> np.ndarray:
        # the table changes 7.5 times a second of real time, whatever the camera's frame rate
        # (a move every ~1.2 s: a busy table). When the recording runs out, the players clear
        # the board and start a new match (replaying it on the old one would have the referee
        # see every disc vanish: a warning a frame)
        began[:] = began or [time.monotonic()]
        step = int((time.monotonic() - began[0]) * TABLE_CHANGES_PER_S)
        shown, played = step % len(frames), step // len(frames)
        if played > rounds[0] and services:
            rounds[0] = played
            services[0].command("new_match", {})
        return frames[shown]

    camera = FakeCamera(fps=30.0, settle_frames=4, frame_fn=show)
    # the lores stream the source asks for: the ISP's copies of the frames made now, as the
    # frames themselves were (on a Pi the ISP scales each frame in hardware, at no CPU cost)
    lores = preview_size(size, Picamera2Params().preview_width)
    if lores is not None:
        camera.warm_isp(frames, lores)
    system = FakeCameraSystem([camera])

    def open_camera(spec: str, **options: object) -> Picamera2Source:
        source = Picamera2Source(0, Picamera2Params(size=size),
                                 picamera2_class=system.picamera2_class)
        source.intrinsics = intrinsics  # type: ignore[attr-defined] - as from a calibration
        if copy_frames:  # as before frames were lent: every frame read copied out (make_array)
            source.read_borrowed = None  # type: ignore[assignment,method-assign]
        return source

    hardware.register_source("benchcam", open_camera, description="bench_serve's camera")
    # OpenCV's own worker threads would run part of the vision outside the frame thread, where
    # its CPU time would count as "everything else": one thread, so the split is by thread
    import cv2

    cv2.setNumThreads(1)

    # The measured window: from the first frame for `seconds`. Its ends are taken in the frame
    # thread, the per-thread figures read from /proc before its start and after its end (with the
    # web server's 300 worker threads a reading costs ~40 ms: inside the window it would be
    # counted as the referee's "everything else")
    window: dict[str, Any] = {"state": "before", "frames": 0, "vision_s": 0.0, "record_s": 0.0,
                              "read_s": 0.0, "events": {}, "encoded": 0}
    process = loop.Referee.process
    emit = loop.Referee.emit
    inside = threading.local()

    def timed(self: loop.Referee, image: np.ndarray,
              preview: Any = None) -> list[dict[str, object]]:
        if window["state"] == "before":
            window["isp0"] = _isp_cpu_s(system)
            window["sensor0"], window["t0"] = _sensor_frames(system), time.monotonic()
            window["threads0"] = _thread_cpu()
            window["state"] = "open"
            window["end"] = time.monotonic() + seconds
            window["cpu0"] = time.process_time()
        if window["state"] != "open":
            return process(self, image, preview)
        t0 = time.thread_time()
        inside.record_s = 0.0
        try:
            return process(self, image, preview)
        finally:
            # the vision and the rules: the call less its record keeping (`emit`: the SQLite
            # commit, the snapshot's overlay and full-size JPEG), which is "everything else"
            spent = time.thread_time() - t0
            window["vision_s"] += spent - inside.record_s
            window["record_s"] += inside.record_s
            del inside.record_s
            window["frames"] += 1
            window["isp1"] = _isp_cpu_s(system)
            if time.monotonic() >= window["end"]:
                # read once, at the end (with 300 threads a reading of the process's CPU time
                # costs ~12 us unloaded, more loaded: not once a frame)
                window["cpu1"] = time.process_time()
                window["sensor1"], window["t1"] = _sensor_frames(system), time.monotonic()
                window["threads1"] = _thread_cpu()
                window["state"] = "closed"

    def timed_emit(self: loop.Referee, events: Any) -> list[dict[str, Any]]:
        if not hasattr(inside, "record_s"):
            return emit(self, events)  # a control from the page, or outside the window
        for event in events:
            window["events"][event["type"]] = window["events"].get(event["type"], 0) + 1
        t0 = time.thread_time()
        try:
            return emit(self, events)
        finally:
            inside.record_s += time.thread_time() - t0

    latest_jpeg = RefereeService.latest_jpeg

    def counted_jpeg(self: RefereeService, *args: Any, **kwargs: Any) -> bytes | None:
        # the page's pictures encoded (the rest of those served were served again: asked
        # for within FRAME_MAX_AGE_S, or a still board's, web.frames.STILL_MAX_AGE_S)
        if window["state"] == "open":
            window["encoded"] += 1
        return latest_jpeg(self, *args, **kwargs)

    RefereeService.latest_jpeg = counted_jpeg  # type: ignore[method-assign]
    loop.Referee.process = timed  # type: ignore[method-assign]
    loop.Referee.emit = timed_emit  # type: ignore[method-assign]

    def timed_read(read: Any) -> Any:
        # the frame thread's CPU in the camera's read (the capture, the views or copies), less
        # the fake's writing of the frame into its buffer
        def wrapped(self: Picamera2Source) -> Any:
            if window["state"] != "open":
                return read(self)
            t0, isp0 = time.thread_time(), _isp_cpu_s(system)
            try:
                return read(self)
            finally:
                window["read_s"] += time.thread_time() - t0 - (_isp_cpu_s(system) - isp0)
        return wrapped

    import gc

    collecting = threading.local()

    def on_gc(phase: str, info: dict[str, int]) -> None:
        # the cyclic garbage collector's CPU, in whichever thread it ran
        if phase == "start":
            collecting.t0 = time.thread_time()
        elif window["state"] == "open" and hasattr(collecting, "t0"):
            window["gc_s"] = window.get("gc_s", 0.0) + time.thread_time() - collecting.t0
            window["gc_runs"] = window.get("gc_runs", 0) + 1

    gc.callbacks.append(on_gc)
    Picamera2Source.read = timed_read(Picamera2Source.read)  # type: ignore[method-assign]
    Picamera2Source.read_borrowed = timed_read(  # type: ignore[method-assign]
        Picamera2Source.read_borrowed)
    try:
        main(["serve", "--source", "benchcam", "--max-fps", "8", "--port", str(port),
              "--db", db, "--no-resume"])
    finally:
        start, end = window.get("threads0", {}), window.get("threads1", {})
        print(STATS_PREFIX + json.dumps({
            "frames": window["frames"], "vision_cpu_s": window["vision_s"],
            "record_cpu_s": window["record_s"], "read_cpu_s": window["read_s"],
            "gc_cpu_s": window.get("gc_s", 0.0), "gc_runs": window.get("gc_runs", 0), "closed": window["state"] == "closed",
            "process_cpu_s": window.get("cpu1", time.process_time()) - window.get("cpu0", 0.0)
            if "cpu0" in window else 0.0,
            "isp_cpu_s": window.get("isp1", 0.0) - window.get("isp0", 0.0),
            "threads": {name: cpu_s - start.get(name, 0.0) for name, cpu_s in end.items()},
            "events": window["events"], "encoded": window["encoded"], "preview": "x".join(map(str, lores)) if lores else "no",
            "sensor_frames_lost": sum(getattr(c, "frames_dropped", 0) for c in system.instances),
            "camera_fps": round((window.get("sensor1", 0) - window.get("sensor0", 0))
                                / max(1e-9, window.get("t1", 1.0) - window.get("t0", 0.0)), 1)}),
              flush=True)


def _isp_cpu_s(system: Any) -> float:
    """The fake's CPU seconds spent writing frames into its buffers, over every camera opened:
    the ISP's DMA on a Pi, which costs the Pi's CPU nothing."""
    return sum(getattr(camera, "isp_cpu_s", 0.0) for camera in list(system.instances))


def _sensor_frames(system: Any) -> int:
    """The frames the fake's sensor has made, over every camera opened."""
    return sum(getattr(camera, "frames", 0) for camera in list(system.instances))


def _thread_cpu() -> dict[str, float]:
    """CPU seconds per kind of thread, from /proc (Linux); {} elsewhere."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").glob("*"):
        try:  # the scheduler's own count, in ns (stat's utime + stime are in 10 ms ticks: a
            #   thread's share of a 30 s window was +-10 %)
            cpu_s = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu_s = (int(fields[11]) + int(fields[12])) / tick
        name = names.get(int(task.name), "other")
        kind = re.sub(r"[-_]\d+", "", name)  # waitress-12 -> waitress
        out[kind] = out.get(kind, 0.0) + cpu_s
    return out


# --- the parent: start it, watch it like a page, stop it ---------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _page(port: int, stop: threading.Event, counts: dict[str, int]) -> None:
    """The live page: the event stream open, the picture refreshed every 350 ms at 640 px."""
    events = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)
    events.request("GET", "/api/events")
    stream = events.getresponse()

    def read_events() -> None:
        while not stop.is_set():
            try:
                if not stream.readline():
                    break
                counts["event_lines"] += 1
            except (OSError, http.client.HTTPException):
                continue
    reader = threading.Thread(target=read_events, daemon=True)
    reader.start()
    # one kept-alive connection for the pictures, as a browser reuses its connection
    pictures = http.client.HTTPConnection("127.0.0.1", port, timeout=5.0)
    while not stop.wait(0.35):
        try:
            pictures.request("GET", "/api/frame.jpg?overlay=1&w=640")
            response = pictures.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):
            pictures.close()  # reconnects on the next request
            continue
        if response.status == 200:
            counts["pictures"] += 1
            counts["picture_bytes"] += len(body)
    pictures.close()
    events.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured time (default 60)")
    parser.add_argument("--size", default="2304x1296", help="camera stream size (2304x1296)")
    parser.add_argument("--copy-frames", action="store_true",
                        help="copy every frame out of the camera's buffer (make_array) instead "
                             "of judging it in the buffer (read_borrowed): the figure before")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--db", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if args.child:
        child(args.port, (width, height), args.db, args.seconds, args.copy_frames)
        return 0
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", "--port", str(port), "--size", args.size,
             "--seconds", str(args.seconds), *(["--copy-frames"] if args.copy_frames else []),
             "--db", str(Path(tmp) / "bench.sqlite")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT)})
        try:
            # the 60 frames are rendered first (~300 ms of CPU each): minutes on a busy machine
            deadline = time.monotonic() + 900
            while time.monotonic() < deadline:
                try:
                    status, body = _get(port, "/api/state", timeout=1.0)
                    if status == 200 and json.loads(body)["camera"]["state"] == "ok":
                        break
                except OSError:
                    pass
                if proc.poll() is not None:
                    print("bench_serve: referee serve exited early", file=sys.stderr)
                    return 1
                time.sleep(0.5)
            else:
                print("bench_serve: referee serve never got a camera frame", file=sys.stderr)
                return 1
            stop = threading.Event()
            counts = {"pictures": 0, "picture_bytes": 0, "event_lines": 0}
            page = threading.Thread(target=_page, args=(port, stop, counts), daemon=True)
            page.start()
            time.sleep(args.seconds + 2.0)  # the child's window began at its first frame
            stop.set()
            page.join(5)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                out, _ = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()  # never left running: it would load the next measurement
                out, _ = proc.communicate()
    line = next((ln for ln in out.splitlines() if ln.startswith(STATS_PREFIX)), None)
    if line is None:
        print("bench_serve: no figures from referee serve", file=sys.stderr)
        return 1
    stats = json.loads(line.removeprefix(STATS_PREFIX))
    frames = max(1, int(stats["frames"]))
    isp_ms = 1e3 * stats.get("isp_cpu_s", 0.0) / frames
    total_ms = 1e3 * stats["process_cpu_s"] / frames - isp_ms
    vision_ms = 1e3 * stats["vision_cpu_s"] / frames
    record_ms = 1e3 * stats["record_cpu_s"] / frames
    else_ms = max(0.0, total_ms - vision_ms)
    share = else_ms / total_ms if total_ms > 0 else 0.0
    print(f"referee serve, fake Pi camera {args.size} (a 30 fps sensor at "
          f"{stats['camera_fps']:g} fps in the window), --max-fps 8, one page watching, {args.seconds:g} s, "
          + ("every frame copied out" if args.copy_frames else "frames judged in the camera's "
             "buffers"))
    print(f"{'frames processed':<34}{stats['frames']:>10}")
    print(f"{'processed frames/s':<34}{stats['frames'] / args.seconds:>10.1f}  (sensor frames "
          f"lost with every buffer held: {stats.get('sensor_frames_lost', 0)})")
    print(f"{'pictures served (640 px)':<34}{counts['pictures']:>10}  (the camera's lores "
          f"picture: {stats['preview']}; {stats.get('encoded', 0)} encoded, the rest served "
          "again: shared within 0.2 s, or a still board's)")
    print(f"{'CPU per processed frame, ms':<34}{total_ms:>10.1f}  (not counted: the fake "
          f"writing frames into its buffers, the ISP's DMA on a Pi, {isp_ms:.1f} ms)")
    print(f"{'  vision and rules, ms':<34}{vision_ms:>10.1f}")
    print(f"{'  everything else, ms':<34}{else_ms:>10.1f}")
    if not stats["closed"]:
        print("bench_serve: the measured window did not close (too few frames?)", file=sys.stderr)
    print(f"{'    of it the match log, ms':<34}{record_ms:>10.1f}  (events: " +
          ", ".join(f"{n} {kind}" for kind, n in sorted(stats["events"].items())) + ")")
    print(f"{'    of it reading frames, ms':<34}{1e3 * stats.get('read_cpu_s', 0.0) / frames:>10.1f}"
          "  (the frame thread in the camera's read)")
    print(f"{'    of it garbage collection, ms':<34}{1e3 * stats.get('gc_cpu_s', 0.0) / frames:>10.1f}"
          f"  ({stats.get('gc_runs', 0)} collections, any thread)")
    threads = dict(stats.get("threads", {}))
    if "referee-loop" in threads:  # the frame thread: its vision is counted above
        threads["referee-loop, less vision"] = (threads.pop("referee-loop") - stats["vision_cpu_s"]
                                                - stats.get("isp_cpu_s", 0.0))
    for kind, cpu_s in sorted(threads.items(), key=lambda kv: -kv[1]):
        if cpu_s * 1e3 / frames >= 0.05:
            print(f"{'    thread ' + kind + ', ms':<40}{1e3 * cpu_s / frames:>4.1f}")
    verdict = "ok" if share <= TARGET_ELSE_SHARE else "OVER"
    print(f"{'everything else, share':<34}{share:>9.0%}  (target <= {TARGET_ELSE_SHARE:.0%}: "
          f"{verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
