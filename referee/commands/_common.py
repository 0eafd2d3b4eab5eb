"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH", default=None,
                        help="match log (SQLite); default: the user's data directory")


def open_log(path: str | None) -> Any:
    from referee.log import MatchLog, default_db_path

    return MatchLog(Path(path) if path else default_db_path())


def parse_corners(text: str | None) -> list[list[float]] | None:
    """`x0,y0,x1,y1,x2,y2,x3,y3` -> [[x0, y0], ...] (corner i of the board frame)."""
    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise SystemExit(f"--corners: {text!r} is not eight numbers separated by commas")
    if len(values) != 8:
        raise SystemExit(f"--corners needs 8 numbers (4 corners x, y), got {len(values)}")
    return [values[i:i + 2] for i in range(0, 8, 2)]


def add_board_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corners", metavar="x0,y0,x1,y1,x2,y2,x3,y3",
                        help="board corners in pixels, corner i = board corner i (DESIGN.md)")
    parser.add_argument("--calibration", metavar="FILE", help="calibration JSON")


def load_calibration(path: str | None) -> Any:
    if path is None:
        return None
    from calibration import load_calibration as load

    try:
        return load(path)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--calibration {path}: {exc}")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
