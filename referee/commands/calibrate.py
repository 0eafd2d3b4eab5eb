"""`referee calibrate`: the camera (ChArUco), the board, the piece colours.

    referee calibrate camera IMAGE... [--out FILE]
    referee calibrate board IMAGE --game G [--corners X0,Y0,X1,Y1,X2,Y2,X3,Y3]
                                  [--calibration FILE] [--disc-thickness T] [--out FILE]
    referee calibrate colours IMAGE --game G [--calibration FILE] [--corners ...] [--out FILE]
                                  (--start [--players G,R] | --cell L:CELL ... | --piece NAME:X,Y ...)

Every step reads the calibration file (`--calibration`, default: the `--out` file when it exists)
and writes the updated one to `--out` (default `calibration.json`). Prints one JSON object with
the figures of the step on stdout. Exit code 0; 2 with a message on stderr when the input is
refused (too few or too similar views, board not found, colours too close, wrong image size...).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from referee.commands._common import add_disc_thickness, disc_thickness
from referee.games import registry

DEFAULT_OUT = "calibration.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="step", required=True, metavar="STEP")
    camera = sub.add_parser("camera", help="intrinsics and lens distortion from 6+ photos of "
                                           "the printed ChArUco target (referee print charuco)")
    camera.add_argument("images", nargs="+", metavar="IMAGE")
    camera.add_argument("--out", default=DEFAULT_OUT, metavar="FILE")
    camera.add_argument("--squares", default="9x6", metavar="CxR",
                        help="target squares, columns x rows (default 9x6)")
    camera.add_argument("--square-mm", type=float, default=28.0)
    camera.add_argument("--marker-mm", type=float, default=21.0)

    board = sub.add_parser("board", help="board homography and camera pose from one frame")
    board.add_argument("image", metavar="IMAGE")
    board.add_argument("--game", choices=registry.names(), required=True)
    board.add_argument("--corners", metavar="X0,Y0,...,X3,Y3",
                       help="the four board corners in pixels, clockwise from corner 0 "
                            "(manual path; skips the search)")
    board.add_argument("--calibration", metavar="FILE", help="calibration to start from")
    add_disc_thickness(board)
    board.add_argument("--out", default=DEFAULT_OUT, metavar="FILE")

    colours = sub.add_parser("colours", help="the piece colours as this camera sees them")
    colours.add_argument("image", metavar="IMAGE")
    colours.add_argument("--game", choices=registry.names(), required=True)
    colours.add_argument("--calibration", metavar="FILE", help="calibration to start from")
    colours.add_argument("--corners", metavar="X0,Y0,...,X3,Y3")
    colours.add_argument("--start", action="store_true",
                         help="Domination: the frame shows the standard 2-player start")
    colours.add_argument("--players", default="G,R", help="with --start: first,second (G,R)")
    colours.add_argument("--cell", action="append", default=[], metavar="L:CELL",
                         help="Domination: a piece of colour L on CELL (repeatable)")
    colours.add_argument("--piece", action="append", default=[], metavar="NAME:X,Y",
                         help="a piece NAME (black/white, or a letter) centred at board X,Y")
    colours.add_argument("--out", default=DEFAULT_OUT, metavar="FILE")


def run(args: argparse.Namespace) -> int:
    from calibration.errors import CalibrationError

    try:
        if args.step == "camera":
            report = _camera(args)
        elif args.step == "board":
            report = _board(args)
        else:
            report = _colours(args)
    except (CalibrationError, _UsageError) as exc:
        print(f"referee calibrate {args.step}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report))
    return 0


class _UsageError(ValueError):
    pass


def _read_image(path: str) -> Any:
    import cv2

    if not Path(path).is_file():
        raise _UsageError(f"image {path} does not exist")
    image = cv2.imread(path, cv2.IMREAD_COLOR)
    if image is None:
        raise _UsageError(f"cannot read {path} as an image")
    return image


def _existing(args: argparse.Namespace) -> Any:
    """The calibration to start from: --calibration, else the --out file if it exists."""
    from calibration.store import load_calibration

    path = getattr(args, "calibration", None)
    if path is None and Path(args.out).is_file():
        path = args.out
    return None if path is None else load_calibration(path)


def _frame_and_base(args: argparse.Namespace) -> tuple[Any, Any]:
    """The image and the calibration to extend (checked against the image's size)."""
    from calibration.store import Calibration, check_frame

    frame = _read_image(args.image)
    base = _existing(args)
    if base is not None:
        check_frame(base, frame)
    else:
        base = Calibration(image_size=(frame.shape[1], frame.shape[0]))
    return frame, base


def _corners(text: str | None) -> Any:
    import numpy as np

    from referee.commands._common import parse_corners

    try:
        corners = parse_corners(text)
    except ValueError as exc:
        raise _UsageError(str(exc)) from None
    return None if corners is None else np.array(corners)


def _camera(args: argparse.Namespace) -> dict[str, Any]:
    from calibration.intrinsics import calibrate_camera
    from calibration.store import Calibration, save_calibration
    from calibration.target import CharucoSpec

    try:
        cols, rows = (int(v) for v in args.squares.lower().split("x"))
    except ValueError:
        raise _UsageError(f"--squares must look like 9x6, got {args.squares!r}") from None
    spec = CharucoSpec((cols, rows), args.square_mm, args.marker_mm)
    images = [_read_image(p) for p in args.images]
    result = calibrate_camera(images, spec, names=list(args.images))
    previous = None
    if Path(args.out).is_file():
        from calibration.errors import CalibrationError
        from calibration.store import load_calibration

        try:
            previous = load_calibration(args.out)
        except CalibrationError:
            previous = None  # replaced by the new calibration
    keep = previous is not None and previous.image_size == result.intrinsics.image_size
    calibration = Calibration(
        image_size=result.intrinsics.image_size,
        intrinsics=result.intrinsics,
        board=None,  # a board pose belongs to the old intrinsics: calibrate the board again
        colours=previous.colours if keep and previous is not None else None,
        camera_controls=previous.camera_controls if keep and previous is not None else None,
        quality={"camera": {**result.summary(), "target": spec.to_dict()}},
    )
    save_calibration(calibration, args.out)
    return {"step": "camera", "out": str(args.out), **result.summary()}


def _board(args: argparse.Namespace) -> dict[str, Any]:
    from calibration.board import calibrate_board
    from calibration.store import save_calibration

    frame, base = _frame_and_base(args)
    # (the discs' thickness, when stated, is kept with the board: detect, replay and serve read it)
    thickness = disc_thickness(args, base)
    board = calibrate_board(frame, game=args.game, intrinsics=base.intrinsics,
                            corners_px=_corners(args.corners))
    quality = {**base.quality, "board": {"method": board.method,
                                         "residual_px": round(board.residual_px, 4),
                                         "reprojection_px": board.reprojection_px}}
    colours = base.colours if base.colours is not None and base.colours.game == args.game else None
    save_calibration(base.with_changes(board=board, colours=colours, quality=quality, disc_thickness=thickness),
                     args.out)
    centre = board.camera_centre_board
    return {
        "step": "board", "out": str(args.out), "game": board.game, "method": board.method,
        "corners_px": [[round(float(v), 2) for v in p] for p in board.corners_px],
        "residual_px": round(board.residual_px, 4),
        "with_intrinsics": board.undistorted,
        "reprojection_px": None if board.reprojection_px is None else round(board.reprojection_px, 4),
        "camera_centre_board": None if centre is None else [round(v, 3) for v in centre],
        "tilt_deg": None if board.tilt_deg is None else round(board.tilt_deg, 2),
        "disc_thickness": thickness,
    }


def _colours(args: argparse.Namespace) -> dict[str, Any]:
    from calibration.board import calibrate_board
    from calibration.colour import (
        cell_centre_board,
        colours_from_start,
        fit_colour_model,
        sample_pieces,
    )
    from calibration.store import save_calibration

    frame, base = _frame_and_base(args)
    corners = _corners(args.corners)
    if corners is None and base.board is not None and base.board.game == args.game:
        fit = base.board.to_board_fit()
    else:
        fit = calibrate_board(frame, game=args.game, intrinsics=base.intrinsics,
                              corners_px=corners).to_board_fit()
    spec = registry.get_game(args.game)
    diameter = spec.piece_diameter_board
    if args.start:
        if not spec.uses_colour_model or args.cell or args.piece:
            raise _UsageError("--start is for Domination only, without --cell/--piece")
        players = [p.strip() for p in args.players.split(",") if p.strip()]
        model = colours_from_start(frame, fit, players=players, intrinsics=base.intrinsics)
    else:
        positions: dict[str, list[tuple[float, float]]] = {}
        for spec in args.cell:
            name, _, cell = spec.partition(":")
            if not spec.named_cells or not name or not cell:
                raise _UsageError(f"--cell takes L:CELL on a Domination board, got {spec!r}")
            positions.setdefault(name, []).append(cell_centre_board(cell))
        for spec in args.piece:
            name, _, xy = spec.partition(":")
            try:
                x, y = (float(v) for v in xy.split(","))
            except ValueError:
                raise _UsageError(f"--piece takes NAME:X,Y in board units, got {spec!r}") from None
            positions.setdefault(name, []).append((x, y))
        if not positions:
            raise _UsageError("say where the pieces are: --start, --cell L:CELL or --piece NAME:X,Y")
        samples = sample_pieces(frame, fit, positions, piece_diameter_board=diameter,
                                intrinsics=base.intrinsics)
        model = fit_colour_model(samples, game=args.game)
    quality = {**base.quality, "colours": {"min_distance_lab": round(model.min_distance_lab, 2)}}
    save_calibration(base.with_changes(colours=model, quality=quality), args.out)
    return {"step": "colours", "out": str(args.out), **model.to_dict()}
