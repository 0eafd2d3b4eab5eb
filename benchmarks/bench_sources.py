"""Frame source throughput and latency on this machine (issue 10). Prints a table.

- folder: decode rate of 1280x960 JPEGs from an image folder
- video: decode rate of a 1280x960 MJPG .avi
- mjpeg-url: a phone-style MJPEG stream over loopback HTTP at 30 fps: frames/s delivered and the
  latency from encoding a frame on the server to `read()` returning it
- picamera2 (fake): open + settle + lock time, and frames/s handed over by the owner thread
- reconnect: time from a dropped stream to the first frame after `ResilientSource` reopened it

The referee needs about 5 frames/s; everything here should be far above that.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hardware import ResilientSource, open_source
from hardware.fakes.picamera2 import FakeCamera, FakeCameraSystem
from hardware.fakes.stream_server import MjpegServer
from hardware.sources.picamera2_source import Picamera2Source

SIZE = (1280, 960)
BITS = 16
BLOCK = 40


def scene(index: int, size: tuple[int, int] = SIZE) -> np.ndarray:
    """A board-like frame with the index drawn as 16 black/white blocks along the top."""
    rng = np.random.default_rng(index)
    width, height = size
    image = np.full((height, width, 3), (170, 200, 215), np.uint8)
    for _ in range(60):
        centre = (int(rng.integers(60, width - 60)), int(rng.integers(100, height - 60)))
        colour = (30, 30, 30) if rng.random() < 0.5 else (240, 240, 240)
        cv2.circle(image, centre, 22, colour, -1, cv2.LINE_AA)
    for bit in range(BITS):
        value = 255 if (index >> bit) & 1 else 0
        image[0:BLOCK, bit * BLOCK:(bit + 1) * BLOCK] = value
    return image


def index_of(image: np.ndarray) -> int:
    row = image[BLOCK // 2, BLOCK // 2::BLOCK, 1][:BITS]
    return int(sum(1 << b for b, v in enumerate(row) if v > 127))


def bench_folder(tmp: Path, count: int = 60) -> tuple[str, str]:
    folder = tmp / "folder"
    folder.mkdir()
    for i in range(count):
        cv2.imwrite(str(folder / f"f{i}.jpg"), scene(i), [cv2.IMWRITE_JPEG_QUALITY, 90])
    source = open_source(str(folder))
    start = time.perf_counter()
    for _ in range(count):
        source.read()
    rate = count / (time.perf_counter() - start)
    return f"{rate:.0f} frames/s", f"{count} JPEGs {SIZE[0]}x{SIZE[1]}"


def bench_video(tmp: Path, count: int = 120) -> tuple[str, str]:
    path = tmp / "match.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, SIZE)
    for i in range(count):
        writer.write(scene(i))
    writer.release()
    source = open_source(str(path))
    start = time.perf_counter()
    for _ in range(count):
        source.read()
    rate = count / (time.perf_counter() - start)
    return f"{rate:.0f} frames/s", f"MJPG .avi {SIZE[0]}x{SIZE[1]}, {count} frames"


def bench_mjpeg(seconds: float = 3.0) -> tuple[str, str]:
    sent_at: dict[int, float] = {}
    lock = threading.Lock()
    frames = [scene(i) for i in range(8)]

    def frame_fn(index: int) -> np.ndarray:
        image = frames[index % len(frames)].copy()
        for bit in range(BITS):
            image[0:BLOCK, bit * BLOCK:(bit + 1) * BLOCK] = 255 if (index >> bit) & 1 else 0
        with lock:
            sent_at[index] = time.monotonic()
        return image

    latencies = []
    with MjpegServer(frame_fn, fps=30) as server, open_source(server.stream_url) as source:
        source.read()
        start = time.monotonic()
        count = 0
        while time.monotonic() - start < seconds:
            frame = source.read()
            with lock:
                sent = sent_at.get(index_of(frame.image))
            if sent is not None:
                latencies.append(time.monotonic() - sent)
            count += 1
        rate = count / (time.monotonic() - start)
    return (f"{rate:.1f} frames/s, latency median {1000 * statistics.median(latencies):.0f} ms",
            f"30 fps {SIZE[0]}x{SIZE[1]} over 127.0.0.1 (includes JPEG encoding)")


def bench_picamera2(frames: int = 60) -> tuple[str, str]:
    system = FakeCameraSystem([FakeCamera(fps=60.0, settle_frames=15, image=scene(0))])
    start = time.perf_counter()
    source = Picamera2Source(0, size=(1280, 720), picamera2_class=system.picamera2_class)
    opened = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(frames):
        source.read()
    rate = frames / (time.perf_counter() - start)
    source.close()
    return (f"open+settle+lock {1000 * opened:.0f} ms, {rate:.1f} frames/s",
            "fake camera at 60 fps, AE settling over 15 frames, 1280x720")


def bench_reconnect(drops: int = 5) -> tuple[str, str]:
    times = []
    with MjpegServer(lambda i: scene(i % 4, (640, 480)), fps=30, drop_after_n=10) as server:
        lost_at: list[float] = []

        def on_state(state: str, detail: str) -> None:
            if state == "lost":
                lost_at.append(time.monotonic())

        source = ResilientSource(lambda: open_source(server.stream_url), on_state=on_state,
                                 backoff=(0.1,))
        while len(times) < drops:
            source.read()
            if len(lost_at) > len(times):
                times.append(time.monotonic() - lost_at[len(times)])
        source.close()
    return (f"median {1000 * statistics.median(times):.0f} ms",
            f"{drops} drops, first backoff 0.1 s (shipped default 0.5 s)")


def main() -> int:
    print(f"frame sources, OpenCV {cv2.__version__}")
    with tempfile.TemporaryDirectory() as tmp_text:
        tmp = Path(tmp_text)
        rows = [
            ("folder", *bench_folder(tmp)),
            ("video", *bench_video(tmp)),
            ("mjpeg-url", *bench_mjpeg()),
            ("picamera2 (fake)", *bench_picamera2()),
            ("reconnect", *bench_reconnect()),
        ]
    for name, figure, detail in rows:
        print(f"  {name:<17} {figure:<48} {detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
