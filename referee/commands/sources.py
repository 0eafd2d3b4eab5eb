"""`referee sources`: which frame sources this machine can use, and a quick test of one.

    referee sources                 # human-readable table
    referee sources --json          # one JSON object
    referee sources --try SPEC [--frames N]   # open SPEC, read N frames, report size and rate

The JSON object: {"sources": [{"kind", "available", "detail"}, ...], "picamera2": {"importable",
"cameras": [...]}, "video_devices": ["/dev/video0", ...], "webcams": [{"index", "name"}],
"opencv": "5.0.0", "ffmpeg": true,
"registered": {"sim": "..."}, "try": null | {"spec", "ok", "frames", "corrupt", "size", "fps",
"error"}}. Exit code 0, or 1 when `--try` failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any


def register_sim_source() -> None:
    """Make `sim:dition[:SEED]` / `sim:domination[:SEED]` known to `hardware.open_source`.

    hardware/ may not import the rules engines that script the match, so the referee registers it.
    """
    from hardware.sources.registry import registered_kinds

    if "sim" not in registered_kinds():
        from referee.sources import register_sim

        register_sim()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--try", dest="try_spec", metavar="SPEC",
                        help="open this source spec and read a few frames")
    parser.add_argument("--frames", type=int, default=10,
                        help="frames to read with --try (default 10)")
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="give up --try after this many seconds (default 20)")


def _try_source(spec: str, frames: int, timeout_s: float) -> dict[str, Any]:
    from hardware import CorruptFrameError, EndOfStream, open_source

    report: dict[str, Any] = {"spec": spec, "ok": False, "frames": 0, "corrupt": 0,
                              "size": None, "fps": None, "error": None, "locked_controls": None}
    try:
        source = open_source(spec)
    except Exception as exc:  # noqa: BLE001 - a diagnostic reports every failure, never crashes
        report["error"] = f"{type(exc).__name__}: {exc}"
        return report
    start = time.monotonic()
    first_at: float | None = None
    try:
        while report["frames"] < frames and time.monotonic() - start < timeout_s:
            try:
                frame = source.read()
            except CorruptFrameError:
                report["corrupt"] += 1
                continue
            except EndOfStream:
                break
            if first_at is None:
                first_at = time.monotonic()
            report["frames"] += 1
            report["size"] = [int(frame.image.shape[1]), int(frame.image.shape[0])]
        if first_at is not None and report["frames"] > 1:
            report["fps"] = round((report["frames"] - 1) / max(time.monotonic() - first_at, 1e-6), 2)
        locked = getattr(source, "locked_controls", None)
        if callable(locked):
            report["locked_controls"] = locked()
        report["ok"] = report["frames"] > 0
        if not report["ok"]:
            report["error"] = "no frame arrived"
    except Exception as exc:  # noqa: BLE001 - as above
        report["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        source.close()
    return report


def _collect() -> dict[str, Any]:
    import cv2

    from hardware import available_sources
    from hardware.sources.availability import video_devices, webcam_devices
    from hardware.sources.opencv_source import ffmpeg_available
    from hardware.sources.picamera2_source import describe_cameras
    from hardware.sources.registry import registered_kinds

    importable, _, cameras = describe_cameras()
    return {
        "sources": [{"kind": k, "available": ok, "detail": d} for k, ok, d in available_sources()],
        "picamera2": {"importable": importable, "cameras": cameras},
        "video_devices": video_devices(),
        "webcams": [{"index": n, "name": name} for n, name in webcam_devices()],
        "opencv": cv2.__version__,
        "ffmpeg": ffmpeg_available(),
        "registered": registered_kinds(),
        "try": None,
    }


def _print_human(info: dict[str, Any]) -> None:
    print("Frame sources on this machine:")
    width = max(len(row["kind"]) for row in info["sources"])
    for row in info["sources"]:
        mark = "yes" if row["available"] else "no "
        print(f"  {row['kind']:<{width}}  {mark}  {row['detail']}")
    print(f"OpenCV {info['opencv']}, FFmpeg backend: {'yes' if info['ffmpeg'] else 'no'}")
    tried = info["try"]
    if tried is not None:
        if tried["ok"]:
            size = "x".join(str(v) for v in tried["size"])
            rate = f", {tried['fps']} frames/s" if tried["fps"] else ""
            print(f"--try {tried['spec']}: {tried['frames']} frames of {size}{rate}, "
                  f"{tried['corrupt']} corrupt")
            if tried["locked_controls"]:
                print(f"  locked controls: {tried['locked_controls']}")
        else:
            print(f"--try {tried['spec']}: FAILED: {tried['error']}")


def run(args: argparse.Namespace) -> int:
    register_sim_source()
    info = _collect()
    if args.try_spec:
        info["try"] = _try_source(args.try_spec, max(1, args.frames), args.timeout)
    if args.json:
        json.dump(info, sys.stdout, default=str, separators=(",", ":"))
        sys.stdout.write("\n")
    else:
        _print_human(info)
    return 0 if info["try"] is None or info["try"]["ok"] else 1
