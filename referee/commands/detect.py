"""`referee detect`: read the pieces on images, print one JSON object per image.

    referee detect [--game dition|domination] [--corners x0,y0,x1,y1,x2,y2,x3,y3]
                   [--calibration FILE] [--disc-thickness T] [--frames N] IMAGE...

IMAGE may be an image file or any frame-source spec (a folder, a video, a URL, a camera,
`sim:dition:SEED`); each frame of a source is one object named `SPEC#INDEX`.

Dition: `{"image": path, "board": {"corners_px": [[x, y], ...]}, "discs": [{"x": .., "y": ..,
"colour": "black"|"white", "confidence": .., "sigma": .., "seen": ..}, ...]}` with coordinates in
the board frame; `colour` is the player's, `seen` the colour the face shows the camera, one of
black, white, red, yellow, green, blue (`vision.colour_names`: a red draughts man is
`"colour": "black"` or `"white"` and `"seen": "red"`).
Domination: `{"image": path, "board": {...}, "tops": {"c1": "G", ...}, "heights": {...}}`.
An image that cannot be read or whose board cannot be found gives `{"image": path, "error": ".."}`
and the others are still processed. Exit code 0 when every image was processed, 1 otherwise,
2 for bad options.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

from referee.commands._common import add_disc_thickness, disc_thickness, parse_corners
from referee.games import registry

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=registry.names(), default=registry.default_name())
    parser.add_argument(
        "--corners", metavar="x0,y0,x1,y1,x2,y2,x3,y3",
        help="pixel positions of board corners 0..3 (corner i of the option is board corner i); "
        "without it the board is found automatically",
    )
    parser.add_argument("--calibration", metavar="FILE", help="calibration JSON (intrinsics, board)")
    add_disc_thickness(parser)
    parser.add_argument("--debug-dir", metavar="DIR", help="also write each image with the detections drawn")
    parser.add_argument("--frames", type=int, default=None, metavar="N",
                        help="at most N frames of each source (default: all of a file or folder, "
                        "1 of a live camera or stream)")
    parser.add_argument("images", nargs="+", metavar="IMAGE",
                        help="image files, or any source spec (folder, video, URL, camera, sim:)")


def _load_calibration(path: str) -> tuple[Any, Any, float | None]:
    """(intrinsics or None, stored board corners {game, corners_px} or None, the discs'
    thickness stored with it or None); the calibration package's errors (missing, malformed,
    wrong version) propagate with their message."""
    try:
        from calibration import load_calibration
    except ImportError:  # pragma: no cover - a build without the calibration package
        print(f"referee detect: calibration files are not supported here; ignoring {path}",
              file=sys.stderr)
        return None, None, None
    cal = load_calibration(path)
    board = getattr(cal, "board", None)
    stored = None
    if board is not None and getattr(board, "corners_px", None) is not None:
        stored = {"game": getattr(board, "game", None), "corners_px": board.corners_px}
    return getattr(cal, "intrinsics", None), stored, getattr(cal, "disc_thickness", None)


def process_frame(
    image: Any,
    name: str,
    *,
    game: str | None = None,
    corners_px: Any = None,
    intrinsics: Any = None,
    fallback_corners_px: Any = None,
    debug_dir: str | None = None,
    fits: dict[Any, Any] | None = None,
    disc_thickness: float | None = None,
    cache: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One BGR frame -> the JSON-able result object (or an error object). Without
    `corners_px` the board is found automatically, else `fallback_corners_px` (a calibrated
    board) is used. With `corners_px`, the board is fitted once per image size and kept in
    `fits` (the lens estimate included) for the next frames; a Dition frame that does not show
    the drawn squares at those corners gets a "warning" with its score. `cache`: what the game
    keeps of a board for the next frames (`Game.read`)."""
    import numpy as np

    from vision.errors import VisionError

    spec = registry.get_game(game if game is not None else registry.default_name())
    key = (tuple(np.asarray(corners_px, float).ravel()), image.shape[:2]) if corners_px is not None else None
    try:
        if fits is not None and key in fits:
            board = fits[key]
        else:
            board = spec.find_board(image, corners_px=None if corners_px is None
                                    else np.asarray(corners_px, float), intrinsics=intrinsics)
            if fits is not None and key is not None:
                fits[key] = board
    except VisionError as exc:
        if fallback_corners_px is None:
            return {"image": name, "error": str(exc)}
        # the board as calibrated, when it cannot be found in this frame
        try:
            board = spec.find_board(image, corners_px=np.asarray(fallback_corners_px, float),
                                    intrinsics=intrinsics)
        except VisionError:
            return {"image": name, "error": str(exc)}
    out: dict[str, Any] = {
        "image": name,
        "board": {"corners_px": [[round(float(x), 2), round(float(y), 2)] for x, y in board.corners_px],
                  "method": board.method},
    }
    if spec.name == "dition" and corners_px is not None:
        from vision.dition_board import board_score
        from vision.geometry import BoardParams

        # (below the share of the drawn squares' samples the board finder accepts from lines)
        score, floor = board_score(image, board, intrinsics=intrinsics), BoardParams().min_support
        if score < floor:
            out["warning"] = (f"no Dition board seen at the given corners: {score:.0%} of its drawn squares "
                              f"found there (score {score:.2f}, below {floor}); the pieces are read as if "
                              f"it were")
            out["board"]["score"] = round(score, 3)
    try:
        pieces, picture = spec.detect_json(image, board, intrinsics=intrinsics, debug=bool(debug_dir),
                                           disc_thickness=disc_thickness, cache=cache)
        # (the board's warning and the pieces' (an over-exposed board) are both kept)
        warnings = [w for w in (out.get("warning"), pieces.get("warning")) if w]
        out.update(pieces)
        if warnings:
            out["warning"] = "; ".join(warnings)
        if debug_dir and picture is not None:
            _write_debug(picture, debug_dir, name)
    except VisionError as exc:
        return {"image": name, "error": str(exc)}
    return out


def _write_debug(picture: Any, debug_dir: str, name: str) -> None:
    """The image with the detections drawn (the game's `detect_json` made it) into `debug_dir`."""
    from pathlib import Path

    import cv2

    Path(debug_dir).mkdir(parents=True, exist_ok=True)
    target = Path(debug_dir) / (Path(name).stem + "_detect.jpg")
    cv2.imwrite(str(target), picture)


def _read_image(path: str) -> tuple[Any, str | None]:
    """The image, decoded as the folder source decodes it: its size checked from the header
    first, a truncated JPEG or PNG refused (`hardware.sources.folder.decode_image_file`)."""
    import os
    from pathlib import Path

    from hardware.errors import CorruptFrameError
    from hardware.sources.folder import decode_image_file

    if not os.path.exists(path):
        return None, f"cannot read image: no such file {path!r}"
    try:
        return decode_image_file(Path(path)), None
    except CorruptFrameError as exc:
        return None, f"cannot read image: {exc}"


def run(args: argparse.Namespace) -> int:
    try:
        corners = parse_corners(args.corners)
    except ValueError as exc:
        print(f"referee detect: {exc}", file=sys.stderr)
        return 2
    intrinsics = None
    fallback = None
    stored_thickness = None
    if args.calibration:
        from calibration.errors import CalibrationError

        try:
            intrinsics, stored, stored_thickness = _load_calibration(args.calibration)
        except CalibrationError as exc:  # its leaves say what is wrong with the file
            print(f"referee detect: {exc}", file=sys.stderr)
            return 2
        if stored is not None and stored.get("game") in (None, args.game):
            fallback = stored["corners_px"]
    thickness = disc_thickness(args) if args.disc_thickness is not None else stored_thickness
    failed = 0
    fits: dict[Any, Any] = {}  # the boards of given corners, fitted once per image size
    kept: dict[str, Any] = {}  # what the game keeps of a board from frame to frame (`Game.read`)
    for path in args.images:
        for name, image, error in _frames(path, args.frames):
            if error is not None:
                result: dict[str, Any] = {"image": name, "error": error}
            else:
                try:
                    result = process_frame(image, name, game=args.game, corners_px=corners,
                                           intrinsics=intrinsics, fallback_corners_px=fallback,
                                           debug_dir=args.debug_dir, fits=fits, disc_thickness=thickness,
                                           cache=kept)
                except ValueError as exc:  # e.g. corners that do not form a quadrilateral
                    result = {"image": name, "error": str(exc)}
            failed += "error" in result
            print(json.dumps(result), flush=True)
    return 1 if failed else 0


_LIVE = ("picamera2", "webcam", "http://", "https://", "rtsp://", "rtsps://")


def _is_source_spec(path: str) -> bool:
    """Anything but a plain image file: a folder, a video, a URL, a camera, the sim table."""
    import os

    if os.path.isdir(path):
        return True
    if os.path.isfile(path):
        return os.path.splitext(path)[1].lower() not in IMAGE_SUFFIXES
    return path.startswith(_LIVE) or path.startswith("sim")


def _frames(path: str, limit: int | None) -> Iterator[tuple[str, Any, str | None]]:
    """(name, BGR image or None, error or None) for an image file or each frame of a source.

    Frames of a source are named `SPEC#INDEX`; a live camera gives one frame unless `--frames`
    asks for more, a file or folder all of its frames."""
    if not _is_source_spec(path):
        image, error = _read_image(path)
        yield path, image, error
        return
    from hardware.errors import CorruptFrameError, EndOfStream, HardwareError
    from referee.sources import open_any

    if limit is None and path.startswith(_LIVE):
        limit = 1
    try:
        source = open_any(path)
    except (HardwareError, ValueError, OSError) as exc:
        yield path, None, f"cannot open source {path!r}: {exc}"
        return
    n = 0
    with source:
        while limit is None or n < limit:
            try:
                frame = source.read()
            except CorruptFrameError as exc:
                yield f"{path}#{n}", None, f"corrupt frame: {exc}"
                n += 1
                continue
            except EndOfStream:
                return
            except HardwareError as exc:
                yield f"{path}#{n}", None, f"source failed: {exc}"
                return
            yield f"{path}#{frame.index}", frame.image, None
            n += 1
