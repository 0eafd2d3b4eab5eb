"""`referee sources`: which frame sources this machine can use, and a quick test of one.

    referee sources                 # human-readable table
    referee sources --json          # one JSON object
    referee sources --try SPEC [--frames N]   # open SPEC, read N frames, report size and rate

The JSON object: {"sources": [{"kind", "available", "detail"}, ...], "picamera2": {"importable",
"cameras": [...]}, "video_devices": ["/dev/video0", ...], "opencv": "5.0.0", "ffmpeg": true,
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
    """Register `sim:dition[:SEED]` / `sim:domination[:SEED]` (the scripted simulated table).

    hardware/ may not import the rules engines that script the match, so the referee registers it.
    """
    from hardware import register_source
    from hardware.sources.registry import registered_kinds

    if "sim" in registered_kinds():
        return

    def open_sim(rest: str, **options: Any) -> Any:
        from hardware.errors import UnknownSourceError
        from referee.simtable import scripted_table

        game, _, seed_text = rest.partition(":")
        if game not in ("dition", "domination"):
            raise UnknownSourceError(
                f"sim:{rest}: expected sim:dition[:SEED] or sim:domination[:SEED]"
            )
        try:
            seed = int(seed_text) if seed_text else 1
        except ValueError:
            raise UnknownSourceError(f"sim:{rest}: the seed must be an integer") from None
        return scripted_table(game, seed, **options)

    register_source(
        "sim", open_sim,
        description="sim:dition[:SEED], sim:domination[:SEED] - the simulated table playing a match",
        available=lambda: (True, "sim:dition[:SEED], sim:domination[:SEED] (always)"),
    )


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
    from hardware import available_sources
    from hardware.sources.availability import video_devices
    from hardware.sources.opencv_source import ffmpeg_available
    from hardware.sources.picamera2_source import describe_cameras
    from hardware.sources.registry import registered_kinds

    import cv2

    importable, _, cameras = describe_cameras()
    return {
        "sources": [{"kind": k, "available": ok, "detail": d} for k, ok, d in available_sources()],
        "picamera2": {"importable": importable, "cameras": cameras},
        "video_devices": video_devices(),
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
