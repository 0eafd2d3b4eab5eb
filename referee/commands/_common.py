"""Options shared by several sub-commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def add_db(parser: argparse.ArgumentParser, *, default_text: str | None = None) -> None:
    parser.add_argument("--db", metavar="PATH", default=None,
                        help="match log (SQLite); default: "
                        + (default_text or "the user's data directory"))


def open_log(path: str | None, *, read_only: bool = False) -> Any:
    """The match log at `path` (default: the user's data directory); a log that cannot be
    opened (missing when `read_only`, not a log, read-only, no permission) stops the command
    with one line saying why."""
    from referee.log import MatchLog, MatchLogError, default_db_path

    try:
        return MatchLog(Path(path) if path else default_db_path(), read_only=read_only)
    except MatchLogError as exc:
        raise SystemExit(f"referee: {exc}") from None


def add_club_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--club", metavar="postgresql://...", default=None,
                        help="read the club database instead of this table's log "
                        "(the club's match ids)")


@contextmanager
def open_club(url: str) -> Iterator[Any]:
    """The club database's `ClubStore`, closed afterwards; exits saying why it cannot open."""
    from referee.club.errors import ClubError
    from referee.club.store import ClubStore

    try:
        store = ClubStore(url, connections=1)
    except ClubError as exc:
        raise SystemExit(f"referee: {exc}") from None
    try:
        yield store
    finally:
        store.close()


def parse_corners(text: str | None) -> list[list[float]] | None:
    """`x0,y0,x1,y1,x2,y2,x3,y3` (commas or semicolons) -> [[x0, y0], ...] (corner i of the
    board frame), None when not given; ValueError naming the problem."""
    if text is None:
        return None
    parts = [p for p in text.replace(";", ",").split(",") if p.strip()]
    if len(parts) != 8:
        raise ValueError(
            f"--corners needs 8 numbers x0,y0,x1,y1,x2,y2,x3,y3, got {len(parts)}: {text!r}")
    try:
        v = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"--corners has a value that is not a number: {text!r}") from None
    return [[v[2 * i], v[2 * i + 1]] for i in range(4)]


def corners_or_exit(text: str | None) -> list[list[float]] | None:
    """`parse_corners` for commands that stop with the message on a bad option."""
    try:
        return parse_corners(text)
    except ValueError as exc:
        raise SystemExit(f"referee: {exc}") from None


def add_board_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corners", metavar="x0,y0,x1,y1,x2,y2,x3,y3",
                        help="board corners in pixels, corner i = board corner i, clockwise from "
                        "corner 0 as seen from above (docs/DESIGN.md, units and frames)")
    parser.add_argument("--calibration", metavar="FILE", help="calibration JSON")
    add_disc_thickness(parser)


def add_disc_thickness(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--disc-thickness", metavar="T", type=float, default=None,
                        help="Dition: the discs' thickness over their diameter (Othello discs 0.15; "
                        "default: the calibration's, else the kit's 0.08); the tops are seen that high")


def disc_thickness(args: argparse.Namespace, calibration: Any = None) -> float | None:
    """`--disc-thickness` (checked; a bad one stops the command with status 2, saying why on
    stderr), else the one stored with the calibration, else None (the reader's default)."""
    value = getattr(args, "disc_thickness", None)
    if value is None:
        return getattr(calibration, "disc_thickness", None)
    from calibration.store import check_disc_thickness

    try:
        return check_disc_thickness(value, "--disc-thickness")
    except ValueError as exc:
        say(f"referee: {exc}")
        raise SystemExit(2) from None


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
