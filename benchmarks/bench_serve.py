"""Where `referee serve`'s CPU goes on a Pi-like camera at 8 fps (issue 18). Prints a table.

Runs `referee serve --max-fps 8` in a child process, on a camera that costs what the Pi camera
costs: the fake picamera2 (picamera2's request queue, 30 fps, 2304x1296 as Camera Module 3
streams) showing pre-rendered frames of the simulated table playing a match, so no frame is
rendered while measuring. One page watches it the way the live page does: the event stream open
and the camera picture fetched at the width it shows (`/api/frame.jpg?w=640`) every 350 ms.

The child adds up the CPU time its frame thread spends in `Referee.process` (the vision and the
rules: `time.thread_time`; OpenCV runs single-threaded here so that all of it is in that thread) and the CPU time of the whole process (`time.process_time`: camera,
web server, JPEG encodes, logging, everything else) from the first frame to the last. Printed:
frames processed, CPU per processed frame, the share that is not vision.

Target: everything else <= 25 % of the process's CPU per processed frame.

    python benchmarks/bench_serve.py [--seconds 60] [--size 2304x1296]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
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


# --- the child: referee serve on a pre-rendered camera ---------------------------------------
def child(port: int, size: tuple[int, int], db: str) -> None:
    import numpy as np

    import hardware
    from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
    from hardware.sources.picamera2_source import Picamera2Params, Picamera2Source
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

    def show(index: int, wh: tuple[int, int]) -> np.ndarray:
        return frames[(index // 4) % len(frames)]  # the table changes ~7.5 times a second

    system = FakeCameraSystem([FakeCamera(fps=30.0, settle_frames=4, frame_fn=show)])

    def open_camera(spec: str, **options: object) -> Picamera2Source:
        source = Picamera2Source(0, Picamera2Params(size=size),
                                 picamera2_class=system.picamera2_class)
        source.intrinsics = intrinsics  # type: ignore[attr-defined] - as from a calibration
        return source

    hardware.register_source("benchcam", open_camera, description="bench_serve's camera")
    # OpenCV's own worker threads would run part of the vision outside the frame thread, where
    # its CPU time would count as "everything else": one thread, so the split is by thread
    import cv2

    cv2.setNumThreads(1)

    vision: dict[str, Any] = {"cpu_s": 0.0, "frames": 0, "first": None, "threads": {}}
    process = loop.Referee.process

    def timed(self: loop.Referee, image: np.ndarray) -> list[dict[str, object]]:
        if vision["first"] is None:
            vision["first"] = time.process_time()
        t0 = time.thread_time()
        try:
            return process(self, image)
        finally:
            vision["cpu_s"] += time.thread_time() - t0
            vision["frames"] += 1
            vision["last"] = time.process_time()
            if vision["frames"] % 16 == 1:  # per-thread CPU while every thread still runs
                vision["threads"] = _thread_cpu()

    loop.Referee.process = timed  # type: ignore[method-assign]
    try:
        main(["serve", "--source", "benchcam", "--max-fps", "8", "--port", str(port),
              "--db", db, "--no-resume"])
    finally:
        first = vision["first"] or time.process_time()
        total = float(vision.get("last", first)) - float(first)
        print(STATS_PREFIX + json.dumps({"frames": vision["frames"], "vision_cpu_s":
                                         vision["cpu_s"], "process_cpu_s": total,
                                         "threads": vision["threads"]}), flush=True)


def _thread_cpu() -> dict[str, float]:
    """CPU seconds per kind of thread, from /proc (Linux); {} elsewhere."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out: dict[str, float] = {}
    for task in Path("/proc/self/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(task.name), "other")
        kind = name.split("-")[0].split(" ")[0].rstrip("0123456789_") or name
        out[kind] = out.get(kind, 0.0) + (int(fields[11]) + int(fields[12])) / tick
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
    while not stop.wait(0.35):
        status, body = _get(port, "/api/frame.jpg?overlay=1&w=640")
        if status == 200:
            counts["pictures"] += 1
            counts["picture_bytes"] += len(body)
    events.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured time (default 60)")
    parser.add_argument("--size", default="2304x1296", help="camera stream size (2304x1296)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--db", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if args.child:
        child(args.port, (width, height), args.db)
        return 0
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--child", "--port", str(port), "--size", args.size,
             "--db", str(Path(tmp) / "bench.sqlite")],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT)})
        try:
            deadline = time.monotonic() + 180
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
            time.sleep(args.seconds)
            stop.set()
            page.join(5)
        finally:
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=60)
    line = next((ln for ln in out.splitlines() if ln.startswith(STATS_PREFIX)), None)
    if line is None:
        print("bench_serve: no figures from referee serve", file=sys.stderr)
        return 1
    stats = json.loads(line.removeprefix(STATS_PREFIX))
    frames = max(1, int(stats["frames"]))
    total_ms = 1e3 * stats["process_cpu_s"] / frames
    vision_ms = 1e3 * stats["vision_cpu_s"] / frames
    else_ms = max(0.0, total_ms - vision_ms)
    share = else_ms / total_ms if total_ms > 0 else 0.0
    print(f"referee serve, fake Pi camera {args.size} at 30 fps, --max-fps 8, one page watching, "
          f"{args.seconds:g} s")
    print(f"{'frames processed':<34}{stats['frames']:>10}")
    print(f"{'processed frames/s':<34}{stats['frames'] / args.seconds:>10.1f}")
    print(f"{'pictures served (640 px)':<34}{counts['pictures']:>10}")
    print(f"{'CPU per processed frame, ms':<34}{total_ms:>10.1f}")
    print(f"{'  vision (Referee.process), ms':<34}{vision_ms:>10.1f}")
    print(f"{'  everything else, ms':<34}{else_ms:>10.1f}")
    for kind, cpu_s in sorted(stats.get("threads", {}).items(), key=lambda kv: -kv[1]):
        print(f"{'  thread ' + kind + ', CPU s':<34}{cpu_s:>10.1f}")
    verdict = "ok" if share <= TARGET_ELSE_SHARE else "OVER"
    print(f"{'everything else, share':<34}{share:>9.0%}  (target <= {TARGET_ELSE_SHARE:.0%}: "
          f"{verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
