"""`referee capture`: calibration photos from any source, at the stream's size, target shown live.

Hold the printed ChArUco target (`referee print target`) in front of the camera in different
poses; every frame is searched for it and a photo is saved when the target is well seen and its
pose is new (`calibration.capture.PhotoPicker`). The terminal shows what was found, frame by
frame; `--preview FILE` keeps a JPEG of the latest frame with the corners marked (open it in an
image viewer that reloads, or watch the page's calibration tab instead). The photos are the
frames as the source gives them, at the size `referee serve` reads, for `referee calibrate
camera DIR/*.png`. On a Camera Module 3 the focus the camera settled on (`LensPosition`) is
written into `--calibration FILE`, so `referee serve --calibration FILE` reuses it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from referee.commands._common import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", default="auto",
                        help="frame source spec, as for `referee serve` (default: auto)")
    parser.add_argument("--out", default="calibration-photos", metavar="DIR",
                        help="folder for the photos (default: calibration-photos)")
    parser.add_argument("--count", type=int, default=12, help="photos to take (default 12)")
    parser.add_argument("--squares", default="9x6", help="target squares, COLSxROWS (9x6)")
    parser.add_argument("--square-mm", type=float, default=28.0)
    parser.add_argument("--marker-mm", type=float, default=21.0)
    parser.add_argument("--min-corners", type=int, default=12)
    parser.add_argument("--lens-position", type=float, default=None, metavar="DIOPTRES",
                        help="Camera Module 3: fix the focus (1 / distance in m) instead of "
                             "autofocusing once")
    parser.add_argument("--preview", metavar="FILE", default=None,
                        help="keep a JPEG of the latest frame with the target marked")
    parser.add_argument("--calibration", metavar="FILE", default=None,
                        help="store the camera's focus (LensPosition) in this calibration file")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="give up after this many seconds (default 600)")


def run(args: argparse.Namespace) -> int:
    import cv2

    from calibration.capture import PhotoPicker, draw_target
    from calibration.errors import TargetNotFoundError
    from calibration.intrinsics import detect_target
    from calibration.target import CharucoSpec
    from hardware import EndOfStream, HardwareError
    from referee.commands.serve import auto_source, camera_options
    from referee.sources import open_any

    try:
        cols, rows = (int(v) for v in args.squares.lower().split("x"))
    except ValueError:
        raise SystemExit(f"referee: --squares must look like 9x6, got {args.squares!r}") from None
    if args.count < 1:
        raise SystemExit("referee: --count must be at least 1")
    spec = CharucoSpec((cols, rows), args.square_mm, args.marker_mm)
    source_spec = auto_source() if args.source == "auto" else args.source
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    picker = PhotoPicker(min_corners=args.min_corners)
    saved: list[Path] = []
    size: tuple[int, int] | None = None
    try:
        source = open_any(source_spec, **camera_options(source_spec, args.lens_position))
    except HardwareError as exc:
        raise SystemExit(f"referee: cannot open {source_spec}: {exc}") from None
    deadline = time.monotonic() + args.timeout
    try:
        say(f"referee capture: {source_spec}; hold the {args.squares} target in view, "
            f"a new pose for each photo ({args.count} wanted)")
        while len(saved) < args.count and time.monotonic() < deadline:
            try:
                frame = source.read()
            except EndOfStream:
                break
            image = frame.image
            size = (image.shape[1], image.shape[0])
            try:
                view = detect_target(image, spec, min_corners=1)
            except TargetNotFoundError:
                view = None
            if view is None:
                status = "no target in view"
            else:
                why = picker.reason(view)
                if why is None:
                    picker.consider(view)
                    path = out / f"calib_{len(saved) + 1:02d}.png"
                    cv2.imwrite(str(path), image)
                    saved.append(path)
                    status = f"{len(view.ids)} corners: saved {path.name}"
                else:
                    status = why
            line = f"[{len(saved)}/{args.count}] frame {frame.index}: {status}"
            print(line, file=sys.stderr, flush=True)
            if args.preview:
                cv2.imwrite(args.preview, draw_target(image, view, line))
        lens = getattr(source, "locked_controls", dict)().get("LensPosition")
    finally:
        source.close()
    if args.calibration and lens is not None and size is not None:
        store_focus(args.calibration, size, float(lens))
        say(f"referee capture: focus LensPosition {lens:.3f} dioptres stored in "
            f"{args.calibration}")
    if len(saved) < args.count:
        say(f"referee capture: {len(saved)} of {args.count} photos in {out}")
    else:
        say(f"referee capture: {len(saved)} photos in {out}; next: referee calibrate camera "
            f"{out}/*.png --out {args.calibration or 'calibration.json'}")
    print(" ".join(str(p) for p in saved))
    return 0 if saved else 1


def store_focus(path: str, size: tuple[int, int], lens_position: float) -> None:
    """Keep the camera's focus in the calibration (a new file for `size` if there is none)."""
    from calibration.store import Calibration, load_calibration, save_calibration

    controls = {"LensPosition": round(lens_position, 4)}
    if Path(path).is_file():
        calibration = load_calibration(path)
        if tuple(calibration.image_size) != tuple(size):
            raise SystemExit(f"referee: {path} is for {calibration.image_size[0]}x"
                             f"{calibration.image_size[1]} px, the photos are {size[0]}x{size[1]}")
        merged = dict(calibration.camera_controls or {}) | controls
        calibration = calibration.with_changes(camera_controls=merged)
    else:
        calibration = Calibration(image_size=size, camera_controls=controls)
    save_calibration(calibration, path)
